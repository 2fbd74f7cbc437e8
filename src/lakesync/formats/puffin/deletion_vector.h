// Iceberg's `deletion-vector-v1` Puffin blob (puffin-spec.md, "deletion-vector-v1 blob type"):
//
//   offset 0     4 bytes  L = 4 + V (magic + vector), big-endian
//   offset 4     4 bytes  magic D1 D3 39 64
//   offset 8     V bytes  64-bit Roaring bitmap, portable layout (roaring64_portable.h), little-endian
//   offset 8+V   4 bytes  CRC-32 (zlib) of bytes [4, 8+V), big-endian
//
// The blob's content_size_in_bytes in a manifest is V + 12. Deletion vectors are never compressed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lakesync/common/status.h"
#include "lakesync/formats/puffin/positions_bitmap.h"

namespace lakesync::puffin {

inline constexpr std::string_view kDeletionVectorBlobType = "deletion-vector-v1";
inline constexpr std::array<uint8_t, 4> kDeletionVectorMagic = {0xD1, 0xD3, 0x39, 0x64};
// Field id of the reserved `_pos` metadata column; Java lists it as the blob's only field.
inline constexpr int32_t kRowPositionFieldId = 2147483645;
// Blob property keys the spec requires on every deletion vector.
inline constexpr std::string_view kReferencedDataFileProperty = "referenced-data-file";
inline constexpr std::string_view kCardinalityProperty = "cardinality";
// Length field + magic + empty vector (8-byte zero bucket count) + CRC.
inline constexpr int64_t kMinDeletionVectorBlobSize = 4 + 4 + 8 + 4;

// Serializes positions as a complete deletion-vector-v1 blob, with the bucket layout Java writes (every
// key from 0 to the largest), so an empty set gives Java's 20-byte empty vector.
// Returns InvalidArgument if the blob would not fit the 32-bit length field.
Result<std::string> SerializeDeletionVector(const PositionBitmap& positions);

// Decodes a complete deletion-vector-v1 blob (exactly content_size_in_bytes bytes) from untrusted
// input. Checks the length field against the blob size, the magic, the CRC, the bitmap's structure and,
// when expected_cardinality is given (the manifest's record_count or the blob's `cardinality`
// property), the number of positions. Returns Corrupt naming the first check that failed.
Result<PositionBitmap> DeserializeDeletionVector(std::string_view blob,
                                                 std::optional<int64_t> expected_cardinality = std::nullopt);

}  // namespace lakesync::puffin
