// lakesync changes: print a source's change stream (Delta Change Data Feed, Iceberg changelog) in
// any tabular format. The stream is exactly what a sync job hands to the sink.
#include "changes_args.h"

namespace lakesync::cli {

void RegisterChangesCommand(Cli& cli) {
  auto a = std::make_shared<ChangesArgs>();
  auto* cmd = cli.app.add_subcommand(
      "changes", "Print a source's changes: a Delta table's Change Data Feed or an Iceberg table's changelog");
  cmd->add_option("--source", a->source, "delta, iceberg or sharing (a table shared over Delta Sharing)")
      ->required()
      ->check(CLI::IsMember({"delta", "iceberg", "sharing"}));
  cmd->add_option("--table,-t", a->table,
                  "Delta: the table's path or URI; Iceberg: NAMESPACE.TABLE; sharing: PROFILE#SHARE.SCHEMA.TABLE")
      ->required();
  cmd->add_option("--start-version", a->start_version, "Delta, sharing: first version to read (inclusive)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--end-version", a->end_version,
                  "Delta, sharing: last version to read (inclusive; default latest)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--start-timestamp", a->start_timestamp,
                  "first commit at or after this time (ISO-8601 or epoch milliseconds)");
  cmd->add_option("--end-timestamp", a->end_timestamp, "last commit at or before this time");
  cmd->add_option("--start-snapshot-id", a->start_snapshot_id,
                  "Iceberg: first snapshot to read (inclusive, as Beam's from_snapshot; Spark's "
                  "start-snapshot-id is exclusive)");
  cmd->add_option("--end-snapshot-id", a->end_snapshot_id, "Iceberg: last snapshot to read (inclusive)");
  cmd->add_option("--starting-strategy", a->starting_strategy,
                  "Iceberg without a start bound: earliest (whole history) or latest (from the current "
                  "snapshot, inclusive)")
      ->check(CLI::IsMember({"earliest", "latest"}));
  cmd->add_flag("--follow", a->follow, "Iceberg: keep polling for new snapshots until interrupted");
  auto* poll = cmd->add_option("--poll-interval", a->poll_interval_seconds,
                               "seconds between polls with --follow (default 60)")
                    ->check(CLI::Range(1.0, 86400.0));
  poll->needs(cmd->get_option("--follow"));
  cmd->add_option("--columns", a->columns,
                  "metadata columns to append, in this order (Delta: _change_type, _commit_version, "
                  "_commit_timestamp; Iceberg: _change_type, _change_ordinal, _commit_snapshot_id, "
                  "_commit_snapshot_sequence_number, _commit_timestamp)")
      ->delimiter(',');
  cmd->add_option("--position-file", a->position_file,
                  "Iceberg: resume after the snapshot recorded in this file, and record each snapshot once its "
                  "rows are written (\"<sequence number>:<snapshot id>\")");
  cmd->add_option("--limit", a->limit, "stop after N change rows")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--count", a->count_only,
                "Delta: read the whole change stream and print only its row count (measures the source without "
                "output encoding)");
  AddOutputOptions(*cmd, a->out, "table (default; jsonl with --follow)");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a, cmd] {
    // --follow prints rows as they come, which only JSON Lines can do: it is the default there.
    if (a->follow && cmd->get_option("--format")->count() == 0) a->out.format = "jsonl";
    cli.action = [&cli, a]() -> Status {
      ARROW_RETURN_NOT_OK(OutputFormat(a->out).status());
      if (a->limit && a->count_only) return InvalidArgument("--limit and --count do not go together");
      if (a->source == "iceberg") {
        if (a->count_only) return InvalidArgument("--count applies to --source delta");
        return RunIcebergChanges(*a, cli.global);
      }
      if (!a->position_file.empty()) {
        return InvalidArgument("--position-file applies to --source iceberg; a {} range is given by versions",
                               a->source == "sharing" ? "shared table's" : "Delta");
      }
      std::shared_ptr<arrow::RecordBatchReader> reader;
      if (a->source == "sharing") {
        ARROW_ASSIGN_OR_RAISE(reader, OpenSharingChanges(*a, cli.global));
      } else {
        ARROW_ASSIGN_OR_RAISE(reader, OpenDeltaChanges(*a, cli.global));
      }
      if (a->count_only) {
        int64_t rows = 0;
        std::shared_ptr<arrow::RecordBatch> batch;
        while (true) {
          ARROW_RETURN_NOT_OK(reader->ReadNext(&batch));
          if (!batch) break;
          rows += batch->num_rows();
        }
        Print(std::to_string(rows) + "\n");
        return Status::OK();
      }
      if (a->limit) reader = LimitRows(std::move(reader), *a->limit);
      return WriteRows(a->out, *reader).status();
    };
  });
}

}  // namespace lakesync::cli
