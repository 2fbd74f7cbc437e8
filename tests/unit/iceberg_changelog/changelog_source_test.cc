// The changelog source driven through real commits on v2 and v3 tables: appends, position deletes /
// deletion vectors (merged vectors count only new positions), equality deletes, copy-on-write
// rewrites (carry-over cancelled, updates paired by key), replace snapshots, range bounds and errors.
// Expected change sets come from the rows each commit wrote or deleted.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <filesystem>
#include <set>
#include <tuple>

#include "lakesync/catalog/sql/sql_catalog.h"
#include "lakesync/common/executor.h"
#include "lakesync/iceberg/changelog/changelog_source.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/model/json_serde.h"
#include "lakesync/table/append.h"
#include "lakesync/table/row_deletes.h"
#include "lakesync/table/scan.h"

#include "scratch_catalog_test_util.h"
#include "status_test_util.h"

namespace lakesync::changelog {
namespace {

// (snapshot ordinal, kind, id, v)
using Change = std::tuple<int32_t, std::string, int64_t, std::string>;

class ChangelogSourceTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(auto scratch, MakeScratchCatalog("changelog-test"));
    dir_ = scratch.dir;
    catalog_ = scratch.catalog;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::shared_ptr<table::Table> CreateTable(bool with_key, int format_version) {
    catalog::CreateTableRequest req;
    req.identifier = {{"ns"}, "t"};
    req.schema = ValueOrFail(iceberg::SchemaFromJson(nlohmann::json::parse(fmt::format(
        R"({{"type": "struct", "identifier-field-ids": [{}], "fields": [
        {{"id": 1, "name": "id", "required": true, "type": "long"}},
        {{"id": 2, "name": "v", "required": false, "type": "string"}}]}})",
        with_key ? "1" : ""))));
    req.properties["format-version"] = std::to_string(format_version);
    EXPECT_TRUE(catalog_->CreateTable(req).ok());
    return ValueOrFail(table::Table::Load(catalog_, req.identifier));
  }

  std::vector<iceberg::DataFile> WriteData(const std::shared_ptr<table::Table>& t,
                                           const std::vector<std::pair<int64_t, std::string>>& rows) {
    arrow::Int64Builder ids;
    arrow::StringBuilder vs;
    for (const auto& [id, v] : rows) {
      EXPECT_TRUE(ids.Append(id).ok());
      EXPECT_TRUE(vs.Append(v).ok());
    }
    auto schema = ValueOrFail(iceberg::ToArrowSchema(*t->metadata()->Schema()));
    auto batch = arrow::RecordBatch::Make(schema, static_cast<int64_t>(rows.size()), {*ids.Finish(), *vs.Finish()});
    auto writer = ValueOrFail(iceberg::RollingDataWriter::Make(table::DataWriterOptionsFor(*t)));
    EXPECT_TRUE(writer->Write(batch).ok());
    return ValueOrFail(writer->Close());
  }

  int64_t Append(const std::shared_ptr<table::Table>& t, const std::vector<std::pair<int64_t, std::string>>& rows) {
    table::SnapshotUpdate update(t);
    for (auto& f : WriteData(t, rows)) update.AddDataFile(f);
    return ValueOrFail(update.Commit()).snapshot_id;
  }

  // Copy-on-write: replaces every live data file by one holding `rows`.
  int64_t Rewrite(const std::shared_ptr<table::Table>& t, const std::vector<std::pair<int64_t, std::string>>& rows,
                  const std::string& operation = "") {
    auto plan = ValueOrFail(ValueOrFail(table::TableScan::Make(t, {}))->PlanFiles());
    table::SnapshotUpdate update(t);
    for (const auto& task : plan) {
      update.RemoveDataFile(task.file->file_path);  // its deletion vector goes with it
    }
    for (auto& f : WriteData(t, rows)) update.AddDataFile(f);
    if (!operation.empty()) update.SetOperation(operation);
    return ValueOrFail(update.Commit()).snapshot_id;
  }

  int64_t Delete(const std::shared_ptr<table::Table>& t, const std::string& filter,
                 table::DeleteMode mode = table::DeleteMode::kPosition) {
    table::DeleteWhereOptions o;
    o.filter = filter;
    o.mode = mode;
    auto r = ValueOrFail(table::DeleteWhere(t, o));
    EXPECT_TRUE(r.snapshot_id.has_value());
    return r.snapshot_id.value_or(0);
  }

  std::multiset<Change> ReadChanges(const std::shared_ptr<table::Table>& t, ChangelogOptions o = {}) {
    auto source = ValueOrFail(ChangelogSource::Make(t, o));
    return ReadSource(*source);
  }

  std::multiset<Change> ReadSource(ChangelogSource& source) {
    auto reader = ValueOrFail(source.ReadAll());
    std::multiset<Change> out;
    const auto& schema = *reader->schema();
    const int kind = schema.GetFieldIndex(kChangeTypeColumn), ordinal = schema.GetFieldIndex(kChangeOrdinalColumn);
    EXPECT_GE(kind, 0);
    EXPECT_GE(ordinal, 0);
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      auto st = reader->ReadNext(&batch);
      EXPECT_TRUE(st.ok()) << st.ToString();
      if (!st.ok() || !batch) break;
      const auto& ids = static_cast<const arrow::Int64Array&>(*batch->column(0));
      const auto& vs = static_cast<const arrow::StringArray&>(*batch->column(1));
      const auto& kinds = static_cast<const arrow::StringArray&>(*batch->column(kind));
      const auto& ords = static_cast<const arrow::Int32Array&>(*batch->column(ordinal));
      for (int64_t i = 0; i < batch->num_rows(); ++i) {
        out.insert({ords.Value(i), kinds.GetString(i), ids.Value(i), vs.GetString(i)});
      }
    }
    return out;
  }

  std::filesystem::path dir_;
  std::shared_ptr<catalog::Catalog> catalog_;
};

