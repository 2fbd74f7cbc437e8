#include "lakesync/iceberg/commit/table_update.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "lakesync/iceberg/model/json_serde.h"

namespace lakesync::iceberg {
namespace {

using json = nlohmann::json;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng(std::random_device{}() ^
                                   static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  return rng;
}

std::string OptToString(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "none"; }

// Applies updates to a working copy, tracking what this commit added (for the -1 "last added" ids
// and for snapshot-log bookkeeping).
class MetadataBuilder {
 public:
  MetadataBuilder(const TableMetadata* base, const ApplyOptions& options)
      : base_(base), options_(options), m_(base ? std::make_shared<TableMetadata>(*base)
                                                : std::make_shared<TableMetadata>()) {
    if (!base) {
      m_->format_version = kDefaultFormatVersion;
      m_->last_partition_id = kUnpartitionedLastAssignedId;
      m_->schemas.clear();
      m_->partition_specs.clear();
      m_->sort_orders.clear();
    }
  }

  Status Apply(const TableUpdate& update) {
    return std::visit(
        Overloaded{
            [&](const AssignUuid& u) -> Status {
              if (base_ && !base_->table_uuid.empty() && base_->table_uuid != u.uuid) {
                return InvalidArgument("assign-uuid: cannot change the table UUID from {} to {}", base_->table_uuid,
                                       u.uuid);
              }
              m_->table_uuid = u.uuid;
              return Status::OK();
            },
            [&](const UpgradeFormatVersion& u) -> Status {
              if (u.format_version > kMaxFormatVersion) {
                return Unsupported("upgrade-format-version: version {} is not supported (max {})", u.format_version,
                                   kMaxFormatVersion);
              }
              if (u.format_version < m_->format_version) {
                return InvalidArgument("upgrade-format-version: cannot downgrade from v{} to v{}", m_->format_version,
                                       u.format_version);
              }
              if (u.format_version >= 3 && m_->format_version < 3) m_->next_row_id = 0;
              m_->format_version = u.format_version;
              return Status::OK();
            },
            [&](const AddSchema& u) -> Status { return AddSchemaImpl(u); },
            [&](const SetCurrentSchema& u) -> Status {
              const int32_t id = u.schema_id == -1 ? last_added_schema_id_.value_or(-1) : u.schema_id;
              if (!m_->SchemaById(id)) return InvalidArgument("set-current-schema: unknown schema id {}", u.schema_id);
              m_->current_schema_id = id;
              return Status::OK();
            },
            [&](const AddPartitionSpec& u) -> Status { return AddSpecImpl(u); },
            [&](const SetDefaultSpec& u) -> Status {
              const int32_t id = u.spec_id == -1 ? last_added_spec_id_.value_or(-1) : u.spec_id;
              if (!m_->SpecById(id)) return InvalidArgument("set-default-spec: unknown spec id {}", u.spec_id);
              m_->default_spec_id = id;
              return Status::OK();
            },
            [&](const AddSortOrder& u) -> Status { return AddSortOrderImpl(u); },
            [&](const SetDefaultSortOrder& u) -> Status {
              const int32_t id = u.sort_order_id == -1 ? last_added_order_id_.value_or(-1) : u.sort_order_id;
              bool found = false;
              for (const auto& o : m_->sort_orders) found |= o->order_id == id;
              if (!found) return InvalidArgument("set-default-sort-order: unknown sort order id {}", u.sort_order_id);
              m_->default_sort_order_id = id;
              return Status::OK();
            },
            [&](const AddSnapshot& u) -> Status { return AddSnapshotImpl(*u.snapshot); },
            [&](const SetSnapshotRef& u) -> Status { return SetRefImpl(u); },
            [&](const RemoveSnapshots& u) -> Status {
              for (int64_t id : u.snapshot_ids) {
                std::erase_if(m_->snapshots, [&](const SnapshotPtr& s) { return s->snapshot_id == id; });
                std::erase_if(m_->snapshot_log, [&](const SnapshotLogEntry& e) { return e.snapshot_id == id; });
                for (auto it = m_->refs.begin(); it != m_->refs.end();) {
                  it = it->second.snapshot_id == id ? m_->refs.erase(it) : std::next(it);
                }
                if (m_->current_snapshot_id == id) m_->current_snapshot_id.reset();
              }
              return Status::OK();
            },
            [&](const RemoveSnapshotRef& u) -> Status {
              m_->refs.erase(u.ref_name);
              if (u.ref_name == kMainBranch) m_->current_snapshot_id.reset();
              return Status::OK();
            },
            [&](const SetLocation& u) -> Status {
              if (u.location.empty()) return InvalidArgument("set-location: location must not be empty");
              m_->location = u.location;
              return Status::OK();
            },
            [&](const SetProperties& u) -> Status {
              for (const auto& [k, v] : u.updates) {
                if (k == kPropFormatVersion) {
                  return InvalidArgument("set-properties: '{}' is reserved; upgrade the table with "
                                         "upgrade-format-version instead", k);
                }
                m_->properties[k] = v;
              }
              return Status::OK();
            },
            [&](const RemoveProperties& u) -> Status {
              for (const auto& k : u.removals) m_->properties.erase(k);
              return Status::OK();
            },
            [&](const SetStatistics& u) -> Status {
              if (!u.statistics.is_object() || !u.statistics.contains("snapshot-id") ||
                  !u.statistics["snapshot-id"].is_number_integer()) {
                return InvalidArgument("set-statistics: statistics must be an object with 'snapshot-id'");
              }
              json& stats = m_->statistics;
              if (!stats.is_array()) stats = json::array();
              json kept = json::array();
              for (const auto& s : stats) {
                if (s.value("snapshot-id", int64_t{-1}) != u.statistics["snapshot-id"].get<int64_t>()) kept.push_back(s);
              }
              kept.push_back(u.statistics);
              stats = kept;
              return Status::OK();
            },
            [&](const RemoveStatistics& u) -> Status {
              json kept = json::array();
              for (const auto& s : m_->statistics) {
                if (s.value("snapshot-id", int64_t{-1}) != u.snapshot_id) kept.push_back(s);
              }
              m_->statistics = kept;
              return Status::OK();
            },
        },
        update);
  }

