#include "lakesync/delta/z85.h"

#include <array>
#include <cstdint>

namespace lakesync::delta {
namespace {

constexpr std::string_view kAlphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

constexpr std::array<int8_t, 256> MakeDecodeTable() {
  std::array<int8_t, 256> table{};
  for (auto& v : table) v = -1;
  for (size_t i = 0; i < kAlphabet.size(); ++i) table[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  return table;
}
constexpr auto kDecode = MakeDecodeTable();

}  // namespace

Result<std::string> Z85Decode(std::string_view text) {
  if (text.size() % 5 != 0) {
    return Corrupt("Z85 text has {} characters, not a multiple of 5", text.size());
  }
  std::string out;
  out.reserve(text.size() / 5 * 4);
  for (size_t i = 0; i < text.size(); i += 5) {
    // A group cannot start with '#' (84 * 85^4 > 2^32). The Rust z85 crate (3.x, used by
    // delta-kernel-rs and the tables it writes) marks a short last group that way: k leading '#'
    // mean the tail holds 4 - k bytes, big-endian in the remaining 5 - k digits.
    size_t pad = 0;
    if (i + 5 == text.size()) {
      while (pad < 4 && text[i + pad] == '#') ++pad;
    }
    uint64_t word = 0;
    for (size_t j = pad; j < 5; ++j) {
      const int8_t digit = kDecode[static_cast<uint8_t>(text[i + j])];
      if (digit < 0) return Corrupt("Z85 text has an invalid character '{}' at position {}", text[i + j], i + j);
      word = word * 85 + static_cast<uint64_t>(digit);
    }
    if (pad > 0) {
      const size_t bytes = 4 - pad;
      if (bytes == 0 || word >> (8 * bytes) != 0) return Corrupt("Z85 text has a malformed padded tail at position {}", i);
      for (size_t b = bytes; b-- > 0;) out.push_back(static_cast<char>((word >> (8 * b)) & 0xFF));
      continue;
    }
    // Otherwise a group over 32 bits keeps its low 32 bits, as Delta's Java decoders do.
    word &= 0xFFFFFFFFu;
    out.push_back(static_cast<char>((word >> 24) & 0xFF));
    out.push_back(static_cast<char>((word >> 16) & 0xFF));
    out.push_back(static_cast<char>((word >> 8) & 0xFF));
    out.push_back(static_cast<char>(word & 0xFF));
  }
  return out;
}

Result<std::string> Z85Encode(std::string_view bytes) {
  if (bytes.size() % 4 != 0) return InvalidArgument("Z85 input has {} bytes, not a multiple of 4", bytes.size());
  std::string out;
  out.reserve(bytes.size() / 4 * 5);
  for (size_t i = 0; i < bytes.size(); i += 4) {
    uint32_t word = 0;
    for (size_t j = 0; j < 4; ++j) word = (word << 8) | static_cast<uint8_t>(bytes[i + j]);
    char group[5];
    for (int j = 4; j >= 0; --j) {
      group[j] = kAlphabet[word % 85];
      word /= 85;
    }
    out.append(group, 5);
  }
  return out;
}

}  // namespace lakesync::delta
