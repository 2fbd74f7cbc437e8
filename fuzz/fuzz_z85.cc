// Z85 (Delta's inline deletion vectors and DV ids): decode; what decodes must encode to a text that
// decodes to the same bytes. (Not to the same text: groups above 2^32 keep their low 32 bits, as
// Delta's Java decoders do, and '#'-padded tails have several spellings.)
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "lakesync/delta/z85.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto decoded = lakesync::delta::Z85Decode(text);
  if (decoded.ok() && decoded->size() % 4 == 0) {
    auto encoded = lakesync::delta::Z85Encode(*decoded);
    if (!encoded.ok()) std::abort();
    auto again = lakesync::delta::Z85Decode(*encoded);
    if (!again.ok() || *again != *decoded) std::abort();
  }
  (void)lakesync::delta::Z85Encode(text);
  return 0;
}
