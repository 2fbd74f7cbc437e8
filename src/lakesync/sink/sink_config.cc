#include "lakesync/sink/sink_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "lakesync/common/yaml_json.h"
#include "lakesync/sink/table_template.h"

namespace lakesync::sink {
namespace {

using Json = nlohmann::json;
using StringMap = std::map<std::string, std::string>;
using StringList = std::vector<std::string>;

enum class KeyType { kString, kBool, kInt32, kStringList, kStringMap, kErrorHandling };
enum class Modes { kBoth, kAppend, kMergeOnRead };

constexpr char kKeyTable[] = "table";
constexpr char kKeyCatalogName[] = "catalog_name";
constexpr char kKeyCatalogProperties[] = "catalog_properties";
constexpr char kKeyMode[] = "mode";
constexpr char kKeyKeep[] = "keep";
constexpr char kKeyDrop[] = "drop";
constexpr char kKeyOnly[] = "only";
constexpr char kKeyEqualityColumns[] = "equality_columns";
constexpr char kKeySequenceNumberColumn[] = "sequence_number_column";
constexpr char kKeyChangeTypeColumn[] = "change_type_column";
constexpr char kKeyChangeTypeMap[] = "change_type_map";
constexpr char kKeyNumShards[] = "num_shards";
constexpr char kKeyShardsPerPartition[] = "shards_per_partition";
constexpr char kKeyConfigProperties[] = "config_properties";
constexpr char kKeyUseSideInputTableCache[] = "use_side_input_table_cache";
constexpr char kKeyErrorHandlingOutput[] = "output";

// The sub-options Beam accepts only together with use_side_input_table_cache: true.
constexpr const char* kTableCacheSubOptions[] = {"maximum_table_cache_size", "table_cache_polling_buckets",
                                                 "table_cache_refresh_interval_seconds"};

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

Status WithSource(const Status& status, std::string_view source) {
  return source.empty() ? status : WithContext(status, source);
}

// "string \"abc\"", "number 5", "list [1,2]": what the user wrote, short enough for one line.
std::string Describe(const Json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  const char* kind = value.is_string()    ? "string"
                     : value.is_boolean() ? "boolean"
                     : value.is_number()  ? "number"
                     : value.is_array()   ? "list"
                     : value.is_object()  ? "map"
                                          : "null";
  return value.is_null() ? "null" : fmt::format("{} {}", kind, text);
}

// ---- decoding one JSON value per key type; messages name the key ----

Result<std::string> DecodeString(std::string_view key, const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  const bool scalar = value.is_number() || value.is_boolean();
  return InvalidArgument("{} must be a string, got {}{}", key, Describe(value),
                         scalar ? " (quote it in YAML: the text must be kept as written)" : "");
}

Result<bool> DecodeBool(std::string_view key, const Json& value) {
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_string()) {
    const std::string v = Lower(value.get<std::string>());
    if (v == "true") return true;
    if (v == "false") return false;
  }
  return InvalidArgument("{} must be a boolean (true or false), got {}", key, Describe(value));
}

Result<int32_t> DecodeInt32(std::string_view key, const Json& value) {
  int64_t v = 0;
  bool whole = false;
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      return InvalidArgument("{} is out of range for a 32-bit integer: {}", key, u);
    }
    v = static_cast<int64_t>(u);
    whole = true;
  } else if (value.is_number_integer()) {
    v = value.get<int64_t>();
    whole = true;
  } else if (value.is_string()) {
    const std::string s = value.get<std::string>();
    const char* begin = s.data() + (StartsWith(s, "+") ? 1 : 0);
    const char* end = s.data() + s.size();
    auto [ptr, ec] = std::from_chars(begin, end, v);
    if (begin != end && ptr == end) {
      if (ec == std::errc::result_out_of_range) {
        return InvalidArgument("{} is out of range for a 32-bit integer: {}", key, s);
      }
      whole = ec == std::errc();
    }
  }
  if (!whole) return InvalidArgument("{} must be an integer, got {}", key, Describe(value));
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("{} is out of range for a 32-bit integer: {}", key, v);
  }
  return static_cast<int32_t>(v);
}

Result<StringList> DecodeStringList(std::string_view key, const Json& value) {
  if (!value.is_array()) {
    if (value.is_string()) {
      return InvalidArgument("{} must be a list of strings, got {} (write [{}])", key, Describe(value),
                             value.get<std::string>());
    }
    return InvalidArgument("{} must be a list of strings, got {}", key, Describe(value));
  }
  StringList out;
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& item = value[i];
    if (!item.is_string()) {
      return InvalidArgument("{} must be a list of strings, but entry {} is {}", key, i + 1, Describe(item));
    }
    std::string text = item.get<std::string>();
    if (text.empty()) return InvalidArgument("{}: entry {} is empty", key, i + 1);
    if (std::find(out.begin(), out.end(), text) != out.end()) {
      return InvalidArgument("{} lists '{}' twice", key, text);
    }
    out.push_back(std::move(text));
  }
  return out;
}

// A map value as text. Numbers and booleans keep their JSON spelling (`format-version: 2` → "2").
Result<std::string> DecodeMapValue(std::string_view key, std::string_view name, const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number() || value.is_boolean()) return value.dump();
  return InvalidArgument("{}.{} must be a single value (string, number or boolean), got {}", key, name,
                         Describe(value));
}

