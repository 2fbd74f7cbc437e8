#include "lakesync/formats/puffin/positions_bitmap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "puffin_test_util.h"

namespace lakesync::puffin {
namespace {

using testing::AllShapes;
using testing::FromSet;
using testing::RandomPositions;
using testing::ToVector;

TEST(PositionBitmapTest, EmptySet) {
  PositionBitmap bitmap;
  EXPECT_TRUE(bitmap.IsEmpty());
  EXPECT_EQ(bitmap.Cardinality(), 0);
  EXPECT_FALSE(bitmap.Contains(0));
  EXPECT_FALSE(bitmap.Min().has_value());
  EXPECT_FALSE(bitmap.Max().has_value());
  EXPECT_TRUE(bitmap.ToVector().empty());
  EXPECT_EQ(bitmap, PositionBitmap());
}

TEST(PositionBitmapTest, AddContainsAcrossHalves) {
  PositionBitmap bitmap;
  const std::vector<int64_t> positions = {0, 1, (int64_t{1} << 31) - 1, int64_t{1} << 31, (int64_t{1} << 32) - 1,
                                          int64_t{1} << 32, (int64_t{7} << 32) + 5, INT64_MAX};
  for (int64_t p : positions) ASSERT_TRUE(bitmap.Add(p).ok());
  ASSERT_TRUE(bitmap.Add(1).ok());  // duplicates are ignored
  EXPECT_EQ(bitmap.Cardinality(), static_cast<int64_t>(positions.size()));
  for (int64_t p : positions) EXPECT_TRUE(bitmap.Contains(p)) << p;
  EXPECT_FALSE(bitmap.Contains(2));
  EXPECT_FALSE(bitmap.Contains((int64_t{1} << 32) + 1));
  EXPECT_FALSE(bitmap.Contains(-1));
  EXPECT_EQ(bitmap.ToVector(), positions);
  EXPECT_EQ(bitmap.Min(), 0);
  EXPECT_EQ(bitmap.Max(), INT64_MAX);
}

TEST(PositionBitmapTest, NegativePositionsAreRejected) {
  PositionBitmap bitmap;
  Status st = bitmap.Add(-5);
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidArgument);
  EXPECT_NE(st.message().find("-5"), std::string::npos) << st.ToString();
  EXPECT_EQ(KindOf(bitmap.AddRange(-3, 10)), ErrorKind::kInvalidArgument);
  const std::vector<int64_t> with_negative = {1, 2, -7};
  EXPECT_EQ(KindOf(PositionBitmap::FromPositions(with_negative).status()), ErrorKind::kInvalidArgument);
  EXPECT_TRUE(bitmap.IsEmpty());
}

TEST(PositionBitmapTest, AddRangeSpanningBuckets) {
  PositionBitmap bitmap;
  const int64_t begin = (int64_t{1} << 32) - 10;
  const int64_t end = (int64_t{3} << 32) + 10;  // covers all of key 2
  ASSERT_TRUE(bitmap.AddRange(begin, end).ok());
  EXPECT_EQ(bitmap.Cardinality(), end - begin);
  EXPECT_TRUE(bitmap.Contains(begin));
  EXPECT_TRUE(bitmap.Contains(end - 1));
  EXPECT_FALSE(bitmap.Contains(end));
  EXPECT_FALSE(bitmap.Contains(begin - 1));
  EXPECT_EQ(bitmap.Min(), begin);
  EXPECT_EQ(bitmap.Max(), end - 1);
  ASSERT_TRUE(bitmap.AddRange(5, 5).ok());  // empty range
  ASSERT_TRUE(bitmap.AddRange(9, 3).ok());  // reversed range
  EXPECT_EQ(bitmap.Cardinality(), end - begin);
}

TEST(PositionBitmapTest, CopyIsDeep) {
  PositionBitmap a;
  ASSERT_TRUE(a.Add(10).ok());
  PositionBitmap b = a;
  ASSERT_TRUE(b.Add(11).ok());
  EXPECT_EQ(a.Cardinality(), 1);
  EXPECT_EQ(b.Cardinality(), 2);
  a = b;
  EXPECT_EQ(a, b);
  PositionBitmap moved = std::move(a);
  EXPECT_EQ(moved, b);
}

TEST(PositionBitmapTest, AndNotToEmptyDropsBuckets) {
  PositionBitmap a;
  ASSERT_TRUE(a.Add((int64_t{5} << 32) + 1).ok());
  PositionBitmap b = a;
  a.AndNot(b);
  EXPECT_TRUE(a.IsEmpty());
  EXPECT_EQ(a, PositionBitmap());
  b.AndNot(b);
  EXPECT_TRUE(b.IsEmpty());
}

// Property test: every operation agrees with std::set on random sets of every shape.
TEST(PositionBitmapTest, OperationsAgreeWithStdSet) {
  std::mt19937_64 rng(20260821);
  for (int round = 0; round < 1; ++round) {
    for (auto shape_a : AllShapes()) {
      for (auto shape_b : {testing::Shape::kSmall, testing::Shape::kDense, testing::Shape::kAround2to32, shape_a}) {
        std::set<int64_t> sa = RandomPositions(rng, shape_a);
        std::set<int64_t> sb = RandomPositions(rng, shape_b);
        // Make them overlap so the difference is not trivially one of the inputs.
        for (int64_t p : sa) {
          if (rng() % 3 == 0) sb.insert(p);
        }
        PositionBitmap a = FromSet(sa);
        PositionBitmap b = FromSet(sb);
        ASSERT_EQ(a.Cardinality(), static_cast<int64_t>(sa.size()));
        ASSERT_EQ(a.ToVector(), ToVector(sa));
        ASSERT_EQ(a.Min(), *sa.begin());
        ASSERT_EQ(a.Max(), *sa.rbegin());

        std::set<int64_t> su = sa;
        su.insert(sb.begin(), sb.end());
        PositionBitmap u = a;
        u.Or(b);
        ASSERT_EQ(u.ToVector(), ToVector(su));
        ASSERT_EQ(u, FromSet(su));

        std::set<int64_t> sd;
        std::set_difference(sa.begin(), sa.end(), sb.begin(), sb.end(), std::inserter(sd, sd.end()));
        PositionBitmap d = a;
        d.AndNot(b);
        ASSERT_EQ(d.ToVector(), ToVector(sd));
        ASSERT_EQ(d.Cardinality(), static_cast<int64_t>(sd.size()));
        ASSERT_EQ(d == a, sd == sa);

        // Contains on members and on neighbours.
        int checked = 0;
        for (int64_t p : sa) {
          if (++checked > 500) break;
          ASSERT_TRUE(a.Contains(p));
          ASSERT_EQ(a.Contains(p + 1), sa.count(p + 1) > 0);
        }

        // Range extraction over a random window.
        const int64_t lo = *sa.begin() + static_cast<int64_t>(rng() % 1000);
        const int64_t hi = lo + static_cast<int64_t>(rng() % (int64_t{1} << 33));
        std::vector<int64_t> expected(sa.lower_bound(lo), sa.lower_bound(hi));
        ASSERT_EQ(a.ToVector(lo, hi), expected);
        ASSERT_EQ(a.CountIn(lo, hi), static_cast<int64_t>(expected.size()));
        // A window inside one 2^32 bucket, ending exactly at a member and one past it.
        const int64_t member = *std::next(sa.begin(), static_cast<long>(rng() % sa.size()));
        ASSERT_EQ(a.CountIn(member, member + 1), 1);
        ASSERT_EQ(a.CountIn(member, member), 0);
        ASSERT_EQ(a.CountIn(0, member + 1),
                  static_cast<int64_t>(std::distance(sa.begin(), sa.upper_bound(member))));

        // ForEach visits the same positions in order.
        std::vector<int64_t> visited;
        a.ForEach([&](int64_t p) { visited.push_back(p); });
        ASSERT_EQ(visited, ToVector(sa));

        // RunOptimize changes the representation, not the set.
        PositionBitmap optimized = a;
        optimized.RunOptimize();
        ASSERT_EQ(optimized, a);
      }
    }
  }
}

TEST(PositionBitmapTest, AddRangeAgreesWithStdSet) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 30; ++i) {
    std::set<int64_t> expected;
    PositionBitmap bitmap;
    for (int r = 0; r < 4; ++r) {
      const int64_t begin = static_cast<int64_t>(rng() % (int64_t{3} << 32));
      const int64_t len = static_cast<int64_t>(rng() % 100000);
      ASSERT_TRUE(bitmap.AddRange(begin, begin + len).ok());
      for (int64_t p = begin; p < begin + len; ++p) expected.insert(p);
    }
    ASSERT_EQ(bitmap.ToVector(), ToVector(expected));
  }
}

}  // namespace
}  // namespace lakesync::puffin
