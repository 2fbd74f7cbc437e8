// Sequence number, snapshot id and first_row_id inheritance (spec "Sequence Number Inheritance",
// "First Row ID Inheritance"), v1 manifests, and files other writers could produce that our writer
// refuses to (built here with the raw Avro writer).
#include <gtest/gtest.h>

#include "lakesync/formats/avro/avro_file_writer.h"
#include "lakesync/formats/avro/avro_value.h"
#include "lakesync/iceberg/manifest/manifest_avro_internal.h"
#include "lakesync/iceberg/model/json_serde.h"
#include "lakesync/iceberg/model/table_metadata.h"
#include "manifest_test_util.h"

namespace lakesync::iceberg {
namespace {

using testing::Entry;
using testing::MinimalDataFile;

struct RawEntry {
  explicit RawEntry(std::string p) : path(std::move(p)) {}
  RawEntry& WithStatus(int32_t v) { status = v; return *this; }
  RawEntry& WithSnapshot(int64_t v) { snapshot_id = v; return *this; }
  RawEntry& WithSeq(std::optional<int64_t> data, std::optional<int64_t> file) {
    sequence_number = data;
    file_sequence_number = file;
    return *this;
  }
  RawEntry& WithRecords(int64_t v) { record_count = v; return *this; }
  RawEntry& WithRowId(int64_t v) { first_row_id = v; return *this; }
  RawEntry& WithContent(int32_t v) { content = v; return *this; }

  std::string path;
  int32_t status = 1;
  std::optional<int64_t> snapshot_id;
  std::optional<int64_t> sequence_number;
  std::optional<int64_t> file_sequence_number;
  int64_t record_count = 1;
  std::optional<int64_t> first_row_id;
  int32_t content = 0;
};

// A v3 unpartitioned manifest holding exactly what `entries` say, null where they say nothing.
Result<std::string> WriteRaw(const std::vector<RawEntry>& entries,
                             std::vector<std::pair<std::string, std::string>> metadata = {{"format-version", "3"}}) {
  ARROW_ASSIGN_OR_RAISE(std::string schema, internal::ManifestEntrySchemaJson(3, *Type::Struct({})));
  ARROW_ASSIGN_OR_RAISE(auto writer, avro::AvroFileWriter::Make(schema, std::move(metadata)));
  const avro::AvroNode& entry_node = writer->schema();
  const avro::AvroNode& file_node = *entry_node.fields[4].type;
  for (const RawEntry& e : entries) {
    avro_value_t* record = writer->NewRecord();
    auto set_long = [](avro_value_t* rec, size_t index, std::optional<int64_t> v) -> Status {
      ARROW_ASSIGN_OR_RAISE(auto field, avro::MutableField(rec, index));
      if (!v) return avro::SetNullBranch(&field);
      ARROW_ASSIGN_OR_RAISE(auto branch, avro::SetNonNullBranch(&field));
      return avro::WriteLong(&branch, *v);
    };
    ARROW_ASSIGN_OR_RAISE(auto status, avro::MutableField(record, 0));
    RETURN_NOT_OK(avro::WriteInt(&status, e.status));
    RETURN_NOT_OK(set_long(record, 1, e.snapshot_id));
    RETURN_NOT_OK(set_long(record, 2, e.sequence_number));
    RETURN_NOT_OK(set_long(record, 3, e.file_sequence_number));
    ARROW_ASSIGN_OR_RAISE(auto file, avro::MutableField(record, 4));
    for (size_t i = 0; i < file_node.fields.size(); ++i) {
      const std::string& name = file_node.fields[i].name;
      ARROW_ASSIGN_OR_RAISE(auto field, avro::MutableField(&file, i));
      if (name == "content") {
        RETURN_NOT_OK(avro::WriteInt(&field, e.content));
      } else if (name == "file_path") {
        RETURN_NOT_OK(avro::WriteString(&field, e.path));
      } else if (name == "file_format") {
        RETURN_NOT_OK(avro::WriteString(&field, "parquet"));  // lower case, as the spec spells it
      } else if (name == "record_count") {
        RETURN_NOT_OK(avro::WriteLong(&field, e.record_count));
      } else if (name == "file_size_in_bytes") {
        RETURN_NOT_OK(avro::WriteLong(&field, 100));
      } else if (name == "first_row_id") {
        RETURN_NOT_OK(set_long(&file, i, e.first_row_id));
      } else if (name != "partition") {
        RETURN_NOT_OK(avro::SetNullBranch(&field));
      }
    }
    RETURN_NOT_OK(writer->Append());
  }
  return writer->Finish();
}

ManifestFile ListEntry(int64_t sequence_number, std::optional<int64_t> first_row_id = std::nullopt) {
  ManifestFile m;
  m.manifest_path = "s3://b/t/metadata/raw-m0.avro";
  m.sequence_number = sequence_number;
  m.min_sequence_number = sequence_number;
  m.added_snapshot_id = 42;
  m.partition_spec_id = 0;
  m.first_row_id = first_row_id;
  // A hand-made list entry: these tests are about inheritance, not about the counts a real list
  // entry carries (which the reader compares with the entries; manifest_roundtrip_test covers that).
  m.counts_unknown = true;
  return m;
}

TEST(InheritanceTest, AddedEntriesInheritSnapshotAndSequenceNumbers) {
  ASSERT_OK_AND_ASSIGN(std::string bytes,
                       WriteRaw({RawEntry("a"), RawEntry("b").WithSnapshot(7).WithSeq(3, std::nullopt)}));
  ASSERT_OK_AND_ASSIGN(auto entries, ReadManifest(bytes, ListEntry(9)));
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].snapshot_id, 42);
  EXPECT_EQ(entries[0].sequence_number, 9);
  EXPECT_EQ(entries[0].file_sequence_number, 9);
  EXPECT_EQ(entries[0].data_file->file_format, FileFormat::kParquet);  // read case-insensitively
  // An explicit (older) data sequence number stays; the file sequence number is inherited.
  EXPECT_EQ(entries[1].snapshot_id, 7);
  EXPECT_EQ(entries[1].sequence_number, 3);
  EXPECT_EQ(entries[1].file_sequence_number, 9);
}

