// Reading the files a Delta snapshot or change feed selects: one Parquet file at a time (bounded
// memory), rows filtered by deletion vectors, partition values filled in from the log, logical
// column names restored, and the Change Data Feed's metadata columns appended.
#pragma once

#include <arrow/record_batch.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/delta/schema.h"
#include "lakesync/formats/puffin/positions_bitmap.h"
#include "lakesync/io/file_io.h"

namespace lakesync::delta::internal {

// One file to read.
struct ReadTask {
  std::string location;   // resolved, percent-decoded
  std::optional<int64_t> size;
  std::map<std::string, std::optional<std::string>> partition_values;  // keyed by physical name
  // Rows whose position is in `drop` are skipped; with `keep_only`, only rows in it are read.
  std::shared_ptr<const puffin::PositionBitmap> drop;
  std::shared_ptr<const puffin::PositionBitmap> keep_only;
  bool is_cdc = false;       // _change_type comes from the file
  std::string change_type;   // otherwise this
  int64_t version = 0;
  int64_t commit_timestamp_ms = 0;
};

enum class MetaColumn { kChangeType, kCommitVersion, kCommitTimestamp };

// Parses the CDF metadata column names. Returns InvalidArgument naming an unknown or repeated name.
Result<std::vector<MetaColumn>> ParseMetaColumns(const std::vector<std::string>& names);

struct StreamOptions {
  std::vector<MetaColumn> meta_columns;
  // Output only these table columns, in this order (empty: all). Names are logical.
  std::vector<std::string> select;
  std::optional<int64_t> limit;
  int64_t batch_size = 64 * 1024;
};

// A reader over `tasks` in order. The output schema is the table columns (or `select`), then the
// metadata columns. Errors name the file and version: NotFound for a missing file, Corrupt for an
// undecodable one or a null/missing _change_type in a change data file.
Result<std::shared_ptr<arrow::RecordBatchReader>> MakeTaskReader(std::shared_ptr<io::FileIO> io, TableSchema schema,
                                                                 std::vector<ReadTask> tasks, StreamOptions options);

// The output schema MakeTaskReader would give.
Result<std::shared_ptr<arrow::Schema>> OutputSchema(const TableSchema& schema, const StreamOptions& options);

// Opens the file and reads its Parquet footer, so that a missing (NotFound) or truncated (Corrupt)
// file is found before any row is emitted. Errors name the location.
Status CheckParquetFile(const io::FileIO& io, const std::string& location, std::optional<int64_t> size);

// Resolves a log path (URI, percent-encoded, relative or absolute) against the table root.
Result<std::string> ResolvePath(const std::string& table_root, const std::string& log_path);

}  // namespace lakesync::delta::internal
