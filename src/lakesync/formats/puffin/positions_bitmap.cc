#include "lakesync/formats/puffin/positions_bitmap.h"

#include <roaring/roaring.h>

#include <new>

#include "lakesync/formats/puffin/positions_bitmap_internal.h"

namespace lakesync::puffin {
namespace internal {

void RoaringBitmapDeleter::operator()(roaring_bitmap_s* bitmap) const noexcept {
  roaring_bitmap_free(bitmap);
}

RoaringBitmapPtr NewRoaringBitmap() {
  roaring_bitmap_t* bitmap = roaring_bitmap_create();
  if (bitmap == nullptr) throw std::bad_alloc();
  return RoaringBitmapPtr(bitmap);
}

RoaringBitmapPtr CopyRoaringBitmap(const roaring_bitmap_t* bitmap) {
  roaring_bitmap_t* copy = roaring_bitmap_copy(bitmap);
  if (copy == nullptr) throw std::bad_alloc();
  return RoaringBitmapPtr(copy);
}

}  // namespace internal

namespace {

constexpr uint32_t KeyOf(int64_t position) { return static_cast<uint32_t>(static_cast<uint64_t>(position) >> 32); }
constexpr uint32_t LowOf(int64_t position) { return static_cast<uint32_t>(static_cast<uint64_t>(position)); }
constexpr int64_t Combine(uint32_t key, uint32_t low) {
  return static_cast<int64_t>((static_cast<uint64_t>(key) << 32) | low);
}

}  // namespace

PositionBitmap::PositionBitmap(const PositionBitmap& other) {
  for (const auto& [key, bitmap] : other.buckets_) {
    buckets_.emplace(key, internal::CopyRoaringBitmap(bitmap.get()));
  }
}

PositionBitmap& PositionBitmap::operator=(const PositionBitmap& other) {
  if (this != &other) {
    PositionBitmap copy(other);
    buckets_ = std::move(copy.buckets_);
  }
  return *this;
}

Result<PositionBitmap> PositionBitmap::FromPositions(std::span<const int64_t> positions) {
  PositionBitmap result;
  for (int64_t position : positions) {
    ARROW_RETURN_NOT_OK(result.Add(position));
  }
  return result;
}

roaring_bitmap_s* PositionBitmap::MutableBucket(uint32_t key) {
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    it = buckets_.emplace(key, internal::NewRoaringBitmap()).first;
  }
  return it->second.get();
}

void PositionBitmap::EraseIfEmpty(std::map<uint32_t, internal::RoaringBitmapPtr>::iterator it) {
  if (roaring_bitmap_is_empty(it->second.get())) buckets_.erase(it);
}

Status PositionBitmap::Add(int64_t position) {
  if (position < 0) {
    return InvalidArgument("row position {} is negative; deletion vectors hold positions >= 0", position);
  }
  roaring_bitmap_add(MutableBucket(KeyOf(position)), LowOf(position));
  return Status::OK();
}

Status PositionBitmap::AddRange(int64_t begin, int64_t end) {
  if (begin < 0) {
    return InvalidArgument("row position range [{}, {}) starts below 0; deletion vectors hold positions >= 0",
                           begin, end);
  }
  if (begin >= end) return Status::OK();
  const int64_t last = end - 1;
  for (uint32_t key = KeyOf(begin);; ++key) {
    const uint32_t low_begin = key == KeyOf(begin) ? LowOf(begin) : 0;
    const uint32_t low_last = key == KeyOf(last) ? LowOf(last) : UINT32_MAX;
    roaring_bitmap_add_range_closed(MutableBucket(key), low_begin, low_last);
    if (key == KeyOf(last)) break;
  }
  return Status::OK();
}

bool PositionBitmap::Contains(int64_t position) const {
  if (position < 0) return false;
  auto it = buckets_.find(KeyOf(position));
  return it != buckets_.end() && roaring_bitmap_contains(it->second.get(), LowOf(position));
}

int64_t PositionBitmap::Cardinality() const {
  uint64_t total = 0;
  for (const auto& [key, bitmap] : buckets_) total += roaring_bitmap_get_cardinality(bitmap.get());
  return static_cast<int64_t>(total);
}

std::optional<int64_t> PositionBitmap::Min() const {
  if (buckets_.empty()) return std::nullopt;
  const auto& [key, bitmap] = *buckets_.begin();
  return Combine(key, roaring_bitmap_minimum(bitmap.get()));
}

