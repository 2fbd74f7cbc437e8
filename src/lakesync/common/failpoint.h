// Failpoints for crash tests: when the environment variable LAKESYNC_FAILPOINT names a point, the
// process kills itself there with SIGKILL (as `kill -9` would), so tests can prove that a rerun
// converges to exactly the right table. Points: after-data-files (data and delete files written,
// nothing committed), before-commit (manifests and manifest list written, catalog not yet updated),
// after-commit (the catalog points at the new snapshot, the caller has not been told).
#pragma once

#include <string_view>

namespace lakesync {

inline constexpr char kFailpointAfterDataFiles[] = "after-data-files";
inline constexpr char kFailpointBeforeCommit[] = "before-commit";
inline constexpr char kFailpointAfterCommit[] = "after-commit";

void Failpoint(std::string_view name);

}  // namespace lakesync
