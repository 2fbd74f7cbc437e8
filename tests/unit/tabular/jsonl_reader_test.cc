// JSON Lines input read against a table schema (OpenReader with a target schema). Expected values
// come from the JSON Lines contract in docs/cli.md and tabular.h, worked out by hand or with
// std::chrono's civil calendar and Arrow's own decimal parser, not with the reader's helpers.
#include <arrow/array.h>
#include <arrow/type.h>
#include <arrow/util/decimal.h>
#include <arrow/util/key_value_metadata.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>

#include "tabular_test_util.h"

namespace lakesync::tabular {
namespace {

using testing::ReadAll;
using testing::ReadError;
using testing::ScratchDir;

int32_t Days(int y, unsigned m, unsigned d) {
  return static_cast<int32_t>(
      std::chrono::sys_days{std::chrono::year{y} / std::chrono::month{m} / std::chrono::day{d}}.time_since_epoch().count());
}

int64_t Micros(int y, unsigned m, unsigned d, int hh, int mm, int ss, int64_t frac_us) {
  return (static_cast<int64_t>(Days(y, m, d)) * 86400 + hh * 3600 + mm * 60 + ss) * 1000000 + frac_us;
}

std::shared_ptr<arrow::RecordBatch> ReadBatch(const std::string& path, std::shared_ptr<arrow::Schema> schema) {
  auto table = ReadAll(path, Format::kJsonl, schema);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (!table.ok()) return nullptr;
  return (*table)->CombineChunksToBatch().ValueOrDie();
}

template <typename T>
std::shared_ptr<T> Column(const std::shared_ptr<arrow::RecordBatch>& batch, const std::string& name) {
  return std::static_pointer_cast<T>(batch->GetColumnByName(name));
}

TEST(JsonlReaderTest, PrimitiveValuesInTheContractEncodings) {
  ScratchDir dir;
  auto schema = arrow::schema({
      arrow::field("b", arrow::boolean()), arrow::field("i", arrow::int32()), arrow::field("l", arrow::int64()),
      arrow::field("f", arrow::float32()), arrow::field("d", arrow::float64()),
      arrow::field("dec", arrow::decimal128(9, 2)), arrow::field("date", arrow::date32()),
      arrow::field("t", arrow::time64(arrow::TimeUnit::MICRO)),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO)),
      arrow::field("tstz", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
      arrow::field("tsns", arrow::timestamp(arrow::TimeUnit::NANO)), arrow::field("s", arrow::utf8()),
      arrow::field("bin", arrow::binary()), arrow::field("u", arrow::fixed_size_binary(16)),
      arrow::field("fx", arrow::fixed_size_binary(3))});
  const std::string path = dir.Write(
      "p.jsonl",
      R"({"b": true, "i": -2147483648, "l": 9007199254740993, "f": "NaN", "d": "-Infinity", "dec": "12.34", )"
      R"("date": "2024-02-29", "t": "22:31:08.123456", "ts": "1969-12-31T23:59:59.999999", )"
      R"("tstz": "2024-01-31T22:31:08.123456Z", "tsns": "1970-01-01T00:00:00.000000001", "s": "h\u00e9 \"q\"", )"
      R"("bin": "AAEC/w==", "u": "f79c3e09-677c-4bbd-a479-3f349cb785e7", "fx": "YWJj"})"
      "\n"
      R"({"b": false, "i": 7, "l": -9223372036854775808, "f": "Infinity", "d": -0.0, "dec": 12.5, )"
      R"("date": "1969-12-31", "t": "00:00:00", "ts": "2024-01-31T22:31:08", )"
      R"("tstz": "2024-01-01T02:00:00+02:00", "tsns": "1969-12-31T23:59:59.999999999", "s": "", )"
      R"("bin": "", "u": "AAECAwQFBgcICQoLDA0ODw==", "fx": null})"
      "\n"
      R"({"f": 1.5, "d": 5e-324, "dec": "-0.01"})"
      "\n");
  auto batch = ReadBatch(path, schema);
  ASSERT_NE(batch, nullptr);
  ASSERT_EQ(batch->num_rows(), 3);

