// lakesync changes --source sharing: the change data feed of a table shared over Delta Sharing, read
// from its server and its signed file URLs; the same rows and columns as --source delta.
#include "changes_args.h"
#include "lakesync/delta/delta_table.h"
#include "lakesync/sharing/shared_table.h"

namespace lakesync::cli {

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenSharingChanges(const ChangesArgs& args,
                                                                     const GlobalOptions& global) {
  if (args.start_snapshot_id || args.end_snapshot_id) {
    return InvalidArgument("--start-snapshot-id and --end-snapshot-id do not apply to --source sharing (use versions)");
  }
  if (!args.starting_strategy.empty()) return InvalidArgument("--starting-strategy does not apply to --source sharing");
  if (args.follow) return InvalidArgument("--follow does not apply to --source sharing (use a streaming job)");
  if (args.poll_interval_seconds != 60) return InvalidArgument("--poll-interval does not apply to --source sharing");
  if (!global.catalog_config.empty()) {
    return InvalidArgument("--catalog-config does not apply to --source sharing: the profile names the server");
  }
  if (args.start_version && !args.start_timestamp.empty()) {
    return InvalidArgument("give --start-version or --start-timestamp, not both");
  }
  if (!args.start_version && args.start_timestamp.empty()) {
    return InvalidArgument("--source sharing needs --start-version or --start-timestamp");
  }
  if (args.end_version && !args.end_timestamp.empty()) {
    return InvalidArgument("give --end-version or --end-timestamp, not both");
  }
  delta::ChangeFeedOptions options;
  options.start_version = args.start_version;
  options.end_version = args.end_version;
  if (!args.start_timestamp.empty()) {
    LS_ASSIGN_OR_RAISE_CTX(options.start_timestamp_ms, delta::ParseTimestampMillis(args.start_timestamp),
                           "--start-timestamp");
  }
  if (!args.end_timestamp.empty()) {
    LS_ASSIGN_OR_RAISE_CTX(options.end_timestamp_ms, delta::ParseTimestampMillis(args.end_timestamp),
                           "--end-timestamp");
  }
  if (!args.columns.empty()) options.metadata_columns = args.columns;
  ARROW_ASSIGN_OR_RAISE(auto table, sharing::SharedTable::Open(args.table));
  return table->ReadChanges(options);
}

}  // namespace lakesync::cli
