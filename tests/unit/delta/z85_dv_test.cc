// Z85 and deletion-vector decoding against the vectors of PROTOCOL.md, the ZeroMQ Z85 RFC and
// delta-kernel-rs quoted in shared/specs/delta.md §6.
#include <arrow/io/file.h>
#include <gtest/gtest.h>

#include <fstream>

#include "delta_test_util.h"
#include "lakesync/delta/deletion_vector.h"
#include "lakesync/delta/z85.h"
#include "lakesync/formats/puffin/deletion_vector.h"

namespace lakesync::delta {
namespace {

using testing::ScratchDir;

TEST(Z85Test, RfcExample) {
  // ZeroMQ RFC 32: 86 4F D2 6F B5 59 F7 5B <-> "HelloWorld".
  const std::string bytes("\x86\x4F\xD2\x6F\xB5\x59\xF7\x5B", 8);
  ASSERT_OK_AND_ASSIGN(auto decoded, Z85Decode("HelloWorld"));
  EXPECT_EQ(decoded, bytes);
  ASSERT_OK_AND_ASSIGN(auto encoded, Z85Encode(bytes));
  EXPECT_EQ(encoded, "HelloWorld");
}

TEST(Z85Test, RejectsBadInput) {
  EXPECT_EQ(KindOf(Z85Decode("abcd").status()), ErrorKind::kCorrupt);     // not a multiple of 5
  EXPECT_EQ(KindOf(Z85Decode("abc\"d").status()), ErrorKind::kCorrupt);   // outside the alphabet
  // A group over 32 bits that is not a padded tail keeps its low 32 bits (Spark's (int) cast):
  // '$' is digit 83 and '#' digit 84 in the Z85 alphabet.
  const uint64_t v = ((((83ULL * 85 + 84) * 85 + 84) * 85 + 84) * 85 + 84);
  ASSERT_GT(v, 0xFFFFFFFFULL);
  const uint32_t low = static_cast<uint32_t>(v & 0xFFFFFFFFULL);
  ASSERT_OK_AND_ASSIGN(auto wrapped, Z85Decode("$####"));
  EXPECT_EQ(wrapped, std::string({static_cast<char>(low >> 24), static_cast<char>((low >> 16) & 0xFF),
                                  static_cast<char>((low >> 8) & 0xFF), static_cast<char>(low & 0xFF)}));
}

TEST(Z85Test, PaddedTailOfTheRustCrate) {
  // k leading '#' in the last group: a tail of 4 - k bytes, big-endian in the other digits.
  // "093" = 9*85 + 3 = 768 = 0x0300 -> bytes 03 00.
  ASSERT_OK_AND_ASSIGN(auto tail, Z85Decode("HelloWorld##093"));
  EXPECT_EQ(tail, std::string("\x86\x4F\xD2\x6F\xB5\x59\xF7\x5B\x03\x00", 10));
  EXPECT_EQ(KindOf(Z85Decode("#####").status()), ErrorKind::kCorrupt);
}

TEST(DeletionVectorPathTest, ProtocolAndKernelExamples) {
  DeletionVectorDescriptor dv;
  dv.storage_type = "u";
  dv.path_or_inline_dv = "ab^-aqEH.-t@S}K{vb[*k^";
  ASSERT_OK_AND_ASSIGN(auto a, DeletionVectorLocation("s3://b/t", dv));
  EXPECT_EQ(a, "s3://b/t/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin");
  dv.path_or_inline_dv = "vBn[lx{q8@P<9BNH/isA";
  ASSERT_OK_AND_ASSIGN(auto b, DeletionVectorLocation("file:///t", dv));
  EXPECT_EQ(b, "file:///t/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin");
  dv.storage_type = "p";
  dv.path_or_inline_dv = "s3://b/x%20y/dv.bin";
  ASSERT_OK_AND_ASSIGN(auto c, DeletionVectorLocation("file:///t", dv));
  EXPECT_EQ(c, "s3://b/x y/dv.bin");
  EXPECT_EQ(dv.UniqueId(), "ps3://b/x%20y/dv.bin");
  dv.offset = 7;
  EXPECT_EQ(dv.UniqueId(), "ps3://b/x%20y/dv.bin@7");
}

TEST(DeletionVectorTest, InlineKernelVector) {
  auto io = io::FileIO::Make().ValueOrDie();
  DeletionVectorDescriptor dv;
  dv.storage_type = "i";
  dv.path_or_inline_dv = "^Bg9^0rr910000000000iXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L";
  dv.size_in_bytes = 44;
  dv.cardinality = 6;
  ASSERT_OK_AND_ASSIGN(auto bitmap, LoadDeletionVector(*io, "file:///t", dv));
  EXPECT_EQ(bitmap.ToVector(), (std::vector<int64_t>{3, 4, 7, 11, 18, 29}));
  dv.cardinality = 5;  // a descriptor that disagrees with its bitmap
  EXPECT_EQ(KindOf(LoadDeletionVector(*io, "file:///t", dv).status()), ErrorKind::kCorrupt);
}

TEST(DeletionVectorTest, NativeSerialization) {
  // Native: magic 1681511376 LE, u32 count, then (u32 size, 32-bit portable bitmap) per high word.
  // The 32-bit bitmap below is the one inside the kernel vector: {3, 4, 7, 11, 18, 29}.
  ASSERT_OK_AND_ASSIGN(auto inline_bytes, Z85Decode("^Bg9^0rr910000000000iXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L"));
  const std::string bitmap32 = inline_bytes.substr(16, 28);
  std::string native("\xD0\xD3\x39\x64", 4);
  native += std::string("\x01\x00\x00\x00", 4);
  native += std::string("\x1C\x00\x00\x00", 4);
  native += bitmap32;
  ASSERT_OK_AND_ASSIGN(auto bitmap, DecodeDeletionVectorBitmap(native));
  EXPECT_EQ(bitmap.ToVector(), (std::vector<int64_t>{3, 4, 7, 11, 18, 29}));
  EXPECT_EQ(KindOf(DecodeDeletionVectorBitmap(native.substr(0, native.size() - 1)).status()), ErrorKind::kCorrupt);
}

class DeletionVectorFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ScratchDir("dvfile");
    io_ = io::FileIO::Make().ValueOrDie();
    auto positions = puffin::PositionBitmap::FromPositions(std::vector<int64_t>{0, 5, 70000, (1LL << 32) + 2});
    ASSERT_TRUE(positions.ok());
    expected_ = *positions;
    auto blob = puffin::SerializeDeletionVector(expected_);
    ASSERT_TRUE(blob.ok());
    blob_ = *blob;
    Write(std::string(1, '\x01') + blob_);
    dv_.storage_type = "p";
    dv_.path_or_inline_dv = "file://" + dir_ + "/dv.bin";
    dv_.offset = 1;
    dv_.size_in_bytes = static_cast<int32_t>(blob_.size() - 8);
    dv_.cardinality = 4;
  }
  void Write(const std::string& bytes) {
    std::ofstream(dir_ + "/dv.bin", std::ios::binary) << bytes;
  }
  std::string dir_;
  std::shared_ptr<io::FileIO> io_;
  puffin::PositionBitmap expected_;
  std::string blob_;
  DeletionVectorDescriptor dv_;
};

