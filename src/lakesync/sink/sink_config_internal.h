// Internals of the sink configuration, shared by its files: value decoding (sink_values.cc) and the
// table that declares every key once (sink_keys.cc). Not for use outside src/lakesync/sink.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/sink/sink_config.h"

namespace lakesync::sink::internal {

using Json = nlohmann::json;
using StringMap = std::map<std::string, std::string>;
using StringList = std::vector<std::string>;

enum class KeyType { kString, kBool, kInt32, kStringList, kStringMap, kErrorHandling };
enum class Modes { kBoth, kAppend, kMergeOnRead };

inline constexpr char kKeyTable[] = "table";
inline constexpr char kKeyCatalogProperties[] = "catalog_properties";
inline constexpr char kKeyEqualityColumns[] = "equality_columns";
inline constexpr char kKeySequenceNumberColumn[] = "sequence_number_column";
inline constexpr char kKeyChangeTypeColumn[] = "change_type_column";
inline constexpr char kKeyChangeTypeMap[] = "change_type_map";
inline constexpr char kKeyNumShards[] = "num_shards";
inline constexpr char kKeyShardsPerPartition[] = "shards_per_partition";
inline constexpr char kKeyUseSideInputTableCache[] = "use_side_input_table_cache";
inline constexpr char kKeyErrorHandlingOutput[] = "output";

// The sub-options Beam accepts only together with use_side_input_table_cache: true.
inline constexpr const char* kTableCacheSubOptions[] = {
    "maximum_table_cache_size", "table_cache_polling_buckets", "table_cache_refresh_interval_seconds"};

// ---- values (sink_values.cc); every message names the key ----

bool StartsWith(std::string_view s, std::string_view prefix);
// "string \"abc\"", "number 5", "list [1,2]": what the user wrote, short enough for one line.
std::string Describe(const Json& value);

Result<std::string> DecodeString(std::string_view key, const Json& value);
Result<bool> DecodeBool(std::string_view key, const Json& value);
Result<int32_t> DecodeInt32(std::string_view key, const Json& value);
Result<StringList> DecodeStringList(std::string_view key, const Json& value);
Result<std::string> DecodeMapValue(std::string_view key, std::string_view name, const Json& value);
Result<StringMap> DecodeStringMap(std::string_view key, const Json& value);
Result<ErrorHandling> DecodeErrorHandling(std::string_view key, const Json& value);
Result<WriteMode> ParseMode(const std::string& text);
Result<DeleteStrategy> ParseDeleteStrategy(std::string_view key, const std::string& text);
Status AtLeast(std::string_view key, int64_t value, int64_t minimum);
Status NotEmpty(std::string_view key, const std::string& value);
Status CheckSinkId(std::string_view key, const std::string& id);
Status CheckSnapshotProperties(std::string_view key, const StringMap& properties);
Status CheckEqualityColumns(std::string_view key, const StringList& columns);

Json ToJson(const StringList& list);
Json ToJson(const StringMap& map);

// ---- keys (sink_keys.cc) ----

struct KeySpec {
  const char* key;
  KeyType type;
  Modes modes;
  bool used;  // false: a Beam option accepted without effect; `help` then says why
  const char* default_value;
  const char* help;
  // Decodes a non-null value and stores it (or records it as ignored).
  Status (*set)(SinkConfig& config, std::string_view key, const Json& value);
  // Checks the stored value on its own; null when decoding checks everything.
  Status (*check)(const SinkConfig& config, std::string_view key);
  // Writes the stored value to `out[key]`; writes nothing for an unset optional. Null for ignored keys.
  void (*emit)(const SinkConfig& config, std::string_view key, Json& out);
  // For map keys: the map, so one entry can be overridden.
  StringMap* (*map_field)(SinkConfig& config);
};

// Every key, sorted by name.
const std::vector<KeySpec>& Specs();
// The key's entry, or null for an unknown key.
const KeySpec* FindSpec(std::string_view key);
// InvalidArgument for an unknown key, naming the closest known key (or listing them all).
Status UnknownKey(std::string_view key);

}  // namespace lakesync::sink::internal
