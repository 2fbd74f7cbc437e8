#include "lakesync/formats/puffin/deletion_vector_file.h"

#include <arrow/io/memory.h>
#include <gtest/gtest.h>

#include <random>

#include "lakesync/formats/puffin/deletion_vector.h"
#include "lakesync/formats/puffin/puffin_reader.h"
#include "puffin_test_util.h"

namespace lakesync::puffin {
namespace {

using testing::FromSet;
using testing::RandomPositions;

struct Sample {
  std::string path;
  PositionBitmap positions;
};

class DeletionVectorFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(99);
    samples_.push_back({"s3://bucket/t/data/a.parquet", FromSet(RandomPositions(rng, testing::Shape::kSmall))});
    samples_.push_back({"s3://bucket/t/data/b.parquet", FromSet(RandomPositions(rng, testing::Shape::kDense))});
    samples_.push_back({"s3://bucket/t/data/c.parquet", FromSet(RandomPositions(rng, testing::Shape::kAround2to32))});
    samples_.push_back({"s3://bucket/t/data/empty.parquet", PositionBitmap()});

    ASSERT_OK_AND_ASSIGN(auto sink, arrow::io::BufferOutputStream::Create());
    DeletionVectorWriterOptions options;
    options.lakesync_version = "0.1.0";
    ASSERT_OK_AND_ASSIGN(auto writer, DeletionVectorWriter::Make(sink, options));
    for (const Sample& s : samples_) ASSERT_OK(writer->Add(s.path, s.positions));
    EXPECT_EQ(KindOf(writer->Add(samples_[0].path, samples_[0].positions)), ErrorKind::kInvalidArgument);
    EXPECT_EQ(KindOf(writer->Add("", samples_[0].positions)), ErrorKind::kInvalidArgument);
    ASSERT_OK_AND_ASSIGN(result_, writer->Finish());
    ASSERT_OK_AND_ASSIGN(auto buffer, sink->Finish());
    bytes_ = buffer->ToString();
  }

  std::vector<Sample> samples_;
  DeletionVectorFile result_;
  std::string bytes_;
};

TEST_F(DeletionVectorFileTest, SummaryDescribesEveryVector) {
  ASSERT_EQ(result_.vectors.size(), samples_.size());
  EXPECT_EQ(result_.file_size_in_bytes, static_cast<int64_t>(bytes_.size()));
  int64_t offset = 4;
  for (size_t i = 0; i < samples_.size(); ++i) {
    const WrittenDeletionVector& v = result_.vectors[i];
    EXPECT_EQ(v.referenced_data_file, samples_[i].path);
    EXPECT_EQ(v.cardinality, samples_[i].positions.Cardinality());
    EXPECT_EQ(v.content_offset, offset);
    offset += v.content_size_in_bytes;
  }
  EXPECT_EQ(offset + result_.footer_size_in_bytes, result_.file_size_in_bytes);
}

TEST_F(DeletionVectorFileTest, ReadsBackByManifestCoordinates) {
  auto file = std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString(bytes_));
  for (size_t i = 0; i < samples_.size(); ++i) {
    const WrittenDeletionVector& v = result_.vectors[i];
    ASSERT_OK_AND_ASSIGN(PositionBitmap positions,
                         ReadDeletionVector(*file, v.content_offset, v.content_size_in_bytes, v.cardinality));
    EXPECT_EQ(positions, samples_[i].positions) << v.referenced_data_file;
  }
}

// The manifest entry of a vector must agree with the footer's own record of it: a garbled
// referenced_data_file or content_offset is a corrupt table, not deletes applied elsewhere.
TEST_F(DeletionVectorFileTest, ManifestEntriesAreCheckedAgainstTheFooter) {
  ASSERT_OK_AND_ASSIGN(auto reader, PuffinReader::OpenBytes(bytes_));
  const FileMetadata& footer = reader->metadata();
  for (const WrittenDeletionVector& v : result_.vectors) {
    EXPECT_TRUE(CheckDeletionVectorAgainstFooter(footer, "f.puffin", v.content_offset, v.content_size_in_bytes,
                                                 v.referenced_data_file)
                    .ok());
  }
  const WrittenDeletionVector& v = result_.vectors[1];
  auto other = CheckDeletionVectorAgainstFooter(footer, "f.puffin", v.content_offset, v.content_size_in_bytes,
                                                "s3://bucket/t/data/Xb.parquet");
  EXPECT_EQ(KindOf(other), ErrorKind::kCorrupt);
  EXPECT_NE(other.message().find("s3://bucket/t/data/Xb.parquet"), std::string::npos) << other.message();
  EXPECT_NE(other.message().find(v.referenced_data_file), std::string::npos) << other.message();
  EXPECT_NE(other.message().find("f.puffin"), std::string::npos) << other.message();
  EXPECT_EQ(KindOf(CheckDeletionVectorAgainstFooter(footer, "f.puffin", v.content_offset + 1, v.content_size_in_bytes,
                                                    v.referenced_data_file)),
            ErrorKind::kCorrupt);
  EXPECT_EQ(KindOf(CheckDeletionVectorAgainstFooter(footer, "f.puffin", v.content_offset,
                                                    v.content_size_in_bytes + 1, v.referenced_data_file)),
            ErrorKind::kCorrupt);
}