Result<StringMap> DecodeStringMap(std::string_view key, const Json& value) {
  if (!value.is_object()) return InvalidArgument("{} must be a map of names to values, got {}", key, Describe(value));
  StringMap out;
  for (const auto& [name, item] : value.items()) {
    if (name.empty()) return InvalidArgument("{} has an entry with an empty name", key);
    ARROW_ASSIGN_OR_RAISE(out[name], DecodeMapValue(key, name, item));
  }
  return out;
}

Result<ErrorHandling> DecodeErrorHandling(std::string_view key, const Json& value) {
  if (!value.is_object()) {
    return InvalidArgument("{} must be a map {{output: <dead-letter file location>}}, got {}", key, Describe(value));
  }
  ErrorHandling out;
  bool has_output = false;
  for (const auto& [name, item] : value.items()) {
    if (name != kKeyErrorHandlingOutput) {
      return InvalidArgument("{}: unknown key '{}' (the only key is {})", key, name, kKeyErrorHandlingOutput);
    }
    if (item.is_null()) continue;
    ARROW_ASSIGN_OR_RAISE(out.output, DecodeString(fmt::format("{}.{}", key, name), item));
    has_output = true;
  }
  if (!has_output) return InvalidArgument("{}.{} is required: the location of the dead-letter file", key, kKeyErrorHandlingOutput);
  return out;
}

Result<WriteMode> ParseMode(const std::string& text) {
  const std::string v = Lower(text);
  if (v == "append") return WriteMode::kAppend;
  if (v == "merge-on-read") return WriteMode::kMergeOnRead;
  // Beam's message, word for word.
  return InvalidArgument("Unknown mode '{}'; expected 'append' or 'merge-on-read'.", text);
}

Result<DeleteStrategy> ParseDeleteStrategy(std::string_view key, const std::string& text) {
  const std::string v = Lower(text);
  if (v == "position") return DeleteStrategy::kPosition;
  if (v == "equality") return DeleteStrategy::kEquality;
  return InvalidArgument("{} must be 'position' or 'equality', got '{}'", key, text);
}

// ---- per-key value checks ----

Status AtLeast(std::string_view key, int64_t value, int64_t minimum) {
  if (value < minimum) return InvalidArgument("{} must be at least {}, got {}", key, minimum, value);
  return Status::OK();
}

Status NotEmpty(std::string_view key, const std::string& value) {
  if (value.empty()) return InvalidArgument("{} must not be empty", key);
  return Status::OK();
}

Status CheckSinkId(std::string_view key, const std::string& id) {
  if (id.empty()) return InvalidArgument("{} must not be empty (omit it to run without a stable sink identity)", key);
  if (id.size() > kMaxSinkIdLength) {
    return InvalidArgument("{} is {} characters long; at most {} are allowed", key, id.size(), kMaxSinkIdLength);
  }
  for (size_t i = 0; i < id.size(); ++i) {
    const unsigned char c = id[i];
    if (!(std::isalnum(c) && c < 0x80) && c != '_' && c != '-' && c != '.') {
      return InvalidArgument("{} '{}' has the character '{}' at position {}; a sink id is part of snapshot summary "
                             "keys and may use only {}",
                             key, id, id.substr(i, 1), i, kSinkIdCharacters);
    }
  }
  return Status::OK();
}

Status CheckSnapshotProperties(std::string_view key, const StringMap& properties) {
  for (const auto& [name, value] : properties) {
    for (std::string_view prefix : {kReservedSummaryPrefixLakesync, kReservedSummaryPrefixBeam}) {
      if (StartsWith(Lower(name), prefix)) {
        return InvalidArgument("{}: '{}' uses the reserved prefix '{}', which belongs to the sinks' exactly-once "
                               "bookkeeping",
                               key, name, prefix);
      }
    }
  }
  return Status::OK();
}

Status CheckEqualityColumns(std::string_view key, const StringList& columns) {
  for (const auto& column : columns) {
    if (column.find('.') != std::string::npos) {
      return InvalidArgument("{}: '{}' is a nested field; equality columns must be top-level columns", key, column);
    }
  }
  return Status::OK();
}

// ---- the key table: every key once, with its type, modes, default and documentation ----

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

Status RecordIgnored(SinkConfig& config, std::string_view key, const Json& value, const char* reason) {
  auto it = std::find_if(config.ignored_options.begin(), config.ignored_options.end(),
                         [&](const IgnoredOption& o) { return o.key == key; });
  if (it == config.ignored_options.end()) {
    config.ignored_options.push_back({std::string(key), reason, value});
  } else {
    it->value = value;
  }
  return Status::OK();
}

Json ToJson(const StringList& list) { return Json(list); }
Json ToJson(const StringMap& map) {
  Json out = Json::object();
  for (const auto& [k, v] : map) out[k] = v;
  return out;
}

constexpr char kReasonNotLate[] =
    "lakesync applies changes in source order, not in event-time windows, so no row is ever late";
constexpr char kReasonDirectWrite[] = "lakesync has no separate direct-write path for small bundles";
constexpr char kReasonHeartbeat[] =
    "lakesync makes no idle heartbeat commits; its progress record does not rely on a recent token snapshot";
constexpr char kReasonOneProcess[] =
    "lakesync writes each table from one process, so there is no shuffle between workers to tune";
constexpr char kReasonTableCache[] =
    "table metadata is cached by the one process that writes; there are no workers to share it with";

