// Table metadata JSON (spec Appendix C, "Table Metadata and Snapshots"): documents written here by
// hand for each format version (our own tables, uuids, snapshot ids and timestamps: uuids from
// uuid4, ids and times picked for this file), parsed, checked field by field, and written back.
#include "lakesync/iceberg/model/json_serde.h"

#include <gtest/gtest.h>

#include <functional>

#include "model_test_util.h"

namespace lakesync::iceberg {
namespace {

using json = nlohmann::json;

// A v1 document as old writers left it: a single "schema" and a bare "partition-spec" field list
// without field ids, no sort orders, no sequence numbers, no refs.
constexpr char kV1[] = R"json({
  "format-version": 1,
  "table-uuid": "6f0d2b7e-8c41-4a39-b5e2-1d97c3a80f64",
  "location": "s3://lakesync-fixtures/warehouse/plant/readings",
  "last-updated-ms": 1741958400123,
  "last-column-id": 3,
  "schema": {"type": "struct", "fields": [
    {"id": 1, "name": "station", "required": true, "type": "long"},
    {"id": 2, "name": "batch", "required": true, "type": "long", "doc": "loader batch number"},
    {"id": 3, "name": "site", "required": false, "type": "string"}]},
  "partition-spec": [
    {"name": "station", "transform": "identity", "source-id": 1},
    {"name": "site_trunc", "transform": "truncate[4]", "source-id": 3}],
  "properties": {"owner": "plant-ops"},
  "current-snapshot-id": 4409381265507713910,
  "snapshots": [
    {"snapshot-id": 7263519047718023521, "timestamp-ms": 1741958000456,
     "summary": {"operation": "append"}, "manifest-list": "s3://lakesync-fixtures/warehouse/plant/readings/metadata/snap-first.avro"},
    {"snapshot-id": 4409381265507713910, "parent-snapshot-id": 7263519047718023521,
     "timestamp-ms": 1741958399001, "summary": {"operation": "overwrite", "added-data-files": "4"},
     "manifest-list": "s3://lakesync-fixtures/warehouse/plant/readings/metadata/snap-second.avro"}]
})json";

