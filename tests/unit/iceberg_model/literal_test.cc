// Single-value codecs (spec Appendix D binary, Appendix C JSON) and the text helpers behind them.
// Expected bytes follow from the spec's definitions (little-endian fixed width, minimal big-endian
// two's complement for decimals); day and microsecond counts were computed with Python's datetime.
#include "lakesync/iceberg/model/literal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "model_test_util.h"

namespace lakesync::iceberg {
namespace {

using testing::Hex;

std::string ToHexString(const std::string& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xf]);
  }
  return out;
}

// Binary form and back; the decoded literal must equal the original.
void ExpectBinary(const TypePtr& type, const Literal& lit, const std::string& hex) {
  SCOPED_TRACE(type->ToString() + " " + lit.ToString(*type));
  ASSERT_OK_AND_ASSIGN(auto bytes, lit.ToBytes(*type));
  EXPECT_EQ(ToHexString(bytes), hex);
  ASSERT_OK_AND_ASSIGN(auto back, Literal::FromBytes(*type, bytes));
  EXPECT_EQ(back, lit);
}

// JSON form and back.
void ExpectJson(const TypePtr& type, const Literal& lit, const nlohmann::json& expected) {
  SCOPED_TRACE(type->ToString() + " " + expected.dump());
  ASSERT_OK_AND_ASSIGN(auto j, lit.ToJson(*type));
  EXPECT_EQ(j, expected);
  ASSERT_OK_AND_ASSIGN(auto back, Literal::FromJson(*type, j));
  EXPECT_EQ(back, lit);
}

Literal Dec(__int128 v) { return Literal(Decimal{v}); }
Literal B(std::string s) { return Literal(Bytes{std::move(s)}); }

TEST(LiteralBinaryTest, Boolean) {
  ExpectBinary(Type::Boolean(), Literal(true), "01");
  ExpectBinary(Type::Boolean(), Literal(false), "00");
  // Any non-zero byte is true.
  ASSERT_OK_AND_ASSIGN(auto two, Literal::FromBytes(*Type::Boolean(), "\x02"));
  EXPECT_EQ(two, Literal(true));
  EXPECT_ERROR(Literal::FromBytes(*Type::Boolean(), ""), ErrorKind::kCorrupt, "boolean");
}

TEST(LiteralBinaryTest, IntAndDateAreFourBytesLittleEndian) {
  ExpectBinary(Type::Int(), Literal(int32_t{1}), "01000000");
  ExpectBinary(Type::Int(), Literal(int32_t{-1}), "ffffffff");
  ExpectBinary(Type::Int(), Literal(int32_t{0x12345678}), "78563412");
  ExpectBinary(Type::Int(), Literal(std::numeric_limits<int32_t>::min()), "00000080");
  ExpectBinary(Type::Int(), Literal(std::numeric_limits<int32_t>::max()), "ffffff7f");
  ExpectBinary(Type::Date(), Literal(int32_t{17486}), "4e440000");  // 2017-11-16
  ExpectBinary(Type::Date(), Literal(int32_t{-1}), "ffffffff");    // 1969-12-31
  EXPECT_ERROR(Literal::FromBytes(*Type::Int(), "abc"), ErrorKind::kCorrupt, "int");
  EXPECT_ERROR(Literal::FromBytes(*Type::Date(), std::string(8, '\0')), ErrorKind::kCorrupt, "date");
}

TEST(LiteralBinaryTest, LongTimeAndTimestampsAreEightBytesLittleEndian) {
  ExpectBinary(Type::Long(), Literal(int64_t{1}), "0100000000000000");
  ExpectBinary(Type::Long(), Literal(int64_t{-2}), "feffffffffffffff");
  ExpectBinary(Type::Long(), Literal(std::numeric_limits<int64_t>::min()), "0000000000000080");
  ExpectBinary(Type::Time(), Literal(int64_t{81068000000}), "008307e012000000");  // 22:31:08
  ExpectBinary(Type::Timestamp(), Literal(int64_t{1510871468123456}), "40a5282d215e0500");
  ExpectBinary(Type::TimestampTz(), Literal(int64_t{-1}), "ffffffffffffffff");  // before 1970
  ExpectBinary(Type::TimestampNs(), Literal(int64_t{1510871468123456789}), "1585c56698b1f714");
  ExpectBinary(Type::TimestampTzNs(), Literal(int64_t{-1000000001}), "ff3565c4ffffffff");
  EXPECT_ERROR(Literal::FromBytes(*Type::Timestamp(), "1234"), ErrorKind::kCorrupt, "timestamp");
}

