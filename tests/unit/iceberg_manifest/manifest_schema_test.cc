// The writer schemas against the spec's tables ("Manifests", "Manifest Lists", Appendix A). The
// expected ids, names and requiredness below are transcribed from format/spec.md.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "lakesync/iceberg/manifest/manifest_avro_internal.h"
#include "manifest_test_util.h"

namespace lakesync::iceberg {
namespace {

using nlohmann::json;

struct Expected {
  std::string name;
  bool required;
};

// Walks a record and checks that every field has an id, optional fields are ["null", T] with a null
// default, and arrays carry element ids or are int-keyed maps with k<key>_v<value> records.
void CheckRecord(const json& record, std::map<int, std::pair<std::string, bool>>* seen) {
  ASSERT_EQ(record["type"], "record");
  for (const auto& field : record["fields"]) {
    ASSERT_TRUE(field.contains("field-id")) << field.dump();
    const int id = field["field-id"].get<int>();
    json type = field["type"];
    const bool optional = type.is_array();
    if (optional) {
      ASSERT_EQ(type.size(), 2u) << field.dump();
      EXPECT_EQ(type[0], "null") << field.dump();
      ASSERT_TRUE(field.contains("default")) << field.dump();
      EXPECT_TRUE(field["default"].is_null()) << field.dump();
      type = type[1];
    }
    (*seen)[id] = {field["name"].get<std::string>(), !optional};
    if (type.is_object() && type["type"] == "array") {
      if (type.value("logicalType", "") == "map") {
        const json& kv = type["items"];
        ASSERT_EQ(kv["fields"].size(), 2u);
        const int key_id = kv["fields"][0]["field-id"].get<int>();
        const int value_id = kv["fields"][1]["field-id"].get<int>();
        EXPECT_EQ(kv["name"], "k" + std::to_string(key_id) + "_v" + std::to_string(value_id));
        EXPECT_EQ(kv["fields"][0]["name"], "key");
        EXPECT_EQ(kv["fields"][0]["type"], "int");
        EXPECT_EQ(kv["fields"][1]["name"], "value");
        (*seen)[key_id] = {"key", true};
        (*seen)[value_id] = {"value", true};
      } else {
        ASSERT_TRUE(type.contains("element-id")) << field.dump();
        (*seen)[type["element-id"].get<int>()] = {"element", true};
        if (type["items"].is_object() && type["items"]["type"] == "record") CheckRecord(type["items"], seen);
      }
    } else if (type.is_object() && type["type"] == "record") {
      CheckRecord(type, seen);
    }
  }
}

const std::map<int, Expected>& DataFileFieldsV2() {
  static const std::map<int, Expected> fields = {
      {134, {"content", true}},           {100, {"file_path", true}},        {101, {"file_format", true}},
      {102, {"partition", true}},         {103, {"record_count", true}},     {104, {"file_size_in_bytes", true}},
      {108, {"column_sizes", false}},     {109, {"value_counts", false}},    {110, {"null_value_counts", false}},
      {137, {"nan_value_counts", false}}, {125, {"lower_bounds", false}},    {128, {"upper_bounds", false}},
      {131, {"key_metadata", false}},     {132, {"split_offsets", false}},   {135, {"equality_ids", false}},
      {140, {"sort_order_id", false}},    {143, {"referenced_data_file", false}},
      {117, {"key", true}},  {118, {"value", true}},  {119, {"key", true}}, {120, {"value", true}},
      {121, {"key", true}},  {122, {"value", true}},  {138, {"key", true}}, {139, {"value", true}},
      {126, {"key", true}},  {127, {"value", true}},  {129, {"key", true}}, {130, {"value", true}},
      {133, {"element", true}}, {136, {"element", true}},
      {0, {"status", true}}, {1, {"snapshot_id", false}}, {3, {"sequence_number", false}},
      {4, {"file_sequence_number", false}}, {2, {"data_file", true}},
  };
  return fields;
}

TEST(ManifestSchemaTest, EntrySchemaHasEveryIdTheSpecAssigns) {
  auto spec = testing::AllTransformsSpec();
  auto schema = testing::AllTypesSchema();
  ASSERT_OK_AND_ASSIGN(auto partition_type, spec->PartitionType(*schema));
  for (int version : {2, 3}) {
    ASSERT_OK_AND_ASSIGN(std::string text, internal::ManifestEntrySchemaJson(version, *partition_type));
    const json entry = json::parse(text);
    EXPECT_EQ(entry["name"], "manifest_entry");
    std::map<int, std::pair<std::string, bool>> seen;
    CheckRecord(entry, &seen);
    std::map<int, Expected> expected = DataFileFieldsV2();
    if (version == 3) {
      expected[142] = {"first_row_id", false};
      expected[144] = {"content_offset", false};
      expected[145] = {"content_size_in_bytes", false};
    }
    for (const auto& f : spec->fields()) expected[f.field_id] = {f.name, false};
    // Partition field names are made Avro-compatible; the Iceberg name is kept alongside.
    expected[1023].name = "dec_x2Dtrunc";
    for (const auto& [id, e] : expected) {
      auto it = seen.find(id);
      ASSERT_NE(it, seen.end()) << "v" << version << " lacks field id " << id;
      EXPECT_EQ(it->second.first, e.name) << "field id " << id;
      EXPECT_EQ(it->second.second, e.required) << "field id " << id;
    }
    EXPECT_EQ(seen.size(), expected.size()) << "v" << version << " has fields the spec does not list";
    for (int deprecated : {105, 106, 107, 111, 141}) EXPECT_EQ(seen.count(deprecated), 0u) << deprecated;

    const json& data_file = entry["fields"][4]["type"];
    EXPECT_EQ(data_file["name"], "r2");
    const json& partition = data_file["fields"][3]["type"];
    EXPECT_EQ(partition["name"], "r102");
    EXPECT_EQ(partition["fields"][23]["iceberg-field-name"], "dec-trunc");
  }
}

// Appendix A: the Avro type of each partition result type.
TEST(ManifestSchemaTest, PartitionFieldsUseTheTransformResultTypes) {
  auto spec = testing::AllTransformsSpec();
  ASSERT_OK_AND_ASSIGN(auto partition_type, spec->PartitionType(*testing::AllTypesSchema()));
  ASSERT_OK_AND_ASSIGN(std::string text, internal::ManifestEntrySchemaJson(2, *partition_type));
  const json partition = json::parse(text)["fields"][4]["type"]["fields"][3]["type"]["fields"];
  auto type_of = [&](size_t i) { return partition[i]["type"][1]; };
  EXPECT_EQ(type_of(0), "boolean");
  EXPECT_EQ(type_of(1), "int");
  EXPECT_EQ(type_of(2), "long");
  EXPECT_EQ(type_of(3), "float");
  EXPECT_EQ(type_of(4), "double");
  EXPECT_EQ(type_of(5), (json{{"type", "fixed"}, {"name", "decimal_9_2"}, {"size", 4}, {"logicalType", "decimal"},
                              {"precision", 9}, {"scale", 2}}));
  EXPECT_EQ(type_of(6), (json{{"type", "int"}, {"logicalType", "date"}}));
  EXPECT_EQ(type_of(7), (json{{"type", "long"}, {"logicalType", "time-micros"}}));
  EXPECT_EQ(type_of(8), (json{{"type", "long"}, {"logicalType", "timestamp-micros"}, {"adjust-to-utc", false}}));
  EXPECT_EQ(type_of(9), (json{{"type", "long"}, {"logicalType", "timestamp-micros"}, {"adjust-to-utc", true}}));
  EXPECT_EQ(type_of(10), "string");
  EXPECT_EQ(type_of(11), (json{{"type", "fixed"}, {"name", "uuid_fixed"}, {"size", 16}, {"logicalType", "uuid"}}));
  EXPECT_EQ(type_of(12), (json{{"type", "fixed"}, {"name", "fixed_3"}, {"size", 3}}));
  EXPECT_EQ(type_of(13), "bytes");
  EXPECT_EQ(type_of(14)["size"], 16);  // decimal(38, 10)
  EXPECT_EQ(type_of(15), (json{{"type", "long"}, {"logicalType", "timestamp-nanos"}, {"adjust-to-utc", false}}));
  EXPECT_EQ(type_of(16), (json{{"type", "int"}, {"logicalType", "date"}}));  // day
  EXPECT_EQ(type_of(17), "int");                                              // month
  EXPECT_EQ(type_of(18), "int");                                              // hour
  EXPECT_EQ(type_of(19), "int");                                              // year
  EXPECT_EQ(type_of(20), "int");                                              // bucket
  EXPECT_EQ(type_of(21), "string");                                           // truncate of a string
  EXPECT_EQ(type_of(22), "long");                                             // void keeps the source type
  EXPECT_EQ(type_of(23), "decimal_9_2");  // the second decimal(9, 2) refers to the first definition
}

TEST(ManifestSchemaTest, UnpartitionedSpecGivesAnEmptyR102) {
  auto spec = PartitionSpec::Unpartitioned();
  ASSERT_OK_AND_ASSIGN(auto partition_type, spec->PartitionType(*testing::AllTypesSchema()));
  ASSERT_OK_AND_ASSIGN(std::string text, internal::ManifestEntrySchemaJson(3, *partition_type));
  const json partition = json::parse(text)["fields"][4]["type"]["fields"][3];
  EXPECT_EQ(partition["field-id"], 102);
  EXPECT_EQ(partition["type"], (json{{"type", "record"}, {"name", "r102"}, {"fields", json::array()}}));
}

TEST(ManifestSchemaTest, DecimalRequiredBytes) {
  // The fewest bytes whose signed range holds every P-digit value (spec Appendix A).
  EXPECT_EQ(internal::DecimalRequiredBytes(1), 1);
  EXPECT_EQ(internal::DecimalRequiredBytes(2), 1);
  EXPECT_EQ(internal::DecimalRequiredBytes(3), 2);
  EXPECT_EQ(internal::DecimalRequiredBytes(9), 4);
  EXPECT_EQ(internal::DecimalRequiredBytes(10), 5);
  EXPECT_EQ(internal::DecimalRequiredBytes(18), 8);
  EXPECT_EQ(internal::DecimalRequiredBytes(19), 9);
  EXPECT_EQ(internal::DecimalRequiredBytes(38), 16);
}

TEST(ManifestSchemaTest, ManifestListSchemaHasEveryIdTheSpecAssigns) {
  for (int version : {2, 3}) {
    ASSERT_OK_AND_ASSIGN(std::string text, internal::ManifestListSchemaJson(version));
    const json list = json::parse(text);
    EXPECT_EQ(list["name"], "manifest_file");
    std::map<int, std::pair<std::string, bool>> seen;
    CheckRecord(list, &seen);
    std::map<int, Expected> expected = {
        {500, {"manifest_path", true}},       {501, {"manifest_length", true}},
        {502, {"partition_spec_id", true}},   {517, {"content", true}},
        {515, {"sequence_number", true}},     {516, {"min_sequence_number", true}},
        {503, {"added_snapshot_id", true}},   {504, {"added_files_count", true}},
        {505, {"existing_files_count", true}}, {506, {"deleted_files_count", true}},
        {512, {"added_rows_count", true}},    {513, {"existing_rows_count", true}},
        {514, {"deleted_rows_count", true}},  {507, {"partitions", false}},
        {508, {"element", true}},             {509, {"contains_null", true}},
        {518, {"contains_nan", false}},       {510, {"lower_bound", false}},
        {511, {"upper_bound", false}},        {519, {"key_metadata", false}},
    };
    if (version == 3) expected[520] = {"first_row_id", false};
    for (const auto& [id, e] : expected) {
      auto it = seen.find(id);
      ASSERT_NE(it, seen.end()) << "v" << version << " lacks field id " << id;
      EXPECT_EQ(it->second.first, e.name) << "field id " << id;
      EXPECT_EQ(it->second.second, e.required) << "field id " << id;
    }
    EXPECT_EQ(seen.size(), expected.size());
    EXPECT_EQ(list["fields"][13]["type"][1]["items"]["name"], "r508");
  }
}

}  // namespace
}  // namespace lakesync::iceberg
