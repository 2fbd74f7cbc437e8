// lakesync ui: a read-only web dashboard of the catalog's tables and the sync jobs writing them
// (docs/ui.md). The pages and their JSON API live in src/lakesync/ui; this only parses flags.
#include <fmt/format.h>

#include "cli.h"
#include "lakesync/catalog/rest/server_auth.h"
#include "lakesync/http/server.h"
#include "lakesync/ui/ui_server.h"

namespace lakesync::cli {
namespace {

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

void RegisterUiCommand(Cli& cli) {
  struct Args {
    std::string listen = "127.0.0.1:8088";
    std::string auth;
    std::string jobs;
    int threads = 8;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = cli.app.add_subcommand(
      "ui",
      "Serve a read-only web dashboard of the catalog: tables (rows, size, snapshots, files, deletes, partitions,\n"
      "schema history, a compaction hint) and sync jobs by sink id (runs, positions, lag), with a JSON API behind\n"
      "every page (docs/ui.md). Prints the URL once listening; stops gracefully on SIGINT/SIGTERM.");
  cmd->add_option("--listen", a->listen,
                  "HOST:PORT to listen on (default 127.0.0.1:8088; port 0 picks a free one); an address other than "
                  "loopback needs --auth");
  cmd->add_option("--auth", a->auth,
                  "YAML file of bearer tokens, the format of `catalog serve --auth` (docs/catalogs.md): every API "
                  "request then needs one, and a token scoped to namespaces sees only those");
  cmd->add_option("--jobs", a->jobs,
                  "a folder of job files (*.yaml, *.yml, *.json): their status (lag against the source, last run, last "
                  "error) and the lag over time show on the job pages")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--threads", a->threads, "requests served at once (default 8)")->check(CLI::Range(1, 256));
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto address, http::ParseListenAddress(a->listen));
      if (a->auth.empty() && !IsLoopback(address.first)) {
        return InvalidArgument(
            "--listen {}: the dashboard shows every table and job of the catalog; listening on an address other "
            "than loopback needs --auth FILE",
            a->listen);
      }
      ui::UiServerOptions options;
      options.http.listen = a->listen;
      options.http.name = "ui";
      options.http.worker_threads = a->threads;
      if (!a->auth.empty()) {
        ARROW_ASSIGN_OR_RAISE(options.auth, catalog::rest::LoadServerAuthFile(a->auth));
      }
      ARROW_ASSIGN_OR_RAISE(options.dashboard.catalog, OpenCatalog(cli.global));
      options.dashboard.jobs_dir = a->jobs;
      const GlobalOptions global = cli.global;
      options.dashboard.open_job = [global](const std::string& path) {
        return OpenJob(path, global, "", /*once=*/true, /*apply_threads=*/false, /*retry_open=*/false);
      };
      ARROW_ASSIGN_OR_RAISE(auto server, ui::UiServer::Make(std::move(options)));
      ARROW_RETURN_NOT_OK(server->Start());
      Print(fmt::format("lakesync ui at {}/\n", server->url()));
      return http::ServeUntilSignal(server->http_server());
    };
  });
}

}  // namespace lakesync::cli
