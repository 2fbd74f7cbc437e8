// The spec's scan-planning rules for deletes, driven through real commits: position deletes and
// deletion vectors apply to data with seq(data) <= seq(delete) (so also to rows added in the same
// commit), equality deletes only to strictly older data, and only within the same partition.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <filesystem>
#include <set>

#include "lakesync/catalog/sql/sql_catalog.h"
#include "lakesync/formats/puffin/deletion_vector_file.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/model/json_serde.h"
#include "lakesync/iceberg/model/spec_syntax.h"
#include "lakesync/iceberg/write/equality_delete_writer.h"
#include "lakesync/iceberg/write/position_delete_writer.h"
#include "lakesync/table/append.h"
#include "lakesync/table/row_deletes.h"
#include "lakesync/table/scan.h"

#include "scratch_catalog_test_util.h"
#include "status_test_util.h"

namespace lakesync::table {
namespace {

class DeleteRulesTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(auto scratch, MakeScratchCatalog("table-test"));
    dir_ = scratch.dir;
    catalog_ = scratch.catalog;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::shared_ptr<Table> CreateTable(const std::vector<std::string>& partition_terms) {
    catalog::CreateTableRequest req;
    req.identifier = {{"ns"}, "t"};
    req.schema = ValueOrFail(iceberg::SchemaFromJson(nlohmann::json::parse(R"({"type": "struct", "fields": [
        {"id": 1, "name": "id", "required": true, "type": "long"},
        {"id": 2, "name": "part", "required": false, "type": "int"}]})")));
    req.spec = ValueOrFail(iceberg::ParsePartitionFields(partition_terms, *req.schema));
    req.properties["format-version"] = std::to_string(GetParam());
    EXPECT_TRUE(catalog_->CreateTable(req).ok());
    return ValueOrFail(Table::Load(catalog_, req.identifier));
  }

  // Rows (id, part = id % 2) for ids [from, to), written as data files but not committed.
  std::vector<iceberg::DataFile> WriteData(const std::shared_ptr<Table>& table, int64_t from, int64_t to) {
    arrow::Int64Builder ids;
    arrow::Int32Builder parts;
    for (int64_t i = from; i < to; ++i) {
      EXPECT_TRUE(ids.Append(i).ok());
      EXPECT_TRUE(parts.Append(static_cast<int32_t>(i % 2)).ok());
    }
    auto schema = ValueOrFail(iceberg::ToArrowSchema(*table->metadata()->Schema()));
    auto batch = arrow::RecordBatch::Make(schema, to - from, {*ids.Finish(), *parts.Finish()});
    auto writer = ValueOrFail(iceberg::RollingDataWriter::Make(DataWriterOptionsFor(*table)));
    EXPECT_TRUE(writer->Write(batch).ok());
    return ValueOrFail(writer->Close());
  }

  iceberg::DataFile WriteEqualityDelete(const std::shared_ptr<Table>& table, const iceberg::DataFile& like,
                                        std::vector<int64_t> ids) {
    iceberg::EqualityDeleteWriterOptions options;
    options.table_schema = table->metadata()->Schema();
    options.equality_field_ids = {1};
    options.location = "file://" + (dir_ / fmt::format("eq-{}.parquet", counter_++)).string();
    auto io = table->io();
    options.output_factory = [io](const std::string& l) { return io->OpenOutput(l); };
    options.spec_id = like.spec_id;
    options.partition = like.partition;
    auto writer = ValueOrFail(iceberg::EqualityDeleteWriter::Make(options));
    arrow::Int64Builder b;
    for (int64_t id : ids) EXPECT_TRUE(b.Append(id).ok());
    auto schema = ValueOrFail(iceberg::ToArrowSchema(*writer->delete_schema()));
    EXPECT_TRUE(writer->Write(arrow::RecordBatch::Make(schema, static_cast<int64_t>(ids.size()), {*b.Finish()})).ok());
    return ValueOrFail(writer->Close());
  }

