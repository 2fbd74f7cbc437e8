#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "lakesync/formats/avro/avro_file_reader.h"
#include "lakesync/formats/avro/avro_file_writer.h"
#include "lakesync/formats/avro/avro_value.h"
#include "lakesync/iceberg/manifest/partition_summary.h"
#include "manifest_test_util.h"

namespace lakesync::iceberg {
namespace {

using testing::Entry;
using testing::ExpectSameManifest;
using testing::MinimalDataFile;

ManifestFile Manifest(std::string path, ManifestContent content, int64_t added_rows, int64_t existing_rows) {
  ManifestFile m;
  m.manifest_path = std::move(path);
  m.manifest_length = 1234;
  m.partition_spec_id = 2;
  m.content = content;
  m.sequence_number = kUnassignedSequenceNumber;
  m.min_sequence_number = kUnassignedSequenceNumber;
  m.added_snapshot_id = kUnassignedSnapshotId;
  m.added_files_count = 1;
  m.existing_files_count = 2;
  m.deleted_files_count = 3;
  m.added_rows_count = added_rows;
  m.existing_rows_count = existing_rows;
  m.deleted_rows_count = 9;
  m.partitions = {
      PartitionFieldSummary{true, false, std::string("\x01\x00\x00\x00", 4), std::string("\x09\x00\x00\x00", 4)},
      PartitionFieldSummary{false, std::nullopt, std::nullopt, std::nullopt}};
  return m;
}

TEST(ManifestListTest, V3AssignsSequenceNumbersSnapshotIdsAndRowIds) {
  ManifestFile earlier = Manifest("s3://b/m-old.avro", ManifestContent::kData, 4, 6);
  earlier.sequence_number = 3;
  earlier.min_sequence_number = 2;
  earlier.added_snapshot_id = 77;
  earlier.first_row_id = 5000;
  earlier.key_metadata = std::string("\x00\x01", 2);
  std::vector<ManifestFile> manifests = {Manifest("s3://b/m-a.avro", ManifestContent::kData, 10, 5), earlier,
                                         Manifest("s3://b/m-d.avro", ManifestContent::kDeletes, 1, 1),
                                         Manifest("s3://b/m-c.avro", ManifestContent::kData, 7, 0)};
  manifests[3].min_sequence_number = 4;  // an explicit older data sequence number stays

  ManifestListWriteOptions options;
  options.format_version = 3;
  options.snapshot_id = 88;
  options.parent_snapshot_id = 77;
  options.sequence_number = 12;
  options.first_row_id = 100;
  options.location = "s3://b/snap-88.avro";
  ASSERT_OK_AND_ASSIGN(auto written, WriteManifestList(options, manifests));
  EXPECT_EQ(written.added_rows, 22);  // 10 + 5 for m-a, 7 for m-c
  ASSERT_EQ(written.manifests.size(), 4u);
  EXPECT_EQ(written.manifests[0].first_row_id, 100);
  EXPECT_EQ(written.manifests[1].first_row_id, 5000);
  EXPECT_FALSE(written.manifests[2].first_row_id.has_value());
  EXPECT_EQ(written.manifests[3].first_row_id, 115);
  EXPECT_EQ(written.manifests[0].sequence_number, 12);
  EXPECT_EQ(written.manifests[0].min_sequence_number, 12);
  EXPECT_EQ(written.manifests[0].added_snapshot_id, 88);
  EXPECT_EQ(written.manifests[1].sequence_number, 3);
  EXPECT_EQ(written.manifests[1].added_snapshot_id, 77);
  EXPECT_EQ(written.manifests[3].min_sequence_number, 4);

  ASSERT_OK_AND_ASSIGN(auto avro, avro::AvroFileReader::Open(written.bytes, "l"));
  EXPECT_EQ(avro->FindMetadata("snapshot-id"), "88");
  EXPECT_EQ(avro->FindMetadata("parent-snapshot-id"), "77");
  EXPECT_EQ(avro->FindMetadata("sequence-number"), "12");
  EXPECT_EQ(avro->FindMetadata("format-version"), "3");
  EXPECT_EQ(avro->FindMetadata("first-row-id"), "100");

  ASSERT_OK_AND_ASSIGN(ManifestList read, ReadManifestList(written.bytes, options.location));
  EXPECT_EQ(read.format_version, 3);
  EXPECT_EQ(read.snapshot_id, 88);
  EXPECT_EQ(read.parent_snapshot_id, 77);
  EXPECT_EQ(read.sequence_number, 12);
  EXPECT_EQ(read.first_row_id, 100);
  ASSERT_EQ(read.manifests.size(), 4u);
  for (size_t i = 0; i < 4; ++i) ExpectSameManifest(read.manifests[i], written.manifests[i]);
}

TEST(ManifestListTest, V2RootSnapshotWritesTheStringNullParent) {
  ManifestListWriteOptions options;
  options.snapshot_id = 1;
  options.sequence_number = 1;
  options.codec = "uncompressed";
  ASSERT_OK_AND_ASSIGN(auto written, WriteManifestList(options, {Manifest("m", ManifestContent::kData, 1, 0)}));
  EXPECT_EQ(written.added_rows, 0);
  EXPECT_FALSE(written.manifests[0].first_row_id.has_value());
  ASSERT_OK_AND_ASSIGN(auto avro, avro::AvroFileReader::Open(written.bytes, "l"));
  EXPECT_EQ(avro->FindMetadata("parent-snapshot-id"), "null");
  EXPECT_EQ(avro->FindMetadata("format-version"), "2");
  EXPECT_FALSE(avro->FindMetadata("first-row-id").has_value());
  EXPECT_EQ(avro->codec(), avro::AvroCodec::kNull);
  EXPECT_EQ(avro->schema().FindField(520, "first_row_id"), -1);
  ASSERT_OK_AND_ASSIGN(ManifestList read, ReadManifestList(written.bytes));
  EXPECT_FALSE(read.parent_snapshot_id.has_value());
  ExpectSameManifest(read.manifests[0], written.manifests[0]);
}

TEST(ManifestListTest, EmptyListAndEmptySummaries) {
  ManifestListWriteOptions options;
  options.snapshot_id = 1;
  ASSERT_OK_AND_ASSIGN(auto empty, WriteManifestList(options, {}));
  ASSERT_OK_AND_ASSIGN(ManifestList read, ReadManifestList(empty.bytes));
  EXPECT_TRUE(read.manifests.empty());
  ManifestFile unpartitioned = Manifest("m", ManifestContent::kData, 1, 0);
  unpartitioned.partitions.clear();
  ASSERT_OK_AND_ASSIGN(auto one, WriteManifestList(options, {unpartitioned}));
  ASSERT_OK_AND_ASSIGN(ManifestList again, ReadManifestList(one.bytes));
  EXPECT_TRUE(again.manifests[0].partitions.empty());
}

TEST(ManifestListTest, RejectsWhatTheSpecForbids) {
  ManifestListWriteOptions options;
  options.snapshot_id = 5;
  options.location = "s3://b/snap-5.avro";
  ManifestFile foreign = Manifest("m", ManifestContent::kData, 1, 0);
  foreign.added_snapshot_id = 4;  // another snapshot's manifest must already have a sequence number
  auto st = WriteManifestList(options, {foreign}).status();
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidArgument);
  EXPECT_NE(st.message().find("s3://b/snap-5.avro"), std::string::npos);