// A v2 document in exactly the form lakesync writes it (every key, canonical spelling), so that
// parse-then-write must give it back unchanged.
constexpr char kV2[] = R"json({
  "format-version": 2,
  "table-uuid": "b3a95e10-47cf-4e2d-9f68-0c25d8e71a93",
  "location": "s3://lakesync-fixtures/warehouse/plant/readings",
  "last-sequence-number": 12,
  "last-updated-ms": 1742044800777,
  "last-column-id": 9,
  "current-schema-id": 1,
  "schemas": [
    {"type": "struct", "schema-id": 0, "fields": [
      {"id": 1, "name": "station", "required": true, "type": "long"}]},
    {"type": "struct", "schema-id": 1, "identifier-field-ids": [1, 2], "fields": [
      {"id": 1, "name": "station", "required": true, "type": "long"},
      {"id": 2, "name": "batch", "required": true, "type": "long", "doc": "loader batch number"},
      {"id": 3, "name": "site", "required": true, "type": "decimal(10, 2)"},
      {"id": 4, "name": "labels", "required": false,
       "type": {"type": "list", "element-id": 5, "element": "string", "element-required": true}},
      {"id": 6, "name": "attributes", "required": false,
       "type": {"type": "map", "key-id": 7, "key": "string", "value-id": 8, "value": "fixed[16]",
                "value-required": false}},
      {"id": 9, "name": "captured_at", "required": false, "type": "timestamptz"}]}],
  "default-spec-id": 1,
  "partition-specs": [
    {"spec-id": 0, "fields": [{"name": "station", "transform": "identity", "source-id": 1, "field-id": 1000}]},
    {"spec-id": 1, "fields": [
      {"name": "station", "transform": "identity", "source-id": 1, "field-id": 1000},
      {"name": "captured_day", "transform": "day", "source-id": 9, "field-id": 1001},
      {"name": "batch_bucket", "transform": "bucket[16]", "source-id": 2, "field-id": 1002}]}],
  "last-partition-id": 1002,
  "default-sort-order-id": 3,
  "sort-orders": [
    {"order-id": 0, "fields": []},
    {"order-id": 3, "fields": [
      {"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-first"},
      {"transform": "bucket[4]", "source-id": 3, "direction": "desc", "null-order": "nulls-last"}]}],
  "properties": {"commit.retry.num-retries": "6", "write.format.default": "parquet"},
  "current-snapshot-id": 4409381265507713910,
  "refs": {
    "main": {"snapshot-id": 4409381265507713910, "type": "branch"},
    "staging": {"snapshot-id": 7263519047718023521, "type": "branch", "min-snapshots-to-keep": 3,
              "max-snapshot-age-ms": 172800000, "max-ref-age-ms": 1209600000},
    "release-2025-03": {"snapshot-id": 7263519047718023521, "type": "tag", "max-ref-age-ms": 1209600000}},
  "snapshots": [
    {"snapshot-id": 7263519047718023521, "sequence-number": 11, "timestamp-ms": 1741958000456,
     "summary": {"operation": "append"}, "manifest-list": "s3://lakesync-fixtures/warehouse/plant/readings/metadata/snap-first.avro", "schema-id": 0},
    {"snapshot-id": 4409381265507713910, "parent-snapshot-id": 7263519047718023521, "sequence-number": 12,
     "timestamp-ms": 1741958399001, "summary": {"operation": "delete", "deleted-records": "3"},
     "manifest-list": "s3://lakesync-fixtures/warehouse/plant/readings/metadata/snap-second.avro", "schema-id": 1}],
  "snapshot-log": [
    {"snapshot-id": 7263519047718023521, "timestamp-ms": 1741958000456},
    {"snapshot-id": 4409381265507713910, "timestamp-ms": 1741958399001}],
  "metadata-log": [
    {"metadata-file": "s3://lakesync-fixtures/warehouse/plant/readings/metadata/00000-first.metadata.json", "timestamp-ms": 1741957000000}],
  "statistics": [
    {"snapshot-id": 4409381265507713910, "statistics-path": "s3://lakesync-fixtures/warehouse/plant/readings/metadata/stats-second.puffin",
     "file-size-in-bytes": 1187, "file-footer-size-in-bytes": 95,
     "blob-metadata": [{"type": "apache-datasketches-theta-v1", "snapshot-id": 4409381265507713910,
                        "sequence-number": 12, "fields": [1]}]}],
  "partition-statistics": []
})json";

// A v3 document: next-row-id, row lineage on snapshots, nanosecond and unknown types, defaults,
// "current-snapshot-id": null for a table without snapshots on main.
constexpr char kV3[] = R"json({
  "format-version": 3,
  "table-uuid": "2e87c4f1-9b06-4d5a-8c3e-f71a60b2d945",
  "location": "file:///tmp/t",
  "last-sequence-number": 1,
  "last-updated-ms": 1700000000000,
  "last-column-id": 5,
  "current-schema-id": 0,
  "schemas": [{"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": true, "type": "long"},
    {"id": 2, "name": "ts", "required": false, "type": "timestamp_ns"},
    {"id": 3, "name": "u", "required": false, "type": "unknown"},
    {"id": 4, "name": "flag", "required": false, "type": "boolean", "initial-default": true, "write-default": false},
    {"id": 5, "name": "when", "required": false, "type": "timestamptz_ns",
     "write-default": "2026-01-02T03:04:05.123456789+00:00"}]}],
  "default-spec-id": 0,
  "partition-specs": [{"spec-id": 0, "fields": [
    {"name": "ts_hour", "transform": "hour", "source-id": 2, "field-id": 1000}]}],
  "last-partition-id": 1000,
  "default-sort-order-id": 0,
  "sort-orders": [{"order-id": 0, "fields": []}],
  "properties": {},
  "current-snapshot-id": null,
  "refs": {"dev": {"snapshot-id": 58, "type": "branch"}},
  "snapshots": [
    {"snapshot-id": 58, "sequence-number": 1, "timestamp-ms": 1700000000000,
     "summary": {"operation": "append"}, "manifest-list": "file:///tmp/t/metadata/snap-58.avro",
     "first-row-id": 0, "added-rows": 25}],
  "snapshot-log": [],
  "metadata-log": [],
  "statistics": [],
  "partition-statistics": [],
  "next-row-id": 25,
  "encryption-keys": [{"key-id": "lakesync-key-1", "encrypted-key-metadata": "bGFrZXN5bmMK"}]
})json";

