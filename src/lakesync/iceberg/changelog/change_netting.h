// Netting of one snapshot's changed rows: which DELETE and INSERT of identical rows cancel
// (copy-on-write carry-over) and which remaining DELETE and INSERT of one key pair into
// UPDATE_BEFORE / UPDATE_AFTER. The rule (changelog_source.h), for the rows in the snapshot's order:
//   * per distinct row (by full-row hash): cancel = min(deletes, inserts); its first `cancel` deletes
//     and first `cancel` inserts are carried over;
//   * with keys, per key, of the rows not carried over: pairs = min(deletes, inserts); its first
//     `pairs` deletes become UPDATE_BEFORE and its first `pairs` inserts UPDATE_AFTER;
//   * every other row is emitted as what it is (DELETE or INSERT).
//
// How: every row of a key (without keys: every identical row) lands in one partition by its hash,
// and each partition is sorted by (key hash, row hash, ordinal) and decided group by group, so the
// groups are contiguous and small. Partitions are small enough to stay in the CPU cache (a few
// hundred rows each) and are decided side by side on the executor; a row's decision depends only on
// its own group, so the result does not depend on the number of partitions or threads. This replaces
// one hash table per thread over all the snapshot's rows, whose random probes missed the cache on
// nearly every row (a fifth of the changelog's CPU at 1M changes per snapshot, docs/benchmarks.md).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/key_columns.h"

namespace lakesync::changelog {

// A changed row's side.
enum Side : uint8_t { kNone = 0, kDelete = 1, kInsert = 2 };

// What is emitted for a changed row.
enum Decision : uint8_t { kUndecided = 0, kCarriedOver, kEmitInsert, kEmitDelete, kEmitUpdateBefore, kEmitUpdateAfter };

// The memory Decide sorts a snapshot's rows in (40 bytes per changed row), kept from one snapshot to
// the next by whoever decides several: allocated afresh for each snapshot, its pages were faulted in
// (and zeroed by the kernel) every time, 3.5% of the changelog's CPU in perf (docs/benchmarks.md).
class NettingBuffer {
 public:
  NettingBuffer();
  ~NettingBuffer();
  NettingBuffer(NettingBuffer&&) noexcept;
  NettingBuffer& operator=(NettingBuffer&&) noexcept;

  // Bytes held (capacity, not what the last Decide used).
  size_t bytes() const;

 private:
  friend class ChangeNetting;
  struct Rows;
  std::unique_ptr<Rows> rows_;
};

class ChangeNetting {
 public:
  // `keyed`: rows carry a key hash and pair into updates; without keys only identical rows cancel.
  explicit ChangeNetting(bool keyed) : keyed_(keyed) {}

  // Appends the next `count` changed rows in the snapshot's order: their full-row hashes, key hashes
  // (ignored without keys; may be null then) and sides (kDelete or kInsert). The arrays are not
  // copied: they must stay alive and unchanged until Decide returns.
  // Errors: Unsupported beyond 2^32 - 1 changed rows in one snapshot.
  Status Add(const iceberg::Hash128* row_hashes, const iceberg::Hash128* key_hashes, const uint8_t* sides,
             size_t count);

  size_t size() const { return size_; }

  // Decides every row added (on the executor) and returns one Decision per row, in the order added.
  // *any is set when some row cancels or pairs (otherwise every decision is the row's own side).
  // Forgets the rows added. Sorts in `buffer` (grown when too small, kept for the next call) or, when
  // null, in memory of its own.
  Result<std::vector<uint8_t>> Decide(bool* any, NettingBuffer* buffer = nullptr);

 private:
  struct Span {
    const iceberg::Hash128* rows;
    const iceberg::Hash128* keys;
    const uint8_t* sides;
    size_t count;
    uint32_t first;  // ordinal of its first row
  };
  bool keyed_;
  size_t size_ = 0;
  std::vector<Span> spans_;
};

}  // namespace lakesync::changelog
