// Loading delete files for reading: deletion vectors and position delete files become position
// bitmaps per data file; equality delete files become key sets (iceberg/model/key_columns.h, the one
// key encoder). Files shared by many data files (position delete files, equality deletes) are loaded
// once per scan, and the union of the equality deletes that apply to a task is built once per
// combination of files and shared by every task that has it.
//
// One loader serves all the tasks of a scan and may be used from several threads at once: its caches
// are guarded, and what it returns is immutable.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lakesync/formats/puffin/positions_bitmap.h"
#include "lakesync/formats/puffin/puffin_metadata.h"
#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/key_columns.h"
#include "lakesync/iceberg/model/partition_spec.h"
#include "lakesync/iceberg/model/schema.h"
#include "lakesync/io/file_io.h"

namespace lakesync::iceberg {

// The keys of one or more equality delete files with the same equality columns.
struct EqualityDeleteSet {
  std::vector<int32_t> field_ids;  // top-level field ids, in the delete files' equality_ids order
  KeySet keys;
};

class DeleteLoader {
 public:
  // `schema`: the table schema the scan reads with (equality columns are read in its types, so that
  // delete keys and data keys encode alike). `specs`: the table's partition specs by id.
  DeleteLoader(std::shared_ptr<io::FileIO> io, SchemaPtr schema, std::map<int32_t, PartitionSpecPtr> specs = {})
      : io_(std::move(io)), schema_(std::move(schema)), specs_(std::move(specs)) {}

  // The positions of `data_file` deleted by its deletion vector and position delete files. The
  // vector's manifest entry is checked against its Puffin file's footer first (once per Puffin
  // file): a vector the footer assigns to another data file, or does not list, is Corrupt.
  Result<puffin::PositionBitmap> DeletedPositions(const std::string& data_file, const DataFilePtr& deletion_vector,
                                                  const std::vector<DataFilePtr>& position_deletes);

  // The keys of one equality delete file.
  Result<std::shared_ptr<const EqualityDeleteSet>> EqualityDeletes(const DataFilePtr& file);

  // The data files a position delete file's rows name (distinct, sorted).
  Result<std::vector<std::string>> PositionDeleteTargets(const DataFilePtr& file);

  // The equality delete files of a task as one set per distinct list of equality ids (files with the
  // same columns act as the union of their keys: one probe per row instead of one per file, so the
  // cost per row stays flat as commits of equality deletes pile up).
  Result<std::vector<std::shared_ptr<const EqualityDeleteSet>>> MergedEqualityDeletes(
      const std::vector<DataFilePtr>& files);

 private:
  using PositionsByFile = std::map<std::string, puffin::PositionBitmap, std::less<>>;
  Result<std::shared_ptr<const PositionsByFile>> LoadPositionDeleteFile(const DataFilePtr& file);
  Result<std::shared_ptr<const puffin::FileMetadata>> PuffinFooter(
      const std::shared_ptr<arrow::io::RandomAccessFile>& input, const DataFile& dv);

  std::shared_ptr<io::FileIO> io_;
  SchemaPtr schema_;
  std::map<int32_t, PartitionSpecPtr> specs_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const PositionsByFile>> position_files_;
  std::map<std::string, std::shared_ptr<const EqualityDeleteSet>> equality_files_;
  std::map<std::string, std::shared_ptr<const puffin::FileMetadata>> puffin_footers_;
  // Unions of several files' keys by the files' paths. Key sets can be large: only the most recent
  // few are kept (consecutive tasks, e.g. the files of one commit, usually share one).
  std::vector<std::pair<std::vector<std::string>, std::shared_ptr<const EqualityDeleteSet>>> merged_;
};

// The identity-partition values of a data file by source field id (spec "Column Projection": a field
// absent from the file reads as its identity partition value). Null values and fields of other
// transforms are left out. `spec` may be null (no values).
std::map<int32_t, Literal> IdentityPartitionValues(const DataFile& file, const PartitionSpec* spec);

}  // namespace lakesync::iceberg
