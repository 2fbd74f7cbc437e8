// The job file's maintenance block: parsing with errors that name the key (the steps themselves run
// end to end in tests/jobs/test_job_maintenance.py).
#include <gtest/gtest.h>

#include "lakesync/common/yaml_json.h"
#include "lakesync/engine/job_config.h"
#include "lakesync/engine/job_maintenance.h"

namespace lakesync::engine {
namespace {

Result<JobConfig> Parse(std::string_view maintenance) {
  const std::string yaml = std::string(R"(
source: {type: iceberg_cdc, table: src.orders}
sink: {table: db.orders, equality_columns: [id]}
maintenance: )") + std::string(maintenance);
  ARROW_ASSIGN_OR_RAISE(auto doc, ParseYamlOrJson(yaml, "job.yaml"));
  return ParseJobConfig(doc, "jobs/orders.yaml");
}

std::string ErrorOf(std::string_view maintenance) {
  auto r = Parse(maintenance);
  EXPECT_FALSE(r.ok()) << maintenance;
  return r.ok() ? "" : r.status().message();
}

TEST(JobMaintenance, StepsWithTheirOptionsAndDefaults) {
  auto job = Parse(R"({compact: {when_deleted_ratio: 0.2, target_file_size: 1000, max_files: 7},
    rewrite_manifests: {}, expire_snapshots: {older_than: 3d, retain_last: 10, every: 1h},
    remove_orphans: {every: 12h}})");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ASSERT_TRUE(job->maintenance.has_value());
  const auto& m = *job->maintenance;
  ASSERT_TRUE(m.compact.has_value());
  EXPECT_EQ(m.compact->when_deleted_ratio.value_or(-1), 0.2);
  EXPECT_FALSE(m.compact->when_file_count.has_value());
  EXPECT_EQ(m.compact->target_file_size.value_or(0), 1000);
  EXPECT_EQ(m.compact->min_deleted_ratio, 0.3);
  EXPECT_EQ(m.compact->max_files, 7);
  ASSERT_TRUE(m.rewrite_manifests.has_value());
  EXPECT_EQ(m.rewrite_manifests->when_manifest_count, 50);
  ASSERT_TRUE(m.expire_snapshots.has_value());
  EXPECT_EQ(m.expire_snapshots->older_than.value_or(std::chrono::seconds(0)).count(), 3 * 24 * 3600);
  EXPECT_EQ(m.expire_snapshots->retain_last.value_or(0), 10);
  EXPECT_EQ(m.expire_snapshots->every.count(), 3600);
  ASSERT_TRUE(m.remove_orphans.has_value());
  EXPECT_EQ(m.remove_orphans->older_than.count(), 3 * 24 * 3600);
  EXPECT_EQ(m.remove_orphans->every.count(), 12 * 3600);
  EXPECT_EQ(MaintenanceLastRunProperty("expire-snapshots"), "lakesync.maintenance.expire-snapshots.last-run-ms");
  // Time budgets: 10 minutes per step unless said.
  EXPECT_EQ(m.compact->max_duration, std::chrono::minutes(10));
  EXPECT_EQ(m.expire_snapshots->max_duration, std::chrono::minutes(10));
  EXPECT_EQ(m.remove_orphans->max_duration, std::chrono::minutes(10));
}

TEST(JobMaintenance, TimeBudgets) {
  auto job = Parse(R"({compact: {when_file_count: 10, max_duration: 0}, expire_snapshots: {max_duration: 90s},
    remove_orphans: {max_duration: 1h30m}})");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const auto& m = *job->maintenance;
  EXPECT_EQ(m.compact->max_duration.count(), 0);
  EXPECT_EQ(m.expire_snapshots->max_duration, std::chrono::seconds(90));
  EXPECT_EQ(m.remove_orphans->max_duration, std::chrono::minutes(90));
  EXPECT_NE(ErrorOf("{expire_snapshots: {max_duration: soon}}").find("maintenance.expire_snapshots.max_duration"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{remove_orphans: {max_duration: -5}}").find("maintenance.remove_orphans.max_duration"),
            std::string::npos);
}

TEST(JobMaintenance, CompactWithoutATriggerCompactsAtATenthMoreReadWork) {
  for (const char* block : {"{compact: {}}", "{compact: {max_files: 10}}", "{compact: }"}) {
    auto job = Parse(block);
    ASSERT_TRUE(job.ok()) << block << ": " << job.status().ToString();
    const auto& c = *job->maintenance->compact;
    EXPECT_EQ(c.when_read_overhead, std::optional<double>(0.1)) << block;
    EXPECT_FALSE(c.when_deleted_ratio || c.when_file_count) << block;
  }
  // A trigger given replaces the default one.
  auto job = Parse("{compact: {when_file_count: 5}}");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_FALSE(job->maintenance->compact->when_read_overhead);
  job = Parse("{compact: {when_read_overhead: 0.25}}");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->maintenance->compact->when_read_overhead, std::optional<double>(0.25));
}

TEST(JobMaintenance, ErrorsNameTheKey) {
  EXPECT_NE(ErrorOf("{compact: {when_deleted_ratoi: 0.2}}").find("did you mean 'when_deleted_ratio'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{compact: {when_read_overhead: 0}}").find("maintenance.compact.when_read_overhead"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{compact: {when_deleted_ratio: -0.1}}").find("maintenance.compact.when_deleted_ratio"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{compact: {when_file_count: 0}}").find("maintenance.compact.when_file_count"), std::string::npos);
  EXPECT_NE(ErrorOf("{remove_orphans: {older_than: never}}").find("maintenance.remove_orphans.older_than"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{}").find("names no step"), std::string::npos);
  EXPECT_NE(ErrorOf("[compact]").find("must be a map"), std::string::npos);
  EXPECT_NE(ErrorOf("{vacuum: {}}").find("unknown key 'vacuum'"), std::string::npos);
}

}  // namespace
}  // namespace lakesync::engine
