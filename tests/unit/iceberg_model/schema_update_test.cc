#include "lakesync/iceberg/model/schema_update.h"

#include <gtest/gtest.h>

#include "model_test_util.h"

namespace lakesync::iceberg {
namespace {

NestedField F(int32_t id, std::string name, bool required, TypePtr type) {
  NestedField f;
  f.id = id;
  f.name = std::move(name);
  f.required = required;
  f.type = std::move(type);
  return f;
}

// id (key), n: int, x: float, amount: decimal(9, 2), day: date (partition source), gone-id 7 retired.
TableMetadata Table(int format_version = 2) {
  TableMetadata m;
  m.format_version = format_version;
  m.last_column_id = 7;  // id 6 and 7 were used by columns dropped earlier
  m.schemas.push_back(std::make_shared<const Schema>(
      0,
      std::vector<NestedField>{F(1, "id", true, Type::Long()), F(2, "n", false, Type::Int()),
                               F(3, "x", false, Type::Float()), F(4, "amount", false, Type::Decimal(9, 2)),
                               F(5, "day", false, Type::Date())},
      std::vector<int32_t>{1}));
  m.current_schema_id = 0;
  PartitionField pf;
  pf.source_id = 5;
  pf.field_id = 1000;
  pf.name = "day_month";
  pf.transform = Transform(Transform::Kind::kMonth);
  m.partition_specs.push_back(std::make_shared<const PartitionSpec>(0, std::vector<PartitionField>{pf}));
  m.sort_orders.push_back(std::make_shared<SortOrder>());
  return m;
}

TEST(SchemaUpdateTest, AddedColumnTakesTheIdAfterLastColumnIdAndIsOptional) {
  const auto m = Table();
  ASSERT_OK_AND_ASSIGN(auto evolved, EvolveSchema(m, {SchemaChange::Add("note", Type::String(), "a note")}));
  EXPECT_TRUE(evolved.changed);
  EXPECT_EQ(evolved.last_column_id, 8);  // not 6: ids of dropped columns stay retired
  EXPECT_EQ(evolved.schema->schema_id(), 1);
  const auto* f = evolved.schema->FindFieldByName("note");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->id, 8);
  EXPECT_FALSE(f->required);
  EXPECT_EQ(f->doc, "a note");
  EXPECT_EQ(evolved.schema->fields().back().name, "note");
  EXPECT_EQ(evolved.schema->identifier_field_ids(), std::vector<int32_t>{1});
}

TEST(SchemaUpdateTest, AddAfterPlacesTheColumn) {
  ASSERT_OK_AND_ASSIGN(auto evolved, EvolveSchema(Table(), {SchemaChange::Add("note", Type::String(), "", "id")}));
  EXPECT_EQ(evolved.schema->fields()[1].name, "note");
  EXPECT_ERROR(EvolveSchema(Table(), {SchemaChange::Add("note", Type::String(), "", "nope")}),
               ErrorKind::kInvalidArgument, "names no column 'nope'");
  EXPECT_ERROR(EvolveSchema(Table(), {SchemaChange::Add("n", Type::String())}), ErrorKind::kInvalidArgument,
               "already has a column named 'n'");
}

TEST(SchemaUpdateTest, RenameKeepsTheFieldId) {
  ASSERT_OK_AND_ASSIGN(auto evolved, EvolveSchema(Table(), {SchemaChange::Rename("n", "count")}));
  ASSERT_NE(evolved.schema->FindFieldByName("count"), nullptr);
  EXPECT_EQ(evolved.schema->FindFieldByName("count")->id, 2);
  EXPECT_EQ(evolved.schema->FindFieldByName("n"), nullptr);
  EXPECT_EQ(evolved.last_column_id, 7);
  EXPECT_ERROR(EvolveSchema(Table(), {SchemaChange::Rename("n", "x")}), ErrorKind::kInvalidArgument,
               "already has a column named 'x'");
  EXPECT_ERROR(EvolveSchema(Table(), {SchemaChange::Rename("zz", "y")}), ErrorKind::kInvalidArgument,
               "no column 'zz'");
}

TEST(SchemaUpdateTest, OnlyTheSpecsPromotionsWiden) {
  EXPECT_TRUE(CanPromote(*Type::Int(), *Type::Long(), 2));
  EXPECT_TRUE(CanPromote(*Type::Float(), *Type::Double(), 2));
  EXPECT_TRUE(CanPromote(*Type::Decimal(9, 2), *Type::Decimal(18, 2), 2));
  EXPECT_FALSE(CanPromote(*Type::Decimal(9, 2), *Type::Decimal(18, 3), 2));
  EXPECT_FALSE(CanPromote(*Type::Decimal(9, 2), *Type::Decimal(8, 2), 2));
  EXPECT_FALSE(CanPromote(*Type::Long(), *Type::Int(), 2));
  EXPECT_FALSE(CanPromote(*Type::Int(), *Type::String(), 2));
  EXPECT_FALSE(CanPromote(*Type::Date(), *Type::Timestamp(), 2));
  EXPECT_TRUE(CanPromote(*Type::Date(), *Type::Timestamp(), 3));
  EXPECT_TRUE(CanPromote(*Type::Date(), *Type::TimestampNs(), 3));
  EXPECT_FALSE(CanPromote(*Type::Date(), *Type::TimestampTz(), 3));

  ASSERT_OK_AND_ASSIGN(auto evolved, EvolveSchema(Table(), {SchemaChange::Widen("n", Type::Long()),
                                                            SchemaChange::Widen("amount", Type::Decimal(12, 2))}));
  EXPECT_TRUE(evolved.schema->FindFieldByName("n")->type->Equals(*Type::Long()));
  EXPECT_EQ(evolved.schema->FindFieldByName("n")->id, 2);
  EXPECT_TRUE(evolved.schema->FindFieldByName("amount")->type->Equals(*Type::Decimal(12, 2)));
  EXPECT_ERROR(EvolveSchema(Table(), {SchemaChange::Widen("id", Type::Int())}), ErrorKind::kInvalidArgument,
               "long cannot be changed to int");
  EXPECT_ERROR(EvolveSchema(Table(), {SchemaChange::Widen("x", Type::String())}), ErrorKind::kInvalidArgument,
               "float cannot be changed to string");
}

TEST(SchemaUpdateTest, DropRetiresTheIdAndRefusesKeysAndPartitionSources) {
  ASSERT_OK_AND_ASSIGN(auto evolved, EvolveSchema(Table(), {SchemaChange::Drop("x")}));
  EXPECT_EQ(evolved.schema->FindFieldByName("x"), nullptr);
  EXPECT_EQ(evolved.last_column_id, 7);
  ASSERT_OK_AND_ASSIGN(auto readded, EvolveSchema(Table(), {SchemaChange::Drop("x"), SchemaChange::Add("x", Type::Float())}));
  EXPECT_EQ(readded.schema->FindFieldByName("x")->id, 8);  // a new column, not the dropped one back
  EXPECT_ERROR(EvolveSchema(Table(), {SchemaChange::Drop("id")}), ErrorKind::kInvalidArgument,
               "'id' is an identifier field");
  EXPECT_ERROR(EvolveSchema(Table(), {SchemaChange::Drop("day")}), ErrorKind::kInvalidArgument,
               "source of partition field 'day_month'");
}

TEST(SchemaUpdateTest, NoChangeIsReportedAsUnchanged) {
  ASSERT_OK_AND_ASSIGN(auto evolved, EvolveSchema(Table(), {SchemaChange::Widen("n", Type::Int())}));
  EXPECT_FALSE(evolved.changed);
}

// id (key), st: struct<a: int, inner: struct<x: double>>, li: list<struct<b: string>>,
// m: map<string, struct<v: float>>; last-column-id 12.
TableMetadata NestedTable() {
  TableMetadata m;
  m.format_version = 2;
  m.last_column_id = 12;
  auto inner = Type::Struct({F(5, "x", false, Type::Double())});
  auto st = Type::Struct({F(3, "a", false, Type::Int()), F(4, "inner", false, inner)});
  auto li = Type::List(F(7, "element", false, Type::Struct({F(8, "b", false, Type::String())})));
  auto mp = Type::Map(F(10, "key", true, Type::String()), F(11, "value", false, Type::Struct({F(12, "v", false, Type::Float())})));
  m.schemas.push_back(std::make_shared<const Schema>(
      0, std::vector<NestedField>{F(1, "id", true, Type::Long()), F(2, "st", false, st), F(6, "li", false, li),
                                  F(9, "m", false, mp)},
      std::vector<int32_t>{1}));
  m.current_schema_id = 0;
  m.partition_specs.push_back(std::make_shared<const PartitionSpec>(0, std::vector<PartitionField>{}));
  m.sort_orders.push_back(std::make_shared<SortOrder>());
  return m;
}

TEST(SchemaUpdateTest, FieldsAreAddedInsideStructsListsAndMapsByPath) {
  ASSERT_OK_AND_ASSIGN(auto evolved, EvolveSchema(NestedTable(), {SchemaChange::Add("st.c", Type::String()),
                                                                   SchemaChange::Add("st.inner.y", Type::Long()),
                                                                   SchemaChange::Add("li.element.c", Type::Int()),
                                                                   SchemaChange::Add("m.value.w", Type::Double())}));
  EXPECT_EQ(evolved.last_column_id, 16);
  const auto& fields = evolved.schema->fields();
  const auto& st = fields[1].type->fields();
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[2].name, "c");
  EXPECT_EQ(st[2].id, 13);
  EXPECT_FALSE(st[2].required);
  EXPECT_EQ(st[1].type->fields().back().name, "y");
  EXPECT_EQ(st[1].type->fields().back().id, 14);
  EXPECT_EQ(st[1].id, 4);  // the parents keep their ids
  const auto& element = fields[2].type->element();
  EXPECT_EQ(element.id, 7);
  EXPECT_EQ(element.type->fields().back().name, "c");
  EXPECT_EQ(element.type->fields().back().id, 15);
  const auto& value = fields[3].type->value();
  EXPECT_EQ(value.id, 11);
  EXPECT_EQ(value.type->fields().back().id, 16);
  EXPECT_EQ(fields[3].type->key().id, 10);
  EXPECT_TRUE(evolved.schema->Validate().ok());
}

