#include "lakesync/iceberg/model/arrow_schema.h"

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>
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

Schema AllTypes() {
  auto point = Type::Struct({F(20, "x", true, Type::Double()), F(21, "y", false, Type::Double())});
  auto value = Type::Struct({F(25, "x", true, Type::Double())});
  return Schema(0, {F(1, "b", true, Type::Boolean()), F(2, "i", false, Type::Int()), F(3, "l", true, Type::Long()),
                    F(4, "f", false, Type::Float()), F(5, "d", false, Type::Double()),
                    F(6, "dec", false, Type::Decimal(38, 9)), F(7, "date", false, Type::Date()),
                    F(8, "time", false, Type::Time()), F(9, "ts", false, Type::Timestamp()),
                    F(10, "tstz", false, Type::TimestampTz()), F(11, "tsns", false, Type::TimestampNs()),
                    F(12, "tstzns", false, Type::TimestampTzNs()), F(13, "s", false, Type::String()),
                    F(14, "u", false, Type::Uuid()), F(15, "fx", false, Type::Fixed(7)),
                    F(16, "bin", false, Type::Binary()), F(17, "pt", true, point),
                    F(18, "tags", false, Type::List(F(22, "", true, Type::String()))),
                    F(19, "props", false, Type::Map(F(23, "", true, Type::String()), F(24, "", false, value)))});
}

TEST(ArrowSchemaTest, PrimitiveTypesMapToArrow) {
  ASSERT_OK_AND_ASSIGN(auto arrow_schema, ToArrowSchema(AllTypes()));
  const std::vector<std::string> expected = {
      "bool", "int32", "int64", "float", "double", "decimal128(38, 9)", "date32[day]", "time64[us]",
      "timestamp[us]", "timestamp[us, tz=UTC]", "timestamp[ns]", "timestamp[ns, tz=UTC]", "string",
      "fixed_size_binary[16]", "fixed_size_binary[7]", "binary"};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(arrow_schema->field(static_cast<int>(i))->type()->ToString(), expected[i]) << i;
  }
  EXPECT_FALSE(arrow_schema->field(0)->nullable());
  EXPECT_TRUE(arrow_schema->field(1)->nullable());
}

TEST(ArrowSchemaTest, EveryFieldCarriesItsIdAtEveryDepth) {
  ASSERT_OK_AND_ASSIGN(auto arrow_schema, ToArrowSchema(AllTypes()));
  for (int i = 0; i < arrow_schema->num_fields(); ++i) {
    EXPECT_EQ(ArrowFieldId(*arrow_schema->field(i)), i + 1);
    EXPECT_EQ(arrow_schema->field(i)->metadata()->Get(kArrowFieldIdKey).ValueOr(""), std::to_string(i + 1));
  }
  const auto& pt = arrow_schema->GetFieldByName("pt");
  EXPECT_EQ(ArrowFieldId(*pt->type()->field(0)), 20);
  EXPECT_FALSE(pt->type()->field(0)->nullable());
  EXPECT_EQ(ArrowFieldId(*pt->type()->field(1)), 21);
  const auto& tags = arrow_schema->GetFieldByName("tags");
  ASSERT_EQ(tags->type()->id(), arrow::Type::LIST);
  EXPECT_EQ(ArrowFieldId(*tags->type()->field(0)), 22);
  EXPECT_FALSE(tags->type()->field(0)->nullable());
  const auto& props = arrow_schema->GetFieldByName("props");
  ASSERT_EQ(props->type()->id(), arrow::Type::MAP);
  const auto& map = static_cast<const arrow::MapType&>(*props->type());
  EXPECT_EQ(ArrowFieldId(*map.key_field()), 23);
  EXPECT_FALSE(map.key_field()->nullable());
  EXPECT_EQ(ArrowFieldId(*map.item_field()), 24);
  EXPECT_TRUE(map.item_field()->nullable());
  EXPECT_EQ(ArrowFieldId(*map.item_field()->type()->field(0)), 25);
}