  ManifestFile with_row_id = Manifest("m", ManifestContent::kData, 1, 0);
  with_row_id.first_row_id = 3;
  EXPECT_EQ(KindOf(WriteManifestList(options, {with_row_id}).status()), ErrorKind::kInvalidArgument);  // v2

  options.format_version = 3;
  EXPECT_EQ(KindOf(WriteManifestList(options, {}).status()), ErrorKind::kInvalidArgument);  // no first-row-id
  options.first_row_id = 0;
  ManifestFile delete_with_row_id = Manifest("m", ManifestContent::kDeletes, 1, 0);
  delete_with_row_id.first_row_id = 3;
  EXPECT_EQ(KindOf(WriteManifestList(options, {delete_with_row_id}).status()), ErrorKind::kInvalidArgument);
  ManifestFile unknown = Manifest("m", ManifestContent::kData, 1, 0);
  unknown.counts_unknown = true;
  EXPECT_EQ(KindOf(WriteManifestList(options, {unknown}).status()), ErrorKind::kInvalidArgument);
  options.format_version = 1;
  EXPECT_EQ(KindOf(WriteManifestList(options, {}).status()), ErrorKind::kInvalidArgument);
}

// A v1 manifest list as the spec's v1 table has it, with Java's v1 field names: no content or
// sequence numbers, optional counts (one left null).
TEST(ManifestListTest, ReadsV1Lists) {
  const char* schema = R"({"type":"record","name":"manifest_file","fields":[
    {"name":"manifest_path","type":"string","field-id":500},
    {"name":"manifest_length","type":"long","field-id":501},
    {"name":"partition_spec_id","type":"int","field-id":502},
    {"name":"added_snapshot_id","type":["null","long"],"default":null,"field-id":503},
    {"name":"added_data_files_count","type":["null","int"],"default":null,"field-id":504},
    {"name":"existing_data_files_count","type":["null","int"],"default":null,"field-id":505},
    {"name":"deleted_data_files_count","type":["null","int"],"default":null,"field-id":506},
    {"name":"partitions","type":["null",{"type":"array","items":{"type":"record","name":"r508","fields":[
      {"name":"contains_null","type":"boolean","field-id":509},
      {"name":"lower_bound","type":["null","bytes"],"default":null,"field-id":510},
      {"name":"upper_bound","type":["null","bytes"],"default":null,"field-id":511}]},"element-id":508}],
     "default":null,"field-id":507},
    {"name":"added_rows_count","type":["null","long"],"default":null,"field-id":512},
    {"name":"existing_rows_count","type":["null","long"],"default":null,"field-id":513},
    {"name":"deleted_rows_count","type":["null","long"],"default":null,"field-id":514}]})";
  ASSERT_OK_AND_ASSIGN(auto writer,
                       avro::AvroFileWriter::Make(schema, {{"snapshot-id", "9"}, {"format-version", "1"}}));
  for (int i = 0; i < 2; ++i) {
    avro_value_t* rec = writer->NewRecord();
    ASSERT_OK_AND_ASSIGN(auto path, avro::MutableField(rec, 0));
    ASSERT_OK(avro::WriteString(&path, "m" + std::to_string(i)));
    ASSERT_OK_AND_ASSIGN(auto length, avro::MutableField(rec, 1));
    ASSERT_OK(avro::WriteLong(&length, 100));
    ASSERT_OK_AND_ASSIGN(auto spec, avro::MutableField(rec, 2));
    ASSERT_OK(avro::WriteInt(&spec, 0));
    for (size_t k = 3; k <= 10; ++k) {
      ASSERT_OK_AND_ASSIGN(auto f, avro::MutableField(rec, k));
      if (k == 7) {  // partitions
        ASSERT_OK_AND_ASSIGN(auto array, avro::SetNonNullBranch(&f));
        ASSERT_OK_AND_ASSIGN(auto s, avro::AppendElement(&array));
        ASSERT_OK_AND_ASSIGN(auto contains_null, avro::MutableField(&s, 0));
        ASSERT_OK(avro::WriteBool(&contains_null, true));
        for (size_t b : {1, 2}) {
          ASSERT_OK_AND_ASSIGN(auto bound, avro::MutableField(&s, b));
          ASSERT_OK(avro::SetNullBranch(&bound));
        }
      } else if (i == 1 && k == 4) {
        ASSERT_OK(avro::SetNullBranch(&f));  // added_data_files_count unknown
      } else {
        ASSERT_OK_AND_ASSIGN(auto b, avro::SetNonNullBranch(&f));
        if (k == 3) {
          ASSERT_OK(avro::WriteLong(&b, 9));
        } else if (k <= 6) {
          ASSERT_OK(avro::WriteInt(&b, static_cast<int32_t>(k == 4 ? 0 : 1)));
        } else {
          ASSERT_OK(avro::WriteLong(&b, static_cast<int64_t>(k)));
        }
      }
    }
    ASSERT_OK(writer->Append());
  }
  ASSERT_OK_AND_ASSIGN(std::string bytes, writer->Finish());
  ASSERT_OK_AND_ASSIGN(ManifestList list, ReadManifestList(bytes, "v1-list.avro"));
  EXPECT_EQ(list.format_version, 1);
  EXPECT_EQ(list.snapshot_id, 9);
  ASSERT_EQ(list.manifests.size(), 2u);
  for (const auto& m : list.manifests) {
    EXPECT_EQ(m.content, ManifestContent::kData);
    EXPECT_EQ(m.sequence_number, 0);
    EXPECT_EQ(m.min_sequence_number, 0);
    ASSERT_EQ(m.partitions.size(), 1u);
    EXPECT_TRUE(m.partitions[0].contains_null);
    EXPECT_FALSE(m.partitions[0].contains_nan.has_value());
  }
  EXPECT_FALSE(list.manifests[0].counts_unknown);
  EXPECT_EQ(list.manifests[0].added_files_count, 0);
  EXPECT_EQ(list.manifests[0].existing_files_count, 1);
  // Added 0 and existing 1: still has live files.
  EXPECT_TRUE(list.manifests[0].has_added_or_existing());
  EXPECT_TRUE(list.manifests[1].counts_unknown);
  EXPECT_TRUE(list.manifests[1].has_added_or_existing());
  EXPECT_EQ(list.manifests[1].added_rows_count, 8);
}

