// Equality deletes as readers apply them: one key → highest-sequence-number map per scope and
// equality-id set, shared by the tasks of a scan, and the spec's rule (a delete applies to strictly
// older data, in its own partition or, when global, everywhere; a null key deletes nulls) checked
// through the data-file reader on real Parquet files.
#include "lakesync/iceberg/scan/equality_deletes.h"

#include <gtest/gtest.h>

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <parquet/arrow/writer.h>

#include <atomic>
#include <filesystem>

#include "../parquet_io/parquet_test_util.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/scan/data_file_reader.h"

namespace lakesync::iceberg {
namespace {

using lakesync::testing::Field;
using lakesync::testing::Json;
using lakesync::testing::TempDir;


KeyColumns Keys(std::vector<std::shared_ptr<arrow::Array>> columns) {
  return KeyColumns::Make(std::move(columns)).ValueOrDie();
}

TEST(EqualityDeleteRule, AppliesToStrictlyOlderDataOnly) {
  EXPECT_TRUE(EqualityDeleteApplies(4, 5));
  EXPECT_FALSE(EqualityDeleteApplies(5, 5));  // same commit: the row stays
  EXPECT_FALSE(EqualityDeleteApplies(6, 5));
}

TEST(KeySequenceMap, KeepsTheHighestSequenceNumberPerKeyAndNullsApart) {
  KeySequenceMap map;
  ASSERT_TRUE(map.Insert(Keys({Json(arrow::int64(), "[1, 2, null]")}), 3).ok());
  ASSERT_TRUE(map.Insert(Keys({Json(arrow::int64(), "[2, 5]")}), 7).ok());
  ASSERT_TRUE(map.Insert(Keys({Json(arrow::int64(), "[1, null]")}), 2).ok());
  map.Seal();
  EXPECT_EQ(map.size(), 4u);
  auto probe = Keys({Json(arrow::int64(), "[1, 2, 5, null, 0, 4]")});
  EXPECT_EQ(map.Find(probe, 0), 3);
  EXPECT_EQ(map.Find(probe, 1), 7);
  EXPECT_EQ(map.Find(probe, 2), 7);
  EXPECT_EQ(map.Find(probe, 3), 3);  // null matches null
  EXPECT_EQ(map.Find(probe, 4), KeySequenceMap::kAbsent);  // 0 is not null
  EXPECT_EQ(map.Find(probe, 5), KeySequenceMap::kAbsent);

  KeySequenceMap pairs;  // two columns: byte-encoded keys
  ASSERT_TRUE(pairs.Insert(Keys({Json(arrow::int64(), "[1, 1]"), Json(arrow::utf8(), R"(["a", null])")}), 4).ok());
  pairs.Seal();
  auto rows = Keys({Json(arrow::int64(), "[1, 1, 1, 2]"), Json(arrow::large_utf8(), R"(["a", null, "", "a"])")});
  EXPECT_EQ(pairs.Find(rows, 0), 4);
  EXPECT_EQ(pairs.Find(rows, 1), 4);
  EXPECT_EQ(pairs.Find(rows, 2), KeySequenceMap::kAbsent);  // "" is not null
  EXPECT_EQ(pairs.Find(rows, 3), KeySequenceMap::kAbsent);
}

// Two data files, in partitions part=1 and part=2 (identity on a column the files do not hold), each
// holding ids 1..6 with names a, b, null, d, e, f; four equality delete files:
//   E1 part=1, seq 5, by id:        1, 2
//   E2 global, seq 3, by id:        3
//   E3 part=2, seq 6, by (name, id): (d, 4), (x, 5)   (columns in the other order)
//   E4 global, seq 8, by name:      null
class EqualityDeletesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    schema_ = std::make_shared<const Schema>(
        0, std::vector<NestedField>{Field(1, "id", Type::Long(), true), Field(2, "name", Type::String()),
                                    Field(3, "part", Type::Int())});
    spec_ = std::make_shared<const PartitionSpec>(
        1, std::vector<PartitionField>{{3, 1000, "part", Transform::Identity()}});
    metadata_.format_version = 2;
    metadata_.schemas = {schema_};
    metadata_.partition_specs = {PartitionSpec::Unpartitioned(), spec_};
    Schema file_schema(0, {Field(1, "id", Type::Long(), true), Field(2, "name", Type::String())});
    for (int part : {1, 2}) {
      const std::string path = dir_.File("data-" + std::to_string(part) + ".parquet");
      Write(path, file_schema,
            {Json(arrow::int64(), "[1, 2, 3, 4, 5, 6]"), Json(arrow::utf8(), R"(["a", "b", null, "d", "e", "f"])")});
      data_.push_back(File(path, FileContent::kData, 1, {Literal(int32_t{part})}, 6, {}));
    }
    Schema by_id(0, {Field(1, "id", Type::Long(), true)});
    Schema by_name(0, {Field(2, "name", Type::String())});
    Schema by_name_id(0, {Field(2, "name", Type::String()), Field(1, "id", Type::Long(), true)});
    e1_ = Delete("e1", by_id, {Json(arrow::int64(), "[1, 2]")}, 1, {Literal(int32_t{1})}, {1});
    e2_ = Delete("e2", by_id, {Json(arrow::int64(), "[3]")}, 0, {}, {1});
    e3_ = Delete("e3", by_name_id, {Json(arrow::utf8(), R"(["d", "x"])"), Json(arrow::int64(), "[4, 5]")}, 1,
                 {Literal(int32_t{2})}, {2, 1});
    e4_ = Delete("e4", by_name, {Json(arrow::utf8(), "[null]")}, 0, {}, {2});
  }

