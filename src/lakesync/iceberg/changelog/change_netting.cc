#include "lakesync/iceberg/changelog/change_netting.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <tuple>
#include <type_traits>

#include "lakesync/common/executor.h"

namespace lakesync::changelog {
namespace {

using iceberg::Hash128;

// A hash as a Row holds it: unlike Hash128 it has no default member initializers, so the buffer of
// rows Decide scatters into can be left uninitialized (each slot is written once by the scatter).
// Zero-filling it first was a serial pass over 40 bytes per changed row that also took all of its
// fresh pages' faults on one thread; now the scatter units on the executor touch the pages first.
struct RowHash {
  uint64_t a, b;
  bool operator==(const RowHash&) const = default;
};

RowHash Of(const Hash128& h) { return RowHash{h.a, h.b}; }

struct Row {
  RowHash group;  // key hash (row hash without keys): all rows that can cancel or pair share it
  RowHash row;
  uint32_t ordinal;  // position in the snapshot's order
  uint8_t side;
};
static_assert(std::is_trivially_default_constructible_v<Row>, "Decide's row buffer is left uninitialized");

bool Before(const Row& x, const Row& y) {
  return std::tie(x.group.a, x.group.b, x.row.a, x.row.b, x.ordinal) <
         std::tie(y.group.a, y.group.b, y.row.a, y.row.b, y.ordinal);
}

// Sorts a partition's rows by Before; returns them sorted (in `scratch`, or `begin` when fewer than
// two). Most rows' key hashes differ in their first word, so the rows are ordered by that word alone,
// through 16-byte (word, index) pairs: bucketed by the word's 8 bits below the partition's (a counting
// sort; the partitions are about as many rows as buckets, so buckets hold a row or two), each bucket
// then sorted by the word; only runs of an equal word (a key changed more than once, or two keys' words
// colliding) are ordered by the whole of Before. Sorting the 40-byte rows with Before's five-field
// comparison was 6.6% of the changelog's CPU (docs/benchmarks.md, "Stop 40"). Before is a total order
// (ordinals are unique), so the result does not depend on how the word sorts break ties.
struct SortScratch {
  struct Word {
    uint64_t word;
    uint32_t index;
  };
  std::vector<Word> words;
  std::vector<Row> rows;
};

const Row* SortPartition(const Row* begin, const Row* end, int shift, SortScratch& scratch) {
  const size_t n = static_cast<size_t>(end - begin);
  if (n < 2) return begin;
  auto by_word = [](const SortScratch::Word& x, const SortScratch::Word& y) { return x.word < y.word; };
  auto& words = scratch.words;
  words.resize(n);
  uint32_t starts[257] = {};
  for (size_t i = 0; i < n; ++i) ++starts[((begin[i].group.a >> shift) & 0xFF) + 1];
  for (int b = 0; b < 256; ++b) starts[b + 1] += starts[b];
  uint32_t next[256];
  std::copy(starts, starts + 256, next);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t word = begin[i].group.a;
    words[next[(word >> shift) & 0xFF]++] = {word, static_cast<uint32_t>(i)};
  }
  for (int b = 0; b < 256; ++b) {
    auto first = words.begin() + starts[b], last = words.begin() + starts[b + 1];
    if (last - first < 2) continue;
    if (last - first <= 16) {  // insertion sort: a bucket's few rows
      for (auto it = first + 1; it < last; ++it) {
        const SortScratch::Word w = *it;
        auto hole = it;
        for (; hole > first && w.word < (hole - 1)->word; --hole) *hole = *(hole - 1);
        *hole = w;
      }
    } else {
      std::sort(first, last, by_word);
    }
  }
  for (size_t i = 0; i < n;) {
    size_t run_end = i + 1;
    while (run_end < n && words[run_end].word == words[i].word) ++run_end;
    if (run_end - i > 1) {
      std::sort(words.begin() + static_cast<std::ptrdiff_t>(i), words.begin() + static_cast<std::ptrdiff_t>(run_end),
                [begin](const SortScratch::Word& x, const SortScratch::Word& y) {
                  return Before(begin[x.index], begin[y.index]);
                });
    }
    i = run_end;
  }
  scratch.rows.resize(n);
  for (size_t i = 0; i < n; ++i) scratch.rows[i] = begin[words[i].index];
  return scratch.rows.data();
}

// A partition holds a few hundred rows on average, so sorting and deciding it stays in the cache.
constexpr size_t kRowsPerPartition = 256;
constexpr int kMaxPartitionBits = 16;

// Marks the first `pairs` (by ordinal) of the rows whose decision is `from` as `to`.
void PairFirst(const Row* begin, const Row* end, uint8_t from, uint8_t to, int64_t pairs, uint8_t* decisions,
               std::vector<uint32_t>& scratch) {
  scratch.clear();
  for (const Row* r = begin; r < end; ++r) {
    if (decisions[r->ordinal] == from) scratch.push_back(r->ordinal);
  }
  if (static_cast<int64_t>(scratch.size()) > pairs) {
    std::nth_element(scratch.begin(), scratch.begin() + pairs, scratch.end());
    scratch.resize(static_cast<size_t>(pairs));
  }
  for (uint32_t o : scratch) decisions[o] = to;
}

// Decides the rows of one sorted partition; returns whether some row cancelled or paired.
bool DecidePartition(const Row* begin, const Row* end, bool keyed, uint8_t* decisions, std::vector<uint32_t>& scratch) {
  bool any = false;
  for (const Row* g = begin; g < end;) {
    const Row* group_end = g + 1;
    while (group_end < end && group_end->group == g->group) ++group_end;
    if (group_end - g == 1) {  // the common case: a key changed once
      decisions[g->ordinal] = g->side == kDelete ? kEmitDelete : kEmitInsert;
      g = group_end;
      continue;
    }
    if (keyed && group_end - g == 2 && g[0].side != g[1].side && !(g[0].row == g[1].row)) {
      // The next most common case, an update: one delete and one insert of a key, different rows.
      // They do not cancel and pair with each other (what the general rule below decides, without
      // its counting and PairFirst's scratch list, which cost 1.6% of the changelog in perf).
      for (const Row* r = g; r < group_end; ++r) {
        decisions[r->ordinal] = r->side == kDelete ? kEmitUpdateBefore : kEmitUpdateAfter;
      }
      any = true;
      g = group_end;
      continue;
    }
    // Identical rows: within (group, row) the rows are in the snapshot's order.
    int64_t left_deletes = 0, left_inserts = 0;
    for (const Row* r = g; r < group_end;) {
      const Row* row_end = r + 1;
      while (row_end < group_end && row_end->row == r->row) ++row_end;
      int64_t deletes = 0, inserts = 0;
      for (const Row* x = r; x < row_end; ++x) (x->side == kDelete ? deletes : inserts) += 1;
      int64_t cancel_deletes = std::min(deletes, inserts), cancel_inserts = cancel_deletes;
      any = any || cancel_deletes > 0;
      for (const Row* x = r; x < row_end; ++x) {
        uint8_t& d = decisions[x->ordinal];
        if (x->side == kDelete) {
          d = cancel_deletes > 0 ? kCarriedOver : kEmitDelete;
          cancel_deletes > 0 ? --cancel_deletes : ++left_deletes;
        } else {
          d = cancel_inserts > 0 ? kCarriedOver : kEmitInsert;
          cancel_inserts > 0 ? --cancel_inserts : ++left_inserts;
        }
      }
      r = row_end;
    }
    // The key's remaining deletes and inserts pair into updates, first with first.
    const int64_t pairs = keyed ? std::min(left_deletes, left_inserts) : 0;
    if (pairs > 0) {
      any = true;
      PairFirst(g, group_end, kEmitDelete, kEmitUpdateBefore, pairs, decisions, scratch);
      PairFirst(g, group_end, kEmitInsert, kEmitUpdateAfter, pairs, decisions, scratch);
    }
    g = group_end;
  }
  return any;
}

}  // namespace