TEST(LiteralBinaryTest, LongBoundsPromotedFromIntReadFourBytes) {
  // A long column promoted from int keeps 4-byte bounds in old manifests.
  ASSERT_OK_AND_ASSIGN(auto v, Literal::FromBytes(*Type::Long(), Hex("feffffff")));
  EXPECT_EQ(v, Literal(int64_t{-2}));
}

TEST(LiteralBinaryTest, FloatAndDouble) {
  ExpectBinary(Type::Float(), Literal(1.0f), "0000803f");
  ExpectBinary(Type::Float(), Literal(-0.0f), "00000080");
  ExpectBinary(Type::Double(), Literal(1.0), "000000000000f03f");
  ExpectBinary(Type::Double(), Literal(-2.5), "00000000000004c0");
  // A double column promoted from float keeps 4-byte bounds.
  ASSERT_OK_AND_ASSIGN(auto promoted, Literal::FromBytes(*Type::Double(), Hex("0000803f")));
  EXPECT_EQ(promoted, Literal(1.0));
  // NaN survives with its bits.
  ASSERT_OK_AND_ASSIGN(auto nan_bytes, Literal(std::numeric_limits<double>::quiet_NaN()).ToBytes(*Type::Double()));
  ASSERT_OK_AND_ASSIGN(auto nan, Literal::FromBytes(*Type::Double(), nan_bytes));
  EXPECT_TRUE(std::isnan(nan.get<double>()));
}

TEST(LiteralBinaryTest, StringsAndBytesAreRaw) {
  ExpectBinary(Type::String(), Literal(std::string("iceberg")), "69636562657267");
  ExpectBinary(Type::String(), Literal(std::string("h\xc3\xa9")), "68c3a9");
  ExpectBinary(Type::String(), Literal(std::string()), "");
  ExpectBinary(Type::Binary(), B(Hex("000102ff")), "000102ff");
  ExpectBinary(Type::Fixed(4), B(Hex("000102ff")), "000102ff");
  // The spec's UUID example: f79c3e09-677c-4bbd-a479-3f349cb785e7 is stored as its 16 big-endian bytes.
  ExpectBinary(Type::Uuid(), B(Hex("f79c3e09677c4bbda4793f349cb785e7")), "f79c3e09677c4bbda4793f349cb785e7");
}

TEST(LiteralBinaryTest, DecimalUsesTheMinimalTwosComplementBytes) {
  const auto t = Type::Decimal(38, 2);
  ExpectBinary(t, Dec(0), "00");
  ExpectBinary(t, Dec(-1), "ff");
  ExpectBinary(t, Dec(1), "01");
  ExpectBinary(t, Dec(127), "7f");
  ExpectBinary(t, Dec(128), "0080");
  ExpectBinary(t, Dec(-128), "80");
  ExpectBinary(t, Dec(-129), "ff7f");
  ExpectBinary(t, Dec(255), "00ff");
  ExpectBinary(t, Dec(256), "0100");
  ExpectBinary(t, Dec(-256), "ff00");
  ExpectBinary(t, Dec(-257), "feff");
  ExpectBinary(t, Dec(32767), "7fff");
  ExpectBinary(t, Dec(32768), "008000");
  ExpectBinary(t, Dec(-32768), "8000");
  ExpectBinary(t, Dec(-32769), "ff7fff");
  ExpectBinary(t, Dec(1420), "058c");  // 14.20
  ExpectBinary(t, Dec(-1420), "fa74");
  // The largest and smallest 128-bit values need all 16 bytes.
  const __int128 max = static_cast<__int128>(~static_cast<unsigned __int128>(0) >> 1);
  ExpectBinary(t, Dec(max), "7fffffffffffffffffffffffffffffff");
  ExpectBinary(t, Dec(-max - 1), "80000000000000000000000000000000");
  // 10^38 - 1, the largest decimal(38, s) unscaled value.
  __int128 big = 1;
  for (int i = 0; i < 38; ++i) big *= 10;
  ExpectBinary(t, Dec(big - 1), "4b3b4ca85a86c47a098a223fffffffff");
  ExpectBinary(t, Dec(-(big - 1)), "b4c4b357a5793b85f675ddc000000001");
}