TEST(InheritanceTest, ExistingOrDeletedWithoutSequenceNumbersIsCorrupt) {
  for (int32_t status : {0, 2}) {
    ASSERT_OK_AND_ASSIGN(std::string bytes,
                         WriteRaw({RawEntry("ok"), RawEntry("s3://b/old.parquet").WithStatus(status).WithSnapshot(1)}));
    auto entries = ReadManifest(bytes, ListEntry(9));
    ASSERT_FALSE(entries.ok());
    EXPECT_EQ(KindOf(entries.status()), ErrorKind::kCorrupt);
    const std::string message = entries.status().message();
    EXPECT_NE(message.find("raw-m0.avro"), std::string::npos) << message;
    EXPECT_NE(message.find("entry 1"), std::string::npos) << message;
    EXPECT_NE(message.find("s3://b/old.parquet"), std::string::npos) << message;
    EXPECT_NE(message.find("sequence_number"), std::string::npos) << message;
  }
}

TEST(InheritanceTest, ManifestsAtSequenceNumberZeroGiveZeroToEveryEntry) {
  ASSERT_OK_AND_ASSIGN(std::string bytes, WriteRaw({RawEntry("a").WithStatus(0).WithSnapshot(1)}));
  ASSERT_OK_AND_ASSIGN(auto entries, ReadManifest(bytes, ListEntry(0)));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].sequence_number, 0);
  EXPECT_EQ(entries[0].file_sequence_number, 0);
}

