// One JSON text parsed into a small tree that keeps every number as it was written, so that longs
// beyond 2^53 and decimals with many digits convert exactly (a double would round them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::tabular {

struct JsonNode {
  enum class Kind : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };

  Kind kind = Kind::kNull;
  bool boolean = false;
  // A number's text as written ("12.50", "-0.0", "1e-7"), or a string's (unescaped) value.
  std::string text;
  // Array elements, or object member values in the order written.
  std::vector<JsonNode> items;
  // Object member names, parallel to `items`.
  std::vector<std::string> keys;
};

// Arrays and objects nested deeper than this are rejected: the tree is walked recursively.
inline constexpr int kMaxJsonDepth = 512;

// Parses one complete JSON text (surrounding whitespace allowed, nothing else after the value).
// Errors: InvalidArgument "malformed JSON at character N: <what the parser expected>", or for
// nesting deeper than kMaxJsonDepth.
Status ParseJson(std::string_view text, JsonNode* out);

// "null", "true or false", "a number", "a string", "an array", "an object".
std::string_view JsonKindName(JsonNode::Kind kind);

// The node as compact JSON, cut to about `max_chars` characters (for error messages).
std::string JsonSnippet(const JsonNode& node, size_t max_chars = 60);

}  // namespace lakesync::tabular