TEST(PartitionSummaryTest, NullsNansSignedZerosAndBounds) {
  auto type = Type::Struct({testing::Optional(1000, "i", Type::Int()), testing::Optional(1001, "d", Type::Double()),
                            testing::Optional(1002, "s", Type::String()), testing::Optional(1003, "f", Type::Float())});
  PartitionSummaryBuilder builder(type);
  const double nan = std::nan("");
  ASSERT_OK(builder.Update({Literal(int32_t{5}), Literal(0.0), Literal(std::string("m")), Literal::Null()}));
  ASSERT_OK(builder.Update({Literal::Null(), Literal(nan), Literal(std::string("b")), Literal::Null()}));
  ASSERT_OK(builder.Update({Literal(int32_t{-3}), Literal(-0.0), Literal(std::string("zz")), Literal::Null()}));
  EXPECT_FALSE(builder.Update({Literal(int32_t{1})}).ok());
  EXPECT_FALSE(builder.Update({Literal(int64_t{1}), Literal(0.0), Literal(std::string()), Literal::Null()}).ok());
  ASSERT_OK_AND_ASSIGN(auto summaries, builder.Summaries());
  ASSERT_EQ(summaries.size(), 4u);
  EXPECT_TRUE(summaries[0].contains_null);
  EXPECT_EQ(summaries[0].contains_nan, false);
  EXPECT_EQ(summaries[0].lower_bound, std::string("\xfd\xff\xff\xff", 4));  // -3, little endian
  EXPECT_EQ(summaries[0].upper_bound, std::string("\x05\x00\x00\x00", 4));
  EXPECT_FALSE(summaries[1].contains_null);
  EXPECT_EQ(summaries[1].contains_nan, true);
  const double neg_zero = -0.0, pos_zero = 0.0;
  EXPECT_EQ(summaries[1].lower_bound, std::string(reinterpret_cast<const char*>(&neg_zero), 8));
  EXPECT_EQ(summaries[1].upper_bound, std::string(reinterpret_cast<const char*>(&pos_zero), 8));
  EXPECT_EQ(summaries[2].lower_bound, "b");
  EXPECT_EQ(summaries[2].upper_bound, "zz");
  EXPECT_TRUE(summaries[3].contains_null);
  EXPECT_FALSE(summaries[3].lower_bound.has_value());
  EXPECT_FALSE(summaries[3].upper_bound.has_value());
}