TEST(InheritanceTest, FirstRowIdsFollowTheNullIdDataFilesBeforeThem) {
  ASSERT_OK_AND_ASSIGN(std::string bytes, WriteRaw({
                                               RawEntry("a").WithRecords(10),
                                               RawEntry("b").WithRecords(5).WithRowId(1000),
                                               RawEntry("c").WithStatus(2).WithSnapshot(1).WithSeq(1, 1).WithRecords(3),
                                               RawEntry("d").WithRecords(7),
                                           }));
  ASSERT_OK_AND_ASSIGN(auto entries, ReadManifest(bytes, ListEntry(9, 500)));
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].data_file->first_row_id, 500);
  EXPECT_EQ(entries[1].data_file->first_row_id, 1000);
  EXPECT_EQ(entries[2].data_file->first_row_id, 510);
  EXPECT_EQ(entries[3].data_file->first_row_id, 513);
  // Without a manifest first_row_id (v2 tables, delete manifests) nothing is assigned.
  ASSERT_OK_AND_ASSIGN(auto plain, ReadManifest(bytes, ListEntry(9)));
  EXPECT_FALSE(plain[0].data_file->first_row_id.has_value());
  EXPECT_EQ(plain[1].data_file->first_row_id, 1000);
}

TEST(InheritanceTest, InvalidEnumValuesAreCorrupt) {
  ASSERT_OK_AND_ASSIGN(std::string bad_status, WriteRaw({RawEntry("a").WithStatus(3)}));
  auto a = ReadManifest(bad_status, ListEntry(1));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("status"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(std::string bad_content, WriteRaw({RawEntry("a").WithContent(5)}));
  auto b = ReadManifest(bad_content, ListEntry(1));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(KindOf(b.status()), ErrorKind::kCorrupt);
  EXPECT_NE(b.status().message().find("content"), std::string::npos);
}

// A v1 manifest as the spec's v1 tables describe it: snapshot_id required, no sequence numbers, no
// content, the deprecated block_size_in_bytes, and Java's v1 record names.
const char* kV1EntrySchema = R"({"type":"record","name":"manifest_entry","fields":[
  {"name":"status","type":"int","field-id":0},
  {"name":"snapshot_id","type":"long","field-id":1},
  {"name":"data_file","field-id":2,"type":{"type":"record","name":"r2","fields":[
    {"name":"file_path","type":"string","field-id":100},
    {"name":"file_format","type":"string","field-id":101},
    {"name":"partition","field-id":102,"type":{"type":"record","name":"r102","fields":[
      {"name":"id_bucket","type":["null","int"],"default":null,"field-id":1000}]}},
    {"name":"record_count","type":"long","field-id":103},
    {"name":"file_size_in_bytes","type":"long","field-id":104},
    {"name":"block_size_in_bytes","type":"long","field-id":105},
    {"name":"column_sizes","default":null,"field-id":108,"type":["null",{"type":"array","logicalType":"map",
      "items":{"type":"record","name":"k117_v118","fields":[
        {"name":"key","type":"int","field-id":117},{"name":"value","type":"long","field-id":118}]}}]},
    {"name":"split_offsets","default":null,"field-id":132,
     "type":["null",{"type":"array","items":"long","element-id":133}]}]}}]})";

