#include "lakesync/change/metadata_columns.h"

#include <algorithm>
#include <utility>

namespace lakesync::change {
namespace {

// Beam's org.apache.beam.sdk.io.iceberg.cdc.IcebergCdcMetadataColumns constant names → columns.
const std::vector<std::pair<std::string, std::string>>& BeamNames() {
  static const std::vector<std::pair<std::string, std::string>> names = {
      {"CHANGE_TYPE", "_change_type"},
      {"CHANGE_ORDINAL", "_change_ordinal"},
      {"COMMIT_SNAPSHOT_ID", "_commit_snapshot_id"},
      {"COMMIT_SNAPSHOT_SEQUENCE_NUMBER", "_commit_snapshot_sequence_number"},
      {"COMMIT_TIMESTAMP", "_commit_timestamp"},
      {"COMMIT_VERSION", "_commit_version"},
      {"ROW_ID", "_row_id"},
      {"LAST_UPDATED_SEQUENCE_NUMBER", "_last_updated_sequence_number"},
  };
  return names;
}

}  // namespace

const std::vector<std::string>& MetadataColumnNames() {
  static const std::vector<std::string> names = {"_change_type",       "_change_ordinal",
                                                 "_commit_snapshot_id", "_commit_snapshot_sequence_number",
                                                 "_commit_timestamp",  "_commit_version"};
  return names;
}

bool IsMetadataColumn(std::string_view name) {
  const auto& names = MetadataColumnNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string CanonicalMetadataColumn(std::string_view name) {
  std::string_view bare = name;
  constexpr std::string_view kClass = "IcebergCdcMetadataColumns.";
  if (bare.substr(0, kClass.size()) == kClass) bare.remove_prefix(kClass.size());
  for (const auto& [beam, column] : BeamNames()) {
    if (bare == beam) return column;
  }
  return std::string(name);
}

std::optional<std::string> ResolveColumn(std::string_view name, const std::vector<std::string>& available) {
  auto has = [&](std::string_view n) { return std::find(available.begin(), available.end(), n) != available.end(); };
  if (has(name)) return std::string(name);
  const std::string canonical = CanonicalMetadataColumn(name);
  if (canonical != name && has(canonical)) return canonical;
  return std::nullopt;
}

const std::vector<std::string>& ChangeTypeColumnCandidates() {
  static const std::vector<std::string> names = {"_change_type", "change_type", "CHANGE_TYPE"};
  return names;
}

const std::vector<std::string>& SequenceColumnCandidates() {
  static const std::vector<std::string> names = {"_commit_snapshot_sequence_number", "_commit_version"};
  return names;
}

}  // namespace lakesync::change