  std::set<int64_t> ScanIds(const std::shared_ptr<Table>& table) {
    auto scan = ValueOrFail(TableScan::Make(table, {}));
    auto reader = ValueOrFail(scan->Open());
    std::set<int64_t> out;
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      EXPECT_TRUE(reader->ReadNext(&batch).ok());
      if (!batch) break;
      const auto& ids = static_cast<const arrow::Int64Array&>(*batch->column(0));
      for (int64_t i = 0; i < ids.length(); ++i) EXPECT_TRUE(out.insert(ids.Value(i)).second) << "duplicate";
    }
    return out;
  }

  std::set<int64_t> Range(int64_t from, int64_t to) {
    std::set<int64_t> out;
    for (int64_t i = from; i < to; ++i) out.insert(i);
    return out;
  }

  std::filesystem::path dir_;
  std::shared_ptr<catalog::Catalog> catalog_;
  int counter_ = 0;
};

TEST_P(DeleteRulesTest, PositionDeletesApplyToRowsOfTheSameCommit) {
  auto table = CreateTable({});
  {
    SnapshotUpdate first(table);
    for (auto& f : WriteData(table, 0, 10)) first.AddDataFile(f);
    ASSERT_TRUE(first.Commit().ok());
  }
  // One commit adds data file B and position deletes for row 0 of the old file A and of B itself.
  auto added = WriteData(table, 10, 20);
  ASSERT_EQ(added.size(), 1u);
  auto plan = ValueOrFail(ValueOrFail(TableScan::Make(table, {}))->PlanFiles());
  ASSERT_EQ(plan.size(), 1u);
  PositionDeletes deletes(table);
  ASSERT_OK(deletes.Add(plan[0].file, nullptr, 0));
  ASSERT_OK(deletes.Add(std::make_shared<const iceberg::DataFile>(added[0]), nullptr, 0));
  SnapshotUpdate second(table);
  second.AddDataFile(added[0]);
  std::vector<std::string> written;
  ASSERT_OK(deletes.WriteTo(second, written));
  auto committed = second.Commit();
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  auto expected = Range(1, 20);
  expected.erase(10);
  EXPECT_EQ(ScanIds(table), expected);
  EXPECT_EQ(committed->summary.at(GetParam() >= 3 ? "added-dvs" : "added-position-delete-files"),
            GetParam() >= 3 ? "2" : "1");
}

TEST_P(DeleteRulesTest, DeletionVectorsAreMergedNeverDuplicated) {
  if (GetParam() < 3) GTEST_SKIP() << "deletion vectors are v3";
  auto table = CreateTable({});
  SnapshotUpdate first(table);
  for (auto& f : WriteData(table, 0, 10)) first.AddDataFile(f);
  ASSERT_TRUE(first.Commit().ok());
  for (int id : {3, 7, 5}) {
    auto result = DeleteWhere(table, {fmt::format("id = {}", id)});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
  }
  auto plan = ValueOrFail(ValueOrFail(TableScan::Make(table, {}))->PlanFiles());
  ASSERT_EQ(plan.size(), 1u);
  ASSERT_TRUE(plan[0].deletion_vector);
  EXPECT_EQ(plan[0].deletion_vector->record_count, 3);
  auto expected = Range(0, 10);
  for (int id : {3, 7, 5}) expected.erase(id);
  EXPECT_EQ(ScanIds(table), expected);
  const auto& summary = table->metadata()->CurrentSnapshot()->summary;
  EXPECT_EQ(summary.at("added-dvs"), "1");
  EXPECT_EQ(summary.at("removed-dvs"), "1");
  EXPECT_EQ(summary.at("total-delete-files"), "1");
  EXPECT_EQ(summary.at("total-position-deletes"), "3");
}

