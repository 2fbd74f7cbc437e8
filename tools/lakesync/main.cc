// lakesync: keep Apache Iceberg tables in sync with Delta Lake and Iceberg sources.
#include <iostream>

#include "cli.h"
#include "lakesync/common/logging.h"
#include "lakesync/common/version.h"

int main(int argc, char** argv) {
  using namespace lakesync::cli;
  Cli cli(
      "lakesync keeps Apache Iceberg tables in sync with Delta Lake and Iceberg sources by change data capture.\n"
      "Without --catalog-config, commands use the embedded catalog: SQLite under ./lakesync-warehouse\n"
      "(or $LAKESYNC_WAREHOUSE).");
  cli.app.name("lakesync");
  cli.app.set_version_flag("--version", std::string("lakesync ") + LAKESYNC_VERSION + " (Arrow " +
                                            LAKESYNC_ARROW_VERSION + ")");
  cli.app.add_option("--log-level", cli.global.log_level, "debug, info, warn (default), error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  cli.app.add_option("--log-format", cli.global.log_format,
                     "text (default) or json (one object per line on standard error: time, level, message)")
      ->check(CLI::IsMember({"text", "json"}));
  cli.app.require_subcommand(1);
  cli.app.fallthrough();
  RegisterNamespaceCommands(cli);
  RegisterTableCommands(cli);
  RegisterScanCommand(cli);
  RegisterApplyCommand(cli);
  RegisterChangesCommand(cli);
  RegisterRunCommands(cli);
  RegisterCatalogCommands(cli);
  RegisterShareCommands(cli);

  try {
    cli.app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return cli.app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return cli.app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "lakesync: error: " << e.what() << "\nRun 'lakesync --help' (or '<command> --help') for usage."
              << std::endl;
    return kExitUsage;
  }
  lakesync::ConfigureLogging(cli.global.log_level, cli.global.log_format);
  if (!cli.action) return kExitOk;
  lakesync::Status st = cli.action();
  if (!st.ok()) {
    std::cerr << "lakesync: error: " << st.message() << std::endl;
    return ExitCodeFor(st);
  }
  return kExitOk;
}
