// The time budget of one maintenance step (`--max-duration`, the job's `maintenance.<step>.max_duration`,
// docs/maintenance.md). One rule for every step: the step's first unit of work always runs (a bin of
// compaction, a file deleted by expiry or orphan removal), so each run makes progress whatever the
// budget; before each further unit the step asks Spent() and stops when the budget is used up. A budget
// of zero therefore means "exactly one unit", which is what the tests use: no test depends on how fast
// a machine is. What a stopped step leaves is named in its result and picked up by the next run.
#pragma once

#include <chrono>
#include <optional>

namespace lakesync::maintenance {

class TimeBudget {
 public:
  // No limit: never spent. The clock starts at construction (steady clock: immune to clock changes).
  explicit TimeBudget(std::optional<std::chrono::milliseconds> limit)
      : limit_(limit), start_(std::chrono::steady_clock::now()) {}

  bool Spent() const { return limit_ && std::chrono::steady_clock::now() - start_ >= *limit_; }

 private:
  std::optional<std::chrono::milliseconds> limit_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace lakesync::maintenance
