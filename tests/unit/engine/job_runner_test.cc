// The job runner against an in-memory source whose commits are known exactly: each run applies the
// commits after the committed position and no others; an import is followed by the changes after
// it; transient failures are retried; a second runner never applies the same commits again. The
// expected table contents are computed from the fake source's commits, not from lakesync.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <filesystem>
#include <map>
#include <random>

#include "lakesync/catalog/sql/sql_catalog.h"
#include "lakesync/common/yaml_json.h"
#include "lakesync/engine/job_runner.h"
#include "lakesync/table/scan.h"
#include "fake_source.h"

namespace lakesync::engine {
namespace {

using testing::Change;
using testing::FakeSource;

class JobRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() / fmt::format("lakesync-engine-test-{:08x}", rd());
    std::filesystem::create_directories(dir_);
    auto io = io::FileIO::Make().ValueOrDie();
    catalog::SqlCatalogOptions options{"t", (dir_ / "c.db").string(), "file://" + (dir_ / "wh").string(), io};
    catalog_ = catalog::SqlCatalog::Make(options).ValueOrDie();
    source_ = new FakeSource();
    source_->commits = {{{1, "a", "insert"}, {2, "b", "insert"}, {3, "c", "insert"}},
                        {{2, "b", "update_preimage"}, {2, "B", "update_postimage"}, {3, "c", "delete"}}};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  JobConfig Job(std::string extra_source = "", std::string extra_sink = "", std::string type = "delta_lake_cdc",
                std::string keys = "equality_columns: [id], ", std::string name = "test-job") {
    const std::string yaml = fmt::format(
        "name: {}\nsource: {{type: {}, table: fake{}}}\n"
        "sink: {{table: db.target, {}table_properties: {{format-version: '3'}}{}}}\n",
        name, type, extra_source, keys, extra_sink);
    auto doc = ParseYamlOrJson(yaml, "job.yaml").ValueOrDie();
    auto job = ParseJobConfig(doc, "job.yaml");
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    job->retry.initial_backoff_seconds = 0;
    return *job;
  }

  std::unique_ptr<JobRunner> Runner(JobConfig job, FakeSource* source = nullptr) {
    // The runner owns its source; the test keeps a pointer to steer it.
    FakeSource* owned = source ? source : source_;
    auto runner = JobRunner::Make(std::move(job), catalog_, [owned](const JobConfig&, std::shared_ptr<catalog::Catalog>) -> Result<std::unique_ptr<ChangeSource>> {
      return std::unique_ptr<ChangeSource>(owned);
    });
    EXPECT_TRUE(runner.ok()) << runner.status().ToString();
    return std::move(*runner);
  }

  std::map<int64_t, std::string> Target() {
    auto t = table::Table::Load(catalog_, {{"db"}, "target"}).ValueOrDie();
    auto scan = table::TableScan::Make(t, {}).ValueOrDie();
    auto reader = scan->Open().ValueOrDie();
    std::map<int64_t, std::string> out;
    std::shared_ptr<arrow::RecordBatch> batch;
    while (reader->ReadNext(&batch).ok() && batch) {
      auto ids = std::static_pointer_cast<arrow::Int64Array>(batch->GetColumnByName("id"));
      auto values = std::static_pointer_cast<arrow::StringArray>(batch->GetColumnByName("value"));
      for (int64_t i = 0; i < batch->num_rows(); ++i) {
        EXPECT_TRUE(out.emplace(ids->Value(i), values->GetString(i)).second) << "duplicate id " << ids->Value(i);
      }
    }
    return out;
  }

  std::filesystem::path dir_;
  std::shared_ptr<catalog::Catalog> catalog_;
  FakeSource* source_ = nullptr;  // owned by the runner
};

TEST_F(JobRunnerTest, EachRunAppliesOnlyTheCommitsAfterTheCommittedPosition) {
  auto runner = Runner(Job());
  auto first = runner->RunOnce();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->status, "committed");
  EXPECT_EQ(*first->from, 0);
  EXPECT_EQ(*first->through, 1);
  EXPECT_EQ(Target(), source_->StateAt(1));
  const auto json = first->ToJson();
  EXPECT_EQ(json["rows"]["insert"], 3);
  EXPECT_EQ(json["rows"]["delete"], 1);
  EXPECT_FALSE(json["snapshot_id"].is_null());

  auto again = runner->RunOnce();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, "nothing-new");
  EXPECT_EQ(*again->committed_before, 1);
  EXPECT_TRUE(again->apply.tables.empty());

  source_->commits.push_back({{4, "d", "insert"}, {1, "a", "delete"}});
  auto third = runner->RunOnce();
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(*third->from, 2);
  EXPECT_EQ(*third->through, 2);
  EXPECT_EQ(Target(), source_->StateAt(2));

  auto status = runner->StatusJson();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ((*status)["committed_position"], 2);
  EXPECT_EQ((*status)["lag"], 0);
  EXPECT_EQ((*status)["up_to_date"], true);
}