TEST(PartitionSummaryTest, ManifestWriterFillsTheListEntry) {
  ManifestWriterOptions options;
  options.schema = testing::AllTypesSchema();
  options.spec = testing::AllTransformsSpec();
  options.snapshot_id = 3;
  std::vector<ManifestEntry> entries;
  for (int64_t i = 0; i < 8; ++i) {
    entries.push_back(Entry(ManifestEntryStatus::kAdded, MinimalDataFile(i, testing::AllTransformsValues(i))));
  }
  ASSERT_OK_AND_ASSIGN(auto written, testing::WriteManifest(options, entries));
  ASSERT_OK_AND_ASSIGN(auto partition_type, options.spec->PartitionType(*options.schema));
  PartitionSummaryBuilder expected(partition_type);
  for (const auto& e : entries) ASSERT_OK(expected.Update(e.data_file->partition));
  ASSERT_OK_AND_ASSIGN(auto summaries, expected.Summaries());
  ASSERT_EQ(written.manifest.partitions.size(), summaries.size());
  // Spot checks against the values themselves: int column i = n - 5 over n = 0..7, nulls at n = 3, 7.
  const auto& i_summary = written.manifest.partitions[1];
  EXPECT_FALSE(i_summary.contains_null);
  EXPECT_EQ(i_summary.lower_bound, std::string("\xfb\xff\xff\xff", 4));
  EXPECT_EQ(i_summary.upper_bound, std::string("\x02\x00\x00\x00", 4));
  EXPECT_TRUE(written.manifest.partitions[0].contains_null);   // boolean, nulled every 4th tuple
  EXPECT_TRUE(written.manifest.partitions[22].contains_null);  // void
  EXPECT_FALSE(written.manifest.partitions[22].lower_bound.has_value());
  for (size_t k = 0; k < summaries.size(); ++k) {
    EXPECT_EQ(written.manifest.partitions[k].lower_bound, summaries[k].lower_bound) << k;
    EXPECT_EQ(written.manifest.partitions[k].upper_bound, summaries[k].upper_bound) << k;
  }
}

