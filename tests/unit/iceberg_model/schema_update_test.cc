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

}  // namespace
}  // namespace lakesync::iceberg
