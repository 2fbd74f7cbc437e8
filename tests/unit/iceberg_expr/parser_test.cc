// Parser tests. Expected trees follow the grammar in parser.h (SQL precedence NOT > AND > OR); every
// error path is checked with the text it must name.
#include "lakesync/iceberg/expr/parser.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace lakesync::iceberg {
namespace {

using testing::ErrorOf;
using Kind = UnboundLiteral::Kind;

Expr MustParse(const std::string& text) {
  auto e = ParseFilter(text);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status().ToString();
  return e.ok() ? *e : Expr::AlwaysFalse();
}

std::string ParseError(const std::string& text) {
  auto e = ParseFilter(text);
  EXPECT_FALSE(e.ok()) << text << " parsed as " << (e.ok() ? e->ToString() : "");
  if (!e.ok()) {
    EXPECT_EQ(KindOf(e.status()), ErrorKind::kInvalidArgument) << text;
  }
  return ErrorOf(e);
}

TEST(ParserTest, NotBindsTighterThanAndWhichBindsTighterThanOr) {
  Expr e = MustParse("a = 1 OR b = 2 AND NOT c = 3");
  ASSERT_EQ(e.op(), Operation::kOr);
  EXPECT_EQ(e.left().op(), Operation::kEq);
  EXPECT_EQ(e.left().ColumnName(), "a");
  ASSERT_EQ(e.right().op(), Operation::kAnd);
  EXPECT_EQ(e.right().left().ColumnName(), "b");
  ASSERT_EQ(e.right().right().op(), Operation::kNot);
  EXPECT_EQ(e.right().right().child().ColumnName(), "c");

  Expr n = MustParse("NOT a = 1 AND b = 2");
  ASSERT_EQ(n.op(), Operation::kAnd);
  EXPECT_EQ(n.left().op(), Operation::kNot);
  EXPECT_EQ(n.right().op(), Operation::kEq);
}

TEST(ParserTest, AndAndOrAreLeftAssociative) {
  Expr e = MustParse("a = 1 AND b = 2 AND c = 3");
  ASSERT_EQ(e.op(), Operation::kAnd);
  ASSERT_EQ(e.left().op(), Operation::kAnd);
  EXPECT_EQ(e.right().ColumnName(), "c");
  Expr o = MustParse("a = 1 OR b = 2 OR c = 3");
  ASSERT_EQ(o.op(), Operation::kOr);
  EXPECT_EQ(o.left().op(), Operation::kOr);
}

TEST(ParserTest, ParenthesesOverridePrecedence) {
  Expr e = MustParse("(a = 1 OR b = 2) AND c = 3");
  ASSERT_EQ(e.op(), Operation::kAnd);
  EXPECT_EQ(e.left().op(), Operation::kOr);
  Expr n = MustParse("NOT (a = 1 OR b = 2)");
  ASSERT_EQ(n.op(), Operation::kNot);
  EXPECT_EQ(n.child().op(), Operation::kOr);
  Expr deep = MustParse("((((a = 1))))");
  EXPECT_EQ(deep.op(), Operation::kEq);
}

TEST(ParserTest, KeywordsAreCaseInsensitive) {
  Expr e = MustParse("a = 1 and b is not null Or not c In (1) aNd d bEtWeEn 1 AnD 2 or e LiKe 'x%'");
  EXPECT_EQ(e.op(), Operation::kOr);
  EXPECT_EQ(e.ToString(),
            "a = 1 AND b IS NOT NULL OR NOT (c IN (1)) AND d >= 1 AND d <= 2 OR e LIKE 'x%'");
}

TEST(ParserTest, EveryComparisonOperator) {
  const std::vector<std::pair<std::string, Operation>> cases = {
      {"=", Operation::kEq},   {"==", Operation::kEq},  {"!=", Operation::kNotEq}, {"<>", Operation::kNotEq},
      {"<", Operation::kLt},   {"<=", Operation::kLtEq}, {">", Operation::kGt},     {">=", Operation::kGtEq},
  };
  for (const auto& [symbol, op] : cases) {
    Expr e = MustParse("x " + symbol + " 7");
    EXPECT_EQ(e.op(), op) << symbol;
    ASSERT_EQ(e.literals().size(), 1u);
    EXPECT_EQ(e.literals()[0], UnboundLiteral::Integer("7"));
    // Without spaces too.
    EXPECT_EQ(MustParse("x" + symbol + "7").op(), op) << symbol;
  }
}

TEST(ParserTest, ValueFirstComparisonsAreFlipped) {
  EXPECT_EQ(MustParse("5 < id").ToString(), "id > 5");
  EXPECT_EQ(MustParse("5 <= id").ToString(), "id >= 5");
  EXPECT_EQ(MustParse("5 > id").ToString(), "id < 5");
  EXPECT_EQ(MustParse("5 >= id").ToString(), "id <= 5");
  EXPECT_EQ(MustParse("'x' = s").ToString(), "s = 'x'");
  EXPECT_EQ(MustParse("'x' <> s").ToString(), "s != 'x'");
  EXPECT_EQ(MustParse("TRUE = flag").ToString(), "flag = TRUE");
}

TEST(ParserTest, NullAndNanChecks) {
  EXPECT_EQ(MustParse("a IS NULL").op(), Operation::kIsNull);
  EXPECT_EQ(MustParse("a IS NOT NULL").op(), Operation::kNotNull);
  EXPECT_EQ(MustParse("a is nan").op(), Operation::kIsNan);
  EXPECT_EQ(MustParse("a IS NOT NAN").op(), Operation::kNotNan);
  EXPECT_TRUE(MustParse("a IS NULL").literals().empty());
}

TEST(ParserTest, InLists) {
  Expr in = MustParse("a IN (1, -2, 'x', 2.5, TRUE, DATE '2024-01-01')");
  ASSERT_EQ(in.op(), Operation::kIn);
  ASSERT_EQ(in.literals().size(), 6u);
  EXPECT_EQ(in.literals()[1], UnboundLiteral::Integer("-2"));
  EXPECT_EQ(in.literals()[2], UnboundLiteral::String("x"));
  EXPECT_EQ(in.literals()[3].kind, Kind::kDecimal);
  EXPECT_EQ(in.literals()[4], UnboundLiteral::Boolean(true));
  EXPECT_EQ(in.literals()[5].kind, Kind::kDate);
  Expr not_in = MustParse("a NOT IN (1)");
  EXPECT_EQ(not_in.op(), Operation::kNotIn);
  EXPECT_EQ(not_in.literals().size(), 1u);
}

TEST(ParserTest, BetweenIsAnInclusiveRange) {
  Expr e = MustParse("a BETWEEN 1 AND 5 AND b = 2");
  ASSERT_EQ(e.op(), Operation::kAnd);
  EXPECT_EQ(e.ToString(), "a >= 1 AND a <= 5 AND b = 2");
  Expr n = MustParse("a NOT BETWEEN 1 AND 5");
  ASSERT_EQ(n.op(), Operation::kNot);
  EXPECT_EQ(n.ToString(), "NOT (a >= 1 AND a <= 5)");
}

TEST(ParserTest, LikePrefixPatterns) {
  Expr sw = MustParse("s LIKE 'abc%'");
  EXPECT_EQ(sw.op(), Operation::kStartsWith);
  EXPECT_EQ(sw.literals()[0].text, "abc");
  Expr nsw = MustParse("s NOT LIKE 'abc%'");
  EXPECT_EQ(nsw.op(), Operation::kNotStartsWith);
  Expr exact = MustParse("s LIKE 'abc'");
  EXPECT_EQ(exact.op(), Operation::kEq);
  EXPECT_EQ(exact.literals()[0].text, "abc");
  EXPECT_EQ(MustParse("s NOT LIKE 'abc'").op(), Operation::kNotEq);
  Expr all = MustParse("s LIKE '%'");
  EXPECT_EQ(all.op(), Operation::kStartsWith);
  EXPECT_EQ(all.literals()[0].text, "");
  Expr escaped = MustParse(R"(s LIKE 'user\_1\%\\%' ESCAPE '\')");
  EXPECT_EQ(escaped.op(), Operation::kStartsWith);
  EXPECT_EQ(escaped.literals()[0].text, "user_1%\\");
  Expr other_escape = MustParse("s LIKE 'a!%b%' ESCAPE '!'");
  EXPECT_EQ(other_escape.literals()[0].text, "a%b");
  // Rendering escapes wildcards and parses back to the same prefix.
  EXPECT_EQ(MustParse(escaped.ToString()).literals()[0].text, "user_1%\\");
}

TEST(ParserTest, ConstantsAndBooleanColumns) {
  EXPECT_EQ(MustParse("TRUE").op(), Operation::kTrue);
  EXPECT_EQ(MustParse("false").op(), Operation::kFalse);
  EXPECT_EQ(MustParse("TRUE AND a = 1").left().op(), Operation::kTrue);
  Expr flag = MustParse("active");
  EXPECT_EQ(flag.op(), Operation::kEq);
  EXPECT_EQ(flag.literals()[0], UnboundLiteral::Boolean(true));
  EXPECT_EQ(MustParse("active AND NOT deleted OR (archived)").ToString(),
            "active = TRUE AND NOT (deleted = TRUE) OR archived = TRUE");
}

TEST(ParserTest, ColumnReferences) {
  EXPECT_EQ(MustParse("a.b.c = 1").column(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(MustParse("\"weird col\" = 1").column(), (std::vector<std::string>{"weird col"}));
  EXPECT_EQ(MustParse("\"say \"\"hi\"\"\" = 1").column(), (std::vector<std::string>{"say \"hi\""}));
  EXPECT_EQ(MustParse("`back tick` = 1").column(), (std::vector<std::string>{"back tick"}));
  EXPECT_EQ(MustParse("`a``b` = 1").column(), (std::vector<std::string>{"a`b"}));
  EXPECT_EQ(MustParse("\"a.b\".c = 1").column(), (std::vector<std::string>{"a.b", "c"}));
  EXPECT_EQ(MustParse("addr.\"zip code\" IS NULL").column(), (std::vector<std::string>{"addr", "zip code"}));
  EXPECT_EQ(MustParse("_x$1 = 1").column(), (std::vector<std::string>{"_x$1"}));
  // Keywords can be columns when quoted; DATE/TIMESTAMP/NAN are columns unless a string follows.
  EXPECT_EQ(MustParse("\"and\" = 1").column(), (std::vector<std::string>{"and"}));
  EXPECT_EQ(MustParse("date > DATE '2024-01-01'").column(), (std::vector<std::string>{"date"}));
  EXPECT_EQ(MustParse("timestamp IS NULL").column(), (std::vector<std::string>{"timestamp"}));
  EXPECT_EQ(MustParse("nan = 1").column(), (std::vector<std::string>{"nan"}));
}

TEST(ParserTest, Literals) {
  auto lit = [](const std::string& text) { return MustParse("x = " + text).literals().at(0); };
  EXPECT_EQ(lit("42"), (UnboundLiteral{Kind::kInteger, "42"}));
  EXPECT_EQ(lit("-42"), (UnboundLiteral{Kind::kInteger, "-42"}));
  EXPECT_EQ(lit("+42"), (UnboundLiteral{Kind::kInteger, "42"}));
  EXPECT_EQ(lit("- 42"), (UnboundLiteral{Kind::kInteger, "-42"}));
  EXPECT_EQ(lit("1.50"), (UnboundLiteral{Kind::kDecimal, "1.50"}));
  EXPECT_EQ(lit(".5"), (UnboundLiteral{Kind::kDecimal, ".5"}));
  EXPECT_EQ(lit("5."), (UnboundLiteral{Kind::kDecimal, "5."}));
  EXPECT_EQ(lit("1.5e3"), (UnboundLiteral{Kind::kFloat, "1.5e3"}));
  EXPECT_EQ(lit("-2E-3"), (UnboundLiteral{Kind::kFloat, "-2E-3"}));
  EXPECT_EQ(lit("'it''s'"), (UnboundLiteral{Kind::kString, "it's"}));
  EXPECT_EQ(lit("''"), (UnboundLiteral{Kind::kString, ""}));
  EXPECT_EQ(lit("'a \"b\" c'"), (UnboundLiteral{Kind::kString, "a \"b\" c"}));
  EXPECT_EQ(lit("TRUE"), UnboundLiteral::Boolean(true));
  EXPECT_EQ(lit("false"), UnboundLiteral::Boolean(false));
  EXPECT_EQ(lit("DATE '2024-01-01'"), (UnboundLiteral{Kind::kDate, "2024-01-01"}));
  EXPECT_EQ(lit("date '2024-01-01'"), (UnboundLiteral{Kind::kDate, "2024-01-01"}));
  EXPECT_EQ(lit("TIMESTAMP '2024-01-01 10:00:00'"), (UnboundLiteral{Kind::kTimestamp, "2024-01-01 10:00:00"}));
  EXPECT_EQ(lit("TIMESTAMPTZ '2024-01-01 10:00:00+02:00'"),
            (UnboundLiteral{Kind::kTimestampTz, "2024-01-01 10:00:00+02:00"}));
  EXPECT_EQ(lit("(7)"), (UnboundLiteral{Kind::kInteger, "7"}));
  EXPECT_EQ(lit("'Ünïcödé ✓'"), (UnboundLiteral{Kind::kString, "Ünïcödé ✓"}));
}

TEST(ParserTest, RenderingParsesBackToTheSameExpression) {
  const std::vector<std::string> filters = {
      "id > 5 AND status = 'ACTIVE'",
      "(a = 1 OR b != 'x''y') AND NOT (c IS NULL)",
      "\"odd name\".`inner` IN (1, 2.5, -3e2)",
      "s LIKE 'a\\_b%' ESCAPE '\\' OR s NOT LIKE 'c%'",
      "d IS NAN OR d IS NOT NAN AND ts < TIMESTAMP '2024-01-01 00:00:00'",
      "dt BETWEEN DATE '2024-01-01' AND DATE '2024-12-31'",
      "x NOT IN ('a', 'b') AND TRUE OR FALSE",
  };
  for (const auto& f : filters) {
    Expr once = MustParse(f);
    Expr twice = MustParse(once.ToString());
    EXPECT_EQ(once.ToString(), twice.ToString()) << f;
  }
}

TEST(ParserTest, MalformedInputNamesPositionAndToken) {
  EXPECT_EQ(ParseError("a > (1))"),
            "unexpected ')' at position 8 in filter 'a > (1))': expected AND, OR or the end of the filter");
  EXPECT_EQ(ParseError("a >"), "unexpected end of filter 'a >': expected a value after >");
  EXPECT_EQ(ParseError("a = 1 b = 2"),
            "unexpected 'b' at position 7 in filter 'a = 1 b = 2': expected AND, OR or the end of the filter");
  EXPECT_EQ(ParseError("(a = 1"), "unexpected end of filter '(a = 1': expected ')'");
  EXPECT_EQ(ParseError("a = 1 AND"), "unexpected end of filter 'a = 1 AND': expected a column, a value, NOT or '('");
  EXPECT_EQ(ParseError(")"), "unexpected ')' at position 1 in filter ')': expected a column, a value, NOT or '('");
  EXPECT_EQ(ParseError("a IS 5"),
            "unexpected '5' at position 6 in filter 'a IS 5': expected NULL, NOT NULL, NAN or NOT NAN after IS");
  EXPECT_EQ(ParseError("a IS NOT 5"),
            "unexpected '5' at position 10 in filter 'a IS NOT 5': expected NULL or NAN after IS NOT");
  EXPECT_EQ(ParseError("a NOT 5"),
            "unexpected '5' at position 7 in filter 'a NOT 5': expected IN, BETWEEN or LIKE after NOT");
  EXPECT_EQ(ParseError("a 5"),
            "unexpected '5' at position 3 in filter 'a 5': expected a comparison operator, IS, IN, BETWEEN or "
            "LIKE after the column");
  EXPECT_EQ(ParseError("a BETWEEN 1 OR 2"),
            "unexpected 'OR' at position 13 in filter 'a BETWEEN 1 OR 2': expected AND between the BETWEEN bounds");
  EXPECT_EQ(ParseError("a BETWEEN AND 2"),
            "unexpected 'AND' at position 11 in filter 'a BETWEEN AND 2': expected a value after BETWEEN");
  EXPECT_EQ(ParseError("a IN 1"), "unexpected '1' at position 6 in filter 'a IN 1': expected '(' after IN");
  EXPECT_EQ(ParseError("a IN (1 2)"),
            "unexpected '2' at position 9 in filter 'a IN (1 2)': expected ',' or ')' in the IN list");
  EXPECT_EQ(ParseError("a IN ()"), "unexpected ')' at position 7 in filter 'a IN ()': expected a value in the IN list");
  EXPECT_EQ(ParseError("a LIKE 5"),
            "unexpected '5' at position 8 in filter 'a LIKE 5': expected a quoted pattern after LIKE");
  EXPECT_EQ(ParseError("a LIKE 'x%' ESCAPE 'ab'"),
            "unexpected ''ab'' at position 20 in filter 'a LIKE 'x%' ESCAPE 'ab'': expected a single quoted "
            "character after ESCAPE");
  EXPECT_EQ(ParseError("a = -'x'"), "unexpected ''x'' at position 6 in filter 'a = -'x'': expected a number after the sign");
  EXPECT_EQ(ParseError("a. = 1"), "unexpected '=' at position 4 in filter 'a. = 1': expected a nested field name after '.'");
  EXPECT_EQ(ParseError("5 AND a"),
            "unexpected 'AND' at position 3 in filter '5 AND a': expected a comparison operator after the value 5");
  EXPECT_EQ(ParseError("5 = "), "unexpected end of filter '5 = ': expected a column");
  EXPECT_EQ(ParseError("a = (1"), "unexpected end of filter 'a = (1': expected ')' after the value");
}

TEST(ParserTest, LexicalErrors) {
  EXPECT_EQ(ParseError(""), "filter '' is empty");
  EXPECT_EQ(ParseError("   "), "filter '   ' is empty");
  EXPECT_EQ(ParseError("s = 'abc"), "unterminated string starting at position 5 in filter 's = 'abc'");
  EXPECT_EQ(ParseError("\"abc = 1"), "unterminated quoted identifier starting at position 1 in filter '\"abc = 1'");
  EXPECT_EQ(ParseError("`abc = 1"), "unterminated quoted identifier starting at position 1 in filter '`abc = 1'");
  EXPECT_EQ(ParseError("\"\" = 1"), "empty quoted identifier at position 1 in filter '\"\" = 1'");
  EXPECT_EQ(ParseError("a = 1.2.3"), "malformed number '1.2.3' at position 5 in filter 'a = 1.2.3'");
  EXPECT_EQ(ParseError("a = 5abc"), "malformed number '5abc' at position 5 in filter 'a = 5abc'");
  EXPECT_EQ(ParseError("a # 1"), "unexpected character '#' at position 3 in filter 'a # 1'");
  EXPECT_EQ(ParseError("a ! 1"),
            "unexpected '!' at position 3 in filter 'a ! 1': expected a comparison operator (=, !=, <>, <, <=, >, >=)");
}

TEST(ParserTest, UnsupportedConstructsExplainThemselves) {
  EXPECT_EQ(ParseError("a = NULL"),
            "comparing with NULL at position 5 in filter 'a = NULL' is never true: use IS NULL or IS NOT NULL");
  EXPECT_EQ(ParseError("NULL IS NULL"),
            "NULL at position 1 in filter 'NULL IS NULL' can only follow IS: write 'column IS NULL'");
  EXPECT_EQ(ParseError("a IN (1, NULL)"),
            "NULL in the IN list at position 10 in filter 'a IN (1, NULL)' never matches: use IS NULL");
  EXPECT_EQ(ParseError("a = b"),
            "comparing two columns at position 5 in filter 'a = b' is not supported: the right side of = must be a "
            "value");
  EXPECT_EQ(ParseError("1 = 1"),
            "comparison at position 1 in filter '1 = 1' has no column: one side of = must be a column");
  EXPECT_EQ(ParseError("s LIKE '%abc'"),
            "LIKE pattern '%abc' at position 8 in filter 's LIKE '%abc'' is not supported: only prefix patterns such "
            "as 'abc%' are (escape a literal % or _ with ESCAPE)");
  EXPECT_EQ(ParseError("s LIKE 'a_c%'"),
            "LIKE pattern 'a_c%' at position 8 in filter 's LIKE 'a_c%'' is not supported: only prefix patterns such "
            "as 'abc%' are (escape a literal % or _ with ESCAPE)");
  EXPECT_NE(ParseError("s LIKE 'a%c'").find("is not supported"), std::string::npos);
  EXPECT_NE(ParseError("s LIKE 'a%%'").find("is not supported"), std::string::npos);
  EXPECT_EQ(ParseError("s LIKE 'a!b' ESCAPE '!'"),
            "LIKE pattern 'a!b' at position 8 in filter 's LIKE 'a!b' ESCAPE '!'': the escape character must be "
            "followed by %, _ or itself");
  EXPECT_EQ(ParseError("and = 1"),
            "unexpected 'and' at position 1 in filter 'and = 1': expected a column or a value (quote a column named "
            "like a keyword: \"and\")");
}

}  // namespace
}  // namespace lakesync::iceberg