TEST_P(ChangelogSourceTest, AppendsDeletesRewritesAndEqualityDeletes) {
  auto t = CreateTable(/*with_key=*/true, GetParam());
  Append(t, {{0, "a"}, {1, "a"}, {2, "a"}, {3, "a"}, {4, "a"}, {5, "a"}});  // ordinal 0
  Delete(t, "id < 2");                                                        // 1: DV / position deletes
  Delete(t, "id = 4");                                                        // 2: merged DV: only 4 is new
  Rewrite(t, {{2, "a"}, {3, "b"}, {5, "a"}, {6, "c"}});                       // 3: CoW: 3 updated, 6 new
  Rewrite(t, {{2, "a"}, {3, "b"}, {5, "a"}, {6, "c"}}, "replace");            // skipped
  Delete(t, "id = 5", table::DeleteMode::kEquality);                          // 4: equality delete
  Append(t, {{5, "z"}});                                                      // 5: re-insert key 5
  const std::multiset<Change> expected = {
      {0, "INSERT", 0, "a"},        {0, "INSERT", 1, "a"},       {0, "INSERT", 2, "a"}, {0, "INSERT", 3, "a"},
      {0, "INSERT", 4, "a"},        {0, "INSERT", 5, "a"},       {1, "DELETE", 0, "a"}, {1, "DELETE", 1, "a"},
      {2, "DELETE", 4, "a"},        {3, "UPDATE_BEFORE", 3, "a"}, {3, "UPDATE_AFTER", 3, "b"},
      {3, "INSERT", 6, "c"},        {4, "DELETE", 5, "a"},       {5, "INSERT", 5, "z"},
  };
  EXPECT_EQ(ReadChanges(t), expected);
  // Without room to keep the changed rows, pass two reads the files again and takes each row's
  // decision by its position among the changed rows: the same changes.
  ChangelogOptions reread;
  reread.cache_budget_bytes = 0;
  EXPECT_EQ(ReadChanges(t, reread), expected);
}

