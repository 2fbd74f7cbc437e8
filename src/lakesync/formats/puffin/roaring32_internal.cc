#include "lakesync/formats/puffin/roaring32_internal.h"

#include <roaring/roaring.h>

#include <bit>

#include "lakesync/formats/puffin/bytes_internal.h"
#include "lakesync/formats/puffin/positions_bitmap_internal.h"

namespace lakesync::puffin::internal {
namespace {

// Constants of the RoaringFormatSpec.
constexpr uint32_t kCookieNoRuns = 12346;
constexpr uint32_t kCookieWithRuns = 12347;
constexpr uint32_t kMaxContainers = 1u << 16;
constexpr uint32_t kNoOffsetThreshold = 4;  // run-cookie bitmaps with fewer containers omit offsets
constexpr uint32_t kMaxArrayCardinality = 4096;
constexpr size_t kBitsetBytes = 8192;

// A cursor that refuses to read past the end of the input.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  size_t position() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  const uint8_t* at(size_t offset) const { return Bytes(bytes_) + offset; }

  // Reserves n bytes for `what` and returns the offset where they start.
  Result<size_t> Take(size_t n, std::string_view what) {
    if (n > remaining()) {
      return Corrupt("32-bit Roaring bitmap truncated: {} needs {} bytes at offset {}, only {} remain", what, n,
                     pos_, remaining());
    }
    size_t start = pos_;
    pos_ += n;
    return start;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

struct ContainerHeader {
  uint16_t key;
  uint32_t cardinality;
  bool is_run;
};

Status ValidateArray(const Reader& r, size_t start, const ContainerHeader& h, size_t index) {
  int64_t previous = -1;
  for (uint32_t i = 0; i < h.cardinality; ++i) {
    const uint16_t value = LoadU16LE(r.at(start + 2 * i));
    if (static_cast<int64_t>(value) <= previous) {
      return Corrupt("32-bit Roaring bitmap: array container {} (key {}) is not strictly ascending at value {}",
                     index, h.key, i);
    }
    previous = value;
  }
  return Status::OK();
}

Status ValidateBitset(const Reader& r, size_t start, const ContainerHeader& h, size_t index) {
  uint64_t bits = 0;
  for (size_t i = 0; i < kBitsetBytes / 8; ++i) bits += std::popcount(LoadU64LE(r.at(start + 8 * i)));
  if (bits != h.cardinality) {
    return Corrupt("32-bit Roaring bitmap: bitset container {} (key {}) holds {} values but its header says {}",
                   index, h.key, bits, h.cardinality);
  }
  return Status::OK();
}

Status ValidateRuns(const Reader& r, size_t start, uint16_t n_runs, const ContainerHeader& h, size_t index) {
  uint64_t total = 0;
  int64_t previous_last = -1;
  for (uint32_t i = 0; i < n_runs; ++i) {
    const uint32_t run_start = LoadU16LE(r.at(start + 4 * i));
    const uint32_t length_minus_one = LoadU16LE(r.at(start + 4 * i + 2));
    const uint32_t run_last = run_start + length_minus_one;
    if (run_last > 0xFFFF) {
      return Corrupt("32-bit Roaring bitmap: run {} of container {} (key {}) runs past 65535 ({} + {})", i, index,
                     h.key, run_start, length_minus_one);
    }
    if (static_cast<int64_t>(run_start) <= previous_last) {
      return Corrupt("32-bit Roaring bitmap: run {} of container {} (key {}) starts at {}, overlapping or "
                     "before the previous run ending at {}",
                     i, index, h.key, run_start, previous_last);
    }
    previous_last = run_last;
    total += length_minus_one + 1;
  }
  if (total != h.cardinality) {
    return Corrupt("32-bit Roaring bitmap: run container {} (key {}) holds {} values but its header says {}",
                   index, h.key, total, h.cardinality);
  }
  return Status::OK();
}

}  // namespace

Result<size_t> ValidatePortableRoaring32(std::string_view bytes) {
  Reader r(bytes);
  ARROW_ASSIGN_OR_RAISE(size_t cookie_at, r.Take(4, "the cookie"));
  const uint32_t cookie = LoadU32LE(r.at(cookie_at));
  bool has_runs;
  uint32_t count;
  if (cookie == kCookieNoRuns) {
    has_runs = false;
    ARROW_ASSIGN_OR_RAISE(size_t count_at, r.Take(4, "the container count"));
    count = LoadU32LE(r.at(count_at));
    if (count > kMaxContainers) {
      return Corrupt("32-bit Roaring bitmap claims {} containers; at most {} are possible", count, kMaxContainers);
    }
  } else if ((cookie & 0xFFFF) == kCookieWithRuns) {
    has_runs = true;
    count = (cookie >> 16) + 1;
  } else {
    return Corrupt("32-bit Roaring bitmap has unknown cookie {} (0x{:08X}); expected {} or {} in the low 16 bits",
                   cookie, cookie, kCookieNoRuns, kCookieWithRuns);
  }

  size_t run_flags_at = 0;
  if (has_runs) {
    ARROW_ASSIGN_OR_RAISE(run_flags_at, r.Take((count + 7) / 8, "the run-container flags"));
  }
  ARROW_ASSIGN_OR_RAISE(size_t headers_at, r.Take(size_t{4} * count, "the key/cardinality headers"));
  const bool has_offsets = !has_runs || count >= kNoOffsetThreshold;
  size_t offsets_at = 0;
  if (has_offsets) {
    ARROW_ASSIGN_OR_RAISE(offsets_at, r.Take(size_t{4} * count, "the container offsets"));
  }

  int64_t previous_key = -1;
  for (uint32_t i = 0; i < count; ++i) {
    ContainerHeader h;
    h.key = LoadU16LE(r.at(headers_at + 4 * i));
    h.cardinality = static_cast<uint32_t>(LoadU16LE(r.at(headers_at + 4 * i + 2))) + 1;
    h.is_run = has_runs && ((*r.at(run_flags_at + i / 8) >> (i % 8)) & 1) != 0;
    if (static_cast<int64_t>(h.key) <= previous_key) {
      return Corrupt("32-bit Roaring bitmap: container {} has key {}, not above the previous key {}", i, h.key,
                     previous_key);
    }
    previous_key = h.key;
    if (has_offsets) {
      const uint32_t declared = LoadU32LE(r.at(offsets_at + 4 * i));
      if (declared != r.position()) {
        return Corrupt("32-bit Roaring bitmap: offset header says container {} starts at byte {}, but it starts "
                       "at byte {}",
                       i, declared, r.position());
      }
    }
    if (h.is_run) {
      ARROW_ASSIGN_OR_RAISE(size_t n_at, r.Take(2, "a run container's run count"));
      const uint16_t n_runs = LoadU16LE(r.at(n_at));
      ARROW_ASSIGN_OR_RAISE(size_t runs_at, r.Take(size_t{4} * n_runs, "a run container's runs"));
      ARROW_RETURN_NOT_OK(ValidateRuns(r, runs_at, n_runs, h, i));
    } else if (h.cardinality > kMaxArrayCardinality) {
      ARROW_ASSIGN_OR_RAISE(size_t bits_at, r.Take(kBitsetBytes, "a bitset container"));
      ARROW_RETURN_NOT_OK(ValidateBitset(r, bits_at, h, i));
    } else {
      ARROW_ASSIGN_OR_RAISE(size_t values_at, r.Take(size_t{2} * h.cardinality, "an array container"));
      ARROW_RETURN_NOT_OK(ValidateArray(r, values_at, h, i));
    }
  }
  return r.position();
}

Result<RoaringBitmapPtr> ReadPortableRoaring32(std::string_view bytes, size_t* consumed) {
  ARROW_ASSIGN_OR_RAISE(size_t size, ValidatePortableRoaring32(bytes));
  // The input is known to be well formed and exactly `size` bytes long, so the library reads no
  // further than we checked.
  roaring_bitmap_t* bitmap = roaring_bitmap_portable_deserialize_safe(bytes.data(), size);
  if (bitmap == nullptr) {
    return Corrupt("CRoaring rejected a 32-bit Roaring bitmap of {} bytes that passed validation", size);
  }
  RoaringBitmapPtr owned(bitmap);
  *consumed = size;
  return owned;
}

}  // namespace lakesync::puffin::internal
