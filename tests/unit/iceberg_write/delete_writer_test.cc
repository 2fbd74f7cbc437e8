#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>

#include "../parquet_io/parquet_test_util.h"
#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/iceberg/write/equality_delete_writer.h"
#include "lakesync/iceberg/write/file_namer.h"
#include "lakesync/iceberg/write/position_delete_writer.h"

namespace lakesync::iceberg {
namespace {

using testing::Field;
using testing::TempDir;

std::shared_ptr<arrow::Table> ReadLocal(const std::string& location, const SchemaPtr& schema) {
  auto r = parquet_io::ParquetDataReader::Open(testing::OpenIn(LocalPathOf(location).ValueOrDie()), location, schema)
               .ValueOrDie();
  return r->ReadAll().ValueOrDie();
}

TEST(PositionDeleteWriter, WritesSortedDeduplicatedRowsWithFullBounds) {
  TempDir dir;
  FileNamer namer("file://" + dir.path() + "/t/data", 0, 4, "11111111-2222-4333-8444-555555555555");
  const std::string location = namer.NewLocation("cat=red", /*deletes=*/true);
  EXPECT_EQ(location, "file://" + dir.path() +
                          "/t/data/cat=red/00000-4-11111111-2222-4333-8444-555555555555-00001-deletes.parquet");
  PositionDeleteWriterOptions o;
  o.location = location;
  o.output_factory = MakeLocalOutputFactory();
  o.spec_id = 2;
  o.partition = {Literal(std::string("red"))};
  auto w = PositionDeleteWriter::Make(o).ValueOrDie();
  // Two data files with long paths (bounds must not be truncated), unsorted, with a duplicate.
  const std::string a = "s3://bucket/warehouse/db/t/data/cat=red/00000-0-aaaaaaaa-00001.parquet";
  const std::string b = "s3://bucket/warehouse/db/t/data/cat=red/00000-0-aaaaaaaa-00002.parquet";
  LS_ASSERT_OK(w->DeletePositions(b, {9, 3, 3, 100000}));
  LS_ASSERT_OK(w->DeletePositions(a, {7, 0}));
  EXPECT_EQ(w->pending(), 6);
  EXPECT_FALSE(w->Delete(a, -1).ok());
  EXPECT_FALSE(w->Delete("", 1).ok());
  LS_ASSERT_OK_AND_ASSIGN(auto f, w->Close());
  EXPECT_EQ(f.content, FileContent::kPositionDeletes);
  EXPECT_EQ(f.file_format, FileFormat::kParquet);
  EXPECT_EQ(f.file_path, location);
  EXPECT_EQ(f.spec_id, 2);
  EXPECT_EQ(f.partition, o.partition);
  EXPECT_EQ(f.record_count, 5);
  EXPECT_FALSE(f.referenced_data_file.has_value());
  EXPECT_FALSE(f.sort_order_id.has_value());
  EXPECT_EQ(f.lower_bounds.at(kDeleteFilePathFieldId), a);
  EXPECT_EQ(f.upper_bounds.at(kDeleteFilePathFieldId), b);
  EXPECT_EQ(f.lower_bounds.at(kDeleteFilePosFieldId), Literal(int64_t{0}).ToBytes(*Type::Long()).ValueOrDie());
  EXPECT_EQ(f.upper_bounds.at(kDeleteFilePosFieldId), Literal(int64_t{100000}).ToBytes(*Type::Long()).ValueOrDie());
  EXPECT_EQ(f.null_value_counts.at(kDeleteFilePosFieldId), 0);

  auto t = ReadLocal(location, PositionDeleteSchema());
  auto expected = arrow::Table::Make(
      ToArrowSchema(*PositionDeleteSchema()).ValueOrDie(),
      {arrow::json::ArrayFromJSONString(arrow::utf8(), "[\"" + a + "\",\"" + a + "\",\"" + b + "\",\"" + b + "\",\"" + b + "\"]")
           .ValueOrDie(),
       arrow::json::ArrayFromJSONString(arrow::int64(), "[0, 7, 3, 9, 100000]").ValueOrDie()});
  EXPECT_TRUE(t->Equals(*expected)) << t->ToString();

  // The Parquet schema carries the reserved field ids, both columns required.
  auto reader = parquet::ParquetFileReader::OpenFile(LocalPathOf(location).ValueOrDie());
  const auto* root = reader->metadata()->schema()->group_node();
  EXPECT_EQ(root->field(0)->name(), "file_path");
  EXPECT_EQ(root->field(0)->field_id(), 2147483546);
  EXPECT_EQ(root->field(1)->name(), "pos");
  EXPECT_EQ(root->field(1)->field_id(), 2147483545);
  EXPECT_EQ(root->field(1)->repetition(), parquet::Repetition::REQUIRED);
}

TEST(PositionDeleteWriter, SetsReferencedDataFileForASingleTarget) {
  TempDir dir;
  PositionDeleteWriterOptions o;
  o.location = "file://" + dir.path() + "/d.parquet";
  o.output_factory = MakeLocalOutputFactory();
  o.properties = {{"write.delete.parquet.compression-codec", "snappy"}};
  auto w = PositionDeleteWriter::Make(o).ValueOrDie();
  for (int64_t p = 2000; p-- > 0;) LS_ASSERT_OK(w->Delete("file:///t/data/x.parquet", p * 3));
  LS_ASSERT_OK_AND_ASSIGN(auto f, w->Close());
  EXPECT_EQ(f.referenced_data_file, std::optional<std::string>("file:///t/data/x.parquet"));
  EXPECT_EQ(f.record_count, 2000);
  auto reader = parquet::ParquetFileReader::OpenFile(dir.path() + "/d.parquet");
  EXPECT_EQ(reader->metadata()->RowGroup(0)->ColumnChunk(0)->compression(), arrow::Compression::SNAPPY);

  auto empty = PositionDeleteWriter::Make(o).ValueOrDie();
  EXPECT_EQ(KindOf(empty->Close().status()), ErrorKind::kInvalidArgument);
  o.properties = {{"write.delete.parquet.compression-codec", "nope"}};
  EXPECT_FALSE(PositionDeleteWriter::Make(o).ok());
}

TEST(EqualityDeleteWriter, WritesTheProjectedEqualityColumns) {
  TempDir dir;
  auto schema = std::make_shared<const Schema>(
      0, std::vector<NestedField>{Field(1, "id", Type::Long(), true), Field(2, "name", Type::String()),
                                  Field(3, "st", Type::Struct({Field(4, "k", Type::Int()), Field(5, "x", Type::Double())})),
                                  Field(6, "tags", Type::List(Field(7, "element", Type::String())))});
  EqualityDeleteWriterOptions o;
  o.table_schema = schema;
  o.equality_field_ids = {1, 4};
  o.location = "file://" + dir.path() + "/eq-deletes.parquet";
  o.output_factory = MakeLocalOutputFactory();
  o.spec_id = 1;
  o.partition = {Literal(int32_t{3})};
  auto w = EqualityDeleteWriter::Make(o).ValueOrDie();
  ASSERT_EQ(w->delete_schema()->fields().size(), 2u);
  EXPECT_EQ(w->delete_schema()->fields()[1].type->fields().size(), 1u);
  auto arrow_schema = ToArrowSchema(*schema).ValueOrDie();
  auto col = [&](int i, const std::string& json) {
    return arrow::json::ArrayFromJSONString(arrow_schema->field(i)->type(), json).ValueOrDie();
  };
  auto rows = arrow::RecordBatch::Make(arrow_schema, 3,
                                       {col(0, "[5, 1, 9]"), col(1, R"(["a", "b", null])"),
                                        col(2, R"([{"k": 10, "x": 1.5}, null, {"k": null, "x": 2.5}])"),
                                        col(3, R"([["t"], [], null])")});
  LS_ASSERT_OK(w->Write(rows));
  LS_ASSERT_OK_AND_ASSIGN(auto f, w->Close());
  EXPECT_EQ(f.content, FileContent::kEqualityDeletes);
  EXPECT_EQ(f.equality_ids, (std::vector<int32_t>{1, 4}));
  EXPECT_EQ(f.record_count, 3);
  EXPECT_EQ(f.spec_id, 1);
  EXPECT_EQ(f.lower_bounds.at(1), Literal(int64_t{1}).ToBytes(*Type::Long()).ValueOrDie());
  EXPECT_EQ(f.upper_bounds.at(1), Literal(int64_t{9}).ToBytes(*Type::Long()).ValueOrDie());
  EXPECT_EQ(f.null_value_counts.at(4), 2);
  EXPECT_EQ(f.value_counts.count(2), 0u);  // not an equality column: not in the file

  auto t = ReadLocal(o.location, w->delete_schema());
  EXPECT_EQ(t->num_columns(), 2);
  auto st = arrow::Concatenate(t->column(1)->chunks()).ValueOrDie();
  auto expected_st = arrow::json::ArrayFromJSONString(st->type(), R"([{"k": 10}, null, {"k": null}])").ValueOrDie();
  EXPECT_TRUE(st->Equals(*expected_st)) << st->ToString();

  o.equality_field_ids = {7};
  EXPECT_FALSE(EqualityDeleteWriter::Make(o).ok());
  o.equality_field_ids = {3};
  EXPECT_FALSE(EqualityDeleteWriter::Make(o).ok());
  o.equality_field_ids = {};
  EXPECT_FALSE(EqualityDeleteWriter::Make(o).ok());
}

}  // namespace
}  // namespace lakesync::iceberg
