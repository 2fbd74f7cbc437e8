// Row filtering on real Arrow batches. Expected selections follow SQL semantics (a comparison with NULL
// is unknown and unknown rows are not selected; NOT of unknown is unknown) and IEEE 754 for NaN.
#include "lakesync/iceberg/expr/row_filter.h"

#include <arrow/api.h>
#include <arrow/extension/uuid.h>
#include <arrow/util/key_value_metadata.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "lakesync/iceberg/expr/literal_evaluator.h"
#include "test_support.h"

namespace lakesync::iceberg {
namespace {

using testing::ErrorOf;
using testing::Optional;
using std::nullopt;

template <typename T>
using Opt = std::optional<T>;

std::shared_ptr<arrow::Field> FieldWithId(const std::string& name, std::shared_ptr<arrow::DataType> type, int id) {
  return arrow::field(name, std::move(type), true, arrow::key_value_metadata({kArrowFieldIdKey}, {std::to_string(id)}));
}

template <typename Builder, typename T>
std::shared_ptr<arrow::Array> Build(Builder&& b, const std::vector<Opt<T>>& values) {
  for (const auto& v : values) {
    if (v) {
      EXPECT_TRUE(b.Append(*v).ok());
    } else {
      EXPECT_TRUE(b.AppendNull().ok());
    }
  }
  std::shared_ptr<arrow::Array> out;
  EXPECT_TRUE(b.Finish(&out).ok());
  return out;
}

std::vector<bool> Selected(const std::string& filter, const Schema& schema, const arrow::RecordBatch& batch) {
  auto bound = testing::MustBind(filter, schema);
  auto sel = EvaluateRowFilter(bound, batch);
  EXPECT_TRUE(sel.ok()) << filter << ": " << sel.status().ToString();
  std::vector<bool> out;
  if (!sel.ok()) return out;
  EXPECT_EQ((*sel)->null_count(), 0) << filter;
  EXPECT_EQ((*sel)->length(), batch.num_rows()) << filter;
  for (int64_t i = 0; i < (*sel)->length(); ++i) out.push_back((*sel)->Value(i));
  return out;
}

using B = std::vector<bool>;

class BasicBatch : public ::testing::Test {
 protected:
  BasicBatch()
      : schema_(0, {Optional(1, "id", Type::Long()), Optional(2, "s", Type::String()), Optional(3, "d", Type::Double()),
                    Optional(4, "b", Type::Boolean())}) {
    const double nan = std::nan("");
    auto id = Build(arrow::Int64Builder(), std::vector<Opt<int64_t>>{1, 2, 3, nullopt, 5, 6});
    auto s = Build(arrow::StringBuilder(), std::vector<Opt<std::string>>{"a", "ab", nullopt, "b", "abc", "x"});
    auto d = Build(arrow::DoubleBuilder(), std::vector<Opt<double>>{1.0, nan, nullopt, -0.0, 5.0, 2.5});
    auto b = Build(arrow::BooleanBuilder(), std::vector<Opt<bool>>{true, false, nullopt, true, false, true});
    batch_ = arrow::RecordBatch::Make(ToArrowSchema(schema_).ValueOrDie(), 6, {id, s, d, b});
  }
  B Sel(const std::string& filter) { return Selected(filter, schema_, *batch_); }

