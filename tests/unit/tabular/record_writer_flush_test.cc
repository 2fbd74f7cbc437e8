// RecordWriter::Flush: a line-format writer hands every row written so far to the stream (what a
// follow loop relies on before it records how far it got); the formats that write at the end say so.
#include <arrow/builder.h>
#include <arrow/record_batch.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tabular_test_util.h"

namespace lakesync::tabular {
namespace {

using testing::ScratchDir;

std::shared_ptr<arrow::RecordBatch> Ids(int64_t first, int64_t count) {
  arrow::Int64Builder ids;
  for (int64_t i = 0; i < count; ++i) EXPECT_TRUE(ids.Append(first + i).ok());
  return arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::int64())}), count,
                                  {ids.Finish().ValueOrDie()});
}

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(RecordWriterFlushTest, LineFormatsHandEveryRowWrittenToTheStream) {
  for (Format format : {Format::kJsonl, Format::kCsv}) {
    ScratchDir dir;
    const std::string path = dir.Path("rows.txt");
    auto out = testing::LocalIO()->OpenOutput(path).ValueOrDie();
    auto batch = Ids(1, 3);
    auto writer = MakeRecordWriter(format, batch->schema(), out).ValueOrDie();
    ASSERT_TRUE(writer->Write(*batch).ok());
    // A few small rows stay in the writer's buffer until flushed.
    EXPECT_EQ(FileText(path), "");
    ASSERT_TRUE(writer->Flush().ok());
    const std::string first = format == Format::kJsonl ? "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n" : "id\n1\n2\n3\n";
    EXPECT_EQ(FileText(path), first);
    ASSERT_TRUE(writer->Write(*Ids(4, 1)).ok());
    ASSERT_TRUE(writer->Flush().ok());
    EXPECT_EQ(FileText(path), first + (format == Format::kJsonl ? "{\"id\":4}\n" : "4\n"));
    ASSERT_TRUE(writer->Close().ok());
    ASSERT_TRUE(out->Close().ok());
  }
}

TEST(RecordWriterFlushTest, WholeFileFormatsRefuseToFlush) {
  for (Format format : {Format::kTable, Format::kParquet}) {
    ScratchDir dir;
    const std::string path = dir.Path("rows.out");
    auto out = testing::LocalIO()->OpenOutput(path).ValueOrDie();
    auto batch = Ids(1, 2);
    auto writer = MakeRecordWriter(format, batch->schema(), out).ValueOrDie();
    ASSERT_TRUE(writer->Write(*batch).ok());
    const Status flushed = writer->Flush();
    EXPECT_EQ(KindOf(flushed), ErrorKind::kUnsupported) << flushed.ToString();
    // The writer still works: Close writes what it holds.
    ASSERT_TRUE(writer->Close().ok());
    ASSERT_TRUE(out->Close().ok());
    EXPECT_FALSE(FileText(path).empty());
  }
}

}  // namespace
}  // namespace lakesync::tabular
