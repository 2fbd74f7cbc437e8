// Snapshots and refs (spec "Snapshots", "Snapshot References").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lakesync::iceberg {

// Values of the summary's "operation" key.
inline constexpr char kOperationAppend[] = "append";
inline constexpr char kOperationReplace[] = "replace";
inline constexpr char kOperationOverwrite[] = "overwrite";
inline constexpr char kOperationDelete[] = "delete";

struct Snapshot {
  int64_t snapshot_id = 0;
  std::optional<int64_t> parent_snapshot_id;
  int64_t sequence_number = 0;
  int64_t timestamp_ms = 0;
  std::string manifest_list;
  // v1 only: manifests listed inline instead of a manifest list (empty when manifest_list is set);
  // iceberg/manifest/snapshot_manifests.h reads either form.
  std::vector<std::string> manifests;
  std::map<std::string, std::string> summary;  // always holds "operation"
  std::optional<int32_t> schema_id;
  std::optional<int64_t> first_row_id;  // v3
  std::optional<int64_t> added_rows;    // v3
  std::optional<int64_t> key_id;        // v3

  std::string operation() const {
    auto it = summary.find("operation");
    return it == summary.end() ? std::string() : it->second;
  }
};

using SnapshotPtr = std::shared_ptr<const Snapshot>;

struct SnapshotRef {
  enum class Type { kBranch, kTag };
  int64_t snapshot_id = 0;
  Type type = Type::kBranch;
  std::optional<int32_t> min_snapshots_to_keep;
  std::optional<int64_t> max_snapshot_age_ms;
  std::optional<int64_t> max_ref_age_ms;
};

inline constexpr char kMainBranch[] = "main";

}  // namespace lakesync::iceberg
