#include "lakesync/formats/puffin/deletion_vector.h"

#include <arrow/util/crc32.h>
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "puffin_test_util.h"

namespace lakesync::puffin {
namespace {

using testing::AllShapes;
using testing::FromSet;
using testing::RandomPositions;
using testing::ReadCorpus;

const std::vector<std::string>& CorpusDeletionVectors() {
  static const std::vector<std::string> names = {
      "empty-position-index.bin", "small-alternating-values-position-index.bin",
      "small-and-large-values-position-index.bin", "all-container-types-position-index.bin"};
  return names;
}

void ExpectCorrupt(const std::string& blob, const std::string& fragment,
                   std::optional<int64_t> cardinality = std::nullopt) {
  auto result = DeserializeDeletionVector(blob, cardinality);
  ASSERT_FALSE(result.ok()) << "expected failure mentioning '" << fragment << "'";
  EXPECT_EQ(KindOf(result.status()), ErrorKind::kCorrupt) << result.status().ToString();
  EXPECT_NE(result.status().message().find(fragment), std::string::npos) << result.status().ToString();
}

// Iceberg Java compares its serializer's output for the empty set with this file byte for byte.
TEST(DeletionVectorTest, EmptyVectorMatchesJavaByteForByte) {
  ASSERT_OK_AND_ASSIGN(std::string blob, SerializeDeletionVector(PositionBitmap()));
  EXPECT_EQ(blob, ReadCorpus("empty-position-index.bin"));
  EXPECT_EQ(static_cast<int64_t>(blob.size()), kMinDeletionVectorBlobSize);
}

TEST(DeletionVectorTest, CorpusVectorsDecodeAndRoundTrip) {
  for (const std::string& name : CorpusDeletionVectors()) {
    SCOPED_TRACE(name);
    const std::string blob = ReadCorpus(name);
    ASSERT_OK_AND_ASSIGN(PositionBitmap positions, DeserializeDeletionVector(blob));
    // The decoded cardinality must be accepted as the expected one, and any other refused.
    ASSERT_OK(DeserializeDeletionVector(blob, positions.Cardinality()).status());
    ExpectCorrupt(blob, "cardinality mismatch", positions.Cardinality() + 1);

    ASSERT_OK_AND_ASSIGN(std::string again, SerializeDeletionVector(positions));
    ASSERT_OK_AND_ASSIGN(PositionBitmap back, DeserializeDeletionVector(again, positions.Cardinality()));
    EXPECT_EQ(back, positions);
  }
}

// Java writes every key up to the largest and run-optimizes first, as we do, so re-encoding the sets
// Java wrote should reproduce Java's bytes; a difference would show a layout or container choice
// that differs from the reference writer.
TEST(DeletionVectorTest, ReencodingCorpusVectorsReproducesJavaBytes) {
  for (const std::string& name : CorpusDeletionVectors()) {
    SCOPED_TRACE(name);
    const std::string blob = ReadCorpus(name);
    ASSERT_OK_AND_ASSIGN(PositionBitmap positions, DeserializeDeletionVector(blob));
    ASSERT_OK_AND_ASSIGN(std::string again, SerializeDeletionVector(positions));
    EXPECT_EQ(again, blob);
  }
}

// Java writes a bucket for every key from 0 to the largest; keys 1 and 2 here are empty gaps.
TEST(DeletionVectorTest, UsesJavaKeyLayoutWithGapBuckets) {
  PositionBitmap positions;
  ASSERT_OK(positions.Add(5));
  ASSERT_OK(positions.Add((int64_t{3} << 32) + 1));
  ASSERT_OK_AND_ASSIGN(std::string blob, SerializeDeletionVector(positions));
  uint64_t bucket_count = 0;
  for (int i = 7; i >= 0; --i) bucket_count = (bucket_count << 8) | static_cast<uint8_t>(blob[8 + i]);
  EXPECT_EQ(bucket_count, 4u);
  ASSERT_OK_AND_ASSIGN(PositionBitmap back, DeserializeDeletionVector(blob, 2));
  EXPECT_EQ(back, positions);
}

TEST(DeletionVectorTest, RandomSetsRoundTrip) {
  std::mt19937_64 rng(1234);
  for (int round = 0; round < 4; ++round) {
    for (auto shape : AllShapes()) {
      const std::set<int64_t> positions = RandomPositions(rng, shape);
      const PositionBitmap bitmap = FromSet(positions);
      ASSERT_OK_AND_ASSIGN(std::string blob, SerializeDeletionVector(bitmap));
      ASSERT_OK_AND_ASSIGN(PositionBitmap back,
                           DeserializeDeletionVector(blob, static_cast<int64_t>(positions.size())));
      ASSERT_EQ(back.ToVector(), testing::ToVector(positions));
    }
  }
}

class CorruptedVectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PositionBitmap positions;
    ASSERT_OK(positions.AddRange(100, 5000));
    ASSERT_OK(positions.Add((int64_t{1} << 32) + 9));
    ASSERT_OK_AND_ASSIGN(blob_, SerializeDeletionVector(positions));
  }
  std::string blob_;
};

