#include "lakesync/formats/avro/avro_schema.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace lakesync::avro {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = 64;
constexpr int64_t kMaxFixedSize = 1 << 20;

std::optional<AvroType> PrimitiveType(std::string_view name) {
  if (name == "null") return AvroType::kNull;
  if (name == "boolean") return AvroType::kBoolean;
  if (name == "int") return AvroType::kInt;
  if (name == "long") return AvroType::kLong;
  if (name == "float") return AvroType::kFloat;
  if (name == "double") return AvroType::kDouble;
  if (name == "bytes") return AvroType::kBytes;
  if (name == "string") return AvroType::kString;
  return std::nullopt;
}

int64_t PrimitiveMinSize(AvroType type) {
  switch (type) {
    case AvroType::kNull: return 0;
    case AvroType::kFloat: return 4;
    case AvroType::kDouble: return 8;
    default: return 1;  // one byte of boolean, varint or length
  }
}

int64_t SaturatingAdd(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

std::optional<int32_t> IntAttribute(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  const int64_t v = it->get<int64_t>();
  if (v < INT32_MIN || v > INT32_MAX) return std::nullopt;
  return static_cast<int32_t>(v);
}

std::string StringAttribute(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Builds the tree from JSON, resolving named references, and emits Avro C's normalised copy.
class Parser {
 public:
  Result<AvroNodePtr> Parse(const json& j, const std::string& ns, int depth, json* out) {
    if (depth > kMaxDepth) return Unsupported("Avro schema nests deeper than {} levels", kMaxDepth);
    if (j.is_string()) return ParseName(j.get<std::string>(), ns, out);
    if (j.is_array()) return ParseUnion(j, ns, depth, out);
    if (!j.is_object()) return Corrupt("an Avro type must be a name, an object or a union array, got {}", j.dump());
    auto type_it = j.find("type");
    if (type_it == j.end()) return Corrupt("an Avro type object has no \"type\": {}", Abbreviate(j));
    if (!type_it->is_string()) return Parse(*type_it, ns, depth + 1, out);
    const std::string type = type_it->get<std::string>();
    if (auto primitive = PrimitiveType(type)) {
      auto node = std::make_shared<AvroNode>();
      node->type = *primitive;
      node->min_encoded_size = PrimitiveMinSize(*primitive);
      ReadAnnotations(j, node.get());
      *out = type;
      return AvroNodePtr(node);
    }
    if (type == "record" || type == "error") return ParseRecord(j, ns, depth, out);
    if (type == "enum") return ParseEnum(j, ns, out);
    if (type == "fixed") return ParseFixed(j, ns, out);
    if (type == "array") return ParseArray(j, ns, depth, out);
    if (type == "map") return ParseMap(j, ns, depth, out);
    return ParseName(type, ns, out);  // {"type": "decimal_9_2"} refers to a named type
  }

 private:
  static std::string Abbreviate(const json& j) {
    std::string text = j.dump();
    return text.size() > 200 ? text.substr(0, 200) + "..." : text;
  }

  static void ReadAnnotations(const json& j, AvroNode* node) {
    node->logical_type = StringAttribute(j, "logicalType");
    node->precision = IntAttribute(j, "precision").value_or(0);
    node->scale = IntAttribute(j, "scale").value_or(0);
    auto utc = j.find("adjust-to-utc");
    if (utc != j.end() && utc->is_boolean()) node->adjust_to_utc = utc->get<bool>();
  }

  Result<std::string> FullName(const json& j, const std::string& ns, std::string* inner_ns) {
    auto name_it = j.find("name");
    if (name_it == j.end() || !name_it->is_string() || name_it->get<std::string>().empty()) {
      return Corrupt("an Avro {} has no name", StringAttribute(j, "type"));
    }
    std::string name = name_it->get<std::string>();
    std::string space = j.contains("namespace") ? StringAttribute(j, "namespace") : ns;
    std::string full = name.find('.') != std::string::npos || space.empty() ? name : space + "." + name;
    const size_t dot = full.rfind('.');
    *inner_ns = dot == std::string::npos ? std::string() : full.substr(0, dot);
    if (named_.count(full)) return Corrupt("Avro type name '{}' is defined twice", full);
    return full;
  }

  // Registers a named type, emitting its definition for Avro C under a generated name.
  std::string Register(const std::string& full, const std::shared_ptr<AvroNode>& node) {
    std::string generated = "n" + std::to_string(generated_names_.size());
    named_[full] = node;
    generated_names_[full] = generated;
    return generated;
  }

  Result<AvroNodePtr> ParseName(const std::string& name, const std::string& ns, json* out) {
    if (auto primitive = PrimitiveType(name)) {
      auto node = std::make_shared<AvroNode>();
      node->type = *primitive;
      node->min_encoded_size = PrimitiveMinSize(*primitive);
      *out = name;
      return AvroNodePtr(node);
    }
    std::string full = name;
    if (name.find('.') == std::string::npos && !ns.empty() && named_.count(ns + "." + name)) full = ns + "." + name;
    auto it = named_.find(full);
    if (it == named_.end()) return Corrupt("Avro schema refers to undefined type '{}'", name);
    if (in_progress_.count(full)) return Unsupported("recursive Avro type '{}' is not supported", full);
    *out = generated_names_[full];
    return AvroNodePtr(it->second);
  }

  Result<AvroNodePtr> ParseUnion(const json& j, const std::string& ns, int depth, json* out) {
    auto node = std::make_shared<AvroNode>();
    node->type = AvroType::kUnion;
    if (j.empty()) return Corrupt("an Avro union has no branches");
    json branches = json::array();
    int64_t min_branch = INT64_MAX;
    for (const auto& b : j) {
      json emitted;
      ARROW_ASSIGN_OR_RAISE(auto branch, Parse(b, ns, depth + 1, &emitted));
      if (branch->type == AvroType::kUnion) return Corrupt("an Avro union directly contains another union");
      min_branch = std::min(min_branch, branch->min_encoded_size);
      node->branches.push_back(branch);
      branches.push_back(std::move(emitted));
    }
    node->min_encoded_size = SaturatingAdd(1, min_branch);
    *out = std::move(branches);
    return AvroNodePtr(node);
  }

  Result<AvroNodePtr> ParseRecord(const json& j, const std::string& ns, int depth, json* out) {
    std::string inner_ns;
    ARROW_ASSIGN_OR_RAISE(std::string full, FullName(j, ns, &inner_ns));
    auto node = std::make_shared<AvroNode>();
    node->type = AvroType::kRecord;
    node->name = full;
    const std::string generated = Register(full, node);
    in_progress_.insert(full);
    auto fields_it = j.find("fields");
    if (fields_it == j.end() || !fields_it->is_array()) return Corrupt("Avro record '{}' has no fields array", full);
    json fields = json::array();
    for (const auto& f : *fields_it) {
      if (!f.is_object()) return Corrupt("a field of Avro record '{}' is not an object", full);
      AvroField field;
      field.name = StringAttribute(f, "name");
      if (field.name.empty()) return Corrupt("a field of Avro record '{}' has no name", full);
      field.field_id = IntAttribute(f, "field-id");
      field.iceberg_name = StringAttribute(f, "iceberg-field-name");
      if (field.iceberg_name.empty()) field.iceberg_name = field.name;
      auto type_it = f.find("type");
      if (type_it == f.end()) return Corrupt("field '{}' of Avro record '{}' has no type", field.name, full);
      json emitted;
      auto type = Parse(*type_it, inner_ns, depth + 1, &emitted);
      if (!type.ok()) return WithContext(type.status(), fmt::format("field '{}' of record '{}'", field.name, full));
      field.type = *type;
      node->min_encoded_size = SaturatingAdd(node->min_encoded_size, field.type->min_encoded_size);
      fields.push_back(json{{"name", "f" + std::to_string(node->fields.size())}, {"type", std::move(emitted)}});
      node->fields.push_back(std::move(field));
    }
    in_progress_.erase(full);
    *out = json{{"type", "record"}, {"name", generated}, {"fields", std::move(fields)}};
    return AvroNodePtr(node);
  }

  Result<AvroNodePtr> ParseEnum(const json& j, const std::string& ns, json* out) {
    std::string inner_ns;
    ARROW_ASSIGN_OR_RAISE(std::string full, FullName(j, ns, &inner_ns));
    auto symbols_it = j.find("symbols");
    if (symbols_it == j.end() || !symbols_it->is_array() || symbols_it->empty()) {
      return Corrupt("Avro enum '{}' has no symbols", full);
    }
    auto node = std::make_shared<AvroNode>();
    node->type = AvroType::kEnum;
    node->name = full;
    node->symbol_count = symbols_it->size();
    node->min_encoded_size = 1;
    const std::string generated = Register(full, node);
    json symbols = json::array();
    for (size_t i = 0; i < node->symbol_count; ++i) symbols.push_back("s" + std::to_string(i));
    *out = json{{"type", "enum"}, {"name", generated}, {"symbols", std::move(symbols)}};
    return AvroNodePtr(node);
  }

  Result<AvroNodePtr> ParseFixed(const json& j, const std::string& ns, json* out) {
    std::string inner_ns;
    ARROW_ASSIGN_OR_RAISE(std::string full, FullName(j, ns, &inner_ns));
    auto size_it = j.find("size");
    if (size_it == j.end() || !size_it->is_number_integer() || size_it->get<int64_t>() < 0) {
      return Corrupt("Avro fixed '{}' has no valid size", full);
    }
    auto node = std::make_shared<AvroNode>();
    node->type = AvroType::kFixed;
    node->name = full;
    node->size = size_it->get<int64_t>();
    if (node->size > kMaxFixedSize) return Unsupported("Avro fixed '{}' of {} bytes is too large", full, node->size);
    node->min_encoded_size = node->size;
    ReadAnnotations(j, node.get());
    const std::string generated = Register(full, node);
    *out = json{{"type", "fixed"}, {"name", generated}, {"size", node->size}};
    return AvroNodePtr(node);
  }

  Result<AvroNodePtr> ParseArray(const json& j, const std::string& ns, int depth, json* out) {
    auto items_it = j.find("items");
    if (items_it == j.end()) return Corrupt("an Avro array has no items");
    auto node = std::make_shared<AvroNode>();
    node->type = AvroType::kArray;
    node->min_encoded_size = 1;
    node->element_id = IntAttribute(j, "element-id");
    node->logical_type = StringAttribute(j, "logicalType");
    json items;
    ARROW_ASSIGN_OR_RAISE(node->items, Parse(*items_it, ns, depth + 1, &items));
    // Avro C appends one element per count in a block header; elements that take no bytes would let
    // a corrupt count allocate without bound.
    if (node->items->min_encoded_size == 0) return Unsupported("Avro arrays whose items encode to zero bytes");
    *out = json{{"type", "array"}, {"items", std::move(items)}};
    return AvroNodePtr(node);
  }

  Result<AvroNodePtr> ParseMap(const json& j, const std::string& ns, int depth, json* out) {
    auto values_it = j.find("values");
    if (values_it == j.end()) return Corrupt("an Avro map has no values");
    auto node = std::make_shared<AvroNode>();
    node->type = AvroType::kMap;
    node->min_encoded_size = 1;
    node->key_id = IntAttribute(j, "key-id");
    node->value_id = IntAttribute(j, "value-id");
    json values;
    ARROW_ASSIGN_OR_RAISE(node->items, Parse(*values_it, ns, depth + 1, &values));
    *out = json{{"type", "map"}, {"values", std::move(values)}};
    return AvroNodePtr(node);
  }

  std::map<std::string, std::shared_ptr<AvroNode>> named_;
  std::unordered_map<std::string, std::string> generated_names_;
  std::set<std::string> in_progress_;
};

bool IsAsciiAlpha(uint32_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsAsciiDigit(uint32_t c) { return c >= '0' && c <= '9'; }

// Decodes UTF-8 leniently: a byte that does not start a valid sequence stands for itself.
std::vector<uint32_t> CodePoints(std::string_view s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    int extra = 0;
    if (b >= 0xC0 && b < 0xE0) {
      extra = 1;
    } else if (b >= 0xE0 && b < 0xF0) {
      extra = 2;
    } else if (b >= 0xF0 && b < 0xF8) {
      extra = 3;
    }
    uint32_t cp = extra == 0 ? b : (b & (0x3F >> extra));
    bool ok = i + extra < s.size();
    for (int k = 1; ok && k <= extra; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (!ok) {
      out.push_back(b);
      ++i;
    } else {
      out.push_back(cp);
      i += extra + 1;
    }
  }
  return out;
}

}  // namespace

std::string_view AvroTypeName(AvroType type) {
  switch (type) {
    case AvroType::kNull: return "null";
    case AvroType::kBoolean: return "boolean";
    case AvroType::kInt: return "int";
    case AvroType::kLong: return "long";
    case AvroType::kFloat: return "float";
    case AvroType::kDouble: return "double";
    case AvroType::kBytes: return "bytes";
    case AvroType::kString: return "string";
    case AvroType::kRecord: return "record";
    case AvroType::kEnum: return "enum";
    case AvroType::kArray: return "array";
    case AvroType::kMap: return "map";
    case AvroType::kUnion: return "union";
    case AvroType::kFixed: return "fixed";
  }
  return "unknown";
}

const AvroNode& AvroNode::NonNull() const {
  if (type != AvroType::kUnion || branches.size() != 2) return *this;
  if (branches[0]->type == AvroType::kNull && branches[1]->type != AvroType::kNull) return *branches[1];
  if (branches[1]->type == AvroType::kNull && branches[0]->type != AvroType::kNull) return *branches[0];
  return *this;
}

int AvroNode::FindField(std::optional<int32_t> field_id, std::string_view name) const {
  if (field_id) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].field_id == field_id) return static_cast<int>(i);
    }
  }
  // Writers without ids (or a different id for the same name) fall back to names; a field that has
  // an id different from the one asked for is a different field and never matches by name.
  for (size_t i = 0; i < fields.size(); ++i) {
    if (field_id && fields[i].field_id && fields[i].field_id != field_id) continue;
    if (fields[i].iceberg_name == name || fields[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

Result<AvroSchema> ParseAvroSchema(std::string_view text) {
  json parsed = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Corrupt("the Avro schema is not valid JSON");
  AvroSchema out;
  out.json = std::string(text);
  json emitted;
  Parser parser;
  try {
    ARROW_ASSIGN_OR_RAISE(out.root, parser.Parse(parsed, "", 0, &emitted));
  } catch (const json::exception& e) {
    return Corrupt("malformed Avro schema: {}", e.what());
  }
  ARROW_ASSIGN_OR_RAISE(out.avro_c, AvroSchemaHandle::FromJson(emitted.dump()));
  return out;
}

std::string MakeCompatibleAvroName(std::string_view name) {
  const std::vector<uint32_t> cps = CodePoints(name);
  bool valid = !cps.empty() && (IsAsciiAlpha(cps[0]) || cps[0] == '_');
  for (size_t i = 1; valid && i < cps.size(); ++i) {
    valid = IsAsciiAlpha(cps[i]) || IsAsciiDigit(cps[i]) || cps[i] == '_';
  }
  if (valid) return std::string(name);
  std::string out;
  for (size_t i = 0; i < cps.size(); ++i) {
    const uint32_t c = cps[i];
    const bool ok = IsAsciiAlpha(c) || c == '_' || (i > 0 && IsAsciiDigit(c));
    if (ok) {
      out.push_back(static_cast<char>(c));
    } else if (IsAsciiDigit(c)) {
      out += "_";
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("_x{:X}", c);
    }
  }
  return out;
}

}  // namespace lakesync::avro
