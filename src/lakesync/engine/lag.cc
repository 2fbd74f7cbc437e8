#include "lakesync/engine/lag.h"

#include <algorithm>

namespace lakesync::engine {

Lag LagAt(const std::vector<SourceCommit>& commits, std::optional<int64_t> committed, int64_t at_ms) {
  Lag lag;
  lag.seconds = 0.0;
  std::optional<int64_t> newest;
  for (const auto& c : commits) {
    if (committed && c.ordinal <= *committed) continue;
    if (c.timestamp_ms && *c.timestamp_ms > at_ms) continue;  // not made yet at that moment
    newest = std::max(newest.value_or(c.ordinal), c.ordinal);
    if (!lag.oldest_pending) {
      lag.oldest_pending = c.ordinal;
      lag.up_to_date = false;
      if (c.timestamp_ms) {
        lag.seconds = std::max(0.0, static_cast<double>(at_ms - *c.timestamp_ms) / 1000.0);
      } else {
        lag.seconds.reset();
      }
    }
  }
  if (committed) lag.commits = std::max(*committed, newest.value_or(*committed)) - *committed;
  return lag;
}

Result<std::vector<SourceCommit>> ListSourceCommits(ChangeSource& source, int64_t after, int64_t through,
                                                    size_t limit) {
  std::vector<SourceCommit> out;
  int64_t ordinal = after;
  while (out.size() < limit) {
    ARROW_ASSIGN_OR_RAISE(auto next, source.NextAfter(ordinal));
    if (!next || *next > through) break;
    ARROW_ASSIGN_OR_RAISE(auto ts, source.CommitTimestampMs(*next));
    out.push_back({*next, ts});
    ordinal = *next;
  }
  return out;
}

}  // namespace lakesync::engine
