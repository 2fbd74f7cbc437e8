#include "lakesync/formats/puffin/roaring64_portable.h"

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

// Little-endian byte builders, written from RoaringFormatSpec, for hand-made (often broken) inputs.
void U16(std::string* s, uint16_t v) {
  s->push_back(static_cast<char>(v));
  s->push_back(static_cast<char>(v >> 8));
}
void U32(std::string* s, uint32_t v) {
  U16(s, static_cast<uint16_t>(v));
  U16(s, static_cast<uint16_t>(v >> 16));
}
void U64(std::string* s, uint64_t v) {
  U32(s, static_cast<uint32_t>(v));
  U32(s, static_cast<uint32_t>(v >> 32));
}
uint64_t ReadU64(const std::string& s) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[i]);
  return v;
}

// A 32-bit bitmap without run containers holding one array container (key 0) with `values`.
std::string ArrayBitmap32(const std::vector<uint16_t>& values) {
  std::string s;
  U32(&s, 12346);
  U32(&s, 1);
  U16(&s, 0);                                         // container key
  U16(&s, static_cast<uint16_t>(values.size() - 1));  // cardinality - 1
  U32(&s, 16);                                        // offset of the container: 4 + 4 + 4 + 4
  for (uint16_t v : values) U16(&s, v);
  return s;
}

// A 32-bit bitmap with one run container (key 0); runs are (start, length - 1) pairs.
std::string RunBitmap32(const std::vector<std::pair<uint16_t, uint16_t>>& runs, uint16_t cardinality_minus_one) {
  std::string s;
  U32(&s, 12347);  // run cookie, (1 container - 1) << 16
  s.push_back(1);  // container 0 is a run container
  U16(&s, 0);
  U16(&s, cardinality_minus_one);
  // Fewer than 4 containers: no offset header.
  U16(&s, static_cast<uint16_t>(runs.size()));
  for (auto [start, len_minus_one] : runs) {
    U16(&s, start);
    U16(&s, len_minus_one);
  }
  return s;
}

std::string Wrap64(const std::vector<std::pair<uint32_t, std::string>>& buckets) {
  std::string s;
  U64(&s, buckets.size());
  for (const auto& [key, bitmap] : buckets) {
    U32(&s, key);
    s += bitmap;
  }
  return s;
}

void ExpectCorrupt(const std::string& bytes, const std::string& fragment) {
  auto result = DeserializeRoaring64Portable(bytes);
  ASSERT_FALSE(result.ok()) << "expected failure mentioning '" << fragment << "'";
  EXPECT_EQ(KindOf(result.status()), ErrorKind::kCorrupt) << result.status().ToString();
  EXPECT_NE(result.status().message().find(fragment), std::string::npos) << result.status().ToString();
}

TEST(Roaring64PortableTest, EmptyBitmapIsJustACount) {
  ASSERT_OK_AND_ASSIGN(std::string bytes, SerializeRoaring64Portable(PositionBitmap()));
  EXPECT_EQ(bytes, std::string(8, '\0'));
  ASSERT_OK_AND_ASSIGN(PositionBitmap back, DeserializeRoaring64Portable(bytes));
  EXPECT_TRUE(back.IsEmpty());
}

