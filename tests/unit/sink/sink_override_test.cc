// Command-line overrides: values parsed per key type, the same checks and messages as files, map
// entries, order independence of ApplySinkOverrides, and refused overrides leaving the config as it was.
#include "lakesync/sink/sink_config.h"
#include "sink_test_util.h"

namespace lakesync::sink {
namespace {

using testing::ExpectFailure;

SinkConfig Base() {
  SinkConfig config;
  config.table = "db.t";
  config.given_keys = {"table"};
  return config;
}

void ExpectOverrideError(std::string_view key, std::string_view value, const std::vector<std::string>& needles) {
  SinkConfig config = Base();
  const SinkConfig before = config;
  const Status status = ApplySinkOverride(config, key, value);
  ExpectFailure(status, ErrorKind::kInvalidArgument, needles, std::string(key) + "=" + std::string(value));
  EXPECT_TRUE(status.message().find("command line") != std::string::npos) << status.message();
  EXPECT_EQ(config, before) << "a refused override changed the config";
  EXPECT_EQ(config.given_keys, before.given_keys);
}

TEST(SinkOverrideTest, ValuesByType) {
  SinkConfig config = Base();
  ASSERT_OK(ApplySinkOverride(config, "mode", "merge-on-read"));
  ASSERT_OK(ApplySinkOverride(config, "--equality-columns", "id, region"));
  ASSERT_OK(ApplySinkOverride(config, "change-type-column", "op"));
  ASSERT_OK(ApplySinkOverride(config, "change_type_map", "c=INSERT,u=UPDATE_AFTER, d = DELETE"));
  ASSERT_OK(ApplySinkOverride(config, "upsert", "True"));
  ASSERT_OK(ApplySinkOverride(config, "num-shards", "8"));
  ASSERT_OK(ApplySinkOverride(config, "partition_fields", "bucket(id, 4),day(ts), region"));
  ASSERT_OK(ApplySinkOverride(config, "sort_fields", "id desc nulls last"));
  ASSERT_OK(ApplySinkOverride(config, "error_handling", "/tmp/dead.parquet"));
  ASSERT_OK(ApplySinkOverride(config, "sink_id", "orders"));
  ASSERT_OK(ValidateSinkConfig(config, "command line"));
  EXPECT_EQ(config.mode, WriteMode::kMergeOnRead);
  EXPECT_EQ(config.equality_columns, (std::vector<std::string>{"id", "region"}));
  EXPECT_EQ(config.change_type_map,
            (std::map<std::string, std::string>{{"c", "INSERT"}, {"u", "UPDATE_AFTER"}, {"d", "DELETE"}}));
  EXPECT_TRUE(config.upsert);
  EXPECT_EQ(config.num_shards, 8);
  EXPECT_EQ(config.partition_fields, (std::vector<std::string>{"bucket(id, 4)", "day(ts)", "region"}));
  EXPECT_EQ(config.sort_fields, std::vector<std::string>{"id desc nulls last"});
  ASSERT_TRUE(config.error_handling);
  EXPECT_EQ(config.error_handling->output, "/tmp/dead.parquet");
  EXPECT_TRUE(config.is_given("equality_columns"));
  EXPECT_TRUE(config.is_given("upsert"));
}

TEST(SinkOverrideTest, MapEntries) {
  SinkConfig config = Base();
  ASSERT_OK(ApplySinkOverride(config, "catalog_properties", "type=sql,warehouse=/tmp/w"));
  // One entry, with a value that has commas and '=' in it, and an entry name with dots and dashes.
  ASSERT_OK(ApplySinkOverride(config, "catalog_properties.uri", "sqlite:////tmp/w/c.db"));
  ASSERT_OK(ApplySinkOverride(config, "catalog-properties.s3.region", "a,b=c"));
  ASSERT_OK(ApplySinkOverride(config, "table_properties.format-version", "3"));
  ASSERT_OK(ApplySinkOverride(config, "error_handling.output", "/tmp/e.parquet"));
  EXPECT_EQ(config.catalog_properties,
            (std::map<std::string, std::string>{{"type", "sql"},
                                                {"warehouse", "/tmp/w"},
                                                {"uri", "sqlite:////tmp/w/c.db"},
                                                {"s3.region", "a,b=c"}}));
  EXPECT_EQ(config.table_properties.at("format-version"), "3");
  EXPECT_EQ(config.error_handling->output, "/tmp/e.parquet");
  ASSERT_OK(ValidateSinkConfig(config, "command line"));
  // A whole map replaces the map.
  ASSERT_OK(ApplySinkOverride(config, "table_properties", "a=1"));
  EXPECT_EQ(config.table_properties, (std::map<std::string, std::string>{{"a", "1"}}));
  // error_handling in the map spelling.
  ASSERT_OK(ApplySinkOverride(config, "error_handling", "output=/tmp/f.parquet"));
  EXPECT_EQ(config.error_handling->output, "/tmp/f.parquet");
}

TEST(SinkOverrideTest, SameChecksAndMessages) {
  ExpectOverrideError("mode", "mor", {"Unknown mode 'mor'; expected 'append' or 'merge-on-read'."});
  ExpectOverrideError("upsert", "yes", {"upsert must be a boolean"});
  ExpectOverrideError("num_shards", "0", {"num_shards must be at least 1, got 0"});
  ExpectOverrideError("num_shards", "four", {"num_shards must be an integer"});
  ExpectOverrideError("sorter_memory_mb", "0", {"sorter_memory_mb must be at least 1"});
  ExpectOverrideError("shards_per_partition", "0", {"shards_per_partition must be at least 1"});
  ExpectOverrideError("triggering_frequency_seconds", "0", {"triggering_frequency_seconds must be greater than 0"});
  ExpectOverrideError("delete_strategy", "dv", {"delete_strategy must be 'position' or 'equality'"});
  ExpectOverrideError("equality_columns", "id,,region", {"equality_columns", "entry 2 is empty"});
  ExpectOverrideError("equality_columns", "id,id", {"equality_columns lists 'id' twice"});
  ExpectOverrideError("equality_columns", "a.b", {"equality_columns", "top-level"});
  ExpectOverrideError("keep", "", {"keep must list at least one column"});
  ExpectOverrideError("change_type_map", "c:INSERT", {"change_type_map", "'c:INSERT' is not name=value"});
  ExpectOverrideError("change_type_map", "c=CREATE", {"change_type_map", "CREATE"});
  ExpectOverrideError("snapshot_properties.lakesync.x", "1", {"snapshot_properties", "reserved prefix"});
  ExpectOverrideError("sink_id", "a b", {"sink_id"});
  ExpectOverrideError("table", "orders", {"table 'orders'"});
  ExpectOverrideError("table", "db.{x", {"table", "not closed"});
  ExpectOverrideError("error_handling", "", {"error_handling.output must not be empty"});
  ExpectOverrideError("error_handling.tag", "x", {"error_handling", "unknown key 'tag'"});
  ExpectOverrideError("upsert.x", "1", {"upsert.x", "'upsert' is not a map"});
  ExpectOverrideError("table_properties.", "1", {"table_properties", "entry name", "empty"});
  ExpectOverrideError("equality-colums", "id", {"unknown key 'equality-colums'", "did you mean 'equality_columns'"});
  ExpectOverrideError("distribution_mode", "spread", {"distribution_mode must be 'none', 'hash' or 'range'"});
}

TEST(SinkOverrideTest, CrossKeyChecksRunAfterTheLastOverride) {
  // The order of flags does not matter: upsert before mode is fine.
  SinkConfig config = Base();
  ASSERT_OK(ApplySinkOverrides(config, {{"upsert", "true"}, {"num_shards", "4"}, {"mode", "merge-on-read"}}));
  EXPECT_TRUE(config.upsert);
  EXPECT_EQ(config.mode, WriteMode::kMergeOnRead);

  config = Base();
  ExpectFailure(ApplySinkOverrides(config, {{"upsert", "true"}}), ErrorKind::kInvalidArgument,
                {"command line: The following options are not supported in 'append' mode: [upsert]"});
  EXPECT_EQ(config, Base()) << "a refused set of overrides changed the config";
  ExpectFailure(ApplySinkOverrides(config, {{"mode", "merge-on-read"}, {"change_type_map", "c=INSERT"}}),
                ErrorKind::kInvalidArgument, {"change_type_map needs change_type_column"});
  ExpectFailure(ApplySinkOverrides(config, {{"mode", "merge-on-read"}, {"shards_per_partition", "20"}}),
                ErrorKind::kInvalidArgument, {"shards_per_partition must be between 1 and num_shards (16), got 20"});
  ExpectFailure(ApplySinkOverrides(config, {{"keep", "a"}, {"drop", "b"}}), ErrorKind::kInvalidArgument,
                {"keep, drop and only are mutually exclusive"});
  ExpectFailure(ApplySinkOverrides(config, {{"mode", "merge-on-read"}, {"num_shards", "0"}}, "--set"),
                ErrorKind::kInvalidArgument, {"--set: num_shards must be at least 1"});
}

TEST(SinkOverrideTest, OverridesOnTopOfAFile) {
  ASSERT_OK_AND_ASSIGN(SinkConfig config, ParseSinkConfigText(R"(
table: db.orders
mode: merge-on-read
upsert: true
num_shards: 8
)",
                                                              "sink.yaml"));
  // Switching the mode back to append leaves the file's merge-on-read options in conflict.
  SinkConfig copy = config;
  ExpectFailure(ApplySinkOverrides(copy, {{"mode", "append"}}), ErrorKind::kInvalidArgument,
                {"not supported in 'append' mode: [num_shards, upsert]"});
  ASSERT_OK(ApplySinkOverrides(config, {{"num_shards", "2"}, {"sink_id", "nightly"}}));
  EXPECT_EQ(config.num_shards, 2);
  EXPECT_EQ(config.sink_id, "nightly");
  EXPECT_TRUE(config.upsert);
  // Beam options without effect are recorded once, with the last value.
  ASSERT_OK(ApplySinkOverride(config, "allowed_lateness_seconds", "5"));
  ASSERT_OK(ApplySinkOverride(config, "allowed_lateness_seconds", "6"));
  std::vector<IgnoredOption> lateness;
  for (const auto& o : config.ignored_options) {
    if (o.key == "allowed_lateness_seconds") lateness.push_back(o);
  }
  ASSERT_EQ(lateness.size(), 1u);
  EXPECT_EQ(lateness[0].value, "6");
}

}  // namespace
}  // namespace lakesync::sink
