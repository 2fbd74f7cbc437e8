// Typed reading of a job's source block (the keys each source type accepts are checked by that
// source's opener). Every message names the job file and the key.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/common/status.h"

namespace lakesync::engine {

// Bounds and polling of the Delta-versioned sources: Delta tables and tables shared over Delta Sharing
// (Iceberg's changelog parses its own config).
struct SourceKeys {
  std::string table;
  std::optional<int64_t> start_version, end_version;
  std::optional<int64_t> start_timestamp_ms, end_timestamp_ms;
  bool as_of = false;  // an import at a timestamp: the last version at or before it
  double poll_interval_seconds = 60;
};

Result<std::string> RequiredString(const nlohmann::json& source, const char* key, std::string_view where,
                                   std::string_view what);
// A non-negative whole number (or a string of digits).
Result<std::optional<int64_t>> OptionalVersion(const nlohmann::json& source, const char* key, std::string_view where);
Result<std::vector<std::string>> OptionalStringList(const nlohmann::json& source, const char* key,
                                                    std::string_view where);
// Scalars become their text (s3.path-style-access: true → "true").
Result<std::map<std::string, std::string>> OptionalStringMap(const nlohmann::json& source, const char* key,
                                                             std::string_view where);
// An ISO-8601 time or epoch milliseconds (a YAML number or a string).
Result<std::optional<int64_t>> OptionalTimestamp(const nlohmann::json& source, const char* key, std::string_view where);
// include_metadata_columns of a Delta change feed (Delta tables and tables shared over Delta
// Sharing): the columns asked for, in their order, then _change_type and _commit_version, which the
// sink needs. Errors: InvalidArgument for an unknown or repeated column.
Result<std::vector<std::string>> ChangeFeedColumns(const nlohmann::json& source, std::string_view where);
// poll_interval_seconds: default 60, at least 1, and only meaningful with streaming.
Result<double> OptionalPollInterval(const nlohmann::json& source, std::string_view where, bool streaming);

// The keys that bound a Delta-versioned source (a Delta table, or one shared over Delta Sharing):
// with a change feed, start_version|start_timestamp (exactly one), end_version|end_timestamp (at most
// one), poll_interval_seconds and the feed's options; for a snapshot import, version|timestamp.
std::vector<std::string> VersionRangeKeyNames(bool change_feed);
// Reads those keys into `keys` and checks them against each other. Errors: InvalidArgument naming the
// job file and the keys.
Status ReadVersionRange(const nlohmann::json& source, bool change_feed, bool streaming, std::string_view where,
                        SourceKeys* keys);

}  // namespace lakesync::engine