  auto b = Column<arrow::BooleanArray>(batch, "b");
  EXPECT_TRUE(b->Value(0));
  EXPECT_FALSE(b->Value(1));
  EXPECT_TRUE(b->IsNull(2));
  EXPECT_EQ(Column<arrow::Int32Array>(batch, "i")->Value(0), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(Column<arrow::Int64Array>(batch, "l")->Value(0), 9007199254740993LL);  // 2^53 + 1: not a double
  EXPECT_EQ(Column<arrow::Int64Array>(batch, "l")->Value(1), std::numeric_limits<int64_t>::min());

  auto f = Column<arrow::FloatArray>(batch, "f");
  EXPECT_TRUE(std::isnan(f->Value(0)));
  EXPECT_EQ(f->Value(1), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f->Value(2), 1.5f);
  auto d = Column<arrow::DoubleArray>(batch, "d");
  EXPECT_EQ(d->Value(0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(d->Value(1), 0.0);
  EXPECT_TRUE(std::signbit(d->Value(1))) << "-0.0 keeps its sign";
  EXPECT_EQ(d->Value(2), std::numeric_limits<double>::denorm_min());

  auto dec = Column<arrow::Decimal128Array>(batch, "dec");
  EXPECT_EQ(arrow::Decimal128(dec->GetValue(0)), arrow::Decimal128(1234));
  EXPECT_EQ(arrow::Decimal128(dec->GetValue(1)), arrow::Decimal128(1250));
  EXPECT_EQ(arrow::Decimal128(dec->GetValue(2)), arrow::Decimal128(-1));

  auto date = Column<arrow::Date32Array>(batch, "date");
  EXPECT_EQ(date->Value(0), Days(2024, 2, 29));
  EXPECT_EQ(date->Value(1), -1);
  EXPECT_EQ(Column<arrow::Time64Array>(batch, "t")->Value(0), (22 * 3600 + 31 * 60 + 8) * 1000000LL + 123456);
  EXPECT_EQ(Column<arrow::Time64Array>(batch, "t")->Value(1), 0);
  auto ts = Column<arrow::TimestampArray>(batch, "ts");
  EXPECT_EQ(ts->Value(0), -1);
  EXPECT_EQ(ts->Value(1), Micros(2024, 1, 31, 22, 31, 8, 0));
  auto tstz = Column<arrow::TimestampArray>(batch, "tstz");
  EXPECT_EQ(tstz->Value(0), Micros(2024, 1, 31, 22, 31, 8, 123456));
  EXPECT_EQ(tstz->Value(1), Micros(2024, 1, 1, 0, 0, 0, 0)) << "an offset is converted to UTC";
  auto tsns = Column<arrow::TimestampArray>(batch, "tsns");
  EXPECT_EQ(tsns->Value(0), 1);
  EXPECT_EQ(tsns->Value(1), -1);

  auto s = Column<arrow::StringArray>(batch, "s");
  EXPECT_EQ(s->GetView(0), "h\xC3\xA9 \"q\"");
  EXPECT_EQ(s->GetView(1), "");
  EXPECT_FALSE(s->IsNull(1));
  EXPECT_TRUE(s->IsNull(2));
  auto bin = Column<arrow::BinaryArray>(batch, "bin");
  EXPECT_EQ(bin->GetView(0), std::string_view("\x00\x01\x02\xff", 4));
  EXPECT_EQ(bin->GetView(1), "");
  auto u = Column<arrow::FixedSizeBinaryArray>(batch, "u");
  EXPECT_EQ(u->GetView(0), std::string_view("\xf7\x9c\x3e\x09\x67\x7c\x4b\xbd\xa4\x79\x3f\x34\x9c\xb7\x85\xe7", 16));
  EXPECT_EQ(u->GetView(1), std::string_view("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f", 16));
  auto fx = Column<arrow::FixedSizeBinaryArray>(batch, "fx");
  EXPECT_EQ(fx->GetView(0), "abc");
  EXPECT_TRUE(fx->IsNull(1));
}

TEST(JsonlReaderTest, LongDecimalsAreExact) {
  ScratchDir dir;
  auto schema = arrow::schema({arrow::field("m", arrow::decimal128(38, 10))});
  // As a JSON number too: a double would keep only ~17 digits of it.
  const std::string path = dir.Write("d.jsonl",
                                     "{\"m\": \"-9999999999999999999999999999.9999999999\"}\n"
                                     "{\"m\": 1234567890123456789012345678.0123456789}\n"
                                     "{\"m\": \"5.68E-8\"}\n{\"m\": \"0E-10\"}\n");
  auto batch = ReadBatch(path, schema);
  ASSERT_NE(batch, nullptr);
  auto m = Column<arrow::Decimal128Array>(batch, "m");
  int32_t precision, scale;
  arrow::Decimal128 expected;
  ASSERT_TRUE(arrow::Decimal128::FromString("-99999999999999999999999999999999999999", &expected, &precision, &scale).ok());
  EXPECT_EQ(arrow::Decimal128(m->GetValue(0)), expected);
  ASSERT_TRUE(arrow::Decimal128::FromString("12345678901234567890123456780123456789", &expected, &precision, &scale).ok());
  EXPECT_EQ(arrow::Decimal128(m->GetValue(1)), expected);
  EXPECT_EQ(arrow::Decimal128(m->GetValue(2)), arrow::Decimal128(568));
  EXPECT_EQ(arrow::Decimal128(m->GetValue(3)), arrow::Decimal128(0));
}

TEST(JsonlReaderTest, NestedValuesWithTextEncodingsInside) {
  ScratchDir dir;
  auto inner = arrow::struct_({arrow::field("x", arrow::float64()), arrow::field("day", arrow::date32()),
                               arrow::field("price", arrow::decimal128(9, 2))});
  auto schema = arrow::schema({
      arrow::field("st", arrow::struct_({arrow::field("id", arrow::int32(), false), arrow::field("in", inner)})),
      arrow::field("dates", arrow::list(arrow::field("element", arrow::date32()))),
      arrow::field("by_name", arrow::map(arrow::utf8(), arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))),
      arrow::field("by_id", arrow::map(arrow::int32(), arrow::binary())),
  });
  const std::string path = dir.Write(
      "n.jsonl",
      R"({"st": {"id": 1, "in": {"x": "NaN", "day": "2024-02-29", "price": "12.34"}}, "dates": ["1969-12-31", null],)"
      R"( "by_name": {"a": "1970-01-01T00:00:00.000001Z", "b": null}, "by_id": [{"key": 3, "value": "AAE="}]})"
      "\n"
      R"({"st": {"id": 2}, "dates": [], "by_name": {}, "by_id": [{"key": -1}]})"
      "\n"
      R"({"st": null})"
      "\n");
  auto batch = ReadBatch(path, schema);
  ASSERT_NE(batch, nullptr);
  ASSERT_EQ(batch->num_rows(), 3);

  auto st = Column<arrow::StructArray>(batch, "st");
  auto id = std::static_pointer_cast<arrow::Int32Array>(st->field(0));
  EXPECT_EQ(id->Value(0), 1);
  EXPECT_EQ(id->Value(1), 2);
  EXPECT_TRUE(st->IsNull(2));
  auto in = std::static_pointer_cast<arrow::StructArray>(st->field(1));
  EXPECT_TRUE(std::isnan(std::static_pointer_cast<arrow::DoubleArray>(in->field(0))->Value(0)));
  EXPECT_EQ(std::static_pointer_cast<arrow::Date32Array>(in->field(1))->Value(0), Days(2024, 2, 29));
  EXPECT_EQ(arrow::Decimal128(std::static_pointer_cast<arrow::Decimal128Array>(in->field(2))->GetValue(0)),
            arrow::Decimal128(1234));
  EXPECT_TRUE(in->IsNull(1)) << "a struct field left out is null";

  auto dates = Column<arrow::ListArray>(batch, "dates");
  EXPECT_EQ(dates->value_length(0), 2);
  auto date_values = std::static_pointer_cast<arrow::Date32Array>(dates->values());
  EXPECT_EQ(date_values->Value(0), -1);
  EXPECT_TRUE(date_values->IsNull(1));
  EXPECT_EQ(dates->value_length(1), 0);
  EXPECT_FALSE(dates->IsNull(1));
  EXPECT_TRUE(dates->IsNull(2));

  auto by_name = Column<arrow::MapArray>(batch, "by_name");
  ASSERT_EQ(by_name->value_length(0), 2);
  EXPECT_EQ(std::static_pointer_cast<arrow::StringArray>(by_name->keys())->GetView(0), "a");
  EXPECT_EQ(std::static_pointer_cast<arrow::StringArray>(by_name->keys())->GetView(1), "b");
  EXPECT_EQ(std::static_pointer_cast<arrow::TimestampArray>(by_name->items())->Value(0), 1);
  EXPECT_TRUE(by_name->items()->IsNull(1));
  EXPECT_EQ(by_name->value_length(1), 0);
  EXPECT_FALSE(by_name->IsNull(1));

  auto by_id = Column<arrow::MapArray>(batch, "by_id");
  EXPECT_EQ(std::static_pointer_cast<arrow::Int32Array>(by_id->keys())->Value(0), 3);
  EXPECT_EQ(std::static_pointer_cast<arrow::BinaryArray>(by_id->items())->GetView(0), std::string_view("\x00\x01", 2));
  EXPECT_EQ(std::static_pointer_cast<arrow::Int32Array>(by_id->keys())->Value(1), -1);
  EXPECT_TRUE(by_id->items()->IsNull(1)) << "an entry without \"value\" has a null value";
}

TEST(JsonlReaderTest, FieldMetadataAndNullabilityOfTheTargetAreKept) {
  ScratchDir dir;
  auto id = [](int i) { return arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(i)}); };
  auto schema = arrow::schema({
      arrow::field("m",
                   std::make_shared<arrow::MapType>(arrow::field("key", arrow::utf8(), false, id(3)),
                                                    arrow::field("value", arrow::int64(), false, id(4))),
                   true, id(1)),
      arrow::field("l", arrow::list(arrow::field("element", arrow::int32(), false, id(5))), false, id(2)),
  });
  const std::string path = dir.Write("m.jsonl", "{\"m\": {\"a\": 1}, \"l\": [1, 2]}\n");
  auto table = ReadAll(path, Format::kJsonl, schema);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_TRUE((*table)->schema()->Equals(*schema, /*check_metadata=*/true));
  for (int i = 0; i < schema->num_fields(); ++i) {
    EXPECT_TRUE((*table)->column(i)->type()->Equals(*schema->field(i)->type(), /*check_metadata=*/true))
        << (*table)->column(i)->type()->ToString(true);
  }
}

