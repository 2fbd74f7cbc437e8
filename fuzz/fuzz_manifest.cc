// Manifest Avro files (iceberg/manifest): read every entry of arbitrary bytes as a v1-v3 manifest,
// with the counts check on and off.
#include <cstdint>
#include <string_view>

#include "lakesync/iceberg/manifest/manifest_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lakesync::iceberg;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ManifestFile manifest;
  manifest.manifest_path = "fuzz-m0.avro";
  manifest.manifest_length = static_cast<int64_t>(size);
  manifest.sequence_number = 7;
  manifest.added_snapshot_id = 42;
  manifest.counts_unknown = (size % 2) == 0;
  manifest.added_files_count = 1;
  manifest.added_rows_count = 3;
  (void)ReadManifest(bytes, manifest);
  return 0;
}
