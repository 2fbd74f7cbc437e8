#include "lakesync/iceberg/model/schema.h"

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

// id, name, a required struct `loc` {lat, zip, inner: optional struct {z}}, a list of structs, a map
// with struct values and an optional struct.
Schema NestedSchema(std::vector<int32_t> identifier_ids = {}) {
  auto inner = Type::Struct({F(7, "z", true, Type::Int())});
  auto loc = Type::Struct({F(4, "lat", true, Type::Double()), F(5, "zip", true, Type::String()),
                           F(6, "inner", false, inner)});
  auto point = Type::Struct({F(10, "x", true, Type::Long()), F(11, "y", true, Type::Long())});
  auto points = Type::List(F(9, "", true, point));
  auto props_value = Type::Struct({F(15, "v", true, Type::String())});
  auto props = Type::Map(F(13, "", true, Type::String()), F(14, "", true, props_value));
  auto opt = Type::Struct({F(17, "k", true, Type::String())});
  return Schema(3,
                {F(1, "id", true, Type::Long()), F(2, "name", false, Type::String()), F(3, "loc", true, loc),
                 F(8, "points", true, points), F(12, "props", true, props), F(16, "opt", false, opt),
                 F(18, "score", true, Type::Float())},
                std::move(identifier_ids));
}

TEST(SchemaTest, FindsFieldsByIdAtAnyDepth) {
  const Schema s = NestedSchema();
  EXPECT_EQ(s.schema_id(), 3);
  for (int32_t id = 1; id <= 18; ++id) {
    const NestedField* f = s.FindFieldById(id);
    ASSERT_NE(f, nullptr) << id;
    EXPECT_EQ(f->id, id);
  }
  EXPECT_EQ(s.FindFieldById(7)->name, "z");
  EXPECT_EQ(s.FindFieldById(9)->name, "element");
  EXPECT_EQ(s.FindFieldById(13)->name, "key");
  EXPECT_EQ(s.FindFieldById(14)->name, "value");
  EXPECT_EQ(s.FindFieldById(0), nullptr);
  EXPECT_EQ(s.FindFieldById(19), nullptr);
  EXPECT_EQ(s.FindFieldById(-1), nullptr);
}

TEST(SchemaTest, FindsFieldsByDottedName) {
  const Schema s = NestedSchema();
  const std::vector<std::pair<std::string, int32_t>> names = {
      {"id", 1},           {"loc", 3},          {"loc.lat", 4},         {"loc.zip", 5},         {"loc.inner.z", 7},
      {"points", 8},       {"points.element", 9}, {"points.element.x", 10}, {"props.key", 13},
      {"props.value", 14}, {"props.value.v", 15}, {"opt.k", 17},          {"score", 18}};
  for (const auto& [name, id] : names) {
    const NestedField* f = s.FindFieldByName(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->id, id) << name;
    EXPECT_EQ(s.FindColumnName(id), name);
  }
  // Names are case-sensitive and must be complete paths.
  EXPECT_EQ(s.FindFieldByName("ID"), nullptr);
  EXPECT_EQ(s.FindFieldByName("lat"), nullptr);
  EXPECT_EQ(s.FindFieldByName("loc."), nullptr);
  EXPECT_EQ(s.FindFieldByName("points.x"), nullptr);
  EXPECT_EQ(s.FindColumnName(99), "");
}

TEST(SchemaTest, TopLevelIndexAndHighestId) {
  const Schema s = NestedSchema();
  EXPECT_EQ(s.TopLevelIndex(1), 0);
  EXPECT_EQ(s.TopLevelIndex(3), 2);
  EXPECT_EQ(s.TopLevelIndex(18), 6);
  EXPECT_EQ(s.TopLevelIndex(4), -1);  // nested, not top level
  EXPECT_EQ(s.HighestFieldId(), 18);
  EXPECT_EQ(Schema(0, {}).HighestFieldId(), 0);
  // The highest id may sit deep inside a nested type.
  Schema deep(0, {F(1, "a", true, Type::List(F(40, "", true, Type::Int()))), F(2, "b", true, Type::Int())});
  EXPECT_EQ(deep.HighestFieldId(), 40);
}

TEST(SchemaTest, ValidNestedSchemaValidates) {
  EXPECT_OK(NestedSchema().Validate());
  // Identifier fields: a top-level required long, and a required field inside a required struct.
  EXPECT_OK(NestedSchema({1}).Validate());
  EXPECT_OK(NestedSchema({1, 5}).Validate());
  EXPECT_OK(NestedSchema({5}).Validate());
}

TEST(SchemaTest, DuplicateIdsAreRejected) {
  Schema dup_top(0, {F(1, "a", true, Type::Int()), F(1, "b", true, Type::Int())});
  EXPECT_ERROR(dup_top.Validate(), ErrorKind::kInvalidArgument, "field id 1");
  Schema dup_nested(0, {F(1, "a", true, Type::Int()),
                        F(2, "s", false, Type::Struct({F(1, "c", true, Type::Int())}))});
  EXPECT_ERROR(dup_nested.Validate(), ErrorKind::kInvalidArgument, "s.c");
  Schema dup_element(0, {F(2, "l", false, Type::List(F(2, "", true, Type::Int())))});
  EXPECT_ERROR(dup_element.Validate(), ErrorKind::kInvalidArgument, "field id 2");
  Schema dup_map(0, {F(1, "m", false, Type::Map(F(2, "", true, Type::Int()), F(2, "", true, Type::Int())))});
  EXPECT_ERROR(dup_map.Validate(), ErrorKind::kInvalidArgument, "field id 2");
}

