#include "lakesync/iceberg/write/file_namer.h"

#include <fmt/format.h>

#include <random>

namespace lakesync::iceberg {

std::string DataLocation(const std::string& table_location, const std::map<std::string, std::string>& properties) {
  std::string out;
  if (auto it = properties.find(kWriteDataPathProperty); it != properties.end() && !it->second.empty()) {
    out = it->second;
  } else {
    out = table_location;
    while (!out.empty() && out.back() == '/') out.pop_back();
    out += "/data";
  }
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string RandomUuid() {
  thread_local std::mt19937_64 rng(std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32));
  uint64_t hi = rng(), lo = rng();
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // IETF variant
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48,
                     lo & 0xffffffffffffULL);
}

FileNamer::FileNamer(std::string data_location, int32_t partition_id, int64_t task_id, std::string operation_id)
    : data_location_(std::move(data_location)),
      partition_id_(partition_id),
      task_id_(task_id),
      operation_id_(operation_id.empty() ? RandomUuid() : std::move(operation_id)) {}

std::string FileNamer::NewLocation(const std::string& partition_path, bool deletes) {
  const int64_t n = ++count_;
  std::string name = fmt::format("{:05d}-{}-{}-{:05d}{}.parquet", partition_id_, task_id_, operation_id_, n,
                                 deletes ? "-deletes" : "");
  if (partition_path.empty()) return data_location_ + "/" + name;
  return data_location_ + "/" + partition_path + "/" + name;
}

}  // namespace lakesync::iceberg
