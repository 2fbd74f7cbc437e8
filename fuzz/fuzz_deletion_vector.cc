// Deletion vector payloads: Iceberg's deletion-vector-v1 blob (length, magic, portable Roaring64,
// CRC), the bare portable Roaring64 layout, and Delta's DV bitmap encoding. Whatever decodes must
// encode and decode again to the same positions.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "lakesync/delta/deletion_vector.h"
#include "lakesync/formats/puffin/deletion_vector.h"
#include "lakesync/formats/puffin/roaring64_portable.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lakesync;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto dv = puffin::DeserializeDeletionVector(bytes);
  if (dv.ok()) {
    auto encoded = puffin::SerializeDeletionVector(*dv);
    if (!encoded.ok()) std::abort();
    auto back = puffin::DeserializeDeletionVector(*encoded);
    if (!back.ok() || back->Cardinality() != dv->Cardinality()) std::abort();
  }
  (void)puffin::DeserializeRoaring64Portable(bytes);
  (void)delta::DecodeDeletionVectorBitmap(bytes);
  return 0;
}
