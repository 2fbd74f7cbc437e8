#include "lakesync/delta/schema.h"

#include <arrow/type.h>

#include <nlohmann/json.hpp>

#include <regex>

namespace lakesync::delta {
namespace {

using nlohmann::json;

iceberg::NestedField Optional(int32_t id, std::string name, iceberg::TypePtr type, bool required = false) {
  iceberg::NestedField f;
  f.id = id;
  f.name = std::move(name);
  f.required = required;
  f.type = std::move(type);
  return f;
}

struct Converted {
  std::shared_ptr<arrow::DataType> arrow;  // output (logical) type
  iceberg::TypePtr read;                   // read type (physical names)
  std::string fingerprint;
};

class Converter {
 public:
  explicit Converter(ColumnMappingMode mode) : mode_(mode) {}

  // Ids are assigned after the highest column-mapping id so fresh ones never collide.
  void SetFirstFreeId(int32_t id) { next_id_ = id; }

  Result<Converted> Type(const json& t, const std::string& path) {
    if (t.is_string()) return Primitive(t.get<std::string>(), path);
    if (!t.is_object()) return Corrupt("schema: type of '{}' is neither a name nor an object", path);
    const std::string kind = t.value("type", "");
    if (kind == "struct") return Struct(t, path);
    if (kind == "array") {
      if (!t.contains("elementType")) return Corrupt("schema: array '{}' has no elementType", path);
      ARROW_ASSIGN_OR_RAISE(auto e, Type(t["elementType"], path + ".element"));
      const bool contains_null = t.value("containsNull", true);
      iceberg::NestedField elem = Optional(NextId(), "element", e.read);
      return Converted{arrow::list(arrow::field("element", e.arrow, contains_null)), iceberg::Type::List(elem),
                       "array<" + e.fingerprint + (contains_null ? "?" : "!") + ">"};
    }
    if (kind == "map") {
      if (!t.contains("keyType") || !t.contains("valueType")) return Corrupt("schema: map '{}' lacks key or value", path);
      ARROW_ASSIGN_OR_RAISE(auto k, Type(t["keyType"], path + ".key"));
      ARROW_ASSIGN_OR_RAISE(auto v, Type(t["valueType"], path + ".value"));
      const bool value_null = t.value("valueContainsNull", true);
      iceberg::NestedField key = Optional(NextId(), "key", k.read, true);
      iceberg::NestedField value = Optional(NextId(), "value", v.read);
      return Converted{std::make_shared<arrow::MapType>(arrow::field("key", k.arrow, false),
                                                        arrow::field("value", v.arrow, value_null)),
                       iceberg::Type::Map(key, value),
                       "map<" + k.fingerprint + "," + v.fingerprint + (value_null ? "?" : "!") + ">"};
    }
    return Unsupported("schema: column '{}' has type '{}', which lakesync cannot read", path, t.dump());
  }

  // One struct field: returns the output field, the read field and the fingerprint.
  struct FieldOut {
    std::shared_ptr<arrow::Field> arrow;
    iceberg::NestedField read;
    std::string physical;
    std::string fingerprint;
  };
  Result<FieldOut> Field(const json& f, const std::string& parent) {
    if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !f.contains("type")) {
      return Corrupt("schema: a field of '{}' has no name or type", parent.empty() ? "<table>" : parent);
    }
    FieldOut out;
    const std::string name = f["name"].get<std::string>();
    const std::string path = parent.empty() ? name : parent + "." + name;
    const bool nullable = f.value("nullable", true);
    out.physical = name;
    int32_t id = -1;
    if (mode_ != ColumnMappingMode::kNone) {
      const json meta = f.value("metadata", json::object());
      auto pn = meta.find("delta.columnMapping.physicalName");
      if (pn != meta.end() && pn->is_string()) out.physical = pn->get<std::string>();
      else if (mode_ == ColumnMappingMode::kName) {
        return Corrupt("schema: column '{}' has no delta.columnMapping.physicalName under column mapping", path);
      }
      auto cid = meta.find("delta.columnMapping.id");
      if (cid != meta.end() && cid->is_number_integer()) id = cid->get<int32_t>();
      else if (mode_ == ColumnMappingMode::kId) {
        return Corrupt("schema: column '{}' has no delta.columnMapping.id under id column mapping", path);
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto t, Type(f["type"], path));
    if (id < 0) id = NextId();
    out.arrow = arrow::field(name, t.arrow, nullable);
    // Read fields are all optional: a column missing from an old file reads as nulls, and the
    // output schema carries the table's nullability.
    out.read = Optional(id, out.physical, t.read);
    out.fingerprint = name + "/" + out.physical + ":" + t.fingerprint + (nullable ? "?" : "!");
    return out;
  }

