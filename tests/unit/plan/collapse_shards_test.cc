// Key shards of the collapser (ChangeCollapser::TakeShards): the changes split by the key-shard hash
// of plan/key_shards.h, collapsed apart (here side by side on the executor) and consumed in shard
// order, must give exactly what one sequential collapse gives, with every key in the shard KeyShards
// names — in memory and after spilling — and a shard count that follows the input size only.
#include <arrow/api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "lakesync/common/executor.h"
#include "lakesync/plan/change_collapser.h"
#include "lakesync/plan/key_shards.h"
#include "test_support.h"

namespace lakesync::plan {
namespace {

using testing::RowSet;

using testing::ChangeSchema;

CollapseOptions Options(int64_t memory_limit, const std::string& spill_directory) {
  CollapseOptions options = testing::ChangeOptions();
  options.memory_limit_bytes = memory_limit;
  options.spill_directory = spill_directory;
  return options;
}

// `keys` keys inserted, then every third one updated and every fifth deleted, in batches of 500.
std::vector<std::shared_ptr<arrow::RecordBatch>> Changes(int keys) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> out;
  arrow::Int64Builder ids, seqs;
  arrow::StringBuilder names, ops;
  int64_t seq = 0;
  auto flush = [&] {
    const int64_t n = ids.length();
    if (n == 0) return;
    out.push_back(arrow::RecordBatch::Make(ChangeSchema(), n,
                                           {ids.Finish().ValueOrDie(), names.Finish().ValueOrDie(),
                                            seqs.Finish().ValueOrDie(), ops.Finish().ValueOrDie()}));
  };
  // Batches of their own buffers (not slices of one: the collapser counts a batch's buffers).
  auto add = [&](int64_t id, const std::string& name, const char* op) {
    (void)ids.Append(id);
    (void)names.Append(name);
    (void)seqs.Append(++seq);
    (void)ops.Append(op);
    if (ids.length() == 500) flush();
  };
  for (int i = 0; i < keys; ++i) add(i, "v" + std::to_string(i), "INSERT");
  for (int i = 0; i < keys; i += 3) {
    add(i, "v" + std::to_string(i), "UPDATE_BEFORE");
    add(i, "w" + std::to_string(i), "UPDATE_AFTER");
  }
  for (int i = 0; i < keys; i += 5) add(i, "", "DELETE");
  for (int i = keys; i < keys + keys / 10; ++i) add(i, "u" + std::to_string(i), "UPDATE_AFTER");
  flush();
  return out;
}

std::unique_ptr<ChangeCollapser> Filled(int keys, int64_t memory_limit, const std::string& spill_directory) {
  auto collapser = ChangeCollapser::Make(ChangeSchema(), Options(memory_limit, spill_directory)).ValueOrDie();
  for (const auto& b : Changes(keys)) EXPECT_TRUE(collapser->Add(b).ok());
  return collapser;
}

struct ShardResult {
  int32_t index = 0;
  int32_t count = 0;
  std::vector<std::shared_ptr<arrow::Table>> rows, deletes;
};

// Every shard collapsed on the executor (ParallelMap: side by side with more than one thread),
// results in shard order.
std::vector<ShardResult> CollapseShards(ChangeCollapser& collapser) {
  auto shards = collapser.TakeShards().ValueOrDie();
  auto results = ParallelMap<ShardResult>(shards.size(), [&](size_t i) -> Result<ShardResult> {
    ShardResult r;
    r.index = shards[i]->index();
    r.count = shards[i]->count();
    while (true) {
      ARROW_ASSIGN_OR_RAISE(auto part, shards[i]->NextPart());
      if (!part) break;
      r.rows.push_back(part->rows);
      r.deletes.push_back(part->deletes);
    }
    return r;
  });
  EXPECT_TRUE(results.ok()) << results.status().ToString();
  return results.ok() ? *results : std::vector<ShardResult>{};
}

std::map<std::string, int> Merge(const std::vector<std::shared_ptr<arrow::Table>>& tables) {
  std::map<std::string, int> out;
  for (const auto& t : tables) {
    for (const auto& [row, n] : RowSet(t)) out[row] += n;
  }
  return out;
}

void ExpectShardsMatchSequentialCollapse(int keys, int64_t memory_limit, bool expect_spill) {
  const auto parent =
      std::filesystem::temp_directory_path() / ("lakesync-plan-test-shards-" + std::to_string(::getpid()));
  std::filesystem::remove_all(parent);
  ASSERT_TRUE(ConfigureThreads(4).ok());

  auto sequential = Filled(keys, memory_limit, parent.string());
  auto expected = testing::Drain(*sequential);
  auto sharded = Filled(keys, memory_limit, parent.string());
  EXPECT_EQ(sharded->stats().spilled_bytes > 0, expect_spill);
  auto results = CollapseShards(*sharded);

  ASSERT_GT(results.size(), 1u) << "the input should make several shards";
  std::vector<std::shared_ptr<arrow::Table>> rows, deletes;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (i > 0) {
      EXPECT_GT(r.index, results[i - 1].index) << "shards come in shard order";
    }
    EXPECT_EQ(r.count, results.front().count);
    // Every key is in the shard plan::KeyShards names for it (one hash, one rule).
    for (const auto* tables : {&r.rows, &r.deletes}) {
      for (const auto& t : *tables) {
        auto batch = t->CombineChunksToBatch().ValueOrDie();
        auto shard_of = KeyShards(*batch, {"id"}, r.count).ValueOrDie();
        for (int32_t s : shard_of) ASSERT_EQ(s, r.index);
      }
    }
    rows.insert(rows.end(), r.rows.begin(), r.rows.end());
    deletes.insert(deletes.end(), r.deletes.begin(), r.deletes.end());
  }
  EXPECT_EQ(Merge(rows), expected.rows);
  EXPECT_EQ(Merge(deletes), expected.deletes);
  const auto a = sequential->stats(), b = sharded->stats();
  EXPECT_EQ(a.keys, b.keys);
  EXPECT_EQ(a.rows_to_write, b.rows_to_write);
  EXPECT_EQ(a.keys_to_delete, b.keys_to_delete);
  EXPECT_EQ(a.collapsed_away, b.collapsed_away);
  EXPECT_EQ(b.keys, keys + keys / 10);
  sequential.reset();
  sharded.reset();
  EXPECT_TRUE(!std::filesystem::exists(parent) || std::filesystem::is_empty(parent));  // spill files removed
  std::filesystem::remove_all(parent);
  ASSERT_TRUE(ConfigureThreads(1).ok());
}