TEST(JsonlReaderTest, BlankLinesAndCrLfAreSkippedAndCountedAsLines) {
  ScratchDir dir;
  auto schema = arrow::schema({arrow::field("id", arrow::int64(), false)});
  const std::string path = dir.Write("b.jsonl", "\xEF\xBB\xBF{\"id\": 1}\r\n\n   \r\n{\"id\": 2}\n\n{\"id\": null}");
  auto table = ReadAll(path, Format::kJsonl, schema);
  ASSERT_FALSE(table.ok());
  EXPECT_CONTAINS(table.status().message(), ("line 6 (row 3), column 'id': null in a required column"));

  const std::string good = dir.Write("g.jsonl", "{\"id\": 1}\r\n\n  \n{\"id\": 2}");  // no final line break
  auto read = ReadAll(good, Format::kJsonl, schema);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ((*read)->num_rows(), 2);
}

TEST(JsonlReaderTest, BatchesHoldAtMostBatchRows) {
  ScratchDir dir;
  auto schema = arrow::schema({arrow::field("id", arrow::int64(), false)});
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "{\"id\": " + std::to_string(i) + "}\n";
  const std::string path = dir.Write("many.jsonl", text);
  ReadOptions options;
  options.target_schema = schema;
  options.batch_rows = 64;
  auto reader = OpenReader(*testing::LocalIO(), path, Format::kJsonl, options).ValueOrDie();
  int64_t rows = 0, batches = 0;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ASSERT_TRUE(reader->ReadNext(&batch).ok());
    if (!batch) break;
    EXPECT_LE(batch->num_rows(), 64);
    auto ids = std::static_pointer_cast<arrow::Int64Array>(batch->column(0));
    for (int64_t i = 0; i < batch->num_rows(); ++i) EXPECT_EQ(ids->Value(i), rows + i);
    rows += batch->num_rows();
    ++batches;
  }
  EXPECT_EQ(rows, 1000);
  EXPECT_EQ(batches, 16);  // ceil(1000 / 64)
}

