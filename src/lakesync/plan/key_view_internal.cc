#include "lakesync/plan/key_view_internal.h"

#include <arrow/api.h>
#include <arrow/extension_type.h>

#include <cstring>

namespace lakesync::plan::internal {
namespace {

inline uint64_t Mix(uint64_t z) {
  // splitmix64's finalizer: every input bit affects every output bit.
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline uint64_t Load(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  std::memcpy(&v, p, n);
  return v;
}

uint64_t HashBytes(const uint8_t* p, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
  while (n >= 8) {
    h = Mix(h ^ Load(p, 8));
    p += 8;
    n -= 8;
  }
  if (n > 0) h = Mix(h ^ Load(p, n) ^ (uint64_t{n} << 56));
  return h;
}

bool IsFloating(arrow::Type::type id) {
  return id == arrow::Type::HALF_FLOAT || id == arrow::Type::FLOAT || id == arrow::Type::DOUBLE;
}

bool IsAcceptedKeyType(arrow::Type::type id) {
  switch (id) {
    case arrow::Type::BOOL:
    case arrow::Type::INT8: case arrow::Type::INT16: case arrow::Type::INT32: case arrow::Type::INT64:
    case arrow::Type::UINT8: case arrow::Type::UINT16: case arrow::Type::UINT32: case arrow::Type::UINT64:
    case arrow::Type::DATE32: case arrow::Type::DATE64:
    case arrow::Type::TIME32: case arrow::Type::TIME64:
    case arrow::Type::TIMESTAMP: case arrow::Type::DURATION:
    case arrow::Type::DECIMAL32: case arrow::Type::DECIMAL64:
    case arrow::Type::DECIMAL128: case arrow::Type::DECIMAL256:
    case arrow::Type::FIXED_SIZE_BINARY:
    case arrow::Type::STRING: case arrow::Type::BINARY:
    case arrow::Type::LARGE_STRING: case arrow::Type::LARGE_BINARY:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::shared_ptr<arrow::Array> StorageArray(std::shared_ptr<arrow::Array> array) {
  while (array->type_id() == arrow::Type::EXTENSION) {
    array = std::static_pointer_cast<arrow::ExtensionArray>(array)->storage();
  }
  return array;
}

std::shared_ptr<arrow::DataType> StorageType(std::shared_ptr<arrow::DataType> type) {
  while (type->id() == arrow::Type::EXTENSION) {
    type = std::static_pointer_cast<arrow::ExtensionType>(type)->storage_type();
  }
  return type;
}

Status CheckKeyType(const std::string& column, const std::shared_ptr<arrow::DataType>& type) {
  // Dictionary columns are decoded before grouping; extension columns are grouped by their storage.
  auto storage = type;
  if (storage->id() == arrow::Type::DICTIONARY) {
    storage = std::static_pointer_cast<arrow::DictionaryType>(storage)->value_type();
  }
  storage = StorageType(storage);
  if (IsFloating(storage->id())) {
    return InvalidArgument("equality column '{}' has type {}: floating-point columns cannot be equality "
                           "(identifier) columns", column, type->ToString());
  }
  if (!IsAcceptedKeyType(storage->id())) {
    return InvalidArgument("equality column '{}' has type {}, which is not supported as an equality key "
                           "(use a primitive type: integer, boolean, date, time, timestamp, decimal, string, "
                           "binary or fixed)", column, type->ToString());
  }
  return Status::OK();
}

Result<KeyView> KeyView::Make(const std::vector<std::shared_ptr<arrow::Array>>& columns) {
  KeyView view;
  for (const auto& original : columns) {
    auto array = StorageArray(original);
    const auto& data = *array->data();
    if (view.columns_.empty()) {
      view.length_ = data.length;
    } else if (data.length != view.length_) {
      return Status::Invalid("key columns of different lengths");
    }
    Column c{};
    c.offset = data.offset;
    const auto id = data.type->id();
    if (!IsAcceptedKeyType(id)) return Unsupported("key type {} cannot be grouped", data.type->ToString());
    if (id == arrow::Type::BOOL) {
      c.layout = Layout::kBit;
      c.data = data.buffers[1]->data();
    } else if (id == arrow::Type::STRING || id == arrow::Type::BINARY) {
      c.layout = Layout::kBinary32;
      c.offsets32 = data.GetValues<int32_t>(1, 0);
      c.data = data.buffers[2] ? data.buffers[2]->data() : nullptr;
    } else if (id == arrow::Type::LARGE_STRING || id == arrow::Type::LARGE_BINARY) {
      c.layout = Layout::kBinary64;
      c.offsets64 = data.GetValues<int64_t>(1, 0);
      c.data = data.buffers[2] ? data.buffers[2]->data() : nullptr;
    } else {
      c.layout = Layout::kFixed;
      c.width = static_cast<int32_t>(std::static_pointer_cast<arrow::FixedWidthType>(data.type)->byte_width());
      c.data = data.buffers[1]->data();
    }
    view.columns_.push_back(c);
  }
  return view;
}

bool KeyView::Equal(int64_t i, int64_t j) const {
  for (const Column& c : columns_) {
    const int64_t a = c.offset + i;
    const int64_t b = c.offset + j;
    switch (c.layout) {
      case Layout::kFixed:
        if (c.width == 8) {
          if (Load(c.data + a * 8, 8) != Load(c.data + b * 8, 8)) return false;
        } else if (std::memcmp(c.data + a * c.width, c.data + b * c.width, c.width) != 0) {
          return false;
        }
        break;
      case Layout::kBit:
        if (arrow::bit_util::GetBit(c.data, a) != arrow::bit_util::GetBit(c.data, b)) return false;
        break;
      case Layout::kBinary32: {
        const int32_t la = c.offsets32[a + 1] - c.offsets32[a];
        const int32_t lb = c.offsets32[b + 1] - c.offsets32[b];
        if (la != lb || (la > 0 && std::memcmp(c.data + c.offsets32[a], c.data + c.offsets32[b], la) != 0)) {
          return false;
        }
        break;
      }
      case Layout::kBinary64: {
        const int64_t la = c.offsets64[a + 1] - c.offsets64[a];
        const int64_t lb = c.offsets64[b + 1] - c.offsets64[b];
        if (la != lb || (la > 0 && std::memcmp(c.data + c.offsets64[a], c.data + c.offsets64[b], la) != 0)) {
          return false;
        }
        break;
      }
    }
  }
  return true;
}

std::vector<uint64_t> KeyView::HashRows(uint64_t seed) const {
  std::vector<uint64_t> out(static_cast<size_t>(length_), Mix(seed));
  for (const Column& c : columns_) {
    for (int64_t i = 0; i < length_; ++i) {
      const int64_t r = c.offset + i;
      uint64_t h;
      switch (c.layout) {
        case Layout::kFixed:
          h = c.width <= 8 ? Mix(Load(c.data + r * c.width, c.width) + c.width)
                           : HashBytes(c.data + r * c.width, c.width);
          break;
        case Layout::kBit:
          h = Mix(arrow::bit_util::GetBit(c.data, r) ? 0x51ULL : 0x17ULL);
          break;
        case Layout::kBinary32:
          h = HashBytes(c.data + c.offsets32[r], static_cast<size_t>(c.offsets32[r + 1] - c.offsets32[r]));
          break;
        case Layout::kBinary64:
        default:
          h = HashBytes(c.data + c.offsets64[r], static_cast<size_t>(c.offsets64[r + 1] - c.offsets64[r]));
          break;
      }
      out[i] = Mix(out[i] ^ h) + 0x632be59bd9b4e019ULL;
    }
  }
  return out;
}

}  // namespace lakesync::plan::internal
