// Sink configuration: the options of the Iceberg sink, with the same keys and meaning as Apache Beam's
// Managed Iceberg write (shared/specs/beam-compat.md section 4), plus lakesync's own, parsed once at the
// edge into a typed struct and validated loudly.
//
//   table: db.orders_{region}            # required; {col} / {a.b} placeholders route rows (table_template.h)
//   catalog_name: prod
//   catalog_properties: {type: sql, uri: "sqlite:////srv/catalog.db", warehouse: "s3://wh"}
//   mode: merge-on-read                  # append (default) | merge-on-read, case-insensitive
//   equality_columns: [id]
//   change_type_column: op
//   change_type_map: {c: INSERT, u: UPDATE_AFTER, d: DELETE}
//   sink_id: orders-sync
//
// Input rules (one set for files, JSON and command-line overrides):
//   * Unknown keys are errors that suggest the closest known key. Keys are exact snake_case, as in Beam.
//   * A key whose value is null (`key:` with nothing after it in YAML) counts as absent.
//   * String keys need a string: `sink_id: 007` is a YAML number and is refused ("quote it"), because
//     turning it back into text would silently lose the leading zeros.
//   * Boolean keys take true/false, or the strings "true"/"false" (any case), because templating tools
//     and command lines produce strings; yes/no/on/off/1/0 are refused. Integer keys take whole
//     numbers, or strings of decimal digits; 16.0 is refused. Both must fit the key's range.
//   * List keys need a list of non-empty strings (a lone string is refused: write [id]).
//   * Map keys (map[str,str]) take scalars as values; numbers and booleans become their text
//     (`format-version: 2` → "2"). Nested lists or maps are refused. The YAML reader has already
//     turned unquoted numbers into numbers, so quote values whose spelling matters ('1.10', '007').
//
// Modes. Beam rejects, per mode, the options of the other mode; lakesync does the same with Beam's
// message ("The following options are not supported in 'append' mode: [upsert, num_shards]"), but
// lifts the limits that have no reason in lakesync: sink_id, snapshot_properties and error_handling
// (exactly-once and dead letters work for appends too) and write_properties (files are written in
// both modes) are valid in both modes.
//   merge-on-read only: equality_columns, sequence_number_column, change_type_column, change_type_map,
//                       upsert, delete_strategy, num_shards, shards_per_partition, sorter_memory_mb
//                       (and Beam's allowed_lateness_seconds, token_heartbeat_seconds)
//   append only:        Beam's distribution_mode, autosharding, direct_write_byte_limit,
//                       use_side_input_table_cache and its three table-cache sub-options
//
// Beam options lakesync accepts but does not act on (runner tuning that has no counterpart in one
// process, or problems lakesync does not have) are type-checked, mode-checked and listed in
// SinkConfig::ignored_options with the reason, so the application can warn once; see that field.
// `config_properties` (Hadoop configuration) is refused when non-empty: lakesync has no Hadoop, and
// ignoring it could drop credentials.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/catalog/catalog_config.h"
#include "lakesync/change/change_kind.h"
#include "lakesync/common/status.h"
#include "lakesync/table/row_deletes.h"

namespace lakesync::sink {

enum class WriteMode { kAppend, kMergeOnRead };
std::string_view WriteModeName(WriteMode mode);  // "append", "merge-on-read"

// delete_strategy: how merge-on-read removes the old version of a row. kPosition resolves each key to
// its (file, position) and writes deletion vectors on v3 tables, position delete files on v2;
// kEquality writes key-only equality delete files (Beam's only behaviour; a fallback here).
using DeleteStrategy = table::DeleteMode;
std::string_view DeleteStrategyName(DeleteStrategy strategy);  // "position", "equality"

inline constexpr int32_t kDefaultNumShards = 16;
inline constexpr int32_t kDefaultSorterMemoryMb = 100;
// sink_id is embedded in snapshot summary keys (lakesync.source-position.<sink_id>); these are the
// characters it may use, so the key stays one printable token that every engine and UI shows as is.
inline constexpr size_t kMaxSinkIdLength = 128;
inline constexpr char kSinkIdCharacters[] = "letters A-Z a-z, digits 0-9, '_', '-' and '.'";
// Snapshot summary key prefixes owned by lakesync's and Beam's exactly-once bookkeeping.
inline constexpr char kReservedSummaryPrefixLakesync[] = "lakesync.";
inline constexpr char kReservedSummaryPrefixBeam[] = "beam.cdc.";

// error_handling: {output: <location>}. Beam names an output collection; for lakesync `output` is the
// location (path or URI) of the dead-letter Parquet file that receives rows the sink cannot apply
// (null or missing sequence number, unknown change kind, null equality value, unresolvable table).
// Without it, such a row fails the run.
struct ErrorHandling {
  std::string output;
  bool operator==(const ErrorHandling&) const = default;
};

// A Beam option that was accepted but has no effect in lakesync, and why.
struct IgnoredOption {
  std::string key;
  std::string reason;
  nlohmann::json value;  // as given (a boolean, number or string of the key's type)
  bool operator==(const IgnoredOption&) const = default;
};

struct SinkConfig {
  // `table` (required): "ns.table", "a.b.table", or a template such as "db.orders_{region}" whose
  // placeholders name columns (dotted for nested fields) and route each row to its table.
  std::string table;
  // `catalog_name`: the catalog's name in messages and catalog lookups. Unset: the engine's catalog
  // (the job's, or the embedded default) is used.
  std::optional<std::string> catalog_name;
  // `catalog_properties`: Iceberg catalog properties (catalog_config.h). When given they are validated
  // here with ValidateCatalogConfig; absent: the engine's catalog.
  std::map<std::string, std::string> catalog_properties;
  // `mode`: append (default, as in Beam) or merge-on-read.
  WriteMode mode = WriteMode::kAppend;
  // `triggering_frequency_seconds` (> 0): how often a continuous job commits. Accepted now, used by
  // streaming jobs; batch runs commit once.
  std::optional<int32_t> triggering_frequency_seconds;