TEST(V1ManifestTest, ReadsAsSequenceNumberZeroWithItsSpec) {
  std::vector<std::pair<std::string, std::string>> metadata = {
      {"schema", R"({"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"}]})"},
      {"partition-spec", R"([{"name":"id_bucket","transform":"bucket[4]","source-id":1,"field-id":1000}])"},
      {"format-version", "1"}};
  ASSERT_OK_AND_ASSIGN(auto writer, avro::AvroFileWriter::Make(kV1EntrySchema, metadata));
  for (int i = 0; i < 3; ++i) {
    avro_value_t* rec = writer->NewRecord();
    ASSERT_OK_AND_ASSIGN(auto status, avro::MutableField(rec, 0));
    ASSERT_OK(avro::WriteInt(&status, i == 2 ? 0 : 1));
    ASSERT_OK_AND_ASSIGN(auto snapshot, avro::MutableField(rec, 1));
    ASSERT_OK(avro::WriteLong(&snapshot, 100 + i));
    ASSERT_OK_AND_ASSIGN(auto file, avro::MutableField(rec, 2));
    ASSERT_OK_AND_ASSIGN(auto path, avro::MutableField(&file, 0));
    ASSERT_OK(avro::WriteString(&path, "hdfs://n/t/" + std::to_string(i) + ".avro"));
    ASSERT_OK_AND_ASSIGN(auto format, avro::MutableField(&file, 1));
    ASSERT_OK(avro::WriteString(&format, "AVRO"));
    ASSERT_OK_AND_ASSIGN(auto partition, avro::MutableField(&file, 2));
    ASSERT_OK_AND_ASSIGN(auto bucket, avro::MutableField(&partition, 0));
    if (i == 1) {
      ASSERT_OK(avro::SetNullBranch(&bucket));
    } else {
      ASSERT_OK_AND_ASSIGN(auto b, avro::SetNonNullBranch(&bucket));
      ASSERT_OK(avro::WriteInt(&b, i + 1));
    }
    for (size_t k : {3, 4, 5}) {
      ASSERT_OK_AND_ASSIGN(auto v, avro::MutableField(&file, k));
      ASSERT_OK(avro::WriteLong(&v, 10 * i + static_cast<int64_t>(k)));
    }
    ASSERT_OK_AND_ASSIGN(auto sizes, avro::MutableField(&file, 6));
    ASSERT_OK_AND_ASSIGN(auto array, avro::SetNonNullBranch(&sizes));
    ASSERT_OK_AND_ASSIGN(auto pair, avro::AppendElement(&array));
    ASSERT_OK_AND_ASSIGN(auto k, avro::MutableField(&pair, 0));
    ASSERT_OK(avro::WriteInt(&k, 1));
    ASSERT_OK_AND_ASSIGN(auto v, avro::MutableField(&pair, 1));
    ASSERT_OK(avro::WriteLong(&v, 55));
    ASSERT_OK_AND_ASSIGN(auto splits, avro::MutableField(&file, 7));
    ASSERT_OK(avro::SetNullBranch(&splits));
    ASSERT_OK(writer->Append());
  }
  ASSERT_OK_AND_ASSIGN(std::string bytes, writer->Finish());
  ManifestFile list_entry = ListEntry(0);
  list_entry.partition_spec_id = 0;
  ASSERT_OK_AND_ASSIGN(auto reader, ManifestReader::Open(bytes, list_entry));
  EXPECT_EQ(reader->format_version(), 1);
  ASSERT_TRUE(reader->spec());
  ASSERT_EQ(reader->partition_type()->fields().size(), 1u);
  EXPECT_EQ(reader->partition_type()->fields()[0].type->id(), TypeId::kInt);
  ASSERT_OK_AND_ASSIGN(auto entries, ReadManifest(bytes, list_entry));
  ASSERT_EQ(entries.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const auto& e = entries[static_cast<size_t>(i)];
    EXPECT_EQ(e.snapshot_id, 100 + i);
    EXPECT_EQ(e.sequence_number, 0);
    EXPECT_EQ(e.file_sequence_number, 0);
    EXPECT_EQ(e.data_file->content, FileContent::kData);
    EXPECT_EQ(e.data_file->file_format, FileFormat::kAvro);
    EXPECT_EQ(e.data_file->record_count, 10 * i + 3);
    EXPECT_EQ(e.data_file->file_size_in_bytes, 10 * i + 4);
    EXPECT_EQ(e.data_file->column_sizes, (std::map<int32_t, int64_t>{{1, 55}}));
    ASSERT_EQ(e.data_file->partition.size(), 1u);
    if (i == 1) {
      EXPECT_TRUE(e.data_file->partition[0].is_null());
    } else {
      EXPECT_TRUE(e.data_file->partition[0] == Literal(int32_t{i + 1}));
    }
  }
  // Even a v1 manifest listed with a non-zero sequence number reads as 0: v1 has none.
  ASSERT_OK_AND_ASSIGN(auto relisted, ReadManifest(bytes, ListEntry(6)));
  EXPECT_EQ(relisted[2].sequence_number, 0);
}