TEST(LiteralBinaryTest, DecimalReadsPaddedAndRejectsOversizedValues) {
  const auto t = Type::Decimal(9, 2);
  // Fixed-width (padded) encodings, as Parquet stores them, decode to the same values.
  ASSERT_OK_AND_ASSIGN(auto padded, Literal::FromBytes(*t, Hex("0000007f")));
  EXPECT_EQ(padded, Dec(127));
  ASSERT_OK_AND_ASSIGN(auto padded_neg, Literal::FromBytes(*t, Hex("ffffff80")));
  EXPECT_EQ(padded_neg, Dec(-128));
  EXPECT_ERROR(Literal::FromBytes(*t, ""), ErrorKind::kCorrupt, "decimal");
  EXPECT_ERROR(Literal::FromBytes(*t, std::string(17, '\x01')), ErrorKind::kCorrupt, "17");
}

TEST(LiteralBinaryTest, RandomDecimalsRoundTripWithMinimalLength) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 5000; ++i) {
    const int bits = static_cast<int>(rng() % 127) + 1;
    __int128 v = static_cast<__int128>((static_cast<unsigned __int128>(rng()) << 64) | rng());
    v >>= (127 - bits);  // arithmetic shift: random magnitude and sign
    ASSERT_OK_AND_ASSIGN(auto bytes, Dec(v).ToBytes(*Type::Decimal(38, 0)));
    ASSERT_OK_AND_ASSIGN(auto back, Literal::FromBytes(*Type::Decimal(38, 0), bytes));
    ASSERT_EQ(back, Dec(v)) << Int128ToString(v);
    // Minimal: dropping the first byte would change the value (sign bit of the next byte differs or
    // the first byte carries value bits).
    if (bytes.size() > 1) {
      const auto b0 = static_cast<unsigned char>(bytes[0]);
      const auto b1 = static_cast<unsigned char>(bytes[1]);
      ASSERT_FALSE((b0 == 0x00 && b1 < 0x80) || (b0 == 0xff && b1 >= 0x80)) << Int128ToString(v);
    }
  }
}

TEST(LiteralBinaryTest, NullAndMismatchedValuesAreRejected) {
  EXPECT_ERROR(Literal::Null().ToBytes(*Type::Int()), ErrorKind::kInvalidArgument, "null");
  EXPECT_ERROR(Literal(int64_t{1}).ToBytes(*Type::Int()), ErrorKind::kInvalidArgument, "int");
  EXPECT_ERROR(Literal(std::string("x")).ToBytes(*Type::Binary()), ErrorKind::kInvalidArgument, "binary");
  EXPECT_ERROR(Literal::FromBytes(*Type::Variant(), "x"), ErrorKind::kUnsupported, "variant");
}

TEST(LiteralJsonTest, NumbersAndBooleans) {
  ExpectJson(Type::Boolean(), Literal(true), true);
  ExpectJson(Type::Int(), Literal(int32_t{34}), 34);
  ExpectJson(Type::Int(), Literal(std::numeric_limits<int32_t>::min()), std::numeric_limits<int32_t>::min());
  ExpectJson(Type::Long(), Literal(int64_t{34}), 34);
  ExpectJson(Type::Long(), Literal(std::numeric_limits<int64_t>::max()), std::numeric_limits<int64_t>::max());
  ExpectJson(Type::Float(), Literal(1.0f), 1.0);
  ExpectJson(Type::Double(), Literal(-2.5), -2.5);
  // Integers are accepted for floating-point types.
  ASSERT_OK_AND_ASSIGN(auto d, Literal::FromJson(*Type::Double(), 3));
  EXPECT_EQ(d, Literal(3.0));
}