TEST(ArrowSchemaTest, RoundTripKeepsIdsNamesTypesAndRequiredness) {
  const Schema original = AllTypes();
  ASSERT_OK_AND_ASSIGN(auto arrow_schema, ToArrowSchema(original));
  ASSERT_OK_AND_ASSIGN(auto back, FromArrowSchema(*arrow_schema, /*assign_fresh_ids=*/false, 5));
  EXPECT_EQ(back->schema_id(), 5);
  // uuid has no Arrow type of its own here: it comes back as fixed[16]. Everything else is exact.
  ASSERT_EQ(back->fields().size(), original.fields().size());
  for (size_t i = 0; i < original.fields().size(); ++i) {
    const auto& a = original.fields()[i];
    const auto& b = back->fields()[i];
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.required, b.required) << a.name;
    if (a.type->id() == TypeId::kUuid) {
      EXPECT_EQ(b.type->ToString(), "fixed[16]");
    } else {
      EXPECT_TRUE(a.type->Equals(*b.type)) << a.type->ToString() << " vs " << b.type->ToString();
    }
  }
}

TEST(ArrowSchemaTest, FreshIdsFollowJavasOrder) {
  // Each struct's own fields first, then their children, depth first.
  auto schema = arrow::schema({
      arrow::field("a", arrow::int32(), false),
      arrow::field("b", arrow::struct_({arrow::field("c", arrow::utf8()), arrow::field("d", arrow::int64())})),
      arrow::field("e", arrow::list(arrow::field("item", arrow::struct_({arrow::field("f", arrow::float64())})))),
      arrow::field("g", arrow::map(arrow::utf8(), arrow::int16())),
  });
  ASSERT_OK_AND_ASSIGN(auto s, FromArrowSchema(*schema, /*assign_fresh_ids=*/true));
  const std::vector<std::pair<std::string, int32_t>> expected = {
      {"a", 1}, {"b", 2}, {"e", 3}, {"g", 4}, {"b.c", 5}, {"b.d", 6}, {"e.element", 7}, {"e.element.f", 8},
      {"g.key", 9}, {"g.value", 10}};
  for (const auto& [name, id] : expected) {
    const NestedField* f = s->FindFieldByName(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->id, id) << name;
  }
  EXPECT_TRUE(s->FindFieldByName("a")->required);
  EXPECT_EQ(s->FindFieldByName("g.value")->type->id(), TypeId::kInt);
}

TEST(ArrowSchemaTest, OtherArrowTypesWiden) {
  auto schema = arrow::schema({
      arrow::field("i8", arrow::int8()), arrow::field("u16", arrow::uint16()), arrow::field("u32", arrow::uint32()),
      arrow::field("half", arrow::float16()), arrow::field("d64", arrow::date64()),
      arrow::field("t32", arrow::time32(arrow::TimeUnit::MILLI)),
      arrow::field("tsms", arrow::timestamp(arrow::TimeUnit::MILLI, "Europe/Paris")),
      arrow::field("ls", arrow::large_utf8()), arrow::field("lb", arrow::large_binary()),
      arrow::field("n", arrow::null()), arrow::field("d32", arrow::decimal128(5, 2)),
  });
  ASSERT_OK_AND_ASSIGN(auto s, FromArrowSchema(*schema, true));
  const std::vector<std::string> expected = {"int", "int", "long", "float", "date", "time", "timestamptz", "string",
                                             "binary", "unknown", "decimal(5, 2)"};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(s->fields()[i].type->ToString(), expected[i]) << i;
}

TEST(ArrowSchemaTest, ErrorsNameTheField) {
  auto no_id = arrow::schema({arrow::field("x", arrow::int32())});
  EXPECT_ERROR(FromArrowSchema(*no_id, false), ErrorKind::kInvalidArgument, "'x'");
  auto unsupported = arrow::schema({arrow::field("big", arrow::uint64())});
  EXPECT_ERROR(FromArrowSchema(*unsupported, true), ErrorKind::kUnsupported, "big");
  auto dup = arrow::schema(
      {arrow::field("a", arrow::int32(), true, arrow::key_value_metadata({kArrowFieldIdKey}, {"1"})),
       arrow::field("b", arrow::int32(), true, arrow::key_value_metadata({kArrowFieldIdKey}, {"1"}))});
  EXPECT_ERROR(FromArrowSchema(*dup, false), ErrorKind::kInvalidArgument, "field id 1");
  Schema variant(0, {F(1, "v", false, Type::Variant())});
  EXPECT_ERROR(ToArrowSchema(variant), ErrorKind::kUnsupported, "'v'");
  EXPECT_EQ(ArrowFieldId(*arrow::field("x", arrow::int32())), -1);
  EXPECT_EQ(ArrowFieldId(*arrow::field("x", arrow::int32(), true,
                                       arrow::key_value_metadata({kArrowFieldIdKey}, {"abc"}))),
            -1);
}

}  // namespace
}  // namespace lakesync::iceberg
