#include "lakesync/formats/puffin/puffin_metadata.h"

#include <nlohmann/json.hpp>

#include <limits>

namespace lakesync::puffin {
namespace {

using Json = nlohmann::json;
// Insertion-ordered for writing, so the output follows the spec's (and Java's) key order.
using OrderedJson = nlohmann::ordered_json;

Status MissingKey(const std::string& where, std::string_view key) {
  return Corrupt("Puffin footer: {} is missing required key '{}'", where, key);
}

Result<int64_t> GetInt64(const Json& value, const std::string& where, std::string_view key) {
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return Corrupt("Puffin footer: {} key '{}' = {} does not fit a 64-bit signed integer", where, key,
                     value.dump());
    }
    return value.get<int64_t>();
  }
  return Corrupt("Puffin footer: {} key '{}' must be an integer, found {}", where, key, value.type_name());
}

Result<std::map<std::string, std::string>> GetProperties(const Json& value, const std::string& where) {
  if (!value.is_object()) {
    return Corrupt("Puffin footer: {} key 'properties' must be an object, found {}", where, value.type_name());
  }
  std::map<std::string, std::string> out;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (!it.value().is_string()) {
      return Corrupt("Puffin footer: {} property '{}' must be a string, found {}", where, it.key(),
                     it.value().type_name());
    }
    out.emplace(it.key(), it.value().get<std::string>());
  }
  return out;
}

Result<BlobMetadata> ParseBlob(const Json& blob, size_t index) {
  const std::string where = fmt::format("blob {}", index);
  if (!blob.is_object()) {
    return Corrupt("Puffin footer: {} must be an object, found {}", where, blob.type_name());
  }
  BlobMetadata out;
  for (const char* key : {"type", "fields", "snapshot-id", "sequence-number", "offset", "length"}) {
    if (!blob.contains(key)) return MissingKey(where, key);
  }
  const Json& type = blob.at("type");
  if (!type.is_string()) {
    return Corrupt("Puffin footer: {} key 'type' must be a string, found {}", where, type.type_name());
  }
  out.type = type.get<std::string>();
  const std::string where_typed = fmt::format("blob {} ({})", index, out.type);

  const Json& fields = blob.at("fields");
  if (!fields.is_array()) {
    return Corrupt("Puffin footer: {} key 'fields' must be a list, found {}", where_typed, fields.type_name());
  }
  for (const Json& field : fields) {
    ARROW_ASSIGN_OR_RAISE(int64_t id, GetInt64(field, where_typed, "fields"));
    if (id < std::numeric_limits<int32_t>::min() || id > std::numeric_limits<int32_t>::max()) {
      return Corrupt("Puffin footer: {} field id {} does not fit a 32-bit integer", where_typed, id);
    }
    out.fields.push_back(static_cast<int32_t>(id));
  }
  ARROW_ASSIGN_OR_RAISE(out.snapshot_id, GetInt64(blob.at("snapshot-id"), where_typed, "snapshot-id"));
  ARROW_ASSIGN_OR_RAISE(out.sequence_number, GetInt64(blob.at("sequence-number"), where_typed, "sequence-number"));
  ARROW_ASSIGN_OR_RAISE(out.offset, GetInt64(blob.at("offset"), where_typed, "offset"));
  ARROW_ASSIGN_OR_RAISE(out.length, GetInt64(blob.at("length"), where_typed, "length"));
  if (out.offset < 0) return Corrupt("Puffin footer: {} has negative offset {}", where_typed, out.offset);
  if (out.length < 0) return Corrupt("Puffin footer: {} has negative length {}", where_typed, out.length);
  if (auto it = blob.find("compression-codec"); it != blob.end() && !it->is_null()) {
    if (!it->is_string()) {
      return Corrupt("Puffin footer: {} key 'compression-codec' must be a string, found {}", where_typed,
                     it->type_name());
    }
    out.compression_codec = it->get<std::string>();
  }
  if (auto it = blob.find("properties"); it != blob.end() && !it->is_null()) {
    ARROW_ASSIGN_OR_RAISE(out.properties, GetProperties(*it, where_typed));
  }
  return out;
}

}  // namespace

std::string_view PuffinCodecName(PuffinCodec codec) {
  switch (codec) {
    case PuffinCodec::kNone: return "";
    case PuffinCodec::kLz4: return "lz4";
    case PuffinCodec::kZstd: return "zstd";
  }
  return "";
}

Result<PuffinCodec> ParsePuffinCodec(std::string_view name) {
  if (name == "lz4") return PuffinCodec::kLz4;
  if (name == "zstd") return PuffinCodec::kZstd;
  return Unsupported("Puffin compression codec '{}' is not supported (the spec allows lz4 and zstd)", name);
}

Result<std::string> SerializeFileMetadata(const FileMetadata& metadata) {
  OrderedJson root = OrderedJson::object();
  OrderedJson blobs = OrderedJson::array();
  for (const BlobMetadata& blob : metadata.blobs) {
    OrderedJson b = OrderedJson::object();
    b["type"] = blob.type;
    b["fields"] = blob.fields;
    b["snapshot-id"] = blob.snapshot_id;
    b["sequence-number"] = blob.sequence_number;
    b["offset"] = blob.offset;
    b["length"] = blob.length;
    if (blob.compression_codec.has_value()) b["compression-codec"] = *blob.compression_codec;
    if (!blob.properties.empty()) b["properties"] = blob.properties;
    blobs.push_back(std::move(b));
  }
  root["blobs"] = std::move(blobs);
  if (!metadata.properties.empty()) root["properties"] = metadata.properties;
  try {
    return root.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::strict);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument("cannot write Puffin footer: {}", e.what());
  }
}

Result<FileMetadata> ParseFileMetadata(std::string_view text) {
  Json root;
  try {
    root = Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    // Not only parse_error: a number too large for any JSON number type is out_of_range (406),
    // which escaped here and terminated the process (found by fuzz/fuzz_puffin).
    return Corrupt("Puffin footer payload is not valid JSON: {}", e.what());
  }
  try {
    if (!root.is_object()) {
      return Corrupt("Puffin footer payload must be a JSON object, found {}", root.type_name());
    }
    auto blobs = root.find("blobs");
    if (blobs == root.end()) return Corrupt("Puffin footer payload is missing required key 'blobs'");
    if (!blobs->is_array()) {
      return Corrupt("Puffin footer key 'blobs' must be a list, found {}", blobs->type_name());
    }
    FileMetadata out;
    out.blobs.reserve(blobs->size());
    for (size_t i = 0; i < blobs->size(); ++i) {
      ARROW_ASSIGN_OR_RAISE(BlobMetadata blob, ParseBlob((*blobs)[i], i));
      out.blobs.push_back(std::move(blob));
    }
    if (auto it = root.find("properties"); it != root.end() && !it->is_null()) {
      ARROW_ASSIGN_OR_RAISE(out.properties, GetProperties(*it, "file"));
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    // The checks above should make this unreachable; it keeps a library exception from escaping.
    return Corrupt("Puffin footer payload: {}", e.what());
  }
}

}  // namespace lakesync::puffin
