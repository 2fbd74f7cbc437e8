#include "lakesync/iceberg/model/content_file_json.h"

#include <fmt/format.h>

#include "lakesync/iceberg/model/partition_spec.h"

namespace lakesync::iceberg {
namespace {

using Json = nlohmann::json;

std::string_view ContentName(FileContent content) {
  switch (content) {
    case FileContent::kData: return "data";
    case FileContent::kPositionDeletes: return "position-deletes";
    case FileContent::kEqualityDeletes: return "equality-deletes";
  }
  return "data";
}

Result<FileContent> ParseContent(const std::string& name) {
  if (name == "data") return FileContent::kData;
  if (name == "position-deletes") return FileContent::kPositionDeletes;
  if (name == "equality-deletes") return FileContent::kEqualityDeletes;
  return InvalidArgument("content file: unknown content '{}'", name);
}

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

Result<std::string> Unhex(std::string_view hex, std::string_view key) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() % 2) return InvalidArgument("content file: '{}' is not hex", key);
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = digit(hex[i]), lo = digit(hex[i + 1]);
    if (hi < 0 || lo < 0) return InvalidArgument("content file: '{}' is not hex", key);
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

Json CountMap(const std::map<int32_t, int64_t>& m) {
  Json keys = Json::array(), values = Json::array();
  for (const auto& [k, v] : m) {
    keys.push_back(k);
    values.push_back(v);
  }
  return {{"keys", keys}, {"values", values}};
}

Json BytesMap(const std::map<int32_t, std::string>& m) {
  Json keys = Json::array(), values = Json::array();
  for (const auto& [k, v] : m) {
    keys.push_back(k);
    values.push_back(Hex(v));
  }
  return {{"keys", keys}, {"values", values}};
}

template <typename V, typename F>
Status ReadMap(const Json& json, const char* key, std::map<int32_t, V>& out, F convert) {
  if (!json.contains(key)) return Status::OK();
  const Json& m = json.at(key);
  if (!m.is_object() || !m.contains("keys") || !m.contains("values") || !m["keys"].is_array() ||
      !m["values"].is_array() || m["keys"].size() != m["values"].size()) {
    return InvalidArgument("content file: '{}' must be {{\"keys\": [...], \"values\": [...]}} of equal length", key);
  }
  for (size_t i = 0; i < m["keys"].size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(V v, convert(m["values"][i]));
    out[m["keys"][i].get<int32_t>()] = std::move(v);
  }
  return Status::OK();
}

Result<TypePtr> PartitionTypeOf(int32_t spec_id, const TableMetadata& metadata) {
  auto spec = metadata.SpecById(spec_id);
  if (!spec) return InvalidArgument("content file: unknown partition spec id {}", spec_id);
  return spec->PartitionType(*metadata.Schema());
}

}  // namespace

Result<Json> ContentFileToJson(const DataFile& f, const TableMetadata& metadata) {
  ARROW_ASSIGN_OR_RAISE(auto partition_type, PartitionTypeOf(f.spec_id, metadata));
  if (partition_type->fields().size() != f.partition.size()) {
    return InvalidArgument("content file {}: {} partition values for a spec with {} fields", f.file_path,
                           f.partition.size(), partition_type->fields().size());
  }
  Json partition = Json::array();
  for (size_t i = 0; i < f.partition.size(); ++i) {
    if (f.partition[i].is_null()) {
      partition.push_back(nullptr);
      continue;
    }
    ARROW_ASSIGN_OR_RAISE(auto v, f.partition[i].ToJson(*partition_type->fields()[i].type));
    partition.push_back(std::move(v));
  }
  Json j = {{"content", ContentName(f.content)},
            {"file-path", f.file_path},
            {"file-format", FileFormatName(f.file_format)},
            {"spec-id", f.spec_id},
            {"partition", partition},
            {"record-count", f.record_count},
            {"file-size-in-bytes", f.file_size_in_bytes},
            {"column-sizes", CountMap(f.column_sizes)},
            {"value-counts", CountMap(f.value_counts)},
            {"null-value-counts", CountMap(f.null_value_counts)},
            {"nan-value-counts", CountMap(f.nan_value_counts)},
            {"lower-bounds", BytesMap(f.lower_bounds)},
            {"upper-bounds", BytesMap(f.upper_bounds)},
            {"split-offsets", f.split_offsets},
            {"equality-ids", f.equality_ids}};
  if (f.key_metadata) j["key-metadata"] = Hex(*f.key_metadata);
  if (f.sort_order_id) j["sort-order-id"] = *f.sort_order_id;
  if (f.first_row_id) j["first-row-id"] = *f.first_row_id;
  if (f.referenced_data_file) j["referenced-data-file"] = *f.referenced_data_file;
  if (f.content_offset) j["content-offset"] = *f.content_offset;
  if (f.content_size_in_bytes) j["content-size-in-bytes"] = *f.content_size_in_bytes;
  return j;
}