TEST_F(JobRunnerTest, InitialSnapshotThenTheChangesAfterIt) {
  source_->commits.push_back({{5, "e", "insert"}});
  source_->start = 1;  // import the table as of version 1, then apply version 2
  auto runner = Runner(Job(", initial_snapshot: true"));
  std::vector<RunSummary> runs;
  RunOptions options;
  options.on_run = [&](const RunSummary& s) { runs.push_back(s); };
  auto result = runner->RunOnce(options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(runs.size(), 1u);  // the import, reported before the changes
  EXPECT_TRUE(runs[0].initial_snapshot);
  EXPECT_EQ(*runs[0].through, 1);
  EXPECT_EQ(*result->from, 2);
  EXPECT_EQ(*result->through, 2);
  EXPECT_EQ(Target(), source_->StateAt(2));
  EXPECT_EQ(source_->reads, 1);  // the changes of versions 0 and 1 were never read
}

TEST_F(JobRunnerTest, TheEndBoundIsNeverPassed) {
  source_->commits.push_back({{9, "z", "insert"}});
  source_->end = 1;
  auto runner = Runner(Job());
  auto result = runner->RunOnce();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result->through, 1);
  EXPECT_EQ(Target(), source_->StateAt(1));
}

TEST_F(JobRunnerTest, TransientFailuresAreRetriedPermanentOnesAreNot) {
  source_->transient_failures = 2;
  auto runner = Runner(Job());
  auto result = runner->RunOnce();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->attempts, 3);
  EXPECT_EQ(Target(), source_->StateAt(1));

  source_->commits.push_back({{7, "g", "insert"}});
  source_->permanent_failure = true;
  const int reads = source_->reads;
  auto failed = runner->RunOnce();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(KindOf(failed.status()), ErrorKind::kCorrupt);
  EXPECT_EQ(source_->reads, reads + 1);
  EXPECT_EQ(Target(), source_->StateAt(1));  // nothing of the failed run landed
}

TEST_F(JobRunnerTest, ASourceThatCannotBeOpenedYetIsRetriedLikeARun) {
  // The opener fails `failures` times (an outage), then opens a fresh source.
  struct Opener {
    int failures = 0;
    int calls = 0;
    bool permanent = false;
    SourceOpener Get() {
      return [this](const JobConfig&, std::shared_ptr<catalog::Catalog>) -> Result<std::unique_ptr<ChangeSource>> {
        ++calls;
        if (permanent) return InvalidArgument("source.table: not a Delta table");
        if (failures > 0) {
          --failures;
          return Unavailable("the source's storage is unreachable");
        }
        return std::unique_ptr<ChangeSource>(new FakeSource());
      };
    }
  };
  auto job = Job();
  job.retry.max_attempts = 3;

  Opener brief{2};  // within the retry policy
  auto runner = JobRunner::Make(job, catalog_, brief.Get());
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  EXPECT_EQ(brief.calls, 3);

  Opener longer{3};  // a run-once job gives up after max_attempts, with the outage's error
  auto failed = JobRunner::Make(job, catalog_, longer.Get());
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(KindOf(failed.status()), ErrorKind::kUnavailable);
  EXPECT_EQ(longer.calls, 3);

  Opener outage{10};  // a repeating job waits the outage out
  auto waited = JobRunner::Make(job, catalog_, outage.Get(), {.keep_trying = true});
  ASSERT_TRUE(waited.ok()) << waited.status().ToString();
  EXPECT_EQ(outage.calls, 11);

  Opener bad{0, 0, true};  // a bad source block is not an outage: never retried
  auto refused = JobRunner::Make(job, catalog_, bad.Get(), {.keep_trying = true});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(KindOf(refused.status()), ErrorKind::kInvalidArgument);
  EXPECT_EQ(bad.calls, 1);

  std::atomic<bool> stop{true};  // Ctrl-C during the outage ends the wait
  Opener stopped{10};
  auto given_up = JobRunner::Make(job, catalog_, stopped.Get(), {.keep_trying = true, .stop = &stop});
  ASSERT_FALSE(given_up.ok());
  EXPECT_EQ(stopped.calls, 1);
}

TEST_F(JobRunnerTest, ASecondRunnerDoesNotApplyTheSameCommitsAgain) {
  auto runner = Runner(Job());
  ASSERT_TRUE(runner->RunOnce().ok());
  // A second job with the same sink id (e.g. a concurrent launch) finds the position and skips.
  auto* second_source = new FakeSource(*source_);
  second_source->reads = 0;
  auto other = JobRunner::Make(Job(), catalog_, [&](const JobConfig&, std::shared_ptr<catalog::Catalog>) -> Result<std::unique_ptr<ChangeSource>> {
    return std::unique_ptr<ChangeSource>(second_source);
  });
  ASSERT_TRUE(other.ok());
  auto result = (*other)->RunOnce();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status, "nothing-new");
  EXPECT_EQ(second_source->reads, 0);
  EXPECT_EQ(Target(), source_->StateAt(1));
}