std::shared_ptr<TableMetadata> MustParse(const std::string& text) {
  auto r = ParseTableMetadata(text);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : nullptr;
}

TEST(TableMetadataJsonTest, ParsesV1WithSingleSchemaAndPartitionSpec) {
  auto m = MustParse(kV1);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->format_version, 1);
  EXPECT_EQ(m->table_uuid, "6f0d2b7e-8c41-4a39-b5e2-1d97c3a80f64");
  EXPECT_EQ(m->last_sequence_number, 0);
  EXPECT_EQ(m->last_updated_ms, 1741958400123);
  ASSERT_EQ(m->schemas.size(), 1u);
  EXPECT_EQ(m->current_schema_id, 0);
  ASSERT_NE(m->Schema(), nullptr);
  EXPECT_EQ(m->Schema()->fields().size(), 3u);
  EXPECT_EQ(m->Schema()->FindFieldById(2)->doc, "loader batch number");
  // v1 partition fields get ids 1000, 1001, ... in order.
  ASSERT_EQ(m->partition_specs.size(), 1u);
  EXPECT_EQ(m->default_spec_id, 0);
  const auto& fields = m->Spec()->fields();
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0].field_id, 1000);
  EXPECT_EQ(fields[1].field_id, 1001);
  EXPECT_EQ(fields[1].transform, Transform::Truncate(4));
  EXPECT_EQ(m->last_partition_id, 1001);
  // No sort orders: the unsorted order.
  ASSERT_NE(m->SortOrder(), nullptr);
  EXPECT_TRUE(m->SortOrder()->IsUnsorted());
  EXPECT_EQ(m->default_sort_order_id, 0);
  // Snapshots without sequence numbers read as 0; main follows current-snapshot-id.
  ASSERT_EQ(m->snapshots.size(), 2u);
  EXPECT_EQ(m->snapshots[0]->sequence_number, 0);
  EXPECT_EQ(m->current_snapshot_id, 4409381265507713910);
  ASSERT_EQ(m->refs.count("main"), 1u);
  EXPECT_EQ(m->refs.at("main").snapshot_id, 4409381265507713910);
  EXPECT_EQ(m->SnapshotForRef("main")->snapshot_id, 4409381265507713910);
  EXPECT_EQ(m->CurrentSnapshot()->summary.at("added-data-files"), "4");
  EXPECT_EQ(m->properties.at("owner"), "plant-ops");
}

TEST(TableMetadataJsonTest, V1WithoutSnapshotsUsesMinusOne) {
  json doc = json::parse(kV1);
  doc["current-snapshot-id"] = -1;
  doc["snapshots"] = json::array();
  doc.erase("table-uuid");  // optional in v1
  ASSERT_OK_AND_ASSIGN(auto m, TableMetadataFromJson(doc));
  EXPECT_FALSE(m->current_snapshot_id.has_value());
  EXPECT_EQ(m->CurrentSnapshot(), nullptr);
  EXPECT_TRUE(m->refs.empty());
  EXPECT_EQ(m->table_uuid, "");
}

TEST(TableMetadataJsonTest, V1PrefersSchemasAndSpecsListsWhenPresent) {
  json doc = json::parse(kV1);
  doc["schemas"] = json::array({doc["schema"]});
  doc["schemas"][0]["schema-id"] = 4;
  doc["current-schema-id"] = 4;
  doc["partition-specs"] = json::array({{{"spec-id", 2}, {"fields", json::array()}}});
  doc["default-spec-id"] = 2;
  ASSERT_OK_AND_ASSIGN(auto m, TableMetadataFromJson(doc));
  EXPECT_EQ(m->current_schema_id, 4);
  EXPECT_EQ(m->Schema()->schema_id(), 4);
  EXPECT_EQ(m->default_spec_id, 2);
  EXPECT_TRUE(m->Spec()->fields().empty());
  EXPECT_EQ(m->last_partition_id, 999);
}

