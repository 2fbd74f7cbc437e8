// Framing pieces of the Avro object container format shared by the file reader and writer: the
// magic, the sync marker size and zig-zag varints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lakesync::avro::internal {

inline constexpr std::string_view kAvroMagic{"Obj\x01", 4};
inline constexpr size_t kSyncSize = 16;

inline void AppendVarLong(std::string* out, int64_t v) {
  uint64_t n = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  while (n & ~uint64_t{0x7F}) {
    out->push_back(static_cast<char>((n & 0x7F) | 0x80));
    n >>= 7;
  }
  out->push_back(static_cast<char>(n));
}

inline void AppendAvroBytes(std::string* out, std::string_view bytes) {
  AppendVarLong(out, static_cast<int64_t>(bytes.size()));
  out->append(bytes);
}

// A bounds-checked cursor over a byte buffer.
class ByteCursor {
 public:
  explicit ByteCursor(std::string_view data) : data_(data) {}

  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }

  // A zig-zag varint of at most 10 bytes; nullopt when truncated or overlong.
  std::optional<int64_t> ReadVarLong() {
    uint64_t v = 0;
    for (int i = 0; i < 10; ++i) {
      if (pos_ >= data_.size()) return std::nullopt;
      const auto b = static_cast<unsigned char>(data_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7F) << (7 * i);
      if ((b & 0x80) == 0) return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
    }
    return std::nullopt;
  }

  std::optional<std::string_view> ReadBytes(size_t n) {
    if (n > remaining()) return std::nullopt;
    std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }

  // An Avro bytes/string value: a length varint and that many bytes.
  std::optional<std::string_view> ReadLengthPrefixed() {
    auto n = ReadVarLong();
    if (!n || *n < 0) return std::nullopt;
    return ReadBytes(static_cast<size_t>(*n));
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace lakesync::avro::internal
