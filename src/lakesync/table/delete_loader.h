// Loading delete files for reading: deletion vectors and position delete files become position
// bitmaps per data file; equality delete files become sets of encoded key tuples. Files shared by
// many data files (position delete files, equality deletes) are loaded once per scan.
#pragma once

#include <arrow/type_fwd.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "lakesync/formats/puffin/positions_bitmap.h"
#include "lakesync/formats/puffin/puffin_metadata.h"
#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/schema.h"
#include "lakesync/io/file_io.h"

namespace lakesync::table {

// Key tuples of equality deletes, encoded so that equal values (and nulls, which match nulls) give
// equal strings.
struct EqualityDeleteSet {
  std::vector<int32_t> field_ids;  // top-level field ids, in the delete file's equality_ids order
  std::unordered_set<std::string> keys;
};

// Appends the key encoding of row `row` of `column` (primitive Arrow types) to `key`.
Status AppendKeyValue(std::string& key, const arrow::Array& column, int64_t row);

class DeleteLoader {
 public:
  DeleteLoader(std::shared_ptr<io::FileIO> io, iceberg::SchemaPtr table_schema)
      : io_(std::move(io)), schema_(std::move(table_schema)) {}

  // The positions of `data_file` deleted by its deletion vector and position delete files. The
  // vector's manifest entry is checked against its Puffin file's footer first (once per Puffin
  // file): a vector the footer assigns to another data file, or does not list, is Corrupt.
  Result<puffin::PositionBitmap> DeletedPositions(const std::string& data_file,
                                                  const iceberg::DataFilePtr& deletion_vector,
                                                  const std::vector<iceberg::DataFilePtr>& position_deletes);

  Result<std::shared_ptr<const EqualityDeleteSet>> EqualityDeletes(const iceberg::DataFilePtr& file);

  // The data files a position delete file's rows name (distinct, sorted).
  Result<std::vector<std::string>> PositionDeleteTargets(const iceberg::DataFilePtr& file);

 private:
  using PositionsByFile = std::map<std::string, puffin::PositionBitmap, std::less<>>;
  Result<std::shared_ptr<const PositionsByFile>> LoadPositionDeleteFile(const iceberg::DataFilePtr& file);
  Result<std::shared_ptr<const puffin::FileMetadata>> PuffinFooter(
      const std::shared_ptr<arrow::io::RandomAccessFile>& input, const iceberg::DataFile& dv);

  std::shared_ptr<io::FileIO> io_;
  iceberg::SchemaPtr schema_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const PositionsByFile>> position_files_;
  std::map<std::string, std::shared_ptr<const EqualityDeleteSet>> equality_files_;
  std::map<std::string, std::shared_ptr<const puffin::FileMetadata>> puffin_footers_;
};

}  // namespace lakesync::table
