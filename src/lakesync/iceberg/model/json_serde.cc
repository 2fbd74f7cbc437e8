#include "lakesync/iceberg/model/json_serde.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace lakesync::iceberg {
namespace {

using json = nlohmann::json;

// Typed access that names the missing or mistyped key. `what` says which object we are in.
template <typename T>
Result<T> Get(const json& j, const char* key, std::string_view what) {
  if (!j.is_object()) return Corrupt("{} is not a JSON object", what);
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Corrupt("{} is missing '{}'", what, key);
  try {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!it->is_string()) throw std::runtime_error("not a string");
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (!it->is_number_integer()) throw std::runtime_error("not an integer");
      // get<int32_t>() would silently wrap 4294967297 to 1: out-of-range ids are corrupt, not aliases.
      const bool fits = it->is_number_unsigned() ? std::in_range<T>(it->template get<uint64_t>())
                                                 : std::in_range<T>(it->template get<int64_t>());
      if (!fits) throw std::runtime_error("out of range");
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!it->is_boolean()) throw std::runtime_error("not a boolean");
    }
    return it->get<T>();
  } catch (const std::exception&) {
    return Corrupt("{} has an invalid '{}': {}", what, key, it->dump());
  }
}

template <typename T>
Result<std::optional<T>> GetOpt(const json& j, const char* key, std::string_view what) {
  if (!j.is_object()) return Corrupt("{} is not a JSON object", what);
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<T>();
  ARROW_ASSIGN_OR_RAISE(T v, Get<T>(j, key, what));
  return std::optional<T>(std::move(v));
}

// For keys that may be absent but, when present, must hold a value: an explicit null is a damaged
// document (Java's parsers refuse it too), never a reason to fall back to a default. Reading
// `"sequence-number": null` as 0 would renumber a snapshot and change which deletes apply.
template <typename T>
Result<std::optional<T>> GetOptNotNull(const json& j, const char* key, std::string_view what) {
  if (j.is_object()) {
    if (auto it = j.find(key); it != j.end() && it->is_null()) return Corrupt("{} has a null '{}'", what, key);
  }
  return GetOpt<T>(j, key, what);
}

Result<NestedField> FieldFromJson(const json& j) {
  NestedField f;
  ARROW_ASSIGN_OR_RAISE(f.id, Get<int32_t>(j, "id", "schema field"));
  const std::string what = fmt::format("schema field {}", f.id);
  ARROW_ASSIGN_OR_RAISE(f.name, Get<std::string>(j, "name", what));
  ARROW_ASSIGN_OR_RAISE(f.required, Get<bool>(j, "required", what));
  if (!j.contains("type")) return Corrupt("{} ('{}') is missing 'type'", what, f.name);
  LS_ASSIGN_OR_RAISE_CTX(f.type, TypeFromJson(j["type"]), "field '{}'", f.name);
  if (auto it = j.find("doc"); it != j.end() && it->is_string()) f.doc = it->get<std::string>();
  if (auto it = j.find("initial-default"); it != j.end()) f.initial_default = *it;
  if (auto it = j.find("write-default"); it != j.end()) f.write_default = *it;
  return f;
}

json FieldToJson(const NestedField& f) {
  json j = {{"id", f.id}, {"name", f.name}, {"required", f.required}, {"type", TypeToJson(*f.type)}};
  if (!f.doc.empty()) j["doc"] = f.doc;
  if (f.initial_default) j["initial-default"] = *f.initial_default;
  if (f.write_default) j["write-default"] = *f.write_default;
  return j;
}

}  // namespace

json TypeToJson(const Type& type) {
  switch (type.id()) {
    case TypeId::kStruct: {
      json fields = json::array();
      for (const auto& f : type.fields()) fields.push_back(FieldToJson(f));
      return {{"type", "struct"}, {"fields", fields}};
    }
    case TypeId::kList:
      return {{"type", "list"},
              {"element-id", type.element().id},
              {"element", TypeToJson(*type.element().type)},
              {"element-required", type.element().required}};
    case TypeId::kMap:
      return {{"type", "map"},
              {"key-id", type.key().id},
              {"key", TypeToJson(*type.key().type)},
              {"value-id", type.value().id},
              {"value", TypeToJson(*type.value().type)},
              {"value-required", type.value().required}};
    default:
      return type.ToString();
  }
}

