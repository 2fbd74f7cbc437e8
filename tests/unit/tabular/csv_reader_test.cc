// CSV input read against a table schema. Cells carry the text of our CSV output (docs/cli.md: the
// JSON Lines values without JSON quoting, null as an empty field); expected values are worked out by
// hand from that contract.
#include <arrow/array.h>
#include <arrow/type.h>
#include <arrow/util/decimal.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tabular_test_util.h"

namespace lakesync::tabular {
namespace {

using testing::ReadAll;
using testing::ReadError;
using testing::ScratchDir;

std::shared_ptr<arrow::Schema> Schema() {
  return arrow::schema({
      arrow::field("id", arrow::int64(), false),
      arrow::field("s", arrow::utf8()),
      arrow::field("d", arrow::date32()),
      arrow::field("f", arrow::float32()),
      arrow::field("dec", arrow::decimal128(9, 2)),
      arrow::field("b", arrow::boolean()),
      arrow::field("bin", arrow::binary()),
      arrow::field("st", arrow::struct_({arrow::field("a", arrow::int32(), false)})),
      arrow::field("ls", arrow::list(arrow::date32())),
  });
}

TEST(CsvReaderTest, ValuesNullsAndEmptyStrings) {
  ScratchDir dir;
  const std::string path = dir.Write(
      "v.csv",
      "id,s,d,f,dec,b,bin,st,ls\n"
      "1,plain,2024-02-29,NaN,12.34,true,AAEC/w==,\"{\"\"a\"\": 7}\",\"[\"\"1969-12-31\"\", null]\"\n"
      "2,,,-Infinity,-0.01,false,\"\",,[]\n"
      "3,\"\",1970-01-01,1.5,0,,,,\n"
      "4,\"line\nbreak, comma \"\"quote\"\"\",,,,,,,\n"
      "5,NaN,,,,,,,\n"
      "6,null,,,,,,,\n");
  // Columns in another order than the table's, one left out: matched by name.
  const std::string reordered = dir.Write("r.csv", "s,id\nx,9\n");

  auto table = ReadAll(path, Format::kCsv, Schema());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto batch = (*table)->CombineChunksToBatch().ValueOrDie();
  ASSERT_EQ(batch->num_rows(), 6);
  auto s = std::static_pointer_cast<arrow::StringArray>(batch->GetColumnByName("s"));
  EXPECT_EQ(s->GetView(0), "plain");
  EXPECT_TRUE(s->IsNull(1)) << "an unquoted empty cell is null";
  EXPECT_FALSE(s->IsNull(2)) << "a quoted empty cell is an empty string";
  EXPECT_EQ(s->GetView(2), "");
  EXPECT_EQ(s->GetView(3), "line\nbreak, comma \"quote\"");
  EXPECT_EQ(s->GetView(4), "NaN") << "Arrow's default null spellings are values";
  EXPECT_EQ(s->GetView(5), "null");

  auto d = std::static_pointer_cast<arrow::Date32Array>(batch->GetColumnByName("d"));
  EXPECT_EQ(d->Value(0), 19782);  // 2024-02-29: 54 years of 365 days + 13 leap days + 31 + 28
  EXPECT_TRUE(d->IsNull(1));
  EXPECT_EQ(d->Value(2), 0);
  auto f = std::static_pointer_cast<arrow::FloatArray>(batch->GetColumnByName("f"));
  EXPECT_TRUE(std::isnan(f->Value(0)));
  EXPECT_EQ(f->Value(1), -INFINITY);
  EXPECT_EQ(f->Value(2), 1.5f);
  auto dec = std::static_pointer_cast<arrow::Decimal128Array>(batch->GetColumnByName("dec"));
  EXPECT_EQ(arrow::Decimal128(dec->GetValue(0)), arrow::Decimal128(1234));
  EXPECT_EQ(arrow::Decimal128(dec->GetValue(1)), arrow::Decimal128(-1));
  auto b = std::static_pointer_cast<arrow::BooleanArray>(batch->GetColumnByName("b"));
  EXPECT_TRUE(b->Value(0));
  EXPECT_FALSE(b->Value(1));
  EXPECT_TRUE(b->IsNull(2));
  auto bin = std::static_pointer_cast<arrow::BinaryArray>(batch->GetColumnByName("bin"));
  EXPECT_EQ(bin->GetView(0), std::string_view("\x00\x01\x02\xff", 4));
  EXPECT_FALSE(bin->IsNull(1));
  EXPECT_EQ(bin->GetView(1), "");
  auto st = std::static_pointer_cast<arrow::StructArray>(batch->GetColumnByName("st"));
  EXPECT_EQ(std::static_pointer_cast<arrow::Int32Array>(st->field(0))->Value(0), 7);
  EXPECT_TRUE(st->IsNull(1));
  auto ls = std::static_pointer_cast<arrow::ListArray>(batch->GetColumnByName("ls"));
  EXPECT_EQ(ls->value_length(0), 2);
  EXPECT_EQ(std::static_pointer_cast<arrow::Date32Array>(ls->values())->Value(0), -1);
  EXPECT_TRUE(ls->values()->IsNull(1));
  EXPECT_EQ(ls->value_length(1), 0);
  EXPECT_FALSE(ls->IsNull(1));

  auto r = ReadAll(reordered, Format::kCsv, Schema());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto rb = (*r)->CombineChunksToBatch().ValueOrDie();
  EXPECT_EQ(std::static_pointer_cast<arrow::Int64Array>(rb->GetColumnByName("id"))->Value(0), 9);
  EXPECT_EQ(rb->GetColumnByName("d")->null_count(), 1);
}

class CsvErrorTest : public ::testing::Test {
 protected:
  std::string Error(const std::string& text) {
    const std::string path = dir_.Write("bad.csv", text);
    std::string message = ReadError(path, Format::kCsv, Schema());
    EXPECT_CONTAINS(message, (path));
    return message;
  }
  ScratchDir dir_;
};

TEST_F(CsvErrorTest, HeaderColumnsNotInTheTable) {
  EXPECT_CONTAINS(Error("id,colour\n1,red\n"),
              ("the header names column 'colour', which is not in the table (its columns: id, s, d"));
  EXPECT_CONTAINS(Error("id,colour,size\n1,red,2\n"), ("columns 'colour', 'size', which are not in the table"));
  EXPECT_CONTAINS(Error("id,s,s\n1,a,b\n"), ("the header names column 's' twice"));
  EXPECT_CONTAINS(Error("s\nx\n"), ("required column 'id' is missing from the header"));
}

TEST_F(CsvErrorTest, RowsAndColumnsAreNamed) {
  EXPECT_CONTAINS(Error("id,d\n1,2024-01-01\n2,2024-13-45\n"),
              ("data row 2, column 'd': '2024-13-45' is not a valid date"));
  EXPECT_CONTAINS(Error("id,s\n1,a\n,b\n"), ("data row 2, column 'id': null in a required column"));
  EXPECT_CONTAINS(Error("id\nx\n"), ("data row 1, column 'id': 'x' is not an integer"));
  EXPECT_CONTAINS(Error("id,f\n1,1e99\n"), ("data row 1, column 'f': '1e99' is out of range for type float"));
  EXPECT_CONTAINS(Error("id,b\n1,yes\n"), ("data row 1, column 'b': 'yes' is not a boolean"));
  EXPECT_CONTAINS(Error("id,st\n1,\"{\"\"a\"\": null}\"\n"), ("data row 1, column 'st.a': null in a required field"));
  EXPECT_CONTAINS(Error("id,st\n1,{oops\n"), ("data row 1, column 'st': malformed JSON at character 2"));
  EXPECT_CONTAINS(Error("id,s\n1,\xff\xfe\n"), ("data row 1, column 's': the text is not valid UTF-8"));
  // A quoted line break makes row 3 start on line 5: rows count data rows, not lines.
  EXPECT_CONTAINS(Error("id,s\n1,\"a\nb\"\n2,\"c\nd\"\n3x,e\n"), ("data row 3, column 'id'"));
}

}  // namespace
}  // namespace lakesync::tabular