TEST_F(DeletionVectorFileTest, ReadsAtOffset) {
  ASSERT_OK_AND_ASSIGN(auto bitmap, LoadDeletionVector(*io_, "file:///t", dv_));
  EXPECT_EQ(bitmap, expected_);
  dv_.offset.reset();  // absent offset: the first DV of the file (kernel-rs)
  ASSERT_OK_AND_ASSIGN(auto again, LoadDeletionVector(*io_, "file:///t", dv_));
  EXPECT_EQ(again, expected_);
}

TEST_F(DeletionVectorFileTest, ChecksumSizeAndMissingFile) {
  std::string bad = std::string(1, '\x01') + blob_;
  bad[bad.size() - 1] ^= 0x55;  // CRC
  Write(bad);
  auto st = LoadDeletionVector(*io_, "file:///t", dv_).status();
  EXPECT_EQ(KindOf(st), ErrorKind::kCorrupt) << st.ToString();
  EXPECT_NE(st.ToString().find("dv.bin"), std::string::npos) << st.ToString();
  Write(std::string(1, '\x01') + blob_.substr(0, 10));  // truncated
  EXPECT_EQ(KindOf(LoadDeletionVector(*io_, "file:///t", dv_).status()), ErrorKind::kCorrupt);
  dv_.path_or_inline_dv = "file://" + dir_ + "/missing.bin";
  st = LoadDeletionVector(*io_, "file:///t", dv_).status();
  EXPECT_EQ(KindOf(st), ErrorKind::kNotFound) << st.ToString();
  EXPECT_NE(st.ToString().find("missing.bin"), std::string::npos);
}

}  // namespace
}  // namespace lakesync::delta
