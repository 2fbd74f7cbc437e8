// A job run taken apart into its distributed steps (engine::JobRunner::Plan/Tasks/Read, plan key
// shards, sink::CdcWriter::Prepare/Stage, sink::WriteDeletes, sink::CommitFiles — what the Beam
// transforms call) must leave exactly the table one `RunOnce` leaves, for any shard count, and record
// the same progress, so the single-process runner continues where the staged run stopped. Expected
// tables come from the fake source's commits.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <filesystem>
#include <map>
#include <random>

#include "fake_source.h"
#include "lakesync/catalog/sql/sql_catalog.h"
#include "lakesync/common/yaml_json.h"
#include "lakesync/engine/job_runner.h"
#include "lakesync/plan/key_shards.h"
#include "lakesync/sink/cdc_writer.h"
#include "lakesync/sink/staged_apply.h"
#include "lakesync/table/scan.h"

namespace lakesync::engine {
namespace {

using testing::Change;
using testing::FakeSource;

// Random but valid commits: inserts of absent keys, updates (pre- and post-image) and deletes of
// present keys, over a small key space so keys churn within and across commits.
std::vector<std::vector<Change>> RandomCommits(uint32_t seed, int commits, int keys) {
  std::mt19937 rng(seed);
  std::map<int64_t, std::string> state;
  std::vector<std::vector<Change>> out;
  for (int c = 0; c < commits; ++c) {
    std::vector<Change> changes;
    const int n = 5 + static_cast<int>(rng() % 40);
    std::map<int64_t, bool> touched;  // one change per key per commit, as a CDF commit has
    for (int i = 0; i < n; ++i) {
      const int64_t id = static_cast<int64_t>(rng() % static_cast<uint32_t>(keys));
      if (touched[id]) continue;
      touched[id] = true;
      const std::string value = fmt::format("v{}-{}", c, i);
      if (!state.count(id)) {
        changes.push_back({id, value, "insert"});
        state[id] = value;
      } else if (rng() % 2) {
        changes.push_back({id, state[id], "update_preimage"});
        changes.push_back({id, value, "update_postimage"});
        state[id] = value;
      } else {
        changes.push_back({id, state[id], "delete"});
        state.erase(id);
      }
    }
    out.push_back(std::move(changes));
  }
  return out;
}

class StagedRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() / fmt::format("lakesync-staged-test-{:08x}", rd());
    std::filesystem::create_directories(dir_);
    auto io = io::FileIO::Make().ValueOrDie();
    catalog::SqlCatalogOptions options{"t", (dir_ / "c.db").string(), "file://" + (dir_ / "wh").string(), io};
    catalog_ = catalog::SqlCatalog::Make(options).ValueOrDie();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  JobConfig Job(const std::string& table, const std::string& format_version) {
    const std::string yaml = fmt::format(
        "name: staged-job\nsource: {{type: delta_lake_cdc, table: fake}}\n"
        "sink: {{table: {}, equality_columns: [id], partition_fields: ['bucket(id, 3)'], "
        "table_properties: {{format-version: '{}'}}}}\n",
        table, format_version);
    auto doc = ParseYamlOrJson(yaml, "job.yaml").ValueOrDie();
    auto job = ParseJobConfig(doc, "job.yaml");
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return *job;
  }

  std::unique_ptr<JobRunner> Runner(JobConfig job, std::vector<std::vector<Change>> commits) {
    auto runner = JobRunner::Make(std::move(job), catalog_,
                                  [commits](const JobConfig&, std::shared_ptr<catalog::Catalog>)
                                      -> Result<std::unique_ptr<ChangeSource>> {
                                    auto source = std::make_unique<FakeSource>();
                                    source->commits = commits;
                                    return std::unique_ptr<ChangeSource>(std::move(source));
                                  });
    EXPECT_TRUE(runner.ok()) << runner.status().ToString();
    return std::move(*runner);
  }