 private:
  int32_t NextId() { return next_id_++; }

  Result<Converted> Struct(const json& t, const std::string& path) {
    if (!t.contains("fields") || !t["fields"].is_array()) return Corrupt("schema: struct '{}' has no fields", path);
    arrow::FieldVector fields;
    std::vector<iceberg::NestedField> read;
    std::string fp = "struct<";
    for (const auto& f : t["fields"]) {
      ARROW_ASSIGN_OR_RAISE(auto fo, Field(f, path));
      fields.push_back(fo.arrow);
      read.push_back(fo.read);
      fp += fo.fingerprint + ",";
    }
    return Converted{arrow::struct_(fields), iceberg::Type::Struct(read), fp + ">"};
  }

  Result<Converted> Primitive(const std::string& name, const std::string& path) {
    using iceberg::Type;
    auto make = [&](std::shared_ptr<arrow::DataType> a, iceberg::TypePtr r) {
      return Converted{std::move(a), std::move(r), name};
    };
    if (name == "string") return make(arrow::utf8(), Type::String());
    if (name == "long") return make(arrow::int64(), Type::Long());
    if (name == "integer") return make(arrow::int32(), Type::Int());
    if (name == "short") return make(arrow::int16(), Type::Int());
    if (name == "byte") return make(arrow::int8(), Type::Int());
    if (name == "float") return make(arrow::float32(), Type::Float());
    if (name == "double") return make(arrow::float64(), Type::Double());
    if (name == "boolean") return make(arrow::boolean(), Type::Boolean());
    if (name == "binary") return make(arrow::binary(), Type::Binary());
    if (name == "date") return make(arrow::date32(), Type::Date());
    if (name == "timestamp") return make(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), Type::TimestampTz());
    if (name == "timestamp_ntz") return make(arrow::timestamp(arrow::TimeUnit::MICRO), Type::Timestamp());
    static const std::regex kDecimal(R"(decimal\(\s*(\d+)\s*,\s*(\d+)\s*\))");
    std::smatch m;
    if (std::regex_match(name, m, kDecimal)) {
      const int p = std::stoi(m[1]), s = std::stoi(m[2]);
      if (p < 1 || p > 38 || s > p) return Corrupt("schema: column '{}' has invalid type {}", path, name);
      return make(arrow::decimal128(p, s), Type::Decimal(p, s));
    }
    if (name == "decimal") return make(arrow::decimal128(10, 0), Type::Decimal(10, 0));
    return Unsupported("schema: column '{}' has type '{}', which lakesync cannot read", path, name);
  }

  ColumnMappingMode mode_;
  int32_t next_id_ = 1;
};

// The highest delta.columnMapping.id anywhere in the schema JSON.
int32_t MaxColumnId(const json& j) {
  int32_t best = 0;
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "delta.columnMapping.id" && it.value().is_number_integer()) {
        best = std::max(best, it.value().get<int32_t>());
      } else {
        best = std::max(best, MaxColumnId(it.value()));
      }
    }
  } else if (j.is_array()) {
    for (const auto& e : j) best = std::max(best, MaxColumnId(e));
  }
  return best;
}

}  // namespace

