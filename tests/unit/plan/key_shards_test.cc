// Key shards: every change of a key lands in one shard whatever batch it comes in, shards are in
// range and all used for enough keys, encoded and plain key columns agree, and bad input is refused.
#include <gtest/gtest.h>

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <map>
#include <set>

#include "lakesync/plan/key_shards.h"
#include "test_support.h"

namespace lakesync::plan {
namespace {

using testing::Batch;

std::shared_ptr<arrow::Schema> Schema() {
  return arrow::schema({arrow::field("k", arrow::utf8()), arrow::field("n", arrow::int64()),
                        arrow::field("v", arrow::int32())});
}

TEST(KeyShardsTest, AKeyAlwaysLandsInTheSameShard) {
  auto a = Batch(Schema(), {R"(["x", "y", "x", "z", null])", "[1, 2, 1, 3, 4]", "[10, 20, 30, 40, 50]"});
  auto b = Batch(Schema(), {R"(["z", "x"])", "[3, 1]", "[1, 2]"});
  auto sa = KeyShards(*a, {"k", "n"}, 7).ValueOrDie();
  auto sb = KeyShards(*b, {"k", "n"}, 7).ValueOrDie();
  EXPECT_EQ(sa[0], sa[2]);  // ("x", 1) twice in one batch
  EXPECT_EQ(sa[0], sb[1]);  // and in another batch
  EXPECT_EQ(sa[3], sb[0]);
  EXPECT_EQ(sa[4], 0);      // a null key goes to shard 0
  for (int32_t s : sa) {
    EXPECT_GE(s, 0);
    EXPECT_LT(s, 7);
  }
}

TEST(KeyShardsTest, ManyKeysUseEveryShardAndSplittingKeepsEveryRow) {
  arrow::Int64Builder keys, values;
  for (int64_t i = 0; i < 2000; ++i) {
    ASSERT_TRUE(keys.Append(i % 500).ok());
    ASSERT_TRUE(values.Append(i).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("v", arrow::int64())});
  auto batch = arrow::RecordBatch::Make(schema, 2000, {keys.Finish().ValueOrDie(), values.Finish().ValueOrDie()});
  auto parts = SplitByKeyShard(batch, {"id"}, 16).ValueOrDie();
  EXPECT_EQ(parts.size(), 16u);
  int64_t rows = 0;
  std::map<int64_t, int32_t> shard_of;
  int32_t previous = -1;
  for (const auto& [shard, part] : parts) {
    EXPECT_GT(shard, previous);  // shard order
    previous = shard;
    rows += part->num_rows();
    auto ids = std::static_pointer_cast<arrow::Int64Array>(part->column(0));
    auto vs = std::static_pointer_cast<arrow::Int64Array>(part->column(1));
    int64_t last_v = -1;
    for (int64_t i = 0; i < part->num_rows(); ++i) {
      auto [it, inserted] = shard_of.emplace(ids->Value(i), shard);
      EXPECT_EQ(it->second, shard) << "key " << ids->Value(i) << " in two shards";
      EXPECT_GT(vs->Value(i), last_v);  // input order kept within a shard
      last_v = vs->Value(i);
    }
  }
  EXPECT_EQ(rows, 2000);
  EXPECT_EQ(shard_of.size(), 500u);
  // One shard: the batch itself.
  auto one = SplitByKeyShard(batch, {"id"}, 1).ValueOrDie();
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].second->num_rows(), 2000);
}

TEST(KeyShardsTest, DictionaryEncodedKeysShardLikePlainOnes) {
  auto plain = Batch(arrow::schema({arrow::field("k", arrow::utf8())}), {R"(["a", "b", "c", "a", "d"])"});
  auto encoded = arrow::compute::DictionaryEncode(plain->column(0)).ValueOrDie().make_array();
  auto dict = arrow::RecordBatch::Make(arrow::schema({arrow::field("k", encoded->type())}), 5, {encoded});
  EXPECT_EQ(KeyShards(*plain, {"k"}, 5).ValueOrDie(), KeyShards(*dict, {"k"}, 5).ValueOrDie());
}

TEST(KeyShardsTest, BadInputIsRefused) {
  auto b = Batch(Schema(), {R"(["x"])", "[1]", "[1]"});
  EXPECT_EQ(KindOf(KeyShards(*b, {"k"}, 0).status()), ErrorKind::kInvalidArgument);
  EXPECT_EQ(KindOf(KeyShards(*b, {"missing"}, 4).status()), ErrorKind::kInvalidArgument);
  EXPECT_EQ(KindOf(KeyShards(*b, {}, 4).status()), ErrorKind::kInvalidArgument);
  auto f = Batch(arrow::schema({arrow::field("f", arrow::float64())}), {"[1.5]"});
  EXPECT_FALSE(KeyShards(*f, {"f"}, 4).ok());
}

}  // namespace
}  // namespace lakesync::plan