const std::vector<KeySpec>& Specs() {
  static const std::vector<KeySpec> specs = {
      {"allowed_lateness_seconds", KeyType::kInt32, Modes::kMergeOnRead, false, "21600", kReasonNotLate,
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(int32_t n, DecodeInt32(k, v));
         ARROW_RETURN_NOT_OK(AtLeast(k, n, 0));
         return RecordIgnored(c, k, v, kReasonNotLate);
       },
       nullptr, nullptr, nullptr},
      {"autosharding", KeyType::kBool, Modes::kAppend, false, "false", kReasonOneProcess,
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_RETURN_NOT_OK(DecodeBool(k, v).status());
         return RecordIgnored(c, k, v, kReasonOneProcess);
       },
       nullptr, nullptr, nullptr},
      {"catalog_name", KeyType::kString, Modes::kBoth, true, "",
       "name of the catalog holding the table; unset: the engine's catalog",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.catalog_name, DecodeString(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status {
         return c.catalog_name ? NotEmpty(k, *c.catalog_name) : Status::OK();
       },
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (c.catalog_name) out[std::string(k)] = *c.catalog_name;
       },
       nullptr},
      {"catalog_properties", KeyType::kStringMap, Modes::kBoth, true, "",
       "Iceberg catalog properties (type, uri, warehouse, ...); unset: the engine's catalog",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.catalog_properties, DecodeStringMap(k, v));
         return Status::OK();
       },
       nullptr,
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (!c.catalog_properties.empty()) out[std::string(k)] = ToJson(c.catalog_properties);
       },
       [](SinkConfig& c) { return &c.catalog_properties; }},
      {"change_type_column", KeyType::kString, Modes::kMergeOnRead, true, "",
       "column holding each row's change kind, removed before writing; unset: the change stream's own kind",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.change_type_column, DecodeString(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status {
         return c.change_type_column ? NotEmpty(k, *c.change_type_column) : Status::OK();
       },
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (c.change_type_column) out[std::string(k)] = *c.change_type_column;
       },
       nullptr},
      {"change_type_map", KeyType::kStringMap, Modes::kMergeOnRead, true, "",
       "source change code -> INSERT | UPDATE_BEFORE | UPDATE_AFTER | DELETE; needs change_type_column",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.change_type_map, DecodeStringMap(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status {
         // An empty map in the struct means unset (the canonical and Delta names apply); given as
         // `change_type_map: {}` it is a mistake.
         if (c.is_given(k) && c.change_type_map.empty()) {
           return InvalidArgument("{} must not be empty (omit it to use the names INSERT, UPDATE_BEFORE, "
                                  "UPDATE_AFTER, DELETE and Delta's insert, delete, update_preimage, "
                                  "update_postimage)",
                                  k);
         }
         return change::ChangeKindMapper::Make(c.change_type_map).status();
       },
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (!c.change_type_map.empty()) out[std::string(k)] = ToJson(c.change_type_map);
       },
       [](SinkConfig& c) { return &c.change_type_map; }},
      {"config_properties", KeyType::kStringMap, Modes::kBoth, false, "",
       "Hadoop configuration; lakesync has no Hadoop layer, so only an empty map is accepted",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(StringMap properties, DecodeStringMap(k, v));
         if (!properties.empty()) {
           return Unsupported("{} (Hadoop configuration) is not supported: lakesync has no Hadoop layer; put "
                              "storage settings in catalog_properties (s3.*, gcs.*, adls.*) instead",
                              k);
         }
         return Status::OK();
       },
       nullptr, nullptr, nullptr},
      {"delete_strategy", KeyType::kString, Modes::kMergeOnRead, true, "position",
       "position: deletion vectors (v3) or position delete files (v2); equality: equality delete files",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(std::string text, DecodeString(k, v));
         ARROW_ASSIGN_OR_RAISE(c.delete_strategy, ParseDeleteStrategy(k, text));
         return Status::OK();
       },
       nullptr,
       [](const SinkConfig& c, std::string_view k, Json& out) {
         out[std::string(k)] = std::string(DeleteStrategyName(c.delete_strategy));
       },
       nullptr},
      {"direct_write_byte_limit", KeyType::kInt32, Modes::kAppend, false, "", kReasonDirectWrite,
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_RETURN_NOT_OK(DecodeInt32(k, v).status());
         return RecordIgnored(c, k, v, kReasonDirectWrite);
       },
       nullptr, nullptr, nullptr},
      {"distribution_mode", KeyType::kString, Modes::kAppend, false, "none", kReasonOneProcess,
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(std::string text, DecodeString(k, v));
         const std::string lower = Lower(text);
         if (lower != "none" && lower != "hash" && lower != "range") {
           return InvalidArgument("{} must be 'none', 'hash' or 'range', got '{}'", k, text);
         }
         return RecordIgnored(c, k, v, kReasonOneProcess);
       },
       nullptr, nullptr, nullptr},
      {"drop", KeyType::kStringList, Modes::kBoth, true, "",
       "fields removed from each row before writing; exclusive with keep and only",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.drop, DecodeStringList(k, v));
         return Status::OK();
       },
       nullptr,
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (c.drop) out[std::string(k)] = ToJson(*c.drop);
       },
       nullptr},
      {"equality_columns", KeyType::kStringList, Modes::kMergeOnRead, true, "the table's identifier fields",
       "top-level columns identifying a row; required to create a table",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.equality_columns, DecodeStringList(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status { return CheckEqualityColumns(k, c.equality_columns); },
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (!c.equality_columns.empty()) out[std::string(k)] = ToJson(c.equality_columns);
       },
       nullptr},
      {"error_handling", KeyType::kErrorHandling, Modes::kBoth, true, "",
       "{output: <location>}: dead-letter Parquet file for rows that cannot be applied; unset: fail the run",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.error_handling, DecodeErrorHandling(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status {
         if (c.error_handling && c.error_handling->output.empty()) {
           return InvalidArgument("{}.{} must not be empty", k, kKeyErrorHandlingOutput);
         }
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (c.error_handling) out[std::string(k)] = Json{{kKeyErrorHandlingOutput, c.error_handling->output}};
       },
       nullptr},
      {"keep", KeyType::kStringList, Modes::kBoth, true, "",
       "only these fields are written; exclusive with drop and only",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.keep, DecodeStringList(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status {
         if (c.keep && c.keep->empty()) {
           return InvalidArgument("{} must list at least one column (omit {} to write every column)", k, k);
         }
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (c.keep) out[std::string(k)] = ToJson(*c.keep);
       },
       nullptr},
      {"maximum_table_cache_size", KeyType::kInt32, Modes::kAppend, false, "", kReasonTableCache,
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_RETURN_NOT_OK(DecodeInt32(k, v).status());
         return RecordIgnored(c, k, v, kReasonTableCache);
       },
       nullptr, nullptr, nullptr},
      {"mode", KeyType::kString, Modes::kBoth, true, "append",
       "append: every row is new data; merge-on-read: rows are changes applied by key (case-insensitive)",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(std::string text, DecodeString(k, v));
         ARROW_ASSIGN_OR_RAISE(c.mode, ParseMode(text));
         return Status::OK();
       },
       nullptr,
       [](const SinkConfig& c, std::string_view k, Json& out) { out[std::string(k)] = std::string(WriteModeName(c.mode)); },
       nullptr},
      {"num_shards", KeyType::kInt32, Modes::kMergeOnRead, true, "16",
       "key-hash shards per table, the write parallelism per table; >= 1",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.num_shards, DecodeInt32(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status { return AtLeast(k, c.num_shards, 1); },
       [](const SinkConfig& c, std::string_view k, Json& out) { out[std::string(k)] = c.num_shards; }, nullptr},
      {"only", KeyType::kString, Modes::kBoth, true, "",
       "the one nested record field to write; exclusive with keep and drop",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.only, DecodeString(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status { return c.only ? NotEmpty(k, *c.only) : Status::OK(); },
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (c.only) out[std::string(k)] = *c.only;
       },
       nullptr},
      {"partition_fields", KeyType::kStringList, Modes::kBoth, true, "unpartitioned",
       "partition spec for a created table: col, bucket(col, N), truncate(col, N), year/month/day/hour(col), "
       "void(col)",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.partition_fields, DecodeStringList(k, v));
         return Status::OK();
       },
       nullptr,
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (!c.partition_fields.empty()) out[std::string(k)] = ToJson(c.partition_fields);
       },
       nullptr},
      {"sequence_number_column", KeyType::kString, Modes::kMergeOnRead, true, change::kDefaultSequenceColumn,
       "non-null INT64 column ordering one key's changes, removed before writing",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.sequence_number_column, DecodeString(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status { return NotEmpty(k, c.sequence_number_column); },
       [](const SinkConfig& c, std::string_view k, Json& out) { out[std::string(k)] = c.sequence_number_column; },
       nullptr},
      {"shards_per_partition", KeyType::kInt32, Modes::kMergeOnRead, true, "num_shards",
       "shards one partition's rows may use; 1..num_shards",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.shards_per_partition, DecodeInt32(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status {
         return c.shards_per_partition ? AtLeast(k, *c.shards_per_partition, 1) : Status::OK();
       },
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (c.shards_per_partition) out[std::string(k)] = *c.shards_per_partition;
       },
       nullptr},
      {"sink_id", KeyType::kString, Modes::kBoth, true, "",
       "stable identity under which progress is recorded in snapshot summaries (exactly-once); [A-Za-z0-9_.-]",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.sink_id, DecodeString(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status { return c.sink_id ? CheckSinkId(k, *c.sink_id) : Status::OK(); },
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (c.sink_id) out[std::string(k)] = *c.sink_id;
       },
       nullptr},
      {"snapshot_properties", KeyType::kStringMap, Modes::kBoth, true, "",
       "extra snapshot summary entries on every commit; prefixes lakesync. and beam.cdc. are reserved",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.snapshot_properties, DecodeStringMap(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status { return CheckSnapshotProperties(k, c.snapshot_properties); },
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (!c.snapshot_properties.empty()) out[std::string(k)] = ToJson(c.snapshot_properties);
       },
       [](SinkConfig& c) { return &c.snapshot_properties; }},
      {"sort_fields", KeyType::kStringList, Modes::kBoth, true, "unsorted",
       "sort order for a created table: <term> [asc|desc] [nulls first|nulls last]",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.sort_fields, DecodeStringList(k, v));
         return Status::OK();
       },
       nullptr,
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (!c.sort_fields.empty()) out[std::string(k)] = ToJson(c.sort_fields);
       },
       nullptr},
      {"sorter_memory_mb", KeyType::kInt32, Modes::kMergeOnRead, true, "100",
       "memory (MB) for the pre-write sort before it spills to disk; >= 1",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.sorter_memory_mb, DecodeInt32(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status { return AtLeast(k, c.sorter_memory_mb, 1); },
       [](const SinkConfig& c, std::string_view k, Json& out) { out[std::string(k)] = c.sorter_memory_mb; }, nullptr},
      {"table", KeyType::kString, Modes::kBoth, true, "",
       "required: NAMESPACE.TABLE, or a template such as db.orders_{region} routing rows to several tables",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.table, DecodeString(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status {
         // An unset table is reported by the cross-key check ("table is required").
         return c.table.empty() ? Status::OK() : ValidateTableTemplate(c.table);
       },
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (!c.table.empty()) out[std::string(k)] = c.table;
       },
       nullptr},
      {"table_cache_polling_buckets", KeyType::kInt32, Modes::kAppend, false, "1", kReasonTableCache,
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_RETURN_NOT_OK(DecodeInt32(k, v).status());
         return RecordIgnored(c, k, v, kReasonTableCache);
       },
       nullptr, nullptr, nullptr},
      {"table_cache_refresh_interval_seconds", KeyType::kInt32, Modes::kAppend, false, "", kReasonTableCache,
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_RETURN_NOT_OK(DecodeInt32(k, v).status());
         return RecordIgnored(c, k, v, kReasonTableCache);
       },
       nullptr, nullptr, nullptr},
      {"table_properties", KeyType::kStringMap, Modes::kBoth, true, "",
       "Iceberg table properties for a created table (e.g. format-version)",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.table_properties, DecodeStringMap(k, v));
         return Status::OK();
       },
       nullptr,
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (!c.table_properties.empty()) out[std::string(k)] = ToJson(c.table_properties);
       },
       [](SinkConfig& c) { return &c.table_properties; }},
      {"token_heartbeat_seconds", KeyType::kInt32, Modes::kMergeOnRead, false, "", kReasonHeartbeat,
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(int32_t n, DecodeInt32(k, v));
         ARROW_RETURN_NOT_OK(AtLeast(k, n, 1));
         return RecordIgnored(c, k, v, kReasonHeartbeat);
       },
       nullptr, nullptr, nullptr},
      {"triggering_frequency_seconds", KeyType::kInt32, Modes::kBoth, true, "",
       "how often a continuous job commits, > 0; batch runs commit once",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.triggering_frequency_seconds, DecodeInt32(k, v));
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k) -> Status {
         if (c.triggering_frequency_seconds && *c.triggering_frequency_seconds <= 0) {
           return InvalidArgument("{} must be greater than 0, got {}", k, *c.triggering_frequency_seconds);
         }
         return Status::OK();
       },
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (c.triggering_frequency_seconds) out[std::string(k)] = *c.triggering_frequency_seconds;
       },
       nullptr},
      {"upsert", KeyType::kBool, Modes::kMergeOnRead, true, "false",
       "apply only after-images (INSERT, UPDATE_AFTER); UPDATE_BEFORE rows are dropped",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.upsert, DecodeBool(k, v));
         return Status::OK();
       },
       nullptr, [](const SinkConfig& c, std::string_view k, Json& out) { out[std::string(k)] = c.upsert; }, nullptr},
      {"use_side_input_table_cache", KeyType::kBool, Modes::kAppend, false, "false", kReasonTableCache,
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_RETURN_NOT_OK(DecodeBool(k, v).status());
         return RecordIgnored(c, k, v, kReasonTableCache);
       },
       nullptr, nullptr, nullptr},
      {"write_properties", KeyType::kStringMap, Modes::kBoth, true, "",
       "file-writer properties (e.g. write.parquet.compression-codec)",
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.write_properties, DecodeStringMap(k, v));
         return Status::OK();
       },
       nullptr,
       [](const SinkConfig& c, std::string_view k, Json& out) {
         if (!c.write_properties.empty()) out[std::string(k)] = ToJson(c.write_properties);
       },
       [](SinkConfig& c) { return &c.write_properties; }},
  };
  return specs;
}