  int64_t CommitTimeMs() const { return options_.now_ms ? options_.now_ms : NowMs(); }

  Result<std::shared_ptr<TableMetadata>> Finish() {
    const int64_t now = CommitTimeMs();
    if (base_ && !options_.base_metadata_location.empty()) {
      m_->metadata_log.push_back({options_.base_metadata_location, base_->last_updated_ms});
      const size_t max = static_cast<size_t>(std::max(1, options_.max_previous_versions));
      if (m_->metadata_log.size() > max) {
        m_->metadata_log.erase(m_->metadata_log.begin(),
                               m_->metadata_log.begin() + static_cast<long>(m_->metadata_log.size() - max));
      }
    }
    m_->last_updated_ms = std::max(now, last_snapshot_ts_);
    if (m_->table_uuid.empty()) return InvalidArgument("a new table needs an assign-uuid update");
    if (m_->sort_orders.empty()) m_->sort_orders.push_back(std::make_shared<SortOrder>());
    ARROW_RETURN_NOT_OK(WithContext(ValidateTableMetadata(*m_), "metadata after the updates is invalid"));
    return m_;
  }

 private:
  Status AddSchemaImpl(const AddSchema& u) {
    ARROW_RETURN_NOT_OK(WithContext(u.schema->Validate(), "add-schema"));
    for (const auto& s : m_->schemas) {
      if (s->SameSchema(*u.schema)) {
        last_added_schema_id_ = s->schema_id();
        return Status::OK();
      }
    }
    int32_t id = 0;
    for (const auto& s : m_->schemas) id = std::max(id, s->schema_id() + 1);
    m_->schemas.push_back(std::make_shared<const Schema>(id, u.schema->fields(), u.schema->identifier_field_ids()));
    m_->last_column_id = std::max({m_->last_column_id, u.last_column_id.value_or(0), u.schema->HighestFieldId()});
    last_added_schema_id_ = id;
    return Status::OK();
  }