TEST(SchemaTest, NonPositiveIdsAndDuplicateNamesAreRejected) {
  Schema zero(0, {F(0, "a", true, Type::Int())});
  EXPECT_ERROR(zero.Validate(), ErrorKind::kInvalidArgument, "'a'");
  Schema negative(0, {F(-5, "a", true, Type::Int())});
  EXPECT_ERROR(negative.Validate(), ErrorKind::kInvalidArgument, "-5");
  Schema names(0, {F(1, "a", true, Type::Int()), F(2, "a", true, Type::Long())});
  EXPECT_ERROR(names.Validate(), ErrorKind::kInvalidArgument, "duplicate field name 'a'");
  Schema nested_names(0, {F(1, "s", true, Type::Struct({F(2, "x", true, Type::Int()), F(3, "x", true, Type::Int())}))});
  EXPECT_ERROR(nested_names.Validate(), ErrorKind::kInvalidArgument, "s.x");
  // The same name in different structs is fine.
  Schema ok(0, {F(1, "x", true, Type::Int()), F(2, "s", true, Type::Struct({F(3, "x", true, Type::Int())}))});
  EXPECT_OK(ok.Validate());
}

TEST(SchemaTest, IdentifierFieldsMustBeRequired) {
  EXPECT_ERROR(NestedSchema({2}).Validate(), ErrorKind::kInvalidArgument, "'name' must be required");
}

TEST(SchemaTest, IdentifierFieldsMustNotBeFloatingPoint) {
  EXPECT_ERROR(NestedSchema({18}).Validate(), ErrorKind::kInvalidArgument, "'score'");
  EXPECT_ERROR(NestedSchema({4}).Validate(), ErrorKind::kInvalidArgument, "loc.lat");
  Schema dbl(0, {F(1, "d", true, Type::Double())}, {1});
  EXPECT_ERROR(dbl.Validate(), ErrorKind::kInvalidArgument, "double");
}

TEST(SchemaTest, IdentifierFieldsMustBePrimitive) {
  EXPECT_ERROR(NestedSchema({3}).Validate(), ErrorKind::kInvalidArgument, "'loc'");
  EXPECT_ERROR(NestedSchema({8}).Validate(), ErrorKind::kInvalidArgument, "'points'");
}

TEST(SchemaTest, IdentifierFieldsMustNotBeInsideListMapOrOptionalStruct) {
  // Inside a list's element struct.
  EXPECT_ERROR(NestedSchema({10}).Validate(), ErrorKind::kInvalidArgument, "points.element.x");
  // The map key itself, and a field inside a map's value struct.
  EXPECT_ERROR(NestedSchema({13}).Validate(), ErrorKind::kInvalidArgument, "props.key");
  EXPECT_ERROR(NestedSchema({15}).Validate(), ErrorKind::kInvalidArgument, "props.value.v");
  // Inside an optional struct (top level, and an optional struct inside a required one).
  EXPECT_ERROR(NestedSchema({17}).Validate(), ErrorKind::kInvalidArgument, "opt.k");
  EXPECT_ERROR(NestedSchema({7}).Validate(), ErrorKind::kInvalidArgument, "loc.inner.z");
}

TEST(SchemaTest, IdentifierFieldMustExist) {
  EXPECT_ERROR(NestedSchema({42}).Validate(), ErrorKind::kInvalidArgument, "42");
}

TEST(SchemaTest, SameSchemaIgnoresTheSchemaId) {
  Schema a(1, {F(1, "id", true, Type::Long())}, {1});
  Schema b(7, {F(1, "id", true, Type::Long())}, {1});
  Schema c(1, {F(1, "id", true, Type::Long())});
  Schema d(1, {F(1, "id", false, Type::Long())}, {1});
  EXPECT_TRUE(a.SameSchema(b));
  EXPECT_FALSE(a.SameSchema(c));
  EXPECT_FALSE(a.SameSchema(d));
}

TEST(SchemaTest, CopiesKeepWorkingLookups) {
  // The lookup tables point into the shared struct type; a copy must still find fields.
  Schema copy = NestedSchema();
  Schema moved = std::move(copy);
  ASSERT_NE(moved.FindFieldByName("points.element.y"), nullptr);
  EXPECT_EQ(moved.FindFieldByName("points.element.y")->id, 11);
}

TEST(SchemaTest, ToStringListsTopLevelFields) {
  Schema s(0, {F(1, "id", true, Type::Long()), F(2, "d", false, Type::Decimal(9, 2))});
  EXPECT_EQ(s.ToString(), "table {\n  1: id: required long\n  2: d: optional decimal(9, 2)\n}");
}

}  // namespace
}  // namespace lakesync::iceberg
