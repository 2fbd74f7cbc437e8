#include <gtest/gtest.h>

#include "lakesync/common/yaml_json.h"
#include "lakesync/engine/job_config.h"
#include "lakesync/engine/job_runner.h"

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
  // No sink_id from the name: the runner derives it from the source and the target.
  EXPECT_FALSE(job->sink.sink_id.has_value());
  EXPECT_FALSE(job->sink_id_given);
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
  EXPECT_FALSE(job->sink.sink_id.has_value());
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
  EXPECT_TRUE(job->sink_id_given);
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
  // Zero only where asked for (maintenance time budgets).
  EXPECT_FALSE(ParseDuration(nlohmann::json("0"), "k").ok());
  EXPECT_EQ(ParseDuration(nlohmann::json("0"), "k", /*allow_zero=*/true)->count(), 0);
  EXPECT_EQ(ParseDuration(nlohmann::json(0), "k", /*allow_zero=*/true)->count(), 0);
  EXPECT_FALSE(ParseDuration(nlohmann::json(-1), "k", /*allow_zero=*/true).ok());
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

TEST(JobConfig, RelativePathsResolveAgainstTheJobFilesFolder) {
  auto doc = ParseYamlOrJson(R"(
source: {type: delta_lake_cdc, table: ./data/orders, start_version: 0}
sink:
  table: db.orders
  equality_columns: [id]
  catalog_properties: {type: sql, uri: "sqlite:///cat/c.db", warehouse: wh}
  error_handling: {output: dead/letters.parquet}
)",
                             "job.yaml");
  ASSERT_TRUE(doc.ok());
  auto job = ParseJobConfig(*doc, "/srv/jobs/orders.yaml");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->directory, "/srv/jobs");
  EXPECT_EQ(job->source.at("table"), "/srv/jobs/data/orders");
  EXPECT_EQ(job->sink.catalog_properties.at("uri"), "sqlite:////srv/jobs/cat/c.db");
  EXPECT_EQ(job->sink.catalog_properties.at("warehouse"), "/srv/jobs/wh");
  EXPECT_EQ(job->sink.error_handling->output, "/srv/jobs/dead/letters.parquet");
  // URIs and absolute paths stay as written.
  auto absolute = ParseYamlOrJson(
      "source: {type: delta_lake_cdc, table: 's3://lake/orders', start_version: 0}\n"
      "sink: {table: db.o, catalog_properties: {type: hadoop, warehouse: /abs/wh}}\n", "j");
  ASSERT_TRUE(absolute.ok());
  auto job2 = ParseJobConfig(*absolute, "/srv/jobs/orders.yaml");
  ASSERT_TRUE(job2.ok()) << job2.status().ToString();
  EXPECT_EQ(job2->source.at("table"), "s3://lake/orders");
  EXPECT_EQ(job2->sink.catalog_properties.at("warehouse"), "/abs/wh");
}

TEST(JobConfig, ASharedTablesProfileIsRelativeToTheJobFile) {
  auto in_table = ParseYamlOrJson("source: {type: delta_sharing_cdc, table: 'shares/open.share#s.sch.orders', "
                                  "start_version: 0}\nsink: {table: db.o, equality_columns: [id]}\n", "j");
  ASSERT_TRUE(in_table.ok());
  auto job = ParseJobConfig(*in_table, "/srv/jobs/orders.yaml");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->source.at("table"), "/srv/jobs/shares/open.share#s.sch.orders");
  auto separate = ParseYamlOrJson("source: {type: delta_sharing, profile: open.share, table: s.sch.orders}\n"
                                  "sink: {table: db.o}\n", "j");
  ASSERT_TRUE(separate.ok());
  auto job2 = ParseJobConfig(*separate, "/srv/jobs/orders.yaml");
  ASSERT_TRUE(job2.ok()) << job2.status().ToString();
  EXPECT_EQ(job2->source.at("profile"), "/srv/jobs/open.share");
  EXPECT_EQ(job2->source.at("table"), "s.sch.orders");
}

TEST(JobConfig, InitialSnapshotSaysWhatToDoWithANonEmptyTarget) {
  auto job = Parse("source: {type: delta_lake_cdc, table: /t, start_version: 0, initial_snapshot: "
                   "{if_target_not_empty: overwrite}}\nsink: {table: db.t, equality_columns: [id]}\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_TRUE(job->initial_snapshot);
  EXPECT_EQ(job->if_target_not_empty, IfTargetNotEmpty::kOverwrite);
  EXPECT_TRUE(job->if_target_not_empty_given);
  EXPECT_FALSE(job->source.contains("initial_snapshot"));
  auto plain = Parse("source: {type: delta_lake_cdc, table: /t, start_version: 0, initial_snapshot: true}\n"
                     "sink: {table: db.t}\n");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->if_target_not_empty, IfTargetNotEmpty::kFail);
  // An import takes the policy too (it is a snapshot already).
  auto import = Parse("source: {type: delta_lake, table: /t, initial_snapshot: {if_target_not_empty: skip}}\n"
                      "sink: {table: db.t}\n");
  ASSERT_TRUE(import.ok()) << import.status().ToString();
  EXPECT_FALSE(import->initial_snapshot);
  EXPECT_EQ(import->if_target_not_empty, IfTargetNotEmpty::kSkip);
  EXPECT_NE(ErrorOf("source: {type: delta_lake_cdc, table: /t, start_version: 0, initial_snapshot: "
                    "{if_target_not_empty: replace}}\nsink: {table: db.t}\n")
                .find("fail, skip or overwrite"),
            std::string::npos);
  EXPECT_NE(ErrorOf("source: {type: delta_lake_cdc, table: /t, start_version: 0, initial_snapshot: "
                    "{if_target_not_emtpy: skip}}\nsink: {table: db.t}\n")
                .find("did you mean 'if_target_not_empty'"),
            std::string::npos);
}

TEST(JobConfig, BeamMetadataColumnConstantsMeanTheColumns) {
  // Seed 001 writes change_type_column: IcebergCdcMetadataColumns.CHANGE_TYPE.
  auto job = Parse("source: {type: iceberg_cdc, table: src.t}\n"
                   "sink: {table: db.t, mode: merge-on-read, change_type_column: CHANGE_TYPE, "
                   "sequence_number_column: COMMIT_SNAPSHOT_SEQUENCE_NUMBER}\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->sink.change_type_column.value_or(""), "_change_type");
  EXPECT_EQ(job->sink.sequence_number_column, "_commit_snapshot_sequence_number");
}

TEST(DefaultSinkId, IsTheSourceIdentityAndTheTargetNeverTheJobName) {
  EXPECT_EQ(DefaultSinkId("5f1c2b7e-9a0d-4c1e-8f3a-2b7e9a0d4c1e", "shop.orders"),
            "5f1c2b7e-9a0d-4c1e-8f3a-2b7e9a0d4c1e.shop.orders");
  // Characters a sink id cannot hold are replaced; the length is capped.
  EXPECT_EQ(DefaultSinkId("file:///data/orders", "db.orders_{region}"), "file____data_orders.db.orders__region_");
  EXPECT_EQ(DefaultSinkId(std::string(300, 'a'), "db.t").size(), sink::kMaxSinkIdLength);
}

}  // namespace
}  // namespace lakesync::engine
