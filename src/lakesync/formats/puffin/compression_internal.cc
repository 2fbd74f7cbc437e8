#include "lakesync/formats/puffin/compression_internal.h"

#include <arrow/util/compression.h>

#include <algorithm>
#include <bit>

#include "lakesync/formats/puffin/bytes_internal.h"

namespace lakesync::puffin::internal {
namespace {

constexpr uint32_t kLz4FrameMagic = 0x184D2204;
constexpr uint32_t kZstdFrameMagic = 0xFD2FB528;
constexpr uint8_t kLz4ContentSizeFlag = 0x08;
constexpr uint8_t kLz4DictIdFlag = 0x01;

arrow::Compression::type ArrowType(PuffinCodec codec) {
  return codec == PuffinCodec::kLz4 ? arrow::Compression::LZ4_FRAME : arrow::Compression::ZSTD;
}

Result<std::unique_ptr<arrow::util::Codec>> MakeCodec(PuffinCodec codec) {
  if (codec == PuffinCodec::kNone) return InvalidArgument("no compression codec given");
  if (!arrow::util::Codec::IsAvailable(ArrowType(codec))) {
    return Unsupported("this Arrow build has no {} codec", PuffinCodecName(codec));
  }
  auto made = arrow::util::Codec::Create(ArrowType(codec));
  if (!made.ok()) return Unsupported("cannot create {} codec: {}", PuffinCodecName(codec), made.status().message());
  return std::move(made).ValueUnsafe();
}

// Arrow's LZ4 frame compressor leaves the content size out of the frame header. The spec wants it, so
// we rewrite the descriptor: set the content-size flag, insert the 8-byte size and recompute the
// header checksum. The compressed blocks after the header are unchanged.
Result<std::string> AddLz4ContentSize(std::string frame, uint64_t content_size) {
  if (frame.size() < 7 || LoadU32LE(Bytes(frame)) != kLz4FrameMagic) {
    return Status::UnknownError("Arrow produced an LZ4 frame without the frame magic");
  }
  const uint8_t flg = static_cast<uint8_t>(frame[4]);
  if (flg & kLz4ContentSizeFlag) return frame;
  const size_t dict_bytes = (flg & kLz4DictIdFlag) ? 4 : 0;
  const size_t old_header_end = 4 + 2 + dict_bytes + 1;  // magic, FLG, BD, [dict id], HC
  if (frame.size() < old_header_end) return Status::UnknownError("Arrow produced a truncated LZ4 frame header");
  std::string descriptor;
  descriptor.push_back(static_cast<char>(flg | kLz4ContentSizeFlag));
  descriptor.push_back(frame[5]);  // BD
  AppendU64LE(&descriptor, content_size);
  descriptor.append(frame, 6, dict_bytes);
  const uint8_t checksum = static_cast<uint8_t>((XxHash32Short(descriptor, 0) >> 8) & 0xFF);
  std::string out = frame.substr(0, 4);
  out += descriptor;
  out.push_back(static_cast<char>(checksum));
  out.append(frame, old_header_end);
  return out;
}

}  // namespace

uint32_t XxHash32Short(std::string_view bytes, uint32_t seed) {
  constexpr uint32_t kPrime1 = 0x9E3779B1u, kPrime2 = 0x85EBCA77u, kPrime3 = 0xC2B2AE3Du, kPrime4 = 0x27D4EB2Fu,
                     kPrime5 = 0x165667B1u;
  // Inputs of 16 bytes or more take XXH32's striped path, which an LZ4 descriptor never needs.
  uint32_t h = seed + kPrime5 + static_cast<uint32_t>(bytes.size());
  const uint8_t* p = Bytes(bytes);
  size_t left = bytes.size();
  for (; left >= 4; left -= 4, p += 4) {
    h += LoadU32LE(p) * kPrime3;
    h = std::rotl(h, 17) * kPrime4;
  }
  for (; left > 0; --left, ++p) {
    h += static_cast<uint32_t>(*p) * kPrime5;
    h = std::rotl(h, 11) * kPrime1;
  }
  h ^= h >> 15;
  h *= kPrime2;
  h ^= h >> 13;
  h *= kPrime3;
  h ^= h >> 16;
  return h;
}

std::optional<uint64_t> FrameContentSize(PuffinCodec codec, std::string_view frame) {
  const uint8_t* p = Bytes(frame);
  if (codec == PuffinCodec::kLz4) {
    if (frame.size() < 7 || LoadU32LE(p) != kLz4FrameMagic) return std::nullopt;
    if (!(p[4] & kLz4ContentSizeFlag) || frame.size() < 14) return std::nullopt;
    return LoadU64LE(p + 6);
  }
  if (codec == PuffinCodec::kZstd) {
    if (frame.size() < 5 || LoadU32LE(p) != kZstdFrameMagic) return std::nullopt;
    const uint8_t fhd = p[4];
    const unsigned fcs_flag = fhd >> 6;
    const bool single_segment = (fhd >> 5) & 1;
    static constexpr size_t kDictIdBytes[4] = {0, 1, 2, 4};
    size_t pos = 5 + (single_segment ? 0 : 1) + kDictIdBytes[fhd & 3];
    static constexpr size_t kFcsBytes[4] = {0, 2, 4, 8};
    const size_t fcs_bytes = fcs_flag == 0 ? (single_segment ? 1 : 0) : kFcsBytes[fcs_flag];
    if (fcs_bytes == 0 || frame.size() < pos + fcs_bytes) return std::nullopt;
    switch (fcs_bytes) {
      case 1: return p[pos];
      case 2: return static_cast<uint64_t>(p[pos] | (p[pos + 1] << 8)) + 256;
      case 4: return LoadU32LE(p + pos);
      default: return LoadU64LE(p + pos);
    }
  }
  return std::nullopt;
}

Result<std::string> CompressFrame(PuffinCodec codec, std::string_view data) {
  ARROW_ASSIGN_OR_RAISE(auto arrow_codec, MakeCodec(codec));
  const auto* input = Bytes(data);
  const int64_t bound = arrow_codec->MaxCompressedLen(static_cast<int64_t>(data.size()), input);
  std::string out(static_cast<size_t>(bound), '\0');
  ARROW_ASSIGN_OR_RAISE(int64_t written,
                        arrow_codec->Compress(static_cast<int64_t>(data.size()), input, bound,
                                              reinterpret_cast<uint8_t*>(out.data())));
  out.resize(static_cast<size_t>(written));
  if (codec == PuffinCodec::kLz4) return AddLz4ContentSize(std::move(out), data.size());
  // Arrow compresses Zstandard in one shot, which records the content size; check rather than assume.
  if (FrameContentSize(codec, out) != std::optional<uint64_t>(data.size())) {
    return Status::UnknownError("Arrow's zstd frame does not record the content size");
  }
  return out;
}

Result<std::shared_ptr<arrow::Buffer>> DecompressFrame(PuffinCodec codec, std::string_view data, int64_t max_size) {
  const std::string_view name = PuffinCodecName(codec);
  ARROW_ASSIGN_OR_RAISE(auto arrow_codec, MakeCodec(codec));
  ARROW_ASSIGN_OR_RAISE(auto decompressor, arrow_codec->MakeDecompressor());
  const std::optional<uint64_t> declared = FrameContentSize(codec, data);
  if (declared.has_value() && *declared > static_cast<uint64_t>(max_size)) {
    return InvalidArgument("{} frame declares {} bytes of content, above the limit of {}", name, *declared,
                           max_size);
  }
  int64_t capacity = declared.has_value()
                         ? std::max<int64_t>(static_cast<int64_t>(*declared), 1)
                         : std::min<int64_t>(max_size, std::max<int64_t>(1024, 4 * static_cast<int64_t>(data.size())));
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::ResizableBuffer> out, arrow::AllocateResizableBuffer(capacity));
  const auto* input = Bytes(data);
  const int64_t input_len = static_cast<int64_t>(data.size());
  int64_t in_pos = 0;
  int64_t out_pos = 0;
  while (!decompressor->IsFinished()) {
    if (out_pos == out->size()) {
      if (out->size() >= max_size) {
        return InvalidArgument("{} frame decompresses to more than the limit of {} bytes", name, max_size);
      }
      ARROW_RETURN_NOT_OK(out->Resize(std::min<int64_t>(max_size, 2 * out->size())));
    }
    auto step = decompressor->Decompress(input_len - in_pos, input + in_pos, out->size() - out_pos,
                                         out->mutable_data() + out_pos);
    if (!step.ok()) return Corrupt("{} frame does not decompress: {}", name, step.status().message());
    in_pos += step->bytes_read;
    out_pos += step->bytes_written;
    if (step->bytes_read == 0 && step->bytes_written == 0 && !decompressor->IsFinished() && out_pos < out->size()) {
      return Corrupt("{} frame is truncated: all {} bytes read, frame not finished", name, input_len);
    }
  }
  if (in_pos != input_len) {
    return Corrupt("{} frame ends at byte {}, but {} more bytes follow it", name, in_pos, input_len - in_pos);
  }
  if (declared.has_value() && static_cast<uint64_t>(out_pos) != *declared) {
    return Corrupt("{} frame declares {} bytes of content but holds {}", name, *declared, out_pos);
  }
  ARROW_RETURN_NOT_OK(out->Resize(out_pos));
  return std::shared_ptr<arrow::Buffer>(std::move(out));
}

}  // namespace lakesync::puffin::internal