const KeySpec* FindSpec(std::string_view key) {
  for (const auto& spec : Specs()) {
    if (key == spec.key) return &spec;
  }
  return nullptr;
}

// ---- unknown keys: suggest the closest known one ----

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "equalityColumns", "Equality-Columns" → "equality_columns": the spellings other tools use.
std::string Normalize(std::string_view key) {
  std::string out;
  for (size_t i = 0; i < key.size(); ++i) {
    const unsigned char c = key[i];
    if (std::isupper(c) && i > 0 && std::islower(static_cast<unsigned char>(key[i - 1]))) out.push_back('_');
    out.push_back(c == '-' || c == ' ' ? '_' : static_cast<char>(std::tolower(c)));
  }
  return out;
}

Status UnknownKey(std::string_view key) {
  const std::string normalized = Normalize(key);
  const KeySpec* best = nullptr;
  size_t best_distance = std::numeric_limits<size_t>::max();
  for (const auto& spec : Specs()) {
    const size_t d = EditDistance(normalized, spec.key);
    if (d < best_distance) best_distance = d, best = &spec;
  }
  if (best && best_distance <= std::max<size_t>(2, std::string_view(best->key).size() / 4)) {
    return InvalidArgument("unknown key '{}'; did you mean '{}'?", key, best->key);
  }
  return InvalidArgument("unknown key '{}'; known keys: {}", key, fmt::join(KnownSinkKeys(), ", "));
}

