// Safe reading of one 32-bit Roaring bitmap in the portable format (RoaringFormatSpec), the part of
// the 64-bit portable layout that carries the actual positions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lakesync/common/status.h"
#include "lakesync/formats/puffin/positions_bitmap.h"

namespace lakesync::puffin::internal {

// Checks that bytes start with a well-formed portable 32-bit Roaring bitmap and returns how many bytes
// it occupies. "Well-formed" is more than CRoaring 0.2.66's *_safe reader checks: that one only keeps
// its reads in bounds, while malformed containers (unsorted arrays, overlapping runs, runs past 65535,
// cardinalities that disagree with the content) would later corrupt memory inside CRoaring's set
// operations. We check the container count, ascending keys, the offset header, each container's
// bounds, order and declared cardinality.
// Returns Corrupt describing the first problem; byte offsets in messages are relative to bytes.
Result<size_t> ValidatePortableRoaring32(std::string_view bytes);

// Validates and then deserializes the bitmap at the start of bytes; *consumed receives its size.
// Returns Corrupt as ValidatePortableRoaring32 does.
Result<RoaringBitmapPtr> ReadPortableRoaring32(std::string_view bytes, size_t* consumed);

}  // namespace lakesync::puffin::internal
