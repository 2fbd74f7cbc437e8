#include "lakesync/iceberg/model/types.h"

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

// Every parameterless primitive, by the name the spec (Appendix C) gives it.
const std::vector<std::pair<std::string, TypeId>> kPlainPrimitives = {
    {"boolean", TypeId::kBoolean},       {"int", TypeId::kInt},
    {"long", TypeId::kLong},             {"float", TypeId::kFloat},
    {"double", TypeId::kDouble},         {"date", TypeId::kDate},
    {"time", TypeId::kTime},             {"timestamp", TypeId::kTimestamp},
    {"timestamptz", TypeId::kTimestampTz}, {"timestamp_ns", TypeId::kTimestampNs},
    {"timestamptz_ns", TypeId::kTimestampTzNs}, {"string", TypeId::kString},
    {"uuid", TypeId::kUuid},             {"binary", TypeId::kBinary},
    {"unknown", TypeId::kUnknown},       {"variant", TypeId::kVariant},
    {"geometry", TypeId::kGeometry},     {"geography", TypeId::kGeography},
};

TEST(TypesTest, PlainPrimitivesParseAndPrintTheirSpecNames) {
  for (const auto& [name, id] : kPlainPrimitives) {
    ASSERT_OK_AND_ASSIGN(auto t, Type::ParsePrimitive(name));
    EXPECT_EQ(t->id(), id) << name;
    EXPECT_TRUE(t->is_primitive()) << name;
    EXPECT_EQ(t->ToString(), name);
  }
}

TEST(TypesTest, NamesAreCaseInsensitiveLikeJava) {
  // Java's Types.fromPrimitiveString lower-cases the name before matching.
  ASSERT_OK_AND_ASSIGN(auto l, Type::ParsePrimitive("LONG"));
  EXPECT_EQ(l->id(), TypeId::kLong);
  ASSERT_OK_AND_ASSIGN(auto ts, Type::ParsePrimitive("TimestampTz"));
  EXPECT_EQ(ts->id(), TypeId::kTimestampTz);
  ASSERT_OK_AND_ASSIGN(auto d, Type::ParsePrimitive("DECIMAL(10, 2)"));
  EXPECT_EQ(d->ToString(), "decimal(10, 2)");
  ASSERT_OK_AND_ASSIGN(auto f, Type::ParsePrimitive("Fixed[3]"));
  EXPECT_EQ(f->ToString(), "fixed[3]");
}

TEST(TypesTest, DecimalAcceptsTheFormsJavaAndPyicebergWrite) {
  // Java and pyiceberg write "decimal(P, S)"; the spec also shows "decimal(P,S)" and asks readers to
  // accept optional whitespace around parameters.
  for (const char* text : {"decimal(10, 2)", "decimal(10,2)", "decimal( 10 , 2 )", "decimal(10 ,2)"}) {
    ASSERT_OK_AND_ASSIGN(auto t, Type::ParsePrimitive(text));
    EXPECT_EQ(t->id(), TypeId::kDecimal) << text;
    EXPECT_EQ(t->precision(), 10) << text;
    EXPECT_EQ(t->scale(), 2) << text;
    EXPECT_EQ(t->ToString(), "decimal(10, 2)") << text;
  }
  ASSERT_OK_AND_ASSIGN(auto max, Type::ParsePrimitive("decimal(38, 0)"));
  EXPECT_EQ(max->precision(), 38);
  EXPECT_EQ(max->scale(), 0);
  ASSERT_OK_AND_ASSIGN(auto all_frac, Type::ParsePrimitive("decimal(9,9)"));
  EXPECT_EQ(all_frac->scale(), 9);
}

TEST(TypesTest, FixedAcceptsOptionalWhitespace) {
  for (const char* text : {"fixed[16]", "fixed[ 16 ]", "fixed[16 ]"}) {
    ASSERT_OK_AND_ASSIGN(auto t, Type::ParsePrimitive(text));
    EXPECT_EQ(t->id(), TypeId::kFixed) << text;
    EXPECT_EQ(t->length(), 16) << text;
    EXPECT_EQ(t->ToString(), "fixed[16]");
  }
}

TEST(TypesTest, GeoTypesKeepTheirParameters) {
  ASSERT_OK_AND_ASSIGN(auto g, Type::ParsePrimitive("geometry(srid:4326)"));
  EXPECT_EQ(g->id(), TypeId::kGeometry);
  EXPECT_EQ(g->geo_params(), "srid:4326");
  EXPECT_EQ(g->ToString(), "geometry(srid:4326)");
  ASSERT_OK_AND_ASSIGN(auto gg, Type::ParsePrimitive("geography(srid:4326, spherical)"));
  EXPECT_EQ(gg->id(), TypeId::kGeography);
  EXPECT_EQ(gg->ToString(), "geography(srid:4326, spherical)");
  // Whitespace around the parameters is not part of them.
  ASSERT_OK_AND_ASSIGN(auto spaced, Type::ParsePrimitive("geometry( srid:4326 )"));
  EXPECT_EQ(spaced->ToString(), "geometry(srid:4326)");
}