  Status AddSpecImpl(const AddPartitionSpec& u) {
    auto schema = m_->Schema();
    if (!schema && !m_->schemas.empty()) schema = m_->schemas.back();
    if (!schema) return InvalidArgument("add-spec: the table has no schema yet");
    for (const auto& f : u.spec->fields()) {
      if (f.transform.kind() == Transform::Kind::kUnknown) {
        return Unsupported("add-spec: partition field '{}' uses the unknown transform '{}'", f.name,
                           f.transform.ToString());
      }
    }
    ARROW_RETURN_NOT_OK(WithContext(u.spec->Validate(*schema), "add-spec"));
    for (const auto& s : m_->partition_specs) {
      if (s->CompatibleWith(*u.spec)) {
        last_added_spec_id_ = s->spec_id();
        return Status::OK();
      }
    }
    int32_t id = 0;
    for (const auto& s : m_->partition_specs) id = std::max(id, s->spec_id() + 1);
    m_->partition_specs.push_back(std::make_shared<const PartitionSpec>(id, u.spec->fields()));
    m_->last_partition_id = std::max(m_->last_partition_id, u.spec->LastAssignedFieldId());
    last_added_spec_id_ = id;
    return Status::OK();
  }

  Status AddSortOrderImpl(const AddSortOrder& u) {
    // Java checks a new order against the current schema (SortOrder.checkCompatibility); an order on a
    // missing column would make the table unreadable for engines that bind it.
    auto schema = m_->Schema();
    if (!schema && !m_->schemas.empty()) schema = m_->schemas.back();
    for (const auto& f : u.sort_order->fields) {
      const NestedField* source = schema ? schema->FindFieldById(f.source_id) : nullptr;
      if (!source) {
        return InvalidArgument("add-sort-order: sort field source id {} is not a column of the current schema",
                               f.source_id);
      }
      if (f.transform.kind() != Transform::Kind::kUnknown && !f.transform.CanTransform(*source->type)) {
        return InvalidArgument("add-sort-order: transform {} cannot be applied to column '{}' of type {}",
                               f.transform.ToString(), schema->FindColumnName(f.source_id), source->type->ToString());
      }
    }
    for (const auto& o : m_->sort_orders) {
      if (o->fields == u.sort_order->fields) {
        last_added_order_id_ = o->order_id;
        return Status::OK();
      }
    }
    int32_t id = 0;
    if (!u.sort_order->fields.empty()) {
      id = 1;
      for (const auto& o : m_->sort_orders) id = std::max(id, o->order_id + 1);
    }
    auto order = std::make_shared<SortOrder>(*u.sort_order);
    order->order_id = id;
    m_->sort_orders.push_back(order);
    last_added_order_id_ = id;
    return Status::OK();
  }

  Status AddSnapshotImpl(const Snapshot& s) {
    if (m_->SnapshotById(s.snapshot_id)) {
      return InvalidArgument("add-snapshot: snapshot {} already exists", s.snapshot_id);
    }
    // A stale sequence number or first-row-id means another commit landed since the writer read the
    // table: that is a retryable conflict (Java's RetryableValidationException, which its REST server
    // answers with CommitFailedException), not a malformed request.
    if (m_->format_version >= 2 && s.parent_snapshot_id && s.sequence_number <= m_->last_sequence_number) {
      return CommitConflict("add-snapshot: snapshot {} has sequence number {}, not above the table's last "
                            "sequence number {}", s.snapshot_id, s.sequence_number, m_->last_sequence_number);
    }
    if (m_->format_version >= 3) {
      if (!s.first_row_id || !s.added_rows) {
        return InvalidArgument("add-snapshot: v3 snapshot {} must set first-row-id and added-rows", s.snapshot_id);
      }
      if (*s.first_row_id < m_->next_row_id) {
        return CommitConflict("add-snapshot: snapshot {} has first-row-id {} below the table's next-row-id {}",
                              s.snapshot_id, *s.first_row_id, m_->next_row_id);
      }
      m_->next_row_id = *s.first_row_id + *s.added_rows;
    }
    m_->snapshots.push_back(std::make_shared<const Snapshot>(s));
    m_->last_sequence_number = std::max(m_->last_sequence_number, s.sequence_number);
    last_snapshot_ts_ = std::max(last_snapshot_ts_, s.timestamp_ms);
    added_snapshots_.insert(s.snapshot_id);
    return Status::OK();
  }