TEST(JsonlReaderTest, LinesLongerThanTheReadChunk) {
  ScratchDir dir;
  auto schema = arrow::schema({arrow::field("s", arrow::utf8())});
  const std::string big(3 << 20, 'x');
  const std::string path = dir.Write("big.jsonl", "{\"s\": \"" + big + "\"}\n{\"s\": \"y\"}\n");
  auto batch = ReadBatch(path, schema);
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(Column<arrow::StringArray>(batch, "s")->GetView(0).size(), big.size());
  EXPECT_EQ(Column<arrow::StringArray>(batch, "s")->GetView(1), "y");
}

TEST(JsonlReaderTest, WithoutATargetSchemaArrowInfersTheTypes) {
  ScratchDir dir;
  const std::string path = dir.Write("i.jsonl", "{\"a\": 1, \"b\": \"x\"}\n{\"a\": 2, \"b\": null}\n");
  auto table = ReadAll(path, Format::kJsonl, nullptr);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ((*table)->num_rows(), 2);
  EXPECT_EQ((*table)->schema()->GetFieldByName("a")->type()->id(), arrow::Type::INT64);
  EXPECT_EQ((*table)->schema()->GetFieldByName("b")->type()->id(), arrow::Type::STRING);
}

// ---------------------------------------------------------------------------------------------
// Errors: every one names the file, the line (and row) and the column.

