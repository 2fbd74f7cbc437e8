// Which column metrics a data file records (table properties `write.metadata.metrics.*`), the
// way Java's MetricsConfig reads them:
//   none         nothing for the column (no sizes, counts or bounds)
//   counts       column size, value, null and NaN counts
//   truncate(N)  counts plus bounds, strings/binary/fixed truncated to N (code points for strings)
//   full         counts plus exact bounds
// The default is truncate(16). When `write.metadata.metrics.default` is not set and the schema has
// more top-level columns than `write.metadata.metrics.max-inferred-column-defaults` (100), only the
// first 100 top-level columns (and everything inside them) get the default; the rest get none.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "lakesync/iceberg/model/schema.h"

namespace lakesync::iceberg {

inline constexpr char kMetricsDefaultProperty[] = "write.metadata.metrics.default";
inline constexpr char kMetricsColumnPrefix[] = "write.metadata.metrics.column.";
inline constexpr char kMetricsMaxInferredColumnDefaultsProperty[] =
    "write.metadata.metrics.max-inferred-column-defaults";
inline constexpr int32_t kMetricsMaxInferredColumnDefaultsDefault = 100;

struct MetricsMode {
  enum class Kind { kNone, kCounts, kTruncate, kFull };
  Kind kind = Kind::kTruncate;
  int32_t length = 16;  // truncate only

  static MetricsMode None() { return {Kind::kNone, 0}; }
  static MetricsMode Counts() { return {Kind::kCounts, 0}; }
  static MetricsMode Truncate(int32_t n) { return {Kind::kTruncate, n}; }
  static MetricsMode Full() { return {Kind::kFull, 0}; }

  // Parses "none", "counts", "full" or "truncate(N)" (case-insensitive, surrounding blanks ignored).
  // Returns InvalidArgument naming the text for anything else or N < 1. (Java logs and falls back to
  // the default instead; a silently ignored setting is worse than a loud one.)
  static Result<MetricsMode> Parse(std::string_view text);
  std::string ToString() const;
  bool has_bounds() const { return kind == Kind::kTruncate || kind == Kind::kFull; }
  bool operator==(const MetricsMode&) const = default;
};

class MetricsConfig {
 public:
  // truncate(16) for every column.
  MetricsConfig() = default;

  // Reads the metrics properties for `schema`. Column overrides name columns by their full dotted
  // name ("location.lat", "tags.element"); overrides for columns not in the schema are ignored
  // (they may name a dropped column). Returns InvalidArgument for a malformed mode or limit,
  // naming the property.
  static Result<MetricsConfig> Make(const std::map<std::string, std::string>& properties,
                                    const iceberg::Schema& schema);

  // Position delete files: file_path and pos always keep full bounds (Java forPositionDelete), so
  // readers can tell which data files a delete file touches.
  static MetricsConfig ForPositionDeletes();

  // A config with one mode for every column.
  static MetricsConfig All(MetricsMode mode);

  MetricsMode ModeFor(int32_t field_id) const;

 private:
  MetricsMode default_mode_;
  std::unordered_map<int32_t, MetricsMode> by_id_;
};

// Bound truncation (Java UnicodeUtil / BinaryUtil). Lower bounds are prefixes; an upper bound is the
// prefix with its last code point (byte) incremented, dropping trailing ones that cannot be; nullopt
// when no upper bound of that length exists. Values no longer than `length` come back unchanged.
std::string TruncateUtf8Lower(std::string_view value, int32_t length);
std::optional<std::string> TruncateUtf8Upper(std::string_view value, int32_t length);
std::string TruncateBinaryLower(std::string_view value, int32_t length);
std::optional<std::string> TruncateBinaryUpper(std::string_view value, int32_t length);

}  // namespace lakesync::iceberg
