#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include "lakesync/common/text.h"
#include "lakesync/sink/sink_config_internal.h"

namespace lakesync::sink::internal {

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string Describe(const Json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  const char* kind = value.is_string()    ? "string"
                     : value.is_boolean() ? "boolean"
                     : value.is_number()  ? "number"
                     : value.is_array()   ? "list"
                     : value.is_object()  ? "map"
                                          : "null";
  return value.is_null() ? "null" : fmt::format("{} {}", kind, text);
}

// ---- decoding one JSON value per key type; messages name the key ----

Result<std::string> DecodeString(std::string_view key, const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  const bool scalar = value.is_number() || value.is_boolean();
  return InvalidArgument("{} must be a string, got {}{}", key, Describe(value),
                         scalar ? " (quote it in YAML: the text must be kept as written)" : "");
}

Result<bool> DecodeBool(std::string_view key, const Json& value) {
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_string()) {
    const std::string v = AsciiLower(value.get<std::string>());
    if (v == "true") return true;
    if (v == "false") return false;
  }
  return InvalidArgument("{} must be a boolean (true or false), got {}", key, Describe(value));
}

Result<int32_t> DecodeInt32(std::string_view key, const Json& value) {
  int64_t v = 0;
  bool whole = false;
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      return InvalidArgument("{} is out of range for a 32-bit integer: {}", key, u);
    }
    v = static_cast<int64_t>(u);
    whole = true;
  } else if (value.is_number_integer()) {
    v = value.get<int64_t>();
    whole = true;
  } else if (value.is_string()) {
    const std::string s = value.get<std::string>();
    const char* begin = s.data() + (StartsWith(s, "+") ? 1 : 0);
    const char* end = s.data() + s.size();
    auto [ptr, ec] = std::from_chars(begin, end, v);
    if (begin != end && ptr == end) {
      if (ec == std::errc::result_out_of_range) {
        return InvalidArgument("{} is out of range for a 32-bit integer: {}", key, s);
      }
      whole = ec == std::errc();
    }
  }
  if (!whole) return InvalidArgument("{} must be an integer, got {}", key, Describe(value));
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("{} is out of range for a 32-bit integer: {}", key, v);
  }
  return static_cast<int32_t>(v);
}

Result<StringList> DecodeStringList(std::string_view key, const Json& value) {
  if (!value.is_array()) {
    if (value.is_string()) {
      return InvalidArgument("{} must be a list of strings, got {} (write [{}])", key, Describe(value),
                             value.get<std::string>());
    }
    return InvalidArgument("{} must be a list of strings, got {}", key, Describe(value));
  }
  StringList out;
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& item = value[i];
    if (!item.is_string()) {
      return InvalidArgument("{} must be a list of strings, but entry {} is {}", key, i + 1, Describe(item));
    }
    std::string text = item.get<std::string>();
    if (text.empty()) return InvalidArgument("{}: entry {} is empty", key, i + 1);
    if (std::find(out.begin(), out.end(), text) != out.end()) {
      return InvalidArgument("{} lists '{}' twice", key, text);
    }
    out.push_back(std::move(text));
  }
  return out;
}

// A map value as text. Numbers and booleans keep their JSON spelling (`format-version: 2` → "2").
Result<std::string> DecodeMapValue(std::string_view key, std::string_view name, const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number() || value.is_boolean()) return value.dump();
  return InvalidArgument("{}.{} must be a single value (string, number or boolean), got {}", key, name,
                         Describe(value));
}

Result<StringMap> DecodeStringMap(std::string_view key, const Json& value) {
  if (!value.is_object()) return InvalidArgument("{} must be a map of names to values, got {}", key, Describe(value));
  StringMap out;
  for (const auto& [name, item] : value.items()) {
    if (name.empty()) return InvalidArgument("{} has an entry with an empty name", key);
    ARROW_ASSIGN_OR_RAISE(out[name], DecodeMapValue(key, name, item));
  }
  return out;
}

