// A wide scan (as many columns as 2 × threads or more) reads its files one after the other, batch
// by batch, each batch's columns decoded in parallel on the pool (table/scan_reader.cc); narrow
// scans read row groups side by side. Its batches must be the same, in the same order, at 1, 2 and
// 4 threads, with deletes of every kind applied: deletion vectors or position deletes that leave
// some batches empty, and equality deletes.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <filesystem>
#include <set>

#include "lakesync/catalog/sql/sql_catalog.h"
#include "lakesync/common/executor.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/model/json_serde.h"
#include "lakesync/iceberg/model/spec_syntax.h"
#include "lakesync/iceberg/write/equality_delete_writer.h"
#include "lakesync/table/append.h"
#include "lakesync/table/row_deletes.h"
#include "lakesync/table/scan.h"

#include "scratch_catalog_test_util.h"
#include "status_test_util.h"

namespace lakesync::table {
namespace {

constexpr int kColumns = 8;
constexpr int64_t kFileRows = 3000;
constexpr int kFiles = 3;

class ScanThreadsTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(auto scratch, MakeScratchCatalog("scan-threads"));
    dir_ = scratch.dir;
    catalog_ = scratch.catalog;
  }
  void TearDown() override {
    ASSERT_OK(ConfigureThreads(1));
    std::filesystem::remove_all(dir_);
  }

  // id (long) and kColumns - 1 more columns: longs, a string, a double.
  std::shared_ptr<Table> CreateTable() {
    catalog::CreateTableRequest req;
    req.identifier = {{"ns"}, "t"};
    std::string fields = R"({"id": 1, "name": "id", "required": true, "type": "long"})";
    for (int c = 1; c < kColumns; ++c) {
      const char* type = c == 1 ? "string" : c == 2 ? "double" : "long";
      fields += fmt::format(R"(, {{"id": {}, "name": "c{}", "required": false, "type": "{}"}})", c + 1, c, type);
    }
    req.schema = ValueOrFail(
        iceberg::SchemaFromJson(nlohmann::json::parse(R"({"type": "struct", "fields": [)" + fields + "]}")));
    req.spec = ValueOrFail(iceberg::ParsePartitionFields({}, *req.schema));
    req.properties["format-version"] = std::to_string(GetParam());
    EXPECT_TRUE(catalog_->CreateTable(req).ok());
    return ValueOrFail(Table::Load(catalog_, req.identifier));
  }

  std::vector<iceberg::DataFile> WriteData(const std::shared_ptr<Table>& table, int64_t from, int64_t to) {
    auto schema = ValueOrFail(iceberg::ToArrowSchema(*table->metadata()->Schema()));
    arrow::ArrayVector columns;
    arrow::Int64Builder ids;
    for (int64_t i = from; i < to; ++i) EXPECT_TRUE(ids.Append(i).ok());
    columns.push_back(*ids.Finish());
    for (int c = 1; c < kColumns; ++c) {
      if (c == 1) {
        arrow::StringBuilder b;
        for (int64_t i = from; i < to; ++i) EXPECT_TRUE((i % 11 == 0 ? b.AppendNull() : b.Append(fmt::format("s{}", i))).ok());
        columns.push_back(*b.Finish());
      } else if (c == 2) {
        arrow::DoubleBuilder b;
        for (int64_t i = from; i < to; ++i) EXPECT_TRUE(b.Append(static_cast<double>(i) / 3).ok());
        columns.push_back(*b.Finish());
      } else {
        arrow::Int64Builder b;
        for (int64_t i = from; i < to; ++i) EXPECT_TRUE(b.Append(i * c).ok());
        columns.push_back(*b.Finish());
      }
    }
    auto batch = arrow::RecordBatch::Make(schema, to - from, columns);
    auto writer = ValueOrFail(iceberg::RollingDataWriter::Make(DataWriterOptionsFor(*table)));
    EXPECT_TRUE(writer->Write(batch).ok());
    return ValueOrFail(writer->Close());
  }

  iceberg::DataFile WriteEqualityDelete(const std::shared_ptr<Table>& table, std::vector<int64_t> ids) {
    iceberg::EqualityDeleteWriterOptions options;
    options.table_schema = table->metadata()->Schema();
    options.equality_field_ids = {1};
    options.location = "file://" + (dir_ / "eq.parquet").string();
    auto io = table->io();
    options.output_factory = [io](const std::string& l) { return io->OpenOutput(l); };
    auto writer = ValueOrFail(iceberg::EqualityDeleteWriter::Make(options));
    arrow::Int64Builder b;
    for (int64_t id : ids) EXPECT_TRUE(b.Append(id).ok());
    auto schema = ValueOrFail(iceberg::ToArrowSchema(*writer->delete_schema()));
    EXPECT_TRUE(writer->Write(arrow::RecordBatch::Make(schema, static_cast<int64_t>(ids.size()), {*b.Finish()})).ok());
    return ValueOrFail(writer->Close());
  }

