// Block compression of Avro object container files (Avro spec "Required Codecs" / "Optional
// Codecs"), through Arrow's bundled codecs so no second copy of zlib/snappy/zstd is linked.
//
//   null       blocks stored as they are
//   deflate    raw DEFLATE (RFC 1951, no zlib or gzip header)
//   snappy     a Snappy block followed by the big-endian CRC-32 of the uncompressed data
//   zstandard  one Zstandard frame
//   bzip2      one bzip2 stream (read only)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lakesync/common/status.h"

namespace lakesync::avro {

enum class AvroCodec { kNull, kDeflate, kSnappy, kZstandard, kBzip2 };

// The avro.codec name: "null", "deflate", "snappy", "zstandard", "bzip2".
std::string_view AvroCodecName(AvroCodec codec);
// Parses an avro.codec value; returns Unsupported naming the codec for anything else (e.g. "xz").
Result<AvroCodec> ParseAvroCodec(std::string_view name);

// Compresses one block. Returns Unsupported for codecs this build cannot write (bzip2, or one
// missing from Arrow).
Result<std::string> CompressAvroBlock(AvroCodec codec, std::string_view data);
// Decompresses one block. Returns Corrupt for malformed, truncated or checksum-failing input, and
// Corrupt as well when the block would expand beyond max_size bytes.
Result<std::string> DecompressAvroBlock(AvroCodec codec, std::string_view data, int64_t max_size);

}  // namespace lakesync::avro
