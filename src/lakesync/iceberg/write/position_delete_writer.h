// v2 position delete files (spec "Position Delete Files"): Parquet with required
// `file_path` string (id 2147483546) and `pos` long (id 2147483545), rows sorted by file_path then
// pos. Metrics keep full bounds on both columns (Java's forPositionDelete) so readers can tell which
// data files a delete file may touch; referenced_data_file is set when every row names one file.
// v3 tables take deletion vectors instead (formats/puffin); this writer is for v2 tables only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/schema.h"
#include "lakesync/iceberg/write/output_factory.h"

namespace lakesync::iceberg {

struct PositionDeleteWriterOptions {
  std::string location;            // where the delete file goes (see FileNamer, deletes = true)
  OutputFactory output_factory;
  int32_t spec_id = 0;             // spec and partition of the data files the deletes reference
  std::vector<Literal> partition;
  std::map<std::string, std::string> properties;  // write.delete.parquet.* / write.parquet.*
};

// Collects (data file, position) pairs in memory and writes them sorted on Close. Duplicate pairs are
// written once.
class PositionDeleteWriter {
 public:
  // Returns InvalidArgument for a missing location/factory or malformed properties.
  static Result<std::unique_ptr<PositionDeleteWriter>> Make(PositionDeleteWriterOptions options);

  // Returns InvalidArgument for an empty path or a negative position.
  Status Delete(std::string_view data_file_path, int64_t position);
  Status DeletePositions(std::string_view data_file_path, const std::vector<int64_t>& positions);

  int64_t pending() const { return pending_; }

  // Writes the file and returns its DataFile (content POSITION_DELETES). Returns InvalidArgument when
  // nothing was deleted (an empty delete file has no use), errors of the output otherwise.
  Result<DataFile> Close();

 private:
  PositionDeleteWriter() = default;

  PositionDeleteWriterOptions options_;
  std::map<std::string, std::vector<int64_t>, std::less<>> positions_;
  int64_t pending_ = 0;
  bool closed_ = false;
};

}  // namespace lakesync::iceberg