TEST(Roaring64PortableTest, RoundTripsRandomSetsInBothLayouts) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 4; ++round) {
    for (auto shape : AllShapes()) {
      const std::set<int64_t> positions = RandomPositions(rng, shape);
      const PositionBitmap bitmap = FromSet(positions);
      for (auto layout : {Roaring64KeyLayout::kEveryKeyUpToMax, Roaring64KeyLayout::kNonEmptyKeysOnly}) {
        Roaring64SerializeOptions options;
        options.key_layout = layout;
        ASSERT_OK_AND_ASSIGN(std::string bytes, SerializeRoaring64Portable(bitmap, options));
        ASSERT_OK_AND_ASSIGN(int64_t size, Roaring64PortableSize(bitmap, options));
        EXPECT_EQ(size, static_cast<int64_t>(bytes.size()));
        // The bucket count follows the layout: every key up to the largest, or only the used ones.
        const uint64_t max_key = static_cast<uint64_t>(*positions.rbegin()) >> 32;
        std::set<uint64_t> used_keys;
        for (int64_t p : positions) used_keys.insert(static_cast<uint64_t>(p) >> 32);
        EXPECT_EQ(ReadU64(bytes),
                  layout == Roaring64KeyLayout::kEveryKeyUpToMax ? max_key + 1 : used_keys.size());
        ASSERT_OK_AND_ASSIGN(PositionBitmap back, DeserializeRoaring64Portable(bytes));
        ASSERT_EQ(back, bitmap);
        ASSERT_EQ(back.ToVector(), testing::ToVector(positions));
      }
    }
  }
}

TEST(Roaring64PortableTest, LongRunsBecomeRunContainers) {
  PositionBitmap runs;
  ASSERT_TRUE(runs.AddRange(0, 1'000'000).ok());
  ASSERT_OK_AND_ASSIGN(std::string bytes, SerializeRoaring64Portable(runs));
  // One million consecutive rows span 16 containers of 65536 values; as run containers each takes
  // 14 bytes (header, offset, one run) where a bitset would take 8 KiB.
  EXPECT_LT(bytes.size(), 300u);
  ASSERT_OK_AND_ASSIGN(PositionBitmap back, DeserializeRoaring64Portable(bytes));
  EXPECT_EQ(back.Cardinality(), 1'000'000);
}

TEST(Roaring64PortableTest, LargestPositionNeedsSparseLayout) {
  PositionBitmap bitmap;
  ASSERT_TRUE(bitmap.Add(INT64_MAX).ok());
  ASSERT_TRUE(bitmap.Add(3).ok());
  // Java's dense layout would need 2^31 buckets; that is refused cleanly rather than allocated.
  auto dense = SerializeRoaring64Portable(bitmap);
  ASSERT_FALSE(dense.ok());
  EXPECT_EQ(KindOf(dense.status()), ErrorKind::kInvalidArgument);
  Roaring64SerializeOptions sparse;
  sparse.key_layout = Roaring64KeyLayout::kNonEmptyKeysOnly;
  ASSERT_OK_AND_ASSIGN(std::string bytes, SerializeRoaring64Portable(bitmap, sparse));
  ASSERT_OK_AND_ASSIGN(PositionBitmap back, DeserializeRoaring64Portable(bytes));
  EXPECT_EQ(back, bitmap);
}

TEST(Roaring64PortableTest, AcceptsEmptyBucketsAndGaps) {
  // Key 0 empty, key 2 with values 1 and 3, key 1 absent.
  std::string empty;
  U32(&empty, 12346);
  U32(&empty, 0);
  const std::string bytes = Wrap64({{0, empty}, {2, ArrayBitmap32({1, 3})}});
  ASSERT_OK_AND_ASSIGN(PositionBitmap bitmap, DeserializeRoaring64Portable(bytes));
  EXPECT_EQ(bitmap.ToVector(), (std::vector<int64_t>{(int64_t{2} << 32) + 1, (int64_t{2} << 32) + 3}));
}

TEST(Roaring64PortableTest, PrefixParseReportsConsumedBytes) {
  PositionBitmap bitmap;
  ASSERT_TRUE(bitmap.Add(77).ok());
  ASSERT_OK_AND_ASSIGN(std::string bytes, SerializeRoaring64Portable(bitmap));
  const std::string padded = bytes + "ZZZZ";
  ASSERT_OK_AND_ASSIGN(Roaring64ParseResult parsed, ParseRoaring64PortablePrefix(padded));
  EXPECT_EQ(parsed.bytes_consumed, bytes.size());
  EXPECT_EQ(parsed.bitmap, bitmap);
  ExpectCorrupt(padded, "4 trailing bytes");
}

