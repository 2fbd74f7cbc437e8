// Shared plumbing of the lakesync command line: global options, catalog opening, error reporting.
// Sub-commands are thin: they parse flags into typed structs, call the library, print the answer.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lakesync/catalog/catalog.h"
#include "lakesync/common/status.h"
#include "lakesync/formats/tabular/tabular.h"
#include "lakesync/io/file_io.h"

namespace lakesync::cli {

// Exit codes, documented in docs/cli.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;        // bad flags, config keys, filters, input rows
inline constexpr int kExitNotFound = 3;     // table, namespace, file, snapshot
inline constexpr int kExitCorrupt = 4;      // a file is not what its format says

struct GlobalOptions {
  std::string catalog_config;  // empty: the embedded default catalog
  std::string log_level = "warn";
  std::string log_format = "text";
};

// The command to run once flags are parsed; each sub-command sets it from its callback.
using Action = std::function<Status()>;

struct Cli {
  CLI::App app;
  GlobalOptions global;
  Action action;
  explicit Cli(std::string description) : app(std::move(description)) {}
};

// Adds --catalog-config to a sub-command (every command that touches a catalog has it).
void AddCatalogOption(CLI::App& cmd, GlobalOptions& global);

// The catalog named by --catalog-config, or the embedded default (SQLite under ./lakesync-warehouse
// or $LAKESYNC_WAREHOUSE).
Result<std::shared_ptr<catalog::Catalog>> OpenCatalog(const GlobalOptions& global);

// "k=v" flags into a map; errors name the flag value.
Result<std::map<std::string, std::string>> ParseKeyValues(const std::vector<std::string>& items,
                                                           std::string_view flag);

// Writes to stdout without buffering surprises.
void Print(std::string_view text);

int ExitCodeFor(const Status& status);

// --format/--output of commands that print rows (scan, changes), in cli_output.cc.
struct OutputArgs {
  std::string format = "table";
  std::string output;  // empty: standard output
};
void AddOutputOptions(CLI::App& cmd, OutputArgs& args);
// The parsed format; refuses Parquet to a terminal.
Result<tabular::Format> OutputFormat(const OutputArgs& args);
// Writes every batch of `reader` where `args` says and returns the row count. `file_io` opens
// --output (a table's FileIO, for object-store credentials); null: a FileIO without properties.
Result<int64_t> WriteRows(const OutputArgs& args, arrow::RecordBatchReader& reader,
                          const io::FileIO* file_io = nullptr);

// The FileIO for a Delta table path: --catalog-config's properties (object-store credentials) when
// given, else none (environment fallbacks apply). In cmd_changes_delta.cc.
Result<std::shared_ptr<io::FileIO>> OpenDeltaFileIO(const GlobalOptions& global);

void RegisterNamespaceCommands(Cli& cli);
void RegisterTableCommands(Cli& cli);
void RegisterScanCommand(Cli& cli);
void RegisterApplyCommand(Cli& cli);
void RegisterChangesCommand(Cli& cli);
void RegisterRunCommands(Cli& cli);
void RegisterCatalogCommands(Cli& cli);
void RegisterShareCommands(Cli& cli);

}  // namespace lakesync::cli
