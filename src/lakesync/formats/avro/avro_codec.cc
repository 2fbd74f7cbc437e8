#include "lakesync/formats/avro/avro_codec.h"

#include <arrow/util/compression.h>
#include <arrow/util/crc32.h>

#include <algorithm>
#include <memory>

namespace lakesync::avro {
namespace {

Result<std::unique_ptr<arrow::util::Codec>> MakeArrowCodec(AvroCodec codec) {
  arrow::Compression::type type;
  std::unique_ptr<arrow::util::CodecOptions> options = std::make_unique<arrow::util::CodecOptions>();
  switch (codec) {
    case AvroCodec::kDeflate: {
      auto gzip = std::make_unique<arrow::util::GZipCodecOptions>();
      gzip->gzip_format = arrow::util::GZipFormat::DEFLATE;
      options = std::move(gzip);
      type = arrow::Compression::GZIP;
      break;
    }
    case AvroCodec::kSnappy: type = arrow::Compression::SNAPPY; break;
    case AvroCodec::kZstandard: type = arrow::Compression::ZSTD; break;
    case AvroCodec::kBzip2: type = arrow::Compression::BZ2; break;
    default: return InvalidArgument("codec {} needs no compressor", AvroCodecName(codec));
  }
  if (!arrow::util::Codec::IsAvailable(type)) {
    return Unsupported("this Arrow build has no {} codec for Avro blocks", AvroCodecName(codec));
  }
  auto made = arrow::util::Codec::Create(type, *options);
  if (!made.ok()) return Unsupported("cannot create the {} codec: {}", AvroCodecName(codec), made.status().message());
  return std::move(made).ValueUnsafe();
}

const uint8_t* Bytes(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

void AppendU32BE(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>((v >> shift) & 0xFF));
}

uint32_t LoadU32BE(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// The uncompressed length a Snappy block declares in its leading varint32.
Result<uint64_t> SnappyDeclaredLength(std::string_view block) {
  uint64_t v = 0;
  for (size_t i = 0; i < block.size() && i < 5; ++i) {
    const auto b = static_cast<unsigned char>(block[i]);
    v |= static_cast<uint64_t>(b & 0x7F) << (7 * i);
    if ((b & 0x80) == 0) return v;
  }
  return Corrupt("the snappy block has no valid length header");
}

Result<std::string> DecompressSnappy(arrow::util::Codec* codec, std::string_view data, int64_t max_size) {
  if (data.size() < 4) return Corrupt("a snappy block is shorter than its 4-byte checksum");
  const std::string_view compressed = data.substr(0, data.size() - 4);
  ARROW_ASSIGN_OR_RAISE(uint64_t length, SnappyDeclaredLength(compressed));
  if (length > static_cast<uint64_t>(max_size)) {
    return Corrupt("a snappy block declares {} bytes, more than the limit of {}", length, max_size);
  }
  std::string out(length, '\0');
  auto written = codec->Decompress(static_cast<int64_t>(compressed.size()), Bytes(compressed),
                                   static_cast<int64_t>(out.size()), reinterpret_cast<uint8_t*>(out.data()));
  if (!written.ok()) return Corrupt("malformed snappy block: {}", written.status().message());
  out.resize(static_cast<size_t>(*written));
  const uint32_t expected = LoadU32BE(data.data() + data.size() - 4);
  const uint32_t actual = arrow::internal::crc32(0, out.data(), out.size());
  if (expected != actual) {
    return Corrupt("snappy block checksum mismatch: stored {:08x}, computed {:08x}", expected, actual);
  }
  return out;
}

Result<std::string> DecompressStream(arrow::util::Codec* codec, std::string_view data, int64_t max_size) {
  auto made = codec->MakeDecompressor();
  if (!made.ok()) return Unsupported("cannot create a decompressor: {}", made.status().message());
  std::shared_ptr<arrow::util::Decompressor> decompressor = *made;
  const int64_t limit = std::max<int64_t>(max_size, 0);
  std::string out;
  const int64_t first_guess = std::max<int64_t>(4096, 4 * static_cast<int64_t>(data.size()));
  out.resize(static_cast<size_t>(std::min<int64_t>(limit, first_guess)));
  int64_t in_pos = 0;
  int64_t out_pos = 0;
  const int64_t in_len = static_cast<int64_t>(data.size());
  while (!decompressor->IsFinished()) {
    if (out_pos == static_cast<int64_t>(out.size())) {
      if (out_pos >= limit) return Corrupt("a compressed block expands beyond the limit of {} bytes", limit);
      out.resize(static_cast<size_t>(std::min<int64_t>(limit, std::max<int64_t>(4096, 2 * out_pos))));
    }
    auto step = decompressor->Decompress(in_len - in_pos, Bytes(data) + in_pos,
                                         static_cast<int64_t>(out.size()) - out_pos,
                                         reinterpret_cast<uint8_t*>(out.data()) + out_pos);
    if (!step.ok()) return Corrupt("malformed compressed block: {}", step.status().message());
    in_pos += step->bytes_read;
    out_pos += step->bytes_written;
    if (step->bytes_read == 0 && step->bytes_written == 0 && out_pos < static_cast<int64_t>(out.size())) {
      // No progress with output space left: the input ended before the stream did.
      return Corrupt("the compressed block is truncated");
    }
  }
  out.resize(static_cast<size_t>(out_pos));
  return out;
}

}  // namespace

std::string_view AvroCodecName(AvroCodec codec) {
  switch (codec) {
    case AvroCodec::kNull: return "null";
    case AvroCodec::kDeflate: return "deflate";
    case AvroCodec::kSnappy: return "snappy";
    case AvroCodec::kZstandard: return "zstandard";
    case AvroCodec::kBzip2: return "bzip2";
  }
  return "null";
}

Result<AvroCodec> ParseAvroCodec(std::string_view name) {
  if (name == "null") return AvroCodec::kNull;
  if (name == "deflate") return AvroCodec::kDeflate;
  if (name == "snappy") return AvroCodec::kSnappy;
  if (name == "zstandard") return AvroCodec::kZstandard;
  if (name == "bzip2") return AvroCodec::kBzip2;
  return Unsupported("Avro codec '{}' is not supported (null, deflate, snappy, zstandard, bzip2 are)", name);
}

Result<std::string> CompressAvroBlock(AvroCodec codec, std::string_view data) {
  if (codec == AvroCodec::kNull) return std::string(data);
  if (codec == AvroCodec::kBzip2) return Unsupported("writing bzip2 Avro blocks is not supported");
  ARROW_ASSIGN_OR_RAISE(auto arrow_codec, MakeArrowCodec(codec));
  const int64_t bound = arrow_codec->MaxCompressedLen(static_cast<int64_t>(data.size()), Bytes(data));
  std::string out(static_cast<size_t>(bound), '\0');
  auto written = arrow_codec->Compress(static_cast<int64_t>(data.size()), Bytes(data), bound,
                                       reinterpret_cast<uint8_t*>(out.data()));
  if (!written.ok()) {
    return Status::UnknownError(
        fmt::format("{} compression failed: {}", AvroCodecName(codec), written.status().message()));
  }
  out.resize(static_cast<size_t>(*written));
  if (codec == AvroCodec::kSnappy) AppendU32BE(&out, arrow::internal::crc32(0, data.data(), data.size()));
  return out;
}

Result<std::string> DecompressAvroBlock(AvroCodec codec, std::string_view data, int64_t max_size) {
  if (codec == AvroCodec::kNull) {
    if (static_cast<int64_t>(data.size()) > max_size) {
      return Corrupt("a block of {} bytes exceeds the limit of {}", data.size(), max_size);
    }
    return std::string(data);
  }
  ARROW_ASSIGN_OR_RAISE(auto arrow_codec, MakeArrowCodec(codec));
  if (codec == AvroCodec::kSnappy) return DecompressSnappy(arrow_codec.get(), data, max_size);
  return DecompressStream(arrow_codec.get(), data, max_size);
}

}  // namespace lakesync::avro
