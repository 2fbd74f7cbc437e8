#include "lakesync/change/change_kind.h"

#include <algorithm>
#include <cctype>

namespace lakesync::change {

int KindRank(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kUpdateBefore: return 0;
    case ChangeKind::kDelete: return 1;
    case ChangeKind::kUpdateAfter: return 2;
    case ChangeKind::kInsert: return 3;
  }
  return 3;
}

std::string_view ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kInsert: return "INSERT";
    case ChangeKind::kUpdateBefore: return "UPDATE_BEFORE";
    case ChangeKind::kUpdateAfter: return "UPDATE_AFTER";
    case ChangeKind::kDelete: return "DELETE";
  }
  return "INSERT";
}

std::optional<ChangeKind> ParseChangeKind(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::toupper(c); });
  if (n == "INSERT") return ChangeKind::kInsert;
  if (n == "DELETE") return ChangeKind::kDelete;
  if (n == "UPDATE_BEFORE" || n == "UPDATE_PREIMAGE") return ChangeKind::kUpdateBefore;
  if (n == "UPDATE_AFTER" || n == "UPDATE_POSTIMAGE") return ChangeKind::kUpdateAfter;
  return std::nullopt;
}

Result<ChangeKindMapper> ChangeKindMapper::Make(const std::map<std::string, std::string>& change_type_map) {
  ChangeKindMapper mapper;
  for (const auto& [code, kind_name] : change_type_map) {
    auto kind = ParseChangeKind(kind_name);
    if (!kind || kind_name.find("IMAGE") != std::string::npos || kind_name.find("image") != std::string::npos) {
      return InvalidArgument("change_type_map: '{}' maps to '{}', which is not INSERT, UPDATE_BEFORE, UPDATE_AFTER "
                             "or DELETE", code, kind_name);
    }
    mapper.map_[code] = *kind;
  }
  return mapper;
}

std::optional<ChangeKind> ChangeKindMapper::Map(std::string_view code) const {
  if (!map_.empty()) {
    auto it = map_.find(code);
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }
  return ParseChangeKind(code);
}

}  // namespace lakesync::change