TEST(LiteralJsonTest, OutOfRangeIntegersAreRejectedNotWrapped) {
  EXPECT_ERROR(Literal::FromJson(*Type::Int(), nlohmann::json(int64_t{1} << 31)), ErrorKind::kInvalidArgument,
               "2147483648");
  EXPECT_ERROR(Literal::FromJson(*Type::Int(), nlohmann::json(-(int64_t{1} << 31) - 1)),
               ErrorKind::kInvalidArgument, "-2147483649");
  EXPECT_ERROR(Literal::FromJson(*Type::Long(), nlohmann::json(uint64_t{1} << 63)), ErrorKind::kInvalidArgument,
               "9223372036854775808");
  EXPECT_ERROR(Literal::FromJson(*Type::Int(), 1.5), ErrorKind::kInvalidArgument, "1.5");
  EXPECT_ERROR(Literal::FromJson(*Type::Long(), "34"), ErrorKind::kInvalidArgument, "long");
  EXPECT_ERROR(Literal::FromJson(*Type::Boolean(), 1), ErrorKind::kInvalidArgument, "boolean");
}

TEST(LiteralJsonTest, DecimalsKeepTheirScale) {
  ExpectJson(Type::Decimal(9, 2), Dec(1420), "14.20");
  ExpectJson(Type::Decimal(9, 2), Dec(-1420), "-14.20");
  ExpectJson(Type::Decimal(9, 2), Dec(-5), "-0.05");
  ExpectJson(Type::Decimal(9, 2), Dec(5), "0.05");
  ExpectJson(Type::Decimal(9, 2), Dec(0), "0.00");
  ExpectJson(Type::Decimal(9, 0), Dec(-129), "-129");
  ExpectJson(Type::Decimal(38, 10), Dec(-123456789), "-0.0123456789");
  __int128 big = 1;
  for (int i = 0; i < 38; ++i) big *= 10;
  ExpectJson(Type::Decimal(38, 0), Dec(big - 1), std::string(38, '9'));
  ExpectJson(Type::Decimal(38, 38), Dec(-(big - 1)), "-0." + std::string(38, '9'));
}

TEST(LiteralJsonTest, DecimalParsing) {
  const auto t = Type::Decimal(9, 2);
  ASSERT_OK_AND_ASSIGN(auto short_scale, Literal::FromJson(*t, "14.2"));
  EXPECT_EQ(short_scale, Dec(1420));
  ASSERT_OK_AND_ASSIGN(auto trailing, Literal::FromJson(*t, "14.200"));
  EXPECT_EQ(trailing, Dec(1420));
  ASSERT_OK_AND_ASSIGN(auto integer, Literal::FromJson(*t, "-3"));
  EXPECT_EQ(integer, Dec(-300));
  ASSERT_OK_AND_ASSIGN(auto plus, Literal::FromJson(*t, "+0.5"));
  EXPECT_EQ(plus, Dec(50));
  // Scientific notation, as Python's str(Decimal) writes small values (pyiceberg defaults).
  const auto t10 = Type::Decimal(38, 10);
  ASSERT_OK_AND_ASSIGN(auto sci, Literal::FromJson(*t10, "1E-10"));
  EXPECT_EQ(sci, Dec(1));
  ASSERT_OK_AND_ASSIGN(auto sci_zero, Literal::FromJson(*t10, "0E-10"));
  EXPECT_EQ(sci_zero, Dec(0));
  ASSERT_OK_AND_ASSIGN(auto sci_neg, Literal::FromJson(*t10, "-1.5e-9"));
  EXPECT_EQ(sci_neg, Dec(-15));
  ASSERT_OK_AND_ASSIGN(auto sci_pos, Literal::FromJson(*Type::Decimal(9, 0), "2E+2"));
  EXPECT_EQ(sci_pos, Dec(200));
  ASSERT_OK_AND_ASSIGN(auto sci_frac, Literal::FromJson(*t, "1.5E1"));
  EXPECT_EQ(sci_frac, Dec(1500));
  EXPECT_ERROR(Literal::FromJson(*t10, "1E-11"), ErrorKind::kInvalidArgument, "1E-11");
  EXPECT_ERROR(Literal::FromJson(*t10, "1E+40"), ErrorKind::kInvalidArgument, "1E+40");
  EXPECT_ERROR(Literal::FromJson(*t10, "1E"), ErrorKind::kInvalidArgument, "'1E'");
  // Values that need rounding, or that are not decimals, are errors.
  EXPECT_ERROR(Literal::FromJson(*t, "14.201"), ErrorKind::kInvalidArgument, "14.201");
  EXPECT_ERROR(Literal::FromJson(*t, "abc"), ErrorKind::kInvalidArgument, "abc");
  EXPECT_ERROR(Literal::FromJson(*t, "."), ErrorKind::kInvalidArgument, "'.'");
  EXPECT_ERROR(Literal::FromJson(*t, 14.2), ErrorKind::kInvalidArgument, "decimal(9, 2)");
  EXPECT_ERROR(Literal::FromJson(*Type::Decimal(38, 0), std::string(39, '1')), ErrorKind::kInvalidArgument,
               "38 digits");
}

