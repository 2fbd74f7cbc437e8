#include "lakesync/engine/source_keys.h"

#include <algorithm>
#include <cctype>

#include "lakesync/delta/delta_table.h"

namespace lakesync::engine {

using Json = nlohmann::json;

namespace {
bool Present(const Json& source, const char* key) { return source.contains(key) && !source.at(key).is_null(); }
}  // namespace

Result<std::string> RequiredString(const Json& source, const char* key, std::string_view where, std::string_view what) {
  if (!Present(source, key)) return InvalidArgument("{}: source.{} is required: {}", where, key, what);
  const Json& v = source.at(key);
  if (!v.is_string() || v.get<std::string>().empty()) {
    return InvalidArgument("{}: source.{} must be a non-empty string ({})", where, key, what);
  }
  return v.get<std::string>();
}

Result<std::optional<int64_t>> OptionalVersion(const Json& source, const char* key, std::string_view where) {
  if (!Present(source, key)) return std::optional<int64_t>();
  const Json& v = source.at(key);
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return std::optional<int64_t>(v.get<int64_t>());
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (!s.empty() && s.size() < 19 &&
        std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      return std::optional<int64_t>(std::stoll(s));
    }
  }
  return InvalidArgument("{}: source.{} must be a non-negative whole number, not {}", where, key, v.dump());
}

Result<std::vector<std::string>> OptionalStringList(const Json& source, const char* key, std::string_view where) {
  std::vector<std::string> out;
  if (!Present(source, key)) return out;
  const Json& v = source.at(key);
  if (!v.is_array()) return InvalidArgument("{}: source.{} must be a list, e.g. [a, b]", where, key);
  for (const auto& item : v) {
    if (!item.is_string() || item.get<std::string>().empty()) {
      return InvalidArgument("{}: source.{} must list non-empty strings, not {}", where, key, item.dump());
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

Result<std::map<std::string, std::string>> OptionalStringMap(const Json& source, const char* key,
                                                             std::string_view where) {
  std::map<std::string, std::string> out;
  if (!Present(source, key)) return out;
  const Json& v = source.at(key);
  if (!v.is_object()) return InvalidArgument("{}: source.{} must be a map of strings", where, key);
  for (const auto& [k, value] : v.items()) {
    if (value.is_string()) {
      out[k] = value.get<std::string>();
    } else if (value.is_boolean() || value.is_number()) {
      out[k] = value.dump();
    } else {
      return InvalidArgument("{}: source.{}.{} must be a scalar", where, key, k);
    }
  }
  return out;
}

Result<std::optional<int64_t>> OptionalTimestamp(const Json& source, const char* key, std::string_view where) {
  if (!source.contains(key) || source.at(key).is_null()) return std::optional<int64_t>();
  const Json& v = source.at(key);
  if (v.is_number_integer()) return std::optional<int64_t>(v.get<int64_t>());
  if (!v.is_string()) return InvalidArgument("{}: source.{} must be an ISO-8601 time or epoch milliseconds", where, key);
  auto ms = delta::ParseTimestampMillis(v.get<std::string>());
  if (!ms.ok()) return InvalidArgument("{}: source.{}: {}", where, key, ms.status().message());
  return std::optional<int64_t>(*ms);
}

Result<std::vector<std::string>> ChangeFeedColumns(const Json& source, std::string_view where) {
  static const std::vector<std::string> kSupported = {"_change_type", "_commit_version", "_commit_timestamp"};
  std::vector<std::string> columns;
  ARROW_ASSIGN_OR_RAISE(auto asked, OptionalStringList(source, "include_metadata_columns", where));
  for (const auto& c : asked) {
    if (std::find(kSupported.begin(), kSupported.end(), c) == kSupported.end()) {
      return InvalidArgument("{}: source.include_metadata_columns: unsupported metadata column {}; supported: "
                             "_change_type, _commit_version, _commit_timestamp", where, c);
    }
    if (std::find(columns.begin(), columns.end(), c) != columns.end()) {
      return InvalidArgument("{}: source.include_metadata_columns: {} is listed twice", where, c);
    }
    columns.push_back(c);
  }
  for (const char* c : {"_change_type", "_commit_version"}) {
    if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
  }
  return columns;
}

Result<double> OptionalPollInterval(const Json& source, std::string_view where, bool streaming) {
  if (!Present(source, "poll_interval_seconds")) return 60.0;
  const Json& v = source.at("poll_interval_seconds");
  if (!v.is_number() || v.get<double>() < 1) {
    return InvalidArgument("{}: source.poll_interval_seconds must be a number of seconds, at least 1", where);
  }
  if (!streaming) {
    return InvalidArgument("{}: source.poll_interval_seconds needs streaming: true (a batch run does not poll)", where);
  }
  return v.get<double>();
}

std::vector<std::string> VersionRangeKeyNames(bool change_feed) {
  if (!change_feed) return {"version", "timestamp"};
  return {"start_version", "start_timestamp", "end_version", "end_timestamp", "include_metadata_columns",
          "streaming", "poll_interval_seconds", "initial_snapshot"};
}

Status ReadVersionRange(const Json& s, bool change_feed, bool streaming, std::string_view where, SourceKeys* keys) {
  if (!change_feed) {
    ARROW_ASSIGN_OR_RAISE(keys->start_version, OptionalVersion(s, "version", where));
    ARROW_ASSIGN_OR_RAISE(keys->start_timestamp_ms, OptionalTimestamp(s, "timestamp", where));
    if (keys->start_version && keys->start_timestamp_ms) {
      return InvalidArgument("{}: source: set version or timestamp, not both", where);
    }
    // An import "as of" a time reads the last version at or before it.
    keys->as_of = keys->start_timestamp_ms.has_value();
    return Status::OK();
  }
  ARROW_ASSIGN_OR_RAISE(keys->start_version, OptionalVersion(s, "start_version", where));
  ARROW_ASSIGN_OR_RAISE(keys->start_timestamp_ms, OptionalTimestamp(s, "start_timestamp", where));
  ARROW_ASSIGN_OR_RAISE(keys->end_version, OptionalVersion(s, "end_version", where));
  ARROW_ASSIGN_OR_RAISE(keys->end_timestamp_ms, OptionalTimestamp(s, "end_timestamp", where));
  if (keys->start_version.has_value() == keys->start_timestamp_ms.has_value()) {
    return InvalidArgument("{}: source: exactly one of start_version and start_timestamp must be set", where);
  }
  if (keys->end_version && keys->end_timestamp_ms) {
    return InvalidArgument("{}: source: set end_version or end_timestamp, not both", where);
  }
  if (keys->start_version && keys->end_version && *keys->start_version > *keys->end_version) {
    return InvalidArgument("{}: source: start_version {} is after end_version {}", where, *keys->start_version,
                           *keys->end_version);
  }
  ARROW_ASSIGN_OR_RAISE(keys->poll_interval_seconds, OptionalPollInterval(s, where, streaming));
  return Status::OK();
}

}  // namespace lakesync::engine
