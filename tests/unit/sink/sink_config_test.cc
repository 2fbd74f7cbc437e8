// Sink configuration: defaults, the value rules, and every validation error (each must name its key
// and the file). Expected defaults and messages come from shared/specs/beam-compat.md section 4 and
// the decisions documented in sink_config.h.
#include "lakesync/sink/sink_config.h"

#include <algorithm>

#include "sink_test_util.h"

namespace lakesync::sink {
namespace {

using testing::ExpectFailure;

constexpr char kSource[] = "jobs/orders.yaml";
constexpr char kMor[] = "table: db.orders\nmode: merge-on-read\n";

SinkConfig WithTable(std::string table) {
  SinkConfig config;
  config.table = std::move(table);
  return config;
}

Result<SinkConfig> FromYaml(const std::string& yaml) { return ParseSinkConfigText(yaml, kSource); }

// `yaml` must fail with `kind`, naming the file and every needle.
void ExpectError(const std::string& yaml, std::vector<std::string> needles,
                 ErrorKind kind = ErrorKind::kInvalidArgument) {
  needles.push_back(kSource);
  ExpectFailure(FromYaml(yaml), kind, needles, yaml);
}

TEST(SinkConfigTest, DefaultsFollowBeam) {
  ASSERT_OK_AND_ASSIGN(SinkConfig config, FromYaml("table: db.orders"));
  EXPECT_EQ(config.table, "db.orders");
  EXPECT_EQ(config.mode, WriteMode::kAppend);
  EXPECT_EQ(config.sequence_number_column, "_commit_snapshot_sequence_number");
  EXPECT_FALSE(config.change_type_column.has_value());
  EXPECT_TRUE(config.change_type_map.empty());
  EXPECT_TRUE(config.equality_columns.empty());
  EXPECT_FALSE(config.upsert);
  EXPECT_EQ(config.num_shards, 16);
  EXPECT_FALSE(config.shards_per_partition.has_value());
  EXPECT_EQ(config.effective_shards_per_partition(), 16);
  EXPECT_EQ(config.sorter_memory_mb, 100);
  EXPECT_EQ(config.delete_strategy, DeleteStrategy::kPosition);
  EXPECT_FALSE(config.sink_id.has_value());
  EXPECT_FALSE(config.triggering_frequency_seconds.has_value());
  EXPECT_FALSE(config.error_handling.has_value());
  EXPECT_FALSE(config.keep || config.drop || config.only);
  EXPECT_FALSE(config.catalog().has_value());
  EXPECT_TRUE(config.ignored_options.empty());
  EXPECT_EQ(config.given_keys, std::set<std::string>{"table"});
  EXPECT_EQ(config, WithTable("db.orders"));
}

// The write block of seed 000 (Delta CDC into Iceberg), plus lakesync's own options.
TEST(SinkConfigTest, ParsesAMergeOnReadBlock) {
  ASSERT_OK_AND_ASSIGN(SinkConfig config, FromYaml(R"yaml(
table: sales.orders
catalog_name: lakehouse
catalog_properties:
  type: hadoop
  warehouse: /tmp/lakesync-sink-test-wh
mode: Merge-On-Read
sequence_number_column: _commit_version
equality_columns: [order_id]
change_type_column: _change_type
change_type_map:
  insert: INSERT
  delete: DELETE
  update_preimage: UPDATE_BEFORE
  update_postimage: UPDATE_AFTER
upsert: false
num_shards: 8
shards_per_partition: 2
sorter_memory_mb: 256
sink_id: orders-sync.v1
snapshot_properties: {team: data, run: 7}
delete_strategy: EQUALITY
partition_fields: ["bucket(order_id, 4)", "day(ts)"]
sort_fields: ["order_id desc nulls last"]
table_properties: {format-version: 3}
write_properties: {write.parquet.compression-codec: zstd}
triggering_frequency_seconds: 60
error_handling: {output: /tmp/dead-letter.parquet}
)yaml"));
  EXPECT_EQ(config.mode, WriteMode::kMergeOnRead);
  EXPECT_EQ(config.sequence_number_column, "_commit_version");
  EXPECT_EQ(config.equality_columns, std::vector<std::string>{"order_id"});
  EXPECT_EQ(config.change_type_column, "_change_type");
  EXPECT_EQ(config.change_type_map.size(), 4u);
  EXPECT_EQ(config.change_type_map.at("update_postimage"), "UPDATE_AFTER");
  EXPECT_EQ(config.num_shards, 8);
  EXPECT_EQ(config.effective_shards_per_partition(), 2);
  EXPECT_EQ(config.sorter_memory_mb, 256);
  EXPECT_EQ(config.sink_id, "orders-sync.v1");
  EXPECT_EQ(config.snapshot_properties, (std::map<std::string, std::string>{{"team", "data"}, {"run", "7"}}));
  EXPECT_EQ(config.delete_strategy, DeleteStrategy::kEquality);
  EXPECT_EQ(config.partition_fields, (std::vector<std::string>{"bucket(order_id, 4)", "day(ts)"}));
  EXPECT_EQ(config.sort_fields, std::vector<std::string>{"order_id desc nulls last"});
  EXPECT_EQ(config.table_properties.at("format-version"), "3");
  EXPECT_EQ(config.write_properties.at("write.parquet.compression-codec"), "zstd");
  EXPECT_EQ(config.triggering_frequency_seconds, 60);
  ASSERT_TRUE(config.error_handling);
  EXPECT_EQ(config.error_handling->output, "/tmp/dead-letter.parquet");
  auto catalog = config.catalog();
  ASSERT_TRUE(catalog);
  EXPECT_EQ(catalog->catalog_name, "lakehouse");
  EXPECT_EQ(catalog->catalog_properties.at("type"), "hadoop");
}

TEST(SinkConfigTest, JsonAndYamlGiveTheSameConfig) {
  ASSERT_OK_AND_ASSIGN(SinkConfig from_yaml, FromYaml(R"(
table: db.t_{region}
mode: merge-on-read
equality_columns: [id, region]
change_type_column: op
change_type_map: {c: INSERT, u: UPDATE_AFTER, d: DELETE}
upsert: true
)"));
  ASSERT_OK_AND_ASSIGN(SinkConfig from_json,
                       FromYaml(R"({"table": "db.t_{region}", "mode": "merge-on-read", "equality_columns": ["id",
                                   "region"], "change_type_column": "op", "change_type_map": {"c": "INSERT",
                                   "u": "UPDATE_AFTER", "d": "DELETE"}, "upsert": true})"));
  EXPECT_EQ(from_yaml, from_json);
  EXPECT_TRUE(from_json.upsert);
  ASSERT_OK_AND_ASSIGN(SinkConfig parsed, ParseSinkConfig(nlohmann::json::parse(R"({"table": "db.t_{region}",
      "mode": "merge-on-read", "equality_columns": ["id", "region"], "change_type_column": "op",
      "change_type_map": {"c": "INSERT", "u": "UPDATE_AFTER", "d": "DELETE"}, "upsert": true})"),
                                                         "flag --sink-json"));
  EXPECT_EQ(parsed, from_yaml);
}

TEST(SinkConfigTest, NullCountsAsAbsent) {
  ASSERT_OK_AND_ASSIGN(SinkConfig config, FromYaml("table: db.t\nsink_id:\nupsert: null\nkeep: ~\n"));
  EXPECT_EQ(config, WithTable("db.t"));
  EXPECT_EQ(config.given_keys, std::set<std::string>{"table"});
}

TEST(SinkConfigTest, ScalarSpellings) {
  // Booleans and integers may be strings in their canonical spelling (sink_config.h).
  ASSERT_OK_AND_ASSIGN(SinkConfig config,
                       FromYaml(std::string(kMor) + "upsert: 'TRUE'\nnum_shards: '32'\nsorter_memory_mb: +5\n"));
  EXPECT_TRUE(config.upsert);
  EXPECT_EQ(config.num_shards, 32);
  EXPECT_EQ(config.sorter_memory_mb, 5);
  ASSERT_OK_AND_ASSIGN(config, FromYaml(std::string(kMor) + "upsert: \"false\"\n"));
  EXPECT_FALSE(config.upsert);
  ExpectError(std::string(kMor) + "upsert: yes", {"upsert must be a boolean", "\"yes\""});
  ExpectError(std::string(kMor) + "upsert: 1", {"upsert must be a boolean", "number 1"});
  ExpectError(std::string(kMor) + "upsert: [true]", {"upsert must be a boolean"});
  ExpectError(std::string(kMor) + "num_shards: 16.0", {"num_shards must be an integer", "16.0"});
  ExpectError(std::string(kMor) + "num_shards: 'sixteen'", {"num_shards must be an integer", "sixteen"});
  ExpectError(std::string(kMor) + "num_shards: '16 '", {"num_shards must be an integer"});
  ExpectError(std::string(kMor) + "num_shards: 2147483648", {"num_shards", "out of range", "2147483648"});
  ExpectError(std::string(kMor) + "num_shards: '-2147483649'", {"num_shards", "out of range"});
  ExpectError(std::string(kMor) + "num_shards: 99999999999999999999", {"num_shards"});
  ExpectError("table: db.t\ntriggering_frequency_seconds: true", {"triggering_frequency_seconds must be an integer"});
}

TEST(SinkConfigTest, StringKeysNeedStrings) {
  ExpectError("table: db.t\nsink_id: 007", {"sink_id must be a string", "quote it"});
  ExpectError("table: 2024", {"table must be a string", "number 2024"});
  ExpectError("table: [db.t]", {"table must be a string", "list"});
  ExpectError("table: db.t\nonly: {a: 1}", {"only must be a string", "map"});
  ExpectError("table: db.t\nmode: true", {"mode must be a string", "boolean true"});
  ExpectError("table: db.t\ncatalog_name: 5", {"catalog_name must be a string"});
}

TEST(SinkConfigTest, ListKeysNeedListsOfStrings) {
  ExpectError(std::string(kMor) + "equality_columns: id", {"equality_columns must be a list of strings", "[id]"});
  ExpectError(std::string(kMor) + "equality_columns: [id, 5]", {"equality_columns must be a list of strings",
                                                                 "entry 2", "number 5"});
  ExpectError(std::string(kMor) + "equality_columns: [id, '']", {"equality_columns", "entry 2 is empty"});
  ExpectError(std::string(kMor) + "equality_columns: [id, id]", {"equality_columns lists 'id' twice"});
  ExpectError("table: db.t\npartition_fields: {a: b}", {"partition_fields must be a list of strings", "map"});
  ExpectError("table: db.t\nsort_fields: [[a]]", {"sort_fields must be a list of strings"});
  ExpectError("table: db.t\ndrop: 3", {"drop must be a list of strings"});
}

TEST(SinkConfigTest, MapKeysNeedMapsOfScalars) {
  ASSERT_OK_AND_ASSIGN(SinkConfig config,
                       FromYaml("table: db.t\ntable_properties: {format-version: 2, a: true, b: 1.5, c: x}\n"));
  EXPECT_EQ(config.table_properties,
            (std::map<std::string, std::string>{{"format-version", "2"}, {"a", "true"}, {"b", "1.5"}, {"c", "x"}}));
  ExpectError("table: db.t\ntable_properties: [a]", {"table_properties must be a map"});
  ExpectError("table: db.t\nwrite_properties: {a: [1]}", {"write_properties.a must be a single value"});
  ExpectError("table: db.t\nsnapshot_properties: {a: }", {"snapshot_properties.a must be a single value", "null"});
  ExpectError("table: db.t\ncatalog_properties: 'type=sql'", {"catalog_properties must be a map"});
  ExpectError("table: db.t\ntable_properties: {'': x}", {"table_properties", "empty name"});
}

TEST(SinkConfigTest, UnknownKeysSuggestTheClosest) {
  ExpectError("table: db.t\nequality_column: [id]", {"unknown key 'equality_column'", "did you mean 'equality_columns'"});
  ExpectError("table: db.t\nsorter_memory_m_b: 5", {"unknown key 'sorter_memory_m_b'", "'sorter_memory_mb'"});
  ExpectError("table: db.t\nequalityColumns: [id]", {"'equalityColumns'", "did you mean 'equality_columns'"});
  ExpectError("table: db.t\nsink-id: x", {"'sink-id'", "did you mean 'sink_id'"});
  ExpectError("table: db.t\nwatermark_strategy: x", {"unknown key 'watermark_strategy'", "known keys:", "upsert"});
  ExpectError("[table]", {"expected a map of sink options", "list"});
  ExpectError("just-a-string", {"expected a map of sink options"});
}

TEST(SinkConfigTest, TableIsRequiredAndChecked) {
  ExpectError("mode: append", {"table is required"});
  ExpectError("table: ''", {"table must not be empty"});
  ExpectError("table: orders", {"table 'orders'", "NAMESPACE.TABLE"});
  ExpectError("table: db..orders", {"table 'db..orders'"});
  ExpectError("table: db.orders_{region", {"table 'db.orders_{region'", "not closed"});
  ExpectError("table: db.orders_}x", {"table", "no matching"});
  ExpectError("table: 'db.t_{}'", {"table", "empty placeholder"});
  ExpectError("table: 'db.t_{a..b}'", {"table", "{a..b}", "empty name part"});
  ExpectError("table: 'db.t_{ a }'", {"table", "whitespace"});
  ExpectError("table: 'db.t_{a{b}}'", {"table", "do not nest"});
  ExpectError("table: '{ns}.'", {"table '{ns}.'"});
  ASSERT_OK(FromYaml("table: '{ns}.events_{a.b}'").status());
}

TEST(SinkConfigTest, ModeValues) {
  ASSERT_OK_AND_ASSIGN(SinkConfig config, FromYaml("table: db.t\nmode: APPEND"));
  EXPECT_EQ(config.mode, WriteMode::kAppend);
  ASSERT_OK_AND_ASSIGN(config, FromYaml("table: db.t\nmode: merge-ON-read"));
  EXPECT_EQ(config.mode, WriteMode::kMergeOnRead);
  ExpectError("table: db.t\nmode: upsert", {"Unknown mode 'upsert'; expected 'append' or 'merge-on-read'."});
  ExpectError("table: db.t\nmode: merge_on_read", {"Unknown mode 'merge_on_read'"});
}

TEST(SinkConfigTest, OptionsOfTheOtherModeAreRefusedTogether) {
  ExpectError("table: db.t\nupsert: false\nnum_shards: 4\nequality_columns: [id]\n",
              {"The following options are not supported in 'append' mode: [equality_columns, num_shards, upsert]",
               "merge-on-read"});
  for (const char* key : {"sequence_number_column: s", "change_type_column: op", "shards_per_partition: 1",
                          "sorter_memory_mb: 5", "delete_strategy: position", "allowed_lateness_seconds: 5",
                          "token_heartbeat_seconds: 5"}) {
    const std::string line(key);
    ExpectError("table: db.t\n" + line, {"not supported in 'append' mode", line.substr(0, line.find(':'))});
  }
  ExpectError(std::string(kMor) + "distribution_mode: hash\nautosharding: true\n",
              {"not supported in 'merge-on-read' mode: [autosharding, distribution_mode]", "'append'"});
  ExpectError(std::string(kMor) + "use_side_input_table_cache: true", {"'merge-on-read'", "use_side_input_table_cache"});
  ExpectError(std::string(kMor) + "direct_write_byte_limit: 10", {"'merge-on-read'", "direct_write_byte_limit"});
}

// Beam limits these to merge-on-read; lakesync accepts them in append mode (sink_config.h).
TEST(SinkConfigTest, LakesyncAcceptsInBothModes) {
  ASSERT_OK_AND_ASSIGN(SinkConfig config, FromYaml(R"(
table: db.t
sink_id: s1
snapshot_properties: {owner: me}
error_handling: {output: gs://b/dead.parquet}
write_properties: {write.parquet.row-group-size-bytes: 1024}
)"));
  EXPECT_EQ(config.mode, WriteMode::kAppend);
  EXPECT_EQ(config.sink_id, "s1");
  ASSERT_OK(FromYaml(std::string(kMor) + "write_properties: {a: b}\n").status());
}

TEST(SinkConfigTest, ProjectionOptions) {
  ExpectError("table: db.t\nkeep: [a]\ndrop: [b]", {"keep, drop and only are mutually exclusive", "keep, drop"});
  ExpectError("table: db.t\nkeep: [a]\nonly: b", {"mutually exclusive", "keep, only"});
  ExpectError("table: db.t\ndrop: [a]\nonly: b", {"mutually exclusive", "drop, only"});
  ExpectError("table: db.t\nkeep: []", {"keep must list at least one column"});
  ExpectError("table: db.t\nonly: ''", {"only must not be empty"});
  ASSERT_OK_AND_ASSIGN(SinkConfig config, FromYaml("table: db.t\ndrop: []"));
  EXPECT_TRUE(config.drop && config.drop->empty());
}

TEST(SinkConfigTest, MergeOnReadNeedsKeyAndRoutingColumnsAfterProjection) {
  ExpectError(std::string(kMor) + "equality_columns: [id]\ndrop: [id]", {"equality_columns", "'id'", "drop"});
  ExpectError(std::string(kMor) + "equality_columns: [id]\nkeep: [name]", {"equality_columns", "'id'", "keep"});
  ASSERT_OK(FromYaml(std::string(kMor) + "equality_columns: [id]\nkeep: [id, name]").status());
  ExpectError("table: db.t_{region}\nmode: merge-on-read\ndrop: [region]", {"table", "{region}", "drop"});
  ExpectError("table: db.t_{a.b}\nmode: merge-on-read\ndrop: [a]", {"table", "{a.b}", "drop"});
  ExpectError("table: db.t_{region}\nmode: merge-on-read\nkeep: [id]", {"table", "{region}", "keep"});
  ASSERT_OK(FromYaml("table: db.t_{a.b}\nmode: merge-on-read\nkeep: [a]").status());
  ASSERT_OK(FromYaml("table: db.t_{ab}\nmode: merge-on-read\ndrop: [a]").status());
  // Append routes on the row before projection, as Beam does.
  ASSERT_OK(FromYaml("table: db.t_{region}\ndrop: [region]").status());
}

TEST(SinkConfigTest, ControlColumns) {
  ExpectError(std::string(kMor) + "change_type_map: {c: INSERT}", {"change_type_map needs change_type_column"});
  ExpectError(std::string(kMor) + "change_type_column: op\nchange_type_map: {c: CREATE}",
              {"change_type_map", "'c'", "CREATE"});
  ExpectError(std::string(kMor) + "change_type_column: op\nchange_type_map: {}", {"change_type_map must not be empty"});
  ExpectError(std::string(kMor) + "change_type_column: seq\nsequence_number_column: seq",
              {"sequence_number_column and change_type_column", "'seq'"});
  ExpectError(std::string(kMor) + "change_type_column: _commit_snapshot_sequence_number",
              {"sequence_number_column and change_type_column", "_commit_snapshot_sequence_number"});
  ExpectError(std::string(kMor) + "sequence_number_column: ''", {"sequence_number_column must not be empty"});
  ExpectError(std::string(kMor) + "change_type_column: ''", {"change_type_column must not be empty"});
  ExpectError(std::string(kMor) + "equality_columns: [a.b]", {"equality_columns", "'a.b'", "top-level"});
  ExpectError(std::string(kMor) + "equality_columns: [id, _commit_snapshot_sequence_number]",
              {"equality_columns", "sequence_number_column"});
  ExpectError(std::string(kMor) + "change_type_column: op\nequality_columns: [op]",
              {"equality_columns", "'op'", "change_type_column"});
  ASSERT_OK_AND_ASSIGN(SinkConfig config,
                       FromYaml(std::string(kMor) + "change_type_column: op\nchange_type_map: {c: insert}"));
  EXPECT_EQ(config.change_type_map.at("c"), "insert");
}

TEST(SinkConfigTest, NumericRanges) {
  ExpectError(std::string(kMor) + "num_shards: 0", {"num_shards must be at least 1, got 0"});
  ExpectError(std::string(kMor) + "shards_per_partition: 0", {"shards_per_partition must be at least 1, got 0"});
  ExpectError(std::string(kMor) + "shards_per_partition: 17", {"shards_per_partition must be between 1 and num_shards (16), got 17"});
  ExpectError(std::string(kMor) + "num_shards: 4\nshards_per_partition: 8", {"shards_per_partition", "(4), got 8"});
  ASSERT_OK(FromYaml(std::string(kMor) + "num_shards: 4\nshards_per_partition: 4").status());
  ExpectError(std::string(kMor) + "sorter_memory_mb: 0", {"sorter_memory_mb must be at least 1, got 0"});
  ExpectError("table: db.t\ntriggering_frequency_seconds: 0", {"triggering_frequency_seconds must be greater than 0"});
  ExpectError("table: db.t\ntriggering_frequency_seconds: -5", {"triggering_frequency_seconds", "-5"});
}

TEST(SinkConfigTest, DeleteStrategy) {
  ASSERT_OK_AND_ASSIGN(SinkConfig config, FromYaml(std::string(kMor) + "delete_strategy: Position"));
  EXPECT_EQ(config.delete_strategy, DeleteStrategy::kPosition);
  ExpectError(std::string(kMor) + "delete_strategy: dv", {"delete_strategy must be 'position' or 'equality'", "'dv'"});
}

TEST(SinkConfigTest, SnapshotPropertiesReservedPrefixes) {
  for (const char* key : {"lakesync.source-position.x", "LakeSync.Mine", "beam.cdc.sink-id"}) {
    ExpectError(std::string("table: db.t\nsnapshot_properties: {'") + key + "': v}", {"snapshot_properties", key,
                                                                                        "reserved prefix"});
  }
  ASSERT_OK(FromYaml("table: db.t\nsnapshot_properties: {lakesync-owner: v, beam.other: w}").status());
}

TEST(SinkConfigTest, SinkId) {
  ExpectError("table: db.t\nsink_id: ''", {"sink_id must not be empty"});
  ExpectError("table: db.t\nsink_id: 'a b'", {"sink_id 'a b'", "' '", "position 1"});
  ExpectError("table: db.t\nsink_id: 'a/b'", {"sink_id", "'/'"});
  ExpectError("table: db.t\nsink_id: 'a=b'", {"sink_id", "'='"});
  ExpectError("table: db.t\nsink_id: " + std::string(129, 'x'), {"sink_id", "129", "128"});
  ASSERT_OK(FromYaml("table: db.t\nsink_id: " + std::string(128, 'x')).status());
  ASSERT_OK(FromYaml("table: db.t\nsink_id: Orders_sync-2.v1").status());
}

TEST(SinkConfigTest, ErrorHandlingShape) {
  ExpectError("table: db.t\nerror_handling: /tmp/x", {"error_handling must be a map {output:"});
  ExpectError("table: db.t\nerror_handling: {}", {"error_handling.output is required"});
  ExpectError("table: db.t\nerror_handling: {output: ''}", {"error_handling.output must not be empty"});
  ExpectError("table: db.t\nerror_handling: {output: 5}", {"error_handling.output must be a string"});
  ExpectError("table: db.t\nerror_handling: {output: x, tag: y}", {"error_handling", "unknown key 'tag'"});
}

TEST(SinkConfigTest, CatalogKeys) {
  ExpectError("table: db.t\ncatalog_properties: {type: sql, warehouse: /tmp/w}", {"catalog_properties.uri"});
  ExpectError("table: db.t\ncatalog_properties: {warehouse: /tmp/w}", {"catalog_properties.type"});
  ExpectError("table: db.t\ncatalog_properties: {}", {"catalog_properties.type"});
  ExpectError("table: db.t\ncatalog_properties: {type: rest, uri: 'http://x', rest.auth.type: sigv4}",
              {"rest.auth.type", "sigv4"}, ErrorKind::kUnsupported);
  ExpectError("table: db.t\ncatalog_name: ''", {"catalog_name must not be empty"});
  // A name alone is left to the engine (a job-level catalog of that name, or the default).
  ASSERT_OK_AND_ASSIGN(SinkConfig config, FromYaml("table: db.t\ncatalog_name: prod"));
  ASSERT_TRUE(config.catalog());
  EXPECT_EQ(config.catalog()->catalog_name, "prod");
  EXPECT_TRUE(config.catalog()->catalog_properties.empty());
  ASSERT_OK_AND_ASSIGN(config, FromYaml("table: db.t\ncatalog_properties: {type: hadoop, warehouse: /tmp/w}"));
  EXPECT_EQ(config.catalog()->catalog_name, catalog::kDefaultCatalogName);
}

TEST(SinkConfigTest, BeamOptionsWithoutEffectAreListed) {
  ASSERT_OK_AND_ASSIGN(SinkConfig config, FromYaml(R"(
table: db.t
distribution_mode: hash
autosharding: true
use_side_input_table_cache: 'true'
table_cache_polling_buckets: 4
config_properties: {}
)"));
  std::vector<std::string> keys;
  for (const auto& ignored : config.ignored_options) {
    keys.push_back(ignored.key);
    EXPECT_FALSE(ignored.reason.empty()) << ignored.key;
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"autosharding", "distribution_mode", "table_cache_polling_buckets",
                                            "use_side_input_table_cache"}));
  ASSERT_OK_AND_ASSIGN(config, FromYaml(std::string(kMor) + "allowed_lateness_seconds: 0\ntoken_heartbeat_seconds: 9"));
  EXPECT_EQ(config.ignored_options.size(), 2u);
  // Writer shards have no meaning in one process: checked as Beam checks them, then reported
  // (docs/sink.md promises it).
  ASSERT_OK_AND_ASSIGN(config, FromYaml(std::string(kMor) + "num_shards: 8\nshards_per_partition: 2"));
  keys.clear();
  for (const auto& ignored : config.ignored_options) keys.push_back(ignored.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"num_shards", "shards_per_partition"}));
  ExpectError("table: db.t\ndistribution_mode: round-robin", {"distribution_mode must be 'none', 'hash' or 'range'"});
  ExpectError(std::string(kMor) + "token_heartbeat_seconds: 0", {"token_heartbeat_seconds must be at least 1"});
  ExpectError(std::string(kMor) + "allowed_lateness_seconds: -1", {"allowed_lateness_seconds must be at least 0"});
  ExpectError("table: db.t\nautosharding: maybe", {"autosharding must be a boolean"});
  // Beam's message names keys that do not exist; ours names the real ones.
  ExpectError("table: db.t\nmaximum_table_cache_size: 5\ntable_cache_refresh_interval_seconds: 9",
              {"use_side_input_table_cache: true", "[maximum_table_cache_size, table_cache_refresh_interval_seconds]"});
  ExpectError("table: db.t\nuse_side_input_table_cache: false\ntable_cache_polling_buckets: 2",
              {"use_side_input_table_cache", "table_cache_polling_buckets"});
  ExpectError("table: db.t\nconfig_properties: {fs.s3a.access.key: k}", {"config_properties", "catalog_properties"},
              ErrorKind::kUnsupported);
}

TEST(SinkConfigTest, ValidateAssembledConfig) {
  SinkConfig config = WithTable("db.t");
  ASSERT_OK(ValidateSinkConfig(config, "code"));
  // Without given_keys, a value that differs from its default counts as set.
  config.upsert = true;
  ExpectFailure(ValidateSinkConfig(config, "code"), ErrorKind::kInvalidArgument,
                {"code: The following options are not supported in 'append' mode: [upsert]"});
  config.mode = WriteMode::kMergeOnRead;
  ASSERT_OK(ValidateSinkConfig(config, "code"));
  config.num_shards = 0;
  ExpectFailure(ValidateSinkConfig(config, ""), ErrorKind::kInvalidArgument, {"num_shards must be at least 1"});
  config.num_shards = 2;
  config.change_type_map = {{"x", "DELETE"}};
  ExpectFailure(ValidateSinkConfig(config, "code"), ErrorKind::kInvalidArgument, {"change_type_map needs"});
  ExpectFailure(ValidateSinkConfig(SinkConfig{}, "code"), ErrorKind::kInvalidArgument, {"table is required"});
}

TEST(SinkConfigTest, RoundTripsThroughJson) {
  for (const std::string& yaml :
       {std::string("table: db.t"),
        std::string(kMor) + "equality_columns: [id]\nchange_type_column: op\nchange_type_map: {c: INSERT}\n"
                            "num_shards: 4\nshards_per_partition: 2\nsink_id: s\nkeep: [id, v]\n"
                            "error_handling: {output: /tmp/d.parquet}\ndelete_strategy: equality\n",
        std::string("table: db.t_{r}\ncatalog_name: c\ncatalog_properties: {type: hadoop, warehouse: /tmp/w}\n"
                    "only: after\npartition_fields: [r]\nsort_fields: [id]\ntable_properties: {a: '1'}\n"
                    "triggering_frequency_seconds: 5\nsnapshot_properties: {x: y}\n")}) {
    ASSERT_OK_AND_ASSIGN(SinkConfig config, FromYaml(yaml));
    const nlohmann::json given = SinkConfigToJson(config);
    ASSERT_OK_AND_ASSIGN(SinkConfig again, ParseSinkConfig(given, "round trip"));
    EXPECT_EQ(again, config) << given.dump();
    EXPECT_EQ(again.given_keys, config.given_keys) << given.dump();
    const nlohmann::json effective = SinkConfigToJson(config, /*include_defaults=*/true);
    ASSERT_OK_AND_ASSIGN(SinkConfig from_effective, ParseSinkConfig(effective, "effective"));
    EXPECT_EQ(from_effective, config) << effective.dump();
  }
}

TEST(SinkConfigTest, EffectiveConfigShowsTheDefaultsOfTheMode) {
  ASSERT_OK_AND_ASSIGN(SinkConfig append, FromYaml("table: db.t"));
  EXPECT_EQ(SinkConfigToJson(append), nlohmann::json({{"table", "db.t"}}));
  const nlohmann::json effective = SinkConfigToJson(append, true);
  EXPECT_EQ(effective.at("mode"), "append");
  EXPECT_FALSE(effective.contains("num_shards"));
  EXPECT_FALSE(effective.contains("upsert"));
  ASSERT_OK_AND_ASSIGN(SinkConfig mor, FromYaml(kMor));
  const nlohmann::json mor_effective = SinkConfigToJson(mor, true);
  EXPECT_EQ(mor_effective.at("num_shards"), 16);
  EXPECT_EQ(mor_effective.at("sorter_memory_mb"), 100);
  EXPECT_EQ(mor_effective.at("upsert"), false);
  EXPECT_EQ(mor_effective.at("delete_strategy"), "position");
  EXPECT_EQ(mor_effective.at("sequence_number_column"), "_commit_snapshot_sequence_number");
}

TEST(SinkConfigTest, KeyDocumentation) {
  const auto& infos = SinkKeyInfos();
  EXPECT_TRUE(std::is_sorted(infos.begin(), infos.end(),
                             [](const SinkKeyInfo& a, const SinkKeyInfo& b) { return a.key < b.key; }));
  for (const auto& info : infos) {
    EXPECT_FALSE(info.help.empty()) << info.key;
    EXPECT_FALSE(info.type.empty()) << info.key;
  }
  const std::vector<std::string> keys = KnownSinkKeys();
  // Every key the issue names, and nothing lakesync does not act on.
  for (const char* key : {"table", "catalog_name", "catalog_properties", "mode", "equality_columns",
                          "sequence_number_column", "change_type_column", "change_type_map", "upsert", "sink_id",
                          "snapshot_properties", "keep", "drop", "only", "partition_fields", "sort_fields",
                          "table_properties", "write_properties", "sorter_memory_mb", "delete_strategy",
                          "error_handling", "triggering_frequency_seconds"}) {
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
  }
  EXPECT_EQ(keys.size(), 22u);
  // Writer shards are Beam options without effect here (docs/sink.md), like distribution_mode.
  for (const char* key : {"distribution_mode", "num_shards", "shards_per_partition"}) {
    EXPECT_EQ(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
  }
  // Every documented key is accepted by the parser (none is reported as unknown).
  for (const auto& info : infos) {
    if (info.key == "table") continue;
    auto parsed = FromYaml("table: db.t\n" + std::string(info.key) + ": null\n");
    EXPECT_TRUE(parsed.ok()) << info.key << ": " << parsed.status().ToString();
  }
}

}  // namespace
}  // namespace lakesync::sink