  Status SetRefImpl(const SetSnapshotRef& u) {
    auto snapshot = m_->SnapshotById(u.ref.snapshot_id);
    if (!snapshot) {
      return InvalidArgument("set-snapshot-ref: ref '{}' points at unknown snapshot {}", u.ref_name,
                             u.ref.snapshot_id);
    }
    m_->refs[u.ref_name] = u.ref;
    if (u.ref_name == kMainBranch) {
      if (u.ref.type != SnapshotRef::Type::kBranch) return InvalidArgument("set-snapshot-ref: main must be a branch");
      const bool changed = m_->current_snapshot_id != u.ref.snapshot_id;
      m_->current_snapshot_id = u.ref.snapshot_id;
      if (changed) {
        // A rollback to an older snapshot is logged at the commit time (options.now_ms when given), so
        // the entry is never later than the last-updated-ms this commit writes.
        const int64_t ts = added_snapshots_.count(u.ref.snapshot_id) ? snapshot->timestamp_ms : CommitTimeMs();
        m_->snapshot_log.push_back({u.ref.snapshot_id, ts});
      }
    }
    return Status::OK();
  }

  const TableMetadata* base_;
  ApplyOptions options_;
  std::shared_ptr<TableMetadata> m_;
  std::optional<int32_t> last_added_schema_id_;
  std::optional<int32_t> last_added_spec_id_;
  std::optional<int32_t> last_added_order_id_;
  std::set<int64_t> added_snapshots_;
  int64_t last_snapshot_ts_ = 0;
};

template <typename T>
Result<T> Field(const json& j, const char* key, std::string_view what) {
  auto it = j.find(key);
  if (it == j.end()) return InvalidArgument("{} is missing '{}'", what, key);
  try {
    return it->get<T>();
  } catch (const std::exception&) {
    return InvalidArgument("{} has an invalid '{}': {}", what, key, it->dump());
  }
}

}  // namespace

std::string NewUuid() {
  auto& rng = Rng();
  uint64_t hi = rng(), lo = rng();
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 10
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48,
                     lo & 0xffffffffffffULL);
}

