// Parsing and validation of the changelog source's configuration (see changelog_config.h).
#include "lakesync/iceberg/changelog/changelog_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include "lakesync/change/metadata_columns.h"
#include "lakesync/common/text.h"
#include "lakesync/common/yaml_json.h"
#include "lakesync/iceberg/model/literal.h"

namespace lakesync::changelog {
namespace {

using Json = nlohmann::json;

// Every key the source accepts; aliases map onto their canonical key.
const std::map<std::string, std::string, std::less<>>& KeyNames() {
  static const std::map<std::string, std::string, std::less<>> keys = {
      {"table", "table"},
      {"catalog_name", "catalog_name"},
      {"catalog_properties", "catalog_properties"},
      {"start_snapshot_id", "start_snapshot_id"},
      {"from_snapshot", "start_snapshot_id"},
      {"start_timestamp", "start_timestamp"},
      {"from_timestamp", "start_timestamp"},
      {"end_snapshot_id", "end_snapshot_id"},
      {"to_snapshot", "end_snapshot_id"},
      {"end_timestamp", "end_timestamp"},
      {"to_timestamp", "end_timestamp"},
      {"starting_strategy", "starting_strategy"},
      {"streaming", "streaming"},
      {"poll_interval_seconds", "poll_interval_seconds"},
      {"include_metadata_columns", "include_metadata_columns"},
      {"metadata_columns", "include_metadata_columns"},
      {"equality_columns", "equality_columns"},
      {"filter", "filter"},
      {"keep", "keep"},
      {"drop", "drop"},
      {"watermark_column", "watermark_column"},
      {"watermark_column_time_unit", "watermark_column_time_unit"},
  };
  return keys;
}

std::string Describe(const Json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  const char* kind = value.is_string() ? "string" : value.is_boolean() ? "boolean" : value.is_number() ? "number"
                     : value.is_array() ? "list" : value.is_object() ? "map" : "value";
  return fmt::format("{} {}", kind, text);
}

Status BadValue(std::string_view source, std::string_view key, std::string_view want, const Json& value) {
  return InvalidArgument("{}: key '{}' needs {}, got {}", source, key, want, Describe(value));
}

Result<std::string> DecodeString(std::string_view source, std::string_view key, const Json& v) {
  if (!v.is_string()) return BadValue(source, key, "a string (quote numbers)", v);
  auto s = v.get<std::string>();
  if (s.empty()) return InvalidArgument("{}: key '{}' must not be empty", source, key);
  return s;
}

Result<bool> DecodeBool(std::string_view source, std::string_view key, const Json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) {
    const std::string s = AsciiLower(v.get<std::string>());
    if (s == "true") return true;
    if (s == "false") return false;
  }
  return BadValue(source, key, "true or false", v);
}

Result<int64_t> DecodeInt64(std::string_view source, std::string_view key, const Json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return BadValue(source, key, "a 64-bit integer", v);
    }
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (!s.empty() && s.size() <= 19 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); })) {
      return static_cast<int64_t>(std::stoull(s));
    }
  }
  return BadValue(source, key, "a whole number", v);
}

// Epoch milliseconds (a number or a string of digits) or an ISO-8601 timestamp (UTC unless it says).
Result<int64_t> DecodeTimestampMs(std::string_view source, std::string_view key, const Json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return DecodeInt64(source, key, v);
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (!s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); })) {
      return DecodeInt64(source, key, v);
    }
    auto micros = iceberg::ParseTimestamp(s, /*nanos=*/false);
    if (micros.ok()) return *micros / 1000;
  }
  return BadValue(source, key, "epoch milliseconds or an ISO-8601 timestamp", v);
}