Result<TypePtr> TypeFromJson(const json& j) {
  if (j.is_string()) return Type::ParsePrimitive(j.get<std::string>());
  ARROW_ASSIGN_OR_RAISE(auto kind, Get<std::string>(j, "type", "nested type"));
  if (kind == "struct") {
    auto it = j.find("fields");
    if (it == j.end() || !it->is_array()) return Corrupt("struct type is missing 'fields'");
    std::vector<NestedField> fields;
    for (const auto& fj : *it) {
      ARROW_ASSIGN_OR_RAISE(auto f, FieldFromJson(fj));
      fields.push_back(std::move(f));
    }
    return Type::Struct(std::move(fields));
  }
  if (kind == "list") {
    NestedField e;
    ARROW_ASSIGN_OR_RAISE(e.id, Get<int32_t>(j, "element-id", "list type"));
    ARROW_ASSIGN_OR_RAISE(e.required, Get<bool>(j, "element-required", "list type"));
    if (!j.contains("element")) return Corrupt("list type is missing 'element'");
    ARROW_ASSIGN_OR_RAISE(e.type, TypeFromJson(j["element"]));
    return Type::List(std::move(e));
  }
  if (kind == "map") {
    NestedField k, v;
    ARROW_ASSIGN_OR_RAISE(k.id, Get<int32_t>(j, "key-id", "map type"));
    ARROW_ASSIGN_OR_RAISE(v.id, Get<int32_t>(j, "value-id", "map type"));
    ARROW_ASSIGN_OR_RAISE(v.required, Get<bool>(j, "value-required", "map type"));
    if (!j.contains("key") || !j.contains("value")) return Corrupt("map type is missing 'key' or 'value'");
    ARROW_ASSIGN_OR_RAISE(k.type, TypeFromJson(j["key"]));
    ARROW_ASSIGN_OR_RAISE(v.type, TypeFromJson(j["value"]));
    return Type::Map(std::move(k), std::move(v));
  }
  return Unsupported("unknown nested type '{}'", kind);
}

json SchemaToJson(const Schema& schema) {
  json j = TypeToJson(*schema.as_struct());
  j["schema-id"] = schema.schema_id();
  if (!schema.identifier_field_ids().empty()) j["identifier-field-ids"] = schema.identifier_field_ids();
  return j;
}

