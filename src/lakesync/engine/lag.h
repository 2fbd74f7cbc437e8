// How far a sink is behind its source at a moment: the one definition of lag that `lakesync status`
// (JobRunner::StatusJson) and the dashboard's job page and lag-over-time chart (src/lakesync/ui) share.
//
// At a moment T, the source commits visible are those committed at or before T. A sink whose committed
// position is P is behind by
//   - commits: the newest visible ordinal minus P (Delta versions; Iceberg snapshot sequence numbers);
//   - time: T minus the commit time of the oldest visible commit after P (how long the oldest change not
//     applied yet has waited); 0 when nothing visible is pending.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "lakesync/engine/change_source.h"

namespace lakesync::engine {

// One commit of a source, with its commit time when the source can tell.
struct SourceCommit {
  int64_t ordinal = 0;
  std::optional<int64_t> timestamp_ms;
};

struct Lag {
  // Null when nothing was committed yet (there is no position to count from).
  std::optional<int64_t> commits;
  // Null when the oldest pending commit's time is unknown (a source that cannot tell).
  std::optional<double> seconds;
  bool up_to_date = true;                 // no visible commit after the position
  std::optional<int64_t> oldest_pending;  // the oldest visible commit after the position
};

// `commits`: source commits after `committed` (or every commit from the first one a run would read,
// when nothing is committed), oldest first; commits after `at_ms` are not visible then. A commit
// without a time counts as visible (it exists now).
Lag LagAt(const std::vector<SourceCommit>& commits, std::optional<int64_t> committed, int64_t at_ms);

// The source's commits with ordinals in (after, through], oldest first, with their commit times,
// walking NextAfter: at most `limit` of them (the newest are dropped), so a page never reads an
// unbounded log.
Result<std::vector<SourceCommit>> ListSourceCommits(ChangeSource& source, int64_t after, int64_t through,
                                                    size_t limit);

}  // namespace lakesync::engine
