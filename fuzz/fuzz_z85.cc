// Z85 (Delta's inline deletion vectors and DV ids): decode; what decodes must encode back to the
// same text.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "lakesync/delta/z85.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto decoded = lakesync::delta::Z85Decode(text);
  if (decoded.ok()) {
    auto encoded = lakesync::delta::Z85Encode(*decoded);
    if (!encoded.ok() || *encoded != text) std::abort();
  }
  (void)lakesync::delta::Z85Encode(text);
  return 0;
}
