// ConformBatch (batches that carry their own types: Parquet input, change streams) and Parquet input
// through OpenReader: errors name the source, the row and the column.
#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/json/from_string.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <gtest/gtest.h>

#include "tabular_test_util.h"

namespace lakesync::tabular {
namespace {

using testing::ReadError;
using testing::ScratchDir;

std::shared_ptr<arrow::Array> Strings(const std::vector<std::optional<std::string>>& values) {
  arrow::StringBuilder b;
  for (const auto& v : values) {
    if (v) {
      EXPECT_TRUE(b.Append(*v).ok());
    } else {
      EXPECT_TRUE(b.AppendNull().ok());
    }
  }
  return b.Finish().ValueOrDie();
}

TEST(ConformBatchTest, CastsByNameAndFillsMissingNullableColumns) {
  auto target = arrow::schema({arrow::field("n", arrow::int32(), false), arrow::field("x", arrow::utf8())});
  auto batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("n", arrow::utf8())}), 2, {Strings({"1", "-2"})});
  auto out = ConformBatch(batch, target, "in.parquet");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE((*out)->schema()->Equals(*target));
  EXPECT_EQ(std::static_pointer_cast<arrow::Int32Array>((*out)->column(0))->Value(1), -2);
  EXPECT_EQ((*out)->column(1)->null_count(), 2);
}

TEST(ConformBatchTest, AValueThatDoesNotCastNamesItsRow) {
  auto target = arrow::schema({arrow::field("n", arrow::int32())});
  auto batch =
      arrow::RecordBatch::Make(arrow::schema({arrow::field("n", arrow::utf8())}), 3, {Strings({"3", std::nullopt, "x"})});
  auto out = ConformBatch(batch, target, "in.parquet", /*first_row=*/100);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(KindOf(out.status()), ErrorKind::kInvalidArgument);
  EXPECT_CONTAINS(out.status().message(),
              ("in.parquet: row 103, column 'n': the value x of type string cannot be converted to int"));
}

TEST(ConformBatchTest, TypesThatDoNotCastAtAllNameNoRow) {
  auto target = arrow::schema({arrow::field("n", arrow::struct_({arrow::field("a", arrow::int32())}))});
  auto batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("n", arrow::utf8())}), 1, {Strings({"3"})});
  auto out = ConformBatch(batch, target, "in.parquet");
  ASSERT_FALSE(out.ok());
  EXPECT_CONTAINS(out.status().message(), ("in.parquet: column 'n' of type string cannot be converted to struct"));
  EXPECT_EQ(out.status().message().find("row"), std::string::npos);
}

TEST(ConformBatchTest, NullsInRequiredColumnsAndNestedFields) {
  auto target = arrow::schema({arrow::field("id", arrow::utf8(), false)});
  auto batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::utf8())}), 3,
                                        {Strings({"a", "b", std::nullopt})});
  auto out = ConformBatch(batch, target, "src", 10);
  ASSERT_FALSE(out.ok());
  EXPECT_CONTAINS(out.status().message(), ("src: row 13, column 'id': null in a required column"));

  // struct<req: string not null>: a null under a null struct is fine, under a valid one it is not.
  auto struct_type = arrow::struct_({arrow::field("req", arrow::utf8(), false)});
  auto loose_type = arrow::struct_({arrow::field("req", arrow::utf8())});
  auto children = Strings({"a", std::nullopt, std::nullopt});
  auto make_struct = [&](std::vector<bool> valid) {
    arrow::TypedBufferBuilder<bool> bits;
    for (bool v : valid) EXPECT_TRUE(bits.Append(v).ok());
    auto bitmap = bits.Finish().ValueOrDie();
    return arrow::StructArray::Make({children}, {loose_type->field(0)}, bitmap).ValueOrDie();
  };
  auto nested_target = arrow::schema({arrow::field("st", struct_type)});
  auto ok_batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("st", loose_type)}), 3,
                                           {make_struct({true, false, false})});
  EXPECT_TRUE(ConformBatch(ok_batch, nested_target, "src").ok());
  auto bad_batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("st", loose_type)}), 3,
                                            {make_struct({true, false, true})});
  auto bad = ConformBatch(bad_batch, nested_target, "src");
  ASSERT_FALSE(bad.ok());
  EXPECT_CONTAINS(bad.status().message(), ("src: row 3, column 'st"));

  // list<element: int32 not null> already of the target type: rows 1 and 2 are fine, row 3 has a null.
  arrow::ListBuilder lists(arrow::default_memory_pool(), std::make_shared<arrow::Int32Builder>());
  auto* ints = static_cast<arrow::Int32Builder*>(lists.value_builder());
  ASSERT_TRUE(lists.Append().ok());
  ASSERT_TRUE(ints->Append(1).ok());
  ASSERT_TRUE(lists.AppendNull().ok());
  ASSERT_TRUE(lists.Append().ok());
  ASSERT_TRUE(ints->Append(2).ok());
  ASSERT_TRUE(ints->AppendNull().ok());
  auto list_array = lists.Finish().ValueOrDie();
  auto list_target = arrow::schema({arrow::field("ls", arrow::list(arrow::field("element", arrow::int32(), false)))});
  auto list_batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("ls", list_array->type())}), 3, {list_array});
  auto list_out = ConformBatch(list_batch, list_target, "src");
  ASSERT_FALSE(list_out.ok());
  EXPECT_CONTAINS(list_out.status().message(), ("src: row 3, column 'ls.element': null in a required field"));
}