// ---- checks across keys ----

bool IsSet(const SinkConfig& config, const KeySpec& spec) {
  if (config.is_given(spec.key)) return true;
  if (!spec.emit) return false;
  // A config assembled in code has no given_keys; a value that differs from the default is set.
  static const SinkConfig kDefaults;
  Json mine = Json::object(), defaults = Json::object();
  spec.emit(config, spec.key, mine);
  spec.emit(kDefaults, spec.key, defaults);
  return mine != defaults;
}

bool AppliesTo(Modes modes, WriteMode mode) {
  return modes == Modes::kBoth || (modes == Modes::kAppend) == (mode == WriteMode::kAppend);
}

Status CheckModeOptions(const SinkConfig& config) {
  std::vector<std::string> unsupported;
  for (const auto& spec : Specs()) {
    if (!AppliesTo(spec.modes, config.mode) && IsSet(config, spec)) unsupported.push_back(spec.key);
  }
  if (unsupported.empty()) return Status::OK();
  const WriteMode other = config.mode == WriteMode::kAppend ? WriteMode::kMergeOnRead : WriteMode::kAppend;
  return InvalidArgument("The following options are not supported in '{}' mode: [{}] (they apply only in '{}' mode)",
                         WriteModeName(config.mode), fmt::join(unsupported, ", "), WriteModeName(other));
}