std::optional<int64_t> PositionBitmap::Max() const {
  if (buckets_.empty()) return std::nullopt;
  const auto& [key, bitmap] = *buckets_.rbegin();
  return Combine(key, roaring_bitmap_maximum(bitmap.get()));
}

void PositionBitmap::Or(const PositionBitmap& other) {
  if (&other == this) return;
  for (const auto& [key, bitmap] : other.buckets_) {
    auto it = buckets_.find(key);
    if (it == buckets_.end()) {
      buckets_.emplace(key, internal::CopyRoaringBitmap(bitmap.get()));
    } else {
      roaring_bitmap_or_inplace(it->second.get(), bitmap.get());
    }
  }
}

void PositionBitmap::AndNot(const PositionBitmap& other) {
  if (&other == this) {
    buckets_.clear();
    return;
  }
  for (const auto& [key, bitmap] : other.buckets_) {
    auto it = buckets_.find(key);
    if (it == buckets_.end()) continue;
    roaring_bitmap_andnot_inplace(it->second.get(), bitmap.get());
    EraseIfEmpty(it);
  }
}

void PositionBitmap::RunOptimize() {
  for (auto& [key, bitmap] : buckets_) {
    roaring_bitmap_run_optimize(bitmap.get());
    roaring_bitmap_shrink_to_fit(bitmap.get());
  }
}

void PositionBitmap::ForEach(const std::function<void(int64_t)>& fn) const {
  struct Context {
    const std::function<void(int64_t)>* fn;
    uint64_t high;
  };
  for (const auto& [key, bitmap] : buckets_) {
    Context context{&fn, static_cast<uint64_t>(key) << 32};
    roaring_iterate(
        bitmap.get(),
        [](uint32_t value, void* param) {
          auto* ctx = static_cast<Context*>(param);
          (*ctx->fn)(static_cast<int64_t>(ctx->high | value));
          return true;
        },
        &context);
  }
}

std::vector<int64_t> PositionBitmap::ToVector() const {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(Cardinality()));
  std::vector<uint32_t> lows;
  for (const auto& [key, bitmap] : buckets_) {
    lows.resize(roaring_bitmap_get_cardinality(bitmap.get()));
    roaring_bitmap_to_uint32_array(bitmap.get(), lows.data());
    for (uint32_t low : lows) out.push_back(Combine(key, low));
  }
  return out;
}

int64_t PositionBitmap::CountIn(int64_t begin, int64_t end) const {
  if (begin < 0) begin = 0;
  if (begin >= end) return 0;
  const int64_t last = end - 1;
  int64_t n = 0;
  for (auto it = buckets_.lower_bound(KeyOf(begin)); it != buckets_.end() && it->first <= KeyOf(last); ++it) {
    const uint64_t low_begin = it->first == KeyOf(begin) ? LowOf(begin) : 0;
    const uint64_t low_end = it->first == KeyOf(last) ? uint64_t{LowOf(last)} + 1 : uint64_t{1} << 32;
    n += static_cast<int64_t>(roaring_bitmap_range_cardinality(it->second.get(), low_begin, low_end));
  }
  return n;
}

std::vector<int64_t> PositionBitmap::ToVector(int64_t begin, int64_t end) const {
  std::vector<int64_t> out;
  if (begin < 0) begin = 0;
  if (begin >= end) return out;
  const int64_t last = end - 1;
  for (auto it = buckets_.lower_bound(KeyOf(begin)); it != buckets_.end() && it->first <= KeyOf(last); ++it) {
    const uint32_t key = it->first;
    const uint32_t low_begin = key == KeyOf(begin) ? LowOf(begin) : 0;
    const uint32_t low_last = key == KeyOf(last) ? LowOf(last) : UINT32_MAX;
    roaring_uint32_iterator_t iter;
    roaring_init_iterator(it->second.get(), &iter);
    if (!roaring_move_uint32_iterator_equalorlarger(&iter, low_begin)) continue;
    while (iter.has_value && iter.current_value <= low_last) {
      out.push_back(Combine(key, iter.current_value));
      roaring_advance_uint32_iterator(&iter);
    }
  }
  return out;
}

bool PositionBitmap::operator==(const PositionBitmap& other) const {
  if (buckets_.size() != other.buckets_.size()) return false;
  for (auto a = buckets_.begin(), b = other.buckets_.begin(); a != buckets_.end(); ++a, ++b) {
    if (a->first != b->first || !roaring_bitmap_equals(a->second.get(), b->second.get())) return false;
  }
  return true;
}

}  // namespace lakesync::puffin
