// Helpers for configuration maps read from YAML/JSON: unknown keys are errors that suggest the key
// the user probably meant.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/common/status.h"

namespace lakesync {

// Levenshtein distance (insert, delete, substitute cost 1).
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `key` if it is close enough to be a likely typo.
std::optional<std::string> ClosestKey(std::string_view key, const std::vector<std::string>& candidates);

// InvalidArgument "<where>: unknown key 'x'; did you mean 'y'?" (or listing the known keys) for the
// first key of `object` not in `known`. Errors also when `object` is not a map.
Status CheckKnownKeys(const nlohmann::json& object, const std::vector<std::string>& known, std::string_view where);

}  // namespace lakesync
