#include "lakesync/common/config_keys.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

namespace lakesync {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> ClosestKey(std::string_view key, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_distance = std::numeric_limits<size_t>::max();
  for (const auto& candidate : candidates) {
    const size_t d = EditDistance(key, candidate);
    if (d < best_distance) best_distance = d, best = &candidate;
  }
  if (best && best_distance <= std::max<size_t>(2, best->size() / 4)) return *best;
  return std::nullopt;
}

Status CheckKnownKeys(const nlohmann::json& object, const std::vector<std::string>& known, std::string_view where) {
  if (!object.is_object()) return InvalidArgument("{}: expected a map of keys", where);
  for (const auto& [key, value] : object.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    if (auto close = ClosestKey(key, known)) {
      return InvalidArgument("{}: unknown key '{}'; did you mean '{}'?", where, key, *close);
    }
    return InvalidArgument("{}: unknown key '{}'; known keys: {}", where, key, fmt::join(known, ", "));
  }
  return Status::OK();
}

}  // namespace lakesync
