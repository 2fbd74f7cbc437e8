// Loading delete files for reading: deletion vectors and position delete files become position
// bitmaps per data file; equality delete files become key → sequence-number maps
// (iceberg/model/key_columns.h, the one key encoder), one per scope and equality-id set of a
// planned snapshot, built once and kept by the snapshot's EqualityDeleteIndex (equality_deletes.h).
// Position delete files, shared by many data files, are loaded once per scan.
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
#include "lakesync/iceberg/scan/equality_deletes.h"
#include "lakesync/io/file_io.h"

namespace lakesync::iceberg {

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

  // The keys of `files` (equality delete files with the equality field ids `field_ids`, ascending)
  // mapped to the highest sequence number of a file holding each. The files are read in parallel on
  // the engine's executor and merged in their order. Callers go through
  // EqualityDeleteIndex::KeyMapsFor, which builds each map once per scan.
  Result<std::shared_ptr<const EqualityKeyMap>> BuildEqualityKeyMap(const std::vector<int32_t>& field_ids,
                                                                    const std::vector<SequencedDeleteFile>& files);

  // The data files a position delete file's rows name (distinct, sorted).
  Result<std::vector<std::string>> PositionDeleteTargets(const DataFilePtr& file);

 private:
  using PositionsByFile = std::map<std::string, puffin::PositionBitmap, std::less<>>;
  Result<std::shared_ptr<const PositionsByFile>> LoadPositionDeleteFile(const DataFilePtr& file);
  // One equality delete file's key columns, read in the table schema's types in `field_ids` order.
  Result<std::vector<KeyColumns>> ReadEqualityKeys(const std::vector<int32_t>& field_ids, const DataFile& file);
  Result<std::shared_ptr<const puffin::FileMetadata>> PuffinFooter(
      const std::shared_ptr<arrow::io::RandomAccessFile>& input, const DataFile& dv);

  std::shared_ptr<io::FileIO> io_;
  SchemaPtr schema_;
  std::map<int32_t, PartitionSpecPtr> specs_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const PositionsByFile>> position_files_;
  std::map<std::string, std::shared_ptr<const puffin::FileMetadata>> puffin_footers_;
};

// The identity-partition values of a data file by source field id (spec "Column Projection": a field
// absent from the file reads as its identity partition value). Null values and fields of other
// transforms are left out. `spec` may be null (no values).
std::map<int32_t, Literal> IdentityPartitionValues(const DataFile& file, const PartitionSpec* spec);

}  // namespace lakesync::iceberg