TEST_P(ChangelogSourceTest, WithoutKeysOnlyInsertsAndDeletes) {
  auto t = CreateTable(/*with_key=*/false, GetParam());
  Append(t, {{1, "a"}, {2, "a"}, {2, "a"}});
  Rewrite(t, {{1, "b"}, {2, "a"}});  // one duplicate of (2, a) goes: a DELETE, the other carries over
  const std::multiset<Change> expected = {
      {0, "INSERT", 1, "a"}, {0, "INSERT", 2, "a"}, {0, "INSERT", 2, "a"},
      {1, "DELETE", 1, "a"}, {1, "INSERT", 1, "b"}, {1, "DELETE", 2, "a"},
  };
  EXPECT_EQ(ReadChanges(t), expected);
  ChangelogOptions reread;
  reread.cache_budget_bytes = 0;
  EXPECT_EQ(ReadChanges(t, reread), expected);
  // Keys given by the reader pair the update.
  ChangelogOptions o;
  o.equality_columns = {"id"};
  auto keyed = ReadChanges(t, o);
  EXPECT_EQ(keyed.count({1, "UPDATE_BEFORE", 1, "a"}), 1u);
  EXPECT_EQ(keyed.count({1, "UPDATE_AFTER", 1, "b"}), 1u);
}

// Rows a snapshot reads that a later snapshot of the range deletes are kept and taken from there
// (rows_ahead.h): the same change set as reading every file again, whatever the budget, the filter,
// or a pass two that reads the files again; a file whose equality deletes changed is read again.
TEST_P(ChangelogSourceTest, RowsKeptAheadGiveTheSameChangesAsReadingAgain) {
  auto t = CreateTable(/*with_key=*/true, GetParam());
  Append(t, {{0, "a"}, {1, "a"}, {2, "a"}, {3, "a"}, {4, "a"}, {5, "a"}, {6, "a"}, {7, "a"}, {8, "a"}});  // 0: A
  Append(t, {{10, "b"}, {11, "b"}, {12, "b"}});                                                            // 1: B
  Delete(t, "id < 2");                            // 2: A's 0, 1 (kept when A was read at 0)
  Delete(t, "id = 5 or id = 11");                 // 3: A's 5, B's 11
  Delete(t, "id = 7", table::DeleteMode::kEquality);  // 4: A read again (its equality deletes changed)
  Delete(t, "id = 8 or id = 12");                 // 5: A's 8 (kept at 4), B's 12 (kept at 1)
  std::multiset<Change> expected;
  for (int64_t id = 0; id <= 8; ++id) expected.insert({0, "INSERT", id, "a"});
  for (int64_t id = 10; id <= 12; ++id) expected.insert({1, "INSERT", id, "b"});
  for (const Change& c : std::vector<Change>{{2, "DELETE", 0, "a"}, {2, "DELETE", 1, "a"}, {3, "DELETE", 5, "a"},
                                             {3, "DELETE", 11, "b"}, {4, "DELETE", 7, "a"}, {5, "DELETE", 8, "a"},
                                             {5, "DELETE", 12, "b"}}) {
    expected.insert(c);
  }
  auto read = [&](ChangelogOptions o, int64_t* from_kept_rows_last = nullptr) {
    auto source = ValueOrFail(ChangelogSource::Make(t, o));
    auto changes = ReadSource(*source);
    if (from_kept_rows_last) *from_kept_rows_last = source->last_stats().files_from_kept_rows;
    return changes;
  };
  int64_t kept = -1;
  EXPECT_EQ(read({}, &kept), expected);
  EXPECT_EQ(kept, 2);  // the last snapshot read neither A nor B
  ChangelogOptions off;
  off.look_ahead_budget_bytes = 0;
  EXPECT_EQ(read(off, &kept), expected);
  EXPECT_EQ(kept, 0);
  ChangelogOptions tiny;  // no file's rows fit: every file is read again
  tiny.look_ahead_budget_bytes = 1;
  EXPECT_EQ(read(tiny, &kept), expected);
  EXPECT_EQ(kept, 0);
  // Budgets between: some files kept, some read again, room made by dropping taken rows (Chunk).
  for (int64_t budget = 64; budget <= 64 * 1024; budget *= 2) {
    ChangelogOptions between;
    between.look_ahead_budget_bytes = budget;
    EXPECT_EQ(read(between), expected) << "budget " << budget;
  }
  ChangelogOptions reread;  // pass two reads the files again, and takes the kept rows again
  reread.cache_budget_bytes = 0;
  EXPECT_EQ(read(reread), expected);
  // A filter keeps only the rows it matches; a deleted row it does not match is not in the change set.
  ChangelogOptions filtered;
  filtered.filter = "id >= 5";
  std::multiset<Change> matching;
  for (const Change& c : expected) {
    if (std::get<2>(c) >= 5) matching.insert(c);
  }
  EXPECT_EQ(read(filtered), matching);
  // One snapshot at a time keeps nothing (no range to look ahead in) and reads the same.
  auto source = ValueOrFail(ChangelogSource::Make(t, {}));
  std::multiset<Change> one_by_one;
  for (const auto& pending : ValueOrFail(source->Pending())) {
    auto rows = ValueOrFail(source->Read(pending));
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      ASSERT_OK(rows->ReadNext(&batch));
      if (!batch) break;
      const auto& ids = static_cast<const arrow::Int64Array&>(*batch->column(0));
      const auto& vs = static_cast<const arrow::StringArray&>(*batch->column(1));
      const auto& kinds = static_cast<const arrow::StringArray&>(*batch->column(batch->schema()->GetFieldIndex(kChangeTypeColumn)));
      for (int64_t i = 0; i < batch->num_rows(); ++i) {
        one_by_one.insert({pending.ordinal, kinds.GetString(i), ids.Value(i), vs.GetString(i)});
      }
    }
    EXPECT_EQ(source->last_stats().files_from_kept_rows, 0);
  }
  EXPECT_EQ(one_by_one, expected);
}

