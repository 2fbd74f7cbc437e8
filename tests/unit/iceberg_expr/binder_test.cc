// Binding tests: column resolution, literal conversion per Iceberg type (expected values computed from
// the spec's definitions: days/micros since 1970-01-01 UTC, unscaled decimals), exact rewrites of
// constants a type cannot hold, NOT push-down and folding.
#include "lakesync/iceberg/expr/binder.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_support.h"

namespace lakesync::iceberg {
namespace {

using testing::ErrorOf;
using testing::Optional;
using testing::Required;

constexpr int64_t kMicrosPerDay = 86400LL * 1000000;
constexpr int32_t kDay20240101 = 54 * 365 + 13;  // 54 years since 1970 with 13 leap days (1972..2020)

Schema TestSchema() {
  return Schema(
      0, {Required(1, "id", Type::Long()),
          Optional(2, "i", Type::Int()),
          Optional(3, "status", Type::String()),
          Optional(4, "d", Type::Double()),
          Optional(5, "f", Type::Float()),
          Optional(6, "dec", Type::Decimal(9, 2)),
          Optional(7, "dt", Type::Date()),
          Optional(8, "ts", Type::Timestamp()),
          Optional(9, "tstz", Type::TimestampTz()),
          Optional(10, "tsns", Type::TimestampNs()),
          Optional(11, "u", Type::Uuid()),
          Optional(12, "b", Type::Boolean()),
          Optional(13, "bin", Type::Binary()),
          Optional(14, "fx", Type::Fixed(4)),
          Optional(15, "t", Type::Time()),
          Optional(16, "addr", Type::Struct({Optional(17, "city", Type::String()), Required(18, "zip", Type::Int())})),
          Required(19, "req", Type::Struct({Required(20, "x", Type::Long())})),
          Optional(21, "tags", Type::List(Optional(22, "element", Type::String()))),
          Optional(23, "props", Type::Map(Required(24, "key", Type::String()), Optional(25, "value", Type::String()))),
          Optional(26, "name", Type::String()),
          Optional(27, "NAME", Type::String()),
          Optional(28, "CamelCase", Type::Int())});
}

BoundExpr Bound(const std::string& filter, bool case_sensitive = true) {
  static const Schema schema = TestSchema();
  return testing::MustBind(filter, schema, case_sensitive);
}

std::string BindError(const std::string& filter, bool case_sensitive = true) {
  static const Schema schema = TestSchema();
  auto b = ParseAndBind(filter, schema, case_sensitive);
  EXPECT_FALSE(b.ok()) << filter << " bound as " << (b.ok() ? b->ToString() : "");
  if (!b.ok()) {
    EXPECT_EQ(KindOf(b.status()), ErrorKind::kInvalidArgument) << filter;
  }
  return ErrorOf(b);
}

// The single literal of a bound predicate, after checking its operator.
Literal LiteralOf(const std::string& filter, Operation op) {
  BoundExpr b = Bound(filter);
  EXPECT_EQ(b.op(), op) << filter << " -> " << b.ToString();
  if (b.literals().size() != 1) {
    ADD_FAILURE() << filter << " -> " << b.ToString();
    return Literal();
  }
  return b.literal();
}

TEST(BinderTest, ResolvesTopLevelAndNestedColumns) {
  BoundExpr e = Bound("i = 5");
  EXPECT_EQ(e.ref().field_id, 2);
  EXPECT_EQ(e.ref().name, "i");
  EXPECT_EQ(e.ref().type->id(), TypeId::kInt);
  EXPECT_FALSE(e.ref().never_null);

  BoundExpr n = Bound("addr.city = 'Oslo'");
  EXPECT_EQ(n.ref().field_id, 17);
  EXPECT_EQ(n.ref().name, "addr.city");
  EXPECT_EQ(n.ref().id_path, (std::vector<int32_t>{16, 17}));
  EXPECT_EQ(n.ref().name_path, (std::vector<std::string>{"addr", "city"}));

  // A single quoted name with dots falls back to the nested field.
  EXPECT_EQ(Bound("\"addr.city\" = 'Oslo'").ref().field_id, 17);
  EXPECT_EQ(Bound("req.x = 1").ref().field_id, 20);
  EXPECT_TRUE(Bound("req.x = 1").ref().never_null);
}

TEST(BinderTest, CaseSensitivity) {
  EXPECT_EQ(Bound("camelcase = 1", false).ref().field_id, 28);
  EXPECT_EQ(Bound("ADDR.CITY IS NULL", false).ref().field_id, 17);
  EXPECT_EQ(BindError("camelcase = 1"),
            "filter 'camelcase = 1': unknown column 'camelcase' in filter (did you mean 'CamelCase'?); available "
            "columns: id, i, status, d, f, dec, dt, ts, tstz, tsns, u, b, ... (21 in all)");
  // With case folding an exact match still wins; otherwise two candidates are ambiguous.
  EXPECT_EQ(Bound("NAME = 'x'", false).ref().field_id, 27);
  EXPECT_EQ(Bound("name = 'x'", false).ref().field_id, 26);
  EXPECT_EQ(BindError("Name = 'x'", false),
            "filter 'Name = 'x'': column 'Name' is ambiguous without case sensitivity: it matches 'name' and 'NAME'");
}

TEST(BinderTest, UnknownAndUnusableColumns) {
  EXPECT_EQ(BindError("stauts = 'ACTIVE'"),
            "filter 'stauts = 'ACTIVE'': unknown column 'stauts' in filter (did you mean 'status'?); available "
            "columns: id, i, status, d, f, dec, dt, ts, tstz, tsns, u, b, ... (21 in all)");
  EXPECT_NE(BindError("zzzzzzzz = 1").find("unknown column 'zzzzzzzz' in filter; available columns: id, i,"),
            std::string::npos);
  EXPECT_NE(BindError("addr.town = 'x'").find("unknown column 'addr.town'"), std::string::npos);
  EXPECT_EQ(BindError("tags.element = 'a'"),
            "filter 'tags.element = 'a'': column 'tags.element' is inside the list 'tags': filters can use only "
            "top-level columns and fields of structs");
  EXPECT_EQ(BindError("props.key = 'a'"),
            "filter 'props.key = 'a'': column 'props.key' is inside the map 'props': filters can use only "
            "top-level columns and fields of structs");
  EXPECT_EQ(BindError("addr = 'x'"),
            "filter 'addr = 'x'': column 'addr' is a struct<17: city: optional string, 18: zip: required int>; "
            "filters compare single values, such as its field 'addr.city'");
  EXPECT_EQ(BindError("tags IS NULL").substr(0, 45), "filter 'tags IS NULL': column 'tags' is a lis");
  EXPECT_EQ(BindError("i.x = 1"), "filter 'i.x = 1': column 'i' has type int and no field 'x'");
}

TEST(BinderTest, NullChecksFoldForNeverNullColumns) {
  EXPECT_EQ(Bound("id IS NULL").op(), Operation::kFalse);
  EXPECT_EQ(Bound("id IS NOT NULL").op(), Operation::kTrue);
  EXPECT_EQ(Bound("req.x IS NULL").op(), Operation::kFalse);
  // A required field inside an optional struct is null when the struct is.
  EXPECT_EQ(Bound("addr.zip IS NULL").op(), Operation::kIsNull);
  EXPECT_EQ(Bound("i IS NULL").op(), Operation::kIsNull);
  EXPECT_EQ(Bound("i IS NOT NULL").op(), Operation::kNotNull);
  EXPECT_EQ(Bound("id IS NULL AND i = 1").op(), Operation::kFalse);
}

TEST(BinderTest, IntegerColumns) {
  EXPECT_EQ(LiteralOf("i = 5", Operation::kEq), Literal(int32_t{5}));
  EXPECT_EQ(LiteralOf("i = -2147483648", Operation::kEq), Literal(int32_t{-2147483647 - 1}));
  EXPECT_EQ(LiteralOf("i = '7'", Operation::kEq), Literal(int32_t{7}));
  EXPECT_EQ(LiteralOf("i >= 1e2", Operation::kGtEq), Literal(int32_t{100}));
  EXPECT_EQ(LiteralOf("i = 12.000", Operation::kEq), Literal(int32_t{12}));
  EXPECT_EQ(LiteralOf("id = 9223372036854775807", Operation::kEq), Literal(int64_t{9223372036854775807LL}));
  // Fractions: x < 5.5 <=> x <= 5, x > 5.5 <=> x > 5, x = 5.5 never.
  EXPECT_EQ(LiteralOf("i < 5.5", Operation::kLtEq), Literal(int32_t{5}));
  EXPECT_EQ(LiteralOf("i <= 5.5", Operation::kLtEq), Literal(int32_t{5}));
  EXPECT_EQ(LiteralOf("i > 5.5", Operation::kGt), Literal(int32_t{5}));
  EXPECT_EQ(LiteralOf("i >= 5.5", Operation::kGt), Literal(int32_t{5}));
  EXPECT_EQ(LiteralOf("i < -5.5", Operation::kLtEq), Literal(int32_t{-6}));
  EXPECT_EQ(LiteralOf("i > -0.5", Operation::kGt), Literal(int32_t{-1}));
  EXPECT_EQ(LiteralOf("i < 25e-1", Operation::kLtEq), Literal(int32_t{2}));
  EXPECT_EQ(Bound("i = 5.5").op(), Operation::kFalse);
  EXPECT_EQ(Bound("i != 5.5").op(), Operation::kNotNull);
  // Out of the type's range.
  EXPECT_EQ(Bound("i = 3000000000").op(), Operation::kFalse);
  EXPECT_EQ(Bound("i > 3000000000").op(), Operation::kFalse);
  EXPECT_EQ(Bound("i < 3000000000").op(), Operation::kNotNull);
  EXPECT_EQ(Bound("i <= 2147483647.5").op(), Operation::kNotNull);
  EXPECT_EQ(Bound("i > -3000000000").op(), Operation::kNotNull);
  EXPECT_EQ(Bound("i < -3000000000").op(), Operation::kFalse);
  EXPECT_EQ(Bound("id < 1e30").op(), Operation::kTrue);  // id is required
  EXPECT_EQ(Bound("id > 9223372036854775808").op(), Operation::kFalse);
  // Comparisons that no value can satisfy at the ends of the range.
  EXPECT_EQ(Bound("i < -2147483648").op(), Operation::kFalse);
  EXPECT_EQ(Bound("i > 2147483647").op(), Operation::kFalse);
  EXPECT_EQ(Bound("id < -9223372036854775808").op(), Operation::kFalse);
  // IN drops constants that no value equals.
  BoundExpr in = Bound("i IN (3, 1, 2.5, 3, 1e20)");
  ASSERT_EQ(in.op(), Operation::kIn);
  EXPECT_EQ(in.literals(), (std::vector<Literal>{Literal(int32_t{1}), Literal(int32_t{3})}));
  EXPECT_EQ(Bound("i IN (2.5)").op(), Operation::kFalse);
  EXPECT_EQ(LiteralOf("i IN (2.5, 4)", Operation::kEq), Literal(int32_t{4}));
  EXPECT_EQ(LiteralOf("i NOT IN (2.5, 4)", Operation::kNotEq), Literal(int32_t{4}));
  EXPECT_EQ(Bound("i NOT IN (2.5)").op(), Operation::kNotNull);

  EXPECT_EQ(BindError("i = 'abc'"), "filter 'i = 'abc'': value 'abc' compared with column 'i' of type int is not a number");
  EXPECT_EQ(BindError("i = TRUE"), "filter 'i = TRUE': cannot compare column 'i' of type int with TRUE");
  EXPECT_EQ(BindError("i = DATE '2024-01-01'"),
            "filter 'i = DATE '2024-01-01'': cannot compare column 'i' of type int with DATE '2024-01-01'");
}

TEST(BinderTest, DecimalColumns) {
  EXPECT_EQ(LiteralOf("dec = 1.5", Operation::kEq), Literal(Decimal{150}));
  EXPECT_EQ(LiteralOf("dec = '12.34'", Operation::kEq), Literal(Decimal{1234}));
  EXPECT_EQ(LiteralOf("dec = -12", Operation::kEq), Literal(Decimal{-1200}));
  EXPECT_EQ(LiteralOf("dec = 1.5e1", Operation::kEq), Literal(Decimal{1500}));
  EXPECT_EQ(LiteralOf("dec = 9999999.99", Operation::kEq), Literal(Decimal{999999999}));
  EXPECT_EQ(LiteralOf("dec < 1.005", Operation::kLtEq), Literal(Decimal{100}));
  EXPECT_EQ(LiteralOf("dec > 1.005", Operation::kGt), Literal(Decimal{100}));
  EXPECT_EQ(LiteralOf("dec > -1.005", Operation::kGt), Literal(Decimal{-101}));
  EXPECT_EQ(Bound("dec = 1.005").op(), Operation::kFalse);
  EXPECT_EQ(Bound("dec = 10000000").op(), Operation::kFalse);  // needs 10 digits at precision 9
  EXPECT_EQ(Bound("dec < 10000000").op(), Operation::kNotNull);
  EXPECT_EQ(Bound("dec > -10000000").op(), Operation::kNotNull);
  EXPECT_EQ(BindError("dec = 'x'"), "filter 'dec = 'x'': value 'x' compared with column 'dec' of type decimal(9, 2) is not a number");
}

TEST(BinderTest, FloatingColumns) {
  EXPECT_EQ(LiteralOf("d = 1.5", Operation::kEq), Literal(1.5));
  EXPECT_EQ(LiteralOf("d > 1e3", Operation::kGt), Literal(1000.0));
  EXPECT_EQ(LiteralOf("d < -2", Operation::kLt), Literal(-2.0));
  EXPECT_EQ(LiteralOf("d = '0.25'", Operation::kEq), Literal(0.25));
  EXPECT_EQ(LiteralOf("f < 0.1", Operation::kLt), Literal(0.1f));
  const Literal inf = LiteralOf("d < 'inf'", Operation::kLt);
  EXPECT_TRUE(std::isinf(inf.get<double>()));
  EXPECT_EQ(BindError("d = 'NaN'"),
            "filter 'd = 'NaN'': column 'd' cannot be compared with NaN: use 'd IS NAN' or 'd IS NOT NAN'");
  EXPECT_EQ(BindError("d = 1e999"), "filter 'd = 1e999': value 1e999 compared with column 'd' of type double is out of range");
  EXPECT_EQ(BindError("f = 1e39"), "filter 'f = 1e39': value 1e39 compared with column 'f' of type float is out of range");
  EXPECT_EQ(Bound("d IS NAN").op(), Operation::kIsNan);
  EXPECT_EQ(Bound("f IS NOT NAN").op(), Operation::kNotNan);
  EXPECT_EQ(BindError("i IS NAN"), "filter 'i IS NAN': IS NAN applies to float and double columns, but 'i' is int");
}

TEST(BinderTest, DateColumns) {
  EXPECT_EQ(LiteralOf("dt = DATE '2024-01-01'", Operation::kEq), Literal(kDay20240101));
  EXPECT_EQ(LiteralOf("dt = '2024-01-01'", Operation::kEq), Literal(kDay20240101));
  EXPECT_EQ(LiteralOf("dt = '1969-12-31'", Operation::kEq), Literal(int32_t{-1}));
  EXPECT_EQ(LiteralOf("dt = '1970-01-01'", Operation::kEq), Literal(int32_t{0}));
  // Timestamps compared with dates: midnight is exact, later instants fall between two days.
  EXPECT_EQ(LiteralOf("dt >= TIMESTAMP '2024-01-01 00:00:00'", Operation::kGtEq), Literal(kDay20240101));
  EXPECT_EQ(LiteralOf("dt < TIMESTAMP '2024-01-01 10:00:00'", Operation::kLtEq), Literal(kDay20240101));
  EXPECT_EQ(LiteralOf("dt > TIMESTAMP '1969-12-31 23:59:59.999999'", Operation::kGt), Literal(int32_t{-1}));
  EXPECT_EQ(Bound("dt = TIMESTAMP '2024-01-01 10:00:00'").op(), Operation::kFalse);
  EXPECT_EQ(BindError("dt = '2024-02-30'"),
            "filter 'dt = '2024-02-30'': value '2024-02-30' compared with column 'dt' of type date is not a valid date");
  EXPECT_EQ(BindError("dt = DATE '2023-02-29'"),
            "filter 'dt = DATE '2023-02-29'': value DATE '2023-02-29' compared with column 'dt' of type date is not a "
            "valid date");
  EXPECT_EQ(BindError("dt = DATE '2024/01/01'"),
            "filter 'dt = DATE '2024/01/01'': value DATE '2024/01/01' compared with column 'dt' of type date is not a "
            "date (expected 'yyyy-mm-dd')");
  EXPECT_EQ(LiteralOf("dt = DATE '2024-02-29'", Operation::kEq), Literal(kDay20240101 + 31 + 28));
  EXPECT_EQ(BindError("dt = 5"),
            "filter 'dt = 5': cannot compare column 'dt' of type date with 5: write dates as DATE 'yyyy-mm-dd' or "
            "'yyyy-mm-dd'");
  EXPECT_NE(BindError("dt = 'yesterday'").find("is not a date (expected 'yyyy-mm-dd')"), std::string::npos);
  EXPECT_NE(BindError("dt < '2024-01-01 25:00'").find("is not a timestamp"), std::string::npos);
}

TEST(BinderTest, TimestampColumns) {
  const int64_t ten_am = kDay20240101 * kMicrosPerDay + 10LL * 3600 * 1000000;
  EXPECT_EQ(LiteralOf("ts = TIMESTAMP '2024-01-01 10:00:00'", Operation::kEq), Literal(ten_am));
  EXPECT_EQ(LiteralOf("ts = '2024-01-01T10:00:00'", Operation::kEq), Literal(ten_am));
  EXPECT_EQ(LiteralOf("ts >= DATE '2024-01-01'", Operation::kGtEq), Literal(kDay20240101 * kMicrosPerDay));
  EXPECT_EQ(LiteralOf("ts = '1969-12-31 23:59:59.999999'", Operation::kEq), Literal(int64_t{-1}));
  // A nanosecond constant for a microsecond column falls between two microseconds.
  EXPECT_EQ(LiteralOf("ts < '1970-01-01 00:00:00.0000015'", Operation::kLtEq), Literal(int64_t{1}));
  EXPECT_EQ(LiteralOf("ts > '1969-12-31 23:59:59.9999995'", Operation::kGt), Literal(int64_t{-1}));
  EXPECT_EQ(Bound("ts = '1970-01-01 00:00:00.0000015'").op(), Operation::kFalse);
  EXPECT_EQ(LiteralOf("ts = '1970-01-01 00:00:00.000001000'", Operation::kEq), Literal(int64_t{1}));
  EXPECT_EQ(BindError("ts = '2024-01-01T10:00:00+02:00'"),
            "filter 'ts = '2024-01-01T10:00:00+02:00'': column 'ts' is a timestamp without time zone and cannot be "
            "compared with '2024-01-01T10:00:00+02:00', which has a zone offset");
  EXPECT_NE(BindError("ts = TIMESTAMPTZ '2024-01-01 10:00:00Z'").find("without time zone"), std::string::npos);
  EXPECT_EQ(BindError("ts = 5"),
            "filter 'ts = 5': cannot compare column 'ts' of type timestamp with 5: write timestamps as TIMESTAMP "
            "'yyyy-mm-dd hh:mm:ss' or a quoted string");

  // Zoned columns: offsets are applied, constants without one are UTC.
  EXPECT_EQ(LiteralOf("tstz = TIMESTAMPTZ '2024-01-01 10:00:00+02:00'", Operation::kEq),
            Literal(kDay20240101 * kMicrosPerDay + 8LL * 3600 * 1000000));
  EXPECT_EQ(LiteralOf("tstz = TIMESTAMP '2024-01-01 10:00:00'", Operation::kEq), Literal(ten_am));
  EXPECT_EQ(LiteralOf("tstz = '2024-01-01 10:00:00Z'", Operation::kEq), Literal(ten_am));
  EXPECT_EQ(LiteralOf("tstz = '2024-01-01 05:00:00-05:00'", Operation::kEq), Literal(ten_am));

  // Nanosecond columns.
  EXPECT_EQ(LiteralOf("tsns = '1970-01-01 00:00:00.000000001'", Operation::kEq), Literal(int64_t{1}));
  EXPECT_EQ(LiteralOf("tsns >= DATE '1970-01-02'", Operation::kGtEq), Literal(86400LL * 1000000000));
  EXPECT_EQ(Bound("tsns < DATE '9999-12-31'").op(), Operation::kNotNull);  // beyond the year 2262
}

TEST(BinderTest, OtherTypes) {
  EXPECT_EQ(LiteralOf("status = 'ACTIVE'", Operation::kEq), Literal(std::string("ACTIVE")));
  EXPECT_EQ(BindError("status = 5"),
            "filter 'status = 5': cannot compare column 'status' of type string with 5: quote the value ('5') to "
            "compare it as text");
  EXPECT_EQ(BindError("status = DATE '2024-01-01'"),
            "filter 'status = DATE '2024-01-01'': cannot compare column 'status' of type string with DATE "
            "'2024-01-01'");

  const std::string uuid_bytes("\xf7\x9c\x3e\x09\x67\x7c\x4b\xbd\xa4\x79\x3f\x34\x9c\xb7\x85\xe7", 16);
  EXPECT_EQ(LiteralOf("u = 'f79c3e09-677c-4bbd-a479-3f349cb785e7'", Operation::kEq), Literal(Bytes{uuid_bytes}));
  EXPECT_EQ(LiteralOf("u = 'F79C3E09677C4BBDA4793F349CB785E7'", Operation::kEq), Literal(Bytes{uuid_bytes}));
  EXPECT_EQ(BindError("u = 'zzz'"), "filter 'u = 'zzz'': value 'zzz' compared with column 'u' of type uuid is not a UUID");

  EXPECT_EQ(LiteralOf("b = TRUE", Operation::kEq), Literal(true));
  EXPECT_EQ(LiteralOf("b = 'False'", Operation::kEq), Literal(false));
  EXPECT_EQ(LiteralOf("b", Operation::kEq), Literal(true));
  EXPECT_EQ(BindError("b = 1"), "filter 'b = 1': cannot compare column 'b' of type boolean with 1");
  EXPECT_EQ(BindError("i"), "filter 'i': cannot compare column 'i' of type int with TRUE");

  EXPECT_EQ(LiteralOf("bin = 'ab'", Operation::kEq), Literal(Bytes{"ab"}));
  EXPECT_EQ(LiteralOf("fx = 'abcd'", Operation::kEq), Literal(Bytes{"abcd"}));
  EXPECT_EQ(BindError("fx = 'abc'"),
            "filter 'fx = 'abc'': value 'abc' compared with column 'fx' of type fixed[4] has 3 bytes, but the column "
            "holds exactly 4");
  EXPECT_EQ(LiteralOf("t = '10:00:00'", Operation::kEq), Literal(int64_t{36000LL * 1000000}));
  EXPECT_EQ(LiteralOf("t > '00:00:00.5'", Operation::kGt), Literal(int64_t{500000}));

  BoundExpr like = Bound("status LIKE 'AC%'");
  EXPECT_EQ(like.op(), Operation::kStartsWith);
  EXPECT_EQ(like.literal(), Literal(std::string("AC")));
  EXPECT_EQ(BindError("id LIKE '1%'"), "filter 'id LIKE '1%'': LIKE needs a string column, but 'id' has type long");
}

TEST(BinderTest, NotIsPushedDownToPredicates) {
  EXPECT_EQ(Bound("NOT (i < 5)").ToString(), "i >= 5");
  EXPECT_EQ(Bound("NOT (i IN (1, 2))").ToString(), "i NOT IN (1, 2)");
  EXPECT_EQ(Bound("NOT (i IS NULL)").ToString(), "i IS NOT NULL");
  EXPECT_EQ(Bound("NOT (d IS NAN)").ToString(), "d IS NOT NAN");
  EXPECT_EQ(Bound("NOT status LIKE 'a%'").ToString(), "status NOT LIKE 'a%'");
  EXPECT_EQ(Bound("NOT (i = 1 AND status = 'x')").ToString(), "i != 1 OR status != 'x'");
  EXPECT_EQ(Bound("NOT (i = 1 OR NOT status = 'x')").ToString(), "i != 1 AND status = 'x'");
  EXPECT_EQ(Bound("i NOT BETWEEN 1 AND 5").ToString(), "i < 1 OR i > 5");
  // NaN fails both x < 5 and x >= 5, so the negation must admit it.
  EXPECT_EQ(Bound("NOT (d < 5)").ToString(), "d >= 5 OR d IS NAN");
  EXPECT_EQ(Bound("NOT (f >= 5)").ToString(), "f < 5 OR f IS NAN");
  EXPECT_EQ(Bound("NOT (d = 5)").ToString(), "d != 5");
  EXPECT_EQ(Bound("NOT NOT (i > 1)").ToString(), "i > 1");
}

TEST(BinderTest, ConstantsFold) {
  EXPECT_EQ(Bound("TRUE AND i = 1").ToString(), "i = 1");
  EXPECT_EQ(Bound("FALSE OR i = 1").ToString(), "i = 1");
  EXPECT_EQ(Bound("i = 1 OR TRUE").op(), Operation::kTrue);
  EXPECT_EQ(Bound("i = 1 AND FALSE").op(), Operation::kFalse);
  EXPECT_EQ(Bound("NOT TRUE").op(), Operation::kFalse);
  // Under NOT the null rows must stay unknown, so the rewrite happens after negation.
  EXPECT_EQ(Bound("NOT (i = 5.5)").op(), Operation::kNotNull);
  EXPECT_EQ(Bound("NOT (i < 1e30)").op(), Operation::kFalse);
  EXPECT_EQ(Bound("NOT NOT (i = 5.5)").op(), Operation::kFalse);
  EXPECT_EQ(Bound("NOT (i IN (2.5) OR FALSE)").op(), Operation::kNotNull);
  EXPECT_EQ(Bound("NOT (id < 1e30)").op(), Operation::kFalse);
  EXPECT_EQ(Bound("NOT (id IS NULL)").op(), Operation::kTrue);
  // Folding does not hide errors in the other branch.
  EXPECT_NE(BindError("TRUE OR nope = 1").find("unknown column 'nope'"), std::string::npos);
}

TEST(BinderTest, ReferencedFieldIds) {
  EXPECT_EQ(ReferencedFieldIds(Bound("i = 1 AND (addr.city = 'x' OR i > 3) AND NOT (d IS NAN)")),
            (std::vector<int32_t>{2, 4, 17}));
  EXPECT_TRUE(ReferencedFieldIds(Bound("TRUE")).empty());
  EXPECT_TRUE(ReferencedFieldIds(Bound("id IS NULL")).empty());  // folded away
}

TEST(BinderTest, BoundRendering) {
  EXPECT_EQ(Bound("dt >= '2024-01-01' AND ts < TIMESTAMP '2024-01-01 10:00:00' AND dec IN (1.5, 2)").ToString(),
            "dt >= '2024-01-01' AND ts < '2024-01-01T10:00:00' AND dec IN (1.50, 2.00)");
  EXPECT_EQ(Bound("addr.city = 'it''s' OR b").ToString(), "addr.city = 'it''s' OR b = TRUE");
}

TEST(BinderTest, BoundPredicateFactoryChecksLiterals) {
  BoundReference ref;
  ref.field_id = 2;
  ref.name = "i";
  ref.type = Type::Int();
  EXPECT_TRUE(BoundExpr::Predicate(Operation::kEq, ref, {Literal(int32_t{1})}).ok());
  EXPECT_FALSE(BoundExpr::Predicate(Operation::kEq, ref, {Literal(int64_t{1})}).ok());
  EXPECT_FALSE(BoundExpr::Predicate(Operation::kEq, ref, {}).ok());
  EXPECT_FALSE(BoundExpr::Predicate(Operation::kIsNull, ref, {Literal(int32_t{1})}).ok());
  EXPECT_FALSE(BoundExpr::Predicate(Operation::kIn, ref, {}).ok());
  EXPECT_FALSE(BoundExpr::Predicate(Operation::kEq, ref, {Literal()}).ok());
  EXPECT_FALSE(BoundExpr::Predicate(Operation::kAnd, ref, {}).ok());
  ref.type = Type::Double();
  EXPECT_EQ(ErrorOf(BoundExpr::Predicate(Operation::kLt, ref, {Literal(std::nan(""))})),
            "column 'i' cannot be compared with NaN; use IS NAN / IS NOT NAN");
}

}  // namespace
}  // namespace lakesync::iceberg