TEST_F(CorruptedVectorTest, FlippedVectorByteFailsCrc) {
  std::string bad = blob_;
  bad[20] ^= 0x01;
  ExpectCorrupt(bad, "CRC-32 mismatch");
}

TEST_F(CorruptedVectorTest, FlippedCrcByteFailsCrc) {
  std::string bad = blob_;
  bad.back() ^= 0x80;
  ExpectCorrupt(bad, "CRC-32 mismatch");
}

TEST_F(CorruptedVectorTest, BadMagic) {
  std::string bad = blob_;
  bad[4] = 0x64;
  ExpectCorrupt(bad, "magic mismatch: expected D1 D3 39 64, found 64 D3 39 64");
}

TEST_F(CorruptedVectorTest, LengthFieldDisagreesWithBlobSize) {
  std::string bad = blob_;
  bad[3] = static_cast<char>(static_cast<uint8_t>(bad[3]) + 1);
  ExpectCorrupt(bad, "length field says");
  // Little-endian instead of big-endian, a classic mistake.
  std::string swapped = blob_;
  std::swap(swapped[0], swapped[3]);
  std::swap(swapped[1], swapped[2]);
  ExpectCorrupt(swapped, "length field says");
}

TEST_F(CorruptedVectorTest, EveryTruncationFails) {
  for (size_t len = 0; len < blob_.size(); ++len) {
    auto result = DeserializeDeletionVector(std::string_view(blob_).substr(0, len));
    ASSERT_FALSE(result.ok()) << len;
    ASSERT_EQ(KindOf(result.status()), ErrorKind::kCorrupt) << result.status().ToString();
  }
  ExpectCorrupt(blob_.substr(0, 10), "shorter than the smallest possible");
}

TEST_F(CorruptedVectorTest, CardinalityMismatch) {
  ExpectCorrupt(blob_, "holds 4901 positions, expected 4900", 4900);
}

// A vector whose CRC is right but whose bitmap is broken must still be refused by the bitmap checks.
TEST(DeletionVectorTest, ValidCrcOverBrokenBitmapIsCorrupt) {
  ASSERT_OK_AND_ASSIGN(std::string blob, SerializeDeletionVector(PositionBitmap()));
  // Claim one bucket although none follows, and fix up length and CRC.
  std::string vector = blob.substr(8, blob.size() - 12);
  vector[0] = 1;
  std::string covered = blob.substr(4, 4) + vector;
  const uint32_t crc = arrow::internal::crc32(0, covered.data(), covered.size());
  std::string rebuilt = blob.substr(0, 4) + covered;
  for (int shift = 24; shift >= 0; shift -= 8) rebuilt.push_back(static_cast<char>(crc >> shift));
  ExpectCorrupt(rebuilt, "claims 1 buckets");
}

}  // namespace
}  // namespace lakesync::puffin
