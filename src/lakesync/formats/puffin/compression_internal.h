// Blob and footer compression for Puffin through Arrow's bundled codecs. The spec requires a single
// LZ4 or Zstandard frame "with content size present".
#pragma once

#include <arrow/buffer.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "lakesync/common/status.h"
#include "lakesync/formats/puffin/puffin_metadata.h"

namespace lakesync::puffin::internal {

// Compresses data as one frame whose header carries the content size.
// Returns Unsupported if Arrow was built without the codec; codec must not be kNone.
Result<std::string> CompressFrame(PuffinCodec codec, std::string_view data);

// Decompresses exactly one frame that makes up all of data. Returns Corrupt if the frame is malformed,
// truncated, followed by other bytes, or disagrees with its declared content size; InvalidArgument if
// it would exceed max_size bytes.
Result<std::shared_ptr<arrow::Buffer>> DecompressFrame(PuffinCodec codec, std::string_view data, int64_t max_size);

// The content size declared in a frame header, if the header is complete and declares one.
std::optional<uint64_t> FrameContentSize(PuffinCodec codec, std::string_view frame);

// XXH32 of fewer than 16 bytes (all an LZ4 frame descriptor needs), for the header checksum.
uint32_t XxHash32Short(std::string_view bytes, uint32_t seed);

}  // namespace lakesync::puffin::internal
