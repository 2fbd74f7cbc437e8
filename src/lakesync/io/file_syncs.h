// The fsyncs of streamed local files (data, delete and deletion-vector files), run on Arrow's IO
// executor instead of in the stream's Close, and awaited together before a commit names the files.
//
// Why: a data file is synced when its writer closes it, on the CPU pool thread that encoded it; with
// two writers closing at once both cores waited in fsync (~35 ms of a 0.64 s apply, stop 37). The
// rule that a file is durable before any metadata names it stays: whoever commits or hands the files
// on (table::SnapshotUpdate::Commit, the staged writes of sink/staged_apply) calls Wait() first, and a
// failed sync fails that commit with the file's name, as a failed Close did before.
#pragma once

#include <arrow/util/future.h>

#include <functional>
#include <mutex>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::io {

class FileSyncs {
 public:
  FileSyncs() = default;
  FileSyncs(const FileSyncs&) = delete;
  FileSyncs& operator=(const FileSyncs&) = delete;
  // Every sync still running is waited for, so none outlives the streams' owner; a failure nobody
  // asked for is logged (its files were never committed: every commit waits first).
  ~FileSyncs();

  // Starts `sync` (fsync of one closed file and its directory) on Arrow's IO executor. When the
  // executor refuses the task, the sync runs here, on the caller's thread.
  void Start(std::function<Status()> sync);

  // Waits for every sync started so far and forgets them; returns OK or the first failure in the order
  // they were started (each failure names its file). Syncs started meanwhile by other threads are
  // waited for by the next call.
  // One committer per group at a time: a failure is handed to the first caller that waits, so two
  // threads committing through one owner (one table::Table) at once could see it split, one of them
  // OK. No caller does that today (each retry loop and staged write owns its Table); sharing an owner
  // between concurrent committers needs a group per committer or failures kept per file.
  Status Wait();

 private:
  std::mutex mutex_;
  std::vector<arrow::Future<>> started_;
};

}  // namespace lakesync::io
