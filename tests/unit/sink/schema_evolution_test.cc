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

// id (key), st: struct<a: int, b: string (required)>, li: list<struct<c: float>>.
iceberg::TableMetadata NestedTable() {
  using iceberg::Type;
  iceberg::TableMetadata m;
  m.last_column_id = 7;
  auto st = Type::Struct({F(3, "a", false, Type::Int()), F(4, "b", true, Type::String())});
  auto li = Type::List(F(6, "element", false, Type::Struct({F(7, "c", false, Type::Float())})));
  m.schemas.push_back(std::make_shared<const iceberg::Schema>(
      0, std::vector<iceberg::NestedField>{F(1, "id", true, Type::Long()), F(2, "st", false, st), F(5, "li", false, li)},
      std::vector<int32_t>{1}));
  m.partition_specs.push_back(std::make_shared<const iceberg::PartitionSpec>(0, std::vector<iceberg::PartitionField>{}));
  return m;
}

TEST(SchemaEvolutionTest, NestedFieldsAreAddedAndWidenedInsideStructsAndLists) {
  auto input = arrow::schema(
      {arrow::field("id", arrow::int64(), false),
       arrow::field("st", arrow::struct_({arrow::field("a", arrow::int64()), arrow::field("b", arrow::utf8(), false),
                                          arrow::field("n", arrow::struct_({arrow::field("z", arrow::date32())}))})),
       arrow::field("li", arrow::list(arrow::struct_({arrow::field("c", arrow::float64()),
                                                      arrow::field("d", arrow::utf8())}))),
       arrow::field("tags", arrow::map(arrow::utf8(), arrow::int32()))});
  ASSERT_OK_AND_ASSIGN(auto changes, PlanSchemaEvolution(NestedTable(), *input, What(*input)));
  ASSERT_EQ(changes.size(), 5u) << ::testing::PrintToString(Said(changes));
  EXPECT_EQ(Said(changes)[0], "widen column st.a to long");
  EXPECT_EQ(changes[1].name, "st.n");
  EXPECT_EQ(Said(changes)[2], "widen column li.element.c to double");
  EXPECT_EQ(Said(changes)[3], "add column li.element.d (string)");
  EXPECT_EQ(changes[4].name, "tags");  // a new nested column
  ASSERT_OK_AND_ASSIGN(auto evolved, iceberg::EvolveSchema(NestedTable(), changes));
  EXPECT_TRUE(evolved.schema->Validate().ok());
  const auto& st = evolved.schema->FindFieldByName("st")->type->fields();
  EXPECT_EQ(st[0].type->id(), iceberg::TypeId::kLong);
  EXPECT_EQ(st[2].name, "n");
  EXPECT_EQ(st[2].id, 8);
  EXPECT_EQ(st[2].type->fields()[0].id, 9);
  EXPECT_EQ(evolved.last_column_id, 13);  // n, z, d, tags, its key and its value
  // The same input once the table has evolved: nothing more to change.
  iceberg::TableMetadata after = NestedTable();
  after.schemas = {evolved.schema};
  after.current_schema_id = evolved.schema->schema_id();
  after.last_column_id = evolved.last_column_id;
  ASSERT_OK_AND_ASSIGN(auto again, PlanSchemaEvolution(after, *input, What(*input)));
  EXPECT_TRUE(again.empty()) << ::testing::PrintToString(Said(again));
}

TEST(SchemaEvolutionTest, NestedRenamesAreFollowedByPathNotAdded) {
  auto li = arrow::field("li", arrow::list(arrow::struct_({arrow::field("c", arrow::float32())})));
  auto input = arrow::schema(
      {arrow::field("id", arrow::int64(), false),
       arrow::field("st", arrow::struct_({arrow::field("a2", arrow::int32()), arrow::field("b", arrow::utf8(), false)})),
       li});
  auto what = What(*input);
  what.renames = {{"st.a", "st.a2"}};
  ASSERT_OK_AND_ASSIGN(auto changes, PlanSchemaEvolution(NestedTable(), *input, what));
  EXPECT_EQ(Said(changes), (std::vector<std::string>{"rename column st.a to a2"}));
  ASSERT_OK_AND_ASSIGN(auto evolved, iceberg::EvolveSchema(NestedTable(), changes));
  EXPECT_EQ(evolved.schema->FindFieldByName("st.a2")->id, 3);
  // Under a struct the source renamed too (the struct first, then its field under its new name),
  // with a widening of the renamed field planned under its new path.
  auto both = arrow::schema(
      {arrow::field("id", arrow::int64(), false),
       arrow::field("s", arrow::struct_({arrow::field("a2", arrow::int64()), arrow::field("b", arrow::utf8(), false)})),
       li});
  what = What(*both);
  what.renames = {{"st.a", "s.a2"}, {"st", "s"}};
  ASSERT_OK_AND_ASSIGN(auto renamed, PlanSchemaEvolution(NestedTable(), *both, what));
  EXPECT_EQ(Said(renamed), (std::vector<std::string>{"rename column st to s", "rename column s.a to a2",
                                                     "widen column s.a2 to long"}));
  ASSERT_OK_AND_ASSIGN(auto evolved2, iceberg::EvolveSchema(NestedTable(), renamed));
  EXPECT_EQ(evolved2.schema->FindFieldByName("s.a2")->id, 3);
  EXPECT_EQ(evolved2.last_column_id, 7);
  // Without the source's word a renamed field is a new one (the old one stays, null from now on).
  what.renames = {{"st", "s"}};
  ASSERT_OK_AND_ASSIGN(auto added, PlanSchemaEvolution(NestedTable(), *both, what));
  EXPECT_EQ(Said(added), (std::vector<std::string>{"rename column st to s", "add column s.a2 (long)"}));
}

TEST(SchemaEvolutionTest, ARequiredNestedFieldTheSourceDropsStopsTheRun) {
  auto input = arrow::schema({arrow::field("id", arrow::int64(), false),
                              arrow::field("st", arrow::struct_({arrow::field("a", arrow::int32())}))});
  ExpectFailure(PlanSchemaEvolution(NestedTable(), *input, What(*input)), ErrorKind::kInvalidArgument,
                {"required field 'st.b' is no longer in the source", "left unchanged"});
  auto narrowed = arrow::schema(
      {arrow::field("id", arrow::int64(), false),
       arrow::field("st", arrow::struct_({arrow::field("a", arrow::float64()), arrow::field("b", arrow::utf8())}))});
  ExpectFailure(PlanSchemaEvolution(NestedTable(), *narrowed, What(*narrowed)), ErrorKind::kInvalidArgument,
                {"column 'st.a' changed from int to double"});
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
