#include "lakesync/iceberg/model/data_file.h"

#include <algorithm>
#include <cctype>

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
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "parquet") return FileFormat::kParquet;
  if (lower == "avro") return FileFormat::kAvro;
  if (lower == "orc") return FileFormat::kOrc;
  if (lower == "puffin") return FileFormat::kPuffin;
  return Corrupt("unknown file format '{}'", name);
}

}  // namespace lakesync::iceberg