TEST(LiteralJsonTest, Dates) {
  ExpectJson(Type::Date(), Literal(int32_t{17486}), "2017-11-16");
  ExpectJson(Type::Date(), Literal(int32_t{0}), "1970-01-01");
  ExpectJson(Type::Date(), Literal(int32_t{-1}), "1969-12-31");
  ExpectJson(Type::Date(), Literal(int32_t{-25508}), "1900-03-01");
  ExpectJson(Type::Date(), Literal(int32_t{-719162}), "0001-01-01");
  ExpectJson(Type::Date(), Literal(int32_t{11016}), "2000-02-29");
  ExpectJson(Type::Date(), Literal(int32_t{2932896}), "9999-12-31");
  ExpectJson(Type::Date(), Literal(int32_t{-141438}), "1582-10-04");  // proleptic Gregorian
  // Years outside 0000..9999 carry a sign, as Java's LocalDate writes them, and read back.
  ExpectJson(Type::Date(), Literal(int32_t{2932897}), "+10000-01-01");
  ExpectJson(Type::Date(), Literal(int32_t{-719528}), "0000-01-01");
  ExpectJson(Type::Date(), Literal(int32_t{-719529}), "-0001-12-31");
  EXPECT_ERROR(Literal::FromJson(*Type::Date(), "2017-02-30"), ErrorKind::kInvalidArgument, "2017-02-30");
  EXPECT_ERROR(Literal::FromJson(*Type::Date(), "2017-13-01"), ErrorKind::kInvalidArgument, "2017-13-01");
  EXPECT_ERROR(Literal::FromJson(*Type::Date(), "2017-11-16T00:00:00"), ErrorKind::kInvalidArgument, "date");
  EXPECT_ERROR(Literal::FromJson(*Type::Date(), "99999999999999999999-01-01"), ErrorKind::kInvalidArgument,
               "99999999999999999999");
}

TEST(LiteralJsonTest, Times) {
  ExpectJson(Type::Time(), Literal(int64_t{81068123456}), "22:31:08.123456");
  ExpectJson(Type::Time(), Literal(int64_t{81068000000}), "22:31:08");
  ExpectJson(Type::Time(), Literal(int64_t{0}), "00:00:00");
  ExpectJson(Type::Time(), Literal(int64_t{86399999999}), "23:59:59.999999");
  ExpectJson(Type::Time(), Literal(int64_t{81068100000}), "22:31:08.1");
  ASSERT_OK_AND_ASSIGN(auto padded, Literal::FromJson(*Type::Time(), "22:31:08.123456000"));
  EXPECT_EQ(padded, Literal(int64_t{81068123456}));
  EXPECT_ERROR(Literal::FromJson(*Type::Time(), "22:31:08.1234567"), ErrorKind::kInvalidArgument, "22:31:08.1234567");
  EXPECT_ERROR(Literal::FromJson(*Type::Time(), "24:00:00"), ErrorKind::kInvalidArgument, "24:00:00");
}

