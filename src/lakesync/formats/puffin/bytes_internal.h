// Fixed-width integer encoding and CRC-32 shared by the Roaring, deletion-vector and Puffin codecs.
// Puffin and Roaring use little-endian fields; the deletion-vector framing uses big-endian length and
// CRC fields (for compatibility with Delta), so both directions live here side by side.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace lakesync::puffin::internal {

inline uint16_t LoadU16LE(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
inline uint32_t LoadU32LE(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
inline uint64_t LoadU64LE(const uint8_t* p) {
  return static_cast<uint64_t>(LoadU32LE(p)) | (static_cast<uint64_t>(LoadU32LE(p + 4)) << 32);
}
inline uint32_t LoadU32BE(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (static_cast<uint32_t>(p[1]) << 16) |
         (static_cast<uint32_t>(p[2]) << 8) | static_cast<uint32_t>(p[3]);
}

inline void AppendU32LE(std::string* out, uint32_t v) {
  char b[4] = {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
               static_cast<char>(v >> 24)};
  out->append(b, 4);
}
inline void AppendU64LE(std::string* out, uint64_t v) {
  AppendU32LE(out, static_cast<uint32_t>(v));
  AppendU32LE(out, static_cast<uint32_t>(v >> 32));
}
inline void AppendU32BE(std::string* out, uint32_t v) {
  char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
               static_cast<char>(v)};
  out->append(b, 4);
}

inline const uint8_t* Bytes(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// Space-separated upper-case hex of a few bytes, for error messages ("D1 D3 39 64").
std::string HexBytes(std::string_view bytes);

// CRC-32 as zlib and java.util.zip.CRC32 compute it (polynomial 0x04C11DB7, reflected).
uint32_t Crc32(std::string_view bytes);

}  // namespace lakesync::puffin::internal