Result<std::vector<std::string>> DecodeList(std::string_view source, std::string_view key, const Json& v) {
  if (!v.is_array()) return BadValue(source, key, "a list of strings (write [a, b])", v);
  std::vector<std::string> out;
  for (const auto& item : v) {
    if (!item.is_string() || item.get<std::string>().empty()) {
      return BadValue(source, key, "a list of non-empty strings", item);
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

Result<std::map<std::string, std::string>> DecodeMap(std::string_view source, std::string_view key, const Json& v) {
  if (!v.is_object()) return BadValue(source, key, "a map of strings", v);
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : v.items()) {
    if (value.is_string()) {
      out[name] = value.get<std::string>();
    } else if (value.is_number() || value.is_boolean()) {
      out[name] = value.dump();
    } else {
      return BadValue(source, fmt::format("{}.{}", key, name), "a scalar", value);
    }
  }
  return out;
}

Status CheckNames(std::string_view source, std::string_view key, const std::vector<std::string>& names) {
  std::set<std::string> seen;
  for (const auto& n : names) {
    if (!seen.insert(n).second) return InvalidArgument("{}: key '{}' names column '{}' twice", source, key, n);
  }
  return Status::OK();
}

}  // namespace

const std::vector<std::string>& AllMetadataColumns() {
  static const std::vector<std::string> all = {kChangeTypeColumn, kChangeOrdinalColumn, kCommitSnapshotIdColumn,
                                               kCommitSequenceColumn, kCommitTimestampColumn};
  return all;
}

Status CheckMetadataColumns(std::string_view key, const std::vector<std::string>& columns) {
  const auto& all = AllMetadataColumns();
  std::set<std::string> seen;
  for (const auto& c : columns) {
    if (std::find(all.begin(), all.end(), c) == all.end()) {
      return InvalidArgument("{}: unsupported metadata column '{}'; supported columns are: {}", key, c,
                             fmt::join(all, ", "));
    }
    if (!seen.insert(c).second) return InvalidArgument("{}: metadata column '{}' is listed twice", key, c);
  }
  return Status::OK();
}

std::optional<catalog::CatalogConfig> ChangelogConfig::catalog() const {
  if (!catalog_name && catalog_properties.empty()) return std::nullopt;
  catalog::CatalogConfig config;
  if (catalog_name) config.catalog_name = *catalog_name;
  config.catalog_properties = catalog_properties;
  return config;
}

Result<ChangelogConfig> ParseChangelogConfig(const Json& map, std::string_view source) {
  if (!map.is_object()) return InvalidArgument("{}: the changelog source configuration must be a map", source);
  ChangelogConfig c;
  std::map<std::string, std::string> given;  // canonical key -> the spelling used
  for (const auto& [key, value] : map.items()) {
    auto it = KeyNames().find(key);
    if (it == KeyNames().end()) {
      std::vector<std::string> known;
      for (const auto& [name, canonical] : KeyNames()) known.push_back(name);
      return InvalidArgument("{}: unknown key '{}' for the Iceberg changelog source (known keys: {})", source, key,
                             fmt::join(known, ", "));
    }
    if (value.is_null()) continue;
    const std::string& canonical = it->second;
    if (auto prev = given.find(canonical); prev != given.end()) {
      return InvalidArgument("{}: keys '{}' and '{}' mean the same; give one", source, prev->second, key);
    }
    given[canonical] = key;
    if (canonical == "table") {
      ARROW_ASSIGN_OR_RAISE(c.table, DecodeString(source, key, value));
    } else if (canonical == "catalog_name") {
      ARROW_ASSIGN_OR_RAISE(c.catalog_name, DecodeString(source, key, value));
    } else if (canonical == "catalog_properties") {
      ARROW_ASSIGN_OR_RAISE(c.catalog_properties, DecodeMap(source, key, value));
    } else if (canonical == "start_snapshot_id" || canonical == "end_snapshot_id") {
      ARROW_ASSIGN_OR_RAISE(int64_t id, DecodeInt64(source, key, value));
      if (id <= 0) return InvalidArgument("{}: key '{}' must be a positive snapshot id, got {}", source, key, id);
      (canonical == "start_snapshot_id" ? c.start_snapshot_id : c.end_snapshot_id) = id;
    } else if (canonical == "start_timestamp" || canonical == "end_timestamp") {
      ARROW_ASSIGN_OR_RAISE(int64_t ms, DecodeTimestampMs(source, key, value));
      if (ms < 0) return InvalidArgument("{}: key '{}' must not be before 1970, got {}", source, key, ms);
      (canonical == "start_timestamp" ? c.start_timestamp_ms : c.end_timestamp_ms) = ms;
    } else if (canonical == "starting_strategy") {
      ARROW_ASSIGN_OR_RAISE(std::string text, DecodeString(source, key, value));
      const std::string s = AsciiLower(text);
      if (s == "earliest") {
        c.starting_strategy = StartingStrategy::kEarliest;
      } else if (s == "latest") {
        c.starting_strategy = StartingStrategy::kLatest;
      } else {
        return InvalidArgument("{}: key '{}' must be earliest or latest, got '{}'", source, key,
                               value.get<std::string>());
      }
    } else if (canonical == "streaming") {
      ARROW_ASSIGN_OR_RAISE(c.streaming, DecodeBool(source, key, value));
    } else if (canonical == "poll_interval_seconds") {
      ARROW_ASSIGN_OR_RAISE(int64_t s, DecodeInt64(source, key, value));
      if (s < 1 || s > 86400) {
        return InvalidArgument("{}: key '{}' must be between 1 and 86400 seconds, got {}", source, key, s);
      }
      c.poll_interval_seconds = static_cast<int32_t>(s);
    } else if (canonical == "include_metadata_columns") {
      ARROW_ASSIGN_OR_RAISE(auto columns, DecodeList(source, key, value));
      // Beam's constant names (CHANGE_TYPE, COMMIT_SNAPSHOT_SEQUENCE_NUMBER, ...) mean the columns.
      for (auto& column : columns) column = change::CanonicalMetadataColumn(column);
      LS_RETURN_NOT_OK_CTX(CheckMetadataColumns(key, columns), "{}", source);
      c.metadata_columns = std::move(columns);
    } else if (canonical == "watermark_column") {
      ARROW_ASSIGN_OR_RAISE(c.watermark_column, DecodeString(source, key, value));
    } else if (canonical == "watermark_column_time_unit") {
      ARROW_ASSIGN_OR_RAISE(std::string unit, DecodeString(source, key, value));
      std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char ch) { return std::toupper(ch); });
      static const std::vector<std::string> kUnits = {"NANOSECONDS", "MICROSECONDS", "MILLISECONDS", "SECONDS",
                                                      "MINUTES",     "HOURS",        "DAYS"};
      if (std::find(kUnits.begin(), kUnits.end(), unit) == kUnits.end()) {
        return InvalidArgument("{}: key '{}' must be one of {}, got '{}'", source, key, fmt::join(kUnits, ", "),
                               value.get<std::string>());
      }
      c.watermark_column_time_unit = unit;
    } else if (canonical == "equality_columns") {
      ARROW_ASSIGN_OR_RAISE(c.equality_columns, DecodeList(source, key, value));
      ARROW_RETURN_NOT_OK(CheckNames(source, key, c.equality_columns));
    } else if (canonical == "filter") {
      ARROW_ASSIGN_OR_RAISE(c.filter, DecodeString(source, key, value));
    } else if (canonical == "keep") {
      ARROW_ASSIGN_OR_RAISE(c.keep, DecodeList(source, key, value));
      ARROW_RETURN_NOT_OK(CheckNames(source, key, c.keep));
    } else if (canonical == "drop") {
      ARROW_ASSIGN_OR_RAISE(c.drop, DecodeList(source, key, value));
      ARROW_RETURN_NOT_OK(CheckNames(source, key, c.drop));
    }
  }
  auto spelled = [&](const char* canonical) { return given.at(canonical); };
  if (c.table.empty()) return InvalidArgument("{}: key 'table' is required (NAMESPACE.TABLE)", source);
  if (c.start_snapshot_id && c.start_timestamp_ms) {
    return InvalidArgument("{}: give at most one of '{}' and '{}'", source, spelled("start_snapshot_id"),
                           spelled("start_timestamp"));
  }
  if (c.end_snapshot_id && c.end_timestamp_ms) {
    return InvalidArgument("{}: give at most one of '{}' and '{}'", source, spelled("end_snapshot_id"),
                           spelled("end_timestamp"));
  }
  if (c.starting_strategy && (c.start_snapshot_id || c.start_timestamp_ms)) {
    return InvalidArgument("{}: 'starting_strategy' cannot be combined with '{}'", source,
                           c.start_snapshot_id ? spelled("start_snapshot_id") : spelled("start_timestamp"));
  }
  if (c.start_timestamp_ms && c.end_timestamp_ms && *c.start_timestamp_ms > *c.end_timestamp_ms) {
    return InvalidArgument("{}: '{}' ({}) is after '{}' ({})", source, spelled("start_timestamp"),
                           *c.start_timestamp_ms, spelled("end_timestamp"), *c.end_timestamp_ms);
  }
  if (given.count("poll_interval_seconds") && !c.streaming) {
    return InvalidArgument("{}: 'poll_interval_seconds' applies only with 'streaming: true'", source);
  }
  if (!c.keep.empty() && !c.drop.empty()) {
    return InvalidArgument("{}: 'keep' and 'drop' are mutually exclusive; give one", source);
  }
  if (given.count("catalog_properties")) {
    LS_RETURN_NOT_OK_CTX(catalog::ValidateCatalogConfig(*c.catalog()), "{}: key 'catalog_properties'", source);
  }
  return c;
}

Result<ChangelogConfig> ParseChangelogConfigText(std::string_view text, std::string_view source) {
  ARROW_ASSIGN_OR_RAISE(auto json, ParseYamlOrJson(text, source));
  return ParseChangelogConfig(json, source);
}

}  // namespace lakesync::changelog