TEST_P(ChangelogSourceTest, BoundsFilterAndProjection) {
  auto t = CreateTable(/*with_key=*/true, GetParam());
  const int64_t s1 = Append(t, {{1, "a"}, {2, "b"}});
  const int64_t s2 = Append(t, {{3, "c"}});
  const int64_t s3 = Delete(t, "id = 1");
  Append(t, {{4, "d"}});
  ChangelogOptions o;
  o.start_snapshot_id = s2;  // inclusive by default (Beam)
  o.end_snapshot_id = s3;
  EXPECT_EQ(ReadChanges(t, o), (std::multiset<Change>{{0, "INSERT", 3, "c"}, {1, "DELETE", 1, "a"}}));
  o.start_inclusive = false;  // Spark
  EXPECT_EQ(ReadChanges(t, o), (std::multiset<Change>{{0, "DELETE", 1, "a"}}));
  ChangelogOptions f;
  f.filter = "id >= 3";
  EXPECT_EQ(ReadChanges(t, f), (std::multiset<Change>{{1, "INSERT", 3, "c"}, {3, "INSERT", 4, "d"}}));
  ChangelogOptions latest;
  latest.starting_strategy = StartingStrategy::kLatest;
  latest.start_inclusive = false;
  EXPECT_TRUE(ReadChanges(t, latest).empty());

  // Selected metadata columns come in the order given, after keep's columns.
  ChangelogOptions p;
  p.keep = {"id"};
  p.metadata_columns = {kCommitSequenceColumn, kChangeTypeColumn};
  auto source = ValueOrFail(ChangelogSource::Make(t, p));
  EXPECT_EQ(source->schema()->ToString(),
            arrow::schema({arrow::field("id", arrow::int64(), false),
                           arrow::field(kCommitSequenceColumn, arrow::int64(), false),
                           arrow::field(kChangeTypeColumn, arrow::utf8(), false)})
                ->ToString());
  // Resume after the sequence number of s1: s1 itself is not read again.
  ChangelogOptions resume;
  resume.after_sequence_number = t->metadata()->SnapshotById(s1)->sequence_number;
  auto resumed = ReadChanges(t, resume);
  EXPECT_EQ(resumed.count({0, "INSERT", 3, "c"}), 1u);
  EXPECT_EQ(resumed.count({0, "INSERT", 1, "a"}), 0u);
}