TEST(TableMetadataJsonTest, ParsesV2) {
  auto m = MustParse(kV2);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->format_version, 2);
  EXPECT_EQ(m->last_sequence_number, 12);
  EXPECT_EQ(m->last_column_id, 9);
  ASSERT_EQ(m->schemas.size(), 2u);
  const auto schema = m->Schema();
  EXPECT_EQ(schema->schema_id(), 1);
  EXPECT_EQ(schema->identifier_field_ids(), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(schema->FindFieldByName("site")->type->ToString(), "decimal(10, 2)");
  EXPECT_EQ(schema->FindFieldByName("labels.element")->id, 5);
  EXPECT_TRUE(schema->FindFieldByName("labels.element")->required);
  EXPECT_EQ(schema->FindFieldByName("attributes.value")->type->ToString(), "fixed[16]");
  EXPECT_FALSE(schema->FindFieldByName("attributes.value")->required);
  EXPECT_EQ(m->Spec()->spec_id(), 1);
  EXPECT_EQ(m->Spec()->fields()[2].transform, Transform::Bucket(16));
  EXPECT_EQ(m->last_partition_id, 1002);
  ASSERT_NE(m->SortOrder(), nullptr);
  EXPECT_EQ(m->SortOrder()->order_id, 3);
  ASSERT_EQ(m->SortOrder()->fields.size(), 2u);
  EXPECT_EQ(m->SortOrder()->fields[1].direction, SortDirection::kDesc);
  EXPECT_EQ(m->SortOrder()->fields[1].null_order, NullOrder::kNullsLast);
  EXPECT_EQ(m->SortOrder()->fields[1].transform, Transform::Bucket(4));
  EXPECT_EQ(m->refs.size(), 3u);
  const auto& staging = m->refs.at("staging");
  EXPECT_EQ(staging.type, SnapshotRef::Type::kBranch);
  EXPECT_EQ(staging.min_snapshots_to_keep, 3);
  EXPECT_EQ(staging.max_snapshot_age_ms, 172800000);
  EXPECT_EQ(staging.max_ref_age_ms, 1209600000);
  EXPECT_EQ(m->refs.at("release-2025-03").type, SnapshotRef::Type::kTag);
  EXPECT_FALSE(m->refs.at("release-2025-03").min_snapshots_to_keep.has_value());
  const auto current = m->CurrentSnapshot();
  ASSERT_NE(current, nullptr);
  EXPECT_EQ(current->parent_snapshot_id, 7263519047718023521);
  EXPECT_EQ(current->sequence_number, 12);
  EXPECT_EQ(current->operation(), "delete");
  EXPECT_EQ(current->schema_id, 1);
  EXPECT_FALSE(m->snapshots[0]->parent_snapshot_id.has_value());
  EXPECT_EQ(m->snapshot_log.size(), 2u);
  ASSERT_EQ(m->metadata_log.size(), 1u);
  EXPECT_EQ(m->metadata_log[0].metadata_file, "s3://lakesync-fixtures/warehouse/plant/readings/metadata/00000-first.metadata.json");
  ASSERT_EQ(m->statistics.size(), 1u);
  EXPECT_EQ(m->statistics[0]["file-footer-size-in-bytes"], 95);
  EXPECT_EQ(m->properties.size(), 2u);
}

// Required fields that are null must not fall back to a default: `"sequence-number": null` read as 0
// would renumber the snapshot (and change which deletes apply), then be written back as 0.
TEST(TableMetadataJsonTest, NullOrMissingRequiredFieldsAreCorrupt) {
  struct Case {
    std::string where, key;
    bool null;
  } cases[] = {{"snapshot", "sequence-number", true},  {"snapshot", "sequence-number", false},
               {"snapshot", "schema-id", true},        {"snapshot", "timestamp-ms", true},
               {"table", "last-sequence-number", true}, {"table", "table-uuid", true},
               {"table", "last-partition-id", true},   {"table", "current-schema-id", true}};
  for (const auto& c : cases) {
    auto doc = nlohmann::json::parse(kV2);
    auto& target = c.where == "table" ? doc : doc["snapshots"][0];
    if (c.null) {
      target[c.key] = nullptr;
    } else {
      target.erase(c.key);
    }
    auto parsed = ParseTableMetadata(doc.dump());
    ASSERT_FALSE(parsed.ok()) << c.where << " " << c.key << (c.null ? " null" : " missing");
    EXPECT_EQ(KindOf(parsed.status()), ErrorKind::kCorrupt) << parsed.status().ToString();
    EXPECT_NE(parsed.status().message().find(c.key), std::string::npos) << parsed.status().message();
  }
}

