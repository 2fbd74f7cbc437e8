// The dashboard's JSON API without HTTP (dashboard_api.h), and its server's rules (read-only, auth):
// a job over an in-memory source whose commits are known exactly makes the commits, and the expected
// values come from those commits and the table's own metadata, not from the dashboard's code.
#include <gtest/gtest.h>

#include <httplib.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "engine/fake_source.h"
#include "lakesync/catalog/sql/sql_catalog.h"
#include "lakesync/common/yaml_json.h"
#include "lakesync/engine/job_runner.h"
#include "lakesync/table/table.h"
#include "lakesync/ui/assets.h"
#include "lakesync/ui/dashboard_api.h"
#include "lakesync/ui/job_history.h"
#include "lakesync/ui/ui_server.h"

namespace lakesync::ui {
namespace {

using engine::testing::FakeSource;
using Json = nlohmann::json;

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() / fmt::format("lakesync-ui-test-{:08x}", rd());
    std::filesystem::create_directories(dir_ / "jobs");
    auto io = io::FileIO::Make().ValueOrDie();
    catalog::SqlCatalogOptions options{"t", (dir_ / "c.db").string(), "file://" + (dir_ / "wh").string(), io};
    catalog_ = catalog::SqlCatalog::Make(options).ValueOrDie();
    // Three source commits: inserts, then an update and a delete, then an insert.
    source_.commits = {{{1, "a", "insert"}, {2, "b", "insert"}, {3, "c", "insert"}},
                       {{2, "b", "update_preimage"}, {2, "B", "update_postimage"}, {3, "c", "delete"}},
                       {{4, "d", "insert"}}};
    for (int64_t v = 0; v < 3; ++v) source_.commit_times_ms[v] = 1'000'000 + v * 1000;
    // A job file for the jobs folder; the opener below reads only its name.
    std::ofstream(dir_ / "jobs" / "job.yaml") << "name: test-job\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Result<std::unique_ptr<engine::JobRunner>> Open() {
    auto doc = ParseYamlOrJson(
                   "name: test-job\nsource: {type: delta_lake_cdc, table: fake}\n"
                   "sink: {table: db.target, equality_columns: [id], table_properties: {format-version: '3'}}\n",
                   "job.yaml")
                   .ValueOrDie();
    ARROW_ASSIGN_OR_RAISE(auto job, engine::ParseJobConfig(doc, "job.yaml"));
    auto copy = source_;
    return engine::JobRunner::Make(std::move(job), catalog_, [copy](const engine::JobConfig&,
                                                                    std::shared_ptr<catalog::Catalog>) {
      return Result<std::unique_ptr<engine::ChangeSource>>(std::make_unique<FakeSource>(copy));
    });
  }

  // Runs the job once per source commit visible so far, as `lakesync run` would.
  void RunThrough(size_t commits) {
    auto all = source_.commits;
    source_.commits.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(commits));
    auto runner = Open().ValueOrDie();
    auto run = runner->RunOnce();
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    source_.commits = all;
  }

  std::unique_ptr<Dashboard> MakeDashboard(bool with_jobs) {
    DashboardOptions options;
    options.catalog = catalog_;
    if (with_jobs) {
      options.jobs_dir = (dir_ / "jobs").string();
      options.open_job = [this](const std::string&) { return Open(); };
    }
    return Dashboard::Make(std::move(options)).ValueOrDie();
  }

  std::filesystem::path dir_;
  std::shared_ptr<catalog::Catalog> catalog_;
  FakeSource source_;
};

