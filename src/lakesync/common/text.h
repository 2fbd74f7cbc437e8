#pragma once
// Small text rules the whole engine shares, so that "case-insensitive" means the same everywhere.

#include <string>
#include <string_view>

namespace lakesync {

// `text` with ASCII letters A-Z lowered and every other byte kept: configuration keys, codec and
// transform names, HTTP schemes and protocol words are ASCII, and lowering bytes one by one would
// corrupt multi-byte UTF-8 under a non-"C" locale.
inline std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// `text` without the ASCII white space (space, \t, \n, \v, \f, \r) at either end.
inline std::string_view TrimSpace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

}  // namespace lakesync
