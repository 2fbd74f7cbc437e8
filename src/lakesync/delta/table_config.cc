#include "lakesync/delta/table_config.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "lakesync/common/text.h"

namespace lakesync::delta {
namespace {

bool Has(const std::optional<std::vector<std::string>>& list, std::string_view name) {
  return list && std::find(list->begin(), list->end(), name) != list->end();
}

std::string Config(const Metadata& metadata, const std::string& key) {
  auto it = metadata.configuration.find(key);
  return it == metadata.configuration.end() ? std::string() : it->second;
}

}  // namespace

Status CheckReadable(const Protocol& protocol, const std::string& where) {
  if (protocol.min_reader_version > 3 || protocol.min_reader_version < 1) {
    return Unsupported("{}: the table needs Delta reader version {}, lakesync reads versions 1 to 3", where,
                       protocol.min_reader_version);
  }
  if (Has(protocol.reader_features, "catalogManaged") || Has(protocol.reader_features, "catalogOwned-preview") ||
      Has(protocol.writer_features, "catalogManaged") || Has(protocol.writer_features, "catalogOwned-preview")) {
    return Unsupported(
        "{}: the table is catalog-managed (table feature catalogManaged): only its catalog knows which commits are "
        "ratified, and lakesync reads Delta tables from their storage path only",
        where);
  }
  if (protocol.min_reader_version < 3 || !protocol.reader_features) return Status::OK();
  static const std::vector<std::string> kSupported = {
      "columnMapping", "deletionVectors",     "timestampNtz", "timestampWithoutTimezone", "v2Checkpoint",
      "vacuumProtocolCheck", "typeWidening", "typeWidening-preview"};
  std::vector<std::string> unsupported;
  for (const auto& f : *protocol.reader_features) {
    if (std::find(kSupported.begin(), kSupported.end(), f) == kSupported.end()) unsupported.push_back(f);
  }
  if (!unsupported.empty()) {
    return Unsupported("{}: the table uses reader feature(s) lakesync does not support: {}", where,
                       fmt::join(unsupported, ", "));
  }
  return Status::OK();
}

Result<ColumnMappingMode> ColumnMapping(const Protocol& protocol, const Metadata& metadata) {
  const bool enabled = protocol.min_reader_version == 2 ||
                       (protocol.min_reader_version == 3 && Has(protocol.reader_features, "columnMapping"));
  if (!enabled) return ColumnMappingMode::kNone;
  const std::string mode = Config(metadata, "delta.columnMapping.mode");
  if (mode.empty() || mode == "none") return ColumnMappingMode::kNone;
  if (mode == "name") return ColumnMappingMode::kName;
  if (mode == "id") return ColumnMappingMode::kId;
  return Corrupt("table property delta.columnMapping.mode has unknown value '{}' (none, name or id)", mode);
}

bool ChangeDataFeedEnabled(const Metadata& metadata) {
  return AsciiLower(Config(metadata, "delta.enableChangeDataFeed")) == "true";
}

IctConfig InCommitTimestamps(const Metadata& metadata) {
  IctConfig c;
  std::string v = Config(metadata, "delta.enableInCommitTimestamps");
  std::transform(v.begin(), v.end(), v.begin(), ::tolower);
  c.enabled = v == "true";
  auto num = [&](const char* key) -> std::optional<int64_t> {
    const std::string s = Config(metadata, key);
    if (s.empty()) return std::nullopt;
    try {
      return std::stoll(s);
    } catch (...) {
      return std::nullopt;
    }
  };
  c.enablement_version = num("delta.inCommitTimestampEnablementVersion");
  c.enablement_timestamp = num("delta.inCommitTimestampEnablementTimestamp");
  return c;
}

Result<TableSchema> SchemaOf(const Protocol& protocol, const Metadata& metadata) {
  ARROW_ASSIGN_OR_RAISE(auto mode, ColumnMapping(protocol, metadata));
  return ParseTableSchema(metadata.schema_string, metadata.partition_columns, mode);
}

}  // namespace lakesync::delta