class JsonlErrorTest : public ::testing::Test {
 protected:
  std::string Error(const std::string& lines) {
    const std::string path = dir_.Write("bad.jsonl", lines);
    std::string message = ReadError(path, Format::kJsonl, schema_);
    EXPECT_CONTAINS(message, (path));
    return message;
  }

  ScratchDir dir_;
  std::shared_ptr<arrow::Schema> schema_ = arrow::schema({
      arrow::field("id", arrow::int64(), false),
      arrow::field("i", arrow::int32()),
      arrow::field("f", arrow::float64()),
      arrow::field("d", arrow::date32()),
      arrow::field("dec", arrow::decimal128(5, 2)),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO)),
      arrow::field("u", arrow::fixed_size_binary(16)),
      arrow::field("bin", arrow::binary()),
      arrow::field("st", arrow::struct_({arrow::field("req", arrow::utf8(), false), arrow::field("opt", arrow::int32())})),
      arrow::field("ls", arrow::list(arrow::field("element", arrow::int32(), false))),
      arrow::field("m", arrow::map(arrow::utf8(), arrow::field("value", arrow::int32(), false))),
      arrow::field("am", arrow::map(arrow::int32(), arrow::utf8())),
  });
};

TEST_F(JsonlErrorTest, UnknownColumnIsNamedAndSaidNotToBeInTheTable) {
  auto message = Error("{\"id\": 1, \"colour\": \"red\"}\n");
  EXPECT_CONTAINS(message, ("line 1 (row 1), column 'colour': not in the table"));
  EXPECT_CONTAINS(message, ("id, i, f, d"));
}

TEST_F(JsonlErrorTest, UnknownStructField) {
  EXPECT_CONTAINS(Error("{\"id\": 1, \"st\": {\"req\": \"a\", \"zz\": 1}}\n"),
              ("line 1 (row 1), column 'st.zz': not a field of struct 'st' (its fields: req, opt)"));
}

TEST_F(JsonlErrorTest, NullInARequiredColumn) {
  EXPECT_CONTAINS(Error("{\"id\": 1}\n{\"id\": null}\n"), ("line 2 (row 2), column 'id': null in a required column"));
}

TEST_F(JsonlErrorTest, MissingRequiredColumn) {
  EXPECT_CONTAINS(Error("{\"id\": 1}\n{\"i\": 2}\n"), ("line 2 (row 2), column 'id': required column is missing"));
}

TEST_F(JsonlErrorTest, NullsInRequiredNestedFields) {
  EXPECT_CONTAINS(Error("{\"id\": 1, \"st\": {\"req\": null}}\n"),
              ("line 1 (row 1), column 'st.req': null in a required field"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"st\": {\"opt\": 3}}\n"),
              ("line 1 (row 1), column 'st.req': required field is missing"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"ls\": [1, null]}\n"),
              ("line 1 (row 1), column 'ls[1]': null in a list whose elements are required"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"m\": {\"a\": 1, \"b\": null}}\n"),
              ("line 1 (row 1), column 'm[\"b\"]': null in a map whose values are required"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"am\": [{\"key\": null, \"value\": \"x\"}]}\n"),
              ("line 1 (row 1), column 'am[0].key': map keys cannot be null"));
}