TEST_P(DeleteRulesTest, EqualityDeletesSkipRowsOfTheSameCommit) {
  if (GetParam() >= 3) GTEST_SKIP() << "equality deletes are exercised on v2 here";
  auto table = CreateTable({});
  SnapshotUpdate first(table);
  auto old_files = WriteData(table, 0, 10);
  for (auto& f : old_files) first.AddDataFile(f);
  ASSERT_TRUE(first.Commit().ok());
  // Data with ids 10..19 and an equality delete of ids 5 and 15 in one commit: 5 (older) goes,
  // 15 (same sequence number) stays.
  SnapshotUpdate second(table);
  for (auto& f : WriteData(table, 10, 20)) second.AddDataFile(f);
  second.AddDeleteFile(WriteEqualityDelete(table, old_files[0], {5, 15}));
  ASSERT_TRUE(second.Commit().ok());
  auto expected = Range(0, 20);
  expected.erase(5);
  EXPECT_EQ(ScanIds(table), expected);
  // A later equality delete reaches both.
  SnapshotUpdate third(table);
  third.AddDeleteFile(WriteEqualityDelete(table, old_files[0], {15, 6}));
  ASSERT_TRUE(third.Commit().ok());
  expected.erase(15);
  expected.erase(6);
  EXPECT_EQ(ScanIds(table), expected);
}

// Compaction's rule (maintenance/compact.h): a data file added with an explicit, older data sequence
// number is hit by an equality delete newer than that number, though the delete was committed first.
TEST_P(DeleteRulesTest, ExplicitDataSequenceNumbersDecideWhichEqualityDeletesApply) {
  if (GetParam() >= 3) GTEST_SKIP() << "equality deletes are exercised on v2 here";
  auto table = CreateTable({});
  SnapshotUpdate first(table);
  auto old_files = WriteData(table, 0, 10);
  for (auto& f : old_files) first.AddDataFile(f);
  ASSERT_TRUE(first.Commit().ok());
  const int64_t first_seq = table->metadata()->last_sequence_number;
  SnapshotUpdate eq(table);
  eq.AddDeleteFile(WriteEqualityDelete(table, old_files[0], {5, 12, 14}));
  ASSERT_TRUE(eq.Commit().ok());
  // Ids 10..12 with the first commit's number (the delete of 12 applies), 13..14 with their own (the
  // delete of 14 does not).
  SnapshotUpdate third(table);
  for (auto& f : WriteData(table, 10, 13)) third.AddDataFile(f, first_seq);
  for (auto& f : WriteData(table, 13, 15)) third.AddDataFile(f);
  ASSERT_TRUE(third.Commit().ok());
  auto expected = Range(0, 15);
  expected.erase(5);
  expected.erase(12);
  EXPECT_EQ(ScanIds(table), expected);
  std::set<int64_t> sequence_numbers;
  for (const auto& task : ValueOrFail(ValueOrFail(TableScan::Make(table, {}))->PlanFiles())) {
    sequence_numbers.insert(task.data_sequence_number);
  }
  EXPECT_EQ(sequence_numbers, (std::set<int64_t>{first_seq, first_seq + 2}));
}

TEST_P(DeleteRulesTest, EqualityDeletesStayInTheirPartition) {
  if (GetParam() >= 3) GTEST_SKIP() << "equality deletes are exercised on v2 here";
  auto table = CreateTable({"part"});
  SnapshotUpdate first(table);
  auto files = WriteData(table, 0, 10);  // part 0 holds even ids, part 1 odd ids
  ASSERT_EQ(files.size(), 2u);
  for (auto& f : files) first.AddDataFile(f);
  ASSERT_TRUE(first.Commit().ok());
  const auto& even = files[0].partition[0].get<int32_t>() == 0 ? files[0] : files[1];
  SnapshotUpdate second(table);
  // Deletes ids 2 and 3 but lives in the even partition: only 2 goes.
  second.AddDeleteFile(WriteEqualityDelete(table, even, {2, 3}));
  ASSERT_TRUE(second.Commit().ok());
  auto expected = Range(0, 10);
  expected.erase(2);
  EXPECT_EQ(ScanIds(table), expected);
}

