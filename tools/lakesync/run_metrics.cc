// The exposition format is written here by hand: it is a few lines of text per metric
// (https://prometheus.io/docs/instrumenting/exposition_formats/), and no Prometheus client library for
// C++ ships in Debian. The tests read it back with the Prometheus project's own Python parser.
#include "run_metrics.h"

#include <fmt/format.h>

#include <chrono>

#include "lakesync/common/logging.h"

namespace lakesync::cli {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A label value: backslash, double quote and newline escaped.
std::string LabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

class Writer {
 public:
  explicit Writer(const std::string& labels) : labels_(labels) {}
  void Header(std::string_view name, std::string_view type, std::string_view help) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void Sample(std::string_view name, double value, std::string_view extra_labels = "") {
    out_ += fmt::format("{}{{{}{}{}}} {}\n", name, labels_, extra_labels.empty() ? "" : ",", extra_labels, value);
  }
  void Sample(std::string_view name, int64_t value, std::string_view extra_labels = "") {
    out_ += fmt::format("{}{{{}{}{}}} {}\n", name, labels_, extra_labels.empty() ? "" : ",", extra_labels, value);
  }
  std::string Take() { return std::move(out_); }

 private:
  const std::string& labels_;
  std::string out_;
};

}  // namespace

Result<std::unique_ptr<RunMetrics>> RunMetrics::Start(const std::string& listen, const engine::JobRunner& runner) {
  std::unique_ptr<RunMetrics> m(new RunMetrics());
  m->labels_ = fmt::format("job=\"{}\",sink_id=\"{}\"", LabelValue(runner.job().name), LabelValue(runner.sink_id()));
  http::ServerOptions options;
  options.listen = listen;
  options.name = "metrics";
  options.worker_threads = 2;
  options.log_requests = false;  // a scrape every few seconds is not news
  LS_ASSIGN_OR_RAISE_CTX(m->server_, http::Server::Make(options), "--metrics-listen {}", listen);
  RunMetrics* self = m.get();
  m->server_->routes().Get("/metrics", [self](const httplib::Request&, httplib::Response& res) {
    res.set_content(self->Render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  LS_RETURN_NOT_OK_CTX(m->server_->Start(), "--metrics-listen {}", listen);
  // The address is news when the system chose the port.
  const bool chosen = listen.size() >= 2 && listen.substr(listen.size() - 2) == ":0";
  LogEvent(chosen ? spdlog::level::warn : spdlog::level::info,
           fmt::format("job {}: Prometheus metrics at {}", runner.job().name, m->url()),
           {{"event", "metrics"}, {"url", m->url()}, {"port", m->server_->port()}});
  return m;
}

RunMetrics::~RunMetrics() {
  if (server_) server_->Stop();
}

void RunMetrics::RecordRun(const engine::RunSummary& summary) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++runs_by_status_[summary.status];
  last_run_time_ = Now();
  duration_sum_ += summary.duration_seconds;
  ++duration_count_;
  if (summary.status != "committed") return;
  last_success_time_ = last_run_time_;
  const auto& c = summary.apply.changes;
  rows_by_kind_["insert"] += c.inserts;
  rows_by_kind_["update_before"] += c.update_befores;
  rows_by_kind_["update_after"] += c.update_afters;
  rows_by_kind_["delete"] += c.deletes;
  for (const auto& t : summary.apply.tables) {
    if (t.skipped) continue;
    ++commits_;
    rows_written_ += t.rows_written;
    rows_removed_ += t.rows_deleted;
  }
}

void RunMetrics::RecordError(const Status& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++errors_by_kind_[std::string(ErrorKindName(KindOf(error)))];
  ++runs_by_status_["failed"];
  last_run_time_ = Now();
}

void RunMetrics::RecordStatus(const nlohmann::json& status) {
  auto integer = [&](const char* key) -> std::optional<int64_t> {
    if (!status.contains(key) || !status.at(key).is_number()) return std::nullopt;
    return status.at(key).get<int64_t>();
  };
  std::lock_guard<std::mutex> lock(mutex_);
  committed_position_ = integer("committed_position");
  source_latest_ = integer("source_latest");
  lag_commits_ = integer("lag");
  if (status.contains("lag_seconds") && status.at("lag_seconds").is_number()) {
    lag_seconds_ = status.at("lag_seconds").get<double>();
  } else {
    lag_seconds_.reset();
  }
}

void RunMetrics::SetRunning(bool running) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = running;
}

std::string RunMetrics::Render() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Writer w(labels_);
  w.Header("lakesync_job_runs_total", "counter",
           "Runs that did something (committed, skipped: another run committed first) or failed after retries.");
  for (const char* status : {"committed", "skipped", "failed"}) {
    auto it = runs_by_status_.find(status);
    w.Sample("lakesync_job_runs_total", it == runs_by_status_.end() ? int64_t{0} : it->second,
             fmt::format("status=\"{}\"", status));
  }
  w.Header("lakesync_job_commits_total", "counter", "Snapshots committed to target tables.");
  w.Sample("lakesync_job_commits_total", commits_);
  w.Header("lakesync_job_change_rows_total", "counter", "Change rows read from the source, by change kind.");
  for (const char* kind : {"insert", "update_before", "update_after", "delete"}) {
    auto it = rows_by_kind_.find(kind);
    w.Sample("lakesync_job_change_rows_total", it == rows_by_kind_.end() ? int64_t{0} : it->second,
             fmt::format("kind=\"{}\"", kind));
  }
  w.Header("lakesync_job_rows_written_total", "counter", "Rows written to target data files.");
  w.Sample("lakesync_job_rows_written_total", rows_written_);
  w.Header("lakesync_job_rows_removed_total", "counter", "Target rows removed (deletion vectors, position or equality deletes).");
  w.Sample("lakesync_job_rows_removed_total", rows_removed_);
  w.Header("lakesync_job_errors_total", "counter", "Runs that failed after their retries, by error kind.");
  if (errors_by_kind_.empty()) {
    w.Sample("lakesync_job_errors_total", int64_t{0}, "kind=\"none\"");
  }
  for (const auto& [kind, n] : errors_by_kind_) {
    w.Sample("lakesync_job_errors_total", n, fmt::format("kind=\"{}\"", LabelValue(kind)));
  }
  w.Header("lakesync_job_run_duration_seconds", "summary", "Duration of the runs counted in lakesync_job_runs_total.");
  w.Sample("lakesync_job_run_duration_seconds_sum", duration_sum_);
  w.Sample("lakesync_job_run_duration_seconds_count", duration_count_);
  w.Header("lakesync_job_running", "gauge", "1 while a run is in progress.");
  w.Sample("lakesync_job_running", int64_t{running_ ? 1 : 0});
  auto gauge = [&](const char* name, const char* help, auto value) {
    if (!value) return;
    w.Header(name, "gauge", help);
    w.Sample(name, *value);
  };
  gauge("lakesync_job_last_run_timestamp_seconds", "When the last run ended (seconds since the epoch).", last_run_time_);
  gauge("lakesync_job_last_success_timestamp_seconds", "When the last committed run ended.", last_success_time_);
  gauge("lakesync_job_committed_position", "Source position committed in the target, as of the last run.",
        committed_position_);
  gauge("lakesync_job_source_latest_position", "The source's latest commit, as of the last run.", source_latest_);
  gauge("lakesync_job_lag_commits", "Source commits not applied yet, as of the last run.", lag_commits_);
  gauge("lakesync_job_lag_seconds", "Age of the oldest source commit not applied yet, as of the last run.",
        lag_seconds_);
  return w.Take();
}

}  // namespace lakesync::cli
