// PositionBitmap: a set of non-negative 64-bit row positions, the in-memory form of an Iceberg
// deletion vector and of a Delta deletion vector.
//
// The set is kept the way both formats serialize it: positions are split into a 32-bit key (the high
// half) and a 32-bit sub-position (the low half), and each key owns one 32-bit CRoaring bitmap. Keeping
// that shape in memory makes the portable 64-bit codec (roaring64_portable.h) a straight walk over the
// buckets, with no conversion. Empty buckets are never stored, so two equal sets have equal buckets.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "lakesync/common/status.h"

// CRoaring's bitmap type, forward-declared so this header does not pull in the C library's headers.
struct roaring_bitmap_s;

namespace lakesync::puffin {

namespace internal {
struct RoaringBitmapDeleter {
  void operator()(roaring_bitmap_s* bitmap) const noexcept;
};
using RoaringBitmapPtr = std::unique_ptr<roaring_bitmap_s, RoaringBitmapDeleter>;
struct PositionBitmapAccess;
}  // namespace internal

class PositionBitmap {
 public:
  // The largest position a deletion vector can hold: keys must have their top bit clear, so every
  // non-negative int64 fits.
  static constexpr int64_t kMaxPosition = INT64_MAX;

  PositionBitmap() = default;
  ~PositionBitmap() = default;
  PositionBitmap(const PositionBitmap& other);
  PositionBitmap& operator=(const PositionBitmap& other);
  PositionBitmap(PositionBitmap&&) noexcept = default;
  PositionBitmap& operator=(PositionBitmap&&) noexcept = default;

  // Builds a set from positions in any order (duplicates allowed).
  // Returns InvalidArgument naming the first negative position.
  static Result<PositionBitmap> FromPositions(std::span<const int64_t> positions);

  // Adds one position. Returns InvalidArgument if it is negative.
  Status Add(int64_t position);
  // Adds every position in [begin, end). An empty range (begin >= end) adds nothing.
  // Returns InvalidArgument if begin is negative.
  Status AddRange(int64_t begin, int64_t end);

  bool Contains(int64_t position) const;
  // Number of positions in the set.
  int64_t Cardinality() const;
  // Number of positions p in the set with begin <= p < end.
  int64_t CountIn(int64_t begin, int64_t end) const;
  bool IsEmpty() const { return buckets_.empty(); }
  std::optional<int64_t> Min() const;
  std::optional<int64_t> Max() const;

  // In-place union: this = this ∪ other (merging a new DV into an existing one).
  void Or(const PositionBitmap& other);
  // In-place difference: this = this \ other (a changelog's "new DV minus old DV").
  void AndNot(const PositionBitmap& other);

  // Converts containers to run containers where that is smaller, as Java does before writing.
  // Serialization does this on a copy by itself; calling it here only saves memory.
  void RunOptimize();

  // Calls fn for every position in ascending order.
  void ForEach(const std::function<void(int64_t)>& fn) const;
  // All positions in ascending order.
  std::vector<int64_t> ToVector() const;
  // Positions p with begin <= p < end, in ascending order (for applying deletes to a row range).
  std::vector<int64_t> ToVector(int64_t begin, int64_t end) const;

  bool operator==(const PositionBitmap& other) const;
  bool operator!=(const PositionBitmap& other) const { return !(*this == other); }

 private:
  friend struct internal::PositionBitmapAccess;

  // Returns the bucket for key, creating an empty one if needed.
  roaring_bitmap_s* MutableBucket(uint32_t key);
  void EraseIfEmpty(std::map<uint32_t, internal::RoaringBitmapPtr>::iterator it);

  // Key = high 32 bits of a position; never holds an empty bitmap.
  std::map<uint32_t, internal::RoaringBitmapPtr> buckets_;
};

}  // namespace lakesync::puffin