TEST(Roaring64PortableTest, EveryTruncationIsCorrupt) {
  std::mt19937_64 rng(3);
  std::set<int64_t> positions = RandomPositions(rng, testing::Shape::kMixed);
  ASSERT_OK_AND_ASSIGN(std::string bytes, SerializeRoaring64Portable(FromSet(positions)));
  for (size_t len = 0; len < bytes.size(); ++len) {
    auto result = DeserializeRoaring64Portable(std::string_view(bytes).substr(0, len));
    ASSERT_FALSE(result.ok()) << "prefix of " << len << " bytes decoded";
    ASSERT_EQ(KindOf(result.status()), ErrorKind::kCorrupt) << result.status().ToString();
  }
}

TEST(Roaring64PortableTest, RejectsMalformedFraming) {
  const std::string one = ArrayBitmap32({5});
  ExpectCorrupt("", "too short for the 8-byte bucket count");
  ExpectCorrupt(Wrap64({{0x80000000u, one}}), "most significant bit");
  ExpectCorrupt(Wrap64({{3, one}, {3, one}}), "not above the previous key 3");
  ExpectCorrupt(Wrap64({{4, one}, {2, one}}), "not above the previous key 4");
  // A count far beyond what the bytes could hold is refused before any loop runs.
  std::string forged;
  U64(&forged, UINT64_MAX);
  ExpectCorrupt(forged + one, "claims 18446744073709551615 buckets");
}

TEST(Roaring64PortableTest, RejectsMalformedContainers) {
  ExpectCorrupt(Wrap64({{0, ArrayBitmap32({5, 5})}}), "not strictly ascending");
  ExpectCorrupt(Wrap64({{0, ArrayBitmap32({9, 2})}}), "not strictly ascending");
  ExpectCorrupt(Wrap64({{0, RunBitmap32({{10, 4}, {12, 0}}, 5)}}), "overlapping");
  ExpectCorrupt(Wrap64({{0, RunBitmap32({{65530, 10}}, 10)}}), "runs past 65535");
  ExpectCorrupt(Wrap64({{0, RunBitmap32({{10, 4}}, 9)}}), "holds 5 values but its header says 10");

  std::string bad_cookie;
  U32(&bad_cookie, 99999);
  U32(&bad_cookie, 0);
  ExpectCorrupt(Wrap64({{0, bad_cookie}}), "unknown cookie");

  std::string too_many;
  U32(&too_many, 12346);
  U32(&too_many, 70000);
  ExpectCorrupt(Wrap64({{0, too_many + std::string(64, '\0')}}), "claims 70000 containers");

  std::string wrong_offset = ArrayBitmap32({1, 2});
  wrong_offset[12] = 20;  // offset header points past the container start (16)
  ExpectCorrupt(Wrap64({{0, wrong_offset}}), "offset header says container 0 starts at byte 20");

  // A bitset container (cardinality > 4096) whose bits disagree with the declared cardinality.
  std::string bitset;
  U32(&bitset, 12346);
  U32(&bitset, 1);
  U16(&bitset, 0);
  U16(&bitset, 4999);  // claims 5000 values
  U32(&bitset, 16);
  bitset += std::string(8192, '\xFF');  // holds 65536
  ExpectCorrupt(Wrap64({{0, bitset}}), "holds 65536 values but its header says 5000");

  // Container keys inside one 32-bit bitmap must ascend too.
  std::string keys;
  U32(&keys, 12346);
  U32(&keys, 2);
  U16(&keys, 7);
  U16(&keys, 0);
  U16(&keys, 7);
  U16(&keys, 0);
  U32(&keys, 24);
  U32(&keys, 26);
  U16(&keys, 1);
  U16(&keys, 2);
  ExpectCorrupt(Wrap64({{0, keys}}), "not above the previous key 7");
}