TEST(CollapseShards, InMemoryShardsGiveTheSequentialResult) {
  // ~9,800 change rows (~0.2 MB) fit in 512 KiB; the shard target is a quarter of it: several shards.
  ExpectShardsMatchSequentialCollapse(5000, 512 << 10, /*expect_spill=*/false);
}

TEST(CollapseShards, SpilledShardsGiveTheSequentialResult) {
  ExpectShardsMatchSequentialCollapse(5000, 128 << 10, /*expect_spill=*/true);
}

TEST(CollapseShards, TheShardCountFollowsTheInputNotTheThreads) {
  auto counts = [](int threads, int keys) {
    EXPECT_TRUE(ConfigureThreads(threads).ok());
    auto collapser = Filled(keys, 512 << 10, "");
    auto shards = collapser->TakeShards().ValueOrDie();
    std::vector<int32_t> out;
    for (const auto& s : shards) out.push_back(s->index());
    out.push_back(shards.empty() ? 0 : shards.front()->count());
    return out;
  };
  EXPECT_EQ(counts(1, 5000), counts(4, 5000));
  EXPECT_EQ(counts(1, 20).back(), 1);  // a small input stays one shard
  EXPECT_TRUE(ConfigureThreads(1).ok());
}

TEST(CollapseShards, TakingShardsTwiceOrAfterNextPartIsRefused) {
  auto collapser = Filled(100, 1 << 20, "");
  ASSERT_TRUE(collapser->TakeShards().ok());
  EXPECT_EQ(KindOf(collapser->TakeShards().status()), ErrorKind::kInvalidArgument);
  EXPECT_EQ(KindOf(collapser->NextPart().status()), ErrorKind::kInvalidArgument);
  auto other = Filled(100, 1 << 20, "");
  ASSERT_TRUE(other->NextPart().ok());
  EXPECT_EQ(KindOf(other->TakeShards().status()), ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace lakesync::plan
