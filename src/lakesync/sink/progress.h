// Reading the progress sinks have recorded in a table (cdc_writer.h writes it): which sink ids hold a
// position there and how far each has got. Jobs use it to refuse a first run that would apply a
// source twice (another sink id, or rows already present).
#pragma once

#include <map>
#include <string>

#include "lakesync/iceberg/model/table_metadata.h"
#include "lakesync/io/file_io.h"
#include "lakesync/sink/cdc_writer.h"

namespace lakesync::sink {

// Every sink id with a position in the table (snapshot summaries along the main lineage, and the
// copies in the table properties), with its newest position.
Result<std::map<std::string, SourcePosition>> CommittedPositions(const iceberg::TableMetadata& metadata);

// An integer of a snapshot's summary (its counts, the sink's tokens): nullopt when the key is absent or
// its value is not a whole integer.
std::optional<int64_t> SummaryNumber(const iceberg::Snapshot& snapshot, const std::string& key);

// Rows the current snapshot holds once deletes are applied, from its summary: total-records minus
// total-position-deletes (deletion vectors count there too). nullopt when the summary lacks the
// totals or the table has equality deletes, whose effect the summary cannot tell.
std::optional<int64_t> LiveRecords(const iceberg::Snapshot& snapshot);

// A snapshot's totals: from its summary when it has them all (every lakesync commit writes them),
// else counted from its manifests (the spec leaves the totals optional; other writers may omit them).
struct SnapshotTotals {
  int64_t records = 0;             // physical rows of the live data files
  int64_t data_files = 0;
  int64_t delete_files = 0;        // deletion vectors, position and equality delete files
  int64_t deleted_positions = 0;   // rows of position delete files and deletion vectors
  int64_t equality_deletes = 0;    // rows of equality delete files (keys, not rows they delete)
  // Rows readers see: records less deleted positions; unknown under equality deletes.
  std::optional<int64_t> live() const {
    if (equality_deletes > 0) return std::nullopt;
    return records - deleted_positions;
  }
};
Result<SnapshotTotals> CountSnapshotTotals(const io::FileIO& io, const iceberg::TableMetadata& metadata,
                                           const iceberg::Snapshot& snapshot);

// Rows a snapshot took away from what readers see: the live rows of removed data files plus the rows its
// deletes (deletion vectors, position and equality deletes) remove; a replaced deletion vector counts
// once (the new vector's positions minus the old one's). nullopt when the summary has none of the
// counts. `table history` and the dashboard show it.
std::optional<int64_t> RemovedRecords(const iceberg::Snapshot& snapshot);

}  // namespace lakesync::sink