TEST_P(ChangelogSourceTest, RangeErrors) {
  auto t = CreateTable(/*with_key=*/true, GetParam());
  Append(t, {{1, "a"}});
  const int64_t s2 = Append(t, {{2, "a"}});
  ChangelogOptions unknown;
  unknown.start_snapshot_id = 12345;
  auto r = ChangelogSource::Make(t, unknown);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(KindOf(r.status()), ErrorKind::kNotFound);
  EXPECT_NE(r.status().ToString().find("12345"), std::string::npos);

  ChangelogOptions end_unknown;
  end_unknown.end_snapshot_id = 999;
  EXPECT_EQ(KindOf(ChangelogSource::Make(t, end_unknown).status()), ErrorKind::kNotFound);

  // The start after the end is not an ancestor of it.
  const int64_t s1 = t->metadata()->SnapshotById(s2)->parent_snapshot_id.value();
  ChangelogOptions reversed;
  reversed.start_snapshot_id = s2;
  reversed.end_snapshot_id = s1;
  r = ChangelogSource::Make(t, reversed);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("not an ancestor"), std::string::npos) << r.status().ToString();

  ChangelogOptions bad_column;
  bad_column.keep = {"nope"};
  r = ChangelogSource::Make(t, bad_column);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("nope"), std::string::npos);
}

