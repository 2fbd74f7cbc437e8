#include "lakesync/formats/puffin/bytes_internal.h"

#include <arrow/util/crc32.h>
#include <fmt/format.h>

namespace lakesync::puffin::internal {

std::string HexBytes(std::string_view bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i > 0) out.push_back(' ');
    out += fmt::format("{:02X}", static_cast<uint8_t>(bytes[i]));
  }
  return out;
}

uint32_t Crc32(std::string_view bytes) {
  // Arrow exports the zlib-compatible CRC-32 it uses for Parquet page checksums; using it keeps the
  // module free of a second zlib next to the copy bundled inside libarrow. The Python oracle test
  // checks every CRC we write against zlib.crc32.
  return arrow::internal::crc32(0, bytes.data(), bytes.size());
}

}  // namespace lakesync::puffin::internal
