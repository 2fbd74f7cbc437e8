// Content files as JSON: every field of a data file, a deletion vector and an equality delete file
// survives a round trip exactly (partition values typed by the spec, bounds as bytes), and malformed
// documents are refused naming the key.
#include <gtest/gtest.h>

#include "lakesync/iceberg/model/content_file_json.h"
#include "lakesync/iceberg/model/json_serde.h"
#include "lakesync/iceberg/model/spec_syntax.h"
#include "model_test_util.h"

namespace lakesync::iceberg {
namespace {

std::shared_ptr<TableMetadata> Metadata() {
  auto schema = SchemaFromJson(nlohmann::json::parse(R"json({"type": "struct", "schema-id": 0, "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "day", "required": false, "type": "date"},
      {"id": 3, "name": "name", "required": false, "type": "string"},
      {"id": 4, "name": "price", "required": false, "type": "decimal(9, 2)"}]})json")).ValueOrDie();
  auto metadata = std::make_shared<TableMetadata>();
  metadata->format_version = 3;
  metadata->schemas = {schema};
  auto spec = ParsePartitionFields({"bucket(id, 8)", "day", "truncate(name, 2)"}, *schema).ValueOrDie();
  metadata->partition_specs = {spec, std::make_shared<PartitionSpec>(1, std::vector<PartitionField>{})};
  metadata->default_spec_id = spec->spec_id();
  return metadata;
}

DataFile Sample() {
  DataFile f;
  f.file_path = "file:///wh/db/t/data/00000-0-a.parquet";
  f.spec_id = 0;
  f.partition = {Literal(int32_t{5}), Literal(int32_t{19000}), Literal(std::string("ab"))};
  f.record_count = 42;
  f.file_size_in_bytes = 4242;
  f.column_sizes = {{1, 100}, {3, 50}};
  f.value_counts = {{1, 42}, {3, 42}};
  f.null_value_counts = {{1, 0}, {3, 7}};
  f.nan_value_counts = {};
  f.lower_bounds = {{1, std::string("\x01\x00\x00\x00\x00\x00\x00\x00", 8)}, {3, "ab"}};
  f.upper_bounds = {{1, std::string("\xff\x00\x00\x00\x00\x00\x00\x80", 8)}, {3, "ab\xff"}};
  f.split_offsets = {4};
  f.sort_order_id = 0;
  f.first_row_id = 1000;
  f.key_metadata = std::string("\x00\x01", 2);
  return f;
}

void ExpectSame(const DataFile& a, const DataFile& b) {
  EXPECT_EQ(a.content, b.content);
  EXPECT_EQ(a.file_path, b.file_path);
  EXPECT_EQ(a.file_format, b.file_format);
  EXPECT_EQ(a.spec_id, b.spec_id);
  EXPECT_EQ(a.partition, b.partition);
  EXPECT_EQ(a.record_count, b.record_count);
  EXPECT_EQ(a.file_size_in_bytes, b.file_size_in_bytes);
  EXPECT_EQ(a.column_sizes, b.column_sizes);
  EXPECT_EQ(a.value_counts, b.value_counts);
  EXPECT_EQ(a.null_value_counts, b.null_value_counts);
  EXPECT_EQ(a.nan_value_counts, b.nan_value_counts);
  EXPECT_EQ(a.lower_bounds, b.lower_bounds);
  EXPECT_EQ(a.upper_bounds, b.upper_bounds);
  EXPECT_EQ(a.key_metadata, b.key_metadata);
  EXPECT_EQ(a.split_offsets, b.split_offsets);
  EXPECT_EQ(a.equality_ids, b.equality_ids);
  EXPECT_EQ(a.sort_order_id, b.sort_order_id);
  EXPECT_EQ(a.first_row_id, b.first_row_id);
  EXPECT_EQ(a.referenced_data_file, b.referenced_data_file);
  EXPECT_EQ(a.content_offset, b.content_offset);
  EXPECT_EQ(a.content_size_in_bytes, b.content_size_in_bytes);
}

DataFile RoundTrip(const DataFile& f, const TableMetadata& m) {
  auto json = ContentFileToJson(f, m);
  EXPECT_TRUE(json.ok()) << json.status().ToString();
  // Through text, as between processes.
  auto back = ContentFileFromJson(nlohmann::json::parse(json->dump()), m);
  EXPECT_TRUE(back.ok()) << back.status().ToString();
  return back.ValueOr(DataFile{});
}

TEST(ContentFileJsonTest, DataFilesRoundTripExactly) {
  auto m = Metadata();
  auto f = Sample();
  ExpectSame(f, RoundTrip(f, *m));
  auto json = ContentFileToJson(f, *m).ValueOrDie();
  EXPECT_EQ(json["content"], "data");
  EXPECT_EQ(json["file-format"], "PARQUET");
  EXPECT_EQ(json["partition"], nlohmann::json::parse(R"([5, "2022-01-08", "ab"])"));  // Appendix C values
  f.partition[2] = Literal::Null();
  ExpectSame(f, RoundTrip(f, *m));
}

TEST(ContentFileJsonTest, DeletionVectorsAndEqualityDeletesRoundTrip) {
  auto m = Metadata();
  DataFile dv = Sample();
  dv.content = FileContent::kPositionDeletes;
  dv.file_format = FileFormat::kPuffin;
  dv.file_path = "file:///wh/db/t/data/x-deletes.puffin";
  dv.referenced_data_file = "file:///wh/db/t/data/00000-0-a.parquet";
  dv.content_offset = 4;
  dv.content_size_in_bytes = 60;
  ExpectSame(dv, RoundTrip(dv, *m));
  DataFile eq;
  eq.content = FileContent::kEqualityDeletes;
  eq.file_path = "file:///wh/db/t/data/eq.parquet";
  eq.spec_id = 1;  // unpartitioned spec
  eq.equality_ids = {1};
  eq.record_count = 3;
  eq.file_size_in_bytes = 300;
  ExpectSame(eq, RoundTrip(eq, *m));
}

TEST(ContentFileJsonTest, MalformedDocumentsAreRefused) {
  auto m = Metadata();
  auto good = ContentFileToJson(Sample(), *m).ValueOrDie();
  auto missing = good;
  missing.erase("file-path");
  EXPECT_ERROR(ContentFileFromJson(missing, *m), ErrorKind::kInvalidArgument, "file-path");
  auto spec = good;
  spec["spec-id"] = 9;
  EXPECT_ERROR(ContentFileFromJson(spec, *m), ErrorKind::kInvalidArgument, "spec id 9");
  auto partition = good;
  partition["partition"] = nlohmann::json::array({1});
  EXPECT_ERROR(ContentFileFromJson(partition, *m), ErrorKind::kInvalidArgument, "partition");
  auto type = good;
  type["record-count"] = "many";
  EXPECT_ERROR(ContentFileFromJson(type, *m), ErrorKind::kInvalidArgument, "content file");
  auto bounds = good;
  bounds["lower-bounds"]["values"][0] = "zz";
  EXPECT_ERROR(ContentFileFromJson(bounds, *m), ErrorKind::kInvalidArgument, "hex");
}

}  // namespace
}  // namespace lakesync::iceberg
