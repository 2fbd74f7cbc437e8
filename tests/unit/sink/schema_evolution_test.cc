// schema_evolution: the changes the sink plans from an input schema, and the changes it refuses.
#include "lakesync/sink/schema_evolution.h"

#include <arrow/type.h>

#include "sink_test_util.h"

namespace lakesync::sink {
namespace {

using testing::ExpectFailure;

iceberg::NestedField F(int32_t id, std::string name, bool required, iceberg::TypePtr type) {
  iceberg::NestedField f;
  f.id = id;
  f.name = std::move(name);
  f.required = required;
  f.type = std::move(type);
  return f;
}

// id (key, required long), qty int, price float, amount decimal(9, 2), label string.
iceberg::TableMetadata Table() {
  using iceberg::Type;
  iceberg::TableMetadata m;
  m.last_column_id = 5;
  m.schemas.push_back(std::make_shared<const iceberg::Schema>(
      0,
      std::vector<iceberg::NestedField>{F(1, "id", true, Type::Long()), F(2, "qty", false, Type::Int()),
                                        F(3, "price", false, Type::Float()), F(4, "amount", false, Type::Decimal(9, 2)),
                                        F(5, "label", false, Type::String())},
      std::vector<int32_t>{1}));
  m.partition_specs.push_back(std::make_shared<const iceberg::PartitionSpec>(0, std::vector<iceberg::PartitionField>{}));
  return m;
}

SchemaEvolutionInput What(const arrow::Schema& input) {
  SchemaEvolutionInput w;
  w.table_name = "db.t";
  w.source_name = "delta table /d";
  w.position = "7";
  for (const auto& f : input.fields()) w.input_columns.push_back(f->name());
  w.key_columns = {"id"};
  return w;
}

std::vector<std::string> Said(const std::vector<iceberg::SchemaChange>& changes) {
  std::vector<std::string> out;
  for (const auto& c : changes) out.push_back(c.ToString());
  return out;
}

TEST(SchemaEvolutionTest, SameSchemaOrNarrowerInputChangesNothing) {
  auto input = arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("qty", arrow::int16()),
                              arrow::field("price", arrow::float32()), arrow::field("amount", arrow::decimal128(5, 2)),
                              arrow::field("label", arrow::utf8())});
  ASSERT_OK_AND_ASSIGN(auto changes, PlanSchemaEvolution(Table(), *input, What(*input)));
  EXPECT_TRUE(changes.empty()) << ::testing::PrintToString(Said(changes));
}

TEST(SchemaEvolutionTest, NewColumnsAreAddedAndPromotionsWidened) {
  auto input = arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("qty", arrow::int64()),
                              arrow::field("price", arrow::float64()), arrow::field("amount", arrow::decimal128(12, 2)),
                              arrow::field("label", arrow::utf8()), arrow::field("note", arrow::utf8(), false)});
  ASSERT_OK_AND_ASSIGN(auto changes, PlanSchemaEvolution(Table(), *input, What(*input)));
  EXPECT_EQ(Said(changes), (std::vector<std::string>{"widen column qty to long", "widen column price to double",
                                                     "widen column amount to decimal(12, 2)",
                                                     "add column note (string)"}));
  ASSERT_OK_AND_ASSIGN(auto evolved, iceberg::EvolveSchema(Table(), changes));
  EXPECT_EQ(evolved.schema->FindFieldByName("note")->id, 6);
  EXPECT_FALSE(evolved.schema->FindFieldByName("note")->required);  // even when the input's is not nullable
}

