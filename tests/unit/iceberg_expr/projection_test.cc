// Partition projection per transform, and the partition-tuple and manifest-summary evaluators.
// Expected projections follow from the transform definitions in the spec (iceberg.md section 9):
// periods count from 1970-01-01 and floor before it; bucket numbers are the spec's test vectors
// (34 -> hash 2017239379, "iceberg" -> 1210000089) reduced mod N, and bucket[16](35) = 5 as computed
// by pyiceberg 0.12's BucketTransform.
#include "lakesync/iceberg/expr/projection.h"

#include <gtest/gtest.h>

#include "lakesync/iceberg/expr/partition_evaluator.h"
#include "test_support.h"

namespace lakesync::iceberg {
namespace {

using testing::ErrorOf;
using testing::Optional;

const Schema& ProjSchema() {
  static const Schema schema(
      0, {Optional(1, "id", Type::Long()), Optional(2, "i", Type::Int()), Optional(3, "s", Type::String()),
          Optional(4, "dec", Type::Decimal(9, 2)), Optional(5, "dt", Type::Date()), Optional(6, "ts", Type::Timestamp()),
          Optional(7, "tsns", Type::TimestampNs()), Optional(8, "d", Type::Double()), Optional(9, "b", Type::Boolean()),
          Optional(10, "st", Type::Struct({Optional(11, "x", Type::Int())}))});
  return schema;
}

PartitionField Field(int32_t source, int32_t id, std::string name, const std::string& transform) {
  return PartitionField{source, id, std::move(name), Transform::Parse(transform).ValueOrDie()};
}

std::string Project(const std::string& filter, std::vector<PartitionField> fields) {
  PartitionSpec spec(1, std::move(fields));
  auto projected = ProjectInclusive(testing::MustBind(filter, ProjSchema()), spec, ProjSchema());
  EXPECT_TRUE(projected.ok()) << filter << ": " << projected.status().ToString();
  return projected.ok() ? projected->ToString() : "<error>";
}

struct Case {
  std::string filter;
  std::string projected;
};

void ExpectProjections(const PartitionField& field, const std::vector<Case>& cases) {
  for (const auto& c : cases) EXPECT_EQ(Project(c.filter, {field}), c.projected) << c.filter;
}

TEST(ProjectionTest, Identity) {
  ExpectProjections(Field(2, 1000, "i_ident", "identity"),
                    {{"i < 5", "i_ident < 5"},
                     {"i != 5", "i_ident != 5"},
                     {"i IS NULL", "i_ident IS NULL"},
                     {"i IS NOT NULL", "i_ident IS NOT NULL"},
                     {"i IN (2, 1)", "i_ident IN (1, 2)"},
                     {"i NOT IN (1, 2)", "i_ident NOT IN (1, 2)"},
                     {"NOT (i >= 5)", "i_ident < 5"},
                     {"s = 'x'", "TRUE"}});
  ExpectProjections(Field(8, 1000, "d_ident", "identity"),
                    {{"d IS NAN", "d_ident IS NAN"}, {"NOT (d < 1)", "d_ident >= 1 OR d_ident IS NAN"}});
  ExpectProjections(Field(3, 1000, "s_ident", "identity"),
                    {{"s LIKE 'ab%'", "s_ident LIKE 'ab%'"}, {"s NOT LIKE 'ab%'", "s_ident NOT LIKE 'ab%'"}});
  ExpectProjections(Field(11, 1000, "x_ident", "identity"), {{"st.x = 3", "x_ident = 3"}});
}

TEST(ProjectionTest, BucketOnlyProjectsEqualityAndIn) {
  ExpectProjections(Field(1, 1001, "id_bucket", "bucket[16]"),
                    {{"id = 34", "id_bucket = 3"},
                     {"id IN (34, 35)", "id_bucket IN (3, 5)"},
                     {"id IN (34, 34.5)", "id_bucket = 3"},
                     {"id < 5", "TRUE"},
                     {"id >= 5", "TRUE"},
                     {"id != 34", "TRUE"},
                     {"id NOT IN (34)", "TRUE"},
                     {"id IS NULL", "id_bucket IS NULL"},
                     {"id IS NOT NULL", "id_bucket IS NOT NULL"}});
  ExpectProjections(Field(3, 1001, "s_bucket", "bucket[4]"),
                    {{"s = 'iceberg'", "s_bucket = 1"}, {"s LIKE 'ice%'", "TRUE"}});
}

TEST(ProjectionTest, TruncateIntegers) {
  ExpectProjections(Field(2, 1002, "i_trunc", "truncate[10]"),
                    {{"i < 15", "i_trunc <= 10"},
                     {"i <= 15", "i_trunc <= 10"},
                     {"i > 15", "i_trunc >= 10"},
                     {"i >= 15", "i_trunc >= 10"},
                     {"i < 10", "i_trunc <= 0"},
                     {"i > 9", "i_trunc >= 10"},
                     {"i = -1", "i_trunc = -10"},
                     {"i > -1", "i_trunc >= 0"},
                     {"i < 0", "i_trunc <= -10"},
                     {"i <= -10", "i_trunc <= -10"},
                     {"i < -10", "i_trunc <= -20"},
                     {"i IN (1, 15, 23)", "i_trunc IN (0, 10, 20)"},
                     {"i IN (1, 5)", "i_trunc IN (0)"},
                     {"i != 5", "TRUE"},
                     {"i NOT IN (5, 6)", "TRUE"},
                     {"i IS NOT NULL", "i_trunc IS NOT NULL"},
                     {"i < -2147483648", "FALSE"}});
  // Truncating within W of the minimum overflows (as Java's formula does): such ranges keep everything.
  ExpectProjections(Field(1, 1002, "id_trunc", "truncate[10]"),
                    {{"id >= -9223372036854775808", "id_trunc IS NOT NULL"},
                     {"id >= -9223372036854775807", "TRUE"},
                     {"id > -9223372036854775808", "TRUE"},
                     {"id <= -9223372036854775800", "id_trunc <= -9223372036854775800"},
                     {"id >= -9223372036854775798", "id_trunc >= -9223372036854775800"}});
  ExpectProjections(Field(2, 1002, "i_trunc", "truncate[10]"), {{"i >= -2147483647", "TRUE"}});
}

TEST(ProjectionTest, TruncateDecimals) {
  ExpectProjections(Field(4, 1003, "dec_trunc", "truncate[50]"),
                    {{"dec = 10.65", "dec_trunc = 10.50"},
                     {"dec < 10.50", "dec_trunc <= 10.00"},
                     {"dec <= 10.50", "dec_trunc <= 10.50"},
                     {"dec > 10.49", "dec_trunc >= 10.50"},
                     {"dec >= -0.01", "dec_trunc >= -0.50"},
                     {"dec IN (0.49, 0.51)", "dec_trunc IN (0.00, 0.50)"}});
}

TEST(ProjectionTest, TruncateStrings) {
  ExpectProjections(Field(3, 1004, "s_trunc", "truncate[3]"),
                    {{"s = 'abcdef'", "s_trunc = 'abc'"},
                     {"s = 'ab'", "s_trunc = 'ab'"},
                     {"s < 'abcdef'", "s_trunc <= 'abc'"},
                     {"s <= 'ab'", "s_trunc <= 'ab'"},
                     {"s > 'ab'", "s_trunc >= 'ab'"},
                     {"s >= 'abcdef'", "s_trunc >= 'abc'"},
                     {"s IN ('abcd', 'abce', 'x')", "s_trunc IN ('abc', 'x')"},
                     {"s LIKE 'abcdef%'", "s_trunc LIKE 'abc%'"},
                     {"s LIKE 'ab%'", "s_trunc LIKE 'ab%'"},
                     {"s NOT LIKE 'ab%'", "s_trunc NOT LIKE 'ab%'"},
                     {"s NOT LIKE 'abc%'", "s_trunc NOT LIKE 'abc%'"},
                     {"s NOT LIKE 'abcd%'", "TRUE"},
                     {"s != 'abc'", "TRUE"}});
  // Width counts code points, not bytes.
  ExpectProjections(Field(3, 1004, "s_trunc", "truncate[2]"),
                    {{"s = '\xC3\xA9\xC3\xA8x'", "s_trunc = '\xC3\xA9\xC3\xA8'"},
                     {"s NOT LIKE '\xC3\xA9\xC3\xA8%'", "s_trunc NOT LIKE '\xC3\xA9\xC3\xA8%'"}});
}

TEST(ProjectionTest, DayOfTimestamp) {
  ExpectProjections(Field(6, 1005, "ts_day", "day"),
                    {{"ts = '2024-01-01 10:00:00'", "ts_day = '2024-01-01'"},
                     {"ts < '2024-01-01 00:00:00'", "ts_day <= '2023-12-31'"},
                     {"ts <= '2024-01-01 00:00:00'", "ts_day <= '2024-01-01'"},
                     {"ts > '2024-01-01 23:59:59.999999'", "ts_day >= '2024-01-02'"},
                     {"ts > '2024-01-01 00:00:00'", "ts_day >= '2024-01-01'"},
                     {"ts >= '2024-01-01 00:00:00'", "ts_day >= '2024-01-01'"},
                     {"ts >= DATE '2024-01-01'", "ts_day >= '2024-01-01'"},
                     {"ts != '2024-01-01 00:00:00'", "TRUE"},
                     {"ts IS NULL", "ts_day IS NULL"},
                     // Before 1970 the projection also admits the next day (files of truncating writers).
                     {"ts = '1969-12-31 10:00:00'", "ts_day IN ('1969-12-31', '1970-01-01')"},
                     {"ts < '1969-12-31 00:00:00'", "ts_day <= '1969-12-31'"},
                     {"ts < '1970-01-01 00:00:00'", "ts_day <= '1970-01-01'"},
                     {"ts <= '1970-01-01 00:00:00'", "ts_day <= '1970-01-01'"},
                     {"ts >= '1969-12-31 00:00:00'", "ts_day >= '1969-12-31'"},
                     {"ts > '1969-12-30 23:59:59.999999'", "ts_day >= '1969-12-31'"},
                     {"ts IN ('1969-12-30 12:00:00', '2024-01-01 00:00:00')",
                      "ts_day IN ('1969-12-30', '1969-12-31', '2024-01-01')"}});
}

TEST(ProjectionTest, HourMonthYear) {
  ExpectProjections(Field(6, 1006, "ts_hour", "hour"),
                    {{"ts >= '1969-12-31 23:00:00'", "ts_hour >= -1"},
                     {"ts = '1969-12-31 23:59:59'", "ts_hour IN (-1, 0)"},
                     {"ts < '1970-01-01 01:00:00'", "ts_hour <= 0"},
                     {"ts > '1970-01-01 00:59:59.999999'", "ts_hour >= 1"},
                     {"ts = '2024-01-01 10:30:00'", "ts_hour = 473362"}});
  ExpectProjections(Field(5, 1007, "dt_month", "month"),
                    {{"dt = '1969-12-15'", "dt_month IN (-1, 0)"},
                     {"dt < '1970-01-01'", "dt_month <= 0"},
                     {"dt >= '2024-03-01'", "dt_month >= 650"},
                     {"dt <= '2024-02-29'", "dt_month <= 649"},
                     {"dt > '2024-02-29'", "dt_month >= 650"},
                     {"dt < '2024-03-01'", "dt_month <= 649"}});
  ExpectProjections(Field(6, 1008, "ts_year", "year"),
                    {{"ts >= '2024-06-01 00:00:00'", "ts_year >= 54"},
                     {"ts < '2024-01-01 00:00:00'", "ts_year <= 53"},
                     {"ts < '1969-06-01 00:00:00'", "ts_year <= 0"},
                     {"ts = '1950-01-01 00:00:00'", "ts_year IN (-20, -19)"}});
}

TEST(ProjectionTest, DayOfDateIsExact) {
  ExpectProjections(Field(5, 1009, "dt_day", "day"),
                    {{"dt = '1969-12-31'", "dt_day = '1969-12-31'"}, {"dt < '1969-12-31'", "dt_day <= '1969-12-30'"}});
  ExpectProjections(Field(7, 1010, "tsns_day", "day"),
                    {{"tsns = '1970-01-02 00:00:00.000000001'", "tsns_day = '1970-01-02'"},
                     {"tsns < '1970-01-01 00:00:00'", "tsns_day <= '1970-01-01'"}});
}

TEST(ProjectionTest, VoidAndUnknownTransformsKeepEverything) {
  ExpectProjections(Field(9, 1011, "b_void", "void"), {{"b = TRUE", "TRUE"}, {"b IS NULL", "TRUE"}});
  ExpectProjections(Field(2, 1011, "i_odd", "zorder"), {{"i = 1", "TRUE"}});
}

TEST(ProjectionTest, CombinesFieldsAndExpressions) {
  const auto i_trunc = Field(2, 1002, "i_trunc", "truncate[10]");
  const auto ts_day = Field(6, 1005, "ts_day", "day");
  const auto ts_hour = Field(6, 1006, "ts_hour", "hour");
  EXPECT_EQ(Project("i = 15 AND ts >= '2024-01-01 00:00:00'", {i_trunc, ts_day}),
            "i_trunc = 10 AND ts_day >= '2024-01-01'");
  EXPECT_EQ(Project("i = 15 OR s = 'x'", {i_trunc, ts_day}), "TRUE");
  EXPECT_EQ(Project("i = 15 OR i = 33", {i_trunc}), "i_trunc = 10 OR i_trunc = 30");
  EXPECT_EQ(Project("NOT (i >= 15 AND s = 'x')", {i_trunc}), "TRUE");
  EXPECT_EQ(Project("NOT (i >= 15 OR s = 'x')", {i_trunc}), "i_trunc <= 10");
  EXPECT_EQ(Project("ts = '2024-01-01 10:00:00'", {ts_day, ts_hour}), "ts_day = '2024-01-01' AND ts_hour = 473362");
  EXPECT_EQ(Project("i = 5.5", {i_trunc}), "FALSE");
}

TEST(ProjectionTest, MissingSourceIsAnError) {
  PartitionSpec spec(1, {Field(99, 1000, "gone", "identity")});
  BoundExpr filter = testing::MustBind("i = 1", ProjSchema());
  EXPECT_TRUE(ProjectInclusive(filter, spec, ProjSchema()).ok());  // i does not feed it
  BoundReference ref;
  ref.field_id = 99;
  ref.name = "gone";
  ref.type = Type::Int();
  auto pred = BoundExpr::Predicate(Operation::kEq, ref, {Literal(int32_t{1})}).ValueOrDie();
  EXPECT_EQ(ErrorOf(ProjectInclusive(pred, spec, ProjSchema())),
            "partition field 'gone' refers to source id 99, which is not in the schema");
}

// ---- partition tuples ----

TEST(PartitionEvaluatorTest, EvaluatesTuples) {
  PartitionSpec spec(1, {Field(2, 1002, "i_trunc", "truncate[10]"), Field(6, 1005, "ts_day", "day")});
  auto eval = [&](const std::string& filter, std::vector<Literal> tuple) {
    auto ev = PartitionEvaluator::Make(testing::MustBind(filter, ProjSchema()), spec, ProjSchema()).ValueOrDie();
    auto r = ev.MightMatch(tuple);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && *r;
  };
  const std::vector<Literal> p = {Literal(int32_t{10}), Literal(int32_t{19723})};
  EXPECT_TRUE(eval("i = 15", p));
  EXPECT_TRUE(eval("i = 10", p));
  EXPECT_FALSE(eval("i = 25", p));
  EXPECT_FALSE(eval("i = 9", p));
  EXPECT_TRUE(eval("i > 15", p));
  EXPECT_FALSE(eval("i >= 20", p));
  EXPECT_FALSE(eval("i = 15 AND ts >= '2024-01-02 00:00:00'", p));
  EXPECT_TRUE(eval("i = 15 AND ts >= '2024-01-01 23:00:00'", p));
  EXPECT_TRUE(eval("i = 25 OR ts < '2024-01-01 00:00:01'", p));
  EXPECT_FALSE(eval("i IS NULL", p));
  EXPECT_TRUE(eval("i != 15", p));
  const std::vector<Literal> null_i = {Literal(), Literal(int32_t{19723})};
  EXPECT_TRUE(eval("i IS NULL", null_i));
  EXPECT_FALSE(eval("i = 15", null_i));
  EXPECT_FALSE(eval("i IS NOT NULL", null_i));
  EXPECT_FALSE(eval("NOT (i IS NULL)", null_i));
  // != cannot be projected through truncate, so it keeps every partition.
  EXPECT_TRUE(eval("NOT (i = 15)", null_i));
  // A row at 1969-12-31T23:00 belongs to day -1; a truncating writer filed it under day 0.
  EXPECT_TRUE(eval("ts = '1969-12-31 23:00:00'", {Literal(int32_t{0}), Literal(int32_t{-1})}));
  EXPECT_TRUE(eval("ts = '1969-12-31 23:00:00'", {Literal(int32_t{0}), Literal(int32_t{0})}));
  EXPECT_FALSE(eval("ts = '1969-12-31 23:00:00'", {Literal(int32_t{0}), Literal(int32_t{-2})}));
  EXPECT_FALSE(eval("ts = '1969-12-31 23:00:00'", {Literal(int32_t{0}), Literal(int32_t{1})}));

  auto ev = PartitionEvaluator::Make(testing::MustBind("i = 1", ProjSchema()), spec, ProjSchema()).ValueOrDie();
  EXPECT_EQ(ErrorOf(ev.MightMatch({Literal(int32_t{1})})), "partition tuple has 1 values, but the spec has 2 fields");
  EXPECT_EQ(ErrorOf(ev.MightMatch({Literal(std::string("x")), Literal(int32_t{1})})),
            "a value of column 'i_trunc' does not match its type int");
}

TEST(PartitionEvaluatorTest, NaNPartitionValues) {
  PartitionSpec spec(1, {Field(8, 1000, "d_ident", "identity")});
  auto eval = [&](const std::string& filter, double v) {
    auto ev = PartitionEvaluator::Make(testing::MustBind(filter, ProjSchema()), spec, ProjSchema()).ValueOrDie();
    return ev.MightMatch({Literal(v)}).ValueOrDie();
  };
  const double nan = std::nan("");
  EXPECT_TRUE(eval("d IS NAN", nan));
  EXPECT_FALSE(eval("d IS NOT NAN", nan));
  EXPECT_FALSE(eval("d < 5", nan));
  EXPECT_FALSE(eval("d = 5", nan));
  EXPECT_TRUE(eval("d != 5", nan));
  EXPECT_TRUE(eval("NOT (d < 5)", nan));
  EXPECT_FALSE(eval("d IN (1, 2)", nan));
  EXPECT_TRUE(eval("d NOT IN (1, 2)", nan));
  EXPECT_TRUE(eval("d = -0.0", 0.0));
}

// ---- manifest summaries ----

std::string Encoded(const Literal& v, const Type& t) { return v.ToBytes(t).ValueOrDie(); }

class ManifestEvaluatorTest : public ::testing::Test {
 protected:
  ManifestEvaluatorTest()
      : spec_(1, {Field(2, 1000, "i_ident", "identity"), Field(8, 1001, "d_ident", "identity"),
                  Field(3, 1002, "s_ident", "identity")}) {
    i_.lower_bound = Encoded(Literal(int32_t{10}), *Type::Int());
    i_.upper_bound = Encoded(Literal(int32_t{20}), *Type::Int());
    d_.contains_nan = false;
    d_.lower_bound = Encoded(Literal(1.0), *Type::Double());
    d_.upper_bound = Encoded(Literal(2.0), *Type::Double());
    s_.lower_bound = "abc1";
    s_.upper_bound = "abc9";
  }