TEST(TableMetadataJsonTest, ParsesV3) {
  auto m = MustParse(kV3);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->format_version, 3);
  EXPECT_EQ(m->next_row_id, 25);
  EXPECT_FALSE(m->current_snapshot_id.has_value());
  EXPECT_EQ(m->SnapshotForRef("dev")->snapshot_id, 58);
  EXPECT_EQ(m->SnapshotForRef("main"), nullptr);
  const auto& s = *m->snapshots[0];
  EXPECT_EQ(s.first_row_id, 0);
  EXPECT_EQ(s.added_rows, 25);
  const auto schema = m->Schema();
  EXPECT_EQ(schema->FindFieldByName("ts")->type->id(), TypeId::kTimestampNs);
  EXPECT_EQ(schema->FindFieldByName("u")->type->id(), TypeId::kUnknown);
  EXPECT_EQ(schema->FindFieldByName("when")->type->id(), TypeId::kTimestampTzNs);
  const NestedField* flag = schema->FindFieldByName("flag");
  ASSERT_TRUE(flag->initial_default.has_value());
  EXPECT_EQ(*flag->initial_default, json(true));
  EXPECT_EQ(*flag->write_default, json(false));
  EXPECT_FALSE(schema->FindFieldByName("when")->initial_default.has_value());
  EXPECT_EQ(m->encryption_keys[0]["key-id"], "lakesync-key-1");
}

TEST(TableMetadataJsonTest, V2AndV3DocumentsRoundTripExactly) {
  for (const char* text : {kV2, kV3}) {
    auto m = MustParse(text);
    ASSERT_NE(m, nullptr);
    const json written = TableMetadataToJson(*m);
    EXPECT_EQ(written, json::parse(text)) << written.dump(2);
    // And what we wrote parses to the same thing again.
    ASSERT_OK_AND_ASSIGN(auto again, ParseTableMetadata(SerializeTableMetadata(*m)));
    EXPECT_EQ(TableMetadataToJson(*again), written);
  }
}

TEST(TableMetadataJsonTest, V1RoundTripKeepsEverythingItRead) {
  auto m = MustParse(kV1);
  ASSERT_NE(m, nullptr);
  ASSERT_OK_AND_ASSIGN(auto again, ParseTableMetadata(SerializeTableMetadata(*m)));
  EXPECT_EQ(TableMetadataToJson(*again), TableMetadataToJson(*m));
  const json written = TableMetadataToJson(*m);
  EXPECT_EQ(written["partition-specs"][0]["fields"][1]["field-id"], 1001);
  EXPECT_EQ(written["last-partition-id"], 1001);
}

TEST(TableMetadataJsonTest, NoCurrentSnapshotIsMinusOneBeforeV3AndNullInV3) {
  json v2 = json::parse(kV2);
  v2["current-snapshot-id"] = -1;
  v2["refs"] = json::object();
  ASSERT_OK_AND_ASSIGN(auto m2, TableMetadataFromJson(v2));
  EXPECT_FALSE(m2->current_snapshot_id.has_value());
  EXPECT_EQ(TableMetadataToJson(*m2)["current-snapshot-id"], -1);
  // A missing key means the same.
  v2.erase("current-snapshot-id");
  ASSERT_OK_AND_ASSIGN(auto m2b, TableMetadataFromJson(v2));
  EXPECT_FALSE(m2b->current_snapshot_id.has_value());

  json v3 = json::parse(kV3);
  v3["current-snapshot-id"] = -1;  // readers accept -1 in v3 too
  ASSERT_OK_AND_ASSIGN(auto m3, TableMetadataFromJson(v3));
  EXPECT_FALSE(m3->current_snapshot_id.has_value());
  EXPECT_TRUE(TableMetadataToJson(*m3)["current-snapshot-id"].is_null());
}

