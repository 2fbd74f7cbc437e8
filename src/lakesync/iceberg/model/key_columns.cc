#include "lakesync/iceberg/model/key_columns.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/extension_type.h>
#include <arrow/scalar.h>
#include <arrow/type.h>
#include <arrow/util/bit_util.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace lakesync::iceberg {
namespace {

using Layout = KeyColumns::Layout;
using Column = KeyColumns::Column;

inline uint64_t Mix(uint64_t z) {
  // splitmix64's finaliser: every input bit affects every output bit.
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline uint64_t Load(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  std::memcpy(&v, p, n);
  return v;
}

uint64_t HashBytes(const uint8_t* p, size_t n, uint64_t seed) {
  uint64_t h = seed ^ (0x9e3779b97f4a7c15ULL * (n + 1));
  while (n >= 8) {
    h = Mix(h ^ Load(p, 8));
    p += 8;
    n -= 8;
  }
  if (n > 0) h = Mix(h ^ Load(p, n) ^ (uint64_t{n} << 56));
  return h;
}

constexpr uint64_t kNullWord = 0x6A09E667F3BCC908ULL;
constexpr uint64_t kSeedA = 0x243F6A8885A308D3ULL;
constexpr uint64_t kSeedB = 0x13198A2E03707344ULL;

std::shared_ptr<arrow::Array> Storage(std::shared_ptr<arrow::Array> array) {
  while (array->type_id() == arrow::Type::EXTENSION) {
    array = std::static_pointer_cast<arrow::ExtensionArray>(array)->storage();
  }
  return array;
}

inline bool NullAt(const Column& c, int64_t row) {
  return c.validity != nullptr && !arrow::bit_util::GetBit(c.validity, c.offset + row);
}

// The canonical bits of a float or double (one NaN pattern).
inline uint64_t FloatWord(const Column& c, int64_t r) {
  if (c.layout == Layout::kFloat) {
    float v;
    std::memcpy(&v, c.data + r * 4, 4);
    if (std::isnan(v)) v = std::numeric_limits<float>::quiet_NaN();
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return bits;
  }
  double v;
  std::memcpy(&v, c.data + r * 8, 8);
  if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  return bits;
}

std::string_view BytesAt(const Column& c, int64_t row) {
  const int64_t r = c.offset + row;
  switch (c.layout) {
    case Layout::kBinary32:
      return {reinterpret_cast<const char*>(c.data) + c.offsets32[r], static_cast<size_t>(c.offsets32[r + 1] - c.offsets32[r])};
    case Layout::kBinary64:
      return {reinterpret_cast<const char*>(c.data) + c.offsets64[r], static_cast<size_t>(c.offsets64[r + 1] - c.offsets64[r])};
    case Layout::kView:
      return static_cast<const arrow::BinaryViewArray&>(*c.array).GetView(row);
    default:
      return {};
  }
}

// The text form of a value of a type without a direct encoding (nested, dictionary).
std::string TextAt(const Column& c, int64_t row) {
  const arrow::Array& a = *c.array;
  if (a.type_id() == arrow::Type::DICTIONARY) {
    const auto& dict = static_cast<const arrow::DictionaryArray&>(a);
    auto scalar = dict.dictionary()->GetScalar(dict.GetValueIndex(row));
    return scalar.ok() ? (*scalar)->ToString() : std::string();
  }
  auto scalar = a.GetScalar(row);
  return scalar.ok() ? (*scalar)->ToString() : std::string();
}

// One 64-bit lane of the hash of a non-null value.
inline uint64_t ValueHash(const Column& c, int64_t row, uint64_t seed) {
  const int64_t r = c.offset + row;
  switch (c.layout) {
    case Layout::kFixed:
      return c.width <= 8 ? Mix(Load(c.data + r * c.width, static_cast<size_t>(c.width)) + seed + c.width)
                          : HashBytes(c.data + r * c.width, static_cast<size_t>(c.width), seed);
    case Layout::kFloat:
    case Layout::kDouble:
      return Mix(FloatWord(c, r) + seed);
    case Layout::kBit:
      return Mix((arrow::bit_util::GetBit(c.data, r) ? 0x51ULL : 0x17ULL) + seed);
    case Layout::kBinary32:
    case Layout::kBinary64:
    case Layout::kView: {
      const auto v = BytesAt(c, row);
      return HashBytes(reinterpret_cast<const uint8_t*>(v.data()), v.size(), seed);
    }
    case Layout::kOther:
    default: {
      const std::string text = TextAt(c, row);
      return HashBytes(reinterpret_cast<const uint8_t*>(text.data()), text.size(), seed ^ 0x5bd1e995ULL);
    }
  }
}

}  // namespace

Result<KeyColumns> KeyColumns::Make(std::vector<std::shared_ptr<arrow::Array>> arrays) {
  KeyColumns view;
  for (size_t k = 0; k < arrays.size(); ++k) {
    auto array = Storage(arrays[k]);
    const auto& data = *array->data();
    if (k == 0) {
      view.length_ = data.length;
    } else if (data.length != view.length_) {
      return InvalidArgument("key columns of different lengths ({} and {})", view.length_, data.length);
    }
    Column c;
    c.array = array;
    c.offset = data.offset;
    if (array->null_count() > 0 && !data.buffers.empty() && data.buffers[0]) c.validity = data.buffers[0]->data();
    switch (data.type->id()) {
      case arrow::Type::BOOL:
        c.layout = Layout::kBit;
        c.data = data.buffers[1] ? data.buffers[1]->data() : nullptr;
        break;
      case arrow::Type::FLOAT:
        c.layout = Layout::kFloat;
        c.data = data.buffers[1] ? data.buffers[1]->data() : nullptr;
        break;
      case arrow::Type::DOUBLE:
        c.layout = Layout::kDouble;
        c.data = data.buffers[1] ? data.buffers[1]->data() : nullptr;
        break;
      case arrow::Type::STRING:
      case arrow::Type::BINARY:
        c.layout = Layout::kBinary32;
        c.offsets32 = data.GetValues<int32_t>(1, 0);
        c.data = data.buffers[2] ? data.buffers[2]->data() : nullptr;
        break;
      case arrow::Type::LARGE_STRING:
      case arrow::Type::LARGE_BINARY:
        c.layout = Layout::kBinary64;
        c.offsets64 = data.GetValues<int64_t>(1, 0);
        c.data = data.buffers[2] ? data.buffers[2]->data() : nullptr;
        break;
      case arrow::Type::STRING_VIEW:
      case arrow::Type::BINARY_VIEW:
        c.layout = Layout::kView;
        break;
      case arrow::Type::NA:
        c.layout = Layout::kOther;
        c.validity = nullptr;
        break;
      default: {
        const auto* fixed = dynamic_cast<const arrow::FixedWidthType*>(data.type.get());
        if (fixed != nullptr && data.type->id() != arrow::Type::DICTIONARY && fixed->bit_width() % 8 == 0 &&
            data.buffers.size() == 2 && data.buffers[1]) {
          c.layout = Layout::kFixed;
          c.width = fixed->bit_width() / 8;
          c.data = data.buffers[1]->data();
        } else {
          c.layout = Layout::kOther;
        }
        break;
      }
    }
    view.columns_.push_back(std::move(c));
  }
  if (view.columns_.size() == 1) {
    const Column& c = view.columns_[0];
    view.single_word_ = (c.layout == Layout::kFixed && c.width <= 8) || c.layout == Layout::kFloat ||
                        c.layout == Layout::kDouble || c.layout == Layout::kBit;
  }
  return view;
}

bool KeyColumns::IsNull(int64_t row) const {
  if (columns_.size() != 1) return false;
  const Column& c = columns_[0];
  return c.layout == Layout::kOther ? c.array->IsNull(row) : NullAt(c, row);
}

uint64_t KeyColumns::Word(int64_t row) const {
  const Column& c = columns_[0];
  const int64_t r = c.offset + row;
  switch (c.layout) {
    case Layout::kFloat:
    case Layout::kDouble: return FloatWord(c, r);
    case Layout::kBit: return arrow::bit_util::GetBit(c.data, r) ? 1 : 0;
    default: return Load(c.data + r * c.width, static_cast<size_t>(c.width));
  }
}

void KeyColumns::Words(int64_t begin, int64_t count, uint64_t* out) const {
  const Column& c = columns_[0];
  const int64_t r0 = c.offset + begin;
  switch (c.layout) {
    case Layout::kFloat:
    case Layout::kDouble:
      for (int64_t i = 0; i < count; ++i) out[i] = FloatWord(c, r0 + i);
      return;
    case Layout::kBit:
      for (int64_t i = 0; i < count; ++i) out[i] = arrow::bit_util::GetBit(c.data, r0 + i) ? 1 : 0;
      return;
    default:
      break;
  }
  // Fixed width of at most 8 bytes, zero-extended as Load does; a constant width per loop lets the
  // compiler turn each load into one move.
  const uint8_t* p = c.data + r0 * c.width;
  switch (c.width) {
    case 8: std::memcpy(out, p, static_cast<size_t>(count) * 8); return;
    case 4: for (int64_t i = 0; i < count; ++i) out[i] = Load(p + i * 4, 4); return;
    case 2: for (int64_t i = 0; i < count; ++i) out[i] = Load(p + i * 2, 2); return;
    case 1: for (int64_t i = 0; i < count; ++i) out[i] = p[i]; return;
    default:
      for (int64_t i = 0; i < count; ++i) out[i] = Load(p + i * c.width, static_cast<size_t>(c.width));
      return;
  }
}

bool KeyColumns::may_have_nulls() const {
  if (columns_.size() != 1) return false;
  const Column& c = columns_[0];
  return c.layout == Layout::kOther ? c.array->null_count() > 0 : c.validity != nullptr;
}

bool KeyColumns::Equal(int64_t i, int64_t j) const {
  for (const Column& c : columns_) {
    if (c.layout == Layout::kOther) {
      const bool ni = c.array->IsNull(i), nj = c.array->IsNull(j);
      if (ni != nj) return false;
      if (!ni && TextAt(c, i) != TextAt(c, j)) return false;
      continue;
    }
    const bool ni = NullAt(c, i), nj = NullAt(c, j);
    if (ni || nj) {
      if (ni != nj) return false;
      continue;
    }
    const int64_t a = c.offset + i;
    const int64_t b = c.offset + j;
    switch (c.layout) {
      case Layout::kFixed:
        if (c.width == 8) {
          if (Load(c.data + a * 8, 8) != Load(c.data + b * 8, 8)) return false;
        } else if (std::memcmp(c.data + a * c.width, c.data + b * c.width, static_cast<size_t>(c.width)) != 0) {
          return false;
        }
        break;
      case Layout::kFloat:
      case Layout::kDouble:
        if (FloatWord(c, a) != FloatWord(c, b)) return false;
        break;
      case Layout::kBit:
        if (arrow::bit_util::GetBit(c.data, a) != arrow::bit_util::GetBit(c.data, b)) return false;
        break;
      default:
        if (BytesAt(c, i) != BytesAt(c, j)) return false;
        break;
    }
  }
  return true;
}

void KeyColumns::AppendKey(int64_t row, std::string& out) const {
  for (const Column& c : columns_) {
    const bool null = c.layout == Layout::kOther ? c.array->IsNull(row) : NullAt(c, row);
    if (null) {
      out.push_back('\0');
      continue;
    }
    out.push_back('\1');
    const int64_t r = c.offset + row;
    switch (c.layout) {
      case Layout::kFixed:
        out.append(reinterpret_cast<const char*>(c.data + r * c.width), static_cast<size_t>(c.width));
        break;
      case Layout::kFloat: {
        const auto bits = static_cast<uint32_t>(FloatWord(c, r));
        out.append(reinterpret_cast<const char*>(&bits), 4);
        break;
      }
      case Layout::kDouble: {
        const uint64_t bits = FloatWord(c, r);
        out.append(reinterpret_cast<const char*>(&bits), 8);
        break;
      }
      case Layout::kBit:
        out.push_back(arrow::bit_util::GetBit(c.data, r) ? '\1' : '\0');
        break;
      case Layout::kBinary32:
      case Layout::kBinary64:
      case Layout::kView: {
        const auto v = BytesAt(c, row);
        const auto size = static_cast<uint32_t>(v.size());
        out.append(reinterpret_cast<const char*>(&size), sizeof(size));
        out.append(v.data(), v.size());
        break;
      }
      case Layout::kOther: {
        const std::string text = TextAt(c, row);
        const auto size = static_cast<uint32_t>(text.size());
        out.append(reinterpret_cast<const char*>(&size), sizeof(size));
        out.append(text);
        break;
      }
    }
  }
}

std::vector<uint64_t> KeyColumns::HashRows(uint64_t seed) const {
  std::vector<uint64_t> out(static_cast<size_t>(length_), Mix(seed));
  const uint64_t lane = Mix(seed ^ kSeedA);
  for (const Column& c : columns_) {
    const bool nulls = c.layout == Layout::kOther ? c.array->null_count() > 0 : c.validity != nullptr;
    for (int64_t i = 0; i < length_; ++i) {
      const bool null = nulls && (c.layout == Layout::kOther ? c.array->IsNull(i) : NullAt(c, i));
      const uint64_t h = null ? kNullWord : ValueHash(c, i, lane);
      out[static_cast<size_t>(i)] = Mix(out[static_cast<size_t>(i)] ^ h) + 0x632be59bd9b4e019ULL;
    }
  }
  return out;
}

namespace {

// The two 64-bit lanes of one value's contribution to a 128-bit row hash.
struct Lanes {
  uint64_t a, b;
};

// A null: two different words, which no value of at most 8 bytes gives (their lanes are equal).
constexpr Lanes kNullLanes{kNullWord, kNullWord ^ kSeedB};

// Both lanes of a byte string in one pass over it, a word at a time: two independent multiply
// chains that the CPU overlaps, where hashing the bytes once per lane walked them twice. The lanes
// differ in algebra (xor / add) as well as seed, so bytes that collide in one lane do not in the other.
inline Lanes BytesLanes(const uint8_t* p, size_t n) {
  const uint64_t length = 0x9e3779b97f4a7c15ULL * (n + 1);
  uint64_t a = kSeedA ^ length, b = kSeedB + length;
  while (n >= 8) {
    const uint64_t w = Load(p, 8);
    a = Mix(a ^ w);
    b = Mix(b + w);
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    const uint64_t w = Load(p, n) ^ (uint64_t{n} << 56);
    a = Mix(a ^ w);
    b = Mix(b + w);
  }
  return {a, b};
}

// Folds one column into the row hashes: `lanes(row)` for the non-null rows, kNullLanes for the
// rows `is_null(row)` says. The two lanes are folded by two different bijections, so a value of at
// most 8 bytes enters both as its word, unmixed: distinct words stay distinct in each lane, and
// the lanes' different folds keep them independent across columns.
template <typename IsNull, typename ValueLanes>
void FoldColumn(int64_t length, bool nulls, IsNull is_null, ValueLanes lanes, std::vector<Hash128>& out) {
  for (int64_t i = 0; i < length; ++i) {
    const Lanes v = nulls && is_null(i) ? kNullLanes : lanes(i);
    Hash128& h = out[static_cast<size_t>(i)];
    h.a = Mix((h.a ^ v.a) * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL);
    h.b = Mix((h.b ^ v.b) * 0xC2B2AE3D27D4EB4FULL + 0x165667B19E3779F9ULL);
  }
}

}  // namespace

// One pass per column with its layout chosen once (not per row), one hash computation per value for
// both lanes: the changelog hashes every changed row and key this way (docs/benchmarks.md).
void KeyColumns::HashRows128(std::vector<Hash128>& out) const {
  out.assign(static_cast<size_t>(length_), Hash128{kSeedA, kSeedB});
  FoldRows128(out);
}

void KeyColumns::FoldRows128(std::vector<Hash128>& out) const {
  for (const Column& c : columns_) {
    const int64_t base = c.offset;
    const bool nulls = c.layout == Layout::kOther ? c.array->null_count() > 0 : c.validity != nullptr;
    auto null_at = [&c](int64_t i) { return NullAt(c, i); };
    auto word = [](uint64_t w) { return Lanes{w, w}; };
    auto bytes = [&c](int64_t i) {
      const auto v = BytesAt(c, i);
      return BytesLanes(reinterpret_cast<const uint8_t*>(v.data()), v.size());
    };
    switch (c.layout) {
      case Layout::kFixed:
        if (c.width == 8) {
          FoldColumn(length_, nulls, null_at, [&](int64_t i) { return word(Load(c.data + (base + i) * 8, 8)); }, out);
        } else if (c.width == 4) {
          FoldColumn(length_, nulls, null_at, [&](int64_t i) { return word(Load(c.data + (base + i) * 4, 4)); }, out);
        } else if (c.width < 8) {
          const auto width = static_cast<size_t>(c.width);
          FoldColumn(length_, nulls, null_at, [&](int64_t i) { return word(Load(c.data + (base + i) * c.width, width)); },
                     out);
        } else {
          const auto width = static_cast<size_t>(c.width);
          FoldColumn(length_, nulls, null_at, [&](int64_t i) { return BytesLanes(c.data + (base + i) * c.width, width); },
                     out);
        }
        break;
      case Layout::kFloat:
      case Layout::kDouble:
        FoldColumn(length_, nulls, null_at, [&](int64_t i) { return word(FloatWord(c, base + i)); }, out);
        break;
      case Layout::kBit:
        FoldColumn(length_, nulls, null_at,
                   [&](int64_t i) { return word(arrow::bit_util::GetBit(c.data, base + i) ? 1 : 0); }, out);
        break;
      case Layout::kBinary32:
      case Layout::kBinary64:
      case Layout::kView:
        FoldColumn(length_, nulls, null_at, bytes, out);
        break;
      case Layout::kOther:
      default:
        FoldColumn(
            length_, nulls, [&c](int64_t i) { return c.array->IsNull(i); },
            [&c](int64_t i) {
              const std::string text = TextAt(c, i);
              return BytesLanes(reinterpret_cast<const uint8_t*>(text.data()), text.size());
            },
            out);
        break;
    }
  }
}

namespace {

// MurmurHash3's 64-bit finaliser: consecutive keys (ids) spread over a whole open-addressing table.
inline uint64_t SpreadWord(uint64_t word) {
  word ^= word >> 33;
  word *= 0xff51afd7ed558ccdULL;
  word ^= word >> 33;
  word *= 0xc4ceb9fe1a85ec53ULL;
  word ^= word >> 33;
  return word;
}

// Marks an empty slot of KeySet's word table; a key with this word is kept apart.
constexpr uint64_t kEmptyWord = 0x9E3779B97F4A7C15ULL;
// The range of single-word keys, read both as unsigned and as signed (offset by 2^63) numbers: a range
// of negative and positive keys is small only in the second reading.
struct WordRange {
  static constexpr uint64_t kSign = uint64_t{1} << 63;
  bool any = false;
  uint64_t umin = ~uint64_t{0}, umax = 0, smin = ~uint64_t{0}, smax = 0;