Result<DataFile> ContentFileFromJson(const Json& j, const TableMetadata& metadata) {
  if (!j.is_object()) return InvalidArgument("content file: expected a JSON object");
  for (const char* key : {"content", "file-path", "file-format", "spec-id", "partition", "record-count",
                          "file-size-in-bytes"}) {
    if (!j.contains(key)) return InvalidArgument("content file: missing '{}'", key);
  }
  try {
    DataFile f;
    ARROW_ASSIGN_OR_RAISE(f.content, ParseContent(j["content"].get<std::string>()));
    f.file_path = j["file-path"].get<std::string>();
    ARROW_ASSIGN_OR_RAISE(f.file_format, ParseFileFormat(j["file-format"].get<std::string>()));
    f.spec_id = j["spec-id"].get<int32_t>();
    f.record_count = j["record-count"].get<int64_t>();
    f.file_size_in_bytes = j["file-size-in-bytes"].get<int64_t>();
    ARROW_ASSIGN_OR_RAISE(auto partition_type, PartitionTypeOf(f.spec_id, metadata));
    const Json& partition = j["partition"];
    if (!partition.is_array() || partition.size() != partition_type->fields().size()) {
      return InvalidArgument("content file {}: 'partition' must hold {} values", f.file_path,
                             partition_type->fields().size());
    }
    for (size_t i = 0; i < partition.size(); ++i) {
      if (partition[i].is_null()) {
        f.partition.push_back(Literal::Null());
        continue;
      }
      LS_ASSIGN_OR_RAISE_CTX(auto v, Literal::FromJson(*partition_type->fields()[i].type, partition[i]),
                             "content file {}: partition value {}", f.file_path, i);
      f.partition.push_back(std::move(v));
    }
    auto count = [](const Json& v) -> Result<int64_t> { return v.get<int64_t>(); };
    auto bytes = [](const Json& v) -> Result<std::string> { return Unhex(v.get<std::string>(), "bounds"); };
    ARROW_RETURN_NOT_OK(ReadMap(j, "column-sizes", f.column_sizes, count));
    ARROW_RETURN_NOT_OK(ReadMap(j, "value-counts", f.value_counts, count));
    ARROW_RETURN_NOT_OK(ReadMap(j, "null-value-counts", f.null_value_counts, count));
    ARROW_RETURN_NOT_OK(ReadMap(j, "nan-value-counts", f.nan_value_counts, count));
    ARROW_RETURN_NOT_OK(ReadMap(j, "lower-bounds", f.lower_bounds, bytes));
    ARROW_RETURN_NOT_OK(ReadMap(j, "upper-bounds", f.upper_bounds, bytes));
    if (j.contains("split-offsets")) f.split_offsets = j["split-offsets"].get<std::vector<int64_t>>();
    if (j.contains("equality-ids")) f.equality_ids = j["equality-ids"].get<std::vector<int32_t>>();
    if (j.contains("key-metadata")) {
      ARROW_ASSIGN_OR_RAISE(f.key_metadata, Unhex(j["key-metadata"].get<std::string>(), "key-metadata"));
    }
    if (j.contains("sort-order-id")) f.sort_order_id = j["sort-order-id"].get<int32_t>();
    if (j.contains("first-row-id")) f.first_row_id = j["first-row-id"].get<int64_t>();
    if (j.contains("referenced-data-file")) f.referenced_data_file = j["referenced-data-file"].get<std::string>();
    if (j.contains("content-offset")) f.content_offset = j["content-offset"].get<int64_t>();
    if (j.contains("content-size-in-bytes")) f.content_size_in_bytes = j["content-size-in-bytes"].get<int64_t>();
    return f;
  } catch (const nlohmann::json::exception& e) {
    // Exceptions never cross a module boundary: a value of the wrong JSON type is bad input.
    return InvalidArgument("content file: {}", e.what());
  }
}

}  // namespace lakesync::iceberg
