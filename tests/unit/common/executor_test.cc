#include "lakesync/common/executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "lakesync/common/column_threads.h"

namespace lakesync {
namespace {

// Restores the pool's size after a test changes it.
class ThreadsTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = ThreadCount(); }
  void TearDown() override { ASSERT_TRUE(ConfigureThreads(saved_).ok()); }
  int saved_ = 1;
};

TEST_F(ThreadsTest, ParsesAndChecksCounts) {
  ASSERT_EQ(*ParseThreadCount("4", "--threads"), 4);
  for (const char* bad : {"0", "-1", "x", "4x", "", "100000"}) {
    auto r = ParseThreadCount(bad, "LAKESYNC_THREADS");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("LAKESYNC_THREADS"), std::string::npos) << r.status().message();
  }
  EXPECT_FALSE(ConfigureThreads(0).ok());
  ASSERT_TRUE(ConfigureThreads(3).ok());
  EXPECT_EQ(ThreadCount(), 3);
}

TEST_F(ThreadsTest, ResultsComeInInputOrder) {
  for (int threads : {1, 4}) {
    ASSERT_TRUE(ConfigureThreads(threads).ok());
    auto out = ParallelMap<int>(1000, [](size_t i) -> Result<int> { return static_cast<int>(i * 3); });
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->size(), 1000u);
    for (size_t i = 0; i < out->size(); ++i) ASSERT_EQ((*out)[i], static_cast<int>(i * 3));
  }
}

// With several threads, units really run at the same time: unit 0 waits until unit 1 has started,
// which only a second worker can do. (A generous deadline turns a regression into a failure, not a hang.)
TEST_F(ThreadsTest, UnitsRunConcurrently) {
  ASSERT_TRUE(ConfigureThreads(2).ok());
  std::mutex mutex;
  std::condition_variable cv;
  bool second_started = false;
  auto out = ParallelMap<bool>(2, [&](size_t i) -> Result<bool> {
    std::unique_lock lock(mutex);
    if (i == 1) {
      second_started = true;
      cv.notify_all();
      return true;
    }
    return cv.wait_for(lock, std::chrono::seconds(60), [&] { return second_started; });
  });
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE((*out)[0]) << "unit 0 never saw unit 1 start: units did not run in parallel";
}

// Of OrderedStream and RunAhead alike: the next `count` results are 0, 1, ..., then the error
// `message` in its place, and the stream ends after it.
template <typename Stream>
void ExpectItemsThenErrorThenEnd(Stream& stream, int count, const std::string& message) {
  for (int i = 0; i < count; ++i) {
    auto next = stream.Next();
    ASSERT_TRUE(next.ok()) << "item " << i << ": " << next.status().ToString();
    ASSERT_EQ(**next, i);
  }
  auto failed = stream.Next();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), message);
  auto after = stream.Next();
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(after->has_value());
}

TEST_F(ThreadsTest, FirstErrorInOrderWins) {
  ASSERT_TRUE(ConfigureThreads(4).ok());
  std::atomic<int> ran{0};
  auto out = ParallelMap<int>(100, [&](size_t i) -> Result<int> {
    ++ran;
    if (i == 7) return InvalidArgument("unit {}", i);
    if (i == 40) return Corrupt("unit {}", i);
    return static_cast<int>(i);
  }, 4);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "unit 7");
  // The window bounds what runs past the error.
  EXPECT_LE(ran.load(), 7 + 1 + 4);
}

TEST_F(ThreadsTest, SourceErrorComesAfterEarlierUnits) {
  ASSERT_TRUE(ConfigureThreads(4).ok());
  int made = 0;
  OrderedStream<int> stream([&]() -> Result<std::optional<OrderedStream<int>::Unit>> {
    if (made == 3) return NotFound("no unit 3");
    const int i = made++;
    return std::optional<OrderedStream<int>::Unit>([i]() -> Result<int> { return i; });
  });
  ExpectItemsThenErrorThenEnd(stream, 3, "no unit 3");
}

// A stream used from inside a pool task runs inline: with a pool of one thread, waiting on the pool
// from its only worker would never finish.
TEST_F(ThreadsTest, NestedUseRunsInline) {
  ASSERT_TRUE(ConfigureThreads(1).ok());
  auto outer = arrow::internal::GetCpuThreadPool()->Submit([]() -> Result<int> {
    ARROW_ASSIGN_OR_RAISE(auto inner, ParallelMap<int>(10, [](size_t i) -> Result<int> { return 1; }, 4));
    int sum = 0;
    for (int v : inner) sum += v;
    return sum;
  });
  ASSERT_TRUE(outer.ok());
  ASSERT_TRUE(outer->Wait(60)) << "nested parallel map did not finish";
  EXPECT_EQ(*outer->result(), 10);
}

TEST_F(ThreadsTest, ChoosesBetweenUnitsAndColumns) {
  ASSERT_TRUE(ConfigureThreads(1).ok());
  EXPECT_TRUE(PreferSerialUnits(10, 10, 10));  // one thread: nothing to split
  ASSERT_TRUE(ConfigureThreads(2).ok());
  EXPECT_FALSE(PreferSerialUnits(5, 1, 3));  // several files, few columns: the files are the units
  EXPECT_TRUE(PreferSerialUnits(5, 1, 8));   // several files, many columns: streamed, columns in parallel
  EXPECT_TRUE(PreferSerialUnits(1, 1, 8));   // one row group: its columns are all there is to split
  EXPECT_TRUE(PreferSerialUnits(1, 4, 8));   // one file, many columns: its columns, streamed
  EXPECT_FALSE(PreferSerialUnits(1, 3, 1));  // one file, one column (key resolution): its row groups
  EXPECT_TRUE(PreferSerialUnits(0, 0, 8));   // nothing to read
}

