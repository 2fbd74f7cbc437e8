#include <algorithm>
#include <cctype>
#include <limits>

#include "lakesync/common/config_keys.h"
#include "lakesync/common/text.h"
#include "lakesync/sink/sink_config_internal.h"
#include "lakesync/sink/table_template.h"

namespace lakesync::sink::internal {
namespace {

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

constexpr char kReasonNotLate[] =
    "lakesync applies changes in source order, not in event-time windows, so no row is ever late";
constexpr char kReasonDirectWrite[] = "lakesync has no separate direct-write path for small bundles";
constexpr char kReasonHeartbeat[] =
    "lakesync makes no idle heartbeat commits; its progress record does not rely on a recent token snapshot";
constexpr char kReasonOneProcess[] =
    "lakesync writes each table from one process, so there is no shuffle between workers to tune";
constexpr char kReasonShards[] =
    "lakesync writes each table's files from one process in one commit, so there are no writer shards to size "
    "(checked as Beam checks it, then without effect)";
constexpr char kReasonTableCache[] =
    "table metadata is cached by the one process that writes; there are no workers to share it with";

// ---- unknown keys: suggest the closest known one ----

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

}  // namespace

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
         const std::string lower = AsciiLower(text);
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
      {"num_shards", KeyType::kInt32, Modes::kMergeOnRead, false, "16", kReasonShards,
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.num_shards, DecodeInt32(k, v));
         return RecordIgnored(c, k, v, kReasonShards);
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
      {"shards_per_partition", KeyType::kInt32, Modes::kMergeOnRead, false, "num_shards", kReasonShards,
       [](SinkConfig& c, std::string_view k, const Json& v) -> Status {
         ARROW_ASSIGN_OR_RAISE(c.shards_per_partition, DecodeInt32(k, v));
         return RecordIgnored(c, k, v, kReasonShards);
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

}  // namespace lakesync::sink::internal
