#include "lakesync/formats/tabular/write_behind.h"

#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>
#include <arrow/util/byte_size.h>
#include <arrow/util/thread_pool.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <utility>

#include "lakesync/common/executor.h"

namespace lakesync::tabular {
namespace {

class WriteBehindWriter : public RecordWriter {
 public:
  WriteBehindWriter(std::unique_ptr<RecordWriter> writer, int64_t max_queued_bytes)
      : writer_(std::move(writer)), max_queued_bytes_(max_queued_bytes) {}

  ~WriteBehindWriter() override {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return !draining_; });  // the task uses writer_ and this
  }

  Status Write(const arrow::RecordBatch& batch) override {
    // The caller's batch is only borrowed: the queue holds one sharing its buffers.
    Queued queued{arrow::RecordBatch::Make(batch.schema(), batch.num_rows(), batch.column_data()),
                  arrow::util::TotalBufferSize(batch)};
    std::unique_lock<std::mutex> lock(mutex_);
    room_.wait(lock, [&] {
      return !error_.ok() || queued_bytes_ == 0 || queued_bytes_ + queued.bytes <= max_queued_bytes_;
    });
    ARROW_RETURN_NOT_OK(error_);
    queued_bytes_ += queued.bytes;
    queue_.push_back(std::move(queued));
    if (draining_) return Status::OK();
    auto submitted = arrow::io::default_io_context().executor()->Spawn([this] { Drain(); });
    if (!submitted.ok()) {
      queue_.clear();
      queued_bytes_ = 0;
      error_ = submitted;
      return error_;
    }
    draining_ = true;
    return Status::OK();
  }

  Status Flush() override {
    ARROW_RETURN_NOT_OK(WaitDrained());
    return writer_->Flush();
  }

  Status Close() override {
    ARROW_RETURN_NOT_OK(WaitDrained());
    return writer_->Close();
  }

 private:
  struct Queued {
    std::shared_ptr<arrow::RecordBatch> batch;
    int64_t bytes = 0;
  };

  // The task: writes queued batches in order until the queue is empty (or a write fails).
  void Drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!queue_.empty() && error_.ok()) {
      Queued next = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      Status written = writer_->Write(*next.batch);
      next.batch.reset();  // its buffers may be freed before the caller is woken
      lock.lock();
      queued_bytes_ -= next.bytes;
      if (!written.ok()) {
        error_ = std::move(written);
        queue_.clear();
        queued_bytes_ = 0;
      }
      room_.notify_all();
    }
    draining_ = false;
    room_.notify_all();
    idle_.notify_all();
  }

  Status WaitDrained() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return !draining_; });
    return error_;
  }

  std::unique_ptr<RecordWriter> writer_;
  const int64_t max_queued_bytes_;
  std::mutex mutex_;
  std::condition_variable room_;  // queued bytes went down, or the task stopped
  std::condition_variable idle_;  // the task stopped
  std::deque<Queued> queue_;
  int64_t queued_bytes_ = 0;  // queued or being written
  bool draining_ = false;     // a task is running (it owns writer_ until it stops)
  Status error_;
};

}  // namespace

std::unique_ptr<RecordWriter> WriteBehind(std::unique_ptr<RecordWriter> writer, int64_t max_queued_bytes) {
  EnsureThreadsConfigured();
  if (ThreadCount() <= 1) return writer;
  return std::make_unique<WriteBehindWriter>(std::move(writer), max_queued_bytes);
}

}  // namespace lakesync::tabular