TEST(ConformBatchTest, AStructFieldTheTableLacksIsAnErrorNotDropped) {
  // Arrow's struct cast matches fields by name and drops the ones the target lacks: checked first, at
  // any depth, so that no value disappears on the way into a table.
  auto st = arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("b", arrow::utf8())});
  auto input = arrow::json::ArrayFromJSONString(st, R"([{"a": 1, "b": "x"}])").ValueOrDie();
  auto batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("st", st)}), 1, {input});
  auto narrow = arrow::schema({arrow::field("st", arrow::struct_({arrow::field("a", arrow::int64())}))});
  auto out = ConformBatch(batch, narrow, "src");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "src: field 'st.b' is not in the table schema");
  auto listed = arrow::list(arrow::struct_({arrow::field("c", arrow::int32()), arrow::field("d", arrow::int32())}));
  auto list_batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("li", listed)}), 1,
                                             {arrow::json::ArrayFromJSONString(listed, R"([[{"c": 1, "d": 2}]])").ValueOrDie()});
  auto list_target = arrow::schema({arrow::field("li", arrow::list(arrow::struct_({arrow::field("c", arrow::int32())})))});
  auto list_out = ConformBatch(list_batch, list_target, "src");
  ASSERT_FALSE(list_out.ok());
  EXPECT_EQ(list_out.status().message(), "src: field 'li.element.d' is not in the table schema");
  // A field the input lacks is filled with null (and the wider target type is cast to).
  auto wide = arrow::schema({arrow::field("st", arrow::struct_({arrow::field("a", arrow::int64()),
                                                                 arrow::field("b", arrow::utf8()),
                                                                 arrow::field("c", arrow::float64())}))});
  auto filled = ConformBatch(batch, wide, "src");
  ASSERT_TRUE(filled.ok()) << filled.status().ToString();
  EXPECT_EQ((*filled)->column(0)->ToString(), arrow::json::ArrayFromJSONString(wide->field(0)->type(),
                                                                     R"([{"a": 1, "b": "x", "c": null}])")
                                                   .ValueOrDie()
                                                   ->ToString());
}

TEST(ParquetInputTest, ErrorsNameTheRowInTheFileAcrossBatches) {
  ScratchDir dir;
  const std::string path = dir.Path("in.parquet");
  auto file_schema = arrow::schema({arrow::field("n", arrow::utf8())});
  std::vector<std::optional<std::string>> values;
  for (int i = 0; i < 7; ++i) values.push_back(std::to_string(i));
  values.push_back("eight");
  auto batch = arrow::RecordBatch::Make(file_schema, 8, {Strings(values)});
  {
    auto out = testing::LocalIO()->OpenOutput(path).ValueOrDie();
    auto writer = MakeRecordWriter(Format::kParquet, file_schema, out).ValueOrDie();
    ASSERT_TRUE(writer->Write(*batch).ok());
    ASSERT_TRUE(writer->Close().ok());
    ASSERT_TRUE(out->Close().ok());
  }
  auto target = arrow::schema({arrow::field("n", arrow::int64())});
  EXPECT_CONTAINS(ReadError(path, Format::kParquet, target, /*batch_rows=*/3),
              ("in.parquet: row 8, column 'n': the value eight of type string cannot be converted to long"));
}

}  // namespace
}  // namespace lakesync::tabular
