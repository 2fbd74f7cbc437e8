// What a job's runs on this machine leave behind for `lakesync status`: the last run's summary, the
// last error, and a lock held while a run is in progress. Progress itself never lives here (the
// target table holds it, with the data); losing this folder loses only the history shown by status.
//
// Files, in the state folder (LAKESYNC_STATE_DIR, else $XDG_STATE_HOME/lakesync, else
// ~/.local/state/lakesync), named after the job's sink id and target table:
//   <key>.json  {"last_run": {...summary, "finished_at": ...}, "last_error": {"at", "message", ...}}
//   <key>.lock  share-locked (flock) by every `lakesync run` of the job while it runs; a process that
//               dies, even by SIGKILL, releases it, so "in progress" is never stale.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "lakesync/common/status.h"

namespace lakesync::engine {

class RunState {
 public:
  // The folder named above ("" when neither the variables nor HOME say where).
  static std::string DefaultDirectory();
  // The file key for a job: its sink id and target table, with characters a file name cannot hold
  // replaced.
  static std::string KeyFor(const std::string& sink_id, const std::string& target_table);

  // Errors: IOError when the folder cannot be created.
  static Result<std::unique_ptr<RunState>> Open(const std::string& directory, const std::string& key);
  ~RunState();

  // Takes the shared lock for the life of this object (the process's run). Errors: IOError.
  Status MarkRunning();
  // True when some process holds the lock (a run is in progress), tested without blocking.
  Result<bool> InProgress() const;

  // Records a finished run (its summary line) or a failed one; the other record is kept.
  Status RecordRun(const nlohmann::json& summary);
  Status RecordError(const std::string& message, const std::string& kind);

  // {"last_run": ..., "last_error": ...}, each absent when there is none.
  Result<nlohmann::json> Load() const;

 private:
  RunState(std::string json_path, std::string lock_path);
  Status Update(const char* key, nlohmann::json value);

  std::string json_path_, lock_path_;
  int lock_fd_ = -1;
};

}  // namespace lakesync::engine
