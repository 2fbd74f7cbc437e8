// The change stream contract between sources and the sink (docs/change-stream.md): Arrow batches
// with the table's columns plus control columns. Change kinds are normalised once, here, from
// whatever a source or a user map calls them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::change {

enum class ChangeKind : int8_t { kInsert, kUpdateBefore, kUpdateAfter, kDelete };

// Order of kinds with equal sequence numbers for one key (Beam's CdcSortKey): a before-image and a
// delete come before the after-image and the insert that replace them.
int KindRank(ChangeKind kind);  // UPDATE_BEFORE 0, DELETE 1, UPDATE_AFTER 2, INSERT 3

std::string_view ChangeKindName(ChangeKind kind);  // INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE
// Canonical names, case-insensitive; also Delta's insert/delete/update_preimage/update_postimage.
std::optional<ChangeKind> ParseChangeKind(std::string_view name);

// Control columns lakesync knows by default.
inline constexpr char kDefaultSequenceColumn[] = "_commit_snapshot_sequence_number";  // Beam's default
inline constexpr char kChangeTypeColumn[] = "_change_type";
inline constexpr char kCommitVersionColumn[] = "_commit_version";
inline constexpr char kCommitTimestampColumn[] = "_commit_timestamp";

// Maps source change codes onto kinds: a user's change_type_map ({c: INSERT, u: UPDATE_AFTER, ...})
// or, when empty, the canonical and Delta names.
class ChangeKindMapper {
 public:
  // Errors: InvalidArgument naming a map value that is not a kind.
  static Result<ChangeKindMapper> Make(const std::map<std::string, std::string>& change_type_map);
  std::optional<ChangeKind> Map(std::string_view code) const;
  bool uses_custom_map() const { return !map_.empty(); }
  // The codes of a custom map, sorted (empty without one); error messages list them.
  std::vector<std::string> codes() const {
    std::vector<std::string> out;
    for (const auto& entry : map_) out.push_back(entry.first);
    return out;
  }

 private:
  std::map<std::string, ChangeKind, std::less<>> map_;
};

}  // namespace lakesync::change