Result<SchemaPtr> SchemaFromJson(const json& j) {
  ARROW_ASSIGN_OR_RAISE(auto type, TypeFromJson(j));
  if (type->id() != TypeId::kStruct) return Corrupt("a schema must be a struct");
  ARROW_ASSIGN_OR_RAISE(auto schema_id, GetOptNotNull<int32_t>(j, "schema-id", "schema"));
  std::vector<int32_t> ids;
  if (auto it = j.find("identifier-field-ids"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return Corrupt("schema has an invalid 'identifier-field-ids'");
    for (const auto& v : *it) {
      if (!v.is_number_integer()) return Corrupt("schema has an invalid 'identifier-field-ids'");
      ids.push_back(v.get<int32_t>());
    }
  }
  return std::make_shared<const Schema>(schema_id.value_or(0), type->fields(), std::move(ids));
}

json PartitionFieldsToJson(const PartitionSpec& spec) {
  json fields = json::array();
  for (const auto& f : spec.fields()) {
    fields.push_back({{"name", f.name},
                      {"transform", f.transform.ToString()},
                      {"source-id", f.source_id},
                      {"field-id", f.field_id}});
  }
  return fields;
}

json PartitionSpecToJson(const PartitionSpec& spec) {
  return {{"spec-id", spec.spec_id()}, {"fields", PartitionFieldsToJson(spec)}};
}

Result<PartitionSpecPtr> PartitionSpecFromFieldsJson(int32_t spec_id, const json& fields) {
  if (!fields.is_array()) return Corrupt("partition spec fields must be an array");
  std::vector<PartitionField> out;
  int32_t next_v1_id = kPartitionDataIdStart;  // v1 specs may omit field-id: ids are assigned in order
  for (const auto& fj : fields) {
    PartitionField f;
    ARROW_ASSIGN_OR_RAISE(f.name, Get<std::string>(fj, "name", "partition field"));
    const std::string what = fmt::format("partition field '{}'", f.name);
    if (fj.contains("source-id")) {
      ARROW_ASSIGN_OR_RAISE(f.source_id, Get<int32_t>(fj, "source-id", what));
    } else if (fj.contains("source-ids") && fj["source-ids"].is_array() && fj["source-ids"].size() == 1 &&
               fj["source-ids"][0].is_number_integer()) {
      f.source_id = fj["source-ids"][0].get<int32_t>();
    } else {
      return Corrupt("{} is missing 'source-id'", what);
    }
    ARROW_ASSIGN_OR_RAISE(auto field_id, GetOptNotNull<int32_t>(fj, "field-id", what));
    f.field_id = field_id.value_or(next_v1_id);
    next_v1_id = f.field_id + 1;
    ARROW_ASSIGN_OR_RAISE(auto transform, Get<std::string>(fj, "transform", what));
    ARROW_ASSIGN_OR_RAISE(f.transform, Transform::Parse(transform));
    out.push_back(std::move(f));
  }
  return std::make_shared<const PartitionSpec>(spec_id, std::move(out));
}

Result<PartitionSpecPtr> PartitionSpecFromJson(const json& j) {
  ARROW_ASSIGN_OR_RAISE(auto spec_id, Get<int32_t>(j, "spec-id", "partition spec"));
  if (!j.contains("fields")) return Corrupt("partition spec {} is missing 'fields'", spec_id);
  return PartitionSpecFromFieldsJson(spec_id, j["fields"]);
}

json SortOrderToJson(const SortOrder& order) {
  json fields = json::array();
  for (const auto& f : order.fields) {
    fields.push_back({{"transform", f.transform.ToString()},
                      {"source-id", f.source_id},
                      {"direction", f.direction == SortDirection::kAsc ? "asc" : "desc"},
                      {"null-order", f.null_order == NullOrder::kNullsFirst ? "nulls-first" : "nulls-last"}});
  }
  return {{"order-id", order.order_id}, {"fields", fields}};
}

Result<SortOrderPtr> SortOrderFromJson(const json& j) {
  auto order = std::make_shared<SortOrder>();
  ARROW_ASSIGN_OR_RAISE(order->order_id, Get<int32_t>(j, "order-id", "sort order"));
  const std::string what = fmt::format("sort order {}", order->order_id);
  if (!j.contains("fields") || !j["fields"].is_array()) return Corrupt("{} is missing 'fields'", what);
  for (const auto& fj : j["fields"]) {
    SortField f;
    ARROW_ASSIGN_OR_RAISE(auto transform, Get<std::string>(fj, "transform", what));
    ARROW_ASSIGN_OR_RAISE(f.transform, Transform::Parse(transform));
    if (fj.contains("source-id")) {
      ARROW_ASSIGN_OR_RAISE(f.source_id, Get<int32_t>(fj, "source-id", what));
    } else if (fj.contains("source-ids") && fj["source-ids"].is_array() && fj["source-ids"].size() == 1 &&
               fj["source-ids"][0].is_number_integer()) {
      f.source_id = fj["source-ids"][0].get<int32_t>();
    } else {
      return Corrupt("{} has a field without 'source-id'", what);
    }
    ARROW_ASSIGN_OR_RAISE(auto dir, Get<std::string>(fj, "direction", what));
    ARROW_ASSIGN_OR_RAISE(auto nulls, Get<std::string>(fj, "null-order", what));
    if (dir != "asc" && dir != "desc") return Corrupt("{} has an invalid direction '{}'", what, dir);
    if (nulls != "nulls-first" && nulls != "nulls-last") {
      return Corrupt("{} has an invalid null-order '{}'", what, nulls);
    }
    f.direction = dir == "asc" ? SortDirection::kAsc : SortDirection::kDesc;
    f.null_order = nulls == "nulls-first" ? NullOrder::kNullsFirst : NullOrder::kNullsLast;
    order->fields.push_back(std::move(f));
  }
  return SortOrderPtr(order);
}

json SnapshotToJson(const Snapshot& s) {
  json j = {{"snapshot-id", s.snapshot_id},
            {"sequence-number", s.sequence_number},
            {"timestamp-ms", s.timestamp_ms},
            {"summary", s.summary}};
  if (s.manifest_list.empty() && !s.manifests.empty()) {
    j["manifests"] = s.manifests;  // a v1 snapshot without a manifest list keeps its inline form
  } else {
    j["manifest-list"] = s.manifest_list;
  }
  if (s.parent_snapshot_id) j["parent-snapshot-id"] = *s.parent_snapshot_id;
  if (s.schema_id) j["schema-id"] = *s.schema_id;
  if (s.first_row_id) j["first-row-id"] = *s.first_row_id;
  if (s.added_rows) j["added-rows"] = *s.added_rows;
  if (s.key_id) j["key-id"] = *s.key_id;
  return j;
}

Result<SnapshotPtr> SnapshotFromJson(const json& j) {
  auto s = std::make_shared<Snapshot>();
  ARROW_ASSIGN_OR_RAISE(s->snapshot_id, Get<int64_t>(j, "snapshot-id", "snapshot"));
  const std::string what = fmt::format("snapshot {}", s->snapshot_id);
  ARROW_ASSIGN_OR_RAISE(s->parent_snapshot_id, GetOpt<int64_t>(j, "parent-snapshot-id", what));
  ARROW_ASSIGN_OR_RAISE(auto seq, GetOptNotNull<int64_t>(j, "sequence-number", what));
  s->sequence_number = seq.value_or(0);  // v1 snapshots have none: they read as 0 (v2+: checked by the table)
  ARROW_ASSIGN_OR_RAISE(s->timestamp_ms, Get<int64_t>(j, "timestamp-ms", what));
  if (j.contains("manifest-list")) {
    ARROW_ASSIGN_OR_RAISE(s->manifest_list, Get<std::string>(j, "manifest-list", what));
  } else if (auto it = j.find("manifests"); it != j.end()) {
    // v1: the manifests listed inline, without a manifest list.
    if (!it->is_array()) return Corrupt("{}: 'manifests' must be an array of manifest paths", what);
    for (const auto& path : *it) {
      if (!path.is_string()) return Corrupt("{}: 'manifests' must be an array of manifest paths", what);
      s->manifests.push_back(path.get<std::string>());
    }
  } else {
    return Corrupt("{} is missing 'manifest-list'", what);
  }
  if (auto it = j.find("summary"); it != j.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) s->summary[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  if (!s->summary.count("operation")) s->summary["operation"] = kOperationOverwrite;  // v1 may omit it
  ARROW_ASSIGN_OR_RAISE(s->schema_id, GetOptNotNull<int32_t>(j, "schema-id", what));
  ARROW_ASSIGN_OR_RAISE(s->first_row_id, GetOptNotNull<int64_t>(j, "first-row-id", what));
  ARROW_ASSIGN_OR_RAISE(s->added_rows, GetOptNotNull<int64_t>(j, "added-rows", what));
  ARROW_ASSIGN_OR_RAISE(s->key_id, GetOpt<int64_t>(j, "key-id", what));
  return SnapshotPtr(s);
}

json SnapshotRefToJson(const SnapshotRef& r) {
  json j = {{"snapshot-id", r.snapshot_id}, {"type", r.type == SnapshotRef::Type::kBranch ? "branch" : "tag"}};
  if (r.min_snapshots_to_keep) j["min-snapshots-to-keep"] = *r.min_snapshots_to_keep;
  if (r.max_snapshot_age_ms) j["max-snapshot-age-ms"] = *r.max_snapshot_age_ms;
  if (r.max_ref_age_ms) j["max-ref-age-ms"] = *r.max_ref_age_ms;
  return j;
}

Result<SnapshotRef> SnapshotRefFromJson(const json& j) {
  SnapshotRef r;
  ARROW_ASSIGN_OR_RAISE(r.snapshot_id, Get<int64_t>(j, "snapshot-id", "snapshot ref"));
  ARROW_ASSIGN_OR_RAISE(auto type, Get<std::string>(j, "type", "snapshot ref"));
  if (type != "branch" && type != "tag") return Corrupt("snapshot ref has an invalid type '{}'", type);
  r.type = type == "branch" ? SnapshotRef::Type::kBranch : SnapshotRef::Type::kTag;
  ARROW_ASSIGN_OR_RAISE(r.min_snapshots_to_keep, GetOpt<int32_t>(j, "min-snapshots-to-keep", "snapshot ref"));
  ARROW_ASSIGN_OR_RAISE(r.max_snapshot_age_ms, GetOpt<int64_t>(j, "max-snapshot-age-ms", "snapshot ref"));
  ARROW_ASSIGN_OR_RAISE(r.max_ref_age_ms, GetOpt<int64_t>(j, "max-ref-age-ms", "snapshot ref"));
  return r;
}

json TableMetadataToJson(const TableMetadata& m) {
  json j;
  j["format-version"] = m.format_version;
  j["table-uuid"] = m.table_uuid;
  j["location"] = m.location;
  j["last-sequence-number"] = m.last_sequence_number;
  j["last-updated-ms"] = m.last_updated_ms;
  j["last-column-id"] = m.last_column_id;
  j["current-schema-id"] = m.current_schema_id;
  j["schemas"] = json::array();
  for (const auto& s : m.schemas) j["schemas"].push_back(SchemaToJson(*s));
  j["default-spec-id"] = m.default_spec_id;
  j["partition-specs"] = json::array();
  for (const auto& s : m.partition_specs) j["partition-specs"].push_back(PartitionSpecToJson(*s));
  j["last-partition-id"] = m.last_partition_id;
  j["default-sort-order-id"] = m.default_sort_order_id;
  j["sort-orders"] = json::array();
  for (const auto& o : m.sort_orders) j["sort-orders"].push_back(SortOrderToJson(*o));
  j["properties"] = m.properties;
  // v1/v2 readers (Java) expect -1 for "no snapshot"; v3 writes null (spec Appendix F).
  if (m.current_snapshot_id) {
    j["current-snapshot-id"] = *m.current_snapshot_id;
  } else if (m.format_version < 3) {
    j["current-snapshot-id"] = -1;
  } else {
    j["current-snapshot-id"] = nullptr;
  }
  j["refs"] = json::object();
  for (const auto& [name, ref] : m.refs) j["refs"][name] = SnapshotRefToJson(ref);
  j["snapshots"] = json::array();
  for (const auto& s : m.snapshots) j["snapshots"].push_back(SnapshotToJson(*s));
  j["snapshot-log"] = json::array();
  for (const auto& e : m.snapshot_log) {
    j["snapshot-log"].push_back({{"snapshot-id", e.snapshot_id}, {"timestamp-ms", e.timestamp_ms}});
  }
  j["metadata-log"] = json::array();
  for (const auto& e : m.metadata_log) {
    j["metadata-log"].push_back({{"metadata-file", e.metadata_file}, {"timestamp-ms", e.timestamp_ms}});
  }
  j["statistics"] = m.statistics.is_null() ? json::array() : m.statistics;
  j["partition-statistics"] = m.partition_statistics.is_null() ? json::array() : m.partition_statistics;
  if (m.format_version >= 3) j["next-row-id"] = m.next_row_id;
  if (!m.encryption_keys.is_null()) j["encryption-keys"] = m.encryption_keys;
  return j;
}

Result<std::shared_ptr<TableMetadata>> TableMetadataFromJson(const json& j) {
  constexpr std::string_view kWhat = "table metadata";
  auto m = std::make_shared<TableMetadata>();
  ARROW_ASSIGN_OR_RAISE(m->format_version, Get<int>(j, "format-version", kWhat));
  if (m->format_version < kMinFormatVersion || m->format_version > kMaxFormatVersion) {
    return Unsupported("format-version {} is not supported (lakesync reads versions {} to {})", m->format_version,
                       kMinFormatVersion, kMaxFormatVersion);
  }
  const bool v1 = m->format_version == 1;
  ARROW_ASSIGN_OR_RAISE(auto uuid, GetOptNotNull<std::string>(j, "table-uuid", kWhat));
  if (!uuid && !v1) return Corrupt("table metadata is missing 'table-uuid'");
  m->table_uuid = uuid.value_or("");
  ARROW_ASSIGN_OR_RAISE(m->location, Get<std::string>(j, "location", kWhat));
  if (v1) {
    ARROW_ASSIGN_OR_RAISE(auto seq, GetOptNotNull<int64_t>(j, "last-sequence-number", kWhat));
    m->last_sequence_number = seq.value_or(0);
  } else {
    ARROW_ASSIGN_OR_RAISE(m->last_sequence_number, Get<int64_t>(j, "last-sequence-number", kWhat));
  }
  ARROW_ASSIGN_OR_RAISE(m->last_updated_ms, Get<int64_t>(j, "last-updated-ms", kWhat));
  ARROW_ASSIGN_OR_RAISE(m->last_column_id, Get<int32_t>(j, "last-column-id", kWhat));

  // Schemas: v2+ lists them; v1 may only have the single "schema".
  if (auto it = j.find("schemas"); it != j.end() && it->is_array()) {
    for (const auto& sj : *it) {
      LS_ASSIGN_OR_RAISE_CTX(auto s, SchemaFromJson(sj), "table metadata 'schemas'");
      m->schemas.push_back(s);
    }
    ARROW_ASSIGN_OR_RAISE(m->current_schema_id, Get<int32_t>(j, "current-schema-id", kWhat));
  } else if (v1 && j.contains("schema")) {
    LS_ASSIGN_OR_RAISE_CTX(auto s, SchemaFromJson(j["schema"]), "table metadata 'schema'");
    m->schemas.push_back(s);
    m->current_schema_id = s->schema_id();
  } else {
    return Corrupt("table metadata is missing 'schemas'");
  }

  if (auto it = j.find("partition-specs"); it != j.end() && it->is_array()) {
    for (const auto& sj : *it) {
      LS_ASSIGN_OR_RAISE_CTX(auto s, PartitionSpecFromJson(sj), "table metadata 'partition-specs'");
      m->partition_specs.push_back(s);
    }
    ARROW_ASSIGN_OR_RAISE(m->default_spec_id, Get<int32_t>(j, "default-spec-id", kWhat));
  } else if (v1 && j.contains("partition-spec")) {
    LS_ASSIGN_OR_RAISE_CTX(auto s, PartitionSpecFromFieldsJson(0, j["partition-spec"]),
                           "table metadata 'partition-spec'");
    m->partition_specs.push_back(s);
    m->default_spec_id = 0;
  } else {
    return Corrupt("table metadata is missing 'partition-specs'");
  }
  ARROW_ASSIGN_OR_RAISE(auto last_pid, GetOptNotNull<int32_t>(j, "last-partition-id", kWhat));
  if (!last_pid && !v1) return Corrupt("table metadata is missing 'last-partition-id'");
  int32_t max_pid = kUnpartitionedLastAssignedId;
  for (const auto& s : m->partition_specs) max_pid = std::max(max_pid, s->LastAssignedFieldId());
  m->last_partition_id = last_pid.value_or(max_pid);

  if (auto it = j.find("sort-orders"); it != j.end() && it->is_array()) {
    for (const auto& oj : *it) {
      LS_ASSIGN_OR_RAISE_CTX(auto o, SortOrderFromJson(oj), "table metadata 'sort-orders'");
      m->sort_orders.push_back(o);
    }
    ARROW_ASSIGN_OR_RAISE(m->default_sort_order_id, Get<int32_t>(j, "default-sort-order-id", kWhat));
  } else if (!v1) {
    return Corrupt("table metadata is missing 'sort-orders'");
  }
  if (m->sort_orders.empty()) m->sort_orders.push_back(std::make_shared<SortOrder>());

  if (auto it = j.find("properties"); it != j.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) m->properties[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  ARROW_ASSIGN_OR_RAISE(auto current, GetOpt<int64_t>(j, "current-snapshot-id", kWhat));
  if (current && *current != -1) m->current_snapshot_id = current;

  if (auto it = j.find("snapshots"); it != j.end() && it->is_array()) {
    for (const auto& sj : *it) {
      LS_ASSIGN_OR_RAISE_CTX(auto s, SnapshotFromJson(sj), "table metadata 'snapshots'");
      // Required from v2 on (spec "Snapshots"): without it the snapshot's data and deletes would
      // read with sequence number 0 and deletes would apply to the wrong files.
      if (!v1 && !sj.contains("sequence-number")) {
        return Corrupt("table metadata 'snapshots': snapshot {} is missing 'sequence-number' (required in "
                       "format version {})",
                       s->snapshot_id, m->format_version);
      }
      m->snapshots.push_back(s);
    }
  }
  if (auto it = j.find("snapshot-log"); it != j.end() && it->is_array()) {
    for (const auto& e : *it) {
      SnapshotLogEntry entry;
      ARROW_ASSIGN_OR_RAISE(entry.snapshot_id, Get<int64_t>(e, "snapshot-id", "snapshot-log entry"));
      ARROW_ASSIGN_OR_RAISE(entry.timestamp_ms, Get<int64_t>(e, "timestamp-ms", "snapshot-log entry"));
      m->snapshot_log.push_back(entry);
    }
  }
  if (auto it = j.find("metadata-log"); it != j.end() && it->is_array()) {
    for (const auto& e : *it) {
      MetadataLogEntry entry;
      ARROW_ASSIGN_OR_RAISE(entry.metadata_file, Get<std::string>(e, "metadata-file", "metadata-log entry"));
      ARROW_ASSIGN_OR_RAISE(entry.timestamp_ms, Get<int64_t>(e, "timestamp-ms", "metadata-log entry"));
      m->metadata_log.push_back(entry);
    }
  }
  if (auto it = j.find("refs"); it != j.end() && it->is_object()) {
    for (const auto& [name, rj] : it->items()) {
      LS_ASSIGN_OR_RAISE_CTX(auto ref, SnapshotRefFromJson(rj), "table metadata ref '{}'", name);
      m->refs[name] = ref;
    }
  } else if (m->current_snapshot_id) {
    // Tables written before refs existed: main is the current snapshot.
    m->refs[kMainBranch] = SnapshotRef{*m->current_snapshot_id, SnapshotRef::Type::kBranch, {}, {}, {}};
  }
  if (auto it = j.find("statistics"); it != j.end() && it->is_array()) m->statistics = *it;
  if (auto it = j.find("partition-statistics"); it != j.end() && it->is_array()) m->partition_statistics = *it;
  if (auto it = j.find("encryption-keys"); it != j.end()) m->encryption_keys = *it;
  if (m->format_version >= 3) {
    ARROW_ASSIGN_OR_RAISE(m->next_row_id, Get<int64_t>(j, "next-row-id", kWhat));
  }
  ARROW_RETURN_NOT_OK(ValidateTableMetadata(*m));
  return m;
}

Result<std::shared_ptr<TableMetadata>> ParseTableMetadata(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Corrupt("not valid JSON");
  return TableMetadataFromJson(j);
}

std::string SerializeTableMetadata(const TableMetadata& metadata) { return TableMetadataToJson(metadata).dump(); }

}  // namespace lakesync::iceberg