TEST_F(DashboardTest, OverviewAndTableHealthMatchTheTablesMetadata) {
  RunThrough(1);
  RunThrough(2);
  auto dashboard = MakeDashboard(false);
  auto overview = dashboard->Overview();
  ASSERT_TRUE(overview.ok()) << overview.status().ToString();
  ASSERT_EQ((*overview)["tables"].size(), 1u);
  const auto& row = (*overview)["tables"][0];
  auto t = table::Table::Load(catalog_, {{"db"}, "target"}).ValueOrDie();
  const auto& m = *t->metadata();
  EXPECT_EQ(row["name"], "db.target");
  EXPECT_EQ(row["rows"], 2);  // a and B: c deleted
  EXPECT_EQ(row["snapshots"], m.snapshots.size());
  EXPECT_EQ(row["current_snapshot_id"], std::to_string(*m.current_snapshot_id));
  EXPECT_EQ(row["last_commit_ms"], m.CurrentSnapshot()->timestamp_ms);
  EXPECT_EQ((*overview)["namespaces"], Json::array({"db"}));

  auto health = dashboard->Table("db.target");
  ASSERT_TRUE(health.ok()) << health.status().ToString();
  const auto& h = *health;
  ASSERT_EQ(h["snapshots"].size(), m.snapshots.size());
  EXPECT_EQ(h["snapshots"].back()["current"], true);
  EXPECT_EQ(h["snapshots"].back()["source_position"], "1");
  EXPECT_EQ(h["snapshots"].back()["live_records"], 2);
  // The update and the delete became deletion vectors on the first commit's data file(s).
  EXPECT_GE(h["delete_files"]["deletion_vectors"]["files"].get<int64_t>(), 1);
  EXPECT_EQ(h["delete_files"]["deletion_vectors"]["records"], 2);  // b and c removed
  EXPECT_EQ(h["files"]["rows_deleted_by_position"], 2);
  EXPECT_EQ(h["files"]["data"]["records"], 4);  // a, b, c, then B
  EXPECT_EQ(h["schemas"].size(), 1u);
  EXPECT_FALSE(dashboard->Table("db.missing").ok());
  EXPECT_EQ(KindOf(dashboard->Table("db.missing").status()), ErrorKind::kNotFound);
}

TEST_F(DashboardTest, ATableThatCannotBeReadIsListedWithItsErrorNotFailingThePage) {
  RunThrough(1);
  // The catalog points the table at a metadata file that is not there (deleted by hand, say).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "c.db").string().c_str(), &db), SQLITE_OK);
  const std::string missing = "file://" + (dir_ / "wh" / "gone.metadata.json").string();
  const std::string sql = "UPDATE iceberg_tables SET metadata_location = '" + missing + "'";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto overview = MakeDashboard(false)->Overview();
  ASSERT_TRUE(overview.ok()) << overview.status().ToString();
  EXPECT_TRUE((*overview)["tables"].empty());
  ASSERT_EQ((*overview)["unreadable_tables"].size(), 1u);
  EXPECT_EQ((*overview)["unreadable_tables"][0]["name"], "db.target");
  EXPECT_FALSE((*overview)["unreadable_tables"][0]["error"]["message"].get<std::string>().empty());
}

TEST_F(DashboardTest, JobsAreFoundBySinkIdAndCarryRunsAndDurations) {
  RunThrough(1);
  RunThrough(2);
  auto dashboard = MakeDashboard(false);
  auto jobs = dashboard->Jobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ((*jobs)["jobs"].size(), 1u);
  const std::string sink_id = (*jobs)["jobs"][0]["sink_id"];
  EXPECT_EQ((*jobs)["jobs"][0]["runs"], 2);
  EXPECT_EQ((*jobs)["jobs"][0]["position"], "1");
  auto job = dashboard->Job(sink_id);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ASSERT_EQ((*job)["runs"].size(), 2u);
  EXPECT_EQ((*job)["runs"][0]["position"], "0");
  EXPECT_EQ((*job)["runs"][1]["position"], "1");
  // Each commit records when its run started, so its duration is known from the table alone.
  for (const auto& run : (*job)["runs"]) {
    ASSERT_TRUE(run["run_start_ms"].is_number()) << run.dump();
    EXPECT_LE(run["run_start_ms"].get<int64_t>(), run["timestamp_ms"].get<int64_t>());
    EXPECT_GE(run["duration_seconds"].get<double>(), 0.0);
  }
  // Without job files there is no source to measure lag against, and the page says so.
  EXPECT_TRUE((*job)["lag_history"].is_null());
  EXPECT_TRUE((*job)["lag_history_note"].is_string());
  EXPECT_EQ(KindOf(dashboard->Job("no-such-sink").status()), ErrorKind::kNotFound);
}

