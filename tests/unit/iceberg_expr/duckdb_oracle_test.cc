// The row filter against an independent SQL engine: data/duckdb_row_filter_cases.json holds random rows
// and random filters with the rows DuckDB 1.5.5 selected for each (see gen_duckdb_cases.py, which
// produced it). lakesync must select exactly the same rows.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "lakesync/iceberg/expr/row_filter.h"
#include "test_support.h"

namespace lakesync::iceberg {
namespace {

using testing::Optional;

const Schema& OracleSchema() {
  static const Schema schema(
      0, {Optional(1, "id", Type::Long()), Optional(2, "i", Type::Int()), Optional(3, "s", Type::String()),
          Optional(4, "dt", Type::Date()), Optional(5, "ts", Type::Timestamp()), Optional(6, "dec", Type::Decimal(9, 2)),
          Optional(7, "b", Type::Boolean()),
          Optional(8, "st", Type::Struct({Optional(9, "x", Type::Int()), Optional(10, "y", Type::String())}))});
  return schema;
}

Literal FromJson(const nlohmann::json& v, TypeId type) {
  if (v.is_null()) return Literal();
  switch (type) {
    case TypeId::kLong: return Literal(v.get<int64_t>());
    case TypeId::kInt: return Literal(v.get<int32_t>());
    case TypeId::kString: return Literal(v.get<std::string>());
    case TypeId::kDate: return Literal(ParseDate(v.get<std::string>()).ValueOrDie());
    case TypeId::kTimestamp: return Literal(ParseTimestamp(v.get<std::string>(), false).ValueOrDie());
    case TypeId::kDecimal: return Literal(Decimal{v.get<int64_t>()});
    case TypeId::kBoolean: return Literal(v.get<bool>());
    default: ADD_FAILURE() << "unexpected type"; return Literal();
  }
}

TEST(DuckDbOracleTest, RowFilterSelectsWhatDuckDbSelects) {
  const std::string path = std::string(LAKESYNC_SOURCE_DIR) + "/tests/unit/iceberg_expr/data/duckdb_row_filter_cases.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot open " << path;
  const auto doc = nlohmann::json::parse(in);

  std::vector<testing::Row> rows;
  for (const auto& r : doc.at("rows")) {
    testing::Row row;
    row.top = {FromJson(r.at("id"), TypeId::kLong), FromJson(r.at("i"), TypeId::kInt),
               FromJson(r.at("s"), TypeId::kString), FromJson(r.at("dt"), TypeId::kDate),
               FromJson(r.at("ts"), TypeId::kTimestamp), FromJson(r.at("dec"), TypeId::kDecimal),
               FromJson(r.at("b"), TypeId::kBoolean), Literal()};
    const auto& st = r.at("st");
    row.struct_valid[8] = !st.is_null();
    row.struct_kids[8] = {st.is_null() ? Literal() : FromJson(st.at("x"), TypeId::kInt),
                          st.is_null() ? Literal() : FromJson(st.at("y"), TypeId::kString)};
    rows.push_back(std::move(row));
  }
  auto batch = testing::MakeBatch(OracleSchema(), rows);

  int checked = 0;
  for (const auto& c : doc.at("cases")) {
    const std::string filter = c.at("filter").get<std::string>();
    std::vector<int64_t> expected = c.at("selected").get<std::vector<int64_t>>();
    auto bound = ParseAndBind(filter, OracleSchema());
    ASSERT_TRUE(bound.ok()) << filter << ": " << bound.status().ToString();
    auto selection = EvaluateRowFilter(*bound, *batch);
    ASSERT_TRUE(selection.ok()) << filter << ": " << selection.status().ToString();
    std::vector<int64_t> actual;
    for (int64_t r = 0; r < (*selection)->length(); ++r) {
      if ((*selection)->Value(r)) actual.push_back(r);
    }
    EXPECT_EQ(actual, expected) << filter << "\nbound: " << bound->ToString();
    ++checked;
  }
  EXPECT_GE(checked, 400);
}

}  // namespace
}  // namespace lakesync::iceberg
