#include <arrow/api.h>
#include <gtest/gtest.h>

#include <random>

#include "../parquet_io/parquet_test_util.h"
#include "lakesync/formats/parquet/arrow_literal.h"
#include "lakesync/iceberg/write/partition_splitter.h"
#include "lakesync/iceberg/write/transform_arrow.h"

namespace lakesync::iceberg {
namespace {

using parquet_io::LiteralFromArray;
using parquet_io::LiteralToScalar;

// Random values of `type` (with nulls) as an Arrow array of ToArrowType(type), built through
// scalars so the test does not share the writer's code paths.
std::shared_ptr<arrow::Array> RandomArray(const Type& type, int n, std::mt19937_64& rng) {
  auto arrow_type = ToArrowType(type).ValueOrDie();
  std::unique_ptr<arrow::ArrayBuilder> builder = arrow::MakeBuilder(arrow_type).ValueOrDie();
  for (int i = 0; i < n; ++i) {
    if (rng() % 10 == 0) {
      EXPECT_TRUE(builder->AppendNull().ok());
      continue;
    }
    Literal v;
    const int64_t r = static_cast<int64_t>(rng());
    switch (type.id()) {
      case TypeId::kInt: v = Literal(static_cast<int32_t>(r % 2000001 - 1000000)); break;
      case TypeId::kDate: v = Literal(static_cast<int32_t>(r % 80000 - 40000)); break;
      case TypeId::kLong: v = Literal(r); break;
      case TypeId::kTime: v = Literal(static_cast<int64_t>(static_cast<uint64_t>(r) % 86400000000ULL)); break;
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz: v = Literal(r % 4000000000000000LL); break;
      case TypeId::kTimestampNs:
      case TypeId::kTimestampTzNs: v = Literal(r % 4000000000000000000LL); break;
      case TypeId::kString: v = Literal(testing::RandomString(rng, 12)); break;
      case TypeId::kBinary: v = Literal(Bytes{testing::RandomBytes(rng, rng() % 12)}); break;
      case TypeId::kUuid: v = Literal(Bytes{testing::RandomBytes(rng, 16)}); break;
      case TypeId::kFixed: v = Literal(Bytes{testing::RandomBytes(rng, static_cast<size_t>(type.length()))}); break;
      case TypeId::kDecimal: v = Literal(Decimal{testing::RandomUnscaled(rng, type.precision())}); break;
      default: ADD_FAILURE() << "no generator for " << type.ToString();
    }
    EXPECT_TRUE(builder->AppendScalar(*LiteralToScalar(v, type).ValueOrDie()).ok());
  }
  return builder->Finish().ValueOrDie();
}

void ExpectSameAsScalarApply(const Transform& t, const TypePtr& type, int n = 3000) {
  SCOPED_TRACE(t.ToString() + " of " + type->ToString());
  std::mt19937_64 rng(static_cast<uint64_t>(std::hash<std::string>{}(t.ToString() + type->ToString())));
  auto source = RandomArray(*type, n, rng);
  auto result = ApplyTransform(t, *type, source);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  auto result_type = t.ResultType(type).ValueOrDie();
  ASSERT_TRUE((*result)->type()->Equals(*ToArrowType(*result_type).ValueOrDie()));
  ASSERT_EQ((*result)->length(), n);
  for (int i = 0; i < n; ++i) {
    auto in = LiteralFromArray(*source, i, *type).ValueOrDie();
    auto expected = t.Apply(*type, in).ValueOrDie();
    auto actual = LiteralFromArray(**result, i, *result_type).ValueOrDie();
    ASSERT_EQ(actual, expected) << "row " << i << " input " << in.ToString(*type);
  }
}

TEST(TransformArrow, MatchesScalarTransformsForEveryType) {
  const std::vector<TypePtr> bucketable = {Type::Int(), Type::Long(), Type::Date(), Type::Time(), Type::Timestamp(),
                                           Type::TimestampTz(), Type::TimestampNs(), Type::String(), Type::Binary(),
                                           Type::Uuid(), Type::Fixed(7), Type::Decimal(9, 2), Type::Decimal(38, 4)};
  for (const auto& type : bucketable) {
    ExpectSameAsScalarApply(Transform::Bucket(16), type);
    ExpectSameAsScalarApply(Transform::Identity(), type);
    ExpectSameAsScalarApply(Transform(Transform::Kind::kVoid), type, 10);
  }
  for (const auto& type : {Type::Int(), Type::Long(), Type::Decimal(12, 2), Type::String(), Type::Binary()}) {
    ExpectSameAsScalarApply(Transform::Truncate(10), type);
    ExpectSameAsScalarApply(Transform::Truncate(3), type);
  }
  for (const auto& type : {Type::Date(), Type::Timestamp(), Type::TimestampTz(), Type::TimestampNs()}) {
    ExpectSameAsScalarApply(Transform(Transform::Kind::kYear), type);
    ExpectSameAsScalarApply(Transform(Transform::Kind::kMonth), type);
    ExpectSameAsScalarApply(Transform(Transform::Kind::kDay), type);
  }
  for (const auto& type : {Type::Timestamp(), Type::TimestampTzNs()}) {
    ExpectSameAsScalarApply(Transform(Transform::Kind::kHour), type);
  }
}

TEST(TransformArrow, BucketHashesMatchTheSpecVectors) {
  // bucket[2147483647] exposes (hash & INT32_MAX) of the spec's "Appendix B" examples.
  const Transform full = Transform::Bucket(INT32_MAX);
  auto expect = [&](const TypePtr& type, const Literal& v, int32_t hash) {
    auto b = arrow::MakeBuilder(ToArrowType(*type).ValueOrDie()).ValueOrDie();
    ASSERT_TRUE(b->AppendScalar(*LiteralToScalar(v, *type).ValueOrDie()).ok());
    auto out = ApplyTransform(full, *type, b->Finish().ValueOrDie()).ValueOrDie();
    EXPECT_EQ(static_cast<const arrow::Int32Array&>(*out).Value(0), (hash & INT32_MAX) % INT32_MAX) << type->ToString();
  };
  expect(Type::Int(), Literal(int32_t{34}), 2017239379);
  expect(Type::Long(), Literal(int64_t{34}), 2017239379);
  expect(Type::Date(), Literal(int32_t{17486}), -653330422);  // 2017-11-16
  expect(Type::String(), Literal(std::string("iceberg")), 1210000089);
  expect(Type::Binary(), Literal(Bytes{std::string("\x00\x01\x02\x03", 4)}), -188683207);
  expect(Type::Decimal(4, 2), Literal(Decimal{1420}), -500754589);  // 14.20
  expect(Type::Uuid(), Literal(Bytes{ParseUuid("f79c3e09-677c-4bbd-a479-3f349cb785e7").ValueOrDie()}), 1488055340);
  // 2017-11-16T22:31:08.000001001 in ns floors to µs before hashing.
  expect(Type::TimestampNs(), Literal(ParseTimestamp("2017-11-16T22:31:08.000001001", true).ValueOrDie()), -1207196810);
}

TEST(TransformArrow, TimeTransformsFloorBeforeTheEpoch) {
  auto ts = arrow::MakeBuilder(arrow::timestamp(arrow::TimeUnit::MICRO)).ValueOrDie();
  ASSERT_TRUE(static_cast<arrow::TimestampBuilder&>(*ts).AppendValues({-1, 0}).ok());
  auto arr = ts->Finish().ValueOrDie();
  auto hours = ApplyTransform(Transform(Transform::Kind::kHour), *Type::Timestamp(), arr).ValueOrDie();
  auto days = ApplyTransform(Transform(Transform::Kind::kDay), *Type::Timestamp(), arr).ValueOrDie();
  auto years = ApplyTransform(Transform(Transform::Kind::kYear), *Type::Timestamp(), arr).ValueOrDie();
  EXPECT_EQ(static_cast<const arrow::Int32Array&>(*hours).Value(0), -1);
  EXPECT_EQ(static_cast<const arrow::Date32Array&>(*days).Value(0), -1);
  EXPECT_EQ(static_cast<const arrow::Int32Array&>(*years).Value(0), -1);
  EXPECT_EQ(static_cast<const arrow::Int32Array&>(*years).Value(1), 0);
  // A transform that does not apply, and a column in the wrong Arrow layout.
  EXPECT_FALSE(ApplyTransform(Transform(Transform::Kind::kHour), *Type::Date(), arr).ok());
  EXPECT_FALSE(ApplyTransform(Transform::Bucket(4), *Type::Int(), arr).ok());
}

TEST(PartitionSplitter, GroupsRowsByTupleAndKeepsOrder) {
  using testing::Field;
  auto schema = std::make_shared<const Schema>(
      0, std::vector<NestedField>{Field(1, "id", Type::Long(), true), Field(2, "cat", Type::String()),
                                  Field(3, "ts", Type::Timestamp()),
                                  Field(4, "st", Type::Struct({Field(5, "n", Type::Int())}))});
  auto spec = std::make_shared<const PartitionSpec>(
      3, std::vector<PartitionField>{{2, 1000, "cat", Transform::Identity()},
                                     {3, 1001, "ts_day", Transform(Transform::Kind::kDay)},
                                     {5, 1002, "n_bucket", Transform::Bucket(3)}});
  auto splitter = PartitionSplitter::Make(schema, spec).ValueOrDie();
  std::mt19937_64 rng(9);
  const int n = 5000;
  arrow::Int64Builder id;
  arrow::StringBuilder cat;
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO), arrow::default_memory_pool());
  auto n_b = std::make_shared<arrow::Int32Builder>();
  auto arrow_schema = ToArrowSchema(*schema).ValueOrDie();
  arrow::StructBuilder st(arrow_schema->field(3)->type(), arrow::default_memory_pool(), {n_b});
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(id.Append(i).ok());
    if (rng() % 7 == 0) {
      ASSERT_TRUE(cat.AppendNull().ok());
    } else {
      ASSERT_TRUE(cat.Append(std::string(1, static_cast<char>('a' + rng() % 3))).ok());
    }
    ASSERT_TRUE(ts.Append(static_cast<int64_t>(rng() % (5ULL * 86400000000ULL)) - 86400000000LL).ok());
    if (rng() % 9 == 0) {
      ASSERT_TRUE(st.AppendNull().ok());
    } else {
      ASSERT_TRUE(st.Append().ok());
      ASSERT_TRUE(n_b->Append(static_cast<int32_t>(rng() % 1000)).ok());
    }
  }
  auto batch = arrow::RecordBatch::Make(arrow_schema, n,
                                        {id.Finish().ValueOrDie(), cat.Finish().ValueOrDie(), ts.Finish().ValueOrDie(),
                                         st.Finish().ValueOrDie()});
  auto groups = splitter->Split(batch).ValueOrDie();
  std::set<std::string> keys;
  int64_t total = 0;
  for (const auto& g : groups) {
    EXPECT_TRUE(keys.insert(g.key).second) << "a tuple appeared in two groups";
    ASSERT_EQ(g.partition.size(), 3u);
    const auto& ids = static_cast<const arrow::Int64Array&>(*g.rows->column(0));
    auto flat_n = static_cast<const arrow::StructArray&>(*g.rows->column(3)).GetFlattenedField(0).ValueOrDie();
    for (int64_t r = 0; r < g.rows->num_rows(); ++r) {
      if (r > 0) {
        EXPECT_LT(ids.Value(r - 1), ids.Value(r)) << "input order inside a partition";
      }
      const Literal c = parquet_io::LiteralFromArray(*g.rows->column(1), r, *Type::String()).ValueOrDie();
      const Literal t = parquet_io::LiteralFromArray(*g.rows->column(2), r, *Type::Timestamp()).ValueOrDie();
      const Literal nn = parquet_io::LiteralFromArray(*flat_n, r, *Type::Int()).ValueOrDie();
      EXPECT_EQ(Transform::Identity().Apply(*Type::String(), c).ValueOrDie(), g.partition[0]);
      EXPECT_EQ(Transform(Transform::Kind::kDay).Apply(*Type::Timestamp(), t).ValueOrDie(), g.partition[1]);
      EXPECT_EQ(Transform::Bucket(3).Apply(*Type::Int(), nn).ValueOrDie(), g.partition[2]);
    }
    total += g.rows->num_rows();
  }
  EXPECT_EQ(total, n);
  // 4 category values (incl. null) × 5-6 days × 4 bucket values (incl. null).
  EXPECT_GT(groups.size(), 50u);
  EXPECT_LE(groups.size(), 4u * 6u * 4u);

  // A source inside a list cannot partition.
  auto list_schema = std::make_shared<const Schema>(
      0, std::vector<NestedField>{Field(1, "l", Type::List(Field(2, "element", Type::Int())))});
  auto bad = std::make_shared<const PartitionSpec>(0, std::vector<PartitionField>{{2, 1000, "e", Transform::Identity()}});
  EXPECT_FALSE(PartitionSplitter::Make(list_schema, bad).ok());
}

}  // namespace
}  // namespace lakesync::iceberg
