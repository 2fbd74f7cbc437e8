#include "lakesync/iceberg/expr/bounds_internal.h"

#include <cmath>
#include <string_view>

namespace lakesync::iceberg::internal {
namespace {

// Above this many values an IN list is not checked against bounds (the check costs more than it saves).
constexpr size_t kInPredicateLimit = 200;

bool Usable(const std::optional<Literal>& bound) { return bound && !bound->is_null() && !IsNaNLiteral(*bound); }

// Compares the first min(|bound|, |prefix|) bytes of a string bound with the prefix. Byte order of UTF-8
// is code-point order, and truncating both sides to the prefix length keeps the comparison monotone,
// so truncated bounds stay valid.
int ComparePrefix(const Literal& bound, const std::string& prefix) {
  const std::string_view b = bound.get<std::string>();
  return b.substr(0, std::min(b.size(), prefix.size())).compare(prefix);
}

}  // namespace

bool IsNaNLiteral(const Literal& v) {
  if (std::holds_alternative<double>(v.value())) return std::isnan(v.get<double>());
  if (std::holds_alternative<float>(v.value())) return std::isnan(v.get<float>());
  return false;
}

std::optional<int> CompareOrdered(const Literal& a, const Literal& b) {
  if (IsNaNLiteral(a) || IsNaNLiteral(b)) return std::nullopt;
  return a.Compare(b);
}

bool RangeMightMatch(Operation op, const std::vector<Literal>& literals, const std::optional<Literal>& lower,
                     const std::optional<Literal>& upper) {
  const bool has_lower = Usable(lower);
  const bool has_upper = Usable(upper);
  switch (op) {
    case Operation::kLt: return !(has_lower && lower->Compare(literals.at(0)) >= 0);
    case Operation::kLtEq: return !(has_lower && lower->Compare(literals.at(0)) > 0);
    case Operation::kGt: return !(has_upper && upper->Compare(literals.at(0)) <= 0);
    case Operation::kGtEq: return !(has_upper && upper->Compare(literals.at(0)) < 0);
    case Operation::kEq:
      if (has_lower && lower->Compare(literals.at(0)) > 0) return false;
      if (has_upper && upper->Compare(literals.at(0)) < 0) return false;
      return true;
    case Operation::kIn: {
      if (literals.size() > kInPredicateLimit) return true;
      for (const auto& v : literals) {
        const bool above_lower = !has_lower || lower->Compare(v) <= 0;
        const bool below_upper = !has_upper || upper->Compare(v) >= 0;
        if (above_lower && below_upper) return true;
      }
      return false;
    }
    case Operation::kStartsWith: {
      const std::string& prefix = literals.at(0).get<std::string>();
      if (has_lower && ComparePrefix(*lower, prefix) > 0) return false;
      if (has_upper && ComparePrefix(*upper, prefix) < 0) return false;
      return true;
    }
    default: return true;
  }
}

bool BoundsShareStringPrefix(const std::string& prefix, const std::optional<Literal>& lower,
                             const std::optional<Literal>& upper) {
  if (!Usable(lower) || !Usable(upper)) return false;
  // Strings starting with a prefix form one contiguous range in byte order, so when both ends of
  // [lower, upper] start with it, every value in between does too.
  const auto starts = [&](const Literal& b) { return std::string_view(b.get<std::string>()).starts_with(prefix); };
  return starts(*lower) && starts(*upper);
}

}  // namespace lakesync::iceberg::internal
