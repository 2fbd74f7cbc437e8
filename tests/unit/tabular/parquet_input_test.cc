// Parquet input read by row group on the executor (formats/tabular/readers.cc): every row comes back
// once, in file order, in the same batches whatever the thread count.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>

#include "lakesync/common/executor.h"
#include "tabular_test_util.h"

namespace lakesync::tabular {
namespace {

struct Read {
  std::shared_ptr<arrow::Table> table;
  std::vector<int64_t> batch_rows;
};

Read ReadWithThreads(const std::string& path, int threads) {
  EXPECT_TRUE(ConfigureThreads(threads).ok());
  ReadOptions options;
  options.batch_rows = 700;
  auto reader = OpenReader(*testing::LocalIO(), path, Format::kParquet, options).ValueOrDie();
  Read out;
  arrow::RecordBatchVector batches;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    EXPECT_TRUE(reader->ReadNext(&batch).ok());
    if (!batch) break;
    out.batch_rows.push_back(batch->num_rows());
    batches.push_back(batch);
  }
  out.table = arrow::Table::FromRecordBatches(reader->schema(), batches).ValueOrDie();
  return out;
}

TEST(ParquetInputTest, RowGroupsComeBackInFileOrderForEveryThreadCount) {
  const int saved = ThreadCount();
  testing::ScratchDir dir;
  arrow::Int64Builder id;
  arrow::StringBuilder name;
  for (int64_t i = 0; i < 10500; ++i) {
    ASSERT_TRUE(id.Append(i).ok());
    ASSERT_TRUE(name.Append("n" + std::to_string(i * 7)).ok());
  }
  auto table = arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())}),
                                  {id.Finish().ValueOrDie(), name.Finish().ValueOrDie()});
  for (int64_t row_group : {int64_t{1000}, int64_t{20000}}) {  // 11 row groups, then one
    SCOPED_TRACE("row groups of " + std::to_string(row_group) + " rows");
    const std::string path = dir.Path("in.parquet");
    auto out = arrow::io::FileOutputStream::Open(path).ValueOrDie();
    ASSERT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), out, row_group).ok());
    ASSERT_TRUE(out->Close().ok());
    const Read one = ReadWithThreads(path, 1);
    const Read four = ReadWithThreads(path, 4);
    EXPECT_TRUE(one.table->Equals(*table)) << one.table->ToString().substr(0, 400);
    EXPECT_TRUE(four.table->Equals(*table)) << four.table->ToString().substr(0, 400);
    EXPECT_EQ(one.batch_rows, four.batch_rows);
  }
  ASSERT_TRUE(ConfigureThreads(saved).ok());
}

}  // namespace
}  // namespace lakesync::tabular