bool Contains(const StringList& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// True when `entry` is `path` or one of its enclosing records ("a" for "a.b").
bool Covers(std::string_view entry, std::string_view path) {
  return path == entry || (StartsWith(path, entry) && path.size() > entry.size() && path[entry.size()] == '.');
}

Status CheckProjection(const SinkConfig& config) {
  std::vector<std::string> given;
  if (config.keep) given.push_back("keep");
  if (config.drop) given.push_back("drop");
  if (config.only) given.push_back("only");
  if (given.size() > 1) {
    return InvalidArgument("keep, drop and only are mutually exclusive; given: {}", fmt::join(given, ", "));
  }
  if (config.mode != WriteMode::kMergeOnRead) return Status::OK();
  // Merge-on-read needs the key and the routing columns in the rows it writes. Nothing is known
  // about the fields inside `only` until the schema is, so that case is left to the writer.
  for (const auto& column : config.equality_columns) {
    if (config.drop && Contains(*config.drop, column)) {
      return InvalidArgument("equality_columns: '{}' is removed by drop, so rows could not be matched by key", column);
    }
    if (config.keep && !Contains(*config.keep, column)) {
      return InvalidArgument("equality_columns: '{}' is not listed in keep, so rows could not be matched by key",
                             column);
    }
  }
  for (const auto& placeholder : TemplatePlaceholders(config.table)) {
    const auto covers = [&](const std::string& entry) { return Covers(entry, placeholder); };
    if (config.drop && std::any_of(config.drop->begin(), config.drop->end(), covers)) {
      return InvalidArgument("table '{}': the placeholder {{{}}} names a field that drop removes", config.table,
                             placeholder);
    }
    if (config.keep && std::none_of(config.keep->begin(), config.keep->end(), covers)) {
      return InvalidArgument("table '{}': the placeholder {{{}}} names a field that keep does not keep", config.table,
                             placeholder);
    }
  }
  return Status::OK();
}

Status CheckControlColumns(const SinkConfig& config) {
  if ((config.is_given(kKeyChangeTypeMap) || !config.change_type_map.empty()) && !config.change_type_column) {
    return InvalidArgument("{} needs {}: the map translates that column's values", kKeyChangeTypeMap,
                           kKeyChangeTypeColumn);
  }
  if (config.change_type_column && *config.change_type_column == config.sequence_number_column) {
    return InvalidArgument("{} and {} must name different columns; both are '{}'", kKeySequenceNumberColumn,
                           kKeyChangeTypeColumn, config.sequence_number_column);
  }
  if (config.mode != WriteMode::kMergeOnRead) return Status::OK();
  for (const auto& column : config.equality_columns) {
    if (column == config.sequence_number_column) {
      return InvalidArgument("{}: '{}' is the {}, which is removed before writing", kKeyEqualityColumns, column,
                             kKeySequenceNumberColumn);
    }
    if (config.change_type_column && column == *config.change_type_column) {
      return InvalidArgument("{}: '{}' is the {}, which is removed before writing", kKeyEqualityColumns, column,
                             kKeyChangeTypeColumn);
    }
  }
  return Status::OK();
}

Status CheckShards(const SinkConfig& config) {
  if (config.shards_per_partition && *config.shards_per_partition > config.num_shards) {
    return InvalidArgument("{} must be between 1 and {} ({}), got {}", kKeyShardsPerPartition, kKeyNumShards,
                           config.num_shards, *config.shards_per_partition);
  }
  return Status::OK();
}

Status CheckTableCacheOptions(const SinkConfig& config) {
  bool cache_enabled = false;
  std::vector<std::string> sub_options;
  for (const auto& ignored : config.ignored_options) {
    if (ignored.key == kKeyUseSideInputTableCache) {
      cache_enabled = ignored.value.is_boolean() ? ignored.value.get<bool>() : Lower(ignored.value.get<std::string>()) == "true";
    }
    for (const char* sub : kTableCacheSubOptions) {
      if (ignored.key == sub) sub_options.push_back(sub);
    }
  }
  if (cache_enabled || sub_options.empty()) return Status::OK();
  // Beam's message names keys that do not exist; this one names the real ones.
  return InvalidArgument("{} can only be set together with {}: true; given without it: [{}]",
                         fmt::join(kTableCacheSubOptions, ", "), kKeyUseSideInputTableCache,
                         fmt::join(sub_options, ", "));
}

Status CheckCatalog(const SinkConfig& config) {
  if (!config.is_given(kKeyCatalogProperties) && config.catalog_properties.empty()) return Status::OK();
  return catalog::ValidateCatalogConfig(*config.catalog());
}

Status Validate(const SinkConfig& config) {
  if (config.table.empty()) {
    if (config.is_given(kKeyTable)) return InvalidArgument("table must not be empty");
    return InvalidArgument("table is required (NAMESPACE.TABLE or a template such as db.orders_{{region}})");
  }
  for (const auto& spec : Specs()) {
    if (spec.check) ARROW_RETURN_NOT_OK(spec.check(config, spec.key));
  }
  ARROW_RETURN_NOT_OK(CheckModeOptions(config));
  ARROW_RETURN_NOT_OK(CheckProjection(config));
  ARROW_RETURN_NOT_OK(CheckControlColumns(config));
  ARROW_RETURN_NOT_OK(CheckShards(config));
  ARROW_RETURN_NOT_OK(CheckTableCacheOptions(config));
  return CheckCatalog(config);
}

Status SetKey(SinkConfig& config, const KeySpec& spec, const Json& value) {
  ARROW_RETURN_NOT_OK(spec.set(config, spec.key, value));
  config.given_keys.insert(spec.key);
  return spec.check ? spec.check(config, spec.key) : Status::OK();
}

Result<SinkConfig> Parse(const Json& object) {
  if (!object.is_object()) {
    return InvalidArgument("expected a map of sink options (table, mode, ...), got {}", Describe(object));
  }
  SinkConfig config;
  for (const auto& [key, value] : object.items()) {
    const KeySpec* spec = FindSpec(key);
    if (!spec) return UnknownKey(key);
    if (value.is_null()) continue;  // `key:` with no value counts as absent
    ARROW_RETURN_NOT_OK(SetKey(config, *spec, value));
  }
  ARROW_RETURN_NOT_OK(Validate(config));
  return config;
}

// ---- command-line values ----

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Splits on commas outside parentheses and brackets, so "bucket(id, 4),day(ts)" is two terms. Empty
// entries are kept (and refused by DecodeStringList) so that "id,,region" does not pass silently.
std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> out;
  if (Trim(text).empty()) return out;
  int depth = 0;
  std::string current;
  for (char c : text) {
    if (c == '(' || c == '[') ++depth;
    if ((c == ')' || c == ']') && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      out.push_back(Trim(current));
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  out.push_back(Trim(current));
  return out;
}

Result<Json> OverrideValue(const KeySpec& spec, std::string_view value) {
  switch (spec.type) {
    case KeyType::kString:
    case KeyType::kBool:
    case KeyType::kInt32: return Json(std::string(value));
    case KeyType::kStringList: return Json(SplitList(value));
    case KeyType::kErrorHandling: return Json{{kKeyErrorHandlingOutput, std::string(value)}};
    case KeyType::kStringMap: {
      Json out = Json::object();
      for (const auto& entry : SplitList(value)) {
        const size_t eq = entry.find('=');
        if (eq == std::string::npos || eq == 0) {
          return InvalidArgument("{}: '{}' is not name=value (write {}=a=1,b=2, or {}.a=1 for one entry)", spec.key,
                                 entry, spec.key, spec.key);
        }
        out[Trim(entry.substr(0, eq))] = Trim(entry.substr(eq + 1));
      }
      return out;
    }
  }
  return Json();
}

Status ApplyOverride(SinkConfig& config, std::string_view raw_key, std::string_view value) {
  std::string_view key = raw_key;
  while (StartsWith(key, "-")) key.remove_prefix(1);
  const size_t dot = key.find('.');
  std::string head(key.substr(0, dot));
  std::replace(head.begin(), head.end(), '-', '_');
  const KeySpec* spec = FindSpec(head);
  if (!spec) return UnknownKey(raw_key);
  if (dot == std::string_view::npos) {
    ARROW_ASSIGN_OR_RAISE(Json json, OverrideValue(*spec, value));
    return SetKey(config, *spec, json);
  }
  // One entry of a map (or error_handling.output): the rest of the key is the entry's name, as written.
  const std::string entry(key.substr(dot + 1));
  if (spec->type == KeyType::kErrorHandling) {
    Json json = Json::object();
    json[entry] = std::string(value);
    return SetKey(config, *spec, json);
  }
  if (!spec->map_field) {
    return InvalidArgument("{}: '{}' is not a map, so '{}' cannot name one of its entries", raw_key, spec->key, entry);
  }
  if (entry.empty()) return InvalidArgument("{}: the entry name after '{}.' is empty", raw_key, spec->key);
  Json json = ToJson(*spec->map_field(config));
  json[entry] = std::string(value);
  return SetKey(config, *spec, json);
}

}  // namespace

std::string_view WriteModeName(WriteMode mode) {
  return mode == WriteMode::kMergeOnRead ? "merge-on-read" : "append";
}

std::string_view DeleteStrategyName(DeleteStrategy strategy) {
  return strategy == DeleteStrategy::kEquality ? "equality" : "position";
}

std::optional<catalog::CatalogConfig> SinkConfig::catalog() const {
  if (!catalog_name && catalog_properties.empty() && !is_given(kKeyCatalogProperties)) return std::nullopt;
  catalog::CatalogConfig config;
  if (catalog_name) config.catalog_name = *catalog_name;
  config.catalog_properties = catalog_properties;
  return config;
}

bool SinkConfig::operator==(const SinkConfig& o) const {
  return std::tie(table, catalog_name, catalog_properties, mode, triggering_frequency_seconds, keep, drop, only,
                  partition_fields, sort_fields, table_properties, write_properties, equality_columns,
                  sequence_number_column, change_type_column, change_type_map, upsert, delete_strategy, num_shards,
                  shards_per_partition, sorter_memory_mb, sink_id, snapshot_properties, error_handling) ==
         std::tie(o.table, o.catalog_name, o.catalog_properties, o.mode, o.triggering_frequency_seconds, o.keep, o.drop,
                  o.only, o.partition_fields, o.sort_fields, o.table_properties, o.write_properties,
                  o.equality_columns, o.sequence_number_column, o.change_type_column, o.change_type_map, o.upsert,
                  o.delete_strategy, o.num_shards, o.shards_per_partition, o.sorter_memory_mb, o.sink_id,
                  o.snapshot_properties, o.error_handling);
}

Result<SinkConfig> ParseSinkConfig(const nlohmann::json& object, std::string_view source) {
  auto config = Parse(object);
  if (!config.ok()) return WithSource(config.status(), source);
  return config;
}

Result<SinkConfig> ParseSinkConfigText(std::string_view text, std::string_view source) {
  ARROW_ASSIGN_OR_RAISE(Json document, ParseYamlOrJson(text, source));
  if (document.is_null()) {
    return WithSource(InvalidArgument("the document is empty: expected sink options (table, mode, ...) or a job "
                                      "with a sink: block"),
                      source);
  }
  if (document.is_object() && document.contains("sink")) {
    const std::string sink_source = source.empty() ? std::string("sink") : fmt::format("{}: sink", source);
    const Json& sink = document["sink"];
    if (!sink.is_object()) {
      return WithSource(InvalidArgument("sink must be a map of sink options (table, mode, ...), got {}",
                                        Describe(sink)),
                        source);
    }
    return ParseSinkConfig(sink, sink_source);
  }
  return ParseSinkConfig(document, source);
}

Result<SinkConfig> LoadSinkConfigFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound("sink configuration file {} does not exist", path);
  if (std::filesystem::is_directory(path, ec)) return IOError("sink configuration file {} is a directory", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return IOError("cannot open sink configuration file {}", path);
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return IOError("reading sink configuration file {}", path);
  return ParseSinkConfigText(text.str(), path);
}

Status ApplySinkOverride(SinkConfig& config, std::string_view key, std::string_view value, std::string_view source) {
  // On a copy, so a refused override leaves the config as it was.
  SinkConfig updated = config;
  ARROW_RETURN_NOT_OK(WithSource(ApplyOverride(updated, key, value), source));
  config = std::move(updated);
  return Status::OK();
}

Status ApplySinkOverrides(SinkConfig& config, const std::vector<std::pair<std::string, std::string>>& overrides,
                          std::string_view source) {
  SinkConfig updated = config;
  for (const auto& [key, value] : overrides) ARROW_RETURN_NOT_OK(ApplySinkOverride(updated, key, value, source));
  ARROW_RETURN_NOT_OK(ValidateSinkConfig(updated, source));
  config = std::move(updated);
  return Status::OK();
}

Status ValidateSinkConfig(const SinkConfig& config, std::string_view source) {
  return WithSource(Validate(config), source);
}

nlohmann::json SinkConfigToJson(const SinkConfig& config, bool include_defaults) {
  Json out = Json::object();
  for (const auto& spec : Specs()) {
    if (!spec.emit) continue;
    const bool wanted = include_defaults ? AppliesTo(spec.modes, config.mode) : IsSet(config, spec);
    if (wanted) spec.emit(config, spec.key, out);
  }
  return out;
}

const std::vector<SinkKeyInfo>& SinkKeyInfos() {
  static const std::vector<SinkKeyInfo> infos = [] {
    std::vector<SinkKeyInfo> out;
    for (const auto& spec : Specs()) {
      static constexpr std::string_view kTypes[] = {"str", "bool", "int32", "list[str]", "map[str,str]",
                                                    "{output: str}"};
      static constexpr std::string_view kModes[] = {"both", "append", "merge-on-read"};
      out.push_back({spec.key, kTypes[static_cast<int>(spec.type)], spec.default_value,
                     kModes[static_cast<int>(spec.modes)], spec.used, spec.help});
    }
    std::sort(out.begin(), out.end(), [](const SinkKeyInfo& a, const SinkKeyInfo& b) { return a.key < b.key; });
    return out;
  }();
  return infos;
}

std::vector<std::string> KnownSinkKeys() {
  std::vector<std::string> keys;
  for (const auto& info : SinkKeyInfos()) {
    if (info.used) keys.emplace_back(info.key);
  }
  return keys;
}

}  // namespace lakesync::sink