int64_t NewSnapshotId() {
  // Java XORs the two halves of a random UUID and clears the sign bit; zero is avoided.
  for (;;) {
    auto& rng = Rng();
    const int64_t id = static_cast<int64_t>((rng() ^ rng()) & 0x7fffffffffffffffULL);
    if (id != 0) return id;
  }
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status CheckRequirements(const TableMetadata* m, const std::vector<TableRequirement>& requirements) {
  for (const auto& req : requirements) {
    Status st = std::visit(
        Overloaded{
            [&](const AssertCreate&) -> Status {
              return m ? CommitConflict("the table already exists") : Status::OK();
            },
            [&](const auto& r) -> Status {
              if (!m) return CommitConflict("the table does not exist");
              using T = std::decay_t<decltype(r)>;
              if constexpr (std::is_same_v<T, AssertTableUuid>) {
                if (m->table_uuid != r.uuid) {
                  return CommitConflict("table UUID is {}, expected {}", m->table_uuid, r.uuid);
                }
              } else if constexpr (std::is_same_v<T, AssertRefSnapshotId>) {
                auto it = m->refs.find(r.ref);
                std::optional<int64_t> actual;
                if (it != m->refs.end()) actual = it->second.snapshot_id;
                if (r.ref == kMainBranch && !actual) actual = m->current_snapshot_id;
                if (actual != r.snapshot_id) {
                  return CommitConflict("ref '{}' is at snapshot {}, expected {}", r.ref,
                                        OptToString(actual), OptToString(r.snapshot_id));
                }
              } else if constexpr (std::is_same_v<T, AssertLastAssignedFieldId>) {
                if (m->last_column_id != r.last_assigned_field_id) {
                  return CommitConflict("last assigned field id is {}, expected {}",
                                        m->last_column_id, r.last_assigned_field_id);
                }
              } else if constexpr (std::is_same_v<T, AssertCurrentSchemaId>) {
                if (m->current_schema_id != r.current_schema_id) {
                  return CommitConflict("current schema id is {}, expected {}",
                                        m->current_schema_id, r.current_schema_id);
                }
              } else if constexpr (std::is_same_v<T, AssertLastAssignedPartitionId>) {
                if (m->last_partition_id != r.last_assigned_partition_id) {
                  return CommitConflict("last assigned partition id is {}, expected {}",
                                        m->last_partition_id, r.last_assigned_partition_id);
                }
              } else if constexpr (std::is_same_v<T, AssertDefaultSpecId>) {
                if (m->default_spec_id != r.default_spec_id) {
                  return CommitConflict("default spec id is {}, expected {}", m->default_spec_id,
                                        r.default_spec_id);
                }
              } else if constexpr (std::is_same_v<T, AssertDefaultSortOrderId>) {
                if (m->default_sort_order_id != r.default_sort_order_id) {
                  return CommitConflict("default sort order id is {}, expected {}",
                                        m->default_sort_order_id, r.default_sort_order_id);
                }
              }
              return Status::OK();
            },
        },
        req);
    if (!st.ok()) {
      // Name the requirement as the REST protocol spells it, so a client sees which check failed.
      return CommitConflict("requirement {} failed: {}", RequirementToJson(req)["type"].get<std::string>(),
                            st.message());
    }
  }
  return Status::OK();
}

Result<std::shared_ptr<TableMetadata>> ApplyUpdates(const TableMetadata* base, const std::vector<TableUpdate>& updates,
                                                    const ApplyOptions& options) {
  MetadataBuilder builder(base, options);
  for (const auto& u : updates) ARROW_RETURN_NOT_OK(builder.Apply(u));
  return builder.Finish();
}

std::vector<TableUpdate> UpdatesForNewTable(const TableMetadata& m) {
  std::vector<TableUpdate> out;
  out.push_back(AssignUuid{m.table_uuid});
  out.push_back(UpgradeFormatVersion{m.format_version});
  out.push_back(AddSchema{m.Schema(), m.last_column_id});
  out.push_back(SetCurrentSchema{-1});
  out.push_back(AddPartitionSpec{m.Spec()});
  out.push_back(SetDefaultSpec{-1});
  auto order = m.SortOrder() ? m.SortOrder() : std::make_shared<const SortOrder>();
  out.push_back(AddSortOrder{order});
  out.push_back(SetDefaultSortOrder{-1});
  out.push_back(SetLocation{m.location});
  if (!m.properties.empty()) out.push_back(SetProperties{m.properties});
  return out;
}

json RequirementToJson(const TableRequirement& requirement) {
  return std::visit(
      Overloaded{
          [](const AssertCreate&) -> json { return {{"type", "assert-create"}}; },
          [](const AssertTableUuid& r) -> json { return {{"type", "assert-table-uuid"}, {"uuid", r.uuid}}; },
          [](const AssertRefSnapshotId& r) -> json {
            json j = {{"type", "assert-ref-snapshot-id"}, {"ref", r.ref}};
            j["snapshot-id"] = r.snapshot_id ? json(*r.snapshot_id) : json(nullptr);
            return j;
          },
          [](const AssertLastAssignedFieldId& r) -> json {
            return {{"type", "assert-last-assigned-field-id"}, {"last-assigned-field-id", r.last_assigned_field_id}};
          },
          [](const AssertCurrentSchemaId& r) -> json {
            return {{"type", "assert-current-schema-id"}, {"current-schema-id", r.current_schema_id}};
          },
          [](const AssertLastAssignedPartitionId& r) -> json {
            return {{"type", "assert-last-assigned-partition-id"},
                    {"last-assigned-partition-id", r.last_assigned_partition_id}};
          },
          [](const AssertDefaultSpecId& r) -> json {
            return {{"type", "assert-default-spec-id"}, {"default-spec-id", r.default_spec_id}};
          },
          [](const AssertDefaultSortOrderId& r) -> json {
            return {{"type", "assert-default-sort-order-id"}, {"default-sort-order-id", r.default_sort_order_id}};
          },
      },
      requirement);
}

Result<TableRequirement> RequirementFromJson(const json& j) {
  ARROW_ASSIGN_OR_RAISE(auto type, Field<std::string>(j, "type", "requirement"));
  const std::string what = "requirement " + type;
  if (type == "assert-create") return AssertCreate{};
  if (type == "assert-table-uuid") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<std::string>(j, "uuid", what));
    return AssertTableUuid{v};
  }
  if (type == "assert-ref-snapshot-id") {
    AssertRefSnapshotId r;
    ARROW_ASSIGN_OR_RAISE(r.ref, Field<std::string>(j, "ref", what));
    if (auto it = j.find("snapshot-id"); it != j.end() && !it->is_null()) {
      ARROW_ASSIGN_OR_RAISE(auto id, Field<int64_t>(j, "snapshot-id", what));
      r.snapshot_id = id;
    }
    return r;
  }
  if (type == "assert-last-assigned-field-id") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<int32_t>(j, "last-assigned-field-id", what));
    return AssertLastAssignedFieldId{v};
  }
  if (type == "assert-current-schema-id") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<int32_t>(j, "current-schema-id", what));
    return AssertCurrentSchemaId{v};
  }
  if (type == "assert-last-assigned-partition-id") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<int32_t>(j, "last-assigned-partition-id", what));
    return AssertLastAssignedPartitionId{v};
  }
  if (type == "assert-default-spec-id") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<int32_t>(j, "default-spec-id", what));
    return AssertDefaultSpecId{v};
  }
  if (type == "assert-default-sort-order-id") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<int32_t>(j, "default-sort-order-id", what));
    return AssertDefaultSortOrderId{v};
  }
  return InvalidArgument("unknown requirement type '{}'", type);
}