  // Projection before writing; at most one of the three. `keep` (non-empty): only these fields;
  // `drop`: these fields removed; `only`: write this one nested record field. In merge-on-read the
  // control columns are dropped unless listed in `keep`.
  std::optional<std::vector<std::string>> keep;
  std::optional<std::vector<std::string>> drop;
  std::optional<std::string> only;

  // Used only when the sink creates a table. `partition_fields`: "col", "bucket(col, 16)", "day(ts)"...;
  // `sort_fields`: "<term> [asc|desc] [nulls first|nulls last]". Checked here only as lists of strings;
  // the terms are checked against the schema (iceberg/model/spec_syntax.h) when the table is created.
  std::vector<std::string> partition_fields;
  std::vector<std::string> sort_fields;
  // `table_properties`: Iceberg table properties set at creation (e.g. format-version).
  std::map<std::string, std::string> table_properties;
  // `write_properties`: file-writer properties (e.g. write.parquet.compression-codec).
  std::map<std::string, std::string> write_properties;

  // --- merge-on-read ---
  // `equality_columns`: top-level columns identifying a row. Empty: the table's identifier fields;
  // required (by the writer) when the table must be created, as they become its identifier fields.
  std::vector<std::string> equality_columns;
  // `sequence_number_column`: the non-null INT64 column ordering one key's changes; removed before
  // writing.
  std::string sequence_number_column = change::kDefaultSequenceColumn;
  // `change_type_column`: the column holding each row's change kind; removed before writing. Unset:
  // the change stream's own change kind.
  std::optional<std::string> change_type_column;
  // `change_type_map`: source code → INSERT | UPDATE_BEFORE | UPDATE_AFTER | DELETE (values checked by
  // change::ChangeKindMapper). Needs change_type_column.
  std::map<std::string, std::string> change_type_map;
  // `upsert`: apply only after-images (INSERT, UPDATE_AFTER); UPDATE_BEFORE rows are dropped.
  bool upsert = false;
  // `delete_strategy` (lakesync): position (default) or equality.
  DeleteStrategy delete_strategy = DeleteStrategy::kPosition;
  // `num_shards` (>= 1): key-hash shards per destination, the write parallelism per table.
  int32_t num_shards = kDefaultNumShards;
  // `shards_per_partition` (1..num_shards): shards one partition's rows may use. Unset: num_shards.
  std::optional<int32_t> shards_per_partition;
  // `sorter_memory_mb` (>= 1): memory for the pre-write sort before it spills to disk.
  int32_t sorter_memory_mb = kDefaultSorterMemoryMb;

  // --- both modes in lakesync (merge-on-read only in Beam) ---
  // `sink_id`: the stable identity under which progress is recorded in snapshot summaries, 1 to
  // kMaxSinkIdLength characters from kSinkIdCharacters. Unset: no stable identity; the writer decides
  // what exactly-once guarantee it can still give.
  std::optional<std::string> sink_id;
  // `snapshot_properties`: extra snapshot summary entries on every commit; keys starting with
  // "lakesync." or "beam.cdc." (any case) are reserved.
  std::map<std::string, std::string> snapshot_properties;
  // `error_handling`: where rows that cannot be applied go; unset: fail the run.
  std::optional<ErrorHandling> error_handling;