TEST_F(JobRunnerTest, ASnapshotImportRunsOnce) {
  source_->start = 1;
  auto runner = Runner(Job("", "", "delta_lake"));
  auto first = runner->RunOnce();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->status, "committed");
  EXPECT_EQ(Target(), source_->StateAt(1));
  auto second = runner->RunOnce();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->status, "nothing-new");
  EXPECT_EQ(Target(), source_->StateAt(1));
}

TEST_F(JobRunnerTest, AScheduleStopsWhenTold) {
  auto job = Job();
  job.every = std::chrono::seconds(1);
  auto runner = Runner(job);
  std::atomic<bool> stop{false};
  int runs = 0;
  RunOptions options;
  options.stop = &stop;
  options.on_run = [&](const RunSummary& s) {
    ++runs;
    if (runs == 1) {
      EXPECT_EQ(s.status, "committed");
      source_->commits.push_back({{8, "h", "insert"}});  // picked up by the next tick
    } else {
      stop = true;
    }
  };
  ASSERT_TRUE(runner->RunRepeatedly(options).ok());
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(Target(), source_->StateAt(2));
}

}  // namespace
}  // namespace lakesync::engine

namespace lakesync::engine {
namespace {

TEST_F(JobRunnerTest, AnImportWithoutKeysAppendsTheTableColumnsOnly) {
  source_->start = 1;
  auto doc = ParseYamlOrJson("source: {type: delta_lake, table: fake}\nsink: {table: db.target}\n", "j.yaml")
                 .ValueOrDie();
  auto job = ParseJobConfig(doc, "j.yaml");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->sink.mode, sink::WriteMode::kAppend);
  auto runner = Runner(*job);
  auto result = runner->RunOnce();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Target(), source_->StateAt(1));
  auto t = table::Table::Load(catalog_, {{"db"}, "target"}).ValueOrDie();
  const auto schema = t->metadata()->Schema();
  EXPECT_EQ(schema->fields().size(), 2u);  // id, value: the control columns were not written
}

}  // namespace
}  // namespace lakesync::engine