struct NettingBuffer::Rows {
  std::unique_ptr<Row[]> rows;  // uninitialized: see RowHash
  size_t capacity = 0;
};

NettingBuffer::NettingBuffer() = default;
NettingBuffer::~NettingBuffer() = default;
NettingBuffer::NettingBuffer(NettingBuffer&&) noexcept = default;
NettingBuffer& NettingBuffer::operator=(NettingBuffer&&) noexcept = default;

size_t NettingBuffer::bytes() const { return rows_ ? rows_->capacity * sizeof(Row) : 0; }

Status ChangeNetting::Add(const Hash128* row_hashes, const Hash128* key_hashes, const uint8_t* sides, size_t count) {
  if (count == 0) return Status::OK();
  if (size_ + count > std::numeric_limits<uint32_t>::max()) {
    return Unsupported("a snapshot with more than {} changed rows", std::numeric_limits<uint32_t>::max());
  }
  spans_.push_back(Span{row_hashes, keyed_ ? key_hashes : nullptr, sides, count, static_cast<uint32_t>(size_)});
  size_ += count;
  return Status::OK();
}

Result<std::vector<uint8_t>> ChangeNetting::Decide(bool* any, NettingBuffer* buffer) {
  *any = false;
  std::vector<uint8_t> decisions(size_, kUndecided);
  if (size_ == 0) return decisions;
  int bits = 0;
  while (bits < kMaxPartitionBits && (size_t{1} << bits) * kRowsPerPartition < size_) ++bits;
  const size_t partitions = size_t{1} << bits;
  auto partition_of = [bits](const Hash128& h) {
    return bits == 0 ? size_t{0} : static_cast<size_t>(h.a >> (64 - bits));
  };
  auto group_of = [this](const Span& s, size_t i) -> const Hash128& { return s.keys ? s.keys[i] : s.rows[i]; };
  // Scatter the rows into their partitions (a counting sort), a run of spans per unit of work on the
  // executor: each unit counts its rows per partition, then writes them at its own offsets. The order
  // inside a partition does not matter: the partition is sorted by a key that ends in the ordinal.
  const size_t scatter_units = std::min(spans_.size(), static_cast<size_t>(4 * ThreadCount()));
  auto spans_of = [&](size_t u) {
    return std::pair(spans_.size() * u / scatter_units, spans_.size() * (u + 1) / scatter_units);
  };
  ARROW_ASSIGN_OR_RAISE(auto counts, ParallelMap<std::vector<uint32_t>>(scatter_units, [&](size_t u) {
                          std::vector<uint32_t> count(partitions, 0);
                          auto [first, last] = spans_of(u);
                          for (size_t k = first; k < last; ++k) {
                            const Span& s = spans_[k];
                            for (size_t i = 0; i < s.count; ++i) ++count[partition_of(group_of(s, i))];
                          }
                          return Result<std::vector<uint32_t>>(std::move(count));
                        }));
  std::vector<uint32_t> offsets(partitions + 1, 0);
  {
    uint32_t at = 0;  // counts[u][p] becomes unit u's first slot in partition p
    for (size_t p = 0; p < partitions; ++p) {
      offsets[p] = at;
      for (auto& count : counts) {
        const uint32_t n = count[p];
        count[p] = at;
        at += n;
      }
    }
    offsets[partitions] = at;
  }
  NettingBuffer own;
  if (buffer == nullptr) buffer = &own;
  if (!buffer->rows_) buffer->rows_ = std::make_unique<NettingBuffer::Rows>();
  NettingBuffer::Rows& held = *buffer->rows_;
  if (held.capacity < size_) {
    held.rows.reset();  // the old rows are not needed: free them before taking the larger block
    held.rows = std::make_unique_for_overwrite<Row[]>(size_);  // uninitialized: see RowHash
    held.capacity = size_;
  }
  Row* const rows = held.rows.get();
  ARROW_RETURN_NOT_OK(ParallelMap<bool>(scatter_units, [&](size_t u) -> Result<bool> {
                        std::vector<uint32_t>& next = counts[u];
                        auto [first, last] = spans_of(u);
                        for (size_t k = first; k < last; ++k) {
                          const Span& s = spans_[k];
                          for (size_t i = 0; i < s.count; ++i) {
                            const Hash128& group = group_of(s, i);
                            rows[next[partition_of(group)]++] =
                                Row{Of(group), Of(s.rows[i]), s.first + static_cast<uint32_t>(i), s.sides[i]};
                          }
                        }
                        return true;
                      }).status());
  spans_.clear();
  size_ = 0;
  // Partitions are decided side by side, a run of them per unit of work; each writes only its own
  // rows' decisions.
  const size_t units = std::min(partitions, static_cast<size_t>(8 * ThreadCount()));
  ARROW_ASSIGN_OR_RAISE(auto found, ParallelMap<bool>(units, [&](size_t u) -> Result<bool> {
                          std::vector<uint32_t> scratch;
                          SortScratch sort_scratch;
                          bool any_here = false;
                          for (size_t p = partitions * u / units; p < partitions * (u + 1) / units; ++p) {
                            const size_t n = offsets[p + 1] - offsets[p];
                            const Row* sorted =
                                SortPartition(rows + offsets[p], rows + offsets[p + 1], 56 - bits, sort_scratch);
                            any_here = DecidePartition(sorted, sorted + n, keyed_, decisions.data(), scratch) || any_here;
                          }
                          return any_here;
                        }));
  *any = std::any_of(found.begin(), found.end(), [](bool b) { return b; });
  return decisions;
}

}  // namespace lakesync::changelog