TEST_P(ChangelogSourceTest, OpensFromAJobConfiguration) {
  auto t = CreateTable(/*with_key=*/true, GetParam());
  const int64_t s1 = Append(t, {{1, "a"}});
  Append(t, {{2, "b"}});
  auto config = ValueOrFail(ParseChangelogConfigText(fmt::format(R"(
table: ns.t
catalog_name: t
catalog_properties: {{type: sql, uri: "sqlite:///{}", warehouse: "file://{}"}}
from_snapshot: {}
include_metadata_columns: [_change_type, _change_ordinal]
)", (dir_ / "c.db").string(), (dir_ / "wh").string(), s1), "job.yaml"));
  auto source = ValueOrFail(OpenChangelogSource(config));
  EXPECT_EQ(source->schema()->num_fields(), 4);
  // from_snapshot is inclusive (Beam).
  EXPECT_EQ(ReadSource(*source), (std::multiset<Change>{{0, "INSERT", 1, "a"}, {1, "INSERT", 2, "b"}}));
  EXPECT_EQ(source->position(), t->metadata()->CurrentSnapshot()->sequence_number);
  // Resuming after the first snapshot's sequence number reads only the second.
  auto resumed = ValueOrFail(OpenChangelogSource(config, t->metadata()->SnapshotById(s1)->sequence_number));
  EXPECT_EQ(ReadSource(*resumed), (std::multiset<Change>{{0, "INSERT", 2, "b"}}));
  config.table = "ns.missing";
  auto missing = OpenChangelogSource(config);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(KindOf(missing.status()), ErrorKind::kNotFound);
}

// ReadAll prepares the next snapshot while one streams; still each snapshot is marked read only when
// its rows are reached, in order, and a later snapshot's error comes in its place, after the rows
// before it: a missing data file (met streaming the snapshot) and a missing delete file (met
// preparing it, ahead of its turn), with one thread and with several.
TEST_P(ChangelogSourceTest, ReadAllMarksSnapshotsReadInOrderAndReportsALaterErrorInItsPlace) {
  auto t = CreateTable(/*with_key=*/true, GetParam());
  Append(t, {{1, "a"}, {2, "a"}});  // ordinal 0
  Append(t, {{3, "b"}});            // 1
  Delete(t, "id = 1");              // 2: a deletion vector / position delete file
  Append(t, {{4, "c"}});            // 3
  const auto& m = *t->metadata();
  std::vector<int64_t> sequence;  // by ordinal
  for (const auto& s : m.Ancestors(m.CurrentSnapshot()->snapshot_id)) sequence.insert(sequence.begin(), s->sequence_number);
  ASSERT_EQ(sequence.size(), 4u);
  std::string data_file, delete_file;
  for (const auto& task : ValueOrFail(ValueOrFail(table::TableScan::Make(t, {}))->PlanFiles())) {
    if (task.data_sequence_number == sequence[3]) data_file = task.file->file_path;
    if (task.deletion_vector) delete_file = task.deletion_vector->file_path;
    if (!task.position_deletes.empty()) delete_file = task.position_deletes.front()->file_path;
  }
  ASSERT_FALSE(data_file.empty());
  ASSERT_FALSE(delete_file.empty());
  auto remove = [](const std::string& uri) {
    ASSERT_TRUE(std::filesystem::remove(uri.rfind("file://", 0) == 0 ? uri.substr(7) : uri)) << uri;
  };

  // Reads until the error: the ordinals of the rows in order, each with the position when it came.
  // `failed_position`: the position after the error.
  auto read_until_error = [&](int threads, const std::string& missing,
                              int64_t failed_position) -> std::vector<std::pair<int32_t, int64_t>> {
    EXPECT_TRUE(ConfigureThreads(threads).ok());
    auto source = ValueOrFail(ChangelogSource::Make(t, {}));
    auto reader = ValueOrFail(source->ReadAll());
    const int ordinal = reader->schema()->GetFieldIndex(kChangeOrdinalColumn);
    std::vector<std::pair<int32_t, int64_t>> seen;
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      auto st = reader->ReadNext(&batch);
      if (!st.ok()) {
        EXPECT_NE(st.ToString().find(missing.substr(missing.rfind('/'))), std::string::npos) << st.ToString();
        EXPECT_EQ(source->position(), failed_position);
        return seen;
      }
      if (!batch) {
        ADD_FAILURE() << "no error for the missing " << missing;
        return seen;
      }
      const auto& ords = static_cast<const arrow::Int32Array&>(*batch->column(ordinal));
      for (int64_t i = 0; i < batch->num_rows(); ++i) seen.emplace_back(ords.Value(i), source->position().value_or(-1));
    }
  };
  const int saved_threads = ThreadCount();
  remove(data_file);
  for (int threads : {1, 2}) {
    // Ordinals 0 (2 rows), 1 and 2, each read at its own snapshot's position; then 3's missing file.
    const std::vector<std::pair<int32_t, int64_t>> expected = {
        {0, sequence[0]}, {0, sequence[0]}, {1, sequence[1]}, {2, sequence[2]}};
    // Snapshot 3 was begun (marked read) when its rows were reached; reading them failed.
    EXPECT_EQ(read_until_error(threads, data_file, sequence[3]), expected) << threads << " threads";
  }
  remove(delete_file);
  for (int threads : {1, 2}) {
    // Snapshot 2 fails while it is prepared (during snapshot 1's rows with two threads): its error
    // comes after snapshot 1's rows, and a snapshot that failed to prepare is not marked read.
    const std::vector<std::pair<int32_t, int64_t>> expected = {{0, sequence[0]}, {0, sequence[0]}, {1, sequence[1]}};
    EXPECT_EQ(read_until_error(threads, delete_file, sequence[1]), expected) << threads << " threads";
  }
  ASSERT_TRUE(ConfigureThreads(saved_threads).ok());
}

// Follow reads what is pending, then after each poll what was committed since: every snapshot once and
// in order, with one thread and with the next snapshot prepared ahead (two), until stop() says so. A
// writer commits from inside stop(), which Follow asks between snapshots and polls: the source's own
// table sees the commits only when Follow refreshes it, so the answers depend on what was read, not
// on timing.
TEST_P(ChangelogSourceTest, FollowReadsWhatIsCommittedBetweenPollsOnceAndInOrder) {
  auto t = CreateTable(/*with_key=*/true, GetParam());
  std::vector<int64_t> committed;  // ids, one per snapshot, in commit order
  auto commit = [&]() {
    const int64_t id = static_cast<int64_t>(committed.size()) + 1;
    Append(t, {{id, "v" + std::to_string(id)}});
    committed.push_back(id);
  };
  for (int i = 0; i < 3; ++i) commit();
  const int saved_threads = ThreadCount();
  for (int threads : {1, 2}) {
    ASSERT_TRUE(ConfigureThreads(threads).ok());
    // The source's own table object, as another process's would be: it sees the writer's commits only
    // when Follow refreshes it.
    auto source = ValueOrFail(ChangelogSource::Make(ValueOrFail(table::Table::Load(catalog_, {{"ns"}, "t"})), {}));
    std::vector<std::pair<int64_t, int32_t>> seen;  // (id, ordinal) as read
    bool wrote = false;
    int asked_since = 0;  // a Follow that never sees the new commits ends (and fails below), not hangs
    auto stop = [&]() {
      if (!wrote) {  // the first time the pending snapshots are all read: two more commits
        commit();
        commit();
        wrote = true;
        return false;
      }
      return seen.size() >= committed.size() || ++asked_since > 1000;
    };
    auto reader = ValueOrFail(source->Follow(std::chrono::milliseconds(1), stop));
    const int ordinal = reader->schema()->GetFieldIndex(kChangeOrdinalColumn);
    ASSERT_GE(ordinal, 0);
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      ASSERT_OK(reader->ReadNext(&batch));
      if (!batch) break;
      const auto& ids = static_cast<const arrow::Int64Array&>(*batch->column(0));
      const auto& ords = static_cast<const arrow::Int32Array&>(*batch->column(ordinal));
      for (int64_t i = 0; i < batch->num_rows(); ++i) seen.emplace_back(ids.Value(i), ords.Value(i));
    }
    std::vector<std::pair<int64_t, int32_t>> expected;
    for (size_t i = 0; i < committed.size(); ++i) expected.emplace_back(committed[i], static_cast<int32_t>(i));
    EXPECT_EQ(seen, expected) << threads << " threads";
    EXPECT_EQ(source->position(), t->metadata()->CurrentSnapshot()->sequence_number) << threads << " threads";
  }
  ASSERT_TRUE(ConfigureThreads(saved_threads).ok());
}

