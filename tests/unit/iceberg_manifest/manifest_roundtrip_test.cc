#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <functional>

#include "lakesync/formats/avro/avro_file_reader.h"
#include "lakesync/iceberg/model/json_serde.h"
#include "manifest_test_util.h"

namespace lakesync::iceberg {
namespace {

using testing::Entry;
using testing::ExpectSameFile;
using testing::FullDataFile;
using testing::MinimalDataFile;
using testing::WriteManifest;

ManifestWriterOptions Options(int version, PartitionSpecPtr spec, ManifestContent content = ManifestContent::kData) {
  ManifestWriterOptions o;
  o.format_version = version;
  o.schema = testing::AllTypesSchema();
  o.spec = std::move(spec);
  o.content = content;
  o.snapshot_id = 42;
  return o;
}

class ManifestRoundTrip : public ::testing::TestWithParam<int> {};

TEST_P(ManifestRoundTrip, EveryPartitionTypeAndEveryFieldSetOrUnset) {
  const int version = GetParam();
  std::vector<ManifestEntry> entries;
  for (int64_t i = 0; i < 40; ++i) {
    auto values = testing::AllTransformsValues(i);
    std::shared_ptr<DataFile> file = i % 2 == 0 ? FullDataFile(i, values) : MinimalDataFile(i, values);
    if (version == 3 && i % 5 == 0) file->first_row_id = 1000 * i;
    const auto status = static_cast<ManifestEntryStatus>(i % 3);
    if (status == ManifestEntryStatus::kAdded) {
      entries.push_back(Entry(status, file));
    } else {
      entries.push_back(Entry(status, file, 7 + i, 2 + i % 3, 3 + i % 3));
    }
  }
  ASSERT_OK_AND_ASSIGN(auto written, WriteManifest(Options(version, testing::AllTransformsSpec()), entries));
  ASSERT_OK_AND_ASSIGN(auto read, ReadManifest(written.bytes, written.manifest));
  ASSERT_EQ(read.size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    SCOPED_TRACE("entry " + std::to_string(i));
    EXPECT_EQ(read[i].status, entries[i].status);
    DataFile expected = *entries[i].data_file;
    expected.spec_id = 7;
    ExpectSameFile(*read[i].data_file, expected);
    if (entries[i].status == ManifestEntryStatus::kAdded) {
      EXPECT_EQ(read[i].snapshot_id, 42);
      EXPECT_EQ(read[i].sequence_number, 5);
      EXPECT_EQ(read[i].file_sequence_number, 5);
    } else {
      EXPECT_EQ(read[i].snapshot_id, entries[i].snapshot_id);
      EXPECT_EQ(read[i].sequence_number, entries[i].sequence_number);
      EXPECT_EQ(read[i].file_sequence_number, entries[i].file_sequence_number);
    }
  }
}

TEST_P(ManifestRoundTrip, UnpartitionedAndMetadata) {
  const int version = GetParam();
  auto options = Options(version, PartitionSpec::Unpartitioned());
  options.codec = "zstd";
  std::vector<ManifestEntry> entries = {Entry(ManifestEntryStatus::kAdded, MinimalDataFile(1)),
                                        Entry(ManifestEntryStatus::kAdded, FullDataFile(2, {}))};
  ASSERT_OK_AND_ASSIGN(auto written, WriteManifest(options, entries));
  ASSERT_OK_AND_ASSIGN(auto avro, avro::AvroFileReader::Open(written.bytes, "m"));
  EXPECT_EQ(avro->codec(), avro::AvroCodec::kZstandard);
  EXPECT_EQ(avro->FindMetadata("format-version"), std::to_string(version));
  EXPECT_EQ(avro->FindMetadata("content"), "data");
  EXPECT_EQ(avro->FindMetadata("partition-spec-id"), "0");
  EXPECT_EQ(avro->FindMetadata("partition-spec"), "[]");
  EXPECT_EQ(avro->FindMetadata("schema-id"), "3");
  ASSERT_OK_AND_ASSIGN(auto schema, SchemaFromJson(nlohmann::json::parse(*avro->FindMetadata("schema"))));
  EXPECT_TRUE(schema->SameSchema(*testing::AllTypesSchema()));

  ASSERT_OK_AND_ASSIGN(auto reader, ManifestReader::Open(written.bytes, written.manifest));
  EXPECT_EQ(reader->format_version(), version);
  ASSERT_TRUE(reader->spec());
  EXPECT_TRUE(reader->spec()->fields().empty());
  ASSERT_OK_AND_ASSIGN(auto first, reader->Next());
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(first->data_file->partition.empty());
  ASSERT_OK_AND_ASSIGN(auto second, reader->Next());
  ASSERT_TRUE(second.has_value());
  ExpectSameFile(*second->data_file, *FullDataFile(2, {}));
  ASSERT_OK_AND_ASSIGN(auto end, reader->Next());
  EXPECT_FALSE(end.has_value());
}

INSTANTIATE_TEST_SUITE_P(Versions, ManifestRoundTrip, ::testing::Values(2, 3),
                         [](const auto& info) { return "v" + std::to_string(info.param); });

TEST(ManifestDeletesTest, DeletionVectorsAndEqualityDeletesRoundTrip) {
  auto spec =
      std::make_shared<const PartitionSpec>(1, std::vector<PartitionField>{testing::PField(2, 1000, "i", "identity")});
  auto dv = std::make_shared<DataFile>();
  dv->content = FileContent::kPositionDeletes;
  dv->file_format = FileFormat::kPuffin;
  dv->file_path = "s3://b/t/data/dv-1.puffin";
  dv->partition = {Literal(int32_t{3})};
  dv->record_count = 12;
  dv->file_size_in_bytes = 987;
  dv->referenced_data_file = "s3://b/t/data/part-3.parquet";
  dv->content_offset = 4;
  dv->content_size_in_bytes = 77;
  auto eq = std::make_shared<DataFile>();
  eq->content = FileContent::kEqualityDeletes;
  eq->file_path = "s3://b/t/data/eq-1.parquet";
  eq->partition = {Literal::Null()};
  eq->record_count = 2;
  eq->file_size_in_bytes = 300;
  eq->equality_ids = {1, 11};
  eq->sort_order_id = 0;
  auto old_dv = std::make_shared<DataFile>(*dv);
  old_dv->file_path = "s3://b/t/data/dv-0.puffin";
  auto options = Options(3, spec, ManifestContent::kDeletes);
  std::vector<ManifestEntry> entries = {Entry(ManifestEntryStatus::kAdded, dv),
                                        Entry(ManifestEntryStatus::kAdded, eq),
                                        Entry(ManifestEntryStatus::kDeleted, old_dv, 42, 3, 3)};
  ASSERT_OK_AND_ASSIGN(auto written, WriteManifest(options, entries));
  ASSERT_OK_AND_ASSIGN(auto avro, avro::AvroFileReader::Open(written.bytes, "m"));
  EXPECT_EQ(avro->FindMetadata("content"), "deletes");
  EXPECT_EQ(written.manifest.content, ManifestContent::kDeletes);
  EXPECT_EQ(written.manifest.added_files_count, 2);
  EXPECT_EQ(written.manifest.deleted_files_count, 1);
  EXPECT_EQ(written.manifest.added_rows_count, 14);
  EXPECT_EQ(written.manifest.deleted_rows_count, 12);
  ASSERT_OK_AND_ASSIGN(auto read, ReadManifest(written.bytes, written.manifest));
  ASSERT_EQ(read.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    DataFile expected = *entries[i].data_file;
    expected.spec_id = 1;
    ExpectSameFile(*read[i].data_file, expected);
  }
  EXPECT_TRUE(read[0].data_file->IsDeletionVector());
  // Delete files never inherit a first_row_id, even from a manifest that has one.
  ManifestFile with_row_id = written.manifest;
  with_row_id.first_row_id = 100;
  ASSERT_OK_AND_ASSIGN(auto again, ReadManifest(written.bytes, with_row_id));
  for (const auto& e : again) EXPECT_FALSE(e.data_file->first_row_id.has_value());
}

// A manifest that decodes but disagrees with its manifest list entry's counts has been damaged
// since it was written: reading it is an error, not a table with files missing or added.
TEST(ManifestCountsTest, EntriesThatDisagreeWithTheListAreCorrupt) {
  std::vector<ManifestEntry> entries = {Entry(ManifestEntryStatus::kAdded, MinimalDataFile(1)),
                                        Entry(ManifestEntryStatus::kAdded, MinimalDataFile(2))};
  ASSERT_OK_AND_ASSIGN(auto written, WriteManifest(Options(2, PartitionSpec::Unpartitioned()), entries));
  ASSERT_OK(ReadManifest(written.bytes, written.manifest).status());
  struct Case {
    const char* what;
    std::function<void(ManifestFile&)> change;
  } cases[] = {
      {"one added file fewer", [](ManifestFile& m) { m.added_files_count -= 1; }},
      {"an existing file more", [](ManifestFile& m) { m.existing_files_count += 1; }},
      {"a deleted file more", [](ManifestFile& m) { m.deleted_files_count += 1; }},
      {"other added rows", [](ManifestFile& m) { m.added_rows_count += 7; }},
  };
  for (const auto& c : cases) {
    ManifestFile listed = written.manifest;
    c.change(listed);
    auto read = ReadManifest(written.bytes, listed);
    ASSERT_FALSE(read.ok()) << c.what;
    EXPECT_EQ(KindOf(read.status()), ErrorKind::kCorrupt) << c.what;
    EXPECT_NE(read.status().message().find(listed.manifest_path), std::string::npos) << read.status().message();
    // The streaming reader reports it after the last entry, before saying "no more".
    ASSERT_OK_AND_ASSIGN(auto reader, ManifestReader::Open(written.bytes, listed));
    ASSERT_OK(reader->Next().status());
    ASSERT_OK(reader->Next().status());
    EXPECT_EQ(KindOf(reader->Next().status()), ErrorKind::kCorrupt) << c.what;
  }
  // v1 lists may leave the counts out: nothing to compare.
  ManifestFile unknown = written.manifest;
  unknown.added_files_count = 0;
  unknown.counts_unknown = true;
  EXPECT_TRUE(ReadManifest(written.bytes, unknown).ok());
}

TEST(ManifestWriterTest, CountsRowsAndMinimumSequenceNumber) {
  std::vector<ManifestEntry> entries = {
      Entry(ManifestEntryStatus::kAdded, MinimalDataFile(10)),
      Entry(ManifestEntryStatus::kExisting, MinimalDataFile(20), 1, 4, 4),
      Entry(ManifestEntryStatus::kExisting, MinimalDataFile(30), 1, 6, 6),
      Entry(ManifestEntryStatus::kDeleted, MinimalDataFile(40), 1, 2, 2),  // not live: ignored for the minimum
  };
  ASSERT_OK_AND_ASSIGN(auto writer, ManifestWriter::Make(Options(2, PartitionSpec::Unpartitioned())));
  for (const auto& e : entries) ASSERT_OK(writer->Add(e));
  EXPECT_EQ(writer->entries_written(), 4);
  auto early = writer->ToManifestFile("x", 1);
  EXPECT_FALSE(early.ok());
  ASSERT_OK_AND_ASSIGN(std::string bytes, writer->Finish());
  ASSERT_OK_AND_ASSIGN(ManifestFile m, writer->ToManifestFile("s3://b/m.avro", static_cast<int64_t>(bytes.size())));
  EXPECT_EQ(m.manifest_length, static_cast<int64_t>(bytes.size()));
  EXPECT_EQ(m.added_snapshot_id, 42);
  EXPECT_EQ(m.sequence_number, kUnassignedSequenceNumber);
  EXPECT_EQ(m.min_sequence_number, 4);
  EXPECT_EQ(m.added_files_count, 1);
  EXPECT_EQ(m.existing_files_count, 2);
  EXPECT_EQ(m.deleted_files_count, 1);
  EXPECT_EQ(m.added_rows_count, 10);
  EXPECT_EQ(m.existing_rows_count, 50);
  EXPECT_EQ(m.deleted_rows_count, 40);
  EXPECT_TRUE(m.partitions.empty());
  EXPECT_FALSE(writer->Add(entries[0]).ok());  // finished
}

TEST(ManifestWriterTest, OnlyAddedEntriesLeaveTheMinimumUnassigned) {
  auto options = Options(2, PartitionSpec::Unpartitioned());
  options.snapshot_id.reset();
  ASSERT_OK_AND_ASSIGN(auto writer, ManifestWriter::Make(options));
  ASSERT_OK(writer->Add(Entry(ManifestEntryStatus::kAdded, MinimalDataFile(1))));
  ASSERT_OK_AND_ASSIGN(std::string bytes, writer->Finish());
  ASSERT_OK_AND_ASSIGN(ManifestFile m, writer->ToManifestFile("m", 1));
  EXPECT_EQ(m.min_sequence_number, kUnassignedSequenceNumber);
  EXPECT_EQ(m.added_snapshot_id, kUnassignedSnapshotId);
}

void ExpectRejected(const ManifestWriterOptions& options, const ManifestEntry& entry, const std::string& fragment) {
  auto writer = ManifestWriter::Make(options);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  auto st = (*writer)->Add(entry);
  ASSERT_FALSE(st.ok()) << "expected rejection: " << fragment;
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find(fragment), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find(options.location.empty() ? "manifest" : options.location), std::string::npos);
}

TEST(ManifestWriterTest, RejectsEntriesThatBreakSpecRules) {
  auto unpartitioned = PartitionSpec::Unpartitioned();
  auto data = Options(3, unpartitioned);
  data.location = "s3://b/t/metadata/x-m0.avro";
  auto deletes = Options(3, unpartitioned, ManifestContent::kDeletes);
  auto deletes_v2 = Options(2, unpartitioned, ManifestContent::kDeletes);

  auto del = std::make_shared<DataFile>(*MinimalDataFile(1));
  del->content = FileContent::kPositionDeletes;
  ExpectRejected(data, Entry(ManifestEntryStatus::kAdded, del), "data manifest");
  ExpectRejected(deletes, Entry(ManifestEntryStatus::kAdded, MinimalDataFile(1)), "delete manifest");
  ExpectRejected(data, Entry(ManifestEntryStatus::kExisting, MinimalDataFile(1), 1, std::nullopt, 1),
                 "sequence numbers");
  ExpectRejected(data, Entry(ManifestEntryStatus::kDeleted, MinimalDataFile(1), 1, 1, std::nullopt),
                 "sequence numbers");
  ExpectRejected(data, Entry(ManifestEntryStatus::kExisting, MinimalDataFile(1), std::nullopt, 1, 1), "snapshot id");
  ExpectRejected(deletes, Entry(ManifestEntryStatus::kAdded, del), "deletion vectors");  // v3 position deletes

  auto dv = std::make_shared<DataFile>(*del);
  dv->file_format = FileFormat::kPuffin;
  dv->referenced_data_file = "s3://b/t/data/a.parquet";
  dv->content_offset = 4;
  ExpectRejected(deletes, Entry(ManifestEntryStatus::kAdded, dv), "content_size_in_bytes");
  dv->content_size_in_bytes = 40;
  ExpectRejected(deletes_v2, Entry(ManifestEntryStatus::kAdded, dv), "format version 3");

  auto eq = std::make_shared<DataFile>(*MinimalDataFile(1));
  eq->content = FileContent::kEqualityDeletes;
  ExpectRejected(deletes, Entry(ManifestEntryStatus::kAdded, eq), "equality_ids");
  auto with_ids = std::make_shared<DataFile>(*MinimalDataFile(1));
  with_ids->equality_ids = {1};
  ExpectRejected(data, Entry(ManifestEntryStatus::kAdded, with_ids), "equality_ids");

  auto row_id = std::make_shared<DataFile>(*MinimalDataFile(1));
  row_id->first_row_id = 5;
  ExpectRejected(Options(2, unpartitioned), Entry(ManifestEntryStatus::kAdded, row_id), "first_row_id");
  auto offsets = std::make_shared<DataFile>(*MinimalDataFile(1));
  offsets->content_offset = 1;
  ExpectRejected(data, Entry(ManifestEntryStatus::kAdded, offsets), "deletion vectors only");

  auto spec =
      std::make_shared<const PartitionSpec>(0, std::vector<PartitionField>{testing::PField(2, 1000, "i", "identity")});
  ExpectRejected(Options(2, spec), Entry(ManifestEntryStatus::kAdded, MinimalDataFile(1)),
                 "partition tuple has 0 values");
  ExpectRejected(Options(2, spec), Entry(ManifestEntryStatus::kAdded, MinimalDataFile(1, {Literal(int64_t{1})})),
                 "does not match type int");
}

TEST(ManifestWriterTest, RejectsBadOptions) {
  auto options = Options(1, PartitionSpec::Unpartitioned());
  EXPECT_EQ(KindOf(ManifestWriter::Make(options).status()), ErrorKind::kInvalidArgument);
  options.format_version = 2;
  options.codec = "lz4";
  EXPECT_EQ(KindOf(ManifestWriter::Make(options).status()), ErrorKind::kInvalidArgument);
  options.codec = "snappy";
  options.spec =
      std::make_shared<const PartitionSpec>(0, std::vector<PartitionField>{testing::PField(99, 1000, "x", "identity")});
  EXPECT_EQ(KindOf(ManifestWriter::Make(options).status()), ErrorKind::kInvalidArgument);
  options.spec = nullptr;
  EXPECT_EQ(KindOf(ManifestWriter::Make(options).status()), ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace lakesync::iceberg