TEST(LiteralJsonTest, Timestamps) {
  ExpectJson(Type::Timestamp(), Literal(int64_t{1510871468123456}), "2017-11-16T22:31:08.123456");
  ExpectJson(Type::TimestampTz(), Literal(int64_t{1510871468123456}), "2017-11-16T22:31:08.123456+00:00");
  ExpectJson(Type::Timestamp(), Literal(int64_t{0}), "1970-01-01T00:00:00");
  // Before 1970 the fraction counts forward from the (earlier) whole second.
  ExpectJson(Type::Timestamp(), Literal(int64_t{-1}), "1969-12-31T23:59:59.999999");
  ExpectJson(Type::TimestampTz(), Literal(int64_t{-2208988800000000}), "1900-01-01T00:00:00+00:00");
  ExpectJson(Type::Timestamp(), Literal(int64_t{-2208988800000000 - 500000}), "1899-12-31T23:59:59.5");
  ExpectJson(Type::TimestampNs(), Literal(int64_t{1510871468123456789}), "2017-11-16T22:31:08.123456789");
  ExpectJson(Type::TimestampTzNs(), Literal(int64_t{1510871468123456789}), "2017-11-16T22:31:08.123456789+00:00");
  ExpectJson(Type::TimestampNs(), Literal(int64_t{-1}), "1969-12-31T23:59:59.999999999");
  ExpectJson(Type::TimestampTzNs(), Literal(int64_t{-1000000001}), "1969-12-31T23:59:58.999999999+00:00");
}

TEST(LiteralJsonTest, TimestampParsingAcceptsOffsetsAndSpaces) {
  // The spec's Appendix B example: 2017-11-16T14:31:08-08:00 is 22:31:08 UTC.
  ASSERT_OK_AND_ASSIGN(auto offset, Literal::FromJson(*Type::TimestampTz(), "2017-11-16T14:31:08.123456-08:00"));
  EXPECT_EQ(offset, Literal(int64_t{1510871468123456}));
  ASSERT_OK_AND_ASSIGN(auto zulu, Literal::FromJson(*Type::TimestampTz(), "2017-11-16T22:31:08.123456Z"));
  EXPECT_EQ(zulu, Literal(int64_t{1510871468123456}));
  ASSERT_OK_AND_ASSIGN(auto space, Literal::FromJson(*Type::Timestamp(), "2017-11-16 22:31:08.123456"));
  EXPECT_EQ(space, Literal(int64_t{1510871468123456}));
  ASSERT_OK_AND_ASSIGN(auto date_only, Literal::FromJson(*Type::Timestamp(), "1969-12-31"));
  EXPECT_EQ(date_only, Literal(int64_t{-86400000000}));
  ASSERT_OK_AND_ASSIGN(auto ns_offset,
                       Literal::FromJson(*Type::TimestampTzNs(), "2017-11-16T14:31:08.000001001-08:00"));
  EXPECT_EQ(ns_offset, Literal(int64_t{1510871468000001001}));
  ASSERT_OK_AND_ASSIGN(auto plus, Literal::FromJson(*Type::TimestampTz(), "2017-11-17T00:01:08+01:30"));
  EXPECT_EQ(plus, Literal(int64_t{1510871468000000}));
  EXPECT_ERROR(Literal::FromJson(*Type::Timestamp(), "2017-11-16T22:31:08.1234567"), ErrorKind::kInvalidArgument,
               "2017-11-16T22:31:08.1234567");
  EXPECT_ERROR(Literal::FromJson(*Type::Timestamp(), "yesterday"), ErrorKind::kInvalidArgument, "yesterday");
}

TEST(LiteralJsonTest, StringsUuidsAndBytes) {
  ExpectJson(Type::String(), Literal(std::string("iceberg")), "iceberg");
  ExpectJson(Type::String(), Literal(std::string("\xe6\x97\xa5\xe6\x9c\xac")), "\xe6\x97\xa5\xe6\x9c\xac");
  ExpectJson(Type::Uuid(), B(Hex("f79c3e09677c4bbda4793f349cb785e7")), "f79c3e09-677c-4bbd-a479-3f349cb785e7");
  ASSERT_OK_AND_ASSIGN(auto upper, Literal::FromJson(*Type::Uuid(), "F79C3E09-677C-4BBD-A479-3F349CB785E7"));
  EXPECT_EQ(upper, B(Hex("f79c3e09677c4bbda4793f349cb785e7")));
  ExpectJson(Type::Fixed(4), B(Hex("000102ff")), "000102ff");
  ExpectJson(Type::Binary(), B(Hex("000102ff")), "000102ff");
  ExpectJson(Type::Binary(), B(""), "");
  EXPECT_ERROR(Literal::FromJson(*Type::Uuid(), "not-a-uuid"), ErrorKind::kInvalidArgument, "not-a-uuid");
  EXPECT_ERROR(Literal::FromJson(*Type::Binary(), "abc"), ErrorKind::kInvalidArgument, "abc");
  EXPECT_ERROR(Literal::FromJson(*Type::Binary(), "zz"), ErrorKind::kInvalidArgument, "zz");
}

