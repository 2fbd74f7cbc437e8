// The shard of a key: which of `num_shards` independent slices of the key space a change belongs to.
// All changes of one key land in the same shard, so shards can be collapsed and resolved apart from
// each other (by Beam workers, or later by threads of one process) and their results combined.
//
// The hash is the collapser's own key hash (the one key encoder, iceberg/model/key_columns.h), with a
// fixed seed, so every process of one job agrees on it. It depends on the key columns' types (an
// int32 and an int64 key of equal value may land in different shards), which is fine within one
// change stream; it is not a stable on-disk format. Beam's own sink uses
// floorMod(murmur3_32(key bytes), num_shards) for the same purpose; nothing outside one job run ever
// sees a shard number, so lakesync does not need Beam's exact function.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::plan {

// The fixed seed of the key-shard hash (iceberg::KeyColumns::HashRows): every process of a job, and
// every thread of one, must place a key in the same shard.
inline constexpr uint64_t kKeyShardSeed = 0x6c616b6573796e63ULL;  // "lakesync"

// The shard of a key hash: (hash × num_shards) >> 64, i.e. shard s covers the hash range
// [s/num_shards, (s+1)/num_shards). So when n divides m, shard s of n is exactly the union of shards
// [s·m/n, (s+1)·m/n) of m: the collapser's first spill buckets (plan/spill_store, 32 of them, seeded
// with kKeyShardSeed) group into key shards without reading the changes again.
inline int32_t ShardOfHash(uint64_t hash, int32_t num_shards) {
  return static_cast<int32_t>((static_cast<unsigned __int128>(hash) * static_cast<uint64_t>(num_shards)) >> 64);
}

// One shard number in [0, num_shards) per row. Rows with a null key value go to shard 0 (the
// collapser of that shard then reports them like any invalid row). Dictionary-encoded key columns
// are decoded first, so an encoded and a plain batch of the same keys agree.
// Errors: InvalidArgument naming the column when a key column is missing or of a type that cannot be
// a key (plan::ChangeCollapser's rule), or when num_shards < 1.
Result<std::vector<int32_t>> KeyShards(const arrow::RecordBatch& batch, const std::vector<std::string>& key_columns,
                                       int32_t num_shards);

// The batch split by shard: (shard, rows of that shard in input order) for every non-empty shard, in
// shard order.
Result<std::vector<std::pair<int32_t, std::shared_ptr<arrow::RecordBatch>>>> SplitByKeyShard(
    const std::shared_ptr<arrow::RecordBatch>& batch, const std::vector<std::string>& key_columns,
    int32_t num_shards);

}  // namespace lakesync::plan