Result<ErrorHandling> DecodeErrorHandling(std::string_view key, const Json& value) {
  if (!value.is_object()) {
    return InvalidArgument("{} must be a map {{output: <dead-letter file location>}}, got {}", key, Describe(value));
  }
  ErrorHandling out;
  bool has_output = false;
  for (const auto& [name, item] : value.items()) {
    if (name != kKeyErrorHandlingOutput) {
      return InvalidArgument("{}: unknown key '{}' (the only key is {})", key, name, kKeyErrorHandlingOutput);
    }
    if (item.is_null()) continue;
    ARROW_ASSIGN_OR_RAISE(out.output, DecodeString(fmt::format("{}.{}", key, name), item));
    has_output = true;
  }
  if (!has_output) return InvalidArgument("{}.{} is required: the location of the dead-letter file", key, kKeyErrorHandlingOutput);
  return out;
}

Result<WriteMode> ParseMode(const std::string& text) {
  const std::string v = AsciiLower(text);
  if (v == "append") return WriteMode::kAppend;
  if (v == "merge-on-read") return WriteMode::kMergeOnRead;
  // Beam's message, word for word.
  return InvalidArgument("Unknown mode '{}'; expected 'append' or 'merge-on-read'.", text);
}

Result<DeleteStrategy> ParseDeleteStrategy(std::string_view key, const std::string& text) {
  const std::string v = AsciiLower(text);
  if (v == "position") return DeleteStrategy::kPosition;
  if (v == "equality") return DeleteStrategy::kEquality;
  return InvalidArgument("{} must be 'position' or 'equality', got '{}'", key, text);
}

// ---- per-key value checks ----

Status AtLeast(std::string_view key, int64_t value, int64_t minimum) {
  if (value < minimum) return InvalidArgument("{} must be at least {}, got {}", key, minimum, value);
  return Status::OK();
}

Status NotEmpty(std::string_view key, const std::string& value) {
  if (value.empty()) return InvalidArgument("{} must not be empty", key);
  return Status::OK();
}

Status CheckSinkId(std::string_view key, const std::string& id) {
  if (id.empty()) return InvalidArgument("{} must not be empty (omit it to run without a stable sink identity)", key);
  if (id.size() > kMaxSinkIdLength) {
    return InvalidArgument("{} is {} characters long; at most {} are allowed", key, id.size(), kMaxSinkIdLength);
  }
  for (size_t i = 0; i < id.size(); ++i) {
    const unsigned char c = id[i];
    if (!(std::isalnum(c) && c < 0x80) && c != '_' && c != '-' && c != '.') {
      return InvalidArgument("{} '{}' has the character '{}' at position {}; a sink id is part of snapshot summary "
                             "keys and may use only {}",
                             key, id, id.substr(i, 1), i, kSinkIdCharacters);
    }
  }
  return Status::OK();
}

Status CheckSnapshotProperties(std::string_view key, const StringMap& properties) {
  for (const auto& [name, value] : properties) {
    for (std::string_view prefix : {kReservedSummaryPrefixLakesync, kReservedSummaryPrefixBeam}) {
      if (StartsWith(AsciiLower(name), prefix)) {
        return InvalidArgument("{}: '{}' uses the reserved prefix '{}', which belongs to the sinks' exactly-once "
                               "bookkeeping",
                               key, name, prefix);
      }
    }
  }
  return Status::OK();
}

Status CheckEqualityColumns(std::string_view key, const StringList& columns) {
  for (const auto& column : columns) {
    if (column.find('.') != std::string::npos) {
      return InvalidArgument("{}: '{}' is a nested field; equality columns must be top-level columns", key, column);
    }
  }
  return Status::OK();
}

Json ToJson(const StringList& list) { return Json(list); }
Json ToJson(const StringMap& map) {
  Json out = Json::object();
  for (const auto& [k, v] : map) out[k] = v;
  return out;
}

}  // namespace lakesync::sink::internal