json UpdateToJson(const TableUpdate& update) {
  return std::visit(
      Overloaded{
          [](const AssignUuid& u) -> json { return {{"action", "assign-uuid"}, {"uuid", u.uuid}}; },
          [](const UpgradeFormatVersion& u) -> json {
            return {{"action", "upgrade-format-version"}, {"format-version", u.format_version}};
          },
          [](const AddSchema& u) -> json {
            json j = {{"action", "add-schema"}, {"schema", SchemaToJson(*u.schema)}};
            if (u.last_column_id) j["last-column-id"] = *u.last_column_id;
            return j;
          },
          [](const SetCurrentSchema& u) -> json { return {{"action", "set-current-schema"}, {"schema-id", u.schema_id}}; },
          [](const AddPartitionSpec& u) -> json { return {{"action", "add-spec"}, {"spec", PartitionSpecToJson(*u.spec)}}; },
          [](const SetDefaultSpec& u) -> json { return {{"action", "set-default-spec"}, {"spec-id", u.spec_id}}; },
          [](const AddSortOrder& u) -> json {
            return {{"action", "add-sort-order"}, {"sort-order", SortOrderToJson(*u.sort_order)}};
          },
          [](const SetDefaultSortOrder& u) -> json {
            return {{"action", "set-default-sort-order"}, {"sort-order-id", u.sort_order_id}};
          },
          [](const AddSnapshot& u) -> json { return {{"action", "add-snapshot"}, {"snapshot", SnapshotToJson(*u.snapshot)}}; },
          [](const SetSnapshotRef& u) -> json {
            json j = SnapshotRefToJson(u.ref);
            j["action"] = "set-snapshot-ref";
            j["ref-name"] = u.ref_name;
            return j;
          },
          [](const RemoveSnapshots& u) -> json { return {{"action", "remove-snapshots"}, {"snapshot-ids", u.snapshot_ids}}; },
          [](const RemoveSnapshotRef& u) -> json { return {{"action", "remove-snapshot-ref"}, {"ref-name", u.ref_name}}; },
          [](const SetLocation& u) -> json { return {{"action", "set-location"}, {"location", u.location}}; },
          [](const SetProperties& u) -> json { return {{"action", "set-properties"}, {"updates", u.updates}}; },
          [](const RemoveProperties& u) -> json { return {{"action", "remove-properties"}, {"removals", u.removals}}; },
          [](const SetStatistics& u) -> json {
            return {{"action", "set-statistics"}, {"snapshot-id", u.statistics.value("snapshot-id", int64_t{0})},
                    {"statistics", u.statistics}};
          },
          [](const RemoveStatistics& u) -> json { return {{"action", "remove-statistics"}, {"snapshot-id", u.snapshot_id}}; },
      },
      update);
}

