// Names new data and delete files the way Java's OutputFileFactory does:
//   <data location>/<partition path>/<partition id:05>-<task id>-<operation id>-<count:05>[-deletes].parquet
// The data location is table property `write.data.path`, or `<table location>/data`.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include "lakesync/common/status.h"

namespace lakesync::iceberg {

inline constexpr char kWriteDataPathProperty[] = "write.data.path";

// The directory data files go to for these table properties.
std::string DataLocation(const std::string& table_location, const std::map<std::string, std::string>& properties);

// A random (version 4) UUID in 8-4-4-4-12 form.
std::string RandomUuid();

class FileNamer {
 public:
  // An empty operation id gets a random UUID.
  FileNamer(std::string data_location, int32_t partition_id, int64_t task_id, std::string operation_id = {});

  // The next file's location under `partition_path` ("" for unpartitioned). `deletes` appends
  // "-deletes" to the name, as Java does for delete files.
  std::string NewLocation(const std::string& partition_path, bool deletes = false);

  const std::string& operation_id() const { return operation_id_; }
  const std::string& data_location() const { return data_location_; }

 private:
  std::string data_location_;
  int32_t partition_id_;
  int64_t task_id_;
  std::string operation_id_;
  std::atomic<int64_t> count_{0};
};

}  // namespace lakesync::iceberg