TEST(LiteralJsonTest, NullIsNullForEveryType) {
  for (const auto& t : {Type::Int(), Type::String(), Type::Decimal(9, 2), Type::Uuid()}) {
    ASSERT_OK_AND_ASSIGN(auto j, Literal::Null().ToJson(*t));
    EXPECT_TRUE(j.is_null());
    ASSERT_OK_AND_ASSIGN(auto lit, Literal::FromJson(*t, nullptr));
    EXPECT_TRUE(lit.is_null());
  }
}

TEST(LiteralTest, CompareOrdersNullsFirstAndBytesUnsigned) {
  EXPECT_LT(Literal::Null().Compare(Literal(int32_t{-5})), 0);
  EXPECT_GT(Literal(int32_t{-5}).Compare(Literal::Null()), 0);
  EXPECT_EQ(Literal::Null().Compare(Literal::Null()), 0);
  EXPECT_LT(Literal(int64_t{-2}).Compare(Literal(int64_t{1})), 0);
  EXPECT_LT(Dec(-129).Compare(Dec(-128)), 0);
  // Binary compares as unsigned bytes: 0x7f < 0x80.
  EXPECT_LT(B("\x7f").Compare(B("\x80")), 0);
  EXPECT_LT(B("a").Compare(B("ab")), 0);
  // UTF-8 byte order is code point order: U+00E9 sorts after 'z'.
  EXPECT_GT(Literal(std::string("\xc3\xa9")).Compare(Literal(std::string("z"))), 0);
  EXPECT_EQ(Literal(1.5).Compare(Literal(1.5)), 0);
}

TEST(LiteralTest, ToStringIsHumanReadable) {
  EXPECT_EQ(Literal(true).ToString(*Type::Boolean()), "true");
  EXPECT_EQ(Literal(int32_t{-7}).ToString(*Type::Int()), "-7");
  EXPECT_EQ(Dec(-5).ToString(*Type::Decimal(9, 2)), "-0.05");
  EXPECT_EQ(Literal(int32_t{17486}).ToString(*Type::Date()), "2017-11-16");
  EXPECT_EQ(B("\x01\xab").ToString(*Type::Binary()), "01ab");
  EXPECT_EQ(Literal::Null().ToString(*Type::Int()), "null");
  EXPECT_EQ(Literal(int64_t{1}).ToString(*Type::Int()), "<mismatched value>");
}

TEST(LiteralTest, MatchesType) {
  EXPECT_TRUE(LiteralMatchesType(Literal(int32_t{1}), *Type::Date()));
  EXPECT_FALSE(LiteralMatchesType(Literal(int32_t{1}), *Type::Long()));
  EXPECT_TRUE(LiteralMatchesType(Literal(int64_t{1}), *Type::TimestampTzNs()));
  EXPECT_TRUE(LiteralMatchesType(B("x"), *Type::Uuid()));
  EXPECT_FALSE(LiteralMatchesType(Literal(std::string("x")), *Type::Binary()));
  EXPECT_TRUE(LiteralMatchesType(Dec(1), *Type::Decimal(3, 1)));
  EXPECT_TRUE(LiteralMatchesType(Literal::Null(), *Type::Struct({})));
  EXPECT_FALSE(LiteralMatchesType(Literal(int32_t{1}), *Type::Struct({})));
}

