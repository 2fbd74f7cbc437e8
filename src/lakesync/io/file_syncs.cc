#include "lakesync/io/file_syncs.h"

#include <arrow/io/interfaces.h>
#include <arrow/util/thread_pool.h>

#include <utility>

#include "lakesync/common/logging.h"

namespace lakesync::io {

FileSyncs::~FileSyncs() {
  if (Status st = Wait(); !st.ok()) LS_LOG_WARN("a written file was never made durable: {}", st.message());
}

void FileSyncs::Start(std::function<Status()> sync) {
  auto submitted = arrow::io::default_io_context().executor()->Submit(sync);
  // Refused (the executor is shutting down): sync here, so the result is the same, only not overlapped.
  arrow::Future<> started = submitted.ok() ? std::move(submitted).ValueUnsafe() : arrow::Future<>::MakeFinished(sync());
  std::lock_guard<std::mutex> lock(mutex_);
  started_.push_back(std::move(started));
}

Status FileSyncs::Wait() {
  std::vector<arrow::Future<>> started;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    started.swap(started_);
  }
  Status first;
  for (auto& f : started) {
    const Status& st = f.status();  // blocks until that sync is done
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

}  // namespace lakesync::io
