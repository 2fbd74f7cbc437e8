// Puffin file layout constants and the footer's JSON payload (puffin-spec.md, "FileMetadata" and
// "BlobMetadata").
//
//   "PFA1" | blob 1 ... blob N | "PFA1" payload payload_size(int32 LE) flags(4 bytes) "PFA1"
//
// Offsets in BlobMetadata are absolute file offsets. The footer size (what Iceberg calls
// file-footer-size-in-bytes) is payload_size + 16: both footer magics, the size and the flags.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::puffin {

inline constexpr std::string_view kPuffinMagic = "PFA1";
inline constexpr int64_t kPuffinMagicSize = 4;
// Footer bytes other than the payload: two magics, the payload size and the flags.
inline constexpr int64_t kPuffinFooterOverhead = 16;
// Byte 0, bit 0 of the footer flags: the payload is an LZ4 frame.
inline constexpr uint8_t kPuffinFooterPayloadCompressed = 0x01;
// File property naming the writer, e.g. "lakesync 0.1.0".
inline constexpr std::string_view kCreatedByProperty = "created-by";

// Compression codecs the spec allows for blobs (and, for LZ4, the footer payload).
enum class PuffinCodec { kNone, kLz4, kZstd };

// The spec's name for codec: "lz4", "zstd"; empty for kNone (which is written by omitting the key).
std::string_view PuffinCodecName(PuffinCodec codec);
// Parses a `compression-codec` value. Returns Unsupported naming any other codec.
Result<PuffinCodec> ParsePuffinCodec(std::string_view name);

struct BlobMetadata {
  std::string type;
  std::vector<int32_t> fields;
  int64_t snapshot_id = -1;
  int64_t sequence_number = -1;
  int64_t offset = 0;  // absolute file offset of the stored (possibly compressed) bytes
  int64_t length = 0;  // stored size, after compression
  // As written in the footer; kept as text so an unknown codec can be reported when the blob is read
  // rather than making the whole file unreadable.
  std::optional<std::string> compression_codec;
  std::map<std::string, std::string> properties;

  bool operator==(const BlobMetadata&) const = default;
};

struct FileMetadata {
  std::vector<BlobMetadata> blobs;
  std::map<std::string, std::string> properties;

  bool operator==(const FileMetadata&) const = default;
};

// Serializes the footer payload as compact JSON with keys in the order Java writes them; empty
// `properties` objects are omitted (so no blobs and no properties give `{"blobs":[]}`).
// Returns InvalidArgument if a string is not valid UTF-8.
Result<std::string> SerializeFileMetadata(const FileMetadata& metadata);

// Parses a footer payload. Unknown keys are ignored for forward compatibility.
// Returns Corrupt naming the blob index and key when JSON is malformed, a required key is missing, or a
// value has the wrong type or range (fields must be int32, offset and length non-negative).
Result<FileMetadata> ParseFileMetadata(std::string_view json);

}  // namespace lakesync::puffin
