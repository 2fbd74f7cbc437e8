// Table name templates: syntax checks, placeholders, rendering and the values that cannot name a table.
#include "lakesync/sink/table_template.h"

#include <map>

#include "sink_test_util.h"

namespace lakesync::sink {
namespace {

using testing::ExpectFailure;

PlaceholderLookup From(std::map<std::string, std::string> values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

TEST(TableTemplateTest, IsTemplate) {
  EXPECT_FALSE(IsTemplate("db.orders"));
  EXPECT_TRUE(IsTemplate("db.orders_{region}"));
  EXPECT_TRUE(IsTemplate("db.orders_{region"));  // meant as one, and refused by ValidateTableTemplate
  EXPECT_TRUE(IsTemplate("db.orders_}"));
}

TEST(TableTemplateTest, Placeholders) {
  EXPECT_TRUE(TemplatePlaceholders("db.orders").empty());
  EXPECT_EQ(TemplatePlaceholders("{ns}.t_{a.b}_{c}_{a.b}"), (std::vector<std::string>{"ns", "a.b", "c"}));
  // Documented: for an invalid template, the placeholders read before the error.
  EXPECT_EQ(TemplatePlaceholders("db.{x}_{y"), std::vector<std::string>{"x"});
}

TEST(TableTemplateTest, Validation) {
  ASSERT_OK(ValidateTableTemplate("db.orders"));
  ASSERT_OK(ValidateTableTemplate("a.b.orders"));
  ASSERT_OK(ValidateTableTemplate("dataset.my_{col1}_{col2.nested}_table"));
  ASSERT_OK(ValidateTableTemplate("{ns}.{t}"));
  ASSERT_OK(ValidateTableTemplate("{ns}.{a}{b}"));
  const auto invalid = ErrorKind::kInvalidArgument;
  ExpectFailure(ValidateTableTemplate(""), invalid, {"table must not be empty"});
  ExpectFailure(ValidateTableTemplate("orders"), invalid, {"table 'orders'", "NAMESPACE.TABLE"});
  ExpectFailure(ValidateTableTemplate("{t}"), invalid, {"table '{t}'", "NAMESPACE.TABLE"});
  ExpectFailure(ValidateTableTemplate("db."), invalid, {"table 'db.'"});
  ExpectFailure(ValidateTableTemplate(".t"), invalid, {"table '.t'"});
  ExpectFailure(ValidateTableTemplate("a..t"), invalid, {"table 'a..t'"});
  ExpectFailure(ValidateTableTemplate("db.t_{r"), invalid, {"opened at position 5", "not closed"});
  ExpectFailure(ValidateTableTemplate("db.t_r}"), invalid, {"'}' at position 6", "no matching '{'"});
  ExpectFailure(ValidateTableTemplate("db.t_{}"), invalid, {"empty placeholder", "position 5"});
  ExpectFailure(ValidateTableTemplate("db.t_{a{b}}"), invalid, {"do not nest"});
  ExpectFailure(ValidateTableTemplate("db.t_{.a}"), invalid, {"{.a}", "empty name part"});
  ExpectFailure(ValidateTableTemplate("db.t_{a.}"), invalid, {"{a.}", "empty name part"});
  ExpectFailure(ValidateTableTemplate("db.t_{a b}"), invalid, {"{a b}", "whitespace"});
}

TEST(TableTemplateTest, Render) {
  ASSERT_OK_AND_ASSIGN(std::string name, RenderTableTemplate("db.orders_{region}", From({{"region", "eu"}})));
  EXPECT_EQ(name, "db.orders_eu");
  ASSERT_OK_AND_ASSIGN(name, RenderTableTemplate("{ns}.t_{a.b}_{a.b}", From({{"ns", "sales"}, {"a.b", "7"}})));
  EXPECT_EQ(name, "sales.t_7_7");
  ASSERT_OK_AND_ASSIGN(name, RenderTableTemplate("db.plain", From({})));
  EXPECT_EQ(name, "db.plain");
}

TEST(TableTemplateTest, RenderRefusesValuesThatBreakTheName) {
  const auto invalid = ErrorKind::kInvalidArgument;
  ExpectFailure(RenderTableTemplate("db.t_{r}", From({})), invalid, {"db.t_{r}", "'r'", "null or missing"});
  ExpectFailure(RenderTableTemplate("db.t_{r}", From({{"r", ""}})), invalid, {"'r'", "empty"});
  for (const std::string& bad : std::vector<std::string>{"eu.west", "a/b", "a\\b", "{x}", "a\nb"}) {
    ExpectFailure(RenderTableTemplate("db.t_{r}", From({{"r", bad}})), invalid, {"column 'r'", "table name"}, bad);
  }
  ExpectFailure(RenderTableTemplate("db.t_{r", From({{"r", "x"}})), invalid, {"not closed"});
}

}  // namespace
}  // namespace lakesync::sink
