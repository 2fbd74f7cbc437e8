// The one key encoder (equality deletes, key resolution, grouping by key, changelog hashes): which
// values are equal follows the spec's equality-delete rules, whatever Arrow layout holds them.
#include "lakesync/iceberg/model/key_columns.h"

#include <gtest/gtest.h>

#include <arrow/api.h>
#include <arrow/extension/uuid.h>
#include <arrow/json/from_string.h>
#include <arrow/util/bit_util.h>
#include <algorithm>

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "model_test_util.h"

namespace lakesync::iceberg {
namespace {

std::shared_ptr<arrow::Array> Json(const std::shared_ptr<arrow::DataType>& type, const std::string& json) {
  auto array = arrow::json::ArrayFromJSONString(type, json);
  EXPECT_TRUE(array.ok()) << array.status().ToString();
  return *array;
}

KeyColumns Keys(std::vector<std::shared_ptr<arrow::Array>> columns) {
  auto keys = KeyColumns::Make(std::move(columns));
  EXPECT_TRUE(keys.ok()) << keys.status().ToString();
  return std::move(keys).ValueOrDie();
}

KeySet Set(const KeyColumns& keys) {
  auto set = KeySet::Make(keys);
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return std::move(set).ValueOrDie();
}

std::string Encoded(const KeyColumns& keys, int64_t row) {
  std::string out;
  keys.AppendKey(row, out);
  return out;
}

TEST(KeyColumns, NullsEqualNullsAndDifferFromValues) {
  auto keys = Keys({Json(arrow::int64(), "[1, null, 1, null, 0]")});
  EXPECT_TRUE(keys.Equal(1, 3));
  EXPECT_TRUE(keys.Equal(0, 2));
  EXPECT_FALSE(keys.Equal(0, 1));
  EXPECT_FALSE(keys.Equal(1, 4));  // null is not zero
  EXPECT_EQ(Encoded(keys, 1), Encoded(keys, 3));
  EXPECT_NE(Encoded(keys, 1), Encoded(keys, 4));
  const auto hashes = keys.HashRows(7);
  EXPECT_EQ(hashes[1], hashes[3]);
  EXPECT_EQ(hashes[0], hashes[2]);
  EXPECT_NE(hashes[1], hashes[4]);
}

TEST(KeyColumns, FloatsCompareByBitsWithOneNaN) {
  const double nan1 = std::numeric_limits<double>::quiet_NaN();
  const double nan2 = -std::nan("0x5");  // another NaN payload and sign
  arrow::DoubleBuilder b;
  ASSERT_TRUE(b.AppendValues({nan1, nan2, 0.0, -0.0, 1.5}).ok());
  auto keys = Keys({*b.Finish()});
  EXPECT_TRUE(keys.Equal(0, 1));
  EXPECT_EQ(keys.Word(0), keys.Word(1));
  EXPECT_FALSE(keys.Equal(2, 3));  // -0.0 and 0.0 differ, as in Java's comparators
  EXPECT_EQ(Set(keys).size(), 4u);
}

TEST(KeyColumns, StringsMatchAcrossArrowLayouts) {
  auto small = Keys({Json(arrow::utf8(), R"(["a", "bc", null, ""])")});
  auto large = Keys({Json(arrow::large_utf8(), R"(["bc", "a", "", null])")});
  auto view = Keys({Json(arrow::utf8_view(), R"(["", "a", "bc", null])")});
  const KeySet set = Set(small);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(set.Contains(large, i)) << i;
    EXPECT_TRUE(set.Contains(view, i)) << i;
  }
  EXPECT_EQ(Encoded(small, 0), Encoded(large, 1));
  EXPECT_EQ(Encoded(small, 1), Encoded(view, 2));
  // "" and null are different keys.
  EXPECT_NE(Encoded(small, 2), Encoded(small, 3));
}

TEST(KeyColumns, UuidExtensionComparesByStorage) {
  auto storage = Json(arrow::fixed_size_binary(16), R"(["0123456789abcdef", "fedcba9876543210"])");
  auto uuid = arrow::ExtensionType::WrapArray(arrow::extension::uuid(), storage);
  auto a = Keys({storage});
  auto b = Keys({uuid});
  EXPECT_EQ(Encoded(a, 0), Encoded(b, 0));
  EXPECT_EQ(a.HashRows(1), b.HashRows(1));
  EXPECT_TRUE(Set(a).Contains(b, 1));
}

TEST(KeyColumns, SeveralColumnsAndSlices) {
  auto ids = Json(arrow::int32(), "[1, 1, 2, 1]");
  auto names = Json(arrow::utf8(), R"(["x", "y", "x", "x"])");
  auto keys = Keys({ids, names});
  EXPECT_FALSE(keys.single_word());
  EXPECT_TRUE(keys.Equal(0, 3));
  EXPECT_FALSE(keys.Equal(0, 1));
  EXPECT_FALSE(keys.Equal(0, 2));
  // A slice keeps its values: row 0 of the slice is row 1 of the arrays.
  auto sliced = Keys({ids->Slice(1), names->Slice(1)});
  EXPECT_EQ(Encoded(sliced, 0), Encoded(keys, 1));
  EXPECT_EQ(Encoded(sliced, 2), Encoded(keys, 3));
  std::vector<Hash128> whole, part;
  keys.HashRows128(whole);
  sliced.HashRows128(part);
  EXPECT_EQ(whole[3], part[2]);
  EXPECT_FALSE(whole[0] == whole[1]);
  // Columns of different lengths are refused.
  EXPECT_FALSE(KeyColumns::Make({ids, names->Slice(1)}).ok());
  // Folding names into the ids' hashes gives the hashes of (ids, names): the changelog's row hash
  // continues its key hash.
  std::vector<Hash128> folded;
  Keys({ids}).HashRows128(folded);
  Keys({names}).FoldRows128(folded);
  EXPECT_EQ(folded, whole);
  std::vector<Hash128> names_first;
  Keys({names, ids}).HashRows128(names_first);
  EXPECT_FALSE(names_first == whole);  // the order of the columns is part of the hash
}

// Every row of `probe` is found exactly when its key is one of `members`' (an independent reading of
// the same values: Arrow's own equality of the rows' scalars), FindAll agrees with Find, and indexes
// are in range, equal for equal keys and distinct for distinct ones.
void ExpectSetOf(const KeySet& set, const KeyColumns& members, const KeyColumns& probe,
                 const std::vector<std::shared_ptr<arrow::Array>>& member_arrays,
                 const std::vector<std::shared_ptr<arrow::Array>>& probe_arrays) {
  auto row_text = [](const std::vector<std::shared_ptr<arrow::Array>>& arrays, int64_t row) {
    std::string text;
    for (const auto& a : arrays) text += (*a->GetScalar(row))->ToString() + (a->IsNull(row) ? "<null>|" : "|");
    return text;
  };
  std::map<std::string, int64_t> index_of;  // member text -> its index
  for (int64_t i = 0; i < members.length(); ++i) {
    const int64_t index = set.Find(members, i);
    ASSERT_NE(index, KeySet::kAbsent) << i;
    ASSERT_GE(index, 0);
    ASSERT_LT(index, set.index_space());
    auto [it, fresh] = index_of.emplace(row_text(member_arrays, i), index);
    EXPECT_EQ(it->second, index) << "equal keys, different indexes: row " << i;
  }
  EXPECT_EQ(set.size(), index_of.size());
  std::set<int64_t> distinct;
  for (const auto& [text, index] : index_of) distinct.insert(index);
  EXPECT_EQ(distinct.size(), index_of.size()) << "distinct keys share an index";
  std::vector<int64_t> all;
  set.FindAll(probe, all);
  ASSERT_EQ(all.size(), static_cast<size_t>(probe.length()));
  for (int64_t i = 0; i < probe.length(); ++i) {
    auto it = index_of.find(row_text(probe_arrays, i));
    const int64_t expected = it == index_of.end() ? KeySet::kAbsent : it->second;
    EXPECT_EQ(set.Find(probe, i), expected) << "probe row " << i << ": " << row_text(probe_arrays, i);
    EXPECT_EQ(all[static_cast<size_t>(i)], expected) << "FindAll, probe row " << i;
  }
}

void CheckSet(std::vector<std::shared_ptr<arrow::Array>> members, std::vector<std::shared_ptr<arrow::Array>> probe,
              std::optional<KeySet::Representation> expected = std::nullopt) {
  auto member_keys = Keys(members);
  auto probe_keys = Keys(probe);
  auto set = KeySet::Make(member_keys);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  if (expected) {
    EXPECT_EQ(set->representation(), *expected);
  }
  ExpectSetOf(*set, member_keys, probe_keys, members, probe);
}

TEST(KeySet, DenseIntegersAreABitmap) {
  CheckSet({Json(arrow::int64(), "[5, 6, 7, 5, 1000, null]")}, {Json(arrow::int64(), "[4, 5, 7, 8, 1000, 1001, null, 0]")},
           KeySet::Representation::kBitmap);
  // Without a null in the set, a null probe misses.
  CheckSet({Json(arrow::int32(), "[1, 2, 3]")}, {Json(arrow::int32(), "[null, 3, 4]")}, KeySet::Representation::kBitmap);
}

TEST(KeySet, NegativeIntegersAroundZero) {
  // -3..3 is a small range read as signed numbers, a huge one read as unsigned words.
  CheckSet({Json(arrow::int64(), "[-3, -1, 0, 2, 3]")}, {Json(arrow::int64(), "[-4, -3, -2, -1, 0, 1, 2, 3, 4]")},
           KeySet::Representation::kBitmap);
  CheckSet({Json(arrow::int32(), "[-2147483648, -1, 0, 2147483647]")},
           {Json(arrow::int32(), "[-2147483648, -2147483647, -1, 0, 1, 2147483647, 2147483646]")});
  CheckSet({Json(arrow::int64(), "[-9223372036854775808, 9223372036854775807, -1]")},
           {Json(arrow::int64(), "[-9223372036854775808, -9223372036854775807, 9223372036854775807, -1, 0]")},
           KeySet::Representation::kWordTable);
}

TEST(KeySet, SparseIntegersAreAWordTable) {
  // 3,000 keys spread over 3e15: a bitmap of the range would be far larger than a table.
  arrow::Int64Builder members, probe;
  for (int64_t i = 0; i < 3000; ++i) {
    ASSERT_TRUE(members.Append(i * 1000000000003LL - 7).ok());
    ASSERT_TRUE(probe.Append(i * 1000000000003LL - 7 + (i % 3 == 0 ? 1 : 0)).ok());
  }
  ASSERT_TRUE(members.AppendNull().ok());
  // The word that marks an empty slot is a key like any other.
  ASSERT_TRUE(members.Append(static_cast<int64_t>(0x9E3779B97F4A7C15ULL)).ok());
  ASSERT_TRUE(probe.Append(static_cast<int64_t>(0x9E3779B97F4A7C15ULL)).ok());
  ASSERT_TRUE(probe.AppendNull().ok());
  CheckSet({*members.Finish()}, {*probe.Finish()}, KeySet::Representation::kWordTable);
}

TEST(KeySet, StringsDecimalsAndCompositeKeysAreEncoded) {
  CheckSet({Json(arrow::utf8(), R"(["a", "bc", null, "", "a"])")},
           {Json(arrow::large_utf8(), R"(["bc", "b", "", null, "a", "A"])")}, KeySet::Representation::kEncoded);
  CheckSet({Json(arrow::decimal128(20, 2), R"(["1.50", "2.00", null])")},
           {Json(arrow::decimal128(20, 2), R"(["2.00", "1.51", null, "1.50"])")}, KeySet::Representation::kEncoded);
  // (id, name): (1, null) and (1, "") and (null, "x") are three different keys.
  CheckSet({Json(arrow::int32(), "[1, 1, null, 2, 1]"), Json(arrow::utf8(), R"([null, "", "x", "y", null])")},
           {Json(arrow::int32(), "[1, 1, 1, null, null, 2, 2]"), Json(arrow::utf8(), R"([null, "", "x", "x", null, "y", null])")},
           KeySet::Representation::kEncoded);
}

TEST(KeySet, FloatsAndBooleans) {
  CheckSet({Json(arrow::float64(), "[1.5, -0.0, 1e300]")}, {Json(arrow::float64(), "[0.0, -0.0, 1.5, 1e300, 2.5]")});
  CheckSet({Json(arrow::boolean(), "[true, null]")}, {Json(arrow::boolean(), "[false, true, null]")},
           KeySet::Representation::kBitmap);
}

TEST(KeySet, EmptyAndNullOnlySets) {
  CheckSet({Json(arrow::int64(), "[]")}, {Json(arrow::int64(), "[1, null]")});
  CheckSet({Json(arrow::int64(), "[null, null]")}, {Json(arrow::int64(), "[1, null, 0]")});
  CheckSet({Json(arrow::utf8(), "[]")}, {Json(arrow::utf8(), R"(["", null])")});
}

TEST(KeySet, ManyDenseKeysProbedInBatches) {
  // Sequential ids with gaps, as an apply's keys are: one bit a candidate.
  arrow::Int64Builder members, probe;
  for (int64_t i = 0; i < 200000; ++i) {
    if (i % 7 != 0) {
      ASSERT_TRUE(members.Append(1000000 + i).ok());
    }
  }
  for (int64_t i = -100; i < 200100; i += 3) ASSERT_TRUE(probe.Append(1000000 + i).ok());
  CheckSet({*members.Finish()}, {*probe.Finish()}, KeySet::Representation::kBitmap);
}

// FindAll loads the probe's words a block of rows at a time (KeyColumns::Words): probes longer than a
// block, sliced at an odd offset, with nulls, of every single-word width and layout, must answer as
// the row-by-row reading does.
TEST(KeySet, SlicedNarrowProbesOverSeveralBlocks) {
  auto check = [](const std::shared_ptr<arrow::DataType>& type, int64_t modulus) {
    SCOPED_TRACE(type->ToString());
    const bool boolean = type->id() == arrow::Type::BOOL;
    auto value = [&](int64_t v) { return boolean ? std::string(v % 2 ? "true" : "false") : std::to_string(v); };
    std::string members = "[", probe = "[";
    for (int64_t i = 0; i < 40; ++i) members += (i ? ", " : "") + value((i * 3) % modulus);
    for (int64_t i = 0; i < 3005; ++i) probe += (i ? ", " : "") + (i % 11 == 0 ? std::string("null") : value((i * 7) % modulus));
    CheckSet({Json(type, members + "]")}, {Json(type, probe + "]")->Slice(5)});
  };
  check(arrow::int8(), 100);
  check(arrow::int16(), 1000);
  check(arrow::uint16(), 1000);
  check(arrow::date32(), 1000);
  check(arrow::float32(), 1000);
  check(arrow::float64(), 1000);
  check(arrow::int64(), 1000);
  check(arrow::boolean(), 2);
}

// KeySequenceMap against a plain std::map of encoded keys (KeyColumns::AppendKey) to the highest
// number, on random inserts: whichever layout Seal picks (dense ranks, word table, encoded keys),
// every probe must answer what the std::map does.
struct SequencedBatch {
  std::vector<std::shared_ptr<arrow::Array>> columns;
  int64_t sequence;
};

// ClearAbove against the oracle: for thresholds below, between and above the recorded numbers, on
// the whole probe and on a slice of it (an offset into the arrays' buffers), with a `live` bitmap
// whose every third bit is already clear (those must stay clear and not be counted).
void CheckClearAbove(const KeySequenceMap& map, const std::map<std::string, int64_t>& oracle,
                     const std::vector<std::shared_ptr<arrow::Array>>& probe) {
  std::vector<int64_t> numbers = {-1};
  for (const auto& [key, number] : oracle) numbers.push_back(number);
  std::sort(numbers.begin(), numbers.end());
  const std::vector<int64_t> thresholds = {numbers.front(), numbers[numbers.size() / 2], numbers.back() - 1,
                                           numbers.back()};
  for (int64_t slice : {int64_t{0}, int64_t{13}}) {
    std::vector<std::shared_ptr<arrow::Array>> columns;
    for (const auto& c : probe) columns.push_back(c->Slice(slice));
    auto keys = Keys(columns);
    const int64_t n = keys.length();
    for (int64_t threshold : thresholds) {
      std::vector<uint8_t> live(static_cast<size_t>(arrow::bit_util::BytesForBits(n)), 0xFF);
      for (int64_t i = 0; i < n; i += 3) arrow::bit_util::ClearBit(live.data(), i);
      const int64_t cleared = map.ClearAbove(keys, threshold, live.data());
      int64_t want_cleared = 0;
      for (int64_t i = 0; i < n; ++i) {
        auto it = oracle.find(Encoded(keys, i));
        const bool deleted = it != oracle.end() && it->second > threshold;
        const bool was_live = i % 3 != 0;
        want_cleared += deleted && was_live ? 1 : 0;
        ASSERT_EQ(arrow::bit_util::GetBit(live.data(), i), was_live && !deleted)
            << "row " << i << " threshold " << threshold << " slice " << slice;
      }
      EXPECT_EQ(cleared, want_cleared) << "threshold " << threshold;
    }
  }
}

void CheckSequenceMap(const std::vector<SequencedBatch>& inserts, const std::vector<std::shared_ptr<arrow::Array>>& probe,
                      KeySequenceMap::Representation expected) {
  KeySequenceMap map;
  std::map<std::string, int64_t> oracle;
  for (const auto& batch : inserts) {
    auto keys = Keys(batch.columns);
    ASSERT_TRUE(map.Insert(keys, batch.sequence).ok());
    for (int64_t i = 0; i < keys.length(); ++i) {
      auto [it, inserted] = oracle.emplace(Encoded(keys, i), batch.sequence);
      if (!inserted) it->second = std::max(it->second, batch.sequence);
    }
  }
  map.Seal();
  EXPECT_EQ(map.representation(), expected);
  EXPECT_EQ(map.size(), oracle.size());
  EXPECT_FALSE(map.Insert(Keys(inserts.front().columns), 1).ok());  // sealed
  auto probe_keys = Keys(probe);
  std::vector<int64_t> all;
  map.FindAll(probe_keys, all);
  ASSERT_EQ(all.size(), static_cast<size_t>(probe_keys.length()));
  int64_t hits = 0;
  for (int64_t i = 0; i < probe_keys.length(); ++i) {
    auto it = oracle.find(Encoded(probe_keys, i));
    const int64_t want = it == oracle.end() ? KeySequenceMap::kAbsent : it->second;
    hits += it == oracle.end() ? 0 : 1;
    ASSERT_EQ(map.Find(probe_keys, i), want) << "row " << i;
    ASSERT_EQ(all[static_cast<size_t>(i)], want) << "row " << i;
  }
  // The probes must both hit and miss, or the comparison proves little.
  EXPECT_GT(hits, 0);
  EXPECT_LT(hits, probe_keys.length());
  CheckClearAbove(map, oracle, probe);
}

template <typename Builder, typename Gen>
std::shared_ptr<arrow::Array> Ints(int64_t n, Gen gen, double null_share, std::mt19937_64& rng) {
  Builder builder;
  std::bernoulli_distribution null(null_share);
  for (int64_t i = 0; i < n; ++i) {
    if (null(rng)) {
      EXPECT_TRUE(builder.AppendNull().ok());
    } else {
      EXPECT_TRUE(builder.Append(gen()).ok());
    }
  }
  return *builder.Finish();
}

TEST(KeySequenceMap, DenseIntegersAreRanksAndAgreeWithAMap) {
  std::mt19937_64 rng(15);
  std::uniform_int_distribution<int64_t> id(1000, 5999), seq(1, 30);
  std::vector<SequencedBatch> inserts;
  for (int b = 0; b < 20; ++b) {
    inserts.push_back({{Ints<arrow::Int64Builder>(400, [&] { return id(rng); }, 0.01, rng)}, seq(rng)});
  }
  std::uniform_int_distribution<int64_t> probe(900, 6100);
  CheckSequenceMap(inserts, {Ints<arrow::Int64Builder>(20000, [&] { return probe(rng); }, 0.01, rng)},
                   KeySequenceMap::Representation::kDenseRanks);
}

TEST(KeySequenceMap, NegativeIntegersAroundZeroAreDense) {
  // -3000..3000 is a small range read as signed numbers, a huge one read as unsigned words.
  std::mt19937_64 rng(16);
  std::uniform_int_distribution<int64_t> id(-3000, 3000);
  std::vector<SequencedBatch> inserts;
  for (int b = 0; b < 10; ++b) {
    inserts.push_back({{Ints<arrow::Int64Builder>(500, [&] { return id(rng); }, 0.0, rng)}, 100 - b});
  }
  std::uniform_int_distribution<int64_t> probe(-3100, 3100);
  CheckSequenceMap(inserts, {Ints<arrow::Int64Builder>(10000, [&] { return probe(rng); }, 0.02, rng)},
                   KeySequenceMap::Representation::kDenseRanks);
}

TEST(KeySequenceMap, ManySequenceNumbersTakeTwoByteRanks) {
  // 300 distinct numbers do not fit a one-byte rank.
  std::mt19937_64 rng(17);
  std::uniform_int_distribution<int64_t> id(0, 2999);
  std::vector<SequencedBatch> inserts;
  for (int b = 0; b < 300; ++b) {
    inserts.push_back({{Ints<arrow::Int64Builder>(20, [&] { return id(rng); }, 0.0, rng)}, 7 * ((b * 37) % 300) + 1});
  }
  std::uniform_int_distribution<int64_t> probe(-10, 3500);
  CheckSequenceMap(inserts, {Ints<arrow::Int64Builder>(5000, [&] { return probe(rng); }, 0.0, rng)},
                   KeySequenceMap::Representation::kDenseRanks);
}

TEST(KeySequenceMap, DenseInt32KeysWithNullsAreRanksAndAgreeWithAMap) {
  // int columns (4-byte words) take the same loop as longs; nulls on both sides.
  std::mt19937_64 rng(20);
  std::uniform_int_distribution<int32_t> id(70000, 72999);
  std::vector<SequencedBatch> inserts;
  for (int b = 0; b < 12; ++b) {
    inserts.push_back({{Ints<arrow::Int32Builder>(300, [&] { return id(rng); }, b == 5 ? 0.05 : 0.0, rng)}, 2 * b + 3});
  }
  std::uniform_int_distribution<int32_t> probe(69000, 74000);
  CheckSequenceMap(inserts, {Ints<arrow::Int32Builder>(7001, [&] { return probe(rng); }, 0.03, rng)},
                   KeySequenceMap::Representation::kDenseRanks);
}

TEST(KeySequenceMap, NarrowFloatAndBooleanKeysTakeTheDenseLoopToo) {
  // ClearAbove's one loop over the words serves every single-word layout, not only 4- and 8-byte
  // integers: 2- and 1-byte integers, floats (by bit pattern) and booleans, with nulls on both sides.
  std::mt19937_64 rng(22);
  std::uniform_int_distribution<int16_t> i16(1000, 3999);
  std::uniform_int_distribution<int8_t> i8(0, 100);
  std::uniform_int_distribution<int> step(0, 2999);
  auto floats = [&](int64_t n, double null_share) {
    // 1 + k * 2^-20: consecutive mantissas 8 bit patterns apart, a dense range of words.
    return Ints<arrow::FloatBuilder>(n, [&] { return 1.0f + static_cast<float>(step(rng)) * 0x1p-20f; }, null_share,
                                     rng);
  };
  std::bernoulli_distribution coin(0.5);
  std::vector<SequencedBatch> shorts, bytes, reals, bools;
  for (int b = 0; b < 8; ++b) {
    shorts.push_back({{Ints<arrow::Int16Builder>(300, [&] { return i16(rng); }, b == 3 ? 0.05 : 0.0, rng)}, 3 * b + 1});
    bytes.push_back({{Ints<arrow::Int8Builder>(10, [&] { return i8(rng); }, 0.0, rng)}, 20 - b});
    reals.push_back({{floats(250, b == 6 ? 0.05 : 0.0)}, b + 2});
  }
  bools.push_back({{Ints<arrow::BooleanBuilder>(1, [] { return true; }, 0.0, rng)}, 5});
  bools.push_back({{Ints<arrow::BooleanBuilder>(3, [] { return true; }, 0.5, rng)}, 9});
  std::uniform_int_distribution<int16_t> probe16(900, 4100);
  std::uniform_int_distribution<int8_t> probe8(-5, 120);
  CheckSequenceMap(shorts, {Ints<arrow::Int16Builder>(3001, [&] { return probe16(rng); }, 0.02, rng)},
                   KeySequenceMap::Representation::kDenseRanks);
  CheckSequenceMap(bytes, {Ints<arrow::Int8Builder>(2500, [&] { return probe8(rng); }, 0.02, rng)},
                   KeySequenceMap::Representation::kDenseRanks);
  CheckSequenceMap(reals, {floats(4000, 0.02)}, KeySequenceMap::Representation::kDenseRanks);
  CheckSequenceMap(bools, {Ints<arrow::BooleanBuilder>(2100, [&] { return coin(rng); }, 0.1, rng)},
                   KeySequenceMap::Representation::kDenseRanks);
}

TEST(KeySequenceMap, NegativeInt32KeysAreAWordTable) {
  // An int's word is its 4 bytes zero-extended, so -1 and 1 lie 4G words apart: not dense.
  std::mt19937_64 rng(21);
  std::uniform_int_distribution<int32_t> id(-2000, 2000);
  std::vector<SequencedBatch> inserts;
  for (int b = 0; b < 6; ++b) {
    inserts.push_back({{Ints<arrow::Int32Builder>(400, [&] { return id(rng); }, 0.01, rng)}, 10 - b});
  }
  std::uniform_int_distribution<int32_t> probe(-2100, 2100);
  CheckSequenceMap(inserts, {Ints<arrow::Int32Builder>(5000, [&] { return probe(rng); }, 0.01, rng)},
                   KeySequenceMap::Representation::kWordTable);
}

TEST(KeySequenceMap, SparseIntegersAreAWordTableAndAgreeWithAMap) {
  std::mt19937_64 rng(18);
  std::vector<int64_t> pool;
  for (int i = 0; i < 3000; ++i) pool.push_back(static_cast<int64_t>(rng()));
  pool.push_back(static_cast<int64_t>(0x9E3779B97F4A7C15ULL));
  std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
  std::uniform_int_distribution<int64_t> seq(1, 5);
  std::vector<SequencedBatch> inserts;
  for (int b = 0; b < 8; ++b) {
    inserts.push_back({{Ints<arrow::Int64Builder>(300, [&] { return pool[pick(rng)]; }, 0.01, rng)}, seq(rng)});
  }
  std::bernoulli_distribution member(0.5);
  CheckSequenceMap(inserts,
                   {Ints<arrow::Int64Builder>(
                       5000, [&] { return member(rng) ? pool[pick(rng)] : static_cast<int64_t>(rng()); }, 0.01, rng)},
                   KeySequenceMap::Representation::kWordTable);
}

TEST(KeySequenceMap, StringsAndCompositeKeysAreEncodedAndAgreeWithAMap) {
  std::mt19937_64 rng(19);
  std::uniform_int_distribution<int> n(0, 60);
  auto strings = [&](int64_t count) {
    arrow::StringBuilder builder;
    for (int64_t i = 0; i < count; ++i) {
      const int v = n(rng);
      EXPECT_TRUE((v == 0 ? builder.AppendNull() : builder.Append("k" + std::to_string(v))).ok());
    }
    return *builder.Finish();
  };
  std::uniform_int_distribution<int32_t> small(0, 9);
  std::vector<SequencedBatch> one, two;
  for (int b = 0; b < 6; ++b) {
    one.push_back({{strings(30)}, 3 + b % 4});
    two.push_back({{Ints<arrow::Int32Builder>(30, [&] { return small(rng); }, 0.1, rng), strings(30)}, 9 - b});
  }
  CheckSequenceMap(one, {strings(500)}, KeySequenceMap::Representation::kEncoded);
  CheckSequenceMap(two, {Ints<arrow::Int32Builder>(2000, [&] { return small(rng); }, 0.1, rng), strings(2000)},
                   KeySequenceMap::Representation::kEncoded);
}

TEST(KeySequenceMap, NullOnlyAndEmptyMaps) {
  KeySequenceMap nulls;
  ASSERT_TRUE(nulls.Insert(Keys({Json(arrow::int64(), "[null, null]")}), 4).ok());
  nulls.Seal();
  auto probe = Keys({Json(arrow::int64(), "[null, 0, 1]")});
  EXPECT_EQ(nulls.Find(probe, 0), 4);
  EXPECT_EQ(nulls.Find(probe, 1), KeySequenceMap::kAbsent);
  EXPECT_EQ(nulls.size(), 1u);
  uint8_t live = 0x07;
  EXPECT_EQ(nulls.ClearAbove(probe, 3, &live), 1);  // the null row only
  EXPECT_EQ(live, 0x06);
  EXPECT_EQ(nulls.ClearAbove(probe, 4, &live), 0);
  KeySequenceMap empty;
  empty.Seal();
  EXPECT_TRUE(empty.empty());
  std::vector<int64_t> out;
  empty.FindAll(probe, out);
  EXPECT_EQ(out, std::vector<int64_t>(3, KeySequenceMap::kAbsent));
}

TEST(KeyColumns, NestedValuesCompareByValue) {
  auto type = arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("b", arrow::utf8())});
  auto keys = Keys({Json(type, R"([{"a": 1, "b": "x"}, {"a": 1, "b": "x"}, {"a": 1, "b": null}, null])")});
  EXPECT_TRUE(keys.Equal(0, 1));
  EXPECT_FALSE(keys.Equal(0, 2));
  EXPECT_FALSE(keys.Equal(2, 3));
  std::vector<Hash128> hashes;
  keys.HashRows128(hashes);
  EXPECT_EQ(hashes[0], hashes[1]);
  EXPECT_FALSE(hashes[0] == hashes[2]);
}

}  // namespace
}  // namespace lakesync::iceberg