TEST(TableMetadataJsonTest, MissingRequiredKeysAreCorruptAndNamed) {
  const std::vector<std::string> v2_required = {
      "format-version", "table-uuid",        "location",        "last-sequence-number", "last-updated-ms",
      "last-column-id", "schemas",           "current-schema-id", "partition-specs",    "default-spec-id",
      "last-partition-id", "sort-orders",    "default-sort-order-id"};
  for (const auto& key : v2_required) {
    json doc = json::parse(kV2);
    doc.erase(key);
    auto r = TableMetadataFromJson(doc);
    ASSERT_FALSE(r.ok()) << "without " << key;
    EXPECT_EQ(KindOf(r.status()), ErrorKind::kCorrupt) << key << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find("'" + key + "'"), std::string::npos) << r.status().ToString();
  }
  json v3 = json::parse(kV3);
  v3.erase("next-row-id");
  EXPECT_ERROR(TableMetadataFromJson(v3), ErrorKind::kCorrupt, "'next-row-id'");
  // A null value is as good as a missing one.
  json null_loc = json::parse(kV2);
  null_loc["location"] = nullptr;
  EXPECT_ERROR(TableMetadataFromJson(null_loc), ErrorKind::kCorrupt, "'location'");
  // v1 needs its schema and its fields in either spelling.
  json v1 = json::parse(kV1);
  v1.erase("schema");
  EXPECT_ERROR(TableMetadataFromJson(v1), ErrorKind::kCorrupt, "'schemas'");
  json v1b = json::parse(kV1);
  v1b.erase("partition-spec");
  EXPECT_ERROR(TableMetadataFromJson(v1b), ErrorKind::kCorrupt, "'partition-specs'");
}

TEST(TableMetadataJsonTest, MistypedKeysAreCorruptAndNamed) {
  json doc = json::parse(kV2);
  doc["last-column-id"] = "9";
  EXPECT_ERROR(TableMetadataFromJson(doc), ErrorKind::kCorrupt, "'last-column-id'");
  json doc2 = json::parse(kV2);
  doc2["location"] = 5;
  EXPECT_ERROR(TableMetadataFromJson(doc2), ErrorKind::kCorrupt, "'location'");
  json doc3 = json::parse(kV2);
  doc3["schemas"][1]["fields"][0]["required"] = "yes";
  EXPECT_ERROR(TableMetadataFromJson(doc3), ErrorKind::kCorrupt, "'required'");
  // Numbers out of range for the field are corrupt, never silently wrapped (4294967297 is not 1).
  json doc4 = json::parse(kV2);
  doc4["last-column-id"] = 4294967305LL;
  EXPECT_ERROR(TableMetadataFromJson(doc4), ErrorKind::kCorrupt, "'last-column-id'");
  json doc5 = json::parse(kV2);
  doc5["schemas"][0]["fields"][0]["id"] = 4294967297LL;
  EXPECT_ERROR(TableMetadataFromJson(doc5), ErrorKind::kCorrupt, "'id'");
  json doc6 = json::parse(kV2);
  doc6["snapshots"][0]["snapshot-id"] = json::parse("18446744073709551615");
  EXPECT_ERROR(TableMetadataFromJson(doc6), ErrorKind::kCorrupt, "'snapshot-id'");
}

