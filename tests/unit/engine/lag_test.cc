// The one definition of lag (engine/lag.h) that `lakesync status` and the dashboard share: commits
// behind and time waited, at a moment, from the source's commits. Expected values are worked out by
// hand from the commits given.
#include <gtest/gtest.h>

#include "fake_source.h"
#include "lakesync/engine/lag.h"

namespace lakesync::engine {
namespace {

TEST(LagAt, NothingAfterThePositionIsNoLag) {
  std::vector<SourceCommit> commits = {{3, 1000}, {4, 2000}};
  auto lag = LagAt(commits, 4, 5000);
  EXPECT_TRUE(lag.up_to_date);
  EXPECT_EQ(lag.commits, 0);
  EXPECT_EQ(lag.seconds, 0.0);
  EXPECT_FALSE(lag.oldest_pending);
}

TEST(LagAt, CountsCommitsAndTimeFromTheOldestPendingCommit) {
  std::vector<SourceCommit> commits = {{5, 10'000}, {6, 12'000}, {7, 20'000}};
  auto lag = LagAt(commits, 4, 15'000);  // 7 is not made yet at 15 s
  EXPECT_FALSE(lag.up_to_date);
  EXPECT_EQ(lag.commits, 2);
  EXPECT_EQ(lag.seconds, 5.0);
  EXPECT_EQ(lag.oldest_pending, 5);
  lag = LagAt(commits, 4, 25'000);
  EXPECT_EQ(lag.commits, 3);
  EXPECT_EQ(lag.seconds, 15.0);
  // Before the first pending commit was made, the sink was up to date.
  lag = LagAt(commits, 4, 9'000);
  EXPECT_TRUE(lag.up_to_date);
  EXPECT_EQ(lag.commits, 0);
}

TEST(LagAt, APendingCommitWithoutATimeMakesTheTimeLagUnknown) {
  std::vector<SourceCommit> commits = {{2, std::nullopt}, {3, 1000}};
  auto lag = LagAt(commits, 1, 5000);
  EXPECT_FALSE(lag.up_to_date);
  EXPECT_EQ(lag.commits, 2);
  EXPECT_FALSE(lag.seconds);
}

TEST(LagAt, NothingCommittedYetHasNoCommitCountButATime) {
  std::vector<SourceCommit> commits = {{0, 1000}, {1, 2000}};
  auto lag = LagAt(commits, std::nullopt, 4000);
  EXPECT_FALSE(lag.up_to_date);
  EXPECT_FALSE(lag.commits);
  EXPECT_EQ(lag.seconds, 3.0);
}

TEST(ListSourceCommits, WalksTheSourceWithTimesAndStopsAtTheLimit) {
  testing::FakeSource source;
  source.commits.resize(6);
  for (int64_t v = 0; v < 6; ++v) source.commit_times_ms[v] = 1000 * v;
  auto all = ListSourceCommits(source, 1, 5, 100);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 4u);
  EXPECT_EQ(all->front().ordinal, 2);
  EXPECT_EQ(all->front().timestamp_ms, 2000);
  EXPECT_EQ(all->back().ordinal, 5);
  auto limited = ListSourceCommits(source, 1, 5, 2);
  ASSERT_TRUE(limited.ok());
  ASSERT_EQ(limited->size(), 2u);
  EXPECT_EQ(limited->back().ordinal, 3);
  auto through = ListSourceCommits(source, 0, 2, 100);
  ASSERT_EQ(through->size(), 2u);
}

}  // namespace
}  // namespace lakesync::engine
