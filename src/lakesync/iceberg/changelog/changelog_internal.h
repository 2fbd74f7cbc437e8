// Internals of the changelog source shared by its files. Not for use outside this directory.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "lakesync/formats/puffin/positions_bitmap.h"
#include "lakesync/iceberg/changelog/change_netting.h"
#include "lakesync/iceberg/changelog/changelog_source.h"
#include "lakesync/iceberg/changelog/rows_ahead.h"
#include "lakesync/iceberg/expr/expression.h"
#include "lakesync/iceberg/model/schema.h"
#include "lakesync/iceberg/scan/data_file_reader.h"
#include "lakesync/table/scan.h"

namespace lakesync::changelog {

// A snapshot's scan plan by data file path.
using PlanMap = std::map<std::string, table::FileScanTask>;

struct ChangelogSource::Shared {
  std::shared_ptr<table::Table> table;
  // The schema every snapshot is read with: the table's current schema when the source opened, so
  // the stream keeps one shape (columns added later are not read; dropped ones read as null).
  iceberg::SchemaPtr schema;
  std::shared_ptr<arrow::Schema> read_arrow_schema;  // ToArrowSchema(schema)
  std::vector<int> output_columns;                   // indices into schema->fields()
  std::vector<int> key_columns;                      // indices into schema->fields(); empty: no keys
  std::string filter_text;
  iceberg::BoundExpr filter = iceberg::BoundExpr::AlwaysTrue();
  std::vector<std::string> metadata_columns;
  std::shared_ptr<arrow::Schema> output_schema;
  // The schema of the emitted batches: output_schema, or with _change_type as a dictionary of
  // change_type_names (ChangelogOptions::change_type_as_dictionary).
  std::shared_ptr<arrow::Schema> emitted_schema;
  std::shared_ptr<arrow::Array> change_type_names;  // ChangeKindName of each ChangeKind, in enum order; or null
  int64_t batch_rows = 64 * 1024;
  int64_t cache_budget_bytes = 256LL << 20;  // ChangelogOptions::cache_budget_bytes
  // Rows read for one snapshot that a later snapshot of the range deletes (rows_ahead.h).
  RowsAhead rows_ahead;
  // The scan context (delete loader) ChangelogSource::LookAhead loaded the range's end with, used by
  // the preparation of every snapshot of that range, so that each position delete file is parsed
  // once per range, not once for the end and again for the snapshot adding it. Null: one context per
  // snapshot, or when the table's metadata is no longer the one it was made from (range_metadata: a
  // refresh may bring new partition specs). Set and read only by preparations (one at a time, in order).
  std::shared_ptr<const iceberg::ScanContext> range_context;
  iceberg::TableMetadataPtr range_metadata;

  // The last plan made, reused as the parent plan of the next snapshot along the lineage.
  std::mutex mutex;
  int64_t cached_snapshot_id = -1;
  std::shared_ptr<const PlanMap> cached_plan;
  SnapshotReadStats last_stats;
  // The memory the last snapshot's netting sorted its rows in, for the next one (change_netting.h);
  // taken out under the mutex while a snapshot decides.
  NettingBuffer netting_buffer;

  // The deleted positions of data files as the last snapshot read left them, with the delete files
  // they came from, so that the next snapshot loads only the delete files added since: with position
  // delete files every commit adds one more per data file, and loading them all again for both
  // states of every snapshot made delete loading a sixth of the changelog's CPU (docs/benchmarks.md).
  // Only by the preparation of snapshots (ChangelogSource::Prepare), one at a time and in order,
  // whichever thread it runs on; streaming rows never touches it.
  struct KnownPositions {
    std::string deletion_vector;              // DeleteKey of the deletion vector ("" for none)
    std::set<std::string> position_deletes;  // DeleteKeys of the position delete files
    puffin::PositionBitmap positions;
  };
  std::map<std::string, KnownPositions> known_positions;  // by data file path

  // The plan of a snapshot (empty for none), from the cache when it is the one last planned.
  Result<std::shared_ptr<const PlanMap>> PlanOf(const iceberg::SnapshotPtr& snapshot);
  // The same, neither from nor into the cache.
  Result<std::shared_ptr<const PlanMap>> PlanUncached(const iceberg::SnapshotPtr& snapshot) const;
};

// The change set of `snapshot` against its parent, as batches in `shared->output_schema`.
Result<std::shared_ptr<arrow::RecordBatchReader>> ReadSnapshotChanges(std::shared_ptr<ChangelogSource::Shared> shared,
                                                                      const PendingSnapshot& pending);

}  // namespace lakesync::changelog
