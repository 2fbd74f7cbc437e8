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
#include "lakesync/catalog/catalog_config.h"
#include "lakesync/common/status.h"
#include "lakesync/engine/job_runner.h"
#include "lakesync/formats/tabular/tabular.h"
#include "lakesync/io/file_io.h"

namespace lakesync::table {
class Table;
}

namespace lakesync::cli {

// Exit codes, documented in docs/cli.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;        // bad flags, config keys, filters, input rows
inline constexpr int kExitNotFound = 3;     // table, namespace, file, snapshot
inline constexpr int kExitCorrupt = 4;      // a file is not what its format says
inline constexpr int kExitLagging = 5;      // status --fail-if-lag: the job is further behind than allowed

struct GlobalOptions {
  std::string catalog_config;  // empty: --catalog, the named default, or the embedded catalog
  std::string catalog;         // a named catalog of ~/.lakesync.yaml / $LAKESYNC_CONFIG
  std::string log_level = "warn";
  std::string log_format = "text";
  int threads = 0;  // --threads; 0: LAKESYNC_THREADS, a job's threads:, or the machine's cores
};

// The command to run once flags are parsed; each sub-command sets it from its callback.
using Action = std::function<Status()>;

struct Cli {
  CLI::App app;
  GlobalOptions global;
  Action action;
  int exit_code = kExitOk;  // an action that succeeded but must exit non-zero (status --fail-if-lag)
  explicit Cli(std::string description) : app(std::move(description)) {}
};

// Adds --catalog-config and --catalog to a command (the top-level app, so that they may come before
// the command, and every command that touches a catalog, so that they may come after it).
void AddCatalogOption(CLI::App& cmd, GlobalOptions& global);

// The catalog configuration a command uses, first match wins: --catalog-config FILE; --catalog NAME
// (named_catalogs.h); the config file's default-catalog; the embedded default (SQLite under
// $LAKESYNC_WAREHOUSE, else lakesync-warehouse in `base_dir`: a job file's folder, or the current
// directory when empty).
Result<catalog::CatalogConfig> ResolveCatalogConfig(const GlobalOptions& global, const std::string& base_dir = "");
Result<std::shared_ptr<catalog::Catalog>> OpenCatalog(const GlobalOptions& global, const std::string& base_dir = "");
// The table a command names as NAMESPACE.TABLE, from the catalog the options choose. The name is
// checked before the catalog is opened, so a malformed one touches nothing (not even the embedded
// catalog's file).
Result<std::shared_ptr<table::Table>> LoadNamedTable(const GlobalOptions& global, const std::string& name);

// "k=v" flags into a map; errors name the flag value.
Result<std::map<std::string, std::string>> ParseKeyValues(const std::vector<std::string>& items,
                                                           std::string_view flag);

// Writes to stdout without buffering surprises.
void Print(std::string_view text);

int ExitCodeFor(const Status& status);

// NotFound for a namespace that does not exist, saying how to create it.
Status MissingNamespace(const catalog::Namespace& ns);

// Reports a fatal error on standard error: "lakesync: error: <message>", or with --log-format json one
// JSON log line (level error, event "fatal", exit_code, error_kind) so log collectors see it too.
void ReportError(const Cli& cli, const std::string& message, int exit_code, std::string_view kind = "");

// --format/--output of commands that print rows (scan, changes), in cli_output.cc.
struct OutputArgs {
  std::string format = "table";
  std::string output;  // empty: standard output
  std::string compression;  // --format parquet's codec; empty: zstd
};
// `format_default` describes the default in --help ("table (default)").
void AddOutputOptions(CLI::App& cmd, OutputArgs& args, std::string_view format_default = "table (default)");
// The parsed format; refuses Parquet to a terminal.
Result<tabular::Format> OutputFormat(const OutputArgs& args);
// Writes every batch of `reader` where `args` says and returns the row count. `file_io` opens
// --output (a table's FileIO, for object-store credentials); null: a FileIO without properties.
Result<int64_t> WriteRows(const OutputArgs& args, arrow::RecordBatchReader& reader,
                          const io::FileIO* file_io = nullptr);

// A file descriptor as an unbuffered Arrow stream that counts its own position (so the Parquet writer
// can ask for it on a pipe, where lseek fails): standard output, or an --output that is a pipe, a
// device or a file opened for appending. `name` names it in errors; `owned`: Close() closes `fd`.
std::shared_ptr<arrow::io::OutputStream> DescriptorOutput(int fd, std::string name, bool owned);
// Opens the local file `path` with O_WRONLY | O_CLOEXEC | `flags` (mode 0644 where O_CREAT creates it)
// as a DescriptorOutput that closes it; errors name the --output as the user gave it (`output`).
Result<std::shared_ptr<arrow::io::OutputStream>> OpenDescriptorOutput(const std::string& path,
                                                                      const std::string& output, int flags);

// At most `limit` rows of `reader` (the stream is not read further).
std::shared_ptr<arrow::RecordBatchReader> LimitRows(std::shared_ptr<arrow::RecordBatchReader> reader, int64_t limit);

// The FileIO for a Delta table path: --catalog-config's properties (object-store credentials) when
// given, else none (environment fallbacks apply). In cmd_changes_delta.cc.
Result<std::shared_ptr<io::FileIO>> OpenDeltaFileIO(const GlobalOptions& global);

// Opens a job file as `run` does (its catalog: --catalog-config, else the embedded one next to the job
// file), for status and the dashboard. `every` overrides the schedule; `once`: a source that cannot be
// opened is retried per the job's retry policy only. `apply_threads`: the job's `threads:` sizes this
// process's executor (false for a process that opens many jobs, the dashboard). `retry_open`: false
// gives up on an unreachable source at once instead of retrying per the job's policy (a page must not
// wait out a source's outage). In cmd_run.cc.
Result<std::unique_ptr<engine::JobRunner>> OpenJob(const std::string& path, const GlobalOptions& global,
                                                   const std::string& every, bool once, bool apply_threads = true,
                                                   bool retry_open = true);

void RegisterNamespaceCommands(Cli& cli);
void RegisterTableCommands(Cli& cli);
// table expire-snapshots (cmd_table_maintenance.cc), under the `table` command.
void RegisterTableMaintenance(Cli& cli, CLI::App* table_cmd);
void RegisterTableAlter(Cli& cli, CLI::App* table_cmd);
void RegisterScanCommand(Cli& cli);
void RegisterApplyCommand(Cli& cli);
void RegisterChangesCommand(Cli& cli);
void RegisterRunCommands(Cli& cli);
void RegisterCatalogCommands(Cli& cli);
void RegisterShareCommands(Cli& cli);
// lakesync ui: the read-only web dashboard (cmd_ui.cc, docs/ui.md).
void RegisterUiCommand(Cli& cli);
// Hidden helpers generated from the command definitions: shell completion and the man page.
void RegisterDocCommands(Cli& cli);

}  // namespace lakesync::cli