  bool Might(const std::string& filter) const {
    auto ev = ManifestEvaluator::Make(testing::MustBind(filter, ProjSchema()), spec_, ProjSchema()).ValueOrDie();
    auto r = ev.MightMatch(std::vector<PartitionFieldSummary>{i_, d_, s_});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && *r;
  }

  PartitionSpec spec_;
  PartitionFieldSummary i_, d_, s_;
};

TEST_F(ManifestEvaluatorTest, Ranges) {
  EXPECT_FALSE(Might("i = 5"));
  EXPECT_TRUE(Might("i = 15"));
  EXPECT_FALSE(Might("i < 10"));
  EXPECT_TRUE(Might("i <= 10"));
  EXPECT_FALSE(Might("i > 20"));
  EXPECT_TRUE(Might("i >= 20"));
  EXPECT_FALSE(Might("i IN (1, 21)"));
  EXPECT_TRUE(Might("i IN (1, 15)"));
  EXPECT_TRUE(Might("i != 15"));
  EXPECT_TRUE(Might("i NOT IN (10, 20)"));
  EXPECT_FALSE(Might("i IS NULL"));
  EXPECT_TRUE(Might("i IS NOT NULL"));
  EXPECT_FALSE(Might("i = 5 OR d > 2"));
  EXPECT_TRUE(Might("i = 5 OR d >= 2"));
  // Columns the spec does not cover never exclude.
  EXPECT_TRUE(Might("id = 5"));
}

TEST_F(ManifestEvaluatorTest, AllNullPartitions) {
  i_ = PartitionFieldSummary{};
  i_.contains_null = true;
  EXPECT_TRUE(Might("i IS NULL"));
  EXPECT_FALSE(Might("i IS NOT NULL"));
  EXPECT_FALSE(Might("i = 5"));
  EXPECT_FALSE(Might("i < 5"));
  EXPECT_FALSE(Might("i IN (1, 2)"));
  EXPECT_TRUE(Might("i != 5"));
  // A summary that reports neither values nor nulls proves nothing.
  i_.contains_null = false;
  EXPECT_TRUE(Might("i = 5"));
}

TEST_F(ManifestEvaluatorTest, NaNPartitions) {
  EXPECT_FALSE(Might("d IS NAN"));
  d_ = PartitionFieldSummary{};
  d_.contains_nan = true;  // only NaN values
  EXPECT_FALSE(Might("d IS NOT NAN"));
  EXPECT_FALSE(Might("d = 1"));
  EXPECT_FALSE(Might("d > 0"));
  EXPECT_TRUE(Might("d IS NAN"));
  EXPECT_TRUE(Might("d IS NOT NULL"));
  EXPECT_FALSE(Might("d IS NULL"));
  EXPECT_TRUE(Might("d != 1"));
  d_ = PartitionFieldSummary{};
  d_.contains_null = true;  // nulls, and NaN unknown
  EXPECT_TRUE(Might("d IS NOT NULL"));
  EXPECT_TRUE(Might("d IS NAN"));
  d_.contains_nan = false;  // nulls only
  EXPECT_FALSE(Might("d IS NOT NULL"));
  EXPECT_FALSE(Might("d IS NAN"));
}

TEST_F(ManifestEvaluatorTest, StringPrefixes) {
  EXPECT_FALSE(Might("s NOT LIKE 'abc%'"));
  EXPECT_TRUE(Might("s NOT LIKE 'abc1%'"));
  EXPECT_TRUE(Might("s LIKE 'abc5%'"));
  EXPECT_FALSE(Might("s LIKE 'abd%'"));
  EXPECT_FALSE(Might("s LIKE 'abb%'"));
  s_.contains_null = true;  // nulls do not satisfy NOT LIKE either
  EXPECT_FALSE(Might("s NOT LIKE 'abc%'"));
}

TEST_F(ManifestEvaluatorTest, ManifestsWithoutSummariesAndMismatchedCounts) {
  auto ev = ManifestEvaluator::Make(testing::MustBind("i = 5", ProjSchema()), spec_, ProjSchema()).ValueOrDie();
  ManifestFile m;
  EXPECT_TRUE(ev.MightMatch(m).ValueOrDie());
  m.partitions = {i_, d_, s_};
  EXPECT_FALSE(ev.MightMatch(m).ValueOrDie());
  EXPECT_EQ(ErrorOf(ev.MightMatch(std::vector<PartitionFieldSummary>{i_})),
            "manifest has 1 partition summaries, but its spec has 3 fields");
  // An unpartitioned manifest still honours a constant filter.
  auto never = ManifestEvaluator::Make(testing::MustBind("FALSE", ProjSchema()), PartitionSpec(0, {}), ProjSchema())
                   .ValueOrDie();
  EXPECT_FALSE(never.MightMatch(ManifestFile{}).ValueOrDie());
}

}  // namespace
}  // namespace lakesync::iceberg
