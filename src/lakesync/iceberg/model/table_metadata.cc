#include "lakesync/iceberg/model/table_metadata.h"

#include <algorithm>
#include <set>

namespace lakesync::iceberg {

SchemaPtr TableMetadata::Schema() const { return SchemaById(current_schema_id); }

SchemaPtr TableMetadata::SchemaById(int32_t schema_id) const {
  for (const auto& s : schemas) {
    if (s->schema_id() == schema_id) return s;
  }
  return nullptr;
}

PartitionSpecPtr TableMetadata::Spec() const { return SpecById(default_spec_id); }

PartitionSpecPtr TableMetadata::SpecById(int32_t spec_id) const {
  for (const auto& s : partition_specs) {
    if (s->spec_id() == spec_id) return s;
  }
  return nullptr;
}

SortOrderPtr TableMetadata::SortOrder() const {
  for (const auto& o : sort_orders) {
    if (o->order_id == default_sort_order_id) return o;
  }
  return nullptr;
}

SnapshotPtr TableMetadata::SnapshotById(int64_t snapshot_id) const {
  for (const auto& s : snapshots) {
    if (s->snapshot_id == snapshot_id) return s;
  }
  return nullptr;
}

SnapshotPtr TableMetadata::CurrentSnapshot() const {
  return current_snapshot_id ? SnapshotById(*current_snapshot_id) : nullptr;
}

SnapshotPtr TableMetadata::SnapshotForRef(const std::string& ref) const {
  auto it = refs.find(ref);
  if (it != refs.end()) return SnapshotById(it->second.snapshot_id);
  // v1 tables and writers that predate refs only set current-snapshot-id.
  if (ref == kMainBranch) return CurrentSnapshot();
  return nullptr;
}

SnapshotPtr TableMetadata::SnapshotAsOf(int64_t timestamp_ms) const {
  SnapshotPtr found;
  for (const auto& entry : snapshot_log) {
    if (entry.timestamp_ms <= timestamp_ms) found = SnapshotById(entry.snapshot_id);
  }
  if (found || !snapshot_log.empty()) return found;
  // Without a log, fall back to the main lineage by snapshot timestamps.
  if (auto current = CurrentSnapshot()) {
    for (const auto& s : Ancestors(current->snapshot_id)) {
      if (s->timestamp_ms <= timestamp_ms) return s;
    }
  }
  return nullptr;
}

std::vector<SnapshotPtr> TableMetadata::Ancestors(int64_t snapshot_id) const {
  std::vector<SnapshotPtr> out;
  std::set<int64_t> seen;
  for (auto s = SnapshotById(snapshot_id); s && seen.insert(s->snapshot_id).second;
       s = s->parent_snapshot_id ? SnapshotById(*s->parent_snapshot_id) : nullptr) {
    out.push_back(s);
  }
  return out;
}

std::string TableMetadata::Property(const std::string& key, const std::string& fallback) const {
  auto it = properties.find(key);
  return it == properties.end() ? fallback : it->second;
}

int64_t TableMetadata::PropertyAsInt(const std::string& key, int64_t fallback) const {
  auto it = properties.find(key);
  if (it == properties.end()) return fallback;
  try {
    size_t used = 0;
    const int64_t v = std::stoll(it->second, &used);
    return used == it->second.size() ? v : fallback;
  } catch (...) {
    return fallback;
  }
}

Status ValidateTableMetadata(const TableMetadata& m) {
  if (m.format_version < kMinFormatVersion || m.format_version > kMaxFormatVersion) {
    return Unsupported("format-version {} is not supported (lakesync reads {}..{})", m.format_version,
                       kMinFormatVersion, kMaxFormatVersion);
  }
  if (m.location.empty()) return Corrupt("'location' is missing or empty");
  if (!m.Schema()) return Corrupt("current-schema-id {} does not name a schema", m.current_schema_id);
  if (!m.Spec()) return Corrupt("default-spec-id {} does not name a partition spec", m.default_spec_id);
  if (m.default_sort_order_id != 0 && !m.SortOrder()) {
    return Corrupt("default-sort-order-id {} does not name a sort order", m.default_sort_order_id);
  }
  for (const auto& s : m.schemas) {
    ARROW_RETURN_NOT_OK(WithContext(s->Validate(), fmt::format("schema {}", s->schema_id())));
    if (s->HighestFieldId() > m.last_column_id) {
      return Corrupt("schema {} uses field id {} above last-column-id {}", s->schema_id(), s->HighestFieldId(),
                     m.last_column_id);
    }
  }
  for (const auto& spec : m.partition_specs) {
    if (spec->LastAssignedFieldId() > m.last_partition_id) {
      return Corrupt("partition spec {} uses field id {} above last-partition-id {}", spec->spec_id(),
                     spec->LastAssignedFieldId(), m.last_partition_id);
    }
  }
  if (m.current_snapshot_id && !m.SnapshotById(*m.current_snapshot_id)) {
    return Corrupt("current-snapshot-id {} does not name a snapshot", *m.current_snapshot_id);
  }
  if (auto it = m.refs.find(kMainBranch); it != m.refs.end()) {
    if (m.current_snapshot_id != it->second.snapshot_id) {
      return Corrupt("current-snapshot-id {} differs from refs.main {}",
                     m.current_snapshot_id ? std::to_string(*m.current_snapshot_id) : "null",
                     it->second.snapshot_id);
    }
  }
  for (const auto& [name, ref] : m.refs) {
    if (!m.SnapshotById(ref.snapshot_id)) {
      return Corrupt("ref '{}' points at snapshot {}, which is not in the metadata", name, ref.snapshot_id);
    }
  }
  for (const auto& s : m.snapshots) {
    if (m.format_version >= 2 && s->sequence_number > m.last_sequence_number) {
      return Corrupt("snapshot {} has sequence-number {} above last-sequence-number {}", s->snapshot_id,
                     s->sequence_number, m.last_sequence_number);
    }
  }
  return Status::OK();
}

}  // namespace lakesync::iceberg