// Mutated inputs must either decode to a usable set or fail with Corrupt, never crash or corrupt
// memory (run under AddressSanitizer to make the second half of that visible).
TEST(Roaring64PortableTest, RandomMutationsDecodeCleanlyOrFail) {
  std::mt19937_64 rng(555);
  std::vector<std::string> seeds;
  for (auto shape : {testing::Shape::kSmall, testing::Shape::kMixed, testing::Shape::kManyKeys}) {
    ASSERT_OK_AND_ASSIGN(std::string bytes, SerializeRoaring64Portable(FromSet(RandomPositions(rng, shape))));
    seeds.push_back(bytes);
  }
  PositionBitmap bitset_heavy;
  for (int i = 0; i < 20000; ++i) ASSERT_OK(bitset_heavy.Add(static_cast<int64_t>(rng() % 65536)));
  ASSERT_OK_AND_ASSIGN(std::string bitset_bytes, SerializeRoaring64Portable(bitset_heavy));
  seeds.push_back(bitset_bytes);

  int decoded = 0;
  for (int iteration = 0; iteration < 4000; ++iteration) {
    std::string bytes = seeds[iteration % seeds.size()];
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      const size_t at = rng() % bytes.size();
      switch (rng() % 3) {
        case 0: bytes[at] = static_cast<char>(rng()); break;
        case 1: bytes[at] ^= static_cast<char>(1 << (rng() % 8)); break;
        default: bytes.resize(at); break;
      }
      if (bytes.empty()) break;
    }
    auto result = DeserializeRoaring64Portable(bytes);
    if (!result.ok()) {
      ASSERT_EQ(KindOf(result.status()), ErrorKind::kCorrupt) << result.status().ToString();
      continue;
    }
    ++decoded;
    PositionBitmap bitmap = std::move(result).ValueUnsafe();
    ASSERT_EQ(bitmap.Cardinality(), static_cast<int64_t>(bitmap.ToVector().size()));
    PositionBitmap other = bitmap;
    other.RunOptimize();
    other.Or(bitset_heavy);
    other.AndNot(bitmap);
    Roaring64SerializeOptions sparse;
    sparse.key_layout = Roaring64KeyLayout::kNonEmptyKeysOnly;
    ASSERT_OK_AND_ASSIGN(std::string again, SerializeRoaring64Portable(bitmap, sparse));
    ASSERT_OK_AND_ASSIGN(PositionBitmap back, DeserializeRoaring64Portable(again));
    ASSERT_EQ(back, bitmap);
  }
  // Some mutations (inside array values, for example) keep the input valid; make sure both paths ran.
  EXPECT_GT(decoded, 0);
}

// Bare portable Roaring64 files written by Iceberg Java. The positions they hold are checked against
// pyroaring by tests/interop/test_puffin_oracle.py; here we check that they decode and that our
// encoding of the decoded set decodes to the same set.
TEST(Roaring64PortableTest, CorpusFilesDecodeAndRoundTrip) {
  for (const char* name : {"64mapempty.bin", "64map32bitvals.bin", "64mapspreadvals.bin"}) {
    SCOPED_TRACE(name);
    const std::string bytes = ReadCorpus(name);
    ASSERT_OK_AND_ASSIGN(PositionBitmap bitmap, DeserializeRoaring64Portable(bytes));
    ASSERT_OK_AND_ASSIGN(std::string again, SerializeRoaring64Portable(bitmap));
    ASSERT_OK_AND_ASSIGN(PositionBitmap back, DeserializeRoaring64Portable(again));
    EXPECT_EQ(back, bitmap);
    EXPECT_EQ(back.Cardinality(), bitmap.Cardinality());
  }
  EXPECT_TRUE(DeserializeRoaring64Portable(ReadCorpus("64mapempty.bin")).ValueOrDie().IsEmpty());
  EXPECT_FALSE(DeserializeRoaring64Portable(ReadCorpus("64mapspreadvals.bin")).ValueOrDie().IsEmpty());
}

TEST(Roaring64PortableTest, CorpusHighValuesFileIsRejected) {
  ExpectCorrupt(ReadCorpus("64maphighvals.bin"), "most significant bit set");
}

}  // namespace
}  // namespace lakesync::puffin
