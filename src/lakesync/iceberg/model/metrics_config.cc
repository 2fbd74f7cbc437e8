#include "lakesync/iceberg/model/metrics_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <vector>

#include "lakesync/common/text.h"

namespace lakesync::iceberg {
namespace {

// Collects the ids of a field and everything nested in it.
void CollectIds(const iceberg::NestedField& field, std::vector<int32_t>& out) {
  out.push_back(field.id);
  for (const auto& child : field.type->fields()) CollectIds(child, out);
}

// Decodes the UTF-8 code point starting at s[i]; returns its byte length (1 for malformed bytes).
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t& cp) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 1;
  if (i + n > s.size()) n = 1;
  if (n == 1) {
    cp = c;
    return 1;
  }
  cp = c & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
  return n;
}

void EncodeUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

}  // namespace

Result<MetricsMode> MetricsMode::Parse(std::string_view text) {
  const std::string t = AsciiLower(TrimSpace(text));
  if (t == "none") return None();
  if (t == "counts") return Counts();
  if (t == "full") return Full();
  if (t.size() > 10 && t.rfind("truncate(", 0) == 0 && t.back() == ')') {
    const std::string digits = t.substr(9, t.size() - 10);
    int64_t n = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec == std::errc() && ptr == digits.data() + digits.size() && n >= 1 && n <= INT32_MAX) {
      return Truncate(static_cast<int32_t>(n));
    }
  }
  return InvalidArgument("'{}' is not a metrics mode; expected none, counts, full or truncate(N) with N >= 1", text);
}

std::string MetricsMode::ToString() const {
  switch (kind) {
    case Kind::kNone: return "none";
    case Kind::kCounts: return "counts";
    case Kind::kFull: return "full";
    case Kind::kTruncate: return "truncate(" + std::to_string(length) + ")";
  }
  return "none";
}

Result<MetricsConfig> MetricsConfig::Make(const std::map<std::string, std::string>& properties,
                                          const iceberg::Schema& schema) {
  MetricsConfig config;
  if (auto it = properties.find(kMetricsDefaultProperty); it != properties.end()) {
    LS_ASSIGN_OR_RAISE_CTX(config.default_mode_, MetricsMode::Parse(it->second), "table property {}",
                           kMetricsDefaultProperty);
  } else {
    int64_t limit = kMetricsMaxInferredColumnDefaultsDefault;
    if (auto lit = properties.find(kMetricsMaxInferredColumnDefaultsProperty); lit != properties.end()) {
      const std::string& v = lit->second;
      auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), limit);
      if (ec != std::errc() || ptr != v.data() + v.size() || limit < 0) {
        return InvalidArgument("table property {} must be a non-negative integer, got '{}'",
                               kMetricsMaxInferredColumnDefaultsProperty, v);
      }
    }
    if (static_cast<int64_t>(schema.fields().size()) > limit) {
      // Wide tables: only the first `limit` top-level columns get the inferred default.
      for (size_t i = 0; i < static_cast<size_t>(limit); ++i) {
        std::vector<int32_t> ids;
        CollectIds(schema.fields()[i], ids);
        for (int32_t id : ids) config.by_id_[id] = MetricsMode{};
      }
      config.default_mode_ = MetricsMode::None();
    }
  }
  const std::string prefix = kMetricsColumnPrefix;
  for (auto it = properties.lower_bound(prefix); it != properties.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    const std::string column = it->first.substr(prefix.size());
    LS_ASSIGN_OR_RAISE_CTX(MetricsMode mode, MetricsMode::Parse(it->second), "table property {}", it->first);
    if (const iceberg::NestedField* field = schema.FindFieldByName(column)) config.by_id_[field->id] = mode;
  }
  return config;
}

MetricsConfig MetricsConfig::ForPositionDeletes() {
  MetricsConfig config;
  config.by_id_[2147483546] = MetricsMode::Full();  // file_path
  config.by_id_[2147483545] = MetricsMode::Full();  // pos
  return config;
}

MetricsConfig MetricsConfig::All(MetricsMode mode) {
  MetricsConfig config;
  config.default_mode_ = mode;
  return config;
}

MetricsMode MetricsConfig::ModeFor(int32_t field_id) const {
  auto it = by_id_.find(field_id);
  return it == by_id_.end() ? default_mode_ : it->second;
}

std::string TruncateUtf8Lower(std::string_view value, int32_t length) {
  size_t i = 0;
  uint32_t cp;
  for (int32_t n = 0; i < value.size() && n < length; ++n) i += DecodeUtf8(value, i, cp);
  return std::string(value.substr(0, i));
}

std::optional<std::string> TruncateUtf8Upper(std::string_view value, int32_t length) {
  std::vector<std::pair<size_t, uint32_t>> points;  // (byte offset, code point) of the kept prefix
  size_t i = 0;
  while (i < value.size() && static_cast<int32_t>(points.size()) < length) {
    uint32_t cp;
    const size_t n = DecodeUtf8(value, i, cp);
    points.emplace_back(i, cp);
    i += n;
  }
  if (i >= value.size()) return std::string(value);
  for (size_t k = points.size(); k-- > 0;) {
    uint32_t next = points[k].second + 1;
    if (next >= 0xD800 && next <= 0xDFFF) next = 0xE000;  // surrogates are not code points of UTF-8 text
    if (next > 0x10FFFF) continue;
    std::string out(value.substr(0, points[k].first));
    EncodeUtf8(next, out);
    return out;
  }
  return std::nullopt;
}

std::string TruncateBinaryLower(std::string_view value, int32_t length) {
  return std::string(value.substr(0, static_cast<size_t>(std::max(length, 0))));
}

std::optional<std::string> TruncateBinaryUpper(std::string_view value, int32_t length) {
  if (static_cast<int64_t>(value.size()) <= length) return std::string(value);
  std::string out(value.substr(0, static_cast<size_t>(length)));
  while (!out.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(out.back());
    if (last < 0xff) {
      ++last;
      return out;
    }
    out.pop_back();
  }
  return std::nullopt;
}

}  // namespace lakesync::iceberg