TEST_F(DashboardTest, WithJobFilesTheLagAgainstTheSourceIsShownOverTime) {
  // The source's history, consistent with the runs: commit 0 before run 1, commit 1 just after run 1
  // committed, commit 2 just after run 2 committed (times from the target's own snapshots).
  source_.commit_times_ms = {{0, 1'000}};
  RunThrough(1);
  auto t = table::Table::Load(catalog_, {{"db"}, "target"}).ValueOrDie();
  const int64_t t1 = t->metadata()->CurrentSnapshot()->timestamp_ms;
  source_.commit_times_ms[1] = t1 + 1;
  RunThrough(2);
  ASSERT_TRUE(t->Refresh().ok());
  const int64_t t2 = t->metadata()->CurrentSnapshot()->timestamp_ms;
  ASSERT_GT(t2, t1);  // a run takes more than a millisecond
  source_.commit_times_ms[2] = t2 + 1;
  auto dashboard = MakeDashboard(true);
  auto jobs = dashboard->Jobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  const auto& j = (*jobs)["jobs"][0];
  EXPECT_EQ(j["job"], "test-job");
  EXPECT_EQ(j["lag"], 1);  // commit 2 not applied
  EXPECT_EQ(j["source_latest"], 2);
  auto job = dashboard->Job(j["sink_id"]);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ((*job)["status"]["committed_position"], 1);
  const auto& history = (*job)["lag_history"];
  ASSERT_TRUE(history.is_array()) << job->dump();
  // After run 1, before run 2 (commit 1 waiting since t1 + 1), after run 2, now (commit 2 waiting).
  ASSERT_EQ(history.size(), 4u);
  EXPECT_EQ(history[0]["point"], "after");
  EXPECT_EQ(history[0]["commits"], 0);
  EXPECT_EQ(history[1]["point"], "before");
  EXPECT_EQ(history[1]["commits"], 1);
  EXPECT_DOUBLE_EQ(history[1]["seconds"].get<double>(), static_cast<double>(t2 - (t1 + 1)) / 1000.0);
  EXPECT_EQ(history[2]["point"], "after");
  EXPECT_EQ(history[2]["commits"], 0);
  EXPECT_EQ(history[2]["seconds"], 0.0);
  EXPECT_EQ(history[3]["point"], "now");
  EXPECT_EQ(history[3]["commits"], 1);
  EXPECT_EQ((*job)["source_commits"], 2);  // commits 1 and 2, after the oldest position shown
}

TEST_F(DashboardTest, ANamespaceFilterHidesTablesAndTheirJobs) {
  RunThrough(1);
  auto dashboard = MakeDashboard(true);
  NamespaceFilter only_shop = [](const catalog::Namespace& ns) { return !ns.empty() && ns[0] == "shop"; };
  auto overview = dashboard->Overview(only_shop);
  ASSERT_TRUE(overview.ok());
  EXPECT_TRUE((*overview)["tables"].empty());
  EXPECT_EQ(KindOf(dashboard->Table("db.target", only_shop).status()), ErrorKind::kNotFound);
  auto jobs = dashboard->Jobs(only_shop);
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE((*jobs)["jobs"].empty());
}

TEST(LagHistory, ARunThatWroteSeveralTablesIsOnePoint) {
  // A table template: run 1 committed position 3 to two tables, run 2 position 5 to one.
  auto run = [](std::string table, int64_t at_ms, int64_t ordinal) {
    SinkRun r;
    r.table = std::move(table);
    r.timestamp_ms = at_ms;
    r.ordinal = ordinal;
    r.position = std::to_string(ordinal);
    return r;
  };
  std::vector<SinkRun> runs = {run("db.t_eu", 10'000, 3), run("db.t_us", 10'001, 3), run("db.t_eu", 20'000, 5)};
  std::vector<engine::SourceCommit> commits = {{4, 12'000}, {5, 13'000}, {6, 25'000}};
  auto points = LagHistory(runs, commits, 30'000);
  ASSERT_EQ(points.size(), 4u) << points.dump();
  EXPECT_EQ(points[0]["point"], "after");
  EXPECT_EQ(points[0]["commits"], 0);
  EXPECT_EQ(points[1]["point"], "before");
  EXPECT_EQ(points[1]["commits"], 2);            // 4 and 5 made, position still 3
  EXPECT_EQ(points[1]["seconds"], 8.0);          // 20 s - commit 4 at 12 s
  EXPECT_EQ(points[2]["commits"], 0);
  EXPECT_EQ(points[3]["point"], "now");
  EXPECT_EQ(points[3]["commits"], 1);            // 6
  EXPECT_EQ(points[3]["seconds"], 5.0);
}

class UiServerTest : public DashboardTest {
 protected:
  std::unique_ptr<UiServer> Start(std::optional<catalog::rest::ServerAuthConfig> auth = std::nullopt) {
    UiServerOptions options;
    options.http.listen = "127.0.0.1:0";
    options.http.log_requests = false;
    options.auth = std::move(auth);
    options.dashboard.catalog = catalog_;
    auto server = UiServer::Make(std::move(options)).ValueOrDie();
    EXPECT_TRUE(server->Start().ok());
    return server;
  }
};

TEST_F(UiServerTest, OnlyGetIsServedEverythingElseIsRefused) {
  RunThrough(1);
  auto server = Start();
  httplib::Client client("127.0.0.1", server->http_server().port());
  auto get = client.Get("/api/v1/overview");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 200);
  for (const auto& asset : EmbeddedAssets()) {
    auto res = client.Get(std::string(asset.path));
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << asset.path;
    EXPECT_EQ(res->body, asset.body) << asset.path;
  }
  for (const char* path : {"/", "/api/v1/overview", "/api/v1/table?name=db.target"}) {
    auto post = client.Post(path, "{}", "application/json");
    ASSERT_TRUE(post);
    EXPECT_EQ(post->status, 405) << path;
    EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
    auto del = client.Delete(path);
    ASSERT_TRUE(del);
    EXPECT_EQ(del->status, 405) << path;
    auto put = client.Put(path, "{}", "application/json");
    ASSERT_TRUE(put);
    EXPECT_EQ(put->status, 405) << path;
  }
  // Nothing changed: the table still has its one snapshot.
  auto t = table::Table::Load(catalog_, {{"db"}, "target"}).ValueOrDie();
  EXPECT_EQ(t->metadata()->snapshots.size(), 1u);
  auto missing = client.Get("/api/v1/table?name=db.nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(Json::parse(missing->body)["error"]["kind"], "not found");
}

TEST_F(UiServerTest, WithAuthTheApiNeedsATokenAndAScopedTokenSeesItsNamespacesOnly) {
  RunThrough(1);
  auto config = catalog::rest::ParseServerAuth(
                    "tokens:\n  - {token: all-secret}\n  - {token: shop-secret, namespaces: [shop]}\n", "auth.yaml")
                    .ValueOrDie();
  auto server = Start(config);
  httplib::Client client("127.0.0.1", server->http_server().port());
  auto none = client.Get("/api/v1/overview");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  auto wrong = client.Get("/api/v1/overview", {{"Authorization", "Bearer nope"}});
  EXPECT_EQ(wrong->status, 401);
  auto all = client.Get("/api/v1/overview", {{"Authorization", "Bearer all-secret"}});
  ASSERT_EQ(all->status, 200);
  EXPECT_EQ(Json::parse(all->body)["tables"].size(), 1u);
  auto scoped = client.Get("/api/v1/overview", {{"Authorization", "Bearer shop-secret"}});
  ASSERT_EQ(scoped->status, 200);
  EXPECT_TRUE(Json::parse(scoped->body)["tables"].empty());
  auto hidden = client.Get("/api/v1/table?name=db.target", {{"Authorization", "Bearer shop-secret"}});
  EXPECT_EQ(hidden->status, 404);
  // The pages themselves hold no data and load without a token (they ask for it).
  auto page = client.Get("/");
  EXPECT_EQ(page->status, 200);
}

}  // namespace
}  // namespace lakesync::ui
