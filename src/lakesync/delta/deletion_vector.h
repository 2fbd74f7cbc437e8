// Delta deletion vectors (PROTOCOL.md "Deletion Vectors"): where a descriptor's bitmap lives and how
// to read it. Inline DVs ('i') hold Z85 of magic + bitmap; on-disk DVs ('u': a UUID-derived file
// under the table root, 'p': an absolute path) sit in a file at `offset` framed as
//   u32 BE dataSize | u32 LE magic 1681511377 | portable 64-bit roaring bitmap | u32 BE CRC-32,
// which is byte for byte Iceberg's deletion-vector-v1 blob framing, so the Puffin module decodes it.
// The bitmap may also use Delta's "native" serialization (magic 1681511376), which is read too.
#pragma once

#include <string>

#include "lakesync/delta/actions.h"
#include "lakesync/formats/puffin/positions_bitmap.h"
#include "lakesync/io/file_io.h"

namespace lakesync::delta {

// The file holding an on-disk DV: for 'u', <table>/<prefix>/deletion_vector_<uuid>.bin with the UUID
// Z85-decoded from the last 20 characters; for 'p', the percent-decoded absolute URI.
// Returns Corrupt for a malformed descriptor and InvalidArgument for an inline one.
Result<std::string> DeletionVectorLocation(const std::string& table_root, const DeletionVectorDescriptor& dv);

// Decodes serialized bitmap bytes that start with one of the two magics (magic included).
// Returns Corrupt naming the problem.
Result<puffin::PositionBitmap> DecodeDeletionVectorBitmap(std::string_view bytes);

// Reads the DV's row positions, checking size, checksum and cardinality. Errors name the DV file
// (or "inline deletion vector") and carry NotFound for a missing file and Corrupt for bad content.
Result<puffin::PositionBitmap> LoadDeletionVector(const io::FileIO& io, const std::string& table_root,
                                                  const DeletionVectorDescriptor& dv);

}  // namespace lakesync::delta