TEST_P(DeleteRulesTest, RemovingADeletedFileIsAConflict) {
  auto table = CreateTable({});
  SnapshotUpdate first(table);
  for (auto& f : WriteData(table, 0, 4)) first.AddDataFile(f);
  ASSERT_TRUE(first.Commit().ok());
  SnapshotUpdate remove(table);
  remove.RemoveDataFile("file:///no/such/file.parquet");
  auto result = remove.Commit();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(KindOf(result.status()), ErrorKind::kCommitConflict);
  EXPECT_NE(result.status().message().find("file:///no/such/file.parquet"), std::string::npos);
  EXPECT_EQ(ScanIds(table), Range(0, 4));
}

// After a v2 -> v3 upgrade a data file can have v2 position delete files and no vector. The first
// vector written for it must carry those positions, because v3 readers ignore position delete files
// once a file has a vector. Two ways in: positions with their scan task (which lists the files) and
// positions with only the file (handed over by another process; the writer looks the files up).
class UpgradedDeletesTest : public DeleteRulesTest {
 protected:
  // A v2 table of ids 0-9 in one file with ids 0-2 deleted by a position delete file, upgraded to v3.
  std::shared_ptr<Table> UpgradedTable() {
    auto table = CreateTable({});
    SnapshotUpdate first(table);
    for (auto& f : WriteData(table, 0, 10)) first.AddDataFile(f);
    EXPECT_TRUE(first.Commit().ok());
    EXPECT_TRUE(DeleteWhere(table, {"id < 3"}).ok());
    const catalog::TableIdentifier id{{"ns"}, "t"};
    EXPECT_TRUE(catalog_
                    ->CommitTable(id, {iceberg::AssertTableUuid{table->metadata()->table_uuid}},
                                  {iceberg::UpgradeFormatVersion{3}})
                    .ok());
    return ValueOrFail(Table::Load(catalog_, id));
  }

  void DeleteNineAndCheck(const std::shared_ptr<Table>& table, bool with_task) {
    auto plan = ValueOrFail(ValueOrFail(TableScan::Make(table, {}))->PlanFiles());
    ASSERT_EQ(plan.size(), 1u);
    ASSERT_FALSE(plan[0].deletion_vector);
    ASSERT_EQ(plan[0].position_deletes.size(), 1u);
    PositionDeletes deletes(table);
    ASSERT_OK(with_task ? deletes.Add(plan[0], 9) : deletes.Add(plan[0].file, nullptr, 9));
    SnapshotUpdate update(table);
    std::vector<std::string> written;
    ASSERT_OK(deletes.WriteTo(update, written));
    ASSERT_TRUE(update.Commit().ok());
    auto after = ValueOrFail(ValueOrFail(TableScan::Make(table, {}))->PlanFiles());
    ASSERT_EQ(after.size(), 1u);
    ASSERT_TRUE(after[0].deletion_vector);
    EXPECT_EQ(after[0].deletion_vector->record_count, 4) << "the vector must hold 0, 1, 2 and 9";
    EXPECT_EQ(ScanIds(table), Range(3, 9));
  }
};

TEST_P(UpgradedDeletesTest, VectorFromScanTaskCarriesV2PositionDeletes) {
  DeleteNineAndCheck(UpgradedTable(), /*with_task=*/true);
}

TEST_P(UpgradedDeletesTest, VectorFromFileOnlyCarriesV2PositionDeletes) {
  DeleteNineAndCheck(UpgradedTable(), /*with_task=*/false);
}

INSTANTIATE_TEST_SUITE_P(FromV2, UpgradedDeletesTest, ::testing::Values(2),
                         [](const auto& info) { return "v" + std::to_string(info.param); });

INSTANTIATE_TEST_SUITE_P(FormatVersions, DeleteRulesTest, ::testing::Values(2, 3),
                         [](const auto& info) { return "v" + std::to_string(info.param); });

}  // namespace
}  // namespace lakesync::table