namespace lakesync::engine {
namespace {

// A second fake source (a copy of the first, or another table) for a second runner.
FakeSource* CopyOf(const FakeSource& source, std::string identity) {
  auto* copy = new FakeSource(source);
  copy->identity = std::move(identity);
  copy->reads = 0;
  return copy;
}

TEST_F(JobRunnerTest, TheSinkIdComesFromTheSourceAndTheTargetNotFromTheJobsName) {
  auto runner = Runner(Job());
  EXPECT_EQ(runner->sink_id(), "0d6f3c1e-fake-source.db.target");
  EXPECT_TRUE(runner->sink_id_derived());
  ASSERT_TRUE(runner->RunOnce().ok());
  // The same job under another name (a renamed or copied file) finds its progress: no duplicates.
  auto* copy = CopyOf(*source_, source_->identity);
  auto renamed = Runner(Job("", "", "delta_lake_cdc", "equality_columns: [id], ", "renamed-copy"), copy);
  EXPECT_EQ(renamed->sink_id(), runner->sink_id());
  auto again = renamed->RunOnce();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->status, "nothing-new");
  EXPECT_EQ(copy->reads, 0);
  EXPECT_EQ(Target(), source_->StateAt(1));
}

TEST_F(JobRunnerTest, AnImportIntoATargetHoldingRowsIsRefusedUnlessTheJobSaysWhatToDo) {
  auto first = Runner(Job());
  ASSERT_TRUE(first->RunOnce().ok());
  const auto before = Target();
  // Another source (another table id) imported into the same target: refused, nothing written.
  auto* other = CopyOf(*source_, "another-table");
  other->commits = {{{1, "x", "insert"}, {10, "y", "insert"}}};
  auto second = Runner(Job(", initial_snapshot: true"), other);
  auto refused = second->RunOnce();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(KindOf(refused.status()), ErrorKind::kInvalidArgument);
  const std::string message = refused.status().message();
  EXPECT_NE(message.find("db.target holds 2 rows"), std::string::npos) << message;
  EXPECT_NE(message.find("0d6f3c1e-fake-source.db.target"), std::string::npos) << message;
  EXPECT_NE(message.find("if_target_not_empty"), std::string::npos) << message;
  EXPECT_EQ(Target(), before);

  // overwrite: the target's rows go, the import and the changes after it come in.
  auto* third = CopyOf(*other, "third-table");
  auto third_runner = Runner(Job(", initial_snapshot: {if_target_not_empty: overwrite}", "", "delta_lake_cdc",
                                 "equality_columns: [id], sink_id: third, "),
                             third);
  auto overwritten = third_runner->RunOnce();
  ASSERT_TRUE(overwritten.ok()) << overwritten.status().ToString();
  EXPECT_EQ(Target(), third->StateAt(0));
}

TEST_F(JobRunnerTest, SkipTakesTheTargetAsHoldingTheStartAndAppliesWhatFollows) {
  // The target holds the source as of version 0 (imported by another tool).
  // (Only version 0: the other tool's import.)
  auto* at_zero = CopyOf(*source_, "other");
  at_zero->end = 0;
  auto other_tool = Runner(Job("", ", sink_id: other-tool"), at_zero);
  ASSERT_TRUE(other_tool->RunOnce().ok());
  EXPECT_EQ(Target(), source_->StateAt(0));
  source_->commits.push_back({{6, "f", "insert"}});
  // initial_snapshot with skip and its own sink_id (the other tool's progress is not this job's).
  auto runner = Runner(Job(", initial_snapshot: {if_target_not_empty: skip}", ", sink_id: mine"));
  auto result = runner->RunOnce();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(*result->from, 1);  // version 0 was not imported again
  EXPECT_EQ(*result->through, 2);
  EXPECT_EQ(Target(), source_->StateAt(2));
}

TEST_F(JobRunnerTest, ProgressOfAnotherSinkIdIsNeverSilentlyIgnored) {
  // An older lakesync named the sink after the job: progress under "orders".
  auto legacy = Runner(Job("", ", sink_id: orders"));
  ASSERT_TRUE(legacy->RunOnce().ok());
  source_->commits.push_back({{6, "f", "insert"}});
  auto derived = Runner(Job(), CopyOf(*source_, source_->identity));
  auto refused = derived->RunOnce();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("sink_id: orders"), std::string::npos) << refused.status().ToString();
  EXPECT_EQ(Target(), source_->StateAt(1));
  // Saying so continues from that progress.
  auto named = Runner(Job("", ", sink_id: orders"), CopyOf(*source_, source_->identity));
  auto continued = named->RunOnce();
  ASSERT_TRUE(continued.ok()) << continued.status().ToString();
  EXPECT_EQ(*continued->from, 2);
  EXPECT_EQ(Target(), source_->StateAt(2));
}

TEST_F(JobRunnerTest, ADryRunCountsAndWritesNothing) {
  source_->start = 0;
  auto runner = Runner(Job(", initial_snapshot: true"));
  auto plan = runner->DryRun();
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ((*plan)["sink_id"], runner->sink_id());
  EXPECT_EQ((*plan)["target"], "db.target");
  EXPECT_EQ((*plan)["catalog"], "t");
  ASSERT_EQ((*plan)["steps"].size(), 2u) << plan->dump();
  EXPECT_EQ((*plan)["steps"][0]["step"], "import");
  EXPECT_EQ((*plan)["steps"][0]["changes"], 3);  // the table at version 0
  EXPECT_EQ((*plan)["steps"][1]["from"], 1);
  EXPECT_EQ((*plan)["steps"][1]["changes"], 3);  // version 1's three change rows
  EXPECT_FALSE(catalog_->TableExists({{"db"}, "target"}).ValueOrDie());
}

TEST_F(JobRunnerTest, ATargetCreatedWithoutEqualityColumnsGetsTheSourcesKey) {
  source_->keys = {"id"};
  auto runner = Runner(Job("", "", "delta_lake_cdc", /*keys=*/""));
  auto result = runner->RunOnce();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Target(), source_->StateAt(1));
  auto t = table::Table::Load(catalog_, {{"db"}, "target"}).ValueOrDie();
  const auto schema = t->metadata()->Schema();
  ASSERT_EQ(schema->identifier_field_ids().size(), 1u);
  EXPECT_EQ(schema->FindColumnName(schema->identifier_field_ids()[0]), "id");
}

TEST_F(JobRunnerTest, StatusTellsTheTimeLagFromTheOldestCommitNotApplied) {
  auto runner = Runner(Job());
  ASSERT_TRUE(runner->RunOnce().ok());
  source_->commits.push_back({{6, "f", "insert"}});
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  source_->commit_times_ms[2] = now_ms - 3'600'000;  // an hour ago
  auto status = runner->StatusJson();
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ((*status)["up_to_date"], false);
  EXPECT_GE((*status)["lag_seconds"].get<double>(), 3600.0);
  ASSERT_TRUE(runner->RunOnce().ok());
  status = runner->StatusJson();
  EXPECT_EQ((*status)["lag_seconds"].get<double>(), 0.0);
}

}  // namespace
}  // namespace lakesync::engine