TEST_F(JsonlErrorTest, TypeMismatches) {
  EXPECT_CONTAINS(Error("{\"id\": \"7\"}\n"),
              ("line 1 (row 1), column 'id': expected an integer number for type long, got \"7\""));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"f\": \"1.5\"}\n"),
              ("column 'f': expected a number or one of the strings \"NaN\", \"Infinity\", \"-Infinity\" "
                        "for type double, got \"1.5\""));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"d\": 20240101}\n"), ("column 'd': expected a date string"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"st\": [1]}\n"), ("column 'st': expected an object for type struct, got [1]"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"ls\": {\"a\": 1}}\n"), ("column 'ls': expected an array"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"am\": [[1, \"x\"]]}\n"),
              ("column 'am[0]': expected a {\"key\": ..., \"value\": ...} object, got [1,\"x\"]"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"am\": [{\"key\": 1, \"val\": \"x\"}]}\n"),
              ("column 'am[0]': a map entry has only \"key\" and \"value\", not \"val\""));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"i\": 1.5}\n"), ("column 'i': '1.5' is not an integer"));
}

TEST_F(JsonlErrorTest, UnparsableAndOutOfRangeValues) {
  EXPECT_CONTAINS(Error("{\"id\": 1}\n{\"id\": 2, \"d\": \"2024-13-45\"}\n"),
              ("line 2 (row 2), column 'd': '2024-13-45' is not a valid date"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"i\": 2147483648}\n"), ("column 'i': '2147483648' is out of range for type int"));
  EXPECT_CONTAINS(Error("{\"id\": 99999999999999999999}\n"), ("column 'id': '99999999999999999999' is out of range for type long"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"dec\": \"1.234\"}\n"), ("column 'dec': '1.234' has more than 2 decimal places"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"dec\": \"1234.5\"}\n"), ("column 'dec': '1234.5' does not fit in type decimal(5, 2)"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"ts\": \"2024-01-01T00:00:00Z\"}\n"),
              ("column 'ts': '2024-01-01T00:00:00Z' has a zone offset, but type timestamp is a local date"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"ts\": \"2024-01-01T00:00:00+01:00\"}\n"), ("has a zone offset"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"u\": \"f79c3e09-677c-4bbd-a479-3f349cb785zz\"}\n"), ("column 'u': "));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"u\": \"AAE=\"}\n"), ("column 'u': 'AAE=' holds 2 bytes, but type fixed[16]"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"bin\": \"not base64!\"}\n"), ("column 'bin': 'not base64!' is not base64"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"f\": 1e999}\n"), ("line 1 (row 1): malformed JSON"));
}

TEST_F(JsonlErrorTest, MalformedJsonNamesTheLineAndCharacter) {
  // The second comma is the 10th character of line 3.
  EXPECT_CONTAINS(Error("{\"id\": 1}\n{\"id\": 2}\n{\"id\": 3,,}\n"), ("line 3 (row 3): malformed JSON at character 10: "));
  EXPECT_CONTAINS(Error("{\"id\": 1}\n[1, 2]\n"),
              ("line 2 (row 2): expected a JSON object (one row per line), got [1,2]"));
  EXPECT_CONTAINS(Error("{\"id\": 1} {\"id\": 2}\n"), ("line 1 (row 1): malformed JSON"));
  EXPECT_CONTAINS(Error("{\"id\": 1, \"id\": 2}\n"), ("line 1 (row 1), column 'id': given twice"));
  EXPECT_CONTAINS(Error("{\"id\": \"\xff\"}\n"), ("line 1 (row 1): malformed JSON"));
  EXPECT_CONTAINS(Error(std::string(1000, '[') + "\n"), ("line 1 (row 1): JSON nested deeper than"));
}

TEST_F(JsonlErrorTest, ErrorsNameTheLineAcrossBatches) {
  std::string text;
  for (int i = 1; i <= 10; ++i) text += "{\"id\": " + std::to_string(i) + "}\n";
  text += "{\"id\": 11, \"i\": \"x\"}\n";
  const std::string path = dir_.Write("late.jsonl", text);
  EXPECT_CONTAINS(ReadError(path, Format::kJsonl, schema_, /*batch_rows=*/3), ("line 11 (row 11), column 'i'"));
}

}  // namespace
}  // namespace lakesync::tabular
