// The "portable" 64-bit Roaring serialization (RoaringFormatSpec, "Extension for 64-bit
// implementations"), shared by Iceberg's deletion-vector-v1 blob and Delta's deletion vectors:
//
//   uint64 LE  number of buckets
//   per bucket, in ascending key order:
//     uint32 LE  key (the high 32 bits of the positions in the bucket)
//     a 32-bit Roaring bitmap in the portable format (the low 32 bits)
//
// Both Iceberg and Delta require the key's most significant bit to be 0 (positions are non-negative
// int64). This file knows nothing of either format's framing (length, magic, CRC).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lakesync/common/status.h"
#include "lakesync/formats/puffin/positions_bitmap.h"

namespace lakesync::puffin {

enum class Roaring64KeyLayout {
  // Every key from 0 to the largest one, empty bitmaps included, as Iceberg Java and Delta write it
  // (they hold the buckets in an array indexed by key). The empty DV has zero buckets.
  kEveryKeyUpToMax,
  // Only non-empty buckets. Smaller when positions are spread over distant keys; every reader
  // following the spec accepts it.
  kNonEmptyKeysOnly,
};

struct Roaring64SerializeOptions {
  Roaring64KeyLayout key_layout = Roaring64KeyLayout::kEveryKeyUpToMax;
  // Serialization refuses to produce more bytes than this (the formats store the size in an int32).
  int64_t max_serialized_size = INT32_MAX;
};

// Serializes bitmap, run-optimizing each bucket first (on a copy) as Java's writer does.
// Returns InvalidArgument if the result would exceed options.max_serialized_size.
Result<std::string> SerializeRoaring64Portable(const PositionBitmap& bitmap,
                                               const Roaring64SerializeOptions& options = {});
// Same, appending to *out (for framings that write a prefix first).
Status AppendRoaring64Portable(const PositionBitmap& bitmap, std::string* out,
                               const Roaring64SerializeOptions& options = {});
// The exact size SerializeRoaring64Portable would produce.
Result<int64_t> Roaring64PortableSize(const PositionBitmap& bitmap, const Roaring64SerializeOptions& options = {});

struct Roaring64ParseResult {
  PositionBitmap bitmap;
  size_t bytes_consumed = 0;
};

// Reads a serialized bitmap from the start of bytes (which may hold more after it) from untrusted
// input: every length is bounds-checked and every container validated before CRoaring sees it.
// Accepts empty buckets and gaps between keys. Returns Corrupt naming the problem and its byte offset
// when the input is truncated, a key has its most significant bit set, keys are not strictly
// ascending, or a 32-bit bitmap is malformed.
Result<Roaring64ParseResult> ParseRoaring64PortablePrefix(std::string_view bytes);

// Like ParseRoaring64PortablePrefix, but bytes must hold exactly one serialized bitmap: trailing
// bytes are Corrupt too.
Result<PositionBitmap> DeserializeRoaring64Portable(std::string_view bytes);

}  // namespace lakesync::puffin