// Truncations and bit flips: a clean error or (when the damage keeps the file valid) entries,
// never a crash; truncated files never read completely.
TEST(ManifestCorruptionTest, DamagedManifestsAndListsFailCleanly) {
  ManifestWriterOptions options;
  options.schema = testing::AllTypesSchema();
  options.spec = testing::AllTransformsSpec();
  options.snapshot_id = 3;
  options.format_version = 3;
  std::vector<ManifestEntry> entries;
  for (int64_t i = 0; i < 20; ++i) {
    entries.push_back(Entry(ManifestEntryStatus::kAdded, testing::FullDataFile(i, testing::AllTransformsValues(i))));
  }
  std::mt19937_64 random(42);
  int errors = 0;
  for (const char* codec : {"uncompressed", "gzip"}) {
    options.codec = codec;
    ASSERT_OK_AND_ASSIGN(auto written, testing::WriteManifest(options, entries));
    ManifestListWriteOptions list_options;
    list_options.format_version = 3;
    list_options.first_row_id = 0;
    list_options.snapshot_id = 3;
    list_options.codec = codec;
    ASSERT_OK_AND_ASSIGN(auto list, WriteManifestList(list_options, {written.manifest, written.manifest}));
    for (int iteration = 0; iteration < 200; ++iteration) {
      const bool truncate = iteration % 4 == 0;
      const std::string& original = iteration % 2 == 0 ? written.bytes : list.bytes;
      std::string damaged = original;
      if (truncate) {
        damaged.resize(random() % original.size());
      } else {
        for (int k = 0; k < 1 + static_cast<int>(random() % 3); ++k) {
          damaged[random() % damaged.size()] ^= static_cast<char>(1 << (random() % 8));
        }
      }
      Status st;
      size_t count = 0;
      if (iteration % 2 == 0) {
        auto read = ReadManifest(damaged, written.manifest);
        st = read.status();
        if (read.ok()) count = read->size();
        if (truncate) {
          EXPECT_FALSE(read.ok() && count == entries.size()) << "truncated manifest read completely";
        }
      } else {
        auto read = ReadManifestList(damaged, "list");
        st = read.status();
        if (read.ok()) count = read->manifests.size();
        if (truncate) {
          EXPECT_FALSE(read.ok() && count == 2) << "truncated list read completely";
        }
      }
      if (!st.ok()) {
        ++errors;
        const ErrorKind kind = KindOf(st);
        EXPECT_TRUE(kind == ErrorKind::kCorrupt || kind == ErrorKind::kUnsupported) << st.ToString();
        if (truncate) {
          EXPECT_EQ(kind, ErrorKind::kCorrupt) << st.ToString();
        }
      }
    }
  }
  EXPECT_GT(errors, 100);
}

}  // namespace
}  // namespace lakesync::iceberg