TEST(SchemaUpdateTest, AddedNestedTypesGetFreshIdsThroughout) {
  auto added = Type::Struct({F(1, "p", true, Type::Int()),
                             F(2, "q", false, Type::List(F(3, "element", false, Type::Struct({F(4, "r", false, Type::Long())}))))});
  ASSERT_OK_AND_ASSIGN(auto evolved, EvolveSchema(NestedTable(), {SchemaChange::Add("extra", added)}));
  const auto& f = evolved.schema->fields().back();
  EXPECT_EQ(f.id, 13);
  EXPECT_FALSE(f.required);
  ASSERT_EQ(f.type->fields().size(), 2u);
  EXPECT_EQ(f.type->fields()[0].id, 14);
  EXPECT_TRUE(f.type->fields()[0].required);  // inside a new struct, as given: older rows have no struct
  EXPECT_EQ(f.type->fields()[1].id, 15);
  EXPECT_EQ(f.type->fields()[1].type->element().id, 16);
  EXPECT_EQ(f.type->fields()[1].type->element().type->fields()[0].id, 17);
  EXPECT_EQ(evolved.last_column_id, 17);
  EXPECT_TRUE(evolved.schema->Validate().ok());
}

TEST(SchemaUpdateTest, NestedFieldsAreWidenedByPath) {
  ASSERT_OK_AND_ASSIGN(auto evolved, EvolveSchema(NestedTable(), {SchemaChange::Widen("st.a", Type::Long()),
                                                                   SchemaChange::Widen("m.value.v", Type::Double())}));
  EXPECT_EQ(evolved.schema->fields()[1].type->fields()[0].type->id(), TypeId::kLong);
  EXPECT_EQ(evolved.schema->fields()[1].type->fields()[0].id, 3);
  EXPECT_EQ(evolved.schema->fields()[3].type->value().type->fields()[0].type->id(), TypeId::kDouble);
  EXPECT_EQ(evolved.last_column_id, 12);
  EXPECT_ERROR(EvolveSchema(NestedTable(), {SchemaChange::Widen("st.a", Type::String())}), ErrorKind::kInvalidArgument,
               "cannot be changed to string");
}

