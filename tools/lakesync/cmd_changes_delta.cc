// lakesync changes --source delta: a Delta table's Change Data Feed (docs/delta.md), validated for
// the whole range before the first row is printed. Also the flags of every Delta change feed
// (DeltaFeedOptions), which --source sharing reads the same way.
#include "changes_args.h"
#include "lakesync/catalog/catalog_config.h"
#include "lakesync/delta/delta_table.h"

namespace lakesync::cli {

Result<std::shared_ptr<io::FileIO>> OpenDeltaFileIO(const GlobalOptions& global) {
  // A Delta table is read from its path; --catalog-config only lends its properties (s3.*, gcs.*,
  // adls.*) to reach object stores.
  std::map<std::string, std::string> properties;
  if (!global.catalog_config.empty() || !global.catalog.empty()) {
    ARROW_ASSIGN_OR_RAISE(auto config, ResolveCatalogConfig(global));
    properties = config.catalog_properties;
  }
  return io::FileIO::Make(std::move(properties));
}

Result<delta::ChangeFeedOptions> DeltaFeedOptions(const ChangesArgs& args, std::string_view source) {
  // Iceberg-only flags are refused by name rather than ignored.
  if (args.start_snapshot_id) {
    return InvalidArgument("--start-snapshot-id does not apply to --source {} (use --start-version)", source);
  }
  if (args.end_snapshot_id) {
    return InvalidArgument("--end-snapshot-id does not apply to --source {} (use --end-version)", source);
  }
  if (!args.starting_strategy.empty()) return InvalidArgument("--starting-strategy does not apply to --source {}", source);
  if (args.follow) return InvalidArgument("--follow does not apply to --source {} (use a streaming job)", source);
  if (args.poll_interval_seconds != 60) return InvalidArgument("--poll-interval does not apply to --source {}", source);
  if (args.start_version && !args.start_timestamp.empty()) {
    return InvalidArgument("give --start-version or --start-timestamp, not both");
  }
  if (!args.start_version && args.start_timestamp.empty()) {
    return InvalidArgument("--source {} needs --start-version or --start-timestamp", source);
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
  return options;
}

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenDeltaChanges(const ChangesArgs& args,
                                                                   const GlobalOptions& global) {
  ARROW_ASSIGN_OR_RAISE(auto options, DeltaFeedOptions(args, "delta"));
  ARROW_ASSIGN_OR_RAISE(auto io, OpenDeltaFileIO(global));
  ARROW_ASSIGN_OR_RAISE(auto table, delta::DeltaTable::Open(args.table, io));
  return table->ReadChanges(options);
}

}  // namespace lakesync::cli