  Schema schema_;
  std::shared_ptr<arrow::RecordBatch> batch_;
};

TEST_F(BasicBatch, ComparisonsWithNulls) {
  EXPECT_EQ(Sel("id > 3"), (B{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(Sel("id >= 3"), (B{0, 0, 1, 0, 1, 1}));
  EXPECT_EQ(Sel("id < 3"), (B{1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(Sel("id <= 3"), (B{1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(Sel("id = 3"), (B{0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(Sel("id != 3"), (B{1, 1, 0, 0, 1, 1}));
  EXPECT_EQ(Sel("NOT (id > 3)"), (B{1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(Sel("id > 3 OR s = 'ab'"), (B{0, 1, 0, 0, 1, 1}));
  EXPECT_EQ(Sel("id > 3 OR id IS NULL"), (B{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(Sel("NOT (id > 3 AND s = 'x')"), (B{1, 1, 1, 1, 1, 0}));  // row 4: NOT (unknown AND false)
  EXPECT_EQ(Sel("id BETWEEN 2 AND 5"), (B{0, 1, 1, 0, 1, 0}));
  EXPECT_EQ(Sel("id NOT BETWEEN 2 AND 5"), (B{1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(Sel("id < 1e30"), (B{1, 1, 1, 0, 1, 1}));
  EXPECT_EQ(Sel("NOT (id < 1e30)"), (B{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(Sel("id != 2.5"), (B{1, 1, 1, 0, 1, 1}));
  EXPECT_EQ(Sel("TRUE"), (B{1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(Sel("FALSE"), (B{0, 0, 0, 0, 0, 0}));
}

TEST_F(BasicBatch, NullChecksAndSets) {
  EXPECT_EQ(Sel("id IS NULL"), (B{0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(Sel("id IS NOT NULL"), (B{1, 1, 1, 0, 1, 1}));
  EXPECT_EQ(Sel("id IN (1, 5, 99)"), (B{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(Sel("id NOT IN (1, 5)"), (B{0, 1, 1, 0, 0, 1}));
  EXPECT_EQ(Sel("NOT (id IN (1, 5))"), (B{0, 1, 1, 0, 0, 1}));
  EXPECT_EQ(Sel("s IN ('a', 'b')"), (B{1, 0, 0, 1, 0, 0}));
}

TEST_F(BasicBatch, NaNFollowsIeee) {
  EXPECT_EQ(Sel("d < 2"), (B{1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(Sel("NOT (d < 2)"), (B{0, 1, 0, 0, 1, 1}));
  EXPECT_EQ(Sel("d >= 2"), (B{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(Sel("d != 1"), (B{0, 1, 0, 1, 1, 1}));
  EXPECT_EQ(Sel("d = 0"), (B{0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(Sel("d IS NAN"), (B{0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(Sel("d IS NOT NAN"), (B{1, 0, 0, 1, 1, 1}));
  EXPECT_EQ(Sel("NOT (d IS NAN)"), (B{1, 0, 0, 1, 1, 1}));
  EXPECT_EQ(Sel("d IN (1, 5)"), (B{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(Sel("d NOT IN (1, 5)"), (B{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(Sel("d IS NULL"), (B{0, 0, 1, 0, 0, 0}));
}

TEST_F(BasicBatch, StringsAndBooleans) {
  EXPECT_EQ(Sel("s LIKE 'a%'"), (B{1, 1, 0, 0, 1, 0}));
  EXPECT_EQ(Sel("s LIKE 'ab%'"), (B{0, 1, 0, 0, 1, 0}));
  EXPECT_EQ(Sel("s NOT LIKE 'a%'"), (B{0, 0, 0, 1, 0, 1}));
  EXPECT_EQ(Sel("s LIKE '%'"), (B{1, 1, 0, 1, 1, 1}));
  EXPECT_EQ(Sel("s LIKE 'ab'"), (B{0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(Sel("s > 'ab'"), (B{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(Sel("b"), (B{1, 0, 0, 1, 0, 1}));
  EXPECT_EQ(Sel("NOT b"), (B{0, 1, 0, 0, 1, 0}));
  EXPECT_EQ(Sel("b = FALSE OR id = 3"), (B{0, 1, 1, 0, 1, 0}));
}

TEST_F(BasicBatch, FilterRecordBatchKeepsSelectedRows) {
  auto out = FilterRecordBatch(testing::MustBind("id > 3 OR s = 'a'", schema_), batch_);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)->num_rows(), 3);
  EXPECT_EQ((*out)->num_columns(), 4);
  auto ids = std::static_pointer_cast<arrow::Int64Array>((*out)->column(0));
  EXPECT_EQ(ids->Value(0), 1);
  EXPECT_EQ(ids->Value(1), 5);
  EXPECT_EQ(ids->Value(2), 6);
  auto empty = batch_->Slice(0, 0);
  auto none = FilterRecordBatch(testing::MustBind("id > 3", schema_), empty);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->num_rows(), 0);
}

TEST(RowFilterTest, NestedStructFieldsInheritParentNulls) {
  Schema schema(0, {Optional(1, "addr", Type::Struct({Optional(2, "city", Type::String()), Optional(3, "zip", Type::Int()),
                                                      Optional(4, "geo", Type::Struct({Optional(5, "lat", Type::Double())}))}))});
  auto city = Build(arrow::StringBuilder(), std::vector<Opt<std::string>>{"Oslo", "Oslo", nullopt, "Rome"});
  auto zip = Build(arrow::Int32Builder(), std::vector<Opt<int32_t>>{1, 2, 3, 4});
  auto lat = Build(arrow::DoubleBuilder(), std::vector<Opt<double>>{59.9, 59.9, 10.0, 41.9});
  auto arrow_schema = ToArrowSchema(schema).ValueOrDie();
  const auto& addr_type = *arrow_schema->field(0)->type();
  auto geo = testing::MakeStructColumn(*addr_type.field(2)->type(), {lat}, {true, true, true, false});
  // Row 2's struct is null although its children hold values.
  auto addr = testing::MakeStructColumn(addr_type, {city, zip, geo}, {true, false, true, true});
  auto batch = arrow::RecordBatch::Make(arrow_schema, 4, {addr});
  EXPECT_EQ(Selected("addr.city = 'Oslo'", schema, *batch), (B{1, 0, 0, 0}));
  EXPECT_EQ(Selected("addr.city IS NULL", schema, *batch), (B{0, 1, 1, 0}));
  EXPECT_EQ(Selected("addr.zip > 1", schema, *batch), (B{0, 0, 1, 1}));
  EXPECT_EQ(Selected("addr.geo.lat > 40", schema, *batch), (B{1, 0, 0, 0}));
  EXPECT_EQ(Selected("addr.geo.lat IS NULL", schema, *batch), (B{0, 1, 0, 1}));
}

TEST(RowFilterTest, ColumnsAreFoundByFieldIdThenByName) {
  Schema schema(0, {Optional(1, "id", Type::Long()), Optional(2, "name", Type::String())});
  auto ids = Build(arrow::Int64Builder(), std::vector<Opt<int64_t>>{1, 2, 3});
  auto names = Build(arrow::StringBuilder(), std::vector<Opt<std::string>>{"a", "b", "c"});
  // Renamed and reordered columns: the ids decide.
  auto by_id = arrow::RecordBatch::Make(
      arrow::schema({FieldWithId("label", arrow::utf8(), 2), FieldWithId("key", arrow::int64(), 1)}), 3, {names, ids});
  EXPECT_EQ(Selected("id >= 2 AND name != 'c'", schema, *by_id), (B{0, 1, 0}));
  // No ids at all: names decide.
  auto by_name = arrow::RecordBatch::Make(
      arrow::schema({arrow::field("name", arrow::utf8()), arrow::field("id", arrow::int64())}), 3, {names, ids});
  EXPECT_EQ(Selected("id >= 2 AND name != 'c'", schema, *by_name), (B{0, 1, 0}));
  // Ids present but not this one: the column is absent and reads as null.
  auto missing = arrow::RecordBatch::Make(arrow::schema({FieldWithId("id", arrow::int64(), 1)}), 3, {ids});
  EXPECT_EQ(Selected("name IS NULL", schema, *missing), (B{1, 1, 1}));
  EXPECT_EQ(Selected("name = 'a' OR id = 3", schema, *missing), (B{0, 0, 1}));
  // A path through something that is not a struct.
  Schema nested(0, {Optional(1, "id", Type::Struct({Optional(5, "x", Type::Long())}))});
  auto wrong = arrow::RecordBatch::Make(arrow::schema({FieldWithId("id", arrow::int64(), 1)}), 3, {ids});
  auto err = EvaluateRowFilter(testing::MustBind("id.x = 1", nested), *wrong);
  EXPECT_EQ(ErrorOf(err), "column 'id.x': 'id' is an Arrow int64 in the batch, not a struct");
}

// One column of some Arrow type under an Iceberg schema with one field (id 1, name "c").
std::vector<bool> SelectOn(const TypePtr& iceberg_type, std::shared_ptr<arrow::Array> column, const std::string& filter) {
  Schema schema(0, {Optional(1, "c", iceberg_type)});
  auto batch = arrow::RecordBatch::Make(arrow::schema({FieldWithId("c", column->type(), 1)}), column->length(), {column});
  return Selected(filter, schema, *batch);
}

TEST(RowFilterTest, NarrowIntegerColumns) {
  auto int8 = Build(arrow::Int8Builder(), std::vector<Opt<int8_t>>{-5, 0, 100, nullopt});
  EXPECT_EQ(SelectOn(Type::Int(), int8, "c > 50"), (B{0, 0, 1, 0}));
  EXPECT_EQ(SelectOn(Type::Int(), int8, "c < 300"), (B{1, 1, 1, 0}));  // 300 does not fit int8
  EXPECT_EQ(SelectOn(Type::Int(), int8, "c IN (0, 300)"), (B{0, 1, 0, 0}));
  EXPECT_EQ(SelectOn(Type::Int(), int8, "c != -200"), (B{1, 1, 1, 0}));
  auto uint32 = Build(arrow::UInt32Builder(), std::vector<Opt<uint32_t>>{0, 4000000000u});
  EXPECT_EQ(SelectOn(Type::Long(), uint32, "c > 3000000000"), (B{0, 1}));
  EXPECT_EQ(SelectOn(Type::Long(), uint32, "c > -1"), (B{1, 1}));
}

TEST(RowFilterTest, TimestampUnitsAndZones) {
  auto ms = Build(arrow::TimestampBuilder(arrow::timestamp(arrow::TimeUnit::MILLI), arrow::default_memory_pool()),
                  std::vector<Opt<int64_t>>{0, 1500, -1});
  EXPECT_EQ(SelectOn(Type::Timestamp(), ms, "c = '1970-01-01 00:00:01.5'"), (B{0, 1, 0}));
  // 1.4999 s is not a whole millisecond: the column is compared in microseconds instead.
  EXPECT_EQ(SelectOn(Type::Timestamp(), ms, "c > '1970-01-01 00:00:01.4999'"), (B{0, 1, 0}));
  EXPECT_EQ(SelectOn(Type::Timestamp(), ms, "c < '1970-01-01 00:00:00.000001'"), (B{1, 0, 1}));
  EXPECT_EQ(SelectOn(Type::Timestamp(), ms, "c < '1969-12-31 23:59:59.9995'"), (B{0, 0, 1}));
  EXPECT_EQ(SelectOn(Type::Timestamp(), ms, "c < '1969-12-31 23:59:59.9985'"), (B{0, 0, 0}));

  auto ns = Build(arrow::TimestampBuilder(arrow::timestamp(arrow::TimeUnit::NANO), arrow::default_memory_pool()),
                  std::vector<Opt<int64_t>>{1000, 1001});
  EXPECT_EQ(SelectOn(Type::Timestamp(), ns, "c = '1970-01-01 00:00:00.000001'"), (B{1, 0}));
  EXPECT_EQ(SelectOn(Type::Timestamp(), ns, "c > '1970-01-01 00:00:00.000001'"), (B{0, 1}));
  EXPECT_EQ(SelectOn(Type::TimestampNs(), ns, "c > '1970-01-01 00:00:00.000001'"), (B{0, 1}));

  auto ny = Build(arrow::TimestampBuilder(arrow::timestamp(arrow::TimeUnit::MICRO, "America/New_York"),
                                          arrow::default_memory_pool()),
                  std::vector<Opt<int64_t>>{0, 3600LL * 1000000});
  EXPECT_EQ(SelectOn(Type::TimestampTz(), ny, "c = TIMESTAMPTZ '1970-01-01 01:00:00+00:00'"), (B{0, 1}));
  EXPECT_EQ(SelectOn(Type::TimestampTz(), ny, "c < '1969-12-31 19:30:00-05:00'"), (B{1, 0}));
}

TEST(RowFilterTest, DecimalsDatesTimes) {
  auto dec = Build(arrow::Decimal128Builder(arrow::decimal128(9, 2), arrow::default_memory_pool()),
                   std::vector<Opt<arrow::Decimal128>>{arrow::Decimal128(150), arrow::Decimal128(-1), nullopt});
  EXPECT_EQ(SelectOn(Type::Decimal(9, 2), dec, "c > 0"), (B{1, 0, 0}));
  EXPECT_EQ(SelectOn(Type::Decimal(9, 2), dec, "c = 1.5"), (B{1, 0, 0}));
  EXPECT_EQ(SelectOn(Type::Decimal(9, 2), dec, "c < -0.005"), (B{1 == 0, 1, 0}));
  EXPECT_EQ(SelectOn(Type::Decimal(9, 2), dec, "c IN (-0.01, 7)"), (B{0, 1, 0}));
  auto dec64 = Build(arrow::Decimal64Builder(arrow::decimal64(9, 2), arrow::default_memory_pool()),
                     std::vector<Opt<arrow::Decimal64>>{arrow::Decimal64(150), arrow::Decimal64(-1)});
  EXPECT_EQ(SelectOn(Type::Decimal(9, 2), dec64, "c >= 1.5"), (B{1, 0}));

  auto dates = Build(arrow::Date32Builder(), std::vector<Opt<int32_t>>{-1, 0, 19723});
  EXPECT_EQ(SelectOn(Type::Date(), dates, "c >= DATE '1970-01-01'"), (B{0, 1, 1}));
  EXPECT_EQ(SelectOn(Type::Date(), dates, "c < TIMESTAMP '1970-01-01 12:00:00'"), (B{1, 1, 0}));
  EXPECT_EQ(SelectOn(Type::Date(), dates, "c = '2024-01-01'"), (B{0, 0, 1}));

  auto times = Build(arrow::Time64Builder(arrow::time64(arrow::TimeUnit::MICRO), arrow::default_memory_pool()),
                     std::vector<Opt<int64_t>>{0, 36000LL * 1000000});
  EXPECT_EQ(SelectOn(Type::Time(), times, "c >= '10:00:00'"), (B{0, 1}));
  auto times_ms = Build(arrow::Time32Builder(arrow::time32(arrow::TimeUnit::MILLI), arrow::default_memory_pool()),
                        std::vector<Opt<int32_t>>{0, 36000 * 1000});
  EXPECT_EQ(SelectOn(Type::Time(), times_ms, "c >= '10:00:00'"), (B{0, 1}));
}

TEST(RowFilterTest, StringAndBinaryLayouts) {
  auto large = Build(arrow::LargeStringBuilder(), std::vector<Opt<std::string>>{"apple", "banana", nullopt});
  EXPECT_EQ(SelectOn(Type::String(), large, "c = 'banana'"), (B{0, 1, 0}));
  EXPECT_EQ(SelectOn(Type::String(), large, "c LIKE 'app%'"), (B{1, 0, 0}));
  auto view = Build(arrow::StringViewBuilder(), std::vector<Opt<std::string>>{"apple", "banana", nullopt});
  EXPECT_EQ(SelectOn(Type::String(), view, "c = 'banana'"), (B{0, 1, 0}));
  EXPECT_EQ(SelectOn(Type::String(), view, "c NOT LIKE 'app%'"), (B{0, 1, 0}));

  arrow::StringDictionaryBuilder dict_builder;
  for (const char* v : {"x", "y", "x", "z"}) ASSERT_TRUE(dict_builder.Append(v).ok());
  std::shared_ptr<arrow::Array> dict;
  ASSERT_TRUE(dict_builder.Finish(&dict).ok());
  EXPECT_EQ(SelectOn(Type::String(), dict, "c IN ('x', 'z')"), (B{1, 0, 1, 1}));
  EXPECT_EQ(SelectOn(Type::String(), dict, "c > 'x'"), (B{0, 1, 0, 1}));

  auto bin = Build(arrow::BinaryBuilder(), std::vector<Opt<std::string>>{"ab", "b", nullopt});
  EXPECT_EQ(SelectOn(Type::Binary(), bin, "c = 'ab'"), (B{1, 0, 0}));
  EXPECT_EQ(SelectOn(Type::Binary(), bin, "c > 'ab'"), (B{0, 1, 0}));
  auto large_bin = Build(arrow::LargeBinaryBuilder(), std::vector<Opt<std::string>>{"ab", "b"});
  EXPECT_EQ(SelectOn(Type::Binary(), large_bin, "c < 'b'"), (B{1, 0}));

  const std::string u1("\xf7\x9c\x3e\x09\x67\x7c\x4b\xbd\xa4\x79\x3f\x34\x9c\xb7\x85\xe7", 16);
  const std::string u2(16, '\x01');
  auto fixed = Build(arrow::FixedSizeBinaryBuilder(arrow::fixed_size_binary(16)), std::vector<Opt<std::string>>{u1, u2});
  EXPECT_EQ(SelectOn(Type::Uuid(), fixed, "c = 'f79c3e09-677c-4bbd-a479-3f349cb785e7'"), (B{1, 0}));
  EXPECT_EQ(SelectOn(Type::Uuid(), fixed, "c < 'f79c3e09-677c-4bbd-a479-3f349cb785e7'"), (B{0, 1}));
  auto uuid_ext = std::make_shared<arrow::ExtensionArray>(arrow::extension::uuid(), fixed);
  EXPECT_EQ(SelectOn(Type::Uuid(), uuid_ext, "c != 'f79c3e09-677c-4bbd-a479-3f349cb785e7'"), (B{0, 1}));
}

TEST(RowFilterTest, PromotedFloatColumnsCompareExactly) {
  // A double column written as float32 (before a float -> double promotion): 0.1f is 0.100000001490116...,
  // which is greater than the double 0.1, so it must be selected.
  auto f32 = Build(arrow::FloatBuilder(), std::vector<Opt<float>>{0.1f, 0.05f});
  EXPECT_EQ(SelectOn(Type::Double(), f32, "c > 0.1"), (B{1, 0}));
  EXPECT_EQ(SelectOn(Type::Double(), f32, "c = 0.5e-1"), (B{0, 0}));
  EXPECT_EQ(SelectOn(Type::Float(), f32, "c = 0.1"), (B{1, 0}));
}

TEST(RowFilterTest, ArrowScalarsHaveTheCanonicalTypes) {
  auto dec = LiteralToArrowScalar(Literal(Decimal{-12345}), *Type::Decimal(9, 2)).ValueOrDie();
  EXPECT_EQ(dec->ToString(), "-123.45");
  EXPECT_TRUE(dec->type->Equals(arrow::decimal128(9, 2)));
  auto ts = LiteralToArrowScalar(Literal(int64_t{1}), *Type::TimestampTz()).ValueOrDie();
  EXPECT_TRUE(ts->type->Equals(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
  auto uuid = LiteralToArrowScalar(Literal(Bytes{std::string(16, 'a')}), *Type::Uuid()).ValueOrDie();
  EXPECT_TRUE(uuid->type->Equals(arrow::fixed_size_binary(16)));
  EXPECT_FALSE(LiteralToArrowScalar(Literal(int32_t{1}), *Type::Long()).ok());
}

TEST(RowFilterTest, AgreesWithTheLiteralEvaluatorRowByRow) {
  // The same filters evaluated per row on literals (literal_evaluator.h) and by Arrow kernels.
  Schema schema(0, {Optional(1, "x", Type::Int()), Optional(2, "y", Type::Double()), Optional(3, "s", Type::String())});
  std::vector<testing::Row> rows;
  const double nan = std::nan("");
  const std::vector<Literal> xs = {Literal(int32_t{-1}), Literal(), Literal(int32_t{0}), Literal(int32_t{7})};
  const std::vector<Literal> ys = {Literal(nan), Literal(0.0), Literal(), Literal(-2.5)};
  const std::vector<Literal> ss = {Literal(std::string("")), Literal(std::string("ab")), Literal()};
  for (const auto& x : xs) {
    for (const auto& y : ys) {
      for (const auto& s : ss) rows.push_back(testing::Row{{x, y, s}, {}, {}});
    }
  }
  auto batch = testing::MakeBatch(schema, rows);
  for (const std::string filter :
       {"x > 0 OR y < 0", "NOT (x > 0 OR y < 0)", "x IN (0, 7) AND NOT (s LIKE 'a%')", "y IS NAN OR s IS NULL",
        "NOT (y != 0) OR x NOT IN (-1)", "y IS NOT NAN AND (s = '' OR x IS NULL)", "NOT (x BETWEEN -1 AND 0)"}) {
    auto bound = testing::MustBind(filter, schema);
    auto selected = Selected(filter, schema, *batch);
    for (size_t r = 0; r < rows.size(); ++r) {
      auto expected = EvaluateLiterals(bound, [&](int32_t id) { return &rows[r].top[static_cast<size_t>(id - 1)]; });
      ASSERT_TRUE(expected.ok());
      EXPECT_EQ(selected[r], expected->value_or(false)) << filter << " row " << r;
    }
  }
}

}  // namespace
}  // namespace lakesync::iceberg