TEST(SchemaUpdateTest, NestedFieldsAreRenamedByPathKeepingTheirIds) {
  ASSERT_OK_AND_ASSIGN(auto evolved,
                       EvolveSchema(NestedTable(), {SchemaChange::Rename("st.a", "a2"), SchemaChange::Rename("st.inner.x", "x2"),
                                                    SchemaChange::Rename("li.element.b", "b2"),
                                                    SchemaChange::Rename("st", "s")}));
  ASSERT_NE(evolved.schema->FindFieldByName("s.a2"), nullptr);
  EXPECT_EQ(evolved.schema->FindFieldByName("s.a2")->id, 3);
  EXPECT_EQ(evolved.schema->FindFieldByName("s.inner.x2")->id, 5);
  EXPECT_EQ(evolved.schema->FindFieldByName("li.element.b2")->id, 8);
  EXPECT_EQ(evolved.schema->FindFieldByName("st.a"), nullptr);
  EXPECT_EQ(evolved.last_column_id, 12);  // no id is taken by a rename
  EXPECT_ERROR(EvolveSchema(NestedTable(), {SchemaChange::Rename("st.a", "inner")}), ErrorKind::kInvalidArgument,
               "already has a field named 'inner' there");
  EXPECT_ERROR(EvolveSchema(NestedTable(), {SchemaChange::Rename("st.zz", "y")}), ErrorKind::kInvalidArgument,
               "no field 'st.zz'");
  EXPECT_ERROR(EvolveSchema(NestedTable(), {SchemaChange::Rename("st.a", "p.q")}), ErrorKind::kInvalidArgument,
               "not a valid field name");
  EXPECT_ERROR(EvolveSchema(NestedTable(), {SchemaChange::Rename("m.key", "k")}), ErrorKind::kInvalidArgument,
               "only struct fields and columns can be renamed");
}

TEST(SchemaUpdateTest, NestedPathsThatNameNoStructAreRefused) {
  EXPECT_ERROR(EvolveSchema(NestedTable(), {SchemaChange::Add("li.c", Type::Int())}), ErrorKind::kInvalidArgument,
               "fields can be added to structs only");
  EXPECT_ERROR(EvolveSchema(NestedTable(), {SchemaChange::Add("nope.c", Type::Int())}), ErrorKind::kInvalidArgument,
               "no field 'nope'");
  EXPECT_ERROR(EvolveSchema(NestedTable(), {SchemaChange::Add("id.c", Type::Int())}), ErrorKind::kInvalidArgument,
               "has no fields");
  EXPECT_ERROR(EvolveSchema(NestedTable(), {SchemaChange::Add("st.a", Type::Int())}), ErrorKind::kInvalidArgument,
               "already has a field named 'st.a'");
  EXPECT_ERROR(EvolveSchema(NestedTable(), {SchemaChange::Add("st..a", Type::Int())}), ErrorKind::kInvalidArgument,
               "not a column name");
}

}  // namespace
}  // namespace lakesync::iceberg