TEST(TextHelpersTest, DecimalFormatting) {
  EXPECT_EQ(FormatDecimal(0, 0), "0");
  EXPECT_EQ(FormatDecimal(-1, 0), "-1");
  EXPECT_EQ(FormatDecimal(1, 3), "0.001");
  EXPECT_EQ(FormatDecimal(-1000, 3), "-1.000");
  EXPECT_EQ(FormatDecimal(123456, 2), "1234.56");
  const __int128 max = static_cast<__int128>(~static_cast<unsigned __int128>(0) >> 1);
  EXPECT_EQ(Int128ToString(-max - 1), "-170141183460469231731687303715884105728");
  EXPECT_EQ(Int128ToString(max), "170141183460469231731687303715884105727");
  ASSERT_OK_AND_ASSIGN(auto v, ParseDecimal("-0.001", 3));
  EXPECT_EQ(Int128ToString(v), "-1");
}

TEST(TextHelpersTest, UuidFormatting) {
  EXPECT_EQ(FormatUuid(Hex("f79c3e09677c4bbda4793f349cb785e7")), "f79c3e09-677c-4bbd-a479-3f349cb785e7");
  ASSERT_OK_AND_ASSIGN(auto raw, ParseUuid("f79c3e09677c4bbda4793f349cb785e7"));
  EXPECT_EQ(raw, Hex("f79c3e09677c4bbda4793f349cb785e7"));
  EXPECT_ERROR(ParseUuid("f79c3e09-677c-4bbd-a479"), ErrorKind::kInvalidArgument, "f79c3e09-677c-4bbd-a479");
}

// An independent day counter: whole years, then months, from 1970-01-01.
int64_t NaiveDays(int64_t y, unsigned m, unsigned d) {
  auto leap = [](int64_t yr) { return (yr % 4 == 0 && yr % 100 != 0) || yr % 400 == 0; };
  static const int kMonth[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int64_t days = 0;
  for (int64_t yr = 1970; yr < y; ++yr) days += leap(yr) ? 366 : 365;
  for (int64_t yr = y; yr < 1970; ++yr) days -= leap(yr) ? 366 : 365;
  for (unsigned mo = 1; mo < m; ++mo) days += kMonth[mo - 1] + (mo == 2 && leap(y) ? 1 : 0);
  return days + d - 1;
}

TEST(TextHelpersTest, CivilCalendarAgreesWithANaiveCount) {
  for (int64_t y : {-400, -1, 0, 1, 1582, 1600, 1899, 1900, 1969, 1970, 1971, 2000, 2024, 2100, 9999, 10000}) {
    for (unsigned m = 1; m <= 12; ++m) {
      for (unsigned d : {1u, 15u, 28u}) {
        const int64_t days = DaysFromCivil(y, m, d);
        ASSERT_EQ(days, NaiveDays(y, m, d)) << y << "-" << m << "-" << d;
        int64_t y2;
        unsigned m2, d2;
        CivilFromDays(days, y2, m2, d2);
        ASSERT_EQ(y2, y);
        ASSERT_EQ(m2, m);
        ASSERT_EQ(d2, d);
        // And the JSON text form reads back.
        ASSERT_OK_AND_ASSIGN(auto parsed, ParseDate(FormatDate(static_cast<int32_t>(days))));
        ASSERT_EQ(parsed, days) << FormatDate(static_cast<int32_t>(days));
      }
    }
  }
}

TEST(TextHelpersTest, RandomTimestampsRoundTripThroughText) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    // Years 1..9999 in micros; any int64 fits the nanosecond type's range (1677..2262).
    const int64_t micros = static_cast<int64_t>(rng() % 315537897600000000ULL) - 62135596800000000LL;
    ASSERT_OK_AND_ASSIGN(auto back, ParseTimestamp(FormatTimestamp(micros, false, true), false));
    ASSERT_EQ(back, micros) << FormatTimestamp(micros, false, true);
    const auto nanos = static_cast<int64_t>(rng());
    ASSERT_OK_AND_ASSIGN(auto back_ns, ParseTimestamp(FormatTimestamp(nanos, true, false), true));
    ASSERT_EQ(back_ns, nanos) << FormatTimestamp(nanos, true, false);
  }
}

}  // namespace
}  // namespace lakesync::iceberg
