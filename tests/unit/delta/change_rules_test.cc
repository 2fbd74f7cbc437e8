// The Change Data Feed's per-commit rules on a hand-written log (delta.md §4.2-4.3): DV pairs give
// exactly the rows whose deletion state changed, a no-op MERGE gives nothing, a commit with cdc
// actions gives only its change data files, and a schema change inside the range is refused.
// Expected rows follow from the data written here and the spec's inline DV vector
// ({3, 4, 7, 11, 18, 29}, of which rows 3, 4 and 7 exist in a 10-row file).
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>

#include <fstream>
#include <set>

#include "delta_test_util.h"
#include "lakesync/delta/delta_table.h"

namespace lakesync::delta {
namespace {

constexpr char kInlineDv[] =
    R"({"storageType":"i","pathOrInlineDv":"^Bg9^0rr910000000000iXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L","sizeInBytes":44,"cardinality":6})";

void WriteParquet(const std::string& path, const std::vector<int64_t>& ids,
                  const std::vector<std::string>* change_types = nullptr) {
  arrow::Int64Builder b;
  ASSERT_TRUE(b.AppendValues(ids).ok());
  std::vector<std::shared_ptr<arrow::Field>> fields = {arrow::field("id", arrow::int64())};
  std::vector<std::shared_ptr<arrow::Array>> cols = {b.Finish().ValueOrDie()};
  if (change_types) {
    arrow::StringBuilder s;
    ASSERT_TRUE(s.AppendValues(*change_types).ok());
    fields.push_back(arrow::field("_change_type", arrow::utf8()));
    cols.push_back(s.Finish().ValueOrDie());
  }
  auto table = arrow::Table::Make(arrow::schema(fields), cols);
  auto out = arrow::io::FileOutputStream::Open(path).ValueOrDie();
  ASSERT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), out, 1024).ok());
  ASSERT_TRUE(out->Close().ok());
}

std::string Meta(const std::string& extra_field = "") {
  std::string schema = R"({\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}})" +
                       extra_field + "]}";
  return R"({"metaData":{"id":"t","format":{"provider":"parquet","options":{}},"schemaString":")" + schema +
         R"(","partitionColumns":[],"configuration":{"delta.enableChangeDataFeed":"true"}}})";
}

std::string File(const char* kind, const std::string& path, bool data_change, const std::string& dv = "") {
  std::string s = std::string("{\"") + kind + "\":{\"path\":\"" + path +
                  "\",\"partitionValues\":{},\"size\":0,\"modificationTime\":0,\"dataChange\":" +
                  (data_change ? "true" : "false");
  if (!dv.empty()) s += ",\"deletionVector\":" + dv;
  return s + "}}";
}

class ChangeRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::ScratchDir("rules");
    std::filesystem::create_directories(root_ + "/_delta_log");
    std::vector<int64_t> ten;
    for (int64_t i = 0; i < 10; ++i) ten.push_back(i);
    WriteParquet(root_ + "/a.parquet", ten);
    WriteParquet(root_ + "/b.parquet", {100, 101});
    WriteParquet(root_ + "/c.parquet", {200});
    std::vector<std::string> types = {"update_preimage", "update_postimage", "delete"};
    WriteParquet(root_ + "/cdc.parquet", {5, 50, 6}, &types);
    const std::string protocol =
        R"({"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors","changeDataFeed"]}})";
    Commit(0, {protocol, Meta(), File("add", "a.parquet", true)});
    // v1: the same file gains a DV: rows 3, 4, 7 are deleted.
    Commit(1, {File("remove", "a.parquet", true), File("add", "a.parquet", true, kInlineDv)});
    // v2: the DV is dropped again: rows 3, 4, 7 come back.
    Commit(2, {File("remove", "a.parquet", true, kInlineDv), File("add", "a.parquet", true)});
    // v3: a MERGE that changed nothing but rewrote files with dataChange=true.
    Commit(3, {R"({"commitInfo":{"operation":"MERGE","operationMetrics":{"numTargetRowsInserted":"0","numTargetRowsUpdated":"0","numTargetRowsDeleted":"0"}}})",
               File("add", "b.parquet", true)});
    // v4: cdc actions make the add irrelevant; dataChange=false is ignored anyway.
    Commit(4, {File("add", "c.parquet", true), File("cdc", "cdc.parquet", false),
               File("add", "b.parquet", false)});
    // v5: a column is added.
    Commit(5, {Meta(R"(,{\"name\":\"x\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}})")});
  }
  void Commit(int v, const std::vector<std::string>& lines) {
    char name[64];
    std::snprintf(name, sizeof(name), "/_delta_log/%020d.json", v);
    std::ofstream f(root_ + name);
    for (const auto& l : lines) f << l << "\n";
  }
  std::string root_;
};

TEST_F(ChangeRulesTest, RowsPerCommit) {
  auto table = DeltaTable::Open(root_, io::FileIO::Make().ValueOrDie());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ChangeFeedOptions o;
  o.start_version = 0;
  o.end_version = 4;
  ASSERT_OK_AND_ASSIGN(auto reader, (*table)->ReadChanges(o));
  std::multiset<std::tuple<int64_t, std::string, int64_t>> rows;  // (version, type, id)
  std::shared_ptr<arrow::RecordBatch> batch;
  while (true) {
    ASSERT_OK(reader->ReadNext(&batch));
    if (!batch) break;
    auto id = std::static_pointer_cast<arrow::Int64Array>(batch->GetColumnByName("id"));
    auto type = std::static_pointer_cast<arrow::StringArray>(batch->GetColumnByName("_change_type"));
    auto ver = std::static_pointer_cast<arrow::Int64Array>(batch->GetColumnByName("_commit_version"));
    for (int64_t i = 0; i < batch->num_rows(); ++i) rows.insert({ver->Value(i), type->GetString(i), id->Value(i)});
  }
  std::multiset<std::tuple<int64_t, std::string, int64_t>> expected;
  for (int64_t i = 0; i < 10; ++i) expected.insert({0, "insert", i});
  for (int64_t i : {3, 4, 7}) {
    expected.insert({1, "delete", i});
    expected.insert({2, "insert", i});
  }
  expected.insert({4, "update_preimage", 5});
  expected.insert({4, "update_postimage", 50});
  expected.insert({4, "delete", 6});
  EXPECT_EQ(rows, expected);
}

TEST_F(ChangeRulesTest, SchemaChangeInsideTheRange) {
  auto table = DeltaTable::Open(root_, io::FileIO::Make().ValueOrDie());
  ASSERT_TRUE(table.ok());
  ChangeFeedOptions o;
  o.start_version = 2;
  auto st = (*table)->ReadChanges(o).status();
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.ToString().find("version 5"), std::string::npos) << st.ToString();
  o.start_version = 5;  // starting at the change is fine
  EXPECT_TRUE((*table)->ReadChanges(o).ok());
}

TEST_F(ChangeRulesTest, SnapshotAppliesTheLatestDv) {
  auto table = DeltaTable::Open(root_, io::FileIO::Make().ValueOrDie());
  ASSERT_TRUE(table.ok());
  SnapshotScanOptions o;
  o.version = 1;
  ASSERT_OK_AND_ASSIGN(auto reader, (*table)->ScanSnapshot(o));
  ASSERT_OK_AND_ASSIGN(auto t, reader->ToTable());
  EXPECT_EQ(t->num_rows(), 7);  // 10 rows minus {3, 4, 7}
}

}  // namespace
}  // namespace lakesync::delta