TEST(TableMetadataJsonTest, MissingNestedKeysAreNamed) {
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& d) { d["snapshots"][1].erase("timestamp-ms"); }, "'timestamp-ms'"},
      {[](json& d) { d["snapshots"][1].erase("manifest-list"); }, "'manifest-list'"},
      {[](json& d) { d["snapshots"][0].erase("snapshot-id"); }, "'snapshot-id'"},
      {[](json& d) { d["schemas"][1]["fields"][1].erase("name"); }, "'name'"},
      {[](json& d) { d["schemas"][1]["fields"][1].erase("type"); }, "'type'"},
      {[](json& d) { d["schemas"][1]["fields"][3]["type"].erase("element-id"); }, "'element-id'"},
      {[](json& d) { d["schemas"][1]["fields"][4]["type"].erase("value-required"); }, "'value-required'"},
      {[](json& d) { d["partition-specs"][1]["fields"][1].erase("transform"); }, "'transform'"},
      {[](json& d) { d["partition-specs"][1]["fields"][1].erase("source-id"); }, "'source-id'"},
      {[](json& d) { d["partition-specs"][1].erase("spec-id"); }, "'spec-id'"},
      {[](json& d) { d["sort-orders"][1]["fields"][0].erase("direction"); }, "'direction'"},
      {[](json& d) { d["sort-orders"][1]["fields"][0]["null-order"] = "first"; }, "'first'"},
      {[](json& d) { d["refs"]["staging"].erase("type"); }, "'type'"},
      {[](json& d) { d["refs"]["staging"]["type"] = "bookmark"; }, "'bookmark'"},
      {[](json& d) { d["snapshot-log"][0].erase("timestamp-ms"); }, "'timestamp-ms'"},
      {[](json& d) { d["metadata-log"][0].erase("metadata-file"); }, "'metadata-file'"},
      {[](json& d) { d["schemas"][1]["fields"][2]["type"] = "decimal(50, 2)"; }, "decimal(50, 2)"},
  };
  for (const auto& [mutate, needle] : cases) {
    json doc = json::parse(kV2);
    mutate(doc);
    auto r = TableMetadataFromJson(doc);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().ToString();
  }
}

TEST(TableMetadataJsonTest, NewerFormatVersionsAreUnsupported) {
  json doc = json::parse(kV3);
  doc["format-version"] = 4;
  EXPECT_ERROR(TableMetadataFromJson(doc), ErrorKind::kUnsupported, "format-version 4");
  doc["format-version"] = 0;
  EXPECT_ERROR(TableMetadataFromJson(doc), ErrorKind::kUnsupported, "format-version 0");
}

TEST(TableMetadataJsonTest, InvalidJsonIsCorrupt) {
  EXPECT_ERROR(ParseTableMetadata("{\"format-version\": 2,"), ErrorKind::kCorrupt, "JSON");
  EXPECT_ERROR(ParseTableMetadata("[]"), ErrorKind::kCorrupt, "not a JSON object");
}

TEST(TableMetadataJsonTest, InlineManifestsOfV1AreReadAndKept) {
  json doc = json::parse(kV1);
  doc["snapshots"][0].erase("manifest-list");
  doc["snapshots"][0]["manifests"] = json::array({"s3://a/m1.avro", "s3://a/m2.avro"});
  ASSERT_OK_AND_ASSIGN(auto metadata, TableMetadataFromJson(doc));
  const auto& snapshot = *metadata->snapshots.at(0);
  EXPECT_TRUE(snapshot.manifest_list.empty());
  EXPECT_EQ(snapshot.manifests, (std::vector<std::string>{"s3://a/m1.avro", "s3://a/m2.avro"}));
  // Written back in the same form (an upgraded v1 table keeps its old snapshots readable).
  const json again = SnapshotToJson(snapshot);
  EXPECT_EQ(again["manifests"], doc["snapshots"][0]["manifests"]);
  EXPECT_FALSE(again.contains("manifest-list"));
  // Anything but a list of paths is corrupt.
  doc["snapshots"][0]["manifests"] = json::array({1});
  EXPECT_ERROR(TableMetadataFromJson(doc), ErrorKind::kCorrupt, "manifests");
}

TEST(SchemaJsonTest, NestedTypesRoundTrip) {
  json doc = json::parse(kV2)["schemas"][1];
  ASSERT_OK_AND_ASSIGN(auto schema, SchemaFromJson(doc));
  EXPECT_EQ(SchemaToJson(*schema), doc);
  // A struct inside a list inside a map value.
  const json nested = {{"type", "struct"}, {"schema-id", 3}, {"fields", json::array({
      {{"id", 1}, {"name", "m"}, {"required", true}, {"type", {
          {"type", "map"}, {"key-id", 2}, {"key", "int"}, {"value-id", 3}, {"value-required", true}, {"value", {
              {"type", "list"}, {"element-id", 4}, {"element-required", false}, {"element", {
                  {"type", "struct"}, {"fields", json::array({
                      {{"id", 5}, {"name", "a"}, {"required", false}, {"type", "uuid"}}})}}}}}}}}})}};
  ASSERT_OK_AND_ASSIGN(auto s2, SchemaFromJson(nested));
  EXPECT_EQ(SchemaToJson(*s2), nested);
  EXPECT_EQ(s2->FindColumnName(5), "m.value.element.a");
  EXPECT_EQ(s2->HighestFieldId(), 5);
}