namespace lakesync::iceberg {
namespace {

// HashRows128 agrees with Equal on every layout it folds differently (words of 1, 2, 4 and 8 bytes,
// bits, floats, 16-byte decimals, strings of each Arrow layout, nested text): equal rows hash alike,
// and no two unequal rows of these small samples collide.
TEST(KeyColumns, Hash128AgreesWithEqualityOnEveryLayout) {
  const std::vector<std::pair<std::shared_ptr<arrow::DataType>, std::string>> columns = {
      {arrow::int8(), "[1, 2, null, 1, 0, 2]"},
      {arrow::int16(), "[300, null, 300, -1, 0, 7]"},
      {arrow::int32(), "[5, 5, null, 6, null, 0]"},
      {arrow::int64(), "[9, 10, 9, null, 0, -9]"},
      {arrow::boolean(), "[true, false, null, true, false, false]"},
      {arrow::float64(), "[1.5, NaN, null, 1.5, 0.0, -0.0]"},
      {arrow::decimal128(20, 2), R"(["1.00", "2.00", null, "1.00", "0.00", "2.00"])"},
      {arrow::utf8(), R"(["a", "", null, "a", "longer than eight bytes", "b"])"},
      {arrow::large_utf8(), R"(["a", "", null, "a", "longer than eight bytes", "b"])"},
      {arrow::utf8_view(), R"(["a", "", null, "a", "longer than eight bytes", "b"])"},
      {arrow::fixed_size_binary(3), R"(["abc", "abd", null, "abc", "xyz", "abd"])"},
  };
  for (const auto& [type, json] : columns) {
    for (const auto& arrays : {std::vector<std::shared_ptr<arrow::Array>>{Json(type, json)},
                               std::vector<std::shared_ptr<arrow::Array>>{Json(type, json), Json(arrow::int32(), "[1, 1, 1, 1, 1, 1]")}}) {
      auto keys = Keys(arrays);
      std::vector<Hash128> hashes;
      keys.HashRows128(hashes);
      for (int64_t i = 0; i < keys.length(); ++i) {
        for (int64_t j = 0; j < keys.length(); ++j) {
          EXPECT_EQ(keys.Equal(i, j), hashes[i] == hashes[j]) << type->ToString() << " rows " << i << ", " << j;
        }
      }
    }
  }
  // The same strings in each layout hash alike.
  std::vector<Hash128> narrow, wide, views;
  Keys({Json(arrow::utf8(), R"(["a", "longer than eight bytes", null])")}).HashRows128(narrow);
  Keys({Json(arrow::large_utf8(), R"(["a", "longer than eight bytes", null])")}).HashRows128(wide);
  Keys({Json(arrow::utf8_view(), R"(["a", "longer than eight bytes", null])")}).HashRows128(views);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(narrow[i], wide[i]);
    EXPECT_EQ(narrow[i], views[i]);
  }
}

// A null differs from every value, also from the value whose word a null folds in, and swapping the
// values of two columns changes the hash (each column's fold depends on the ones before it).
TEST(KeyColumns, Hash128NullsAndColumnOrder) {
  auto keys = Keys({Json(arrow::int64(), "[null, 7640891576956012808, 0]")});
  std::vector<Hash128> hashes;
  keys.HashRows128(hashes);
  EXPECT_FALSE(hashes[0] == hashes[1]);
  EXPECT_FALSE(hashes[0] == hashes[2]);
  auto pairs = Keys({Json(arrow::int64(), "[1, 2, null, 3]"), Json(arrow::int64(), "[2, 1, 3, null]")});
  pairs.HashRows128(hashes);
  EXPECT_FALSE(hashes[0] == hashes[1]);
  EXPECT_FALSE(hashes[2] == hashes[3]);
}

}  // namespace
}  // namespace lakesync::iceberg
