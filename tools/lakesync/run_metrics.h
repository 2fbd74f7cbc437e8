// Prometheus metrics of a running job (`lakesync run --metrics-listen ADDR`), served at /metrics by the
// shared HTTP server (lakesync/http/server.h). Counters and gauges are updated by the run loop's
// callbacks and read by the server's threads under one mutex.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lakesync/common/status.h"
#include "lakesync/engine/job_runner.h"
#include "lakesync/http/server.h"

namespace lakesync::cli {

class RunMetrics {
 public:
  // Binds `listen` ("host:port"; port 0: any free port) and serves until destroyed.
  // Errors: InvalidArgument for a malformed address, Unavailable when it cannot be bound.
  static Result<std::unique_ptr<RunMetrics>> Start(const std::string& listen, const engine::JobRunner& runner);
  ~RunMetrics();

  void RecordRun(const engine::RunSummary& summary);
  void RecordError(const Status& error);
  // Positions and lag from JobRunner::StatusJson, taken after each run.
  void RecordStatus(const nlohmann::json& status);
  void SetRunning(bool running);

  // The Prometheus text exposition format (version 0.0.4).
  std::string Render() const;
  std::string url() const { return server_->url() + "/metrics"; }

 private:
  RunMetrics() = default;

  std::unique_ptr<http::Server> server_;
  mutable std::mutex mutex_;
  std::string labels_;  // job="...",sink_id="..."
  std::map<std::string, int64_t> runs_by_status_;
  std::map<std::string, int64_t> rows_by_kind_;
  std::map<std::string, int64_t> errors_by_kind_;
  int64_t commits_ = 0;
  int64_t rows_written_ = 0;
  int64_t rows_removed_ = 0;
  double duration_sum_ = 0;
  int64_t duration_count_ = 0;
  std::optional<double> last_run_time_, last_success_time_;
  std::optional<int64_t> committed_position_, source_latest_, lag_commits_;
  std::optional<double> lag_seconds_;
  bool running_ = false;
};

}  // namespace lakesync::cli
