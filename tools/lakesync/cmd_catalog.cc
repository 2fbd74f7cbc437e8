// lakesync catalog serve: serve a catalog over the Iceberg REST protocol.
#include <fmt/format.h>

#include "cli.h"
#include "lakesync/catalog/catalog_config.h"
#include "lakesync/catalog/rest/rest_server.h"
#include "lakesync/common/logging.h"
#include "lakesync/http/server.h"

namespace lakesync::cli {
namespace {

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

void RegisterCatalogCommands(Cli& cli) {
  auto* catalog_cmd = cli.app.add_subcommand("catalog", "Serve a catalog to other engines");
  catalog_cmd->require_subcommand(1);

  struct ServeArgs {
    std::string listen = "127.0.0.1:8181";
    std::string auth;
    std::string prefix;
    int threads = 32;
    bool allow_unauthenticated = false;
    bool any_location = false;
  };
  auto args = std::make_shared<ServeArgs>();
  auto* serve = catalog_cmd->add_subcommand(
      "serve",
      "Serve the catalog over the Iceberg REST protocol (pyiceberg, DuckDB, Spark, Trino and lakesync jobs with\n"
      "`type: rest` connect to it). Prints the URL on standard output once listening; stops gracefully on\n"
      "SIGINT/SIGTERM. One log line per request on standard error (--log-level info, --log-format json).");
  serve->add_option("--listen", args->listen, "HOST:PORT to listen on (default 127.0.0.1:8181; port 0 picks one)");
  serve->add_option("--auth", args->auth,
                    "YAML file of bearer tokens and OAuth2 clients with read-only/read-write access and namespace "
                    "scopes (docs/catalogs.md); without it every request is allowed");
  serve->add_option("--prefix", args->prefix, "optional path prefix advertised to clients (/v1/PREFIX/...)");
  serve->add_option("--threads", args->threads, "requests served at once (default 32)")->check(CLI::Range(1, 1024));
  serve->add_flag("--allow-unauthenticated", args->allow_unauthenticated,
                  "allow serving without --auth on an address other than loopback");
  serve->add_flag("--allow-any-location", args->any_location,
                  "accept table locations and registered metadata files outside the catalog's warehouse");
  AddCatalogOption(*serve, cli.global);
  serve->callback([&cli, args] {
    cli.action = [&cli, args]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto address, http::ParseListenAddress(args->listen));
      if (args->auth.empty() && !IsLoopback(address.first) && !args->allow_unauthenticated) {
        return InvalidArgument(
            "--listen {}: serving without --auth on an address other than loopback would let anyone change "
            "tables; pass --auth FILE (or --allow-unauthenticated)",
            args->listen);
      }
      catalog::CatalogConfig config;
      if (cli.global.catalog_config.empty()) {
        ARROW_ASSIGN_OR_RAISE(config, catalog::DefaultCatalogConfig());
      } else {
        ARROW_ASSIGN_OR_RAISE(config, catalog::LoadCatalogConfigFile(cli.global.catalog_config));
      }
      catalog::rest::RestServerOptions options;
      ARROW_ASSIGN_OR_RAISE(options.catalog, catalog::LoadCatalog(config));
      if (!args->auth.empty()) {
        ARROW_ASSIGN_OR_RAISE(options.auth, catalog::rest::LoadServerAuthFile(args->auth));
      }
      if (!args->any_location) {
        auto it = config.catalog_properties.find("warehouse");
        if (it != config.catalog_properties.end()) options.warehouse = it->second;
      }
      options.prefix = args->prefix;
      options.http.listen = args->listen;
      options.http.name = "rest-catalog";
      options.http.worker_threads = args->threads;
      ARROW_ASSIGN_OR_RAISE(auto server, catalog::rest::RestCatalogServer::Make(std::move(options)));
      ARROW_RETURN_NOT_OK(server->Start());
      Print(fmt::format("serving catalog '{}' over the Iceberg REST protocol at {}\n", config.catalog_name,
                        server->url()));
      return http::ServeUntilSignal(server->http_server());
    };
  });
}

}  // namespace lakesync::cli
