#include "lakesync/iceberg/model/data_file.h"

#include <algorithm>
#include <cctype>

#include "lakesync/common/text.h"

namespace lakesync::iceberg {

std::string_view FileFormatName(FileFormat format) {
  switch (format) {
    case FileFormat::kParquet: return "PARQUET";
    case FileFormat::kAvro: return "AVRO";
    case FileFormat::kOrc: return "ORC";
    case FileFormat::kPuffin: return "PUFFIN";
  }
  return "PARQUET";
}

Result<FileFormat> ParseFileFormat(std::string_view name) {
  const std::string lower = AsciiLower(name);
  if (lower == "parquet") return FileFormat::kParquet;
  if (lower == "avro") return FileFormat::kAvro;
  if (lower == "orc") return FileFormat::kOrc;
  if (lower == "puffin") return FileFormat::kPuffin;
  return Corrupt("unknown file format '{}'", name);
}

std::string PartitionTupleKey(const DataFile& file) {
  std::string key = std::to_string(file.spec_id);
  for (const auto& v : file.partition) {
    key.push_back('\x1f');
    key += std::to_string(v.value().index());
    key.push_back(':');
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::monostate>) {
          } else if constexpr (std::is_same_v<T, Bytes>) {
            key += x.data;
          } else if constexpr (std::is_same_v<T, Decimal>) {
            key += Int128ToString(x.unscaled);
          } else if constexpr (std::is_same_v<T, std::string>) {
            key += x;
          } else if constexpr (std::is_same_v<T, bool>) {
            key += x ? "1" : "0";
          } else {
            key += std::to_string(x);
          }
        },
        v.value());
  }
  return key;
}

}  // namespace lakesync::iceberg
