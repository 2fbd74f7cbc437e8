#include "lakesync/delta/deletion_vector.h"

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>

#include <cstring>

#include "lakesync/common/logging.h"
#include "lakesync/delta/z85.h"
#include "lakesync/formats/puffin/deletion_vector.h"
#include "lakesync/formats/puffin/roaring64_portable.h"
#include "lakesync/io/location.h"

namespace lakesync::delta {
namespace {

constexpr uint32_t kPortableMagic = 1681511377;
constexpr uint32_t kNativeMagic = 1681511376;

uint32_t LoadU32LE(const char* p) {
  const auto* b = reinterpret_cast<const uint8_t*>(p);
  return uint32_t{b[0]} | (uint32_t{b[1]} << 8) | (uint32_t{b[2]} << 16) | (uint32_t{b[3]} << 24);
}

std::string UuidText(std::string_view b) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[(static_cast<uint8_t>(b[i]) >> 4) & 0xF]);
    out.push_back(kHex[static_cast<uint8_t>(b[i]) & 0xF]);
  }
  return out;
}

Status CheckCardinality(const puffin::PositionBitmap& bitmap, const DeletionVectorDescriptor& dv) {
  if (bitmap.Cardinality() != dv.cardinality) {
    return Corrupt("deletion vector holds {} rows but its descriptor says cardinality {}", bitmap.Cardinality(),
                   dv.cardinality);
  }
  return Status::OK();
}

}  // namespace

Result<std::string> DeletionVectorLocation(const std::string& table_root, const DeletionVectorDescriptor& dv) {
  if (dv.storage_type == "p") {
    if (IsHttpUrl(dv.path_or_inline_dv)) return dv.path_or_inline_dv;  // a signed URL, used as given
    return PercentDecode(dv.path_or_inline_dv);
  }
  if (dv.storage_type != "u") return InvalidArgument("an inline deletion vector has no file");
  const std::string& text = dv.path_or_inline_dv;
  if (text.size() < 20) return Corrupt("deletion vector path '{}' is shorter than a Z85 UUID (20 characters)", text);
  const std::string prefix = text.substr(0, text.size() - 20);
  LS_ASSIGN_OR_RAISE_CTX(auto uuid, Z85Decode(std::string_view(text).substr(text.size() - 20)),
                         "decoding deletion vector path '{}'", text);
  std::string name = "deletion_vector_" + UuidText(uuid) + ".bin";
  return io::JoinLocation(table_root, prefix.empty() ? name : prefix + "/" + name);
}

Result<puffin::PositionBitmap> DecodeDeletionVectorBitmap(std::string_view bytes) {
  if (bytes.size() < 4) return Corrupt("deletion vector is {} bytes, too short for its magic", bytes.size());
  const uint32_t magic = LoadU32LE(bytes.data());
  std::string_view body = bytes.substr(4);
  if (magic == kPortableMagic) return puffin::DeserializeRoaring64Portable(body);
  if (magic != kNativeMagic) return Corrupt("deletion vector has unknown magic {}", magic);
  // Native: u32 count of 32-bit bitmaps, each a u32 size and a portable 32-bit bitmap covering the
  // values whose high word is its index. Rewrite it as the portable 64-bit layout (u64 count, then
  // key + bitmap per bucket), which the Puffin decoder validates.
  if (body.size() < 4) return Corrupt("native deletion vector is truncated before its bitmap count");
  const uint32_t count = LoadU32LE(body.data());
  size_t pos = 4;
  std::string portable(8, '\0');
  uint64_t n = count;
  std::memcpy(portable.data(), &n, 8);  // little-endian hosts only, as everywhere in lakesync
  for (uint32_t i = 0; i < count; ++i) {
    if (pos + 4 > body.size()) return Corrupt("native deletion vector is truncated at bitmap {}", i);
    const uint32_t size = LoadU32LE(body.data() + pos);
    pos += 4;
    if (pos + size > body.size()) return Corrupt("native deletion vector bitmap {} runs past the end", i);
    portable.append(reinterpret_cast<const char*>(&i), 4);
    portable.append(body.substr(pos, size));
    pos += size;
  }
  if (pos != body.size()) return Corrupt("native deletion vector has {} trailing bytes", body.size() - pos);
  return puffin::DeserializeRoaring64Portable(portable);
}

Result<puffin::PositionBitmap> LoadDeletionVector(const io::FileIO& io, const std::string& table_root,
                                                  const DeletionVectorDescriptor& dv) {
  if (dv.cardinality == 0) return puffin::PositionBitmap();  // as Spark: an empty DV is not read
  if (dv.storage_type == "i") {
    LS_ASSIGN_OR_RAISE_CTX(auto bytes, Z85Decode(dv.path_or_inline_dv), "inline deletion vector");
    if (dv.size_in_bytes < 4 || static_cast<size_t>(dv.size_in_bytes) > bytes.size()) {
      return Corrupt("inline deletion vector decodes to {} bytes, fewer than its sizeInBytes {}", bytes.size(),
                     dv.size_in_bytes);
    }
    bytes.resize(dv.size_in_bytes);  // encoders pad to a multiple of 4
    LS_ASSIGN_OR_RAISE_CTX(auto bitmap, DecodeDeletionVectorBitmap(bytes), "inline deletion vector");
    LS_RETURN_NOT_OK_CTX(CheckCardinality(bitmap, dv), "inline deletion vector");
    return bitmap;
  }
  ARROW_ASSIGN_OR_RAISE(auto location, DeletionVectorLocation(table_root, dv));
  int64_t offset = 1;
  if (dv.offset) {
    offset = *dv.offset;
  } else {
    LS_LOG_WARN("deletion vector in {} has no offset; reading at 1, the first DV of a version-1 file", location);
  }
  LS_ASSIGN_OR_RAISE_CTX(auto file, io.OpenInput(location), "reading deletion vector file {}", location);
  const int64_t blob_size = int64_t{dv.size_in_bytes} + 8;
  LS_ASSIGN_OR_RAISE_CTX(auto buffer, file->ReadAt(offset, blob_size), "reading deletion vector file {}", location);
  if (buffer->size() != blob_size) {
    return Corrupt("deletion vector file {} is truncated: {} bytes at offset {} wanted, {} there", location, blob_size,
                   offset, buffer->size());
  }
  std::string_view blob(reinterpret_cast<const char*>(buffer->data()), buffer->size());
  if (LoadU32LE(blob.data() + 4) == kNativeMagic) {
    // Same framing, native bitmap: check the framing here, decode the bitmap ourselves.
    ARROW_ASSIGN_OR_RAISE(auto bitmap, DecodeDeletionVectorBitmap(blob.substr(4, dv.size_in_bytes)));
    LS_RETURN_NOT_OK_CTX(CheckCardinality(bitmap, dv), "deletion vector file {} at offset {}", location, offset);
    return bitmap;
  }
  LS_ASSIGN_OR_RAISE_CTX(auto bitmap, puffin::DeserializeDeletionVector(blob, dv.cardinality),
                         "deletion vector file {} at offset {}", location, offset);
  return bitmap;
}

}  // namespace lakesync::delta
