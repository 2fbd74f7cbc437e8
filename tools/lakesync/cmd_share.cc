// lakesync share serve: the Delta Sharing server (docs/sharing.md) over the tables shares.yaml names.
#include <fmt/format.h>

#include <cstdio>

#include "cli.h"
#include "lakesync/http/server.h"
#include "lakesync/sharing/server.h"

namespace lakesync::cli {

void RegisterShareCommands(Cli& cli) {
  struct Args {
    std::string config, listen, public_url;
    int workers = 32;
  };
  auto a = std::make_shared<Args>();
  auto* share = cli.app.add_subcommand("share", "Delta Sharing: share Delta tables with recipients (docs/sharing.md)");
  share->require_subcommand(1);
  auto* serve = share->add_subcommand(
      "serve",
      "Serve the tables of a shares.yaml over the Delta Sharing protocol (snapshots, time travel, change data feed, "
      "signed file URLs) until SIGINT or SIGTERM");
  serve->add_option("--config,-c", a->config, "shares.yaml: shares, tables, tokens (the reference server's layout "
                                              "plus lakesync's recipients)")
      ->required();
  serve->add_option("--listen", a->listen,
                    "HOST:PORT to listen on (default: host and port from the file, else 127.0.0.1:8080; port 0 picks "
                    "a free one)");
  serve->add_option("--public-url", a->public_url,
                    "base URL recipients reach this server at, for signed file URLs (default: the Host header of "
                    "each request)");
  serve->add_option("--workers", a->workers, "requests served at once (default 32)")->check(CLI::Range(1, 1024));
  serve->callback([&cli, a] {
    cli.action = [a]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto config, sharing::ServerConfig::Load(a->config));
      http::ServerOptions options;
      options.name = "sharing";
      options.listen = a->listen.empty() ? fmt::format("{}:{}", config.host, config.port) : a->listen;
      options.worker_threads = a->workers;
      ARROW_ASSIGN_OR_RAISE(auto server, http::Server::Make(options));
      sharing::SharingServiceOptions service_options;
      service_options.public_url = a->public_url;
      while (!service_options.public_url.empty() && service_options.public_url.back() == '/') {
        service_options.public_url.pop_back();
      }
      const std::string endpoint = config.endpoint;
      ARROW_ASSIGN_OR_RAISE(auto service, sharing::SharingService::Make(std::move(config), service_options));
      service->Register(*server);
      ARROW_RETURN_NOT_OK(server->Start());
      // One line on standard output with the endpoint, for profiles and for scripts that pass port 0.
      Print(fmt::format("serving Delta Sharing at {}{}\n", server->url(), endpoint));
      std::fflush(stdout);
      return http::ServeUntilSignal(*server);
    };
  });
}

}  // namespace lakesync::cli