  void Write(const std::string& path, const Schema& schema, std::vector<std::shared_ptr<arrow::Array>> columns) {
    auto table = arrow::Table::Make(ToArrowSchema(schema).ValueOrDie(), std::move(columns));
    auto out = arrow::io::FileOutputStream::Open(path).ValueOrDie();
    ASSERT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), out, 1024).ok());
    ASSERT_TRUE(out->Close().ok());
  }

  static DataFilePtr File(const std::string& path, FileContent content, int32_t spec_id, std::vector<Literal> partition,
                          int64_t rows, std::vector<int32_t> equality_ids) {
    auto f = std::make_shared<DataFile>();
    f->content = content;
    f->file_path = path;
    f->spec_id = spec_id;
    f->partition = std::move(partition);
    f->record_count = rows;
    f->file_size_in_bytes = static_cast<int64_t>(std::filesystem::file_size(path));
    f->equality_ids = std::move(equality_ids);
    return f;
  }

  DataFilePtr Delete(const std::string& name, const Schema& schema, std::vector<std::shared_ptr<arrow::Array>> columns,
                     int32_t spec_id, std::vector<Literal> partition, std::vector<int32_t> ids) {
    const std::string path = dir_.File(name + ".parquet");
    const int64_t rows = columns[0]->length();
    Write(path, schema, std::move(columns));
    return File(path, FileContent::kEqualityDeletes, spec_id, std::move(partition), rows, std::move(ids));
  }

  // The index as planning builds it: the four delete files with their sequence numbers, then each
  // task matched.
  std::vector<FileScanTask> Plan(const std::vector<std::pair<DataFilePtr, int64_t>>& files) {
    auto index = std::make_unique<EqualityDeleteIndex>();
    index->Add({5, e1_}, false);
    index->Add({3, e2_}, true);
    index->Add({6, e3_}, false);
    index->Add({8, e4_}, true);
    std::vector<FileScanTask> tasks;
    for (const auto& [file, seq] : files) {
      FileScanTask task;
      task.file = file;
      task.data_sequence_number = seq;
      task.equality_deletes = index->Match(*file, seq);
      tasks.push_back(std::move(task));
    }
    std::shared_ptr<const EqualityDeleteIndex> shared = std::move(index);
    for (auto& task : tasks) task.equality_index = shared;
    return tasks;
  }

  std::shared_ptr<const ScanContext> Context() {
    auto context = ScanContext::Make(io::FileIO::Make().ValueOrDie(), metadata_, schema_);
    EXPECT_TRUE(context.ok()) << context.status().ToString();
    return *context;
  }

  // The ids of the task's live rows.
  std::vector<int64_t> LiveIds(const std::shared_ptr<const ScanContext>& context, const FileScanTask& task) {
    DataFileReadOptions options;
    options.columns = {1};
    auto reader = DataFileReader::Open(context, task, options);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    std::vector<int64_t> ids;
    if (!reader.ok()) return ids;
    while (true) {
      auto next = (*reader)->Next();
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      if (!next.ok() || !*next) break;
      const auto& column = static_cast<const arrow::Int64Array&>(*(*next)->batch->column(0));
      for (int64_t i = 0; i < column.length(); ++i) ids.push_back(column.Value(i));
    }
    return ids;
  }

  static std::vector<std::string> Paths(const std::vector<DataFilePtr>& files) {
    std::vector<std::string> out;
    for (const auto& f : files) out.push_back(std::filesystem::path(f->file_path).stem().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  TempDir dir_;
  SchemaPtr schema_;
  PartitionSpecPtr spec_;
  TableMetadata metadata_;
  std::vector<DataFilePtr> data_;
  DataFilePtr e1_, e2_, e3_, e4_;
};

TEST_F(EqualityDeletesTest, PlanningMatchesFilesByPartitionAndSequenceNumber) {
  auto tasks = Plan({{data_[0], 2}, {data_[0], 4}, {data_[0], 5}, {data_[0], 8}, {data_[1], 4}});
  EXPECT_EQ(Paths(tasks[0].equality_deletes), (std::vector<std::string>{"e1", "e2", "e4"}));
  EXPECT_EQ(Paths(tasks[1].equality_deletes), (std::vector<std::string>{"e1", "e4"}));
  EXPECT_EQ(Paths(tasks[2].equality_deletes), (std::vector<std::string>{"e4"}));
  EXPECT_TRUE(tasks[3].equality_deletes.empty());
  EXPECT_EQ(Paths(tasks[4].equality_deletes), (std::vector<std::string>{"e3", "e4"}));
}

TEST_F(EqualityDeletesTest, RowsAreDeletedByNewerKeysOfTheirScopeOnly) {
  auto tasks = Plan({{data_[0], 2}, {data_[0], 4}, {data_[0], 5}, {data_[0], 6}, {data_[0], 8}, {data_[1], 4},
                     {data_[1], 6}});
  auto context = Context();
  // part=1 at seq 2: E1 (ids 1, 2), E2 (id 3, seq 3 > 2) and E4 (null name: id 3).
  EXPECT_EQ(LiveIds(context, tasks[0]), (std::vector<int64_t>{4, 5, 6}));
  // seq 4: E1 and E4; E2 (seq 3) is older than the data.
  EXPECT_EQ(LiveIds(context, tasks[1]), (std::vector<int64_t>{4, 5, 6}));
  // seq 5 and 6: E1 (seq 5) no longer applies; only the null name goes.
  EXPECT_EQ(LiveIds(context, tasks[2]), (std::vector<int64_t>{1, 2, 4, 5, 6}));
  EXPECT_EQ(LiveIds(context, tasks[3]), (std::vector<int64_t>{1, 2, 4, 5, 6}));
  // seq 8: nothing newer.
  EXPECT_EQ(LiveIds(context, tasks[4]), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  // part=2 at seq 4: not E1 (other partition); E3's (d, 4) matches, (x, 5) does not (id 5 is e);
  // E4's null name.
  EXPECT_EQ(LiveIds(context, tasks[5]), (std::vector<int64_t>{1, 2, 5, 6}));
  // part=2 at seq 6: E3 is as old as the data.
  EXPECT_EQ(LiveIds(context, tasks[6]), (std::vector<int64_t>{1, 2, 4, 5, 6}));
}

TEST_F(EqualityDeletesTest, EachMapIsBuiltOnceAndSharedByTheTasks) {
  auto tasks = Plan({{data_[0], 2}, {data_[0], 4}, {data_[1], 4}});
  auto context = Context();
  std::atomic<int> built{0};
  auto build = [&](const std::vector<int32_t>& ids, const std::vector<SequencedDeleteFile>& files) {
    ++built;
    return context->deletes->BuildEqualityKeyMap(ids, files);
  };
  const auto& index = *tasks[0].equality_index;
  auto first = index.KeyMapsFor(*tasks[0].file, 2, build).ValueOrDie();
  // part=1: E1's map (ids {1}) and the global ones: E2's and E4's sets ({1} and {2}).
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(built.load(), 3);
  auto second = index.KeyMapsFor(*tasks[1].file, 4, build).ValueOrDie();
  // At seq 4 the global {1} map (E2 only, seq 3) cannot apply and is not probed.
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0], first[0]);
  EXPECT_EQ(second[1], first[2]);
  auto other = index.KeyMapsFor(*tasks[2].file, 4, build).ValueOrDie();
  ASSERT_EQ(other.size(), 2u);  // E3's ({1, 2}) and E4's
  EXPECT_EQ(other[0]->field_ids, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(other[1], first[2]);
  EXPECT_EQ(built.load(), 4);  // no map built twice
}

TEST_F(EqualityDeletesTest, AFileNoTaskNeedsIsNotRead) {
  // Only a task at seq 5 or later in part=1: E1 (seq 5) and E2 (seq 3) delete nothing it holds.
  auto tasks = Plan({{data_[0], 5}});
  std::filesystem::remove(e1_->file_path);
  std::filesystem::remove(e2_->file_path);
  EXPECT_EQ(LiveIds(Context(), tasks[0]), (std::vector<int64_t>{1, 2, 4, 5, 6}));
}

TEST_F(EqualityDeletesTest, AnUnreadableDeleteFileIsAnErrorNamingIt) {
  auto tasks = Plan({{data_[0], 2}});
  std::filesystem::resize_file(e1_->file_path, 10);
  auto reader = DataFileReader::Open(Context(), tasks[0], {});
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.status().message().find(e1_->file_path), std::string::npos) << reader.status().message();
}

}  // namespace
}  // namespace lakesync::iceberg
