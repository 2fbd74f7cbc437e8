// The CLI's Parquet output (MakeRecordWriter with Format::kParquet): columns whose first page of rows
// would not shrink with a dictionary are written plain, the others keep theirs; the values are the
// rows written; a stream without rows is a file with the schema alone.
#include <arrow/builder.h>
#include <arrow/io/file.h>
#include <arrow/record_batch.h>
#include <arrow/table.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include "tabular_test_util.h"

namespace lakesync::tabular {
namespace {

using testing::ScratchDir;

std::shared_ptr<arrow::RecordBatch> Rows(int64_t first, int64_t count) {
  arrow::Int64Builder ids;
  arrow::StringBuilder kinds;
  const char* names[] = {"insert", "delete", "update_postimage"};
  for (int64_t i = first; i < first + count; ++i) {
    EXPECT_TRUE(ids.Append(i * 7919).ok());
    EXPECT_TRUE(kinds.Append(names[i % 3]).ok());
  }
  return arrow::RecordBatch::Make(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("kind", arrow::utf8())}), count,
      {ids.Finish().ValueOrDie(), kinds.Finish().ValueOrDie()});
}

std::shared_ptr<arrow::io::RandomAccessFile> In(const std::string& path) {
  return arrow::io::ReadableFile::Open(path).ValueOrDie();
}

TEST(ParquetOutputTest, UniqueColumnsPlainOthersWithADictionary) {
  ScratchDir dir;
  const std::string path = dir.Path("rows.parquet");
  auto first = Rows(0, 30000), second = Rows(30000, 5000);
  auto writer = MakeRecordWriter(Format::kParquet, first->schema(),
                                 testing::LocalIO()->OpenOutput(path).ValueOrDie()).ValueOrDie();
  ASSERT_TRUE(writer->Write(*first).ok());
  ASSERT_TRUE(writer->Write(*second).ok());
  ASSERT_TRUE(writer->Close().ok());

  auto metadata = parquet::ReadMetaData(In(path));
  for (int rg = 0; rg < metadata->num_row_groups(); ++rg) {
    EXPECT_FALSE(metadata->RowGroup(rg)->ColumnChunk(0)->has_dictionary_page()) << "id, row group " << rg;
    EXPECT_TRUE(metadata->RowGroup(rg)->ColumnChunk(1)->has_dictionary_page()) << "kind, row group " << rg;
  }
  std::unique_ptr<parquet::arrow::FileReader> reader =
      parquet::arrow::OpenFile(In(path), arrow::default_memory_pool()).ValueOrDie();
  std::shared_ptr<arrow::Table> table;
  ASSERT_TRUE(reader->ReadTable(&table).ok());
  auto want = arrow::Table::FromRecordBatches({first, second}).ValueOrDie();
  EXPECT_TRUE(table->Equals(*want)) << table->ToString();
}

TEST(ParquetOutputTest, NoRowsIsAFileWithTheSchema) {
  ScratchDir dir;
  const std::string path = dir.Path("empty.parquet");
  auto schema = Rows(0, 1)->schema();
  auto writer = MakeRecordWriter(Format::kParquet, schema, testing::LocalIO()->OpenOutput(path).ValueOrDie())
                    .ValueOrDie();
  ASSERT_TRUE(writer->Close().ok());
  std::unique_ptr<parquet::arrow::FileReader> reader =
      parquet::arrow::OpenFile(In(path), arrow::default_memory_pool()).ValueOrDie();
  std::shared_ptr<arrow::Table> table;
  ASSERT_TRUE(reader->ReadTable(&table).ok());
  EXPECT_EQ(table->num_rows(), 0);
  EXPECT_TRUE(table->schema()->Equals(*schema));
}

}  // namespace
}  // namespace lakesync::tabular
