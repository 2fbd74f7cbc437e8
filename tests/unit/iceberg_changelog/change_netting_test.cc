// ChangeNetting against the rule written out directly (changelog_source.h): the rows visited in
// order, each identical DELETE/INSERT pair carried over first-with-first, then each key's remaining
// deletes and inserts paired first-with-first. Random inputs with many duplicates and keys changed
// several times, at several thread counts.
#include "lakesync/iceberg/changelog/change_netting.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>

#include "lakesync/common/executor.h"

namespace lakesync::changelog {
namespace {

using iceberg::Hash128;

struct Input {
  std::vector<Hash128> rows, keys;
  std::vector<uint8_t> sides;
};

// The rule, one row at a time in order, with ordered maps (no partitions, no sorting).
std::vector<uint8_t> Reference(const Input& in, bool keyed) {
  auto less = [](const Hash128& x, const Hash128& y) { return std::pair(x.a, x.b) < std::pair(y.a, y.b); };
  std::map<Hash128, std::pair<int, int>, decltype(less)> rows(less), keys(less);
  const size_t n = in.sides.size();
  for (size_t i = 0; i < n; ++i) (in.sides[i] == kDelete ? rows[in.rows[i]].first : rows[in.rows[i]].second) += 1;
  for (auto& [hash, count] : rows) {
    const int cancel = std::min(count.first, count.second);
    count = {cancel, cancel};
  }
  std::vector<uint8_t> out(n, kUndecided);
  for (size_t i = 0; i < n; ++i) {  // cancel first-with-first
    auto& count = rows[in.rows[i]];
    int& left = in.sides[i] == kDelete ? count.first : count.second;
    if (left > 0) {
      --left;
      out[i] = kCarriedOver;
    }
  }
  if (keyed) {
    for (size_t i = 0; i < n; ++i) {
      if (out[i] == kUndecided) (in.sides[i] == kDelete ? keys[in.keys[i]].first : keys[in.keys[i]].second) += 1;
    }
    for (auto& [hash, count] : keys) {
      const int pairs = std::min(count.first, count.second);
      count = {pairs, pairs};
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (out[i] != kUndecided) continue;
    const bool del = in.sides[i] == kDelete;
    if (keyed) {
      auto& count = keys[in.keys[i]];
      int& left = del ? count.first : count.second;
      if (left > 0) {
        --left;
        out[i] = del ? kEmitUpdateBefore : kEmitUpdateAfter;
        continue;
      }
    }
    out[i] = del ? kEmitDelete : kEmitInsert;
  }
  return out;
}

// Rows drawn from small pools of keys and of values per key, so that rows repeat, keys change
// several times and identical rows appear on both sides.
Input RandomInput(size_t n, uint64_t seed, int key_pool, int values_per_key) {
  std::mt19937_64 rng(seed);
  Input in;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t key = rng() % static_cast<uint64_t>(key_pool);
    const uint64_t value = rng() % static_cast<uint64_t>(values_per_key);
    // Distinct, well-mixed hashes per key and per (key, value).
    in.keys.push_back(Hash128{key * 0x9E3779B97F4A7C15ULL + 17, key ^ 0xC2B2AE3D27D4EB4FULL});
    in.rows.push_back(Hash128{(key * 131 + value + 1) * 0xD6E8FEB86659FD93ULL, key * 7 + value});
    in.sides.push_back(rng() % 2 ? kDelete : kInsert);
  }
  return in;
}

std::vector<uint8_t> Decide(const Input& in, bool keyed, size_t pieces, bool* any, NettingBuffer* buffer = nullptr) {
  ChangeNetting netting(keyed);
  // Added in several spans, as the changelog adds one per batch.
  const size_t n = in.sides.size();
  for (size_t p = 0; p < pieces; ++p) {
    const size_t begin = n * p / pieces, end = n * (p + 1) / pieces;
    EXPECT_TRUE(netting.Add(in.rows.data() + begin, keyed ? in.keys.data() + begin : nullptr, in.sides.data() + begin,
                            end - begin)
                    .ok());
  }
  EXPECT_EQ(netting.size(), n);
  auto decided = netting.Decide(any, buffer);
  EXPECT_TRUE(decided.ok()) << decided.status().ToString();
  return decided.ok() ? *decided : std::vector<uint8_t>();
}

TEST(ChangeNettingTest, MatchesTheRuleRowByRow) {
  for (int threads : {1, 2, 4}) {
    ASSERT_TRUE(ConfigureThreads(threads).ok());
    for (bool keyed : {true, false}) {
      for (auto [n, key_pool, values] : {std::tuple<size_t, int, int>{50, 5, 2}, {3000, 400, 3}, {50000, 15000, 2}}) {
        const Input in = RandomInput(n, 42 + n + static_cast<size_t>(threads), key_pool, values);
        bool any = false;
        const auto got = Decide(in, keyed, 7, &any);
        const auto want = Reference(in, keyed);
        ASSERT_EQ(got.size(), want.size());
        size_t differ = 0;
        for (size_t i = 0; i < got.size(); ++i) differ += got[i] != want[i];
        EXPECT_EQ(differ, 0u) << "threads " << threads << " keyed " << keyed << " rows " << n;
        bool want_any = false;
        for (uint8_t d : want) want_any = want_any || (d != kEmitDelete && d != kEmitInsert);
        EXPECT_EQ(any, want_any);
        EXPECT_TRUE(want_any);  // the inputs are built to cancel and pair
      }
    }
  }
}

// Keys and rows whose hashes share their first word and differ only in the second (the partition sort
// orders by the first word, then runs of an equal one by the whole hash): still the rule's decisions.
TEST(ChangeNettingTest, HashesEqualInTheirFirstWordAreStillTold) {
  for (bool keyed : {true, false}) {
    Input in = RandomInput(3000, 7, 300, 3);
    for (auto& h : in.keys) h.a &= 0xF000000000000000ULL;  // 16 first words for 300 keys
    for (auto& h : in.rows) h.a &= 0xF000000000000000ULL;
    bool any = false;
    EXPECT_EQ(Decide(in, keyed, 5, &any), Reference(in, keyed)) << "keyed " << keyed;
  }
}

// One buffer serving snapshot after snapshot (as the changelog keeps it): larger inputs grow it,
// smaller ones reuse it with rows of the last input still in it, and every result is the rule's.
TEST(ChangeNettingTest, ABufferKeptFromOneDecisionToTheNext) {
  ASSERT_TRUE(ConfigureThreads(2).ok());
  NettingBuffer buffer;
  EXPECT_EQ(buffer.bytes(), 0u);
  size_t largest = 0;
  for (auto [n, key_pool] : {std::pair<size_t, int>{3000, 400}, {50000, 15000}, {700, 90}, {20000, 6000}}) {
    const Input in = RandomInput(n, 7 + n, key_pool, 2);
    bool any = false;
    EXPECT_EQ(Decide(in, true, 3, &any, &buffer), Reference(in, true)) << n << " rows";
    largest = std::max(largest, n);
    EXPECT_GE(buffer.bytes(), largest * 40) << "holds the largest input's rows, 40 bytes each";
    EXPECT_LE(buffer.bytes(), largest * 64) << "and not more than that input needed";
  }
}

TEST(ChangeNettingTest, KeysChangedOnceAreWhatTheirSideSays) {
  Input in;
  for (uint64_t k = 1; k <= 1000; ++k) {
    in.keys.push_back(Hash128{k * 0x9E3779B97F4A7C15ULL, k});
    in.rows.push_back(Hash128{k * 0xD6E8FEB86659FD93ULL, k});
    in.sides.push_back(k % 3 ? kInsert : kDelete);
  }
  bool any = true;
  const auto got = Decide(in, true, 1, &any);
  EXPECT_FALSE(any);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], in.sides[i] == kDelete ? kEmitDelete : kEmitInsert);
}