TEST(PartitionTypeTest, TableMetadataTypesWinAndPromoteValues) {
  // Written when column 2 was an int; the table has since promoted it to long.
  auto spec =
      std::make_shared<const PartitionSpec>(7, std::vector<PartitionField>{testing::PField(2, 1000, "i", "identity")});
  ManifestWriterOptions options;
  options.schema = testing::AllTypesSchema();
  options.spec = spec;
  options.snapshot_id = 1;
  const ManifestEntry entry_in = Entry(ManifestEntryStatus::kAdded, MinimalDataFile(1, {Literal(int32_t{-9})}));
  ASSERT_OK_AND_ASSIGN(auto written, testing::WriteManifest(options, {entry_in}));
  TableMetadata metadata;
  metadata.schemas = {std::make_shared<const Schema>(
      4, std::vector<NestedField>{testing::Optional(2, "i", Type::Long())})};
  metadata.current_schema_id = 4;
  metadata.partition_specs = {spec};
  ASSERT_OK_AND_ASSIGN(auto reader, ManifestReader::Open(written.bytes, written.manifest, &metadata));
  EXPECT_EQ(reader->partition_type()->fields()[0].type->id(), TypeId::kLong);
  ASSERT_OK_AND_ASSIGN(auto entry, reader->Next());
  ASSERT_TRUE(entry.has_value());
  EXPECT_TRUE(entry->data_file->partition[0] == Literal(int64_t{-9}));
  // Without table metadata the manifest's own schema and spec give int.
  ASSERT_OK_AND_ASSIGN(auto own, ReadManifest(written.bytes, written.manifest));
  EXPECT_TRUE(own[0].data_file->partition[0] == Literal(int32_t{-9}));
}

TEST(PartitionTypeTest, WithoutAnySpecTheWriterSchemaDecides) {
  auto spec = testing::AllTransformsSpec();
  ManifestWriterOptions options;
  options.schema = testing::AllTypesSchema();
  options.spec = spec;
  options.snapshot_id = 1;
  const auto values = testing::AllTransformsValues(2);
  const ManifestEntry entry_in = Entry(ManifestEntryStatus::kAdded, MinimalDataFile(1, values));
  ASSERT_OK_AND_ASSIGN(auto written, testing::WriteManifest(options, {entry_in}));
  // Strip the spec and schema from the metadata by rewriting the header keys' names.
  std::string bytes = written.bytes;
  for (const char* key : {"partition-spec", "\x0cschema"}) {
    const size_t at = bytes.find(key);
    ASSERT_NE(at, std::string::npos);
    bytes[at + (key[0] == '\x0c' ? 1 : 0)] = 'X';
  }
  ASSERT_OK_AND_ASSIGN(auto reader, ManifestReader::Open(bytes, written.manifest));
  EXPECT_FALSE(reader->spec());
  EXPECT_FALSE(reader->schema());
  const auto& fields = reader->partition_type()->fields();
  ASSERT_EQ(fields.size(), values.size());
  ASSERT_OK_AND_ASSIGN(auto partition_type, spec->PartitionType(*testing::AllTypesSchema()));
  for (size_t i = 0; i < fields.size(); ++i) {
    EXPECT_EQ(fields[i].id, spec->fields()[i].field_id);
    EXPECT_EQ(fields[i].name, spec->fields()[i].name);  // the Iceberg name, not the Avro-safe one
    // Avro carries every result type (void keeps its source type, long).
    EXPECT_TRUE(fields[i].type->Equals(*partition_type->fields()[i].type)) << fields[i].name << " "
                                                                            << fields[i].type->ToString();
  }
  ASSERT_OK_AND_ASSIGN(auto entry, reader->Next());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_TRUE(entry->data_file->partition[i] == values[i]) << i;
}

}  // namespace
}  // namespace lakesync::iceberg