Result<TableSchema> ParseTableSchema(const std::string& schema_string, const std::vector<std::string>& partition_columns,
                                     ColumnMappingMode mode) {
  json j = json::parse(schema_string, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("type", "") != "struct" || !j.contains("fields") ||
      !j["fields"].is_array()) {
    return Corrupt("metaData.schemaString is not a Spark struct schema");
  }
  Converter conv(mode);
  conv.SetFirstFreeId(MaxColumnId(j) + 1);
  TableSchema out;
  out.mode = mode;
  arrow::FieldVector fields;
  std::vector<iceberg::NestedField> read;
  for (const auto& f : j["fields"]) {
    ARROW_ASSIGN_OR_RAISE(auto fo, conv.Field(f, ""));
    const bool is_partition =
        std::find(partition_columns.begin(), partition_columns.end(), fo.arrow->name()) != partition_columns.end();
    out.read_index.push_back(is_partition ? -1 : static_cast<int>(read.size()));
    if (!is_partition) read.push_back(fo.read);
    out.physical_names.push_back(fo.physical);
    fields.push_back(fo.arrow);
    out.fingerprint += (is_partition ? "P:" : "") + fo.fingerprint + ";";
  }
  for (const auto& pc : partition_columns) {
    bool found = false;
    for (const auto& f : fields) found = found || f->name() == pc;
    if (!found) return InvalidArgument("partition column '{}' is not in the table schema", pc);
  }
  out.output = arrow::schema(fields);
  out.read_schema = std::make_shared<iceberg::Schema>(0, std::move(read));
  return out;
}

namespace {

// Every field below a column, keyed by its path of physical names (the read schema's names, which a
// rename under column mapping keeps), with its path of logical names (the output schema's, the same
// shape): struct fields by name, list elements and map keys and values as "element", "key", "value".
void LogicalPaths(const arrow::DataType& logical, const iceberg::Type& physical, const std::string& logical_path,
                  const std::string& physical_path, std::map<std::string, std::string>& out) {
  if (!physical.is_nested() || logical.num_fields() != static_cast<int>(physical.fields().size())) return;
  for (int i = 0; i < logical.num_fields(); ++i) {
    const auto& l = logical.field(i);
    const auto& p = physical.fields()[static_cast<size_t>(i)];
    const std::string lp = logical_path + "." + l->name(), pp = physical_path + "." + p.name;
    out[pp] = lp;
    LogicalPaths(*l->type(), *p.type, lp, pp, out);
  }
}

std::map<std::string, std::string> LogicalPathsByPhysical(const TableSchema& schema) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < schema.physical_names.size(); ++i) {
    const auto& field = schema.output->field(static_cast<int>(i));
    out[schema.physical_names[i]] = field->name();
    const int read = schema.read_index[i];
    if (read < 0) continue;  // a partition column: never nested
    const auto& physical = schema.read_schema->fields()[static_cast<size_t>(read)];
    LogicalPaths(*field->type(), *physical.type, field->name(), schema.physical_names[i], out);
  }
  return out;
}

std::string Leaf(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

}  // namespace

std::map<std::string, std::string> RenamedColumns(const TableSchema& before, const TableSchema& after) {
  std::map<std::string, std::string> renames;
  if (before.mode == ColumnMappingMode::kNone || after.mode == ColumnMappingMode::kNone) return renames;
  const auto old_paths = LogicalPathsByPhysical(before);
  for (const auto& [physical, path] : LogicalPathsByPhysical(after)) {
    auto it = old_paths.find(physical);
    // Only where the field's own name changed: a field inside a renamed struct keeps its name.
    if (it != old_paths.end() && Leaf(it->second) != Leaf(path)) renames[it->second] = path;
  }
  return renames;
}

}  // namespace lakesync::delta
