// InclusiveMetricsEvaluator truth tables. The expected answer for each case follows from what the
// metrics promise: every non-null, non-NaN value v of the column satisfies lower <= v <= upper (string
// bounds may be truncated), value counts include nulls and NaNs. "true" means the file may match.
#include "lakesync/iceberg/expr/metrics_evaluator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_support.h"

namespace lakesync::iceberg {
namespace {

using testing::Optional;
using testing::Required;

const Schema& MetricsSchema() {
  static const Schema schema(
      0, {Required(1, "id", Type::Long()), Optional(2, "i", Type::Int()), Optional(3, "d", Type::Double()),
          Optional(4, "s", Type::String()), Optional(5, "all_nulls", Type::String()), Optional(6, "no_stats", Type::Int()),
          Optional(7, "nan_only", Type::Double()), Optional(8, "some_nan", Type::Double()),
          Optional(9, "addr", Type::Struct({Optional(10, "city", Type::String())})), Optional(11, "f", Type::Float()),
          Optional(12, "dt", Type::Date())});
  return schema;
}

template <typename T>
std::string Bytes(T v) {
  return Literal(v).ToBytes(*[] {
    if constexpr (std::is_same_v<T, int32_t>) return Type::Int();
    else if constexpr (std::is_same_v<T, int64_t>) return Type::Long();
    else if constexpr (std::is_same_v<T, float>) return Type::Float();
    else if constexpr (std::is_same_v<T, double>) return Type::Double();
    else return Type::String();
  }()).ValueOrDie();
}

DataFile BaseFile() {
  DataFile f;
  f.file_path = "s3://bucket/t/data/f1.parquet";
  f.record_count = 50;
  f.value_counts = {{1, 50}, {2, 50}, {3, 50}, {4, 50}, {5, 50}, {7, 50}, {8, 50}, {10, 50}, {11, 50}};
  f.null_value_counts = {{1, 0}, {2, 0}, {3, 10}, {4, 0}, {5, 50}, {7, 0}, {8, 5}, {10, 20}, {11, 0}};
  f.nan_value_counts = {{3, 0}, {7, 50}, {8, 10}, {11, 0}};
  f.lower_bounds = {{1, Bytes(int64_t{-100})}, {2, Bytes(int32_t{30})}, {3, Bytes(-1.5)},
                    {4, Bytes(std::string("abc"))}, {8, Bytes(1.0)}, {10, Bytes(std::string("Berlin"))},
                    {11, Bytes(0.5f)}};
  f.upper_bounds = {{1, Bytes(int64_t{100})}, {2, Bytes(int32_t{79})}, {3, Bytes(2.5)},
                    {4, Bytes(std::string("abd"))}, {8, Bytes(5.0)}, {10, Bytes(std::string("Oslo"))},
                    {11, Bytes(1.5f)}};
  return f;
}

bool Might(const std::string& filter, const DataFile& file = BaseFile()) {
  return InclusiveMetricsEvaluator(testing::MustBind(filter, MetricsSchema())).MightMatch(file);
}

struct Case {
  std::string filter;
  bool might;
};

void ExpectAll(const std::vector<Case>& cases, const DataFile& file = BaseFile()) {
  for (const auto& c : cases) EXPECT_EQ(Might(c.filter, file), c.might) << c.filter;
}

TEST(MetricsEvaluatorTest, RecordCount) {
  DataFile empty = BaseFile();
  empty.record_count = 0;
  EXPECT_FALSE(Might("TRUE", empty));
  EXPECT_FALSE(Might("i IS NULL OR i IS NOT NULL", empty));
  DataFile unknown = BaseFile();
  unknown.record_count = -1;
  EXPECT_TRUE(Might("i = 1000", unknown));
  EXPECT_TRUE(Might("TRUE"));
  EXPECT_FALSE(Might("FALSE"));
}

TEST(MetricsEvaluatorTest, IntegerRanges) {
  // i in [30, 79] with no nulls.
  ExpectAll({{"i < 30", false},  {"i < 31", true},   {"i <= 29", false}, {"i <= 30", true},  {"i > 79", false},
             {"i > 78", true},   {"i >= 80", false}, {"i >= 79", true},  {"i = 29", false},  {"i = 30", true},
             {"i = 55", true},   {"i = 79", true},   {"i = 80", false},  {"i != 30", true},  {"i != 1000", true},
             {"i IN (1, 2)", false}, {"i IN (1, 30)", true}, {"i IN (80, 81)", false}, {"i IN (79, 80)", true},
             {"i NOT IN (30, 31)", true}, {"i BETWEEN 10 AND 29", false}, {"i BETWEEN 10 AND 30", true},
             {"i BETWEEN 80 AND 90", false}, {"i NOT BETWEEN 30 AND 79", false}, {"i NOT BETWEEN 31 AND 79", true},
             {"NOT (i < 30)", true}, {"NOT (i >= 30)", false}, {"i < 5.5", false}, {"i > 78.5", true},
             {"i > 79.5", false}, {"id > 100", false}, {"id >= 100", true}, {"id < -100", false}});
}

TEST(MetricsEvaluatorTest, AndOrCombine) {
  ExpectAll({{"i < 30 OR i > 79", false}, {"i < 30 OR i = 40", true}, {"i = 40 AND i = 90", false},
             {"i = 40 AND s = 'abc'", true}, {"i = 40 AND s = 'zzz'", false}, {"NOT (i = 40 AND s = 'zzz')", true}});
}

TEST(MetricsEvaluatorTest, LargeInListsAreNotChecked) {
  std::string far_away = "i IN (";
  for (int v = 1000; v < 1201; ++v) far_away += (v > 1000 ? ", " : "") + std::to_string(v);
  far_away += ")";
  EXPECT_TRUE(Might(far_away));  // 201 values: above the limit, so not checked
  std::string fewer = "i IN (";
  for (int v = 1000; v < 1200; ++v) fewer += (v > 1000 ? ", " : "") + std::to_string(v);
  fewer += ")";
  EXPECT_FALSE(Might(fewer));
}

TEST(MetricsEvaluatorTest, NullCounts) {
  ExpectAll({{"i IS NULL", false}, {"i IS NOT NULL", true}, {"d IS NULL", true}, {"d IS NOT NULL", true},
             {"all_nulls IS NULL", true}, {"all_nulls IS NOT NULL", false}, {"all_nulls = 'x'", false},
             {"all_nulls < 'x'", false}, {"all_nulls IN ('x', 'y')", false}, {"all_nulls LIKE 'a%'", false},
             {"all_nulls NOT LIKE 'a%'", false}, {"all_nulls != 'x'", false}, {"all_nulls NOT IN ('x', 'y')", false},
             {"NOT (all_nulls = 'x')", false}, {"all_nulls = 'x' OR i = 40", true}});
}

TEST(MetricsEvaluatorTest, MissingStatsMeanMaybe) {
  ExpectAll({{"no_stats IS NULL", true}, {"no_stats IS NOT NULL", true}, {"no_stats = 1", true},
             {"no_stats < -1000", true}, {"no_stats IN (1, 2)", true}, {"no_stats != 1", true},
             {"dt = DATE '2024-01-01'", true}});
  // Counts without bounds, bounds without counts.
  DataFile f = BaseFile();
  f.lower_bounds.erase(2);
  EXPECT_TRUE(Might("i < 30", f));
  EXPECT_FALSE(Might("i > 79", f));
  f.upper_bounds.erase(2);
  EXPECT_TRUE(Might("i > 79", f));
  f.null_value_counts.erase(5);
  EXPECT_TRUE(Might("all_nulls = 'x'", f));
  EXPECT_TRUE(Might("all_nulls IS NOT NULL", f));
}

TEST(MetricsEvaluatorTest, NaNCounts) {
  ExpectAll({// 50 NaN values of 50.
             {"nan_only < 5", false}, {"nan_only > 5", false}, {"nan_only = 1", false}, {"nan_only IN (1, 2)", false},
             {"nan_only IS NAN", true}, {"nan_only IS NOT NAN", false}, {"nan_only IS NULL", false},
             {"nan_only IS NOT NULL", true}, {"nan_only != 1", true}, {"NOT (nan_only < 5)", true},
             // d: no NaN, 10 nulls, bounds [-1.5, 2.5].
             {"d IS NAN", false}, {"d IS NOT NAN", true}, {"d < -1.5", false}, {"d <= -1.5", true}, {"d > 2.5", false},
             {"d = 0", true}, {"d = -0.0", true}, {"NOT (d < 5)", false}, {"NOT (d > 5)", true},
             // some_nan: 5 nulls, 10 NaN, bounds [1, 5] over the rest.
             {"some_nan > 0", true}, {"some_nan > 5", false}, {"some_nan IS NAN", true}, {"some_nan IS NOT NAN", true},
             {"NOT (some_nan > 5)", true}});

  DataFile nulls_and_nans;
  nulls_and_nans.record_count = 10;
  nulls_and_nans.value_counts = {{3, 10}};
  nulls_and_nans.null_value_counts = {{3, 4}};
  nulls_and_nans.nan_value_counts = {{3, 6}};
  ExpectAll({{"d > 0", false}, {"d = 1", false}, {"d IS NOT NAN", false}, {"d IS NAN", true}, {"d IS NULL", true},
             {"d IS NOT NULL", true}, {"d != 1", true}},
            nulls_and_nans);
}

TEST(MetricsEvaluatorTest, NaNBoundsAreUnreliable) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  DataFile f = BaseFile();
  f.lower_bounds[3] = Bytes(nan);
  f.upper_bounds[3] = Bytes(nan);
  ExpectAll({{"d < -100", true}, {"d > 100", true}, {"d = 5", true}, {"d IN (100, 200)", true}}, f);
  f.lower_bounds[3] = Bytes(1.0);
  ExpectAll({{"d > 100", true}, {"d < 0", false}, {"d = 0", false}, {"d = 1000", true}}, f);
  f.lower_bounds[3] = Bytes(nan);
  f.upper_bounds[3] = Bytes(1.0);
  ExpectAll({{"d > 100", false}, {"d < -100", true}}, f);
}

TEST(MetricsEvaluatorTest, FloatColumns) {
  ExpectAll({{"f < 0.5", false}, {"f <= 0.5", true}, {"f > 1.5", false}, {"f = 1", true}, {"f IS NAN", false}});
}

TEST(MetricsEvaluatorTest, TruncatedStringBounds) {
  // s bounds "abc" (a prefix of the minimum) and "abd" (a truncated maximum, incremented).
  ExpectAll({{"s = 'abc'", true},         {"s = 'abcz'", true},        {"s = 'abd'", true},
             {"s = 'abda'", false},       {"s = 'abb'", false},        {"s < 'abc'", false},
             {"s <= 'abc'", true},        {"s > 'abd'", false},        {"s >= 'abd'", true},
             {"s > 'abcz'", true},        {"s LIKE 'abc%'", true},     {"s LIKE 'ab%'", true},
             {"s LIKE 'abcd%'", true},    {"s LIKE 'abd%'", true},     {"s LIKE 'abdz%'", false},
             {"s LIKE 'abe%'", false},    {"s LIKE 'aa%'", false},     {"s LIKE 'b%'", false},
             {"s LIKE '%'", true},        {"s LIKE 'a%'", true},       {"s NOT LIKE 'ab%'", false},
             {"s NOT LIKE 'a%'", false},  {"s NOT LIKE 'abc%'", true}, {"s NOT LIKE 'b%'", true},
             {"NOT s LIKE 'ab%'", false}, {"s IN ('aaa', 'abe')", false}, {"s IN ('aaa', 'abcq')", true}});
}

TEST(MetricsEvaluatorTest, MultiByteStringBounds) {
  DataFile f = BaseFile();
  f.lower_bounds[4] = "a\xC3\xA9";  // "aé"
  f.upper_bounds[4] = "a\xC3\xAB";  // "aë"
  ExpectAll({{"s LIKE 'a\xC3\xAA%'", true},    // "aê" lies between
             {"s LIKE 'a\xC3\xAC%'", false},   // "aì" is above
             {"s LIKE 'a\xC3\xA8%'", false},   // "aè" is below
             {"s LIKE 'a%'", true},
             {"s = 'a\xC3\xAA'", true},
             {"s > 'a\xC3\xAB'", false},
             // "a\xC3" cuts a character in half: still a byte prefix of both bounds.
             {"s NOT LIKE 'a'", true}},
            f);
}

TEST(MetricsEvaluatorTest, NestedColumns) {
  ExpectAll({{"addr.city = 'Munich'", true}, {"addr.city = 'Paris'", false}, {"addr.city = 'Zurich'", false}, {"addr.city = 'Amsterdam'", false},
             {"addr.city IS NULL", true}, {"addr.city LIKE 'B%'", true}, {"addr.city LIKE 'A%'", false}});
}

TEST(MetricsEvaluatorTest, UndecodableBoundsAreIgnored) {
  DataFile f = BaseFile();
  f.lower_bounds[2] = std::string("\x01\x02\x03", 3);  // an int bound must be 4 bytes
  EXPECT_TRUE(Might("i < 30", f));
  EXPECT_FALSE(Might("i > 79", f));
  // A long column promoted from int keeps 4-byte bounds, which still decode.
  DataFile promoted = BaseFile();
  promoted.lower_bounds[1] = Bytes(int32_t{-100});
  EXPECT_FALSE(Might("id < -100", promoted));
  EXPECT_TRUE(Might("id <= -100", promoted));
}

TEST(MetricsEvaluatorTest, NotIsPushedDownForHandBuiltExpressions) {
  BoundExpr positive = testing::MustBind("i < 30", MetricsSchema());
  EXPECT_FALSE(InclusiveMetricsEvaluator(positive).MightMatch(BaseFile()));
  // NOT (i < 30) is i >= 30: may match.
  EXPECT_TRUE(InclusiveMetricsEvaluator(BoundExpr::Not(positive)).MightMatch(BaseFile()));
  BoundExpr in_range = testing::MustBind("i >= 30", MetricsSchema());
  EXPECT_FALSE(InclusiveMetricsEvaluator(BoundExpr::Not(in_range)).MightMatch(BaseFile()));
}

}  // namespace
}  // namespace lakesync::iceberg