  // The keys present in the input (absent and null keys excluded), for the mode check and for
  // ToJson. Not part of equality.
  std::set<std::string> given_keys;
  // Beam options accepted without effect, one entry per key (an override replaces the value). The
  // application should warn about each once. Not part of equality.
  std::vector<IgnoredOption> ignored_options;

  int32_t effective_shards_per_partition() const { return shards_per_partition.value_or(num_shards); }
  bool is_given(std::string_view key) const { return given_keys.count(std::string(key)) > 0; }
  // The catalog configuration when catalog_name or catalog_properties was given (catalog_name
  // defaulting to catalog::kDefaultCatalogName); nullopt when the engine's catalog should be used.
  std::optional<catalog::CatalogConfig> catalog() const;

  // Same settings: every typed field; given_keys and ignored_options are bookkeeping.
  bool operator==(const SinkConfig& other) const;
};

// Parses a sink block already decoded from YAML/JSON. `source` names the file or flag in every
// message ("jobs/orders.yaml: sink: upsert must be a boolean ..."); may be empty.
// Errors: InvalidArgument naming the key for unknown keys (with the closest known key), wrong types,
// bad values and contradictory options; Unsupported for non-empty config_properties; the errors of
// ValidateCatalogConfig (InvalidArgument / Unsupported) for catalog_properties.
Result<SinkConfig> ParseSinkConfig(const nlohmann::json& object, std::string_view source);

// Parses YAML or JSON text whose top level is the sink block, or a whole job document with a `sink`
// key (its other top-level keys belong to the job and are not looked at here).
// Errors: InvalidArgument for malformed YAML/JSON (with line and column), an empty document or a
// top level that is not a map; then as ParseSinkConfig.
Result<SinkConfig> ParseSinkConfigText(std::string_view text, std::string_view source);

// Reads a file and parses it as ParseSinkConfigText, naming the path in every message.
// Errors: NotFound when the file does not exist, IOError when it cannot be read; then as above.
Result<SinkConfig> LoadSinkConfigFile(const std::string& path);

// Applies one command-line override. `key` is a sink key in snake_case or with dashes, with or
// without leading dashes ("--equality-columns"), or "<map key>.<entry>" to set one entry of a map ("catalog_properties.uri",
// "table_properties.format-version", "error_handling.output"). `value` is parsed per the key's type:
// lists are comma-separated ("id,region"; partition_fields and sort_fields split only on top-level
// commas, so "bucket(id, 4),day(ts)" is two terms), maps are "k=v,k2=v2" and replace the whole map,
// booleans true/false, integers decimal; error_handling takes the location ("/tmp/dead.parquet") or
// "output=/tmp/dead.parquet". Checks the key's own value with the same messages as
// ParseSinkConfig; the checks that involve several keys (mode, keep/drop/only, change_type_map
// without change_type_column, shards_per_partition <= num_shards, ...) are left to
// ValidateSinkConfig, which the caller must run after the last override (ApplySinkOverrides does).
// Errors: InvalidArgument naming the key.
Status ApplySinkOverride(SinkConfig& config, std::string_view key, std::string_view value,
                         std::string_view source = "command line");
// Applies every override in order, then ValidateSinkConfig.
Status ApplySinkOverrides(SinkConfig& config, const std::vector<std::pair<std::string, std::string>>& overrides,
                          std::string_view source = "command line");

// Every check of ParseSinkConfig on an assembled config: per-key values and the checks across keys.
// Errors: as ParseSinkConfig.
Status ValidateSinkConfig(const SinkConfig& config, std::string_view source);

// The config as a sink block that ParseSinkConfig reads back to an equal config. With
// include_defaults, also the keys at their defaults that apply to the config's mode (for showing the
// effective configuration); without, only the given keys. Ignored Beam options are not written.
// catalog_properties are written as they are: redact secrets before logging the result.
nlohmann::json SinkConfigToJson(const SinkConfig& config, bool include_defaults = false);

// Documentation of a key, for --help and docs.
struct SinkKeyInfo {
  std::string_view key;
  std::string_view type;           // "str", "bool", "int32", "list[str]", "map[str,str]", "{output: str}"
  std::string_view default_value;  // "" when there is none
  std::string_view modes;          // "both", "append", "merge-on-read"
  bool used = true;                // false: a Beam option accepted without effect
  std::string_view help;
};
// All accepted keys, sorted by key.
const std::vector<SinkKeyInfo>& SinkKeyInfos();
// The keys lakesync acts on, sorted (ignored Beam options excluded).
std::vector<std::string> KnownSinkKeys();

}  // namespace lakesync::sink
