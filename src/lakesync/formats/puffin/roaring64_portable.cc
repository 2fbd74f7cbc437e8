#include "lakesync/formats/puffin/roaring64_portable.h"

#include <roaring/roaring.h>

#include <vector>

#include "lakesync/formats/puffin/bytes_internal.h"
#include "lakesync/formats/puffin/positions_bitmap_internal.h"
#include "lakesync/formats/puffin/roaring32_internal.h"

namespace lakesync::puffin {
namespace {

using internal::RoaringBitmapPtr;

constexpr size_t kCountBytes = 8;
constexpr size_t kKeyBytes = 4;
// The smallest 32-bit portable bitmap: cookie 12346 and a container count of 0.
constexpr size_t kMinBitmap32Bytes = 8;
constexpr uint32_t kMaxKey = INT32_MAX;

// One bucket ready to write: a run-optimized copy (or none for a gap key) and its serialized size.
struct PreparedBucket {
  uint32_t key;
  RoaringBitmapPtr bitmap;  // null for an empty gap bucket
  size_t size;
};

struct Prepared {
  std::vector<PreparedBucket> buckets;
  uint64_t bucket_count = 0;  // including gap keys for kEveryKeyUpToMax
  uint64_t total_size = kCountBytes;
};

Result<Prepared> Prepare(const PositionBitmap& bitmap, const Roaring64SerializeOptions& options) {
  const auto& buckets = internal::PositionBitmapAccess::Buckets(bitmap);
  Prepared p;
  p.buckets.reserve(buckets.size());
  for (const auto& [key, source] : buckets) {
    RoaringBitmapPtr copy = internal::CopyRoaringBitmap(source.get());
    roaring_bitmap_run_optimize(copy.get());
    const size_t size = roaring_bitmap_portable_size_in_bytes(copy.get());
    p.buckets.push_back(PreparedBucket{key, std::move(copy), size});
    p.total_size += kKeyBytes + size;
  }
  p.bucket_count = p.buckets.size();
  if (options.key_layout == Roaring64KeyLayout::kEveryKeyUpToMax && !p.buckets.empty()) {
    const uint64_t gaps = static_cast<uint64_t>(p.buckets.back().key) + 1 - p.buckets.size();
    p.bucket_count += gaps;
    p.total_size += gaps * (kKeyBytes + kMinBitmap32Bytes);
  }
  if (p.total_size > static_cast<uint64_t>(options.max_serialized_size)) {
    return InvalidArgument(
        "64-bit Roaring bitmap would serialize to {} bytes ({} buckets, largest position {}), above the limit of "
        "{} bytes",
        p.total_size, p.bucket_count, bitmap.Max().value_or(-1), options.max_serialized_size);
  }
  return p;
}

void AppendEmptyBitmap32(std::string* out) {
  internal::AppendU32LE(out, 12346);  // cookie without run containers
  internal::AppendU32LE(out, 0);      // no containers
}

}  // namespace

Result<int64_t> Roaring64PortableSize(const PositionBitmap& bitmap, const Roaring64SerializeOptions& options) {
  ARROW_ASSIGN_OR_RAISE(Prepared p, Prepare(bitmap, options));
  return static_cast<int64_t>(p.total_size);
}

Status AppendRoaring64Portable(const PositionBitmap& bitmap, std::string* out,
                               const Roaring64SerializeOptions& options) {
  ARROW_ASSIGN_OR_RAISE(Prepared p, Prepare(bitmap, options));
  const size_t start = out->size();
  out->reserve(start + p.total_size);
  internal::AppendU64LE(out, p.bucket_count);
  uint32_t next_key = 0;
  for (const PreparedBucket& bucket : p.buckets) {
    if (options.key_layout == Roaring64KeyLayout::kEveryKeyUpToMax) {
      for (; next_key < bucket.key; ++next_key) {
        internal::AppendU32LE(out, next_key);
        AppendEmptyBitmap32(out);
      }
      next_key = bucket.key + 1;
    }
    internal::AppendU32LE(out, bucket.key);
    const size_t at = out->size();
    out->resize(at + bucket.size);
    const size_t written = roaring_bitmap_portable_serialize(bucket.bitmap.get(), out->data() + at);
    if (written != bucket.size) {
      return Status::UnknownError("CRoaring wrote ", written, " bytes for a bucket it sized at ", bucket.size);
    }
  }
  if (out->size() - start != p.total_size) {
    return Status::UnknownError("64-bit Roaring serialization wrote ", out->size() - start, " bytes, expected ",
                                p.total_size);
  }
  return Status::OK();
}

Result<std::string> SerializeRoaring64Portable(const PositionBitmap& bitmap,
                                               const Roaring64SerializeOptions& options) {
  std::string out;
  ARROW_RETURN_NOT_OK(AppendRoaring64Portable(bitmap, &out, options));
  return out;
}

Result<Roaring64ParseResult> ParseRoaring64PortablePrefix(std::string_view bytes) {
  if (bytes.size() < kCountBytes) {
    return Corrupt("64-bit Roaring bitmap truncated: {} bytes, too short for the 8-byte bucket count",
                   bytes.size());
  }
  const uint64_t count = internal::LoadU64LE(internal::Bytes(bytes));
  // Each bucket needs at least a key and an empty 32-bit bitmap; checking this first keeps a forged
  // count from driving a long loop.
  const uint64_t max_possible = (bytes.size() - kCountBytes) / (kKeyBytes + kMinBitmap32Bytes);
  if (count > max_possible) {
    return Corrupt("64-bit Roaring bitmap claims {} buckets, but its {} bytes can hold at most {}", count,
                   bytes.size(), max_possible);
  }
  Roaring64ParseResult result;
  size_t pos = kCountBytes;
  int64_t previous_key = -1;
  for (uint64_t i = 0; i < count; ++i) {
    if (bytes.size() - pos < kKeyBytes) {
      return Corrupt("64-bit Roaring bitmap truncated: bucket {} of {} has no key at offset {}", i, count, pos);
    }
    const uint32_t key = internal::LoadU32LE(internal::Bytes(bytes) + pos);
    if (key > kMaxKey) {
      return Corrupt("64-bit Roaring bitmap: bucket {} at offset {} has key {} (0x{:08X}) with the most "
                     "significant bit set; positions must be non-negative",
                     i, pos, key, key);
    }
    if (static_cast<int64_t>(key) <= previous_key) {
      return Corrupt("64-bit Roaring bitmap: bucket {} at offset {} has key {}, not above the previous key {}", i,
                     pos, key, previous_key);
    }
    previous_key = key;
    pos += kKeyBytes;
    size_t consumed = 0;
    auto bitmap = internal::ReadPortableRoaring32(bytes.substr(pos), &consumed);
    if (!bitmap.ok()) {
      return WithContext(bitmap.status(), fmt::format("64-bit Roaring bitmap: bucket {} (key {}) at offset {}", i,
                                                      key, pos));
    }
    internal::PositionBitmapAccess::PutBucket(result.bitmap, key, std::move(bitmap).ValueUnsafe());
    pos += consumed;
  }
  result.bytes_consumed = pos;
  return result;
}

Result<PositionBitmap> DeserializeRoaring64Portable(std::string_view bytes) {
  ARROW_ASSIGN_OR_RAISE(Roaring64ParseResult parsed, ParseRoaring64PortablePrefix(bytes));
  if (parsed.bytes_consumed != bytes.size()) {
    return Corrupt("64-bit Roaring bitmap ends at byte {}, but {} trailing bytes follow it", parsed.bytes_consumed,
                   bytes.size() - parsed.bytes_consumed);
  }
  return std::move(parsed.bitmap);
}

}  // namespace lakesync::puffin
