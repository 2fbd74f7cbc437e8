// KeySequenceMap::ClearAbove (key_columns.h): a whole batch probed against the map at once, the way
// a scan applies a snapshot's equality deletes to a decoded batch.
#include <arrow/util/bit_util.h>

#include <algorithm>
#include <bit>
#include <vector>

#include "lakesync/iceberg/model/key_columns.h"

namespace lakesync::iceberg {

template <typename Rank>
int64_t KeySequenceMap::ClearDenseAbove(const KeyColumns& keys, const Rank* ranks, int64_t threshold,
                                        uint8_t* live) const {
  // Ranks are 1-based positions in the sorted distinct numbers, so "recorded with a number above
  // threshold" is "rank above the count of numbers at or below threshold".
  const auto limit = static_cast<Rank>(
      std::upper_bound(sequence_by_rank_.begin(), sequence_by_rank_.end(), threshold) - sequence_by_rank_.begin());
  const bool null_hit = null_sequence_ != kAbsent && null_sequence_ > threshold;
  const bool nulls = keys.may_have_nulls();
  int64_t cleared = 0;
  // Blocks start on multiples of kWordBlock, itself a multiple of 8: every group of eight rows below
  // is one whole byte of `live`.
  keys.ForEachWordBlock([&](int64_t begin, int64_t count, const uint64_t* words) {
    // Branch-free: a key outside [base_, base_ + span_] reads entry 0 and is discarded by the range test.
    auto hit = [&](int64_t i) -> unsigned {
      const uint64_t d = words[i] - base_;
      const bool in_range = d <= span_;
      return static_cast<unsigned>(in_range & (ranks[in_range ? d : 0] > limit));
    };
    for (int64_t first = 0; first < count; first += 8) {
      const int64_t group = std::min<int64_t>(8, count - first);
      unsigned mask = 0;  // bit j: row begin + first + j is deleted
      for (int64_t j = 0; j < group; ++j) mask |= hit(first + j) << j;
      if (nulls) {  // a null key matches only a null delete key
        for (int64_t j = 0; j < group; ++j) {
          if (keys.IsNull(begin + first + j)) mask = null_hit ? mask | (1u << j) : mask & ~(1u << j);
        }
      }
      uint8_t& byte = live[(begin + first) / 8];
      const auto gone = static_cast<uint8_t>(byte & mask);
      cleared += std::popcount(gone);
      byte = static_cast<uint8_t>(byte & ~gone);
    }
  });
  return cleared;
}

int64_t KeySequenceMap::ClearAbove(const KeyColumns& keys, int64_t threshold, uint8_t* live) const {
  const int64_t n = keys.length();
  if (representation_ == Representation::kDenseRanks && keys.single_word()) {
    return ranks8_.empty() ? ClearDenseAbove(keys, ranks16_.data(), threshold, live)
                           : ClearDenseAbove(keys, ranks8_.data(), threshold, live);
  }
  // Per row: the number recorded with its key. Kept per thread: a fresh batch-sized buffer per call
  // cost page faults (the kernel zeroing pages) worth a quarter of such a scan.
  thread_local std::vector<int64_t> sequences;
  FindAll(keys, sequences);
  int64_t cleared = 0;
  for (int64_t i = 0; i < n; ++i) {
    // kAbsent is the lowest int64_t: never above a threshold.
    if (sequences[static_cast<size_t>(i)] > threshold && arrow::bit_util::GetBit(live, i)) {
      arrow::bit_util::ClearBit(live, i);
      ++cleared;
    }
  }
  return cleared;
}

}  // namespace lakesync::iceberg