TEST(TypesTest, InvalidParametersAreInvalidArgument) {
  EXPECT_ERROR(Type::ParsePrimitive("decimal(39, 2)"), ErrorKind::kInvalidArgument, "decimal(39, 2)");
  EXPECT_ERROR(Type::ParsePrimitive("decimal(0, 0)"), ErrorKind::kInvalidArgument, "decimal(0, 0)");
  EXPECT_ERROR(Type::ParsePrimitive("decimal(5, 6)"), ErrorKind::kInvalidArgument, "decimal(5, 6)");
  EXPECT_ERROR(Type::ParsePrimitive("fixed[0]"), ErrorKind::kInvalidArgument, "fixed[0]");
  // Numbers too large for an int must be an error, not an exception out of std::stoi.
  EXPECT_ERROR(Type::ParsePrimitive("decimal(99999999999999999999, 2)"), ErrorKind::kInvalidArgument,
               "99999999999999999999");
  EXPECT_ERROR(Type::ParsePrimitive("fixed[99999999999999999999]"), ErrorKind::kInvalidArgument,
               "99999999999999999999");
}

TEST(TypesTest, UnknownNamesAreUnsupportedAndNamed) {
  for (const char* text : {"int8", "", "list", "struct", "decimal(10)", "decimal(-1, 2)", "fixed", "fixed[-3]",
                           "timestamp_ms", " long"}) {
    auto r = Type::ParsePrimitive(text);
    EXPECT_FALSE(r.ok()) << text;
    EXPECT_EQ(KindOf(r.status()), ErrorKind::kUnsupported) << text;
    EXPECT_NE(r.status().message().find(std::string("'") + text + "'"), std::string::npos) << r.status().ToString();
  }
}

TEST(TypesTest, NestedToString) {
  auto tags = Type::List(F(3, "ignored", true, Type::String()));
  auto props = Type::Map(F(4, "ignored", false, Type::String()), F(5, "ignored", false, Type::Double()));
  auto st = Type::Struct({F(1, "id", true, Type::Long()), F(2, "tags", false, tags), F(6, "props", false, props)});
  EXPECT_EQ(st->ToString(),
            "struct<1: id: required long, 2: tags: optional list<3: element: required string>, "
            "6: props: optional map<4: key: required string, 5: value: optional double>>");
}

TEST(TypesTest, ListAndMapNameAndRequireTheirChildren) {
  auto list = Type::List(F(7, "x", false, Type::Int()));
  EXPECT_EQ(list->id(), TypeId::kList);
  EXPECT_EQ(list->element().name, "element");
  EXPECT_EQ(list->element().id, 7);
  EXPECT_FALSE(list->element().required);
  // Map keys are always required, whatever the caller passed.
  auto map = Type::Map(F(8, "a", false, Type::String()), F(9, "b", true, Type::Long()));
  EXPECT_EQ(map->key().name, "key");
  EXPECT_TRUE(map->key().required);
  EXPECT_EQ(map->value().name, "value");
  EXPECT_TRUE(map->value().required);
  EXPECT_TRUE(map->is_nested());
  EXPECT_FALSE(map->is_primitive());
}

TEST(TypesTest, EqualsComparesParametersIdsNamesAndRequiredness) {
  EXPECT_TRUE(Type::Decimal(9, 2)->Equals(*Type::Decimal(9, 2)));
  EXPECT_FALSE(Type::Decimal(9, 2)->Equals(*Type::Decimal(9, 3)));
  EXPECT_FALSE(Type::Decimal(9, 2)->Equals(*Type::Decimal(10, 2)));
  EXPECT_TRUE(Type::Fixed(4)->Equals(*Type::Fixed(4)));
  EXPECT_FALSE(Type::Fixed(4)->Equals(*Type::Fixed(5)));
  EXPECT_FALSE(Type::Fixed(16)->Equals(*Type::Uuid()));
  EXPECT_FALSE(Type::Timestamp()->Equals(*Type::TimestampTz()));
  EXPECT_FALSE(Type::Timestamp()->Equals(*Type::TimestampNs()));

  auto a = Type::Struct({F(1, "id", true, Type::Long())});
  EXPECT_TRUE(a->Equals(*Type::Struct({F(1, "id", true, Type::Long())})));
  EXPECT_FALSE(a->Equals(*Type::Struct({F(2, "id", true, Type::Long())})));
  EXPECT_FALSE(a->Equals(*Type::Struct({F(1, "ID", true, Type::Long())})));
  EXPECT_FALSE(a->Equals(*Type::Struct({F(1, "id", false, Type::Long())})));
  EXPECT_FALSE(a->Equals(*Type::Struct({F(1, "id", true, Type::Int())})));
  EXPECT_FALSE(a->Equals(*Type::Struct({F(1, "id", true, Type::Long()), F(2, "x", false, Type::Int())})));
}

TEST(TypesTest, IdentifierTypes) {
  // Spec "Identifier Field IDs": primitive, not float or double.
  for (const auto& t : {Type::Boolean(), Type::Int(), Type::Long(), Type::Decimal(9, 2), Type::Date(), Type::Time(),
                        Type::Timestamp(), Type::TimestampTz(), Type::TimestampNs(), Type::TimestampTzNs(),
                        Type::String(), Type::Uuid(), Type::Fixed(3), Type::Binary()}) {
    EXPECT_TRUE(IsValidIdentifierType(*t)) << t->ToString();
  }
  for (const auto& t : {Type::Float(), Type::Double(), Type::Variant(), Type::Unknown(),
                        Type::Struct({F(1, "a", true, Type::Int())}), Type::List(F(2, "", true, Type::Int()))}) {
    EXPECT_FALSE(IsValidIdentifierType(*t)) << t->ToString();
  }
}

}  // namespace
}  // namespace lakesync::iceberg