TEST_F(DeletionVectorFileTest, FooterEntriesFollowTheSpec) {
  ASSERT_OK_AND_ASSIGN(auto reader, PuffinReader::OpenBytes(bytes_));
  EXPECT_EQ(reader->metadata().properties.at("created-by"), "lakesync 0.1.0");
  EXPECT_EQ(reader->footer_size(), result_.footer_size_in_bytes);
  ASSERT_EQ(reader->blobs().size(), samples_.size());
  for (size_t i = 0; i < samples_.size(); ++i) {
    const BlobMetadata& blob = reader->blobs()[i];
    EXPECT_EQ(blob.type, "deletion-vector-v1");
    EXPECT_EQ(blob.fields, std::vector<int32_t>{2147483645});
    EXPECT_EQ(blob.snapshot_id, -1);
    EXPECT_EQ(blob.sequence_number, -1);
    EXPECT_FALSE(blob.compression_codec.has_value());
    EXPECT_EQ(blob.offset, result_.vectors[i].content_offset);
    EXPECT_EQ(blob.length, result_.vectors[i].content_size_in_bytes);
    EXPECT_EQ(blob.properties.size(), 2u);
    EXPECT_EQ(blob.properties.at("referenced-data-file"), samples_[i].path);
    EXPECT_EQ(blob.properties.at("cardinality"), std::to_string(samples_[i].positions.Cardinality()));
    ASSERT_OK_AND_ASSIGN(PositionBitmap positions, ReadDeletionVectorBlob(*reader, blob));
    EXPECT_EQ(positions, samples_[i].positions);
  }
}

TEST_F(DeletionVectorFileTest, BlobEntryChecks) {
  ASSERT_OK_AND_ASSIGN(auto reader, PuffinReader::OpenBytes(bytes_));
  BlobMetadata blob = reader->blobs()[1];
  BlobMetadata wrong_count = blob;
  wrong_count.properties["cardinality"] = std::to_string(samples_[1].positions.Cardinality() - 1);
  auto st = ReadDeletionVectorBlob(*reader, wrong_count).status();
  EXPECT_EQ(KindOf(st), ErrorKind::kCorrupt);
  EXPECT_NE(st.message().find("b.parquet"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("cardinality mismatch"), std::string::npos) << st.ToString();

  BlobMetadata not_a_number = blob;
  not_a_number.properties["cardinality"] = "12x";
  EXPECT_EQ(KindOf(ReadDeletionVectorBlob(*reader, not_a_number).status()), ErrorKind::kCorrupt);
  BlobMetadata no_file = blob;
  no_file.properties.erase("referenced-data-file");
  EXPECT_EQ(KindOf(ReadDeletionVectorBlob(*reader, no_file).status()), ErrorKind::kCorrupt);
  BlobMetadata compressed = blob;
  compressed.compression_codec = "zstd";
  EXPECT_EQ(KindOf(ReadDeletionVectorBlob(*reader, compressed).status()), ErrorKind::kCorrupt);
  BlobMetadata other_type = blob;
  other_type.type = "apache-datasketches-theta-v1";
  EXPECT_EQ(KindOf(ReadDeletionVectorBlob(*reader, other_type).status()), ErrorKind::kCorrupt);
}

TEST_F(DeletionVectorFileTest, BadCoordinates) {
  auto file = std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString(bytes_));
  const WrittenDeletionVector& v = result_.vectors[1];
  // Off by one in either direction lands on bytes that are not a DV blob.
  auto shifted = ReadDeletionVector(*file, v.content_offset + 1, v.content_size_in_bytes, std::nullopt);
  EXPECT_EQ(KindOf(shifted.status()), ErrorKind::kCorrupt) << shifted.status().ToString();
  EXPECT_NE(shifted.status().message().find("offset " + std::to_string(v.content_offset + 1)), std::string::npos)
      << shifted.status().ToString();
  auto shorter = ReadDeletionVector(*file, v.content_offset, v.content_size_in_bytes - 1, std::nullopt);
  EXPECT_EQ(KindOf(shorter.status()), ErrorKind::kCorrupt) << shorter.status().ToString();
  auto past_end = ReadDeletionVector(*file, static_cast<int64_t>(bytes_.size()) - 30, 40, std::nullopt);
  EXPECT_EQ(KindOf(past_end.status()), ErrorKind::kCorrupt) << past_end.status().ToString();
  EXPECT_NE(past_end.status().message().find("extends past end of file"), std::string::npos);
  EXPECT_EQ(KindOf(ReadDeletionVector(*file, -1, 40, std::nullopt).status()), ErrorKind::kInvalidArgument);
  EXPECT_EQ(KindOf(ReadDeletionVector(*file, 4, 19, std::nullopt).status()), ErrorKind::kInvalidArgument);
  auto wrong_count = ReadDeletionVector(*file, v.content_offset, v.content_size_in_bytes, v.cardinality + 1);
  EXPECT_EQ(KindOf(wrong_count.status()), ErrorKind::kCorrupt);
}

}  // namespace
}  // namespace lakesync::puffin
