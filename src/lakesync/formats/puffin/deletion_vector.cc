#include "lakesync/formats/puffin/deletion_vector.h"

#include "lakesync/formats/puffin/bytes_internal.h"
#include "lakesync/formats/puffin/roaring64_portable.h"

namespace lakesync::puffin {
namespace {

constexpr size_t kLengthBytes = 4;
constexpr size_t kMagicBytes = 4;
constexpr size_t kCrcBytes = 4;

std::string_view MagicView() {
  return {reinterpret_cast<const char*>(kDeletionVectorMagic.data()), kDeletionVectorMagic.size()};
}

}  // namespace

Result<std::string> SerializeDeletionVector(const PositionBitmap& positions) {
  Roaring64SerializeOptions options;
  options.key_layout = Roaring64KeyLayout::kEveryKeyUpToMax;
  // Java reads the length field as a signed int; keep the whole blob within it.
  options.max_serialized_size = INT32_MAX - static_cast<int64_t>(kLengthBytes + kMagicBytes + kCrcBytes);
  std::string blob;
  blob.append(kLengthBytes, '\0');  // patched below once the vector's size is known
  blob.append(MagicView());
  LS_RETURN_NOT_OK_CTX(AppendRoaring64Portable(positions, &blob, options), "serializing a deletion vector");
  const size_t covered = blob.size() - kLengthBytes;  // magic + vector
  const uint32_t crc = internal::Crc32(std::string_view(blob).substr(kLengthBytes));
  std::string length;
  internal::AppendU32BE(&length, static_cast<uint32_t>(covered));
  blob.replace(0, kLengthBytes, length);
  internal::AppendU32BE(&blob, crc);
  return blob;
}

Result<PositionBitmap> DeserializeDeletionVector(std::string_view blob, std::optional<int64_t> expected_cardinality) {
  if (static_cast<int64_t>(blob.size()) < kMinDeletionVectorBlobSize) {
    return Corrupt("deletion vector blob is {} bytes, shorter than the smallest possible ({} bytes)", blob.size(),
                   kMinDeletionVectorBlobSize);
  }
  const uint32_t length = internal::LoadU32BE(internal::Bytes(blob));
  const size_t expected_length = blob.size() - kLengthBytes - kCrcBytes;
  if (length != expected_length) {
    return Corrupt("deletion vector length field says {} bytes of magic + vector, but the {}-byte blob holds {} "
                   "(blob size - 8)",
                   length, blob.size(), expected_length);
  }
  const std::string_view magic = blob.substr(kLengthBytes, kMagicBytes);
  if (magic != MagicView()) {
    return Corrupt("deletion vector magic mismatch: expected {}, found {}", internal::HexBytes(MagicView()),
                   internal::HexBytes(magic));
  }
  const std::string_view covered = blob.substr(kLengthBytes, length);
  const uint32_t stored_crc = internal::LoadU32BE(internal::Bytes(blob) + kLengthBytes + length);
  const uint32_t computed_crc = internal::Crc32(covered);
  if (stored_crc != computed_crc) {
    return Corrupt("deletion vector CRC-32 mismatch: stored 0x{:08X}, computed 0x{:08X} over {} bytes", stored_crc,
                   computed_crc, covered.size());
  }
  LS_ASSIGN_OR_RAISE_CTX(PositionBitmap positions, DeserializeRoaring64Portable(covered.substr(kMagicBytes)),
                         "decoding deletion vector");
  if (expected_cardinality.has_value()) {
    const int64_t actual = positions.Cardinality();
    if (actual != *expected_cardinality) {
      return Corrupt("deletion vector cardinality mismatch: the vector holds {} positions, expected {}", actual,
                     *expected_cardinality);
    }
  }
  return positions;
}

}  // namespace lakesync::puffin
