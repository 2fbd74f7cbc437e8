// lakesync scan: read a table (with deletes applied) as a text table, JSON Lines, CSV or Parquet.
#include <arrow/io/file.h>
#include <arrow/record_batch.h>
#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli.h"
#include "lakesync/delta/delta_table.h"
#include "lakesync/formats/tabular/tabular.h"
#include "lakesync/iceberg/model/literal.h"
#include "lakesync/iceberg/model/spec_syntax.h"
#include "lakesync/sharing/shared_table.h"
#include "lakesync/table/scan.h"

namespace lakesync::cli {

void RegisterScanCommand(Cli& cli) {
  struct Args {
    std::string table, delta, sharing, filter, select, as_of, ref = "main";
    OutputArgs out;
    std::optional<int64_t> limit, snapshot_id, version;
    bool stats = false, row_lineage = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = cli.app.add_subcommand(
      "scan", "Read a table's rows (deletes applied) as a text table, JSON Lines, CSV or Parquet");
  auto* positional = cmd->add_option("table", a->table, "NAMESPACE.TABLE (an Iceberg table in the catalog)");
  auto* table_opt = cmd->add_option("--table,-t", a->table, "the same as the TABLE argument (kept for scripts)");
  auto* delta_opt = cmd->add_option("--delta", a->delta, "read the Delta table at this path or URI instead");
  auto* sharing_opt = cmd->add_option("--sharing", a->sharing,
                                      "read a table shared over Delta Sharing: PROFILE#SHARE.SCHEMA.TABLE (a profile "
                                      "file, then the table's three names)");
  table_opt->excludes(delta_opt);
  sharing_opt->excludes(table_opt);
  sharing_opt->excludes(delta_opt);
  positional->excludes(delta_opt);
  positional->excludes(table_opt);
  positional->excludes(sharing_opt);
  auto* version_opt = cmd->add_option("--version", a->version,
                                      "Delta and --sharing: read this table version (time travel)")
                          ->check(CLI::NonNegativeNumber);
  auto* filter_opt = cmd->add_option("--filter", a->filter,
                  "row filter, SQL-like: \"id > 5 AND region = 'eu'\", IN, BETWEEN, IS NULL, LIKE 'prefix%'");
  cmd->add_option("--select", a->select, "comma-separated columns to output (default: all)");
  cmd->add_option("--limit", a->limit, "stop after N rows")->check(CLI::NonNegativeNumber);
  auto* snap = cmd->add_option("--snapshot-id", a->snapshot_id, "read this snapshot (time travel)");
  auto* asof = cmd->add_option("--as-of", a->as_of, "read the snapshot current at this ISO-8601 time");
  auto* ref_opt = cmd->add_option("--ref", a->ref, "branch or tag to read (default main)");
  snap->excludes(asof);
  version_opt->excludes(asof);
  AddOutputOptions(*cmd, a->out);
  cmd->add_flag("--stats", a->stats, "print planning statistics to standard error");
  auto* lineage_opt = cmd->add_flag("--row-lineage", a->row_lineage,
                                    "Iceberg v3: append the row lineage columns _row_id and "
                                    "_last_updated_sequence_number (null on older tables)");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a, filter_opt, snap, ref_opt, version_opt, lineage_opt] {
    cli.action = [&cli, a, filter_opt, snap, ref_opt, version_opt, lineage_opt]() -> Status {
      if (a->table.empty() && a->delta.empty() && a->sharing.empty()) {
        return InvalidArgument("scan needs a table (lakesync scan NAMESPACE.TABLE), --delta PATH or --sharing TABLE");
      }
      if (!a->delta.empty() || !a->sharing.empty()) {
        const char* flag = a->delta.empty() ? "--sharing" : "--delta";
        // Iceberg-only flags are refused by name rather than ignored.
        if (filter_opt->count()) return InvalidArgument("--filter does not apply to {}", flag);
        if (snap->count()) return InvalidArgument("--snapshot-id does not apply to {} (use --version)", flag);
        if (ref_opt->count()) return InvalidArgument("--ref does not apply to {}", flag);
        if (lineage_opt->count()) return InvalidArgument("--row-lineage does not apply to {}", flag);
        ARROW_RETURN_NOT_OK(OutputFormat(a->out).status());
        delta::SnapshotScanOptions options;
        options.version = a->version;
        options.limit = a->limit;
        if (!a->as_of.empty()) {
          LS_ASSIGN_OR_RAISE_CTX(options.as_of_timestamp_ms, delta::ParseTimestampMillis(a->as_of), "--as-of");
        }
        if (!a->select.empty()) {
          for (auto& c : iceberg::SplitTopLevelCommas(a->select)) options.select.push_back(c);
        }
        if (!a->sharing.empty()) {
          ARROW_ASSIGN_OR_RAISE(auto shared, sharing::SharedTable::Open(a->sharing));
          ARROW_ASSIGN_OR_RAISE(auto reader, shared->ScanSnapshot(options));
          ARROW_ASSIGN_OR_RAISE(int64_t rows, WriteRows(a->out, *reader));
          if (a->stats) fmt::print(stderr, "{}: {} rows\n", shared->Describe(), rows);
          return Status::OK();
        }
        ARROW_ASSIGN_OR_RAISE(auto io, OpenDeltaFileIO(cli.global));
        ARROW_ASSIGN_OR_RAISE(auto table, delta::DeltaTable::Open(a->delta, io));
        ARROW_ASSIGN_OR_RAISE(auto reader, table->ScanSnapshot(options));
        ARROW_ASSIGN_OR_RAISE(int64_t rows, WriteRows(a->out, *reader, io.get()));
        if (a->stats) fmt::print(stderr, "delta table {}: {} rows\n", table->location(), rows);
        return Status::OK();
      }
      if (version_opt->count()) return InvalidArgument("--version applies to --delta and --sharing (use --snapshot-id)");
      ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(a->table));
      ARROW_RETURN_NOT_OK(OutputFormat(a->out).status());
      ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(cli.global));
      ARROW_ASSIGN_OR_RAISE(auto t, table::Table::Load(catalog, id));
      table::ScanOptions options;
      options.filter = a->filter;
      options.snapshot_id = a->snapshot_id;
      options.ref = a->ref;
      options.limit = a->limit;
      options.with_row_lineage = a->row_lineage;
      if (!a->as_of.empty()) {
        ARROW_ASSIGN_OR_RAISE(int64_t micros, iceberg::ParseTimestamp(a->as_of, false));
        options.as_of_timestamp_ms = micros / 1000;
      }
      if (!a->select.empty()) {
        for (auto& c : iceberg::SplitTopLevelCommas(a->select)) options.select.push_back(c);
      }
      ARROW_ASSIGN_OR_RAISE(auto scan, table::TableScan::Make(t, options));
      ARROW_ASSIGN_OR_RAISE(auto reader, scan->Open());
      ARROW_ASSIGN_OR_RAISE(int64_t rows, WriteRows(a->out, *reader, t->io().get()));
      if (a->stats) {
        const auto& s = scan->stats();
        fmt::print(stderr,
                   "snapshot {}: {} rows; manifests {} ({} skipped); data files {} ({} skipped); delete files {}\n",
                   scan->snapshot() ? std::to_string(scan->snapshot()->snapshot_id) : "none", rows, s.manifests,
                   s.manifests_skipped, s.data_files, s.data_files_skipped, s.delete_files);
      }
      return Status::OK();
    };
  });
}

}  // namespace lakesync::cli
