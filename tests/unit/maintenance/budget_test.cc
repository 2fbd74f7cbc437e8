// maintenance/budget.h: the one rule every maintenance step's time budget follows. Only the ends that
// do not depend on a clock's speed are checked: no limit is never spent, zero is spent at once, and
// an hour is not spent right after the start.
#include "lakesync/maintenance/budget.h"

#include <gtest/gtest.h>

namespace lakesync::maintenance {
namespace {

TEST(TimeBudget, NoLimitIsNeverSpent) { EXPECT_FALSE(TimeBudget(std::nullopt).Spent()); }

TEST(TimeBudget, ZeroIsSpentAtOnce) { EXPECT_TRUE(TimeBudget(std::chrono::milliseconds(0)).Spent()); }

TEST(TimeBudget, AnHourIsNotSpentAtTheStart) { EXPECT_FALSE(TimeBudget(std::chrono::hours(1)).Spent()); }

}  // namespace
}  // namespace lakesync::maintenance