// The one rule for Arrow's use_threads: only when asked, with more than one thread, and never from a
// pool thread (which would wait on tasks queued behind it).
TEST_F(ThreadsTest, ColumnThreadsOnlyOffThePoolWithSeveralThreads) {
  ASSERT_TRUE(ConfigureThreads(1).ok());
  EXPECT_FALSE(ColumnThreads(true));
  ASSERT_TRUE(ConfigureThreads(4).ok());
  EXPECT_TRUE(ColumnThreads(true));
  EXPECT_FALSE(ColumnThreads(false));
  auto on_pool = arrow::internal::GetCpuThreadPool()->Submit([]() { return ColumnThreads(true); });
  ASSERT_TRUE(on_pool.ok());
  EXPECT_FALSE(on_pool->result().ValueOrDie());
}

// RunAhead: the items in order, at most one made ahead of the one the caller holds, at any thread count.
TEST_F(ThreadsTest, RunAheadKeepsOrderWithOneItemAhead) {
  for (int threads : {1, 4}) {
    ASSERT_TRUE(ConfigureThreads(threads).ok());
    int made = 0;
    std::atomic<int> started{0};
    RunAhead<int> items([&]() -> Result<std::optional<RunAhead<int>::Unit>> {
      if (made == 20) return std::nullopt;
      const int i = made++;
      return std::optional<RunAhead<int>::Unit>([i, &started]() -> Result<int> {
        ++started;
        return i * 3;
      });
    });
    for (int i = 0; i < 20; ++i) {
      auto next = items.Next();
      ASSERT_TRUE(next.ok()) << next.status().ToString();
      ASSERT_TRUE(next->has_value());
      ASSERT_EQ(**next, i * 3) << threads << " threads";
      EXPECT_LE(made, i + 2) << "more than one item made ahead, " << threads << " threads";
    }
    auto end = items.Next();
    ASSERT_TRUE(end.ok());
    EXPECT_FALSE(end->has_value());
    EXPECT_EQ(started.load(), 20);
  }
}

// With several threads the next item is made while the caller still holds the current one: the
// caller waits, holding item 0, for item 1 to finish, which only the pool can do meanwhile. (The
// deadline turns a regression into a failure, not a hang.)
TEST_F(ThreadsTest, RunAheadMakesTheNextItemWhileTheCurrentIsUsed) {
  ASSERT_TRUE(ConfigureThreads(2).ok());
  std::mutex mutex;
  std::condition_variable cv;
  bool second_done = false;
  int made = 0;
  RunAhead<int> items([&]() -> Result<std::optional<RunAhead<int>::Unit>> {
    if (made == 2) return std::nullopt;
    const int i = made++;
    return std::optional<RunAhead<int>::Unit>([&, i]() -> Result<int> {
      if (i == 1) {
        std::lock_guard lock(mutex);
        second_done = true;
        cv.notify_all();
      }
      return i;
    });
  });
  auto first = items.Next();
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(**first, 0);
  {
    std::unique_lock lock(mutex);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return second_done; }))
        << "item 1 was not made while the caller held item 0";
  }
  auto second = items.Next();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(**second, 1);
}

// An item's error, though made ahead, is returned only in its place, after the items before it; the
// stream ends there.
TEST_F(ThreadsTest, RunAheadReportsALaterErrorInItsPlace) {
  for (int threads : {1, 4}) {
    ASSERT_TRUE(ConfigureThreads(threads).ok());
    int made = 0;
    RunAhead<int> items([&]() -> Result<std::optional<RunAhead<int>::Unit>> {
      if (made == 6) return NotFound("no item 6");
      const int i = made++;
      return std::optional<RunAhead<int>::Unit>([i]() -> Result<int> {
        if (i == 3) return Corrupt("item {}", i);
        return i;
      });
    });
    SCOPED_TRACE(std::to_string(threads) + " threads");
    ASSERT_NO_FATAL_FAILURE(ExpectItemsThenErrorThenEnd(items, 3, "item 3"));
  }
}

// The destructor waits for the item being made ahead (it may use its owner's state).
TEST_F(ThreadsTest, RunAheadWaitsForTheItemAheadWhenDestroyed) {
  ASSERT_TRUE(ConfigureThreads(2).ok());
  std::atomic<bool> second_done{false};
  {
    int made = 0;
    RunAhead<int> items([&]() -> Result<std::optional<RunAhead<int>::Unit>> {
      const int i = made++;
      return std::optional<RunAhead<int>::Unit>([i, &second_done]() -> Result<int> {
        if (i == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));  // still running at destruction
          second_done = true;
        }
        return i;
      });
    });
    ASSERT_TRUE(items.Next().ok());
  }
  EXPECT_TRUE(second_done.load());
}

}  // namespace
}  // namespace lakesync
