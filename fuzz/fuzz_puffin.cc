// Puffin files (formats/puffin): open the footer, read every blob, decode deletion vectors through
// the footer's own description and check each against the footer as a manifest entry would.
#include <cstdint>
#include <string>

#include "lakesync/formats/puffin/deletion_vector.h"
#include "lakesync/formats/puffin/deletion_vector_file.h"
#include "lakesync/formats/puffin/puffin_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lakesync::puffin;
  PuffinReaderOptions options;
  options.max_footer_payload_size = 1 << 20;
  options.max_blob_size = 1 << 22;
  auto reader = PuffinReader::OpenBytes(std::string(reinterpret_cast<const char*>(data), size), options);
  if (!reader.ok()) return 0;
  for (size_t i = 0; i < (*reader)->blobs().size() && i < 64; ++i) {
    const BlobMetadata& blob = (*reader)->blobs()[i];
    (void)(*reader)->ReadBlob(i);
    if (blob.type == kDeletionVectorBlobType) {
      (void)ReadDeletionVectorBlob(**reader, blob);
      auto named = blob.properties.find(std::string(kReferencedDataFileProperty));
      (void)CheckDeletionVectorAgainstFooter((*reader)->metadata(), "fuzz.puffin", blob.offset, blob.length,
                                             named == blob.properties.end() ? "" : named->second);
    }
  }
  return 0;
}