  std::map<int64_t, std::string> Rows(const std::string& name) {
    auto t = table::Table::Load(catalog_, catalog::TableIdentifier::Parse(name).ValueOrDie()).ValueOrDie();
    auto reader = table::TableScan::Make(t, {}).ValueOrDie()->Open().ValueOrDie();
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

  // One run through the distributed steps, every shard and data-file group in turn.
  sink::CommitFilesResult StagedRun(JobRunner& runner, int32_t shards, int32_t delete_groups) {
    auto plan = runner.Plan().ValueOrDie();
    EXPECT_FALSE(plan.nothing_new) << plan.message;
    auto tasks = runner.Tasks(plan).ValueOrDie();
    EXPECT_EQ(static_cast<int64_t>(tasks.size()), plan.through - plan.from + 1);
    const auto& sink_config = runner.job().sink;
    auto writer = sink::CdcWriter::Make(catalog_, sink_config).ValueOrDie();
    sink::ApplyOptions options;
    options.source_position = plan.position;
    auto schema = runner.Read(tasks.front()).ValueOrDie()->schema();
    auto target = writer->Prepare(schema, options).ValueOrDie();
    EXPECT_FALSE(target.skipped);
    EXPECT_EQ(target.key_columns, std::vector<std::string>{"id"});
    // Round-trip the target as a driver would send it to workers.
    target = sink::ApplyTarget::FromJson(target.ToJson()).ValueOrDie();

    std::map<int32_t, std::vector<std::shared_ptr<arrow::RecordBatch>>> by_shard;
    for (const auto& task : tasks) {
      auto reader = runner.Read(task).ValueOrDie();
      std::shared_ptr<arrow::RecordBatch> batch;
      while (reader->ReadNext(&batch).ok() && batch) {
        for (auto& [shard, rows] : plan::SplitByKeyShard(batch, target.key_columns, shards).ValueOrDie()) {
          EXPECT_LT(shard, shards);
          by_shard[shard].push_back(rows);
        }
      }
    }
    auto pinned = sink::OpenPinned(catalog_, target).ValueOrDie();
    sink::FilesToCommit files;
    std::map<int32_t, std::vector<sink::PositionsInFile>> groups;
    for (auto& [shard, batches] : by_shard) {
      auto reader = arrow::RecordBatchReader::Make(batches, schema).ValueOrDie();
      auto staged = writer->Stage(*reader, target, {}).ValueOrDie();
      // Through JSON, as between Beam workers.
      auto json = sink::StagedShardToJson(staged, *pinned->metadata()).ValueOrDie();
      staged = sink::StagedShardFromJson(nlohmann::json::parse(json.dump()), *pinned->metadata()).ValueOrDie();
      for (auto& f : staged.data_files) files.data_files.push_back(f);
      files.resolved_data_files.insert(staged.resolved_data_files.begin(), staged.resolved_data_files.end());
      for (auto& p : staged.positions) {
        groups[static_cast<int32_t>(std::hash<std::string>{}(p.data_file->file_path) % delete_groups)].push_back(p);
      }
    }
    std::set<std::string> vectors_for;
    for (auto& [group, positions] : groups) {
      std::vector<std::string> written;
      auto deletes = sink::WriteDeletes(pinned, positions, written).ValueOrDie();
      for (auto& f : deletes.added) {
        if (f.referenced_data_file) EXPECT_TRUE(vectors_for.insert(*f.referenced_data_file).second);
        files.delete_files.push_back(f);
      }
      for (auto& r : deletes.removed) files.removed_deletes.push_back(r);
    }
    auto current = table::Table::Load(catalog_, catalog::TableIdentifier::Parse(target.table).ValueOrDie()).ValueOrDie();
    auto committed = sink::CommitFiles(current, files, sink_config, plan.position);
    EXPECT_TRUE(committed.ok()) << committed.status().ToString();
    last_files_ = files;
    return *committed;
  }

  std::filesystem::path dir_;
  std::shared_ptr<catalog::Catalog> catalog_;
  sink::FilesToCommit last_files_;
};

TEST_F(StagedRunTest, AnyShardCountGivesTheTableOfOneProcessRun) {
  for (const std::string format_version : {"2", "3"}) {
    auto commits = RandomCommits(7, 6, 40);
    auto more = RandomCommits(7, 9, 40);  // the same first six commits, then three more
    FakeSource truth;
    truth.commits = more;
    auto single = Runner(Job("db.single_v" + format_version, format_version), commits);
    ASSERT_TRUE(single->RunOnce().ok());
    ASSERT_EQ(Rows("db.single_v" + format_version), truth.StateAt(5));
    for (int32_t shards : {1, 3, 8}) {
      SCOPED_TRACE(fmt::format("format {} shards {}", format_version, shards));
      const std::string name = fmt::format("db.staged_v{}_{}", format_version, shards);
      // First run: everything; second: the changes after it, which update and delete rows of files the
      // first run wrote (deletion vectors merged, or position deletes).
      auto first = Runner(Job(name, format_version), commits);
      auto r1 = StagedRun(*first, shards, 2);
      EXPECT_EQ(r1.outcome, sink::CommitOutcome::kCommitted);
      EXPECT_EQ(Rows(name), truth.StateAt(5));
      auto second = Runner(Job(name, format_version), more);
      auto r2 = StagedRun(*second, shards, 2);
      EXPECT_EQ(r2.outcome, sink::CommitOutcome::kCommitted);
      EXPECT_EQ(Rows(name), truth.StateAt(8));
      // The same progress as the single-process runner records: it finds nothing new after it.
      auto handover = Runner(Job(name, format_version), more);
      auto run = handover->RunOnce();
      ASSERT_TRUE(run.ok()) << run.status().ToString();
      EXPECT_EQ(run->status, "nothing-new");
      EXPECT_EQ(*run->committed_before, 8);
    }
  }
}

TEST_F(StagedRunTest, ARetriedCommitRecognisesItsOwnFilesAndAnotherWritersCommitSkips) {
  auto commits = RandomCommits(11, 3, 20);
  auto runner = Runner(Job("db.retried", "3"), commits);
  auto first = StagedRun(*runner, 4, 1);
  ASSERT_EQ(first.outcome, sink::CommitOutcome::kCommitted);
  const auto before = Rows("db.retried");
  // The committer's bundle is retried after its commit landed: the same files again.
  auto table = table::Table::Load(catalog_, {{"db"}, "retried"}).ValueOrDie();
  auto again = sink::CommitFiles(table, last_files_, runner->job().sink, std::string("2"));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->outcome, sink::CommitOutcome::kAlreadyApplied);
  EXPECT_TRUE(again->files_are_live);
  // Another writer's files for the same position: skipped, and not the table's files.
  sink::FilesToCommit other;
  other.data_files = {last_files_.data_files.front()};
  other.data_files.front().file_path += ".other";
  auto skipped = sink::CommitFiles(table, other, runner->job().sink, std::string("2"));
  ASSERT_TRUE(skipped.ok());
  EXPECT_EQ(skipped->outcome, sink::CommitOutcome::kAlreadyApplied);
  EXPECT_FALSE(skipped->files_are_live);
  EXPECT_EQ(Rows("db.retried"), before);
}

// schema_evolution in the distributed steps: Prepare plans the change from the input's schema, the
// target carries it (through JSON) to every shard, which writes with it, and the commit makes it
// current with the snapshot, as one process's Apply does. An incompatible change fails in Prepare
// with Apply's message, before anything is written.
TEST_F(StagedRunTest, PrepareCarriesTheEvolvedSchemaToTheShardsAndTheCommit) {
  auto runner = Runner(Job("db.evolved", "3"), RandomCommits(5, 2, 10));
  ASSERT_TRUE(runner->RunOnce().ok());
  const auto& config = runner->job().sink;
  auto make = [](std::vector<int64_t> ids, std::shared_ptr<arrow::DataType> note_type,
                 std::shared_ptr<arrow::Array> notes) {
    arrow::Int64Builder id_b, version_b;
    arrow::StringBuilder value_b, kind_b;
    for (int64_t id : ids) {
      EXPECT_TRUE(id_b.Append(id).ok());
      EXPECT_TRUE(value_b.Append(fmt::format("n{}", id)).ok());
      EXPECT_TRUE(kind_b.Append("insert").ok());
      EXPECT_TRUE(version_b.Append(7).ok());
    }
    auto schema = arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("value", arrow::utf8()),
                                 arrow::field("note", note_type), arrow::field("_change_type", arrow::utf8(), false),
                                 arrow::field("_commit_version", arrow::int64(), false)});
    return arrow::RecordBatch::Make(schema, static_cast<int64_t>(ids.size()),
                                    {id_b.Finish().ValueOrDie(), value_b.Finish().ValueOrDie(), notes,
                                     kind_b.Finish().ValueOrDie(), version_b.Finish().ValueOrDie()});
  };
  arrow::Int64Builder notes;
  ASSERT_TRUE(notes.AppendValues({1, 2}).ok());
  auto batch = make({100, 101}, arrow::int64(), notes.Finish().ValueOrDie());
  auto writer = sink::CdcWriter::Make(catalog_, config).ValueOrDie();
  sink::ApplyOptions options;
  options.source_position = "7";
  options.schema_evolution = sink::SchemaEvolution::kAdditive;
  auto target = writer->Prepare(batch->schema(), options).ValueOrDie();
  ASSERT_TRUE(target.schema.has_value());
  target = sink::ApplyTarget::FromJson(nlohmann::json::parse(target.ToJson().dump())).ValueOrDie();
  ASSERT_TRUE(target.schema.has_value());
  const auto* note = target.schema->schema->FindFieldByName("note");
  ASSERT_NE(note, nullptr);
  EXPECT_EQ(note->id, 3);  // the next id after id (1) and value (2)
  EXPECT_EQ(target.schema->last_column_id, 3);
  // Nothing changed yet: the table keeps its schema until the commit.
  auto id = catalog::TableIdentifier::Parse("db.evolved").ValueOrDie();
  EXPECT_EQ(table::Table::Load(catalog_, id).ValueOrDie()->metadata()->Schema()->FindFieldByName("note"), nullptr);

  auto reader = arrow::RecordBatchReader::Make({batch}, batch->schema()).ValueOrDie();
  auto staged = writer->Stage(*reader, target, {}).ValueOrDie();
  auto pinned = sink::OpenPinned(catalog_, target).ValueOrDie();
  sink::FilesToCommit files;
  files.data_files = staged.data_files;
  files.schema = target.schema;
  files.schema_base = pinned->metadata();
  auto current = table::Table::Load(catalog_, id).ValueOrDie();
  auto committed = sink::CommitFiles(current, files, config, std::string("7"));
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  auto table = table::Table::Load(catalog_, id).ValueOrDie();
  const auto& m = *table->metadata();
  ASSERT_NE(m.Schema()->FindFieldByName("note"), nullptr);
  ASSERT_TRUE(m.CurrentSnapshot()->schema_id.has_value());
  EXPECT_EQ(*m.CurrentSnapshot()->schema_id, m.current_schema_id);  // the snapshot names the new schema
  auto rows = table::TableScan::Make(table, {}).ValueOrDie()->Open().ValueOrDie()->ToTable().ValueOrDie();
  auto note_values = rows->GetColumnByName("note");
  ASSERT_NE(note_values, nullptr);
  EXPECT_EQ(note_values->length() - note_values->null_count(), 2);  // old rows read null, new ones theirs

  // An incompatible change (long → double is no promotion) fails in Prepare, with Apply's message.
  arrow::DoubleBuilder doubles;
  ASSERT_TRUE(doubles.AppendValues({1.5}).ok());
  auto narrowed = make({102}, arrow::float64(), doubles.Finish().ValueOrDie());
  auto bad = writer->Prepare(narrowed->schema(), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("schema_evolution: db.evolved cannot follow the source"), std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("column 'note' changed from long to double"), std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace lakesync::engine