// What a consumer of ReadAll or Follow sees, in order: "rows <ordinal>" for each batch and, from
// on_snapshot_read, "read <ordinal> <snapshot id>". Returns the status that ended the stream.
Status DrainLogging(arrow::RecordBatchReader& reader, std::vector<std::string>& events) {
  const int ordinal = reader.schema()->GetFieldIndex(kChangeOrdinalColumn);
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ARROW_RETURN_NOT_OK(reader.ReadNext(&batch));
    if (!batch) return Status::OK();
    const auto& ords = static_cast<const arrow::Int32Array&>(*batch->column(ordinal));
    events.push_back("rows " + std::to_string(ords.Value(0)));
  }
}

// on_snapshot_read comes once per snapshot, in order, after the last batch of its snapshot and
// before the next snapshot's first batch or the end, also for a snapshot whose changes cancel out
// (a copy-on-write rewrite of identical rows): with ReadAll, and with Follow across a poll (the
// third snapshot is committed from inside stop(), so nothing depends on timing). One row per batch,
// so the first snapshot has two batches; one and two threads (the next snapshot prepared ahead).
TEST_P(ChangelogSourceTest, OnSnapshotReadComesAfterEachSnapshotsLastBatchOnceAndInOrder) {
  auto t = CreateTable(/*with_key=*/true, GetParam());
  std::vector<int64_t> ids;
  ids.push_back(Append(t, {{1, "a"}, {2, "a"}}));
  ids.push_back(Rewrite(t, {{1, "a"}, {2, "a"}}));  // every row carried over: no change rows
  ChangelogOptions o;
  o.batch_rows = 1;
  const int saved_threads = ThreadCount();
  for (bool follow : {false, true}) {
    for (int threads : {1, 2}) {
      ASSERT_TRUE(ConfigureThreads(threads).ok());
      if (!follow && ids.size() < 3) ids.push_back(Append(t, {{3, "c"}}));
      auto source = ValueOrFail(ChangelogSource::Make(ValueOrFail(table::Table::Load(catalog_, {{"ns"}, "t"})), o));
      std::vector<std::string> events;
      auto on_read = [&](const PendingSnapshot& p) {
        EXPECT_EQ(source->position(), p.snapshot->sequence_number) << "marked read before it is reported";
        events.push_back(fmt::format("read {} {}", p.ordinal, p.snapshot->snapshot_id));
        return Status::OK();
      };
      std::shared_ptr<arrow::RecordBatchReader> reader;
      if (follow) {
        int asked = 0;
        auto stop = [&]() {
          if (++asked == 1 && ids.size() < 3) ids.push_back(Append(t, {{3, "c"}}));
          return events.size() >= 6 || asked > 1000;
        };
        reader = ValueOrFail(source->Follow(std::chrono::milliseconds(1), stop, on_read));
        ASSERT_OK(DrainLogging(*reader, events));
      } else {
        reader = ValueOrFail(source->ReadAll(on_read));
        ASSERT_OK(DrainLogging(*reader, events));
      }
      const std::vector<std::string> expected = {
          "rows 0", "rows 0", fmt::format("read 0 {}", ids[0]), fmt::format("read 1 {}", ids[1]),
          "rows 2", fmt::format("read 2 {}", ids[2])};
      EXPECT_EQ(events, expected) << (follow ? "Follow, " : "ReadAll, ") << threads << " threads";
    }
  }
  ASSERT_TRUE(ConfigureThreads(saved_threads).ok());
}

