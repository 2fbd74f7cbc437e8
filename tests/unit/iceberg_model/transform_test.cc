// Partition transforms. Hash vectors are the spec's own (format/spec.md Appendix B); time and truncate
// expectations follow from the spec's definitions (units since 1970, flooring; v - (((v % W) + W) % W);
// first W code points).
#include "lakesync/iceberg/model/transform.h"

#include <gtest/gtest.h>

#include <limits>

#include "model_test_util.h"

namespace lakesync::iceberg {
namespace {

using testing::Hex;

Literal L32(int32_t v) { return Literal(v); }
Literal L64(int64_t v) { return Literal(v); }
Literal Dec(__int128 v) { return Literal(Decimal{v}); }
Literal S(std::string v) { return Literal(std::move(v)); }
Literal B(std::string v) { return Literal(Bytes{std::move(v)}); }

int32_t Hash(const TypePtr& type, const Literal& v) {
  auto r = BucketHash(*type, v);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : 0;
}

Literal Apply(const Transform& t, const TypePtr& type, const Literal& v) {
  auto r = t.Apply(*type, v);
  EXPECT_TRUE(r.ok()) << t.ToString() << " on " << type->ToString() << ": " << r.status().ToString();
  return r.ok() ? *r : Literal::Null();
}

Literal ParseJson(const TypePtr& type, const std::string& text) {
  auto r = Literal::FromJson(*type, text);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : Literal::Null();
}

TEST(BucketHashTest, SpecAppendixBVectors) {
  EXPECT_EQ(Hash(Type::Int(), L32(34)), 2017239379);
  EXPECT_EQ(Hash(Type::Long(), L64(34)), 2017239379);
  EXPECT_EQ(Hash(Type::Decimal(9, 2), ParseJson(Type::Decimal(9, 2), "14.20")), -500754589);
  EXPECT_EQ(Hash(Type::Date(), ParseJson(Type::Date(), "2017-11-16")), -653330422);
  EXPECT_EQ(Hash(Type::Time(), ParseJson(Type::Time(), "22:31:08")), -662762989);
  EXPECT_EQ(Hash(Type::Timestamp(), ParseJson(Type::Timestamp(), "2017-11-16T22:31:08")), -2047944441);
  EXPECT_EQ(Hash(Type::Timestamp(), ParseJson(Type::Timestamp(), "2017-11-16T22:31:08.000001")), -1207196810);
  EXPECT_EQ(Hash(Type::TimestampTz(), ParseJson(Type::TimestampTz(), "2017-11-16T14:31:08-08:00")), -2047944441);
  EXPECT_EQ(Hash(Type::TimestampTz(), ParseJson(Type::TimestampTz(), "2017-11-16T14:31:08.000001-08:00")),
            -1207196810);
  EXPECT_EQ(Hash(Type::TimestampNs(), ParseJson(Type::TimestampNs(), "2017-11-16T22:31:08")), -2047944441);
  EXPECT_EQ(Hash(Type::TimestampNs(), ParseJson(Type::TimestampNs(), "2017-11-16T22:31:08.000001001")),
            -1207196810);
  EXPECT_EQ(Hash(Type::TimestampTzNs(), ParseJson(Type::TimestampTzNs(), "2017-11-16T14:31:08-08:00")),
            -2047944441);
  EXPECT_EQ(Hash(Type::TimestampTzNs(), ParseJson(Type::TimestampTzNs(), "2017-11-16T14:31:08.000001001-08:00")),
            -1207196810);
  EXPECT_EQ(Hash(Type::String(), S("iceberg")), 1210000089);
  EXPECT_EQ(Hash(Type::Uuid(), ParseJson(Type::Uuid(), "f79c3e09-677c-4bbd-a479-3f349cb785e7")), 1488055340);
  EXPECT_EQ(Hash(Type::Fixed(4), B(Hex("00010203"))), -188683207);
  EXPECT_EQ(Hash(Type::Binary(), B(Hex("00010203"))), -188683207);
}

TEST(BucketHashTest, IntAndLongHashAlikeForEveryValue) {
  // Spec note 1: promotion from int to long must not move rows between buckets.
  for (int32_t v : {0, 1, -1, 34, 1000000, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()}) {
    EXPECT_EQ(Hash(Type::Int(), L32(v)), Hash(Type::Long(), L64(v))) << v;
    EXPECT_EQ(Hash(Type::Date(), L32(v)), Hash(Type::Long(), L64(v))) << v;
  }
}

TEST(BucketHashTest, NanosecondTimestampsFloorToMicrosBeforeHashing) {
  // Before 1970 flooring differs from truncation: -1 ns is -1 µs, not 0.
  EXPECT_EQ(Hash(Type::TimestampNs(), L64(-1)), Hash(Type::Timestamp(), L64(-1)));
  EXPECT_EQ(Hash(Type::TimestampNs(), L64(-1000)), Hash(Type::Timestamp(), L64(-1)));
  EXPECT_EQ(Hash(Type::TimestampNs(), L64(-1001)), Hash(Type::Timestamp(), L64(-2)));
  EXPECT_EQ(Hash(Type::TimestampTzNs(), L64(999)), Hash(Type::Timestamp(), L64(0)));
}

TEST(BucketHashTest, DecimalHashIgnoresTheScale) {
  // Spec note 2: the hash depends only on the unscaled value's minimal bytes.
  EXPECT_EQ(Hash(Type::Decimal(9, 2), Dec(1420)), Hash(Type::Decimal(20, 5), Dec(1420)));
  EXPECT_EQ(Hash(Type::Decimal(9, 2), Dec(-128)), Murmur3Hash32(Hex("80")));
  EXPECT_EQ(Hash(Type::Decimal(9, 2), Dec(128)), Murmur3Hash32(Hex("0080")));
  EXPECT_EQ(Hash(Type::Decimal(9, 2), Dec(0)), Murmur3Hash32(Hex("00")));
}

TEST(BucketHashTest, UnsupportedTypesAreRejected) {
  EXPECT_ERROR(BucketHash(*Type::Float(), Literal(1.0f)), ErrorKind::kInvalidArgument, "float");
  EXPECT_ERROR(BucketHash(*Type::Boolean(), Literal(true)), ErrorKind::kInvalidArgument, "boolean");
}

TEST(BucketTransformTest, ResultIsNonNegativeHashModN) {
  const auto t = Transform::Bucket(16);
  // 2017239379 & INT32_MAX = 2017239379; % 16 = 3.
  EXPECT_EQ(Apply(t, Type::Int(), L32(34)), L32(2017239379 % 16));
  // A negative hash is masked first: (-500754589 & 0x7fffffff) % 16.
  EXPECT_EQ(Apply(t, Type::Decimal(9, 2), Dec(1420)), L32(static_cast<int32_t>((-500754589 & 0x7fffffff) % 16)));
  EXPECT_EQ(Apply(Transform::Bucket(1), Type::String(), S("x")), L32(0));
  EXPECT_EQ(Apply(Transform::Bucket(std::numeric_limits<int32_t>::max()), Type::String(), S("iceberg")),
            L32(1210000089));
  for (int32_t v = -1000; v < 1000; ++v) {
    const Literal r = Apply(t, Type::Long(), L64(v));
    ASSERT_GE(r.get<int32_t>(), 0);
    ASSERT_LT(r.get<int32_t>(), 16);
  }
}

TEST(TimeTransformTest, YearMonthDayHourAtAndAfterTheEpoch) {
  const Transform year(Transform::Kind::kYear), month(Transform::Kind::kMonth), day(Transform::Kind::kDay),
      hour(Transform::Kind::kHour);
  // 2017-11-16T22:31:08.123456 = 1510871468123456 µs, day 17486.
  const int64_t ts = 1510871468123456;
  for (const auto& type : {Type::Timestamp(), Type::TimestampTz()}) {
    EXPECT_EQ(Apply(year, type, L64(ts)), L32(47));
    EXPECT_EQ(Apply(month, type, L64(ts)), L32(47 * 12 + 10));
    EXPECT_EQ(Apply(day, type, L64(ts)), L32(17486));
    EXPECT_EQ(Apply(hour, type, L64(ts)), L32(17486 * 24 + 22));
  }
  for (const auto& type : {Type::TimestampNs(), Type::TimestampTzNs()}) {
    EXPECT_EQ(Apply(year, type, L64(ts * 1000 + 789)), L32(47));
    EXPECT_EQ(Apply(month, type, L64(ts * 1000 + 789)), L32(574));
    EXPECT_EQ(Apply(day, type, L64(ts * 1000 + 789)), L32(17486));
    EXPECT_EQ(Apply(hour, type, L64(ts * 1000 + 789)), L32(419686));
  }
  EXPECT_EQ(Apply(year, Type::Date(), L32(17486)), L32(47));
  EXPECT_EQ(Apply(month, Type::Date(), L32(17486)), L32(574));
  EXPECT_EQ(Apply(day, Type::Date(), L32(17486)), L32(17486));
  EXPECT_EQ(Apply(year, Type::Date(), L32(0)), L32(0));
  EXPECT_EQ(Apply(month, Type::Date(), L32(31)), L32(1));  // 1970-02-01
  EXPECT_EQ(Apply(month, Type::Date(), L32(30)), L32(0));  // 1970-01-31
}

TEST(TimeTransformTest, ValuesBeforeTheEpochFloor) {
  const Transform year(Transform::Kind::kYear), month(Transform::Kind::kMonth), day(Transform::Kind::kDay),
      hour(Transform::Kind::kHour);
  // One microsecond (or nanosecond) before 1970 is in year, month, day and hour -1.
  for (const auto& type : {Type::Timestamp(), Type::TimestampTz(), Type::TimestampNs(), Type::TimestampTzNs()}) {
    SCOPED_TRACE(type->ToString());
    EXPECT_EQ(Apply(year, type, L64(-1)), L32(-1));
    EXPECT_EQ(Apply(month, type, L64(-1)), L32(-1));
    EXPECT_EQ(Apply(day, type, L64(-1)), L32(-1));
    EXPECT_EQ(Apply(hour, type, L64(-1)), L32(-1));
  }
  const int64_t hour_us = 3600LL * 1000000, day_us = 24 * hour_us;
  EXPECT_EQ(Apply(hour, Type::Timestamp(), L64(-hour_us)), L32(-1));
  EXPECT_EQ(Apply(hour, Type::Timestamp(), L64(-hour_us - 1)), L32(-2));
  EXPECT_EQ(Apply(day, Type::Timestamp(), L64(-day_us)), L32(-1));
  EXPECT_EQ(Apply(day, Type::Timestamp(), L64(-day_us - 1)), L32(-2));
  EXPECT_EQ(Apply(day, Type::TimestampNs(), L64(-day_us * 1000)), L32(-1));
  EXPECT_EQ(Apply(day, Type::TimestampNs(), L64(-day_us * 1000 - 1)), L32(-2));
  // Dates: 1969-12-01 is month -1, 1969-11-30 month -2; 1969-01-01 year -1, 1968-12-31 year -2.
  EXPECT_EQ(Apply(month, Type::Date(), L32(-31)), L32(-1));
  EXPECT_EQ(Apply(month, Type::Date(), L32(-32)), L32(-2));
  EXPECT_EQ(Apply(year, Type::Date(), L32(-365)), L32(-1));
  EXPECT_EQ(Apply(year, Type::Date(), L32(-366)), L32(-2));
  // 1900-03-01 (day -25508): 70 years and 10 months before 1970-01.
  EXPECT_EQ(Apply(year, Type::Date(), L32(-25508)), L32(-70));
  EXPECT_EQ(Apply(month, Type::Date(), L32(-25508)), L32(-70 * 12 + 2));
  EXPECT_EQ(Apply(day, Type::Date(), L32(-25508)), L32(-25508));
}

TEST(TimeTransformTest, ResultTypes) {
  ASSERT_OK_AND_ASSIGN(auto day, Transform(Transform::Kind::kDay).ResultType(Type::Timestamp()));
  EXPECT_EQ(day->id(), TypeId::kDate);
  for (auto kind : {Transform::Kind::kYear, Transform::Kind::kMonth, Transform::Kind::kHour}) {
    ASSERT_OK_AND_ASSIGN(auto t, Transform(kind).ResultType(Type::TimestampTzNs()));
    EXPECT_EQ(t->id(), TypeId::kInt);
  }
  ASSERT_OK_AND_ASSIGN(auto bucket, Transform::Bucket(4).ResultType(Type::String()));
  EXPECT_EQ(bucket->id(), TypeId::kInt);
  ASSERT_OK_AND_ASSIGN(auto trunc, Transform::Truncate(4).ResultType(Type::Decimal(9, 2)));
  EXPECT_TRUE(trunc->Equals(*Type::Decimal(9, 2)));
  ASSERT_OK_AND_ASSIGN(auto ident, Transform::Identity().ResultType(Type::Uuid()));
  EXPECT_EQ(ident->id(), TypeId::kUuid);
  EXPECT_ERROR(Transform(Transform::Kind::kHour).ResultType(Type::Date()), ErrorKind::kInvalidArgument, "hour");
}

TEST(TruncateTransformTest, IntegersRoundTowardsNegativeInfinity) {
  const auto t = Transform::Truncate(10);
  const std::vector<std::pair<int32_t, int32_t>> cases = {{0, 0},     {1, 0},     {9, 0},      {10, 10},
                                                          {-1, -10},  {-10, -10}, {-11, -20},  {12345, 12340},
                                                          {-12345, -12350}};
  for (const auto& [in, out] : cases) {
    EXPECT_EQ(Apply(t, Type::Int(), L32(in)), L32(out)) << in;
    EXPECT_EQ(Apply(t, Type::Long(), L64(in)), L64(out)) << in;
  }
  EXPECT_EQ(Apply(Transform::Truncate(1), Type::Int(), L32(-7)), L32(-7));
  EXPECT_EQ(Apply(Transform::Truncate(3), Type::Long(), L64(-4)), L64(-6));
  EXPECT_EQ(Apply(t, Type::Long(), L64(std::numeric_limits<int64_t>::max())), L64(9223372036854775800LL));
  EXPECT_EQ(Apply(t, Type::Long(), L64(-9223372036854775800LL)), L64(-9223372036854775800LL));
}

TEST(TruncateTransformTest, DecimalsTruncateTheUnscaledValue) {
  const auto t2 = Type::Decimal(9, 2);
  // 10.65 truncate[50] → 10.50 (spec); -0.05 truncate[10] → -0.10.
  EXPECT_EQ(Apply(Transform::Truncate(50), t2, Dec(1065)), Dec(1050));
  EXPECT_EQ(Apply(Transform::Truncate(10), t2, Dec(-5)), Dec(-10));
  EXPECT_EQ(Apply(Transform::Truncate(10), t2, Dec(1234)), Dec(1230));
  EXPECT_EQ(Apply(Transform::Truncate(10), t2, Dec(-1234)), Dec(-1240));
  EXPECT_EQ(Apply(Transform::Truncate(100), Type::Decimal(38, 0), Dec(-1)), Dec(-100));
  __int128 big = 1;
  for (int i = 0; i < 37; ++i) big *= 10;
  EXPECT_EQ(Apply(Transform::Truncate(1000), Type::Decimal(38, 0), Dec(-big - 1)), Dec(-big - 1000));
}

TEST(TruncateTransformTest, StringsCountCodePoints) {
  const auto s = Type::String();
  EXPECT_EQ(Apply(Transform::Truncate(3), s, S("iceberg")), S("ice"));
  EXPECT_EQ(Apply(Transform::Truncate(10), s, S("ice")), S("ice"));
  EXPECT_EQ(Apply(Transform::Truncate(3), s, S("")), S(""));
  // Two-, three- and four-byte code points each count once.
  EXPECT_EQ(Apply(Transform::Truncate(2), s, S("\xc3\xa9t\xc3\xa9")), S("\xc3\xa9t"));                 // "été"
  EXPECT_EQ(Apply(Transform::Truncate(2), s, S("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e")), S("\xe6\x97\xa5\xe6\x9c\xac"));
  EXPECT_EQ(Apply(Transform::Truncate(1), s, S("\xf0\x9f\x98\x80\xf0\x9f\x98\x81")), S("\xf0\x9f\x98\x80"));
  EXPECT_EQ(Apply(Transform::Truncate(3), s, S("a\xc3\xa9\xf0\x9f\x98\x80" "b")), S("a\xc3\xa9\xf0\x9f\x98\x80"));
}

TEST(TruncateTransformTest, BinaryCountsBytes) {
  EXPECT_EQ(Apply(Transform::Truncate(3), Type::Binary(), B(Hex("00010203"))), B(Hex("000102")));
  EXPECT_EQ(Apply(Transform::Truncate(8), Type::Binary(), B(Hex("00010203"))), B(Hex("00010203")));
  // Bytes are not code points: a multi-byte UTF-8 sequence is cut in the middle.
  EXPECT_EQ(Apply(Transform::Truncate(1), Type::Binary(), B("\xc3\xa9")), B("\xc3"));
}

TEST(TransformTest, IdentityVoidAndNull) {
  EXPECT_EQ(Apply(Transform::Identity(), Type::String(), S("x")), S("x"));
  EXPECT_EQ(Apply(Transform::Identity(), Type::Decimal(9, 2), Dec(-5)), Dec(-5));
  const Transform void_t(Transform::Kind::kVoid);
  EXPECT_TRUE(Apply(void_t, Type::Long(), L64(5)).is_null());
  EXPECT_TRUE(Apply(void_t, Type::Struct({}), L64(5)).is_null());
  for (const auto& t : {Transform::Identity(), Transform::Bucket(4), Transform::Truncate(4),
                        Transform(Transform::Kind::kYear), Transform(Transform::Kind::kDay)}) {
    EXPECT_TRUE(Apply(t, Type::Date(), Literal::Null()).is_null()) << t.ToString();
  }
}

TEST(TransformTest, ApplyRejectsWrongTypesAndValues) {
  EXPECT_ERROR(Transform::Truncate(4).Apply(*Type::Uuid(), B(std::string(16, 'x'))), ErrorKind::kInvalidArgument,
               "uuid");
  EXPECT_ERROR(Transform(Transform::Kind::kHour).Apply(*Type::Date(), L32(1)), ErrorKind::kInvalidArgument, "date");
  EXPECT_ERROR(Transform::Bucket(4).Apply(*Type::Long(), L32(1)), ErrorKind::kInvalidArgument, "long");
  ASSERT_OK_AND_ASSIGN(auto unknown, Transform::Parse("zorder"));
  EXPECT_ERROR(unknown.Apply(*Type::Long(), L64(1)), ErrorKind::kInvalidArgument, "zorder");
}

TEST(TransformTest, CanTransformMatrix) {
  const std::vector<TypePtr> all = {Type::Boolean(), Type::Int(),       Type::Long(),          Type::Float(),
                                    Type::Double(),  Type::Decimal(9, 2), Type::Date(),        Type::Time(),
                                    Type::Timestamp(), Type::TimestampTz(), Type::TimestampNs(), Type::TimestampTzNs(),
                                    Type::String(),  Type::Uuid(),      Type::Fixed(4),        Type::Binary()};
  auto names = [&](const Transform& t) {
    std::string out;
    for (const auto& type : all) {
      if (t.CanTransform(*type)) out += type->ToString() + " ";
    }
    return out;
  };
  // Spec "Partition Transforms" source types.
  EXPECT_EQ(names(Transform::Bucket(2)),
            "int long decimal(9, 2) date time timestamp timestamptz timestamp_ns timestamptz_ns string uuid fixed[4] "
            "binary ");
  EXPECT_EQ(names(Transform::Truncate(2)), "int long decimal(9, 2) string binary ");
  EXPECT_EQ(names(Transform(Transform::Kind::kYear)), "date timestamp timestamptz timestamp_ns timestamptz_ns ");
  EXPECT_EQ(names(Transform(Transform::Kind::kMonth)), "date timestamp timestamptz timestamp_ns timestamptz_ns ");
  EXPECT_EQ(names(Transform(Transform::Kind::kDay)), "date timestamp timestamptz timestamp_ns timestamptz_ns ");
  EXPECT_EQ(names(Transform(Transform::Kind::kHour)), "timestamp timestamptz timestamp_ns timestamptz_ns ");
  EXPECT_EQ(names(Transform::Identity()).size(), names(Transform(Transform::Kind::kVoid)).size());
  EXPECT_FALSE(Transform::Identity().CanTransform(*Type::Struct({})));
  EXPECT_FALSE(Transform::Identity().CanTransform(*Type::Variant()));
  EXPECT_TRUE(Transform(Transform::Kind::kVoid).CanTransform(*Type::Struct({})));
}

TEST(TransformTest, ParseAndPrint) {
  for (const char* text : {"identity", "bucket[16]", "truncate[4]", "year", "month", "day", "hour", "void"}) {
    ASSERT_OK_AND_ASSIGN(auto t, Transform::Parse(text));
    EXPECT_EQ(t.ToString(), text);
    EXPECT_NE(t.kind(), Transform::Kind::kUnknown) << text;
  }
  ASSERT_OK_AND_ASSIGN(auto spaced, Transform::Parse("bucket[ 8 ]"));
  EXPECT_EQ(spaced, Transform::Bucket(8));
  EXPECT_EQ(spaced.param(), 8);
  // Unknown transforms are kept verbatim so readers can carry them.
  ASSERT_OK_AND_ASSIGN(auto unknown, Transform::Parse("zorder[3]"));
  EXPECT_EQ(unknown.kind(), Transform::Kind::kUnknown);
  EXPECT_EQ(unknown.ToString(), "zorder[3]");
  EXPECT_FALSE(unknown.PreservesOrder());
  EXPECT_ERROR(Transform::Parse("bucket[0]"), ErrorKind::kInvalidArgument, "bucket[0]");
  EXPECT_ERROR(Transform::Parse("truncate[2147483648]"), ErrorKind::kInvalidArgument, "truncate[2147483648]");
  EXPECT_ERROR(Transform::Parse("bucket[99999999999999999999999]"), ErrorKind::kInvalidArgument,
               "99999999999999999999999");
}

TEST(TransformTest, OrderPreservation) {
  EXPECT_TRUE(Transform::Identity().PreservesOrder());
  EXPECT_TRUE(Transform::Truncate(3).PreservesOrder());
  EXPECT_TRUE(Transform(Transform::Kind::kDay).PreservesOrder());
  EXPECT_FALSE(Transform::Bucket(3).PreservesOrder());
  EXPECT_FALSE(Transform(Transform::Kind::kVoid).PreservesOrder());
}

TEST(TransformTest, HelperFunctionsFloor) {
  EXPECT_EQ(YearsFromDays(-1), -1);
  EXPECT_EQ(MonthsFromDays(-1), -1);
  EXPECT_EQ(DaysFromMicros(-1), -1);
  EXPECT_EQ(HoursFromMicros(-1), -1);
  EXPECT_EQ(DaysFromMicros(0), 0);
  EXPECT_EQ(HoursFromMicros(3600LL * 1000000 - 1), 0);
  EXPECT_EQ(Murmur3Hash32(""), 0);
}

}  // namespace
}  // namespace lakesync::iceberg