TEST(SchemaEvolutionTest, RenamesAreFollowedNotAdded) {
  auto input = arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("qty", arrow::int32()),
                              arrow::field("price", arrow::float32()), arrow::field("amount", arrow::decimal128(9, 2)),
                              arrow::field("title", arrow::utf8())});
  auto what = What(*input);
  what.renames = {{"label", "title"}};
  ASSERT_OK_AND_ASSIGN(auto changes, PlanSchemaEvolution(Table(), *input, what));
  EXPECT_EQ(Said(changes), (std::vector<std::string>{"rename column label to title"}));
  ASSERT_OK_AND_ASSIGN(auto evolved, iceberg::EvolveSchema(Table(), changes));
  EXPECT_EQ(evolved.schema->FindFieldByName("title")->id, 5);
  // Without the source's word it is a new column (and label stays, null from now on).
  what.renames.clear();
  ASSERT_OK_AND_ASSIGN(auto added, PlanSchemaEvolution(Table(), *input, what));
  EXPECT_EQ(Said(added), (std::vector<std::string>{"add column title (string)"}));
}

TEST(SchemaEvolutionTest, IncompatibleChangesSayWhatChangedAndHowToGoOn) {
  auto with = [](std::shared_ptr<arrow::Field> qty) {
    return arrow::schema({arrow::field("id", arrow::int64(), false), qty, arrow::field("price", arrow::float32()),
                          arrow::field("amount", arrow::decimal128(9, 2)), arrow::field("label", arrow::utf8())});
  };
  for (auto [type, needle] : std::vector<std::pair<std::shared_ptr<arrow::DataType>, std::string>>{
           {arrow::float64(), "column 'qty' changed from int to double"},
           {arrow::decimal128(9, 3), "column 'qty' changed from int to decimal(9, 3)"}}) {
    auto input = with(arrow::field("qty", type));
    ExpectFailure(PlanSchemaEvolution(Table(), *input, What(*input)), ErrorKind::kInvalidArgument,
                  {needle, "db.t cannot follow the source (delta table /d at source position 7)",
                   "lakesync table alter db.t", "schema_evolution: none", "left unchanged"});
  }
  // A key that changes type, is renamed or goes; a required column that goes.
  auto key_long = arrow::schema({arrow::field("id", arrow::float64(), false), arrow::field("qty", arrow::int32())});
  ExpectFailure(PlanSchemaEvolution(Table(), *key_long, What(*key_long)), ErrorKind::kInvalidArgument,
                {"key column 'id' changed from long to double"});
  auto renamed = arrow::schema({arrow::field("key", arrow::int64(), false), arrow::field("qty", arrow::int32())});
  auto what = What(*renamed);
  what.renames = {{"id", "key"}};
  ExpectFailure(PlanSchemaEvolution(Table(), *renamed, what), ErrorKind::kInvalidArgument,
                {"key column 'id' was renamed to 'key'"});
  auto no_key = arrow::schema({arrow::field("qty", arrow::int32())});
  ExpectFailure(PlanSchemaEvolution(Table(), *no_key, What(*no_key)), ErrorKind::kInvalidArgument,
                {"key column 'id' is no longer in the source"});
  auto m = Table();
  auto fields = m.Schema()->fields();
  fields[2].required = true;  // price
  m.schemas = {std::make_shared<const iceberg::Schema>(0, fields, std::vector<int32_t>{1})};
  auto no_price = arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("qty", arrow::int32())});
  ExpectFailure(PlanSchemaEvolution(m, *no_price, What(*no_price)), ErrorKind::kInvalidArgument,
                {"required column 'price' is no longer in the source"});
  // An optional column that goes is not a problem: its rows are null from now on.
  EXPECT_TRUE(PlanSchemaEvolution(Table(), *no_price, What(*no_price)).ok());
}

TEST(SchemaEvolutionTest, ModeNames) {
  ASSERT_OK_AND_ASSIGN(auto additive, ParseSchemaEvolution("additive", "job.yaml"));
  EXPECT_EQ(additive, SchemaEvolution::kAdditive);
  ASSERT_OK_AND_ASSIGN(auto none, ParseSchemaEvolution("none", "job.yaml"));
  EXPECT_EQ(SchemaEvolutionName(none), "none");
  ExpectFailure(ParseSchemaEvolution("all", "job.yaml"), ErrorKind::kInvalidArgument,
                {"job.yaml: schema_evolution must be additive or none, not 'all'"});
}

}  // namespace
}  // namespace lakesync::sink
