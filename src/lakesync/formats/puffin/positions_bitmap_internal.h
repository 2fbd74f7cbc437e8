// Bucket-level access to PositionBitmap for the codecs in this module (not for other modules).
#pragma once

#include <roaring/roaring.h>

#include <cstdint>
#include <map>

#include "lakesync/formats/puffin/positions_bitmap.h"

namespace lakesync::puffin::internal {

// CRoaring reports allocation failure with a null pointer; these turn that into std::bad_alloc, the
// same way the standard containers around them fail.
RoaringBitmapPtr NewRoaringBitmap();
RoaringBitmapPtr CopyRoaringBitmap(const roaring_bitmap_t* bitmap);

struct PositionBitmapAccess {
  static const std::map<uint32_t, RoaringBitmapPtr>& Buckets(const PositionBitmap& bitmap) {
    return bitmap.buckets_;
  }
  // Stores bitmap as the bucket for key, replacing any bucket there; an empty bitmap is dropped so
  // the no-empty-buckets invariant holds.
  static void PutBucket(PositionBitmap& target, uint32_t key, RoaringBitmapPtr bitmap) {
    if (roaring_bitmap_is_empty(bitmap.get())) {
      target.buckets_.erase(key);
      return;
    }
    target.buckets_[key] = std::move(bitmap);
  }
};

}  // namespace lakesync::puffin::internal