  void Add(uint64_t w) {
    any = true;
    umin = std::min(umin, w);
    umax = std::max(umax, w);
    smin = std::min(smin, w ^ kSign);
    smax = std::max(smax, w ^ kSign);
  }
  bool signed_range() const { return smax - smin < umax - umin; }
  // Entries are indexed by word - base() in [0, span()] (unsigned arithmetic).
  uint64_t base() const { return signed_range() ? smin ^ kSign : umin; }
  uint64_t span() const { return signed_range() ? smax - smin : umax - umin; }
};

// The density rule of single-word key structures (KeySet's bit vector, KeySequenceMap's rank array):
// an array over the keys' whole range, `entry_bits` an entry, is used while it takes no more memory
// than the keys' open-addressing table would (`table_bits_per_key`: slot size × 2, tables are at most
// half full), or while it is at most 8 KiB whatever the number of keys.
constexpr uint64_t kSmallDenseBits = uint64_t{1} << 16;
bool DenseRangeFits(const WordRange& range, uint64_t keys, uint64_t entry_bits, uint64_t table_bits_per_key) {
  if (!range.any) return false;
  const uint64_t span = range.span();
  if (span == ~uint64_t{0}) return false;
  const uint64_t entries = span + 1;
  const uint64_t budget_bits = keys > (~uint64_t{0} / table_bits_per_key) ? ~uint64_t{0} : keys * table_bits_per_key;
  const uint64_t limit = std::max(kSmallDenseBits, budget_bits) / entry_bits;
  return entries <= limit;
}
// KeySet's word table: 8-byte slots; KeySequenceMap's: 16-byte {word, number} slots.
constexpr uint64_t kKeySetTableBitsPerKey = 2 * 64;
constexpr uint64_t kSequenceTableBitsPerKey = 2 * 128;

}  // namespace

KeySet::KeySet() = default;
KeySet::KeySet(KeySet&&) noexcept = default;
KeySet& KeySet::operator=(KeySet&&) noexcept = default;
KeySet::~KeySet() = default;

Result<KeySet> KeySet::Make(const KeyColumns& keys) {
  KeySet set;
  const int64_t n = keys.length();
  if (!keys.single_word()) {
    set.representation_ = Representation::kEncoded;
    set.encoded_ =
        std::make_unique<arrow::internal::BinaryMemoTable<arrow::BinaryBuilder>>(arrow::default_memory_pool(), n);
    std::string key;
    int32_t index = -1;
    for (int64_t i = 0; i < n; ++i) {
      key.clear();
      keys.AppendKey(i, key);
      ARROW_RETURN_NOT_OK(set.encoded_->GetOrInsert(std::string_view(key), &index));
    }
    set.size_ = static_cast<size_t>(set.encoded_->size());
    set.index_space_ = set.encoded_->size();
    return set;
  }
  WordRange range;
  bool has_null = false;
  const bool nulls = keys.may_have_nulls();
  keys.ForEachWordBlock([&](int64_t begin, int64_t count, const uint64_t* words) {
    for (int64_t i = 0; i < count; ++i) {
      if (nulls && keys.IsNull(begin + i)) {
        has_null = true;
        continue;
      }
      range.Add(words[i]);
    }
  });
  int64_t next_index = 0;
  if (range.any) {
    if (DenseRangeFits(range, static_cast<uint64_t>(n), 1, kKeySetTableBitsPerKey)) {
      const uint64_t span = range.span();
      set.representation_ = Representation::kBitmap;
      set.base_ = range.base();
      set.span_ = span;
      set.bits_.assign(static_cast<size_t>(span / 64 + 1), 0);
      keys.ForEachWordBlock([&](int64_t begin, int64_t count, const uint64_t* words) {
        for (int64_t i = 0; i < count; ++i) {
          if (nulls && keys.IsNull(begin + i)) continue;
          const uint64_t d = words[i] - set.base_;
          uint64_t& bits = set.bits_[static_cast<size_t>(d / 64)];
          const uint64_t bit = uint64_t{1} << (d % 64);
          set.size_ += (bits & bit) == 0 ? 1 : 0;
          bits |= bit;
        }
      });
      next_index = static_cast<int64_t>(span) + 1;
    } else {
      set.representation_ = Representation::kWordTable;
      size_t slots = 1024;
      while (slots < 2 * static_cast<size_t>(n)) slots *= 2;
      set.slots_.assign(slots, kEmptyWord);
      const size_t mask = slots - 1;
      keys.ForEachWordBlock([&](int64_t begin, int64_t count, const uint64_t* words) {
        for (int64_t i = 0; i < count; ++i) {
          if (nulls && keys.IsNull(begin + i)) continue;
          const uint64_t w = words[i];
          if (w == kEmptyWord) {
            set.empty_word_index_ = 0;  // numbered below
            continue;
          }
          size_t at = static_cast<size_t>(SpreadWord(w)) & mask;
          while (set.slots_[at] != kEmptyWord && set.slots_[at] != w) at = (at + 1) & mask;
          if (set.slots_[at] == kEmptyWord) {
            set.slots_[at] = w;
            ++set.size_;
          }
        }
      });
      next_index = static_cast<int64_t>(slots);
      if (set.empty_word_index_ != kAbsent) {
        set.empty_word_index_ = next_index++;
        ++set.size_;
      }
    }
  } else {
    set.representation_ = Representation::kWordTable;  // no words: every non-null probe misses
  }
  if (has_null) {
    set.null_index_ = next_index++;
    ++set.size_;
  }
  set.index_space_ = next_index;
  return set;
}

int64_t KeySet::FindWord(uint64_t word) const {
  if (representation_ == Representation::kBitmap) {
    const uint64_t d = word - base_;
    if (d > span_) return kAbsent;
    return (bits_[static_cast<size_t>(d / 64)] >> (d % 64)) & 1 ? static_cast<int64_t>(d) : kAbsent;
  }
  if (word == kEmptyWord) return empty_word_index_;
  if (slots_.empty()) return kAbsent;
  const size_t mask = slots_.size() - 1;
  for (size_t i = static_cast<size_t>(SpreadWord(word)) & mask;; i = (i + 1) & mask) {
    const uint64_t slot = slots_[i];
    if (slot == word) return static_cast<int64_t>(i);
    if (slot == kEmptyWord) return kAbsent;
  }
}

int64_t KeySet::Find(const KeyColumns& keys, int64_t row) const {
  if (representation_ != Representation::kEncoded) {
    if (keys.IsNull(row)) return null_index_;
    return FindWord(keys.Word(row));
  }
  if (encoded_->size() == 0) return kAbsent;
  // One buffer per thread: probes are per row and must not allocate.
  thread_local std::string key;
  key.clear();
  keys.AppendKey(row, key);
  const int32_t index = encoded_->Get(std::string_view(key));
  return index < 0 ? kAbsent : index;
}

namespace {

// The probe loop of KeySet::FindAll and KeySequenceMap::FindAll over single-word keys: the words a block
// at a time (KeyColumns::ForEachWordBlock) and out[row] = find(word), or `null_result` for a null row.
// A probe of a large hash table is a cache miss: with `prefetch`, the slot (slot_of(word)) is prefetched
// kAhead rows before its probe, overlapping them. A null row's word is undefined: prefetched
// harmlessly, never used.
template <typename SlotOf, typename Find>
void ProbeWords(const KeyColumns& keys, bool prefetch, SlotOf slot_of, int64_t null_result, Find find,
                int64_t* out) {
  constexpr int64_t kAhead = 16;
  const bool nulls = keys.may_have_nulls();
  keys.ForEachWordBlock([&](int64_t begin, int64_t count, const uint64_t* words) {
    int64_t* block_out = out + begin;
    if (prefetch) {
      for (int64_t i = 0; i < std::min(count, kAhead); ++i) __builtin_prefetch(slot_of(words[i]));
    }
    for (int64_t i = 0; i < count; ++i) {
      if (prefetch && i + kAhead < count) __builtin_prefetch(slot_of(words[i + kAhead]));
      block_out[i] = nulls && keys.IsNull(begin + i) ? null_result : find(words[i]);
    }
  });
}

}  // namespace

void KeySet::FindAll(const KeyColumns& keys, std::vector<int64_t>& out) const {
  const int64_t n = keys.length();
  out.resize(static_cast<size_t>(n));
  if (representation_ == Representation::kEncoded) {
    for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = Find(keys, i);
    return;
  }
  // Single-word keys: the words are loaded a block at a time, not through Find's per-row calls, which
  // were most of key resolution's probing.
  const bool table = representation_ == Representation::kWordTable && !slots_.empty();
  const size_t mask = table ? slots_.size() - 1 : 0;
  ProbeWords(
      keys, table, [&](uint64_t w) { return &slots_[static_cast<size_t>(SpreadWord(w)) & mask]; }, null_index_,
      [this](uint64_t w) { return FindWord(w); }, out.data());
}

KeySequenceMap::KeySequenceMap()
    : encoded_(std::make_unique<arrow::internal::BinaryMemoTable<arrow::BinaryBuilder>>(
          arrow::default_memory_pool())) {}
KeySequenceMap::KeySequenceMap(KeySequenceMap&&) noexcept = default;
KeySequenceMap& KeySequenceMap::operator=(KeySequenceMap&&) noexcept = default;
KeySequenceMap::~KeySequenceMap() = default;

uint64_t KeySequenceMap::SlotHash(uint64_t word) { return SpreadWord(word); }

void KeySequenceMap::ReserveWords(size_t n) { pending_words_.reserve(n); }

void KeySequenceMap::GrowWords() {
  std::vector<WordSlot> old;
  old.swap(words_);
  words_.resize(std::max<size_t>(1024, old.size() * 2));
  word_count_ = 0;
  for (const auto& slot : old) {
    if (slot.sequence != kAbsent) InsertWord(slot.word, slot.sequence);
  }
}

void KeySequenceMap::InsertWord(uint64_t word, int64_t sequence_number) {
  if ((word_count_ + 1) * 2 > words_.size()) GrowWords();
  const size_t mask = words_.size() - 1;
  size_t i = static_cast<size_t>(SlotHash(word)) & mask;
  while (words_[i].sequence != kAbsent && words_[i].word != word) i = (i + 1) & mask;
  if (words_[i].sequence == kAbsent) {
    words_[i].word = word;
    ++word_count_;
  }
  words_[i].sequence = std::max(words_[i].sequence, sequence_number);
}

Status KeySequenceMap::Insert(const KeyColumns& keys, int64_t sequence_number) {
  if (representation_ != Representation::kUnsealed) {
    return Status::Invalid("KeySequenceMap: Insert after Seal");
  }
  const int64_t n = keys.length();
  if (keys.single_word()) {
    if (pending_runs_.empty() || pending_runs_.back().sequence != sequence_number) {
      pending_runs_.push_back(PendingRun{pending_words_.size(), sequence_number});
    }
    const bool nulls = keys.may_have_nulls();
    keys.ForEachWordBlock([&](int64_t begin, int64_t count, const uint64_t* words) {
      if (!nulls) {
        pending_words_.insert(pending_words_.end(), words, words + count);
        return;
      }
      for (int64_t i = 0; i < count; ++i) {
        if (keys.IsNull(begin + i)) {  // kept apart from the words: a null matches only a null
          null_sequence_ = std::max(null_sequence_, sequence_number);
        } else {
          pending_words_.push_back(words[i]);
        }
      }
    });
    return Status::OK();
  }
  any_encoded_ = true;
  std::string key;
  int32_t index = -1;
  for (int64_t i = 0; i < n; ++i) {
    key.clear();
    keys.AppendKey(i, key);
    ARROW_RETURN_NOT_OK(encoded_->GetOrInsert(std::string_view(key), &index));
    // Memo indexes are handed out 0, 1, ... in insertion order.
    const auto at = static_cast<size_t>(index);
    if (at == sequences_.size()) {
      sequences_.push_back(sequence_number);
    } else {
      sequences_[at] = std::max(sequences_[at], sequence_number);
    }
  }
  return Status::OK();
}

template <typename Rank>
void KeySequenceMap::BuildRanks(std::vector<Rank>& ranks) {
  ranks.assign(static_cast<size_t>(span_) + 1, 0);
  for (size_t r = 0; r < pending_runs_.size(); ++r) {
    const PendingRun& run = pending_runs_[r];
    const size_t end = r + 1 < pending_runs_.size() ? pending_runs_[r + 1].begin : pending_words_.size();
    // Ranks are 1-based positions in the sorted distinct numbers: the higher rank is the higher number.
    const auto rank = static_cast<Rank>(
        std::lower_bound(sequence_by_rank_.begin(), sequence_by_rank_.end(), run.sequence) -
        sequence_by_rank_.begin() + 1);
    for (size_t i = run.begin; i < end; ++i) {
      Rank& entry = ranks[static_cast<size_t>(pending_words_[i] - base_)];
      word_count_ += entry == 0 ? 1 : 0;
      entry = std::max(entry, rank);
    }
  }
}

void KeySequenceMap::Seal() {
  if (representation_ != Representation::kUnsealed) return;
  if (any_encoded_) {
    representation_ = Representation::kEncoded;
  } else {
    WordRange range;
    for (uint64_t w : pending_words_) range.Add(w);
    for (const PendingRun& run : pending_runs_) sequence_by_rank_.push_back(run.sequence);
    std::sort(sequence_by_rank_.begin(), sequence_by_rank_.end());
    sequence_by_rank_.erase(std::unique(sequence_by_rank_.begin(), sequence_by_rank_.end()), sequence_by_rank_.end());
    const bool small_ranks = sequence_by_rank_.size() <= std::numeric_limits<uint8_t>::max();
    const bool fits_ranks = sequence_by_rank_.size() <= std::numeric_limits<uint16_t>::max();
    const uint64_t entry_bits = small_ranks ? 8 : 16;
    word_count_ = 0;
    if (fits_ranks && DenseRangeFits(range, pending_words_.size(), entry_bits, kSequenceTableBitsPerKey)) {
      representation_ = Representation::kDenseRanks;
      base_ = range.base();
      span_ = range.span();
      if (small_ranks) {
        BuildRanks(ranks8_);
      } else {
        BuildRanks(ranks16_);
      }
    } else {
      representation_ = Representation::kWordTable;
      sequence_by_rank_.clear();
      // Sized once for every collected word (fewer when words repeat): never regrown.
      size_t slots = 1024;
      while (slots < 2 * pending_words_.size()) slots *= 2;
      words_.assign(slots, WordSlot{});
      for (size_t r = 0; r < pending_runs_.size(); ++r) {
        const size_t end = r + 1 < pending_runs_.size() ? pending_runs_[r + 1].begin : pending_words_.size();
        for (size_t i = pending_runs_[r].begin; i < end; ++i) InsertWord(pending_words_[i], pending_runs_[r].sequence);
      }
    }
  }
  std::vector<uint64_t>().swap(pending_words_);
  std::vector<PendingRun>().swap(pending_runs_);
}

int64_t KeySequenceMap::FindWord(uint64_t word) const {
  if (representation_ == Representation::kDenseRanks) {
    const uint64_t d = word - base_;
    if (d > span_) return kAbsent;
    const size_t at = static_cast<size_t>(d);
    const unsigned rank = ranks8_.empty() ? ranks16_[at] : ranks8_[at];
    return rank == 0 ? kAbsent : sequence_by_rank_[rank - 1];
  }
  if (word_count_ == 0) return kAbsent;
  const size_t mask = words_.size() - 1;
  for (size_t i = static_cast<size_t>(SlotHash(word)) & mask;; i = (i + 1) & mask) {
    const WordSlot& slot = words_[i];
    if (slot.sequence == kAbsent) return kAbsent;
    if (slot.word == word) return slot.sequence;
  }
}

int64_t KeySequenceMap::Find(const KeyColumns& keys, int64_t row) const {
  if (keys.single_word()) {
    if (keys.IsNull(row)) return null_sequence_;
    if (representation_ == Representation::kEncoded) return kAbsent;  // no single-word key was inserted
    return FindWord(keys.Word(row));
  }
  if (sequences_.empty()) return kAbsent;
  // One buffer per thread: probes are per row and must not allocate.
  thread_local std::string key;
  key.clear();
  keys.AppendKey(row, key);
  const int32_t index = encoded_->Get(std::string_view(key));
  return index < 0 ? kAbsent : sequences_[static_cast<size_t>(index)];
}

void KeySequenceMap::FindAll(const KeyColumns& keys, std::vector<int64_t>& out) const {
  const int64_t n = keys.length();
  out.resize(static_cast<size_t>(n));
  if (!keys.single_word() || representation_ == Representation::kEncoded) {
    for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = Find(keys, i);
    return;
  }
  const bool table = representation_ == Representation::kWordTable && word_count_ > 0;
  const size_t mask = table ? words_.size() - 1 : 0;
  ProbeWords(
      keys, table, [&](uint64_t w) { return &words_[static_cast<size_t>(SlotHash(w)) & mask]; }, null_sequence_,
      [this](uint64_t w) { return FindWord(w); }, out.data());
}

}  // namespace lakesync::iceberg
