#include <gtest/gtest.h>

#include "lakesync/common/yaml_json.h"
#include "lakesync/engine/job_config.h"

namespace lakesync::engine {
namespace {

Result<JobConfig> Parse(std::string_view yaml) {
  ARROW_ASSIGN_OR_RAISE(auto doc, ParseYamlOrJson(yaml, "job.yaml"));
  return ParseJobConfig(doc, "jobs/orders.yaml");
}

std::string ErrorOf(std::string_view yaml) {
  auto r = Parse(yaml);
  EXPECT_FALSE(r.ok()) << yaml;
  return r.ok() ? "" : r.status().message();
}

TEST(JobConfig, DefaultsComeFromTheSourceAndTheJobName) {
  auto job = Parse(R"(
source: {type: delta_lake_cdc, table: /data/orders, start_version: 0}
sink: {table: db.orders, equality_columns: [id]}
)");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->name, "orders");
  EXPECT_EQ(job->source_type, SourceType::kDeltaLakeCdc);
  EXPECT_EQ(job->sink.mode, sink::WriteMode::kMergeOnRead);
  EXPECT_EQ(job->sink.sequence_number_column, "_commit_version");
  EXPECT_EQ(job->sink.change_type_column.value_or(""), "_change_type");
  EXPECT_EQ(job->sink.sink_id.value_or(""), "orders");
  EXPECT_FALSE(job->every.has_value());
  EXPECT_FALSE(job->source.contains("type"));
  EXPECT_EQ(job->source.at("table"), "/data/orders");
}

TEST(JobConfig, IcebergSourcesOrderBySnapshotSequenceNumbers) {
  auto job = Parse(R"(
name: "orders sync #1"
source: {type: iceberg_cdc, table: src.orders}
sink: {type: iceberg, table: db.orders, equality_columns: [id]}
schedule: {every: 1h30m}
)");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->sink.sequence_number_column, "_commit_snapshot_sequence_number");
  EXPECT_EQ(job->sink.sink_id.value_or(""), "orders_sync__1");
  EXPECT_EQ(job->every->count(), 5400);
}

TEST(JobConfig, ExplicitSinkSettingsWin) {
  auto job = Parse(R"(
source: {type: delta_lake, table: /data/orders, version: 3}
sink: {table: db.orders, sink_id: s1}
)");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->sink.mode, sink::WriteMode::kAppend);  // a snapshot import without keys appends
  EXPECT_EQ(job->sink.sink_id.value_or(""), "s1");
  auto keyed = Parse("source: {type: iceberg, table: a.t}\nsink: {table: db.t, equality_columns: [id]}\n");
  ASSERT_TRUE(keyed.ok()) << keyed.status().ToString();
  EXPECT_EQ(keyed->sink.mode, sink::WriteMode::kMergeOnRead);
}

TEST(JobConfig, ErrorsNameTheKey) {
  EXPECT_NE(ErrorOf("source: {type: delta_lake_cdc, table: t}\nsink: {table: db.t}\nshedule: {every: 1m}\n")
                .find("unknown key 'shedule'; did you mean 'schedule'?"),
            std::string::npos);
  EXPECT_NE(ErrorOf("sink: {table: db.t}\n").find("'source'"), std::string::npos);
  EXPECT_NE(ErrorOf("source: {table: t}\nsink: {table: db.t}\n").find("source.type is required"), std::string::npos);
  EXPECT_NE(ErrorOf("source: {type: kafka, table: t}\nsink: {table: db.t}\n").find("'kafka'"), std::string::npos);
  EXPECT_NE(ErrorOf("source: {type: delta_lake_cdc, table: t}\nsink: {type: bigquery, table: db.t}\n")
                .find("sink.type"),
            std::string::npos);
  EXPECT_NE(ErrorOf("source: {type: delta_lake_cdc, table: t}\nsink: {table: db.t, upsret: true}\n").find("upsret"),
            std::string::npos);
  EXPECT_NE(ErrorOf("source: {type: delta_lake_cdc, table: t}\nsink: {table: db.t}\nschedule: {every: 15x}\n")
                .find("schedule.every"),
            std::string::npos);
  EXPECT_NE(ErrorOf("source: {type: delta_lake_cdc, table: t}\nsink: {table: db.t}\nschedule: {every: 0}\n")
                .find("positive"),
            std::string::npos);
  EXPECT_NE(ErrorOf("source: {type: iceberg_cdc, table: a.t, streaming: true}\nsink: {table: db.t}\n"
                    "schedule: {every: 1m}\n")
                .find("contradict"),
            std::string::npos);
  EXPECT_NE(ErrorOf("source: {type: delta_lake, table: t, initial_snapshot: true}\nsink: {table: db.t}\n")
                .find("initial_snapshot"),
            std::string::npos);
  EXPECT_NE(ErrorOf("source: {type: delta_lake_cdc, table: t}\nsink: {table: db.t}\nretry: {max_attempts: 0}\n")
                .find("retry.max_attempts"),
            std::string::npos);
}

TEST(JobConfig, Durations) {
  EXPECT_EQ(ParseDuration(nlohmann::json("30s"), "k")->count(), 30);
  EXPECT_EQ(ParseDuration(nlohmann::json("15m"), "k")->count(), 900);
  EXPECT_EQ(ParseDuration(nlohmann::json("1d2h"), "k")->count(), 93600);
  EXPECT_EQ(ParseDuration(nlohmann::json("90"), "k")->count(), 90);
  EXPECT_EQ(ParseDuration(nlohmann::json(5), "k")->count(), 5);
  EXPECT_FALSE(ParseDuration(nlohmann::json("1m30"), "k").ok());
  EXPECT_FALSE(ParseDuration(nlohmann::json("m"), "k").ok());
  EXPECT_FALSE(ParseDuration(nlohmann::json(1.5), "k").ok());
  EXPECT_FALSE(ParseDuration(nlohmann::json(-3), "k").ok());
}

// Found by the job_yaml fuzz harness: a byte that is not UTF-8 reached an error message built with
// nlohmann::json::dump, which throws on it, and `lakesync run` terminated. Every YAML/JSON document
// is now checked for UTF-8 where it is parsed.
TEST(JobConfig, TextThatIsNotUtf8IsAnErrorNamingTheLine) {
  const std::string error = ErrorOf("source: {type: delta_lake_cdc, table: t}\nsink: {type: \"\x97\", table: db.t}\n");
  EXPECT_NE(error.find("job.yaml: line 2"), std::string::npos) << error;
  EXPECT_NE(error.find("not valid UTF-8"), std::string::npos) << error;
  EXPECT_NE(ErrorOf("source: {type: delta_lake_cdc, table: t}\nsink: {table: db.t}\n\xff: 1\n").find("not valid UTF-8"),
            std::string::npos);
  // An escape that names a code point is Unicode, and fine.
  auto unicode = Parse("source: {type: delta_lake_cdc, table: \"caf\\u00e9\"}\nsink: {table: db.t}\n");
  EXPECT_TRUE(unicode.ok()) << unicode.status().ToString();
}

}  // namespace
}  // namespace lakesync::engine