Result<TableUpdate> UpdateFromJson(const json& j) {
  ARROW_ASSIGN_OR_RAISE(auto action, Field<std::string>(j, "action", "update"));
  const std::string what = "update " + action;
  if (action == "assign-uuid") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<std::string>(j, "uuid", what));
    return AssignUuid{v};
  }
  if (action == "upgrade-format-version") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<int>(j, "format-version", what));
    return UpgradeFormatVersion{v};
  }
  if (action == "add-schema") {
    if (!j.contains("schema")) return InvalidArgument("{} is missing 'schema'", what);
    LS_ASSIGN_OR_RAISE_CTX(auto schema, SchemaFromJson(j["schema"]), "{}", what);
    AddSchema u{schema, std::nullopt};
    if (j.contains("last-column-id") && j["last-column-id"].is_number_integer()) {
      u.last_column_id = j["last-column-id"].get<int32_t>();
    }
    return u;
  }
  if (action == "set-current-schema") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<int32_t>(j, "schema-id", what));
    return SetCurrentSchema{v};
  }
  if (action == "add-spec") {
    if (!j.contains("spec")) return InvalidArgument("{} is missing 'spec'", what);
    json spec = j["spec"];
    if (!spec.is_object()) return InvalidArgument("{} has an invalid 'spec': {}", what, spec.dump());
    if (!spec.contains("spec-id")) spec["spec-id"] = 0;  // the builder assigns the real id
    LS_ASSIGN_OR_RAISE_CTX(auto s, PartitionSpecFromJson(spec), "{}", what);
    return AddPartitionSpec{s};
  }
  if (action == "set-default-spec") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<int32_t>(j, "spec-id", what));
    return SetDefaultSpec{v};
  }
  if (action == "add-sort-order") {
    if (!j.contains("sort-order")) return InvalidArgument("{} is missing 'sort-order'", what);
    LS_ASSIGN_OR_RAISE_CTX(auto o, SortOrderFromJson(j["sort-order"]), "{}", what);
    return AddSortOrder{o};
  }
  if (action == "set-default-sort-order") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<int32_t>(j, "sort-order-id", what));
    return SetDefaultSortOrder{v};
  }
  if (action == "add-snapshot") {
    if (!j.contains("snapshot")) return InvalidArgument("{} is missing 'snapshot'", what);
    LS_ASSIGN_OR_RAISE_CTX(auto s, SnapshotFromJson(j["snapshot"]), "{}", what);
    return AddSnapshot{s};
  }
  if (action == "set-snapshot-ref") {
    ARROW_ASSIGN_OR_RAISE(auto name, Field<std::string>(j, "ref-name", what));
    LS_ASSIGN_OR_RAISE_CTX(auto ref, SnapshotRefFromJson(j), "{}", what);
    return SetSnapshotRef{name, ref};
  }
  if (action == "remove-snapshots") {
    ARROW_ASSIGN_OR_RAISE(auto ids, Field<std::vector<int64_t>>(j, "snapshot-ids", what));
    return RemoveSnapshots{ids};
  }
  if (action == "remove-snapshot-ref") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<std::string>(j, "ref-name", what));
    return RemoveSnapshotRef{v};
  }
  if (action == "set-location") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<std::string>(j, "location", what));
    return SetLocation{v};
  }
  if (action == "set-properties") {
    ARROW_ASSIGN_OR_RAISE(auto v, (Field<std::map<std::string, std::string>>(j, "updates", what)));
    return SetProperties{v};
  }
  if (action == "remove-properties") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<std::vector<std::string>>(j, "removals", what));
    return RemoveProperties{v};
  }
  if (action == "set-statistics") {
    if (!j.contains("statistics")) return InvalidArgument("{} is missing 'statistics'", what);
    return SetStatistics{j["statistics"]};
  }
  if (action == "remove-statistics") {
    ARROW_ASSIGN_OR_RAISE(auto v, Field<int64_t>(j, "snapshot-id", what));
    return RemoveStatistics{v};
  }
  return InvalidArgument("unknown update action '{}'", action);
}

}  // namespace lakesync::iceberg
