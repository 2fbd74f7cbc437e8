// Flags of `lakesync changes`, shared by the per-source files (cmd_changes_delta.cc,
// cmd_changes_iceberg.cc). Each source validates the flags that concern it and refuses the others
// by name.
#pragma once

#include <arrow/record_batch.h>

#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "lakesync/delta/delta_table.h"

namespace lakesync::cli {

struct ChangesArgs {
  std::string source;  // delta | iceberg | sharing
  std::string table;   // Delta: a path or URI; Iceberg: NAMESPACE.TABLE in the catalog
  // Delta bounds (versions) and, for both sources, timestamps (ISO-8601 or epoch milliseconds).
  std::optional<int64_t> start_version, end_version;
  std::string start_timestamp, end_timestamp;
  // Iceberg bounds and polling.
  std::optional<int64_t> start_snapshot_id, end_snapshot_id;
  std::string starting_strategy;  // earliest | latest (Iceberg)
  bool follow = false;            // Iceberg: keep polling for new snapshots
  double poll_interval_seconds = 60;
  std::vector<std::string> columns;  // metadata columns to append, in this order
  std::string position_file;         // Iceberg: resume after / record the last snapshot written
  bool count_only = false;           // Delta: drain the stream and print its row count (no encoding)
  std::optional<int64_t> limit;      // stop after this many change rows
  OutputArgs out;
};

// Each returns the change stream for the flags (table columns, then the metadata columns asked
// for); the command writes it with WriteRows.
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenDeltaChanges(const ChangesArgs& args,
                                                                   const GlobalOptions& global);
// The version range and metadata columns of a Delta change feed (--source delta and --source sharing
// read the same flags the same way): one of --start-version/--start-timestamp, at most one end, and
// no flag that belongs to Iceberg. `source` names the --source value in messages.
Result<delta::ChangeFeedOptions> DeltaFeedOptions(const ChangesArgs& args, std::string_view source);
// --source sharing: the change data feed of a shared table, read from its server.
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenSharingChanges(const ChangesArgs& args,
                                                                     const GlobalOptions& global);
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenIcebergChanges(const ChangesArgs& args,
                                                                     const GlobalOptions& global);
// Iceberg, batch or --follow (which writes each snapshot's rows as soon as they are read, so it
// cannot go through one RecordBatchReader and WriteRows' buffering).
Status RunIcebergChanges(const ChangesArgs& args, const GlobalOptions& global);

}  // namespace lakesync::cli
