// User schema files (`lakesync table create --schema FILE`): with or without field ids, JSON or YAML.
#include "lakesync/iceberg/model/schema_document.h"

#include <gtest/gtest.h>

#include "model_test_util.h"

namespace lakesync::iceberg {
namespace {

TEST(SchemaDocumentTest, AssignsIdsLikeJavaWhenNoneAreGiven) {
  // Each struct's own fields first, then their children: id=1, addr=2, tags=3, attrs=4, addr.city=5,
  // addr.zip=6, tags.element=7, attrs.key=8, attrs.value=9, attrs.value.element=10.
  constexpr char kDoc[] = R"json({
    "fields": [
      {"name": "id", "type": "long", "required": true},
      {"name": "addr", "type": {"type": "struct", "fields": [
        {"name": "city", "type": "string"}, {"name": "zip", "type": "decimal(5, 0)", "required": true}]}},
      {"name": "tags", "type": {"type": "list", "element": "string"}},
      {"name": "attrs", "type": {"type": "map", "key": "string",
                                 "value": {"type": "list", "element": "int", "element-required": true}}}],
    "identifier-fields": ["id"]
  })json";
  ASSERT_OK_AND_ASSIGN(auto s, ParseSchemaDocument(kDoc, "schema.json"));
  const std::vector<std::pair<std::string, int32_t>> expected = {
      {"id", 1},   {"addr", 2},          {"tags", 3},      {"attrs", 4},       {"addr.city", 5},
      {"addr.zip", 6}, {"tags.element", 7}, {"attrs.key", 8}, {"attrs.value", 9}, {"attrs.value.element", 10}};
  for (const auto& [name, id] : expected) {
    const NestedField* f = s->FindFieldByName(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->id, id) << name;
  }
  // Omitted "required" means optional; list elements and map values default to optional too.
  EXPECT_TRUE(s->FindFieldByName("id")->required);
  EXPECT_FALSE(s->FindFieldByName("addr")->required);
  EXPECT_TRUE(s->FindFieldByName("addr.zip")->required);
  EXPECT_FALSE(s->FindFieldByName("tags.element")->required);
  EXPECT_TRUE(s->FindFieldByName("attrs.key")->required);
  EXPECT_FALSE(s->FindFieldByName("attrs.value")->required);
  EXPECT_TRUE(s->FindFieldByName("attrs.value.element")->required);
  EXPECT_EQ(s->identifier_field_ids(), (std::vector<int32_t>{1}));
  EXPECT_EQ(s->HighestFieldId(), 10);
}

TEST(SchemaDocumentTest, YamlWorksToo) {
  constexpr char kYaml[] = R"yaml(
fields:
  - name: id
    type: long
    required: true
  - name: amount
    type: decimal(10, 2)
identifier-fields: [id]
)yaml";
  ASSERT_OK_AND_ASSIGN(auto s, ParseSchemaDocument(kYaml, "schema.yaml"));
  EXPECT_EQ(s->fields().size(), 2u);
  EXPECT_EQ(s->FindFieldByName("amount")->type->ToString(), "decimal(10, 2)");
  EXPECT_EQ(s->FindFieldByName("amount")->id, 2);
  EXPECT_EQ(s->identifier_field_ids(), (std::vector<int32_t>{1}));
}

TEST(SchemaDocumentTest, KeepsIdsWhenTheDocumentHasThem) {
  constexpr char kDoc[] = R"json({"type": "struct", "schema-id": 4, "identifier-field-ids": [7], "fields": [
      {"id": 7, "name": "id", "type": "long", "required": true},
      {"id": 9, "name": "v", "type": "string", "required": false}]})json";
  ASSERT_OK_AND_ASSIGN(auto s, ParseSchemaDocument(kDoc, "schema.json"));
  EXPECT_EQ(s->schema_id(), 4);
  EXPECT_EQ(s->FindFieldByName("v")->id, 9);
  EXPECT_EQ(s->identifier_field_ids(), (std::vector<int32_t>{7}));
}

TEST(SchemaDocumentTest, ErrorsNameTheSourceAndTheProblem) {
  EXPECT_ERROR(ParseSchemaDocument(R"({"columns": []})", "s.json"), ErrorKind::kInvalidArgument, "s.json");
  EXPECT_ERROR(ParseSchemaDocument(R"({"fields": [{"name": "a", "type": "long"}], "identifier-fields": ["b"]})",
                                   "s.json"),
               ErrorKind::kInvalidArgument, "'b'");
  // An optional identifier field fails schema validation.
  EXPECT_ERROR(ParseSchemaDocument(R"({"fields": [{"name": "a", "type": "long"}], "identifier-fields": ["a"]})",
                                   "s.json"),
               ErrorKind::kInvalidArgument, "must be required");
  EXPECT_ERROR(ParseSchemaDocument(R"({"fields": [{"name": "a"}]})", "s.json"), ErrorKind::kInvalidArgument,
               "'a' has no type");
  EXPECT_FALSE(ParseSchemaDocument(R"({"fields": [{"name": "a", "type": "int64"}]})", "s.json").ok());
  EXPECT_FALSE(ParseSchemaDocument("fields: [", "s.yaml").ok());
  // Wrongly typed values must come back as errors, not escape as exceptions.
  EXPECT_FALSE(ParseSchemaDocument(R"({"fields": [{"name": "a", "type": "long"}], "identifier-fields": [1]})",
                                   "s.json")
                   .ok());
  EXPECT_FALSE(ParseSchemaDocument(R"({"fields": [{"name": "a", "type": {"type": 5}}]})", "s.json").ok());
  EXPECT_FALSE(ParseSchemaDocument(R"({"fields": [{"name": 5}]})", "s.json").ok());
}

}  // namespace
}  // namespace lakesync::iceberg