// An error from on_snapshot_read fails the ReadNext that reached the snapshot's end: after all of
// that snapshot's rows, before any of the next one's.
TEST_P(ChangelogSourceTest, OnSnapshotReadErrorFailsTheRead) {
  auto t = CreateTable(/*with_key=*/true, GetParam());
  Append(t, {{1, "a"}, {2, "a"}});
  Append(t, {{3, "c"}});
  ChangelogOptions o;
  o.batch_rows = 1;
  for (bool follow : {false, true}) {
    auto source = ValueOrFail(ChangelogSource::Make(t, o));
    std::vector<std::string> events;
    auto on_read = [&](const PendingSnapshot& p) {
      events.push_back("read " + std::to_string(p.ordinal));
      return IOError("cannot record snapshot {}", p.snapshot->snapshot_id);
    };
    // stop() ends a Follow that went on past the error (so a broken callback fails, not hangs).
    auto stop = [&] { return !events.empty(); };
    auto reader = follow ? ValueOrFail(source->Follow(std::chrono::milliseconds(1), stop, on_read))
                         : ValueOrFail(source->ReadAll(on_read));
    const Status st = DrainLogging(*reader, events);
    EXPECT_TRUE(st.IsIOError()) << st.ToString();
    EXPECT_NE(st.ToString().find("cannot record snapshot"), std::string::npos) << st.ToString();
    EXPECT_EQ(events, (std::vector<std::string>{"rows 0", "rows 0", "read 0"})) << (follow ? "Follow" : "ReadAll");
  }
}

// Follow asks stop() between snapshots, not only between polls: a stop requested while a snapshot
// streams ends the stream after that snapshot (all its rows, then its on_snapshot_read), leaving the
// later pending snapshots unread. The CLI's --follow relies on this to exit promptly on a signal
// without recording a half-written snapshot.
TEST_P(ChangelogSourceTest, FollowStopsBetweenSnapshotsNotWithinOne) {
  auto t = CreateTable(/*with_key=*/true, GetParam());
  const int64_t first = Append(t, {{1, "a"}, {2, "a"}});
  Append(t, {{3, "c"}});
  Append(t, {{4, "d"}});
  ChangelogOptions o;
  o.batch_rows = 1;
  auto source = ValueOrFail(ChangelogSource::Make(t, o));
  std::vector<std::string> events;
  bool stop_requested = false;
  auto on_read = [&](const PendingSnapshot& p) {
    events.push_back(fmt::format("read {} {}", p.ordinal, p.snapshot->snapshot_id));
    return Status::OK();
  };
  auto reader = ValueOrFail(source->Follow(std::chrono::milliseconds(1), [&] { return stop_requested; }, on_read));
  std::shared_ptr<arrow::RecordBatch> batch;
  ASSERT_OK(reader->ReadNext(&batch));  // the first of snapshot 0's two rows
  ASSERT_TRUE(batch);
  stop_requested = true;  // as a signal would, mid-snapshot
  events.push_back("rows 0");
  ASSERT_OK(DrainLogging(*reader, events));
  EXPECT_EQ(events, (std::vector<std::string>{"rows 0", "rows 0", fmt::format("read 0 {}", first)}));
  EXPECT_EQ(source->position(), ValueOrFail(table::Table::Load(catalog_, {{"ns"}, "t"}))
                                    ->metadata()->SnapshotById(first)->sequence_number);
}

INSTANTIATE_TEST_SUITE_P(FormatVersions, ChangelogSourceTest, ::testing::Values(2, 3));

}  // namespace
}  // namespace lakesync::changelog