TEST(ChangeNettingTest, UpdatePairsFirstWithFirstAndCarryOverWins) {
  // One key: D(a) I(b) D(c) I(a) -> D(a)/I(a) carried over, D(c)/I(b) pair into an update.
  const Hash128 key{99, 1}, a{1, 1}, b{2, 2}, c{3, 3};
  Input in{{a, b, c, a}, {key, key, key, key}, {kDelete, kInsert, kDelete, kInsert}};
  bool any = false;
  const auto got = Decide(in, true, 2, &any);
  EXPECT_TRUE(any);
  EXPECT_EQ(got, (std::vector<uint8_t>{kCarriedOver, kEmitUpdateAfter, kEmitUpdateBefore, kCarriedOver}));
  // Without keys nothing pairs.
  const auto unkeyed = Decide(in, false, 1, &any);
  EXPECT_EQ(unkeyed, (std::vector<uint8_t>{kCarriedOver, kEmitInsert, kEmitDelete, kCarriedOver}));
}

TEST(ChangeNettingTest, KeysChangedTwice) {
  // Per key, two changes: D(a) I(b) and I(c) D(d) pair (whichever side comes first), D(e) D(f) do
  // not, D(g) I(g) are carried over.
  const Hash128 k1{11, 1}, k2{22, 2}, k3{33, 3}, k4{44, 4};
  const Hash128 a{1, 1}, b{2, 2}, c{3, 3}, d{4, 4}, e{5, 5}, f{6, 6}, g{7, 7};
  Input in{{a, c, e, g, b, d, f, g},
           {k1, k2, k3, k4, k1, k2, k3, k4},
           {kDelete, kInsert, kDelete, kDelete, kInsert, kDelete, kDelete, kInsert}};
  bool any = false;
  const auto got = Decide(in, true, 3, &any);
  EXPECT_TRUE(any);
  EXPECT_EQ(got, (std::vector<uint8_t>{kEmitUpdateBefore, kEmitUpdateAfter, kEmitDelete, kCarriedOver,
                                       kEmitUpdateAfter, kEmitUpdateBefore, kEmitDelete, kCarriedOver}));
  EXPECT_EQ(got, Reference(in, true));
}

}  // namespace
}  // namespace lakesync::changelog