TEST(SchemaJsonTest, TypeStringsFromOtherWritersAreAccepted) {
  const json doc = {{"type", "struct"}, {"fields", json::array({
      {{"id", 1}, {"name", "a"}, {"required", false}, {"type", "decimal(9,2)"}},
      {{"id", 2}, {"name", "b"}, {"required", false}, {"type", "fixed[ 4 ]"}}})}};
  ASSERT_OK_AND_ASSIGN(auto s, SchemaFromJson(doc));
  EXPECT_EQ(s->schema_id(), 0);  // v1 schemas may omit it
  const json out = SchemaToJson(*s);
  EXPECT_EQ(out["fields"][0]["type"], "decimal(9, 2)");
  EXPECT_EQ(out["fields"][1]["type"], "fixed[4]");
}

TEST(PartitionSpecJsonTest, FieldsArrayAndSourceIds) {
  const json spec = {{"spec-id", 7}, {"fields", json::array({
      {{"name", "b"}, {"transform", "bucket[3]"}, {"source-ids", json::array({2})}, {"field-id", 1004}}})}};
  ASSERT_OK_AND_ASSIGN(auto s, PartitionSpecFromJson(spec));
  EXPECT_EQ(s->spec_id(), 7);
  EXPECT_EQ(s->fields()[0].source_id, 2);
  EXPECT_EQ(PartitionFieldsToJson(*s)[0]["source-id"], 2);
  EXPECT_EQ(PartitionSpecToJson(*s)["spec-id"], 7);
  // Multi-argument transforms are not supported; a malformed source-ids must be an error, not a throw.
  json multi = spec;
  multi["fields"][0]["source-ids"] = json::array({1, 2});
  EXPECT_ERROR(PartitionSpecFromJson(multi), ErrorKind::kCorrupt, "source-id");
  json bad = spec;
  bad["fields"][0]["source-ids"] = json::array({"x"});
  EXPECT_FALSE(PartitionSpecFromJson(bad).ok());
  json bad_sort = {{"order-id", 1}, {"fields", json::array({{{"transform", "identity"}, {"source-ids", {"x"}},
                                                             {"direction", "asc"}, {"null-order", "nulls-first"}}})}};
  EXPECT_FALSE(SortOrderFromJson(bad_sort).ok());
}

TEST(SnapshotJsonTest, OptionalFieldsAreOmittedWhenAbsent) {
  Snapshot s;
  s.snapshot_id = 5;
  s.sequence_number = 2;
  s.timestamp_ms = 1000;
  s.manifest_list = "m.avro";
  s.summary = {{"operation", "append"}};
  const json j = SnapshotToJson(s);
  EXPECT_FALSE(j.contains("parent-snapshot-id"));
  EXPECT_FALSE(j.contains("first-row-id"));
  EXPECT_FALSE(j.contains("schema-id"));
  s.parent_snapshot_id = 4;
  s.first_row_id = 10;
  s.added_rows = 3;
  s.key_id = 9;
  ASSERT_OK_AND_ASSIGN(auto back, SnapshotFromJson(SnapshotToJson(s)));
  EXPECT_EQ(back->parent_snapshot_id, 4);
  EXPECT_EQ(back->first_row_id, 10);
  EXPECT_EQ(back->added_rows, 3);
  EXPECT_EQ(back->key_id, 9);
  // Summary values that are not strings are kept as their JSON text.
  json odd = SnapshotToJson(s);
  odd["summary"]["added-records"] = 5;
  ASSERT_OK_AND_ASSIGN(auto o, SnapshotFromJson(odd));
  EXPECT_EQ(o->summary.at("added-records"), "5");
}

}  // namespace
}  // namespace lakesync::iceberg
