// WriteBehind: batches written behind the caller come out as the wrapped writer alone writes them,
// with at most the bound in flight; the wrapped writer's error reaches the caller and stops the
// writing; everything handed over is written, even when the caller stops without closing.
#include "lakesync/formats/tabular/write_behind.h"

#include <arrow/builder.h>
#include <arrow/record_batch.h>
#include <arrow/util/byte_size.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>

#include "lakesync/common/executor.h"
#include "tabular_test_util.h"

namespace lakesync::tabular {
namespace {

using testing::ScratchDir;

std::shared_ptr<arrow::RecordBatch> Rows(int64_t first, int64_t count) {
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  for (int64_t i = first; i < first + count; ++i) {
    EXPECT_TRUE(ids.Append(i).ok());
    EXPECT_TRUE(names.Append("name-" + std::to_string(i * 7919 % 1000)).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())});
  return arrow::RecordBatch::Make(schema, count, {ids.Finish().ValueOrDie(), names.Finish().ValueOrDie()});
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Writes `batches` batches of 1,000 rows through MakeRecordWriter, behind the caller when
// `behind_bytes` > 0; returns the file's bytes.
std::string WriteFile(Format format, int batches, int64_t behind_bytes) {
  ScratchDir dir;
  const std::string path = dir.Path("rows.out");
  auto out = testing::LocalIO()->OpenOutput(path).ValueOrDie();
  auto writer = MakeRecordWriter(format, Rows(0, 1)->schema(), out).ValueOrDie();
  if (behind_bytes > 0) writer = WriteBehind(std::move(writer), behind_bytes);
  for (int b = 0; b < batches; ++b) EXPECT_TRUE(writer->Write(*Rows(b * 1000, 1000)).ok());
  EXPECT_TRUE(writer->Close().ok());
  EXPECT_TRUE(out->Close().ok());
  return FileBytes(path);
}

TEST(WriteBehindTest, WritesTheBytesOfTheWrappedWriter) {
  ASSERT_TRUE(ConfigureThreads(4).ok());
  const int64_t one_batch = arrow::util::TotalBufferSize(*Rows(0, 1000));
  for (Format format : {Format::kParquet, Format::kJsonl, Format::kCsv}) {
    const std::string direct = WriteFile(format, 40, 0);
    ASSERT_FALSE(direct.empty());
    // One batch in flight at a time, several, and all of them.
    for (int64_t bound : {int64_t{1}, 3 * one_batch, int64_t{1} << 30}) {
      EXPECT_EQ(WriteFile(format, 40, bound), direct)
          << static_cast<int>(format) << " with " << bound << " bytes behind";
    }
  }
}

// A wrapped writer that records what it was given, can hold its first write until told, and can fail.
struct Recorder : RecordWriter {
  struct State {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<int64_t> first_ids;  // of each batch written, in order
    int fail_at = -1;                // this write returns an error
    bool closed = false;
  };
  explicit Recorder(std::shared_ptr<State> state) : state(std::move(state)) {}
  Status Write(const arrow::RecordBatch& batch) override {
    std::lock_guard<std::mutex> lock(state->mutex);
    const int index = static_cast<int>(state->first_ids.size());
    state->first_ids.push_back(std::static_pointer_cast<arrow::Int64Array>(batch.column(0))->Value(0));
    state->changed.notify_all();
    if (index == state->fail_at) return IOError("disk full writing batch {}", index);
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Close() override {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->closed = true;
    return Status::OK();
  }
  std::shared_ptr<State> state;
};

// The bound holds while the wrapped writer is slow: with room for one batch, the caller cannot hand
// over a second while the first is being written. The wrapped writer's first write waits for the
// caller to have handed over two batches; a writer keeping to the bound never lets that happen, so
// the wait always runs to its end (a writer ignoring the bound would end it early and fail here).
TEST(WriteBehindTest, HoldsNoMoreThanTheBound) {
  ASSERT_TRUE(ConfigureThreads(4).ok());
  auto state = std::make_shared<Recorder::State>();
  std::atomic<int> handed{0};
  std::atomic<bool> passed_bound{false};
  struct Slow : Recorder {
    Slow(std::shared_ptr<State> s, std::atomic<int>* handed, std::atomic<bool>* passed)
        : Recorder(std::move(s)), handed(handed), passed(passed) {}
    Status Write(const arrow::RecordBatch& batch) override {
      if (first) {
        first = false;
        std::unique_lock<std::mutex> lock(state->mutex);
        const bool early = state->changed.wait_for(lock, std::chrono::milliseconds(300), [&] { return *handed >= 2; });
        if (early) *passed = true;
      }
      return Recorder::Write(batch);
    }
    bool first = true;
    std::atomic<int>* handed;
    std::atomic<bool>* passed;
  };
  const auto batch = Rows(0, 100);
  const int64_t one_batch = arrow::util::TotalBufferSize(*batch);
  auto writer = WriteBehind(std::make_unique<Slow>(state, &handed, &passed_bound), one_batch + one_batch / 2);
  for (int b = 0; b < 5; ++b) {
    ASSERT_TRUE(writer->Write(*Rows(b * 100, 100)).ok());
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      ++handed;
    }
    state->changed.notify_all();
  }
  ASSERT_TRUE(writer->Close().ok());
  EXPECT_FALSE(passed_bound);
  EXPECT_EQ(state->first_ids, (std::vector<int64_t>{0, 100, 200, 300, 400}));
  EXPECT_TRUE(state->closed);
}

TEST(WriteBehindTest, TheWrappedWritersErrorStopsTheWriting) {
  ASSERT_TRUE(ConfigureThreads(4).ok());
  auto state = std::make_shared<Recorder::State>();
  state->fail_at = 1;
  auto writer = WriteBehind(std::make_unique<Recorder>(state), int64_t{1} << 30);
  Status first_error;
  for (int b = 0; b < 20 && first_error.ok(); ++b) first_error = writer->Write(*Rows(b * 10, 10));
  const Status closed = writer->Close();
  EXPECT_FALSE(closed.ok());
  EXPECT_NE(closed.message().find("disk full writing batch 1"), std::string::npos) << closed.ToString();
  if (!first_error.ok()) {
    EXPECT_EQ(first_error.message(), closed.message());
  }
  // The batch that failed was the last one the wrapped writer saw; it was never closed.
  EXPECT_EQ(state->first_ids, (std::vector<int64_t>{0, 10}));
  EXPECT_FALSE(state->closed);
  EXPECT_FALSE(writer->Flush().ok());
}

TEST(WriteBehindTest, WritesWhatItWasHandedWhenDroppedUnclosed) {
  ASSERT_TRUE(ConfigureThreads(4).ok());
  auto state = std::make_shared<Recorder::State>();
  {
    auto writer = WriteBehind(std::make_unique<Recorder>(state), int64_t{1} << 30);
    for (int b = 0; b < 30; ++b) ASSERT_TRUE(writer->Write(*Rows(b, 1)).ok());
  }
  EXPECT_EQ(state->first_ids.size(), 30u);
  for (int b = 0; b < 30; ++b) EXPECT_EQ(state->first_ids[static_cast<size_t>(b)], b);
  EXPECT_FALSE(state->closed);
}

TEST(WriteBehindTest, OneThreadWritesOnTheCallersThread) {
  ASSERT_TRUE(ConfigureThreads(1).ok());
  auto state = std::make_shared<Recorder::State>();
  auto direct = std::make_unique<Recorder>(state);
  RecordWriter* const raw = direct.get();
  auto writer = WriteBehind(std::move(direct), int64_t{1} << 30);
  EXPECT_EQ(writer.get(), raw);  // no second working thread with --threads 1
}

}  // namespace
}  // namespace lakesync::tabular