  // Every batch of a scan with small batches, at `threads` threads.
  std::vector<std::shared_ptr<arrow::RecordBatch>> Scan(const std::shared_ptr<Table>& table, int threads) {
    EXPECT_TRUE(ConfigureThreads(threads).ok());
    ScanOptions options;
    options.batch_rows = 250;
    auto reader = ValueOrFail(ValueOrFail(TableScan::Make(table, options))->Open());
    std::vector<std::shared_ptr<arrow::RecordBatch>> out;
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      EXPECT_TRUE(reader->ReadNext(&batch).ok());
      if (!batch) break;
      out.push_back(std::move(batch));
    }
    return out;
  }

  std::filesystem::path dir_;
  std::shared_ptr<catalog::Catalog> catalog_;
};

TEST_P(ScanThreadsTest, TheSameBatchesInTheSameOrderAtOneTwoAndFourThreads) {
  auto table = CreateTable();
  {
    SnapshotUpdate first(table);
    for (int f = 0; f < kFiles; ++f) {
      for (auto& file : WriteData(table, f * kFileRows, (f + 1) * kFileRows)) first.AddDataFile(file);
    }
    ASSERT_TRUE(first.Commit().ok());
  }
  // Position deletes: every 7th row of each file (a file's ids are its positions + an offset), then
  // rows 500..999 of one file (two whole batches of 250: the scan skips batches left empty).
  auto plan = ValueOrFail(ValueOrFail(TableScan::Make(table, {}))->PlanFiles());
  ASSERT_EQ(plan.size(), static_cast<size_t>(kFiles));
  {
    PositionDeletes deletes(table);
    for (const auto& task : plan) {
      for (int64_t pos = 0; pos < kFileRows; ++pos) {
        if (pos % 7 == 3) ASSERT_OK(deletes.Add(task, pos));
      }
    }
    SnapshotUpdate second(table);
    std::vector<std::string> written;
    ASSERT_OK(deletes.WriteTo(second, written));
    ASSERT_TRUE(second.Commit().ok());
  }
  // Equality deletes (v2 and up): ids 100..199 and a few more.
  std::vector<int64_t> eq_ids;
  for (int64_t i = 100; i < 200; ++i) eq_ids.push_back(i);
  for (int64_t i : {3001, 3002, 8999}) eq_ids.push_back(i);
  {
    SnapshotUpdate third(table);
    third.AddDeleteFile(WriteEqualityDelete(table, eq_ids));
    ASSERT_TRUE(third.Commit().ok());
  }
  // A whole range of the second file deleted by position, on top.
  {
    auto tasks = ValueOrFail(ValueOrFail(TableScan::Make(table, {}))->PlanFiles());
    PositionDeletes deletes(table);
    for (const auto& task : tasks) {
      for (int64_t pos = 500; pos < 1000; ++pos) ASSERT_OK(deletes.Add(task, pos));
      break;  // the first task only
    }
    SnapshotUpdate fourth(table);
    std::vector<std::string> written;
    ASSERT_OK(deletes.WriteTo(fourth, written));
    ASSERT_TRUE(fourth.Commit().ok());
  }

  auto one = Scan(table, 1);
  // What the scan must hold: no id deleted by an equality delete or on a deleted position.
  std::set<int64_t> got;
  int64_t rows = 0;
  for (const auto& batch : one) {
    EXPECT_GT(batch->num_rows(), 0);
    EXPECT_LE(batch->num_rows(), 250);
    const auto& ids = static_cast<const arrow::Int64Array&>(*batch->column(0));
    const auto& c3 = static_cast<const arrow::Int64Array&>(*batch->column(3));
    for (int64_t i = 0; i < ids.length(); ++i) {
      EXPECT_TRUE(got.insert(ids.Value(i)).second) << "duplicate " << ids.Value(i);
      EXPECT_EQ(c3.Value(i), ids.Value(i) * 3);  // the row's columns stay together
    }
    rows += batch->num_rows();
  }
  for (int64_t id : eq_ids) EXPECT_EQ(got.count(id), 0u) << id;
  for (int64_t id : got) EXPECT_NE(id % kFileRows % 7, 3) << id;  // ids are positions + file offset
  // 3 files × 3000 rows, 1/7 deleted (429 of each), the 500-row range (~428 not yet deleted), eq ids.
  EXPECT_LT(rows, kFiles * kFileRows - 3 * 428 - 400);
  EXPECT_GT(rows, 6000);

  for (int threads : {2, 4}) {
    auto many = Scan(table, threads);
    ASSERT_EQ(many.size(), one.size()) << threads << " threads";
    for (size_t b = 0; b < one.size(); ++b) {
      EXPECT_TRUE(many[b]->Equals(*one[b])) << "batch " << b << " at " << threads << " threads";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FormatVersions, ScanThreadsTest, ::testing::Values(2, 3),
                         [](const auto& info) { return "v" + std::to_string(info.param); });

}  // namespace
}  // namespace lakesync::table
