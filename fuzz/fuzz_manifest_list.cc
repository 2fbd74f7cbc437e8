// Manifest list Avro files (iceberg/manifest).
#include <cstdint>
#include <string_view>

#include "lakesync/iceberg/manifest/manifest_list.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)lakesync::iceberg::ReadManifestList(std::string_view(reinterpret_cast<const char*>(data), size),
                                            "fuzz-snap.avro");
  return 0;
}
