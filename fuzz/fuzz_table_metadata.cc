// Table metadata JSON (iceberg/model): parse; whatever parses must serialize and parse again to the
// same document (a writer that cannot read back what it wrote would corrupt tables).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "lakesync/iceberg/model/json_serde.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lakesync::iceberg;
  auto parsed = ParseTableMetadata(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok()) return 0;
  const std::string text = SerializeTableMetadata(**parsed);
  auto again = ParseTableMetadata(text);
  if (!again.ok() || SerializeTableMetadata(**again) != text) std::abort();
  return 0;
}
