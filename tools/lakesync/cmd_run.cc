// lakesync run / status: run a sync job (once, on a schedule or continuously) and show its progress.
#include <fmt/format.h>

#include <unistd.h>

#include <atomic>
#include <optional>
#include <chrono>
#include <csignal>
#include <thread>

#include "cli.h"
#include "lakesync/catalog/catalog_config.h"
#include "lakesync/common/executor.h"
#include "lakesync/common/logging.h"
#include "lakesync/engine/job_runner.h"
#include "lakesync/engine/job_status.h"
#include "lakesync/engine/run_state.h"
#include "lakesync/engine/source_factory.h"
#include "run_metrics.h"

namespace lakesync::cli {
namespace {

// Ctrl-C / SIGTERM: the first asks the job to stop after the current run, a second stops it at once.
// The handler only counts; a watcher thread says so in the log (a handler may not call the logger).
std::atomic<int> g_signals{0};
std::atomic<bool> g_stop{false};

void OnSignal(int) {
  if (g_signals.fetch_add(1) >= 1) {
    // Stopping now is as safe as a crash: an unfinished commit is simply not there, and the files it
    // wrote are orphans that a rerun does not use.
    static const char kMessage[] = "\nlakesync: stopping now\n";
    ssize_t ignored = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    (void)ignored;
    ::_exit(130);
  }
  g_stop = true;
}

class SignalWatcher {
 public:
  explicit SignalWatcher(std::string job) : job_(std::move(job)) {
    std::signal(SIGINT, OnSignal);
    std::signal(SIGTERM, OnSignal);
    thread_ = std::thread([this] {
      while (!done_) {
        if (g_stop && !said_) {
          said_ = true;
          LogEvent(spdlog::level::warn,
                   fmt::format("{}: stopping after this run (Ctrl-C again to stop now)", job_),
                   {{"event", "stopping"}, {"job", job_}});
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  }
  ~SignalWatcher() {
    done_ = true;
    thread_.join();
  }

 private:
  std::string job_;
  std::atomic<bool> done_{false};
  bool said_ = false;
  std::thread thread_;
};

// One line on the terminal, redrawn: the source range and rows read so far, and the throughput.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  void Update(int64_t rows, int64_t from, int64_t through) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!active_) {
      started_ = now;
      active_ = true;
    }
    rows_ = rows;
    from_ = from;
    through_ = through;
    if (now - drawn_ < std::chrono::milliseconds(200)) return;
    drawn_ = now;
    Draw(now);
  }
  // Ends the line of a run that read rows, redrawn with the final count (the last update may not
  // have been drawn, e.g. a run shorter than the redraw interval).
  void Done() {
    if (active_) {
      Draw(std::chrono::steady_clock::now());
      fmt::print(stderr, "\n");
    }
    active_ = false;
    rows_ = 0;
    drawn_ = {};  // the next run's first update draws at once
  }

 private:
  void Draw(std::chrono::steady_clock::time_point now) {
    const double seconds = std::chrono::duration<double>(now - started_).count();
    const std::string range = from_ == through_ ? fmt::format("position {}", from_)
                                                : fmt::format("positions {}..{}", from_, through_);
    fmt::print(stderr, "\r  {}  rows read {:>12}  {:>10.0f} rows/s ", range, rows_,
               seconds > 0 ? static_cast<double>(rows_) / seconds : 0.0);
    std::fflush(stderr);
  }

  bool enabled_;
  bool active_ = false;
  int64_t rows_ = 0, from_ = 0, through_ = 0;
  std::chrono::steady_clock::time_point started_, drawn_;
};

}  // namespace

// `once`: the job runs once whatever its schedule (run --once, status, --dry-run, ui): a source that
// cannot be opened is retried per the job's retry policy only; a job that repeats keeps trying.
Result<std::unique_ptr<engine::JobRunner>> OpenJob(const std::string& path, const GlobalOptions& global,
                                                   const std::string& every, bool once, bool apply_threads,
                                                   bool retry_open) {
  ARROW_ASSIGN_OR_RAISE(auto job, engine::LoadJobConfigFile(path));
  if (!retry_open) job.retry.max_attempts = 1;
  if (job.threads && apply_threads) {
    ARROW_RETURN_NOT_OK(lakesync::ConfigureThreads(global.threads > 0 ? std::optional<int>(global.threads) : std::nullopt,
                                         job.threads));
  }
  if (!every.empty()) {
    ARROW_ASSIGN_OR_RAISE(auto interval, engine::ParseDuration(nlohmann::json(every), "--every"));
    if (job.streaming) return InvalidArgument("--every: {} is a streaming job, which runs continuously", path);
    job.every = interval;
  }
  for (const auto& ignored : job.sink.ignored_options) {
    LS_LOG_WARN("{}: sink option '{}' has no effect in lakesync: {}", path, ignored.key, ignored.reason);
  }
  // The embedded catalog of a job lives next to the job file (unless LAKESYNC_WAREHOUSE says where),
  // so the job finds its target wherever it is run from.
  ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(global, job.directory));
  engine::OpenOptions open;
  open.keep_trying = !once && (job.every || job.streaming);
  open.stop = &g_stop;
  return engine::JobRunner::Make(std::move(job), std::move(catalog), engine::OpenSource, open);
}

namespace {

Result<std::unique_ptr<engine::RunState>> OpenRunState(const engine::JobRunner& runner) {
  return engine::RunState::Open(engine::RunState::DefaultDirectory(),
                                engine::RunState::KeyFor(runner.sink_id(), runner.job().sink.table));
}

// Where the job's target lives, for the first log line and --dry-run.
std::string CatalogLocation(const GlobalOptions& global, const engine::JobConfig& job) {
  auto config = ResolveCatalogConfig(global, job.directory);
  if (!config.ok()) return "";
  auto it = config->catalog_properties.find("warehouse");
  return it == config->catalog_properties.end() ? "" : it->second;
}

}  // namespace

void RegisterRunCommands(Cli& cli) {
  struct Args {
    std::string job, every, fail_if_lag, metrics_listen;
    bool once = false, dry_run = false;
  };
  auto a = std::make_shared<Args>();
  auto* run = cli.app.add_subcommand(
      "run",
      "Run a sync job: apply the source's changes after the position committed in the target, once (default), on "
      "a schedule (schedule: {every: 15m} or --every) or continuously (source.streaming: true). Prints one JSON "
      "summary line per run that did something on standard output (with the sink_id progress is kept under); "
      "see docs/jobs.md. Relative paths in the job, and the embedded warehouse when LAKESYNC_WAREHOUSE is unset, "
      "are relative to the job file's folder. Ctrl-C stops after the current run; a second Ctrl-C stops at once");
  run->add_option("job", a->job, "the job file (YAML or JSON)")->required()->check(CLI::ExistingFile);
  run->add_option("--every", a->every, "run on this schedule (e.g. 30s, 15m, 1h), overriding the job's");
  run->add_flag("--once", a->once, "run once even if the job has a schedule or streams");
  run->add_flag("--dry-run", a->dry_run,
                "print what a run would do (source range, change rows counted by reading the source, target, "
                "catalog, sink_id) as JSON, and write nothing");
  run->add_option("--metrics-listen", a->metrics_listen,
                  "serve Prometheus metrics at http://ADDR/metrics while the job runs (runs, commits, change rows, "
                  "errors, run durations, positions and lag); ADDR is host:port, e.g. 127.0.0.1:9464 (port 0: a "
                  "free port, logged)");
  AddCatalogOption(*run, cli.global);
  run->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      // From the start: opening a job already reads the source, which may hang on a dead network.
      std::optional<SignalWatcher> signals;
      if (!a->dry_run) signals.emplace(a->job);
      ARROW_ASSIGN_OR_RAISE(auto runner, OpenJob(a->job, cli.global, a->every, a->once || a->dry_run));
      const auto& job = runner->job();
      if (a->dry_run) {
        ARROW_ASSIGN_OR_RAISE(auto plan, runner->DryRun());
        plan["warehouse"] = CatalogLocation(cli.global, job);
        Print(plan.dump(2) + "\n");
        return Status::OK();
      }
      LogEvent(spdlog::level::info,
               fmt::format("job {}: {} (id {}) -> {} in catalog {} ({}), sink_id {}{}", job.name,
                           runner->DescribeSource(), runner->source_identity(), job.sink.table,
                           runner->catalog()->name(), CatalogLocation(cli.global, job), runner->sink_id(),
                           runner->sink_id_derived() ? " (derived from the source's id and the target)" : ""),
               {{"event", "start"}, {"job", job.name}, {"sink_id", runner->sink_id()},
                {"sink_id_derived", runner->sink_id_derived()}, {"source_identity", runner->source_identity()},
                {"target", job.sink.table}, {"catalog", runner->catalog()->name()},
                {"warehouse", CatalogLocation(cli.global, job)}});
      // The run's traces for `lakesync status`; a machine without a state folder still runs.
      auto state = OpenRunState(*runner);
      if (state.ok()) {
        if (auto st = (*state)->MarkRunning(); !st.ok()) LS_LOG_WARN("job {}: {}", job.name, st.message());
      } else {
        LS_LOG_WARN("job {}: run history for `lakesync status` is not kept: {}", job.name, state.status().message());
      }
      std::unique_ptr<RunMetrics> metrics;
      if (!a->metrics_listen.empty()) {
        ARROW_ASSIGN_OR_RAISE(metrics, RunMetrics::Start(a->metrics_listen, *runner));
      }
      auto refresh_status = [&] {
        // Positions and lag for the metrics, as of the end of each run (a failure keeps the last ones).
        if (!metrics) return;
        auto status = runner->StatusJson();
        if (status.ok()) metrics->RecordStatus(*status);
      };
      refresh_status();
      ProgressLine progress(isatty(STDERR_FILENO) != 0);
      engine::RunOptions options;
      options.stop = &g_stop;
      options.progress = [&](int64_t rows, int64_t from, int64_t through) { progress.Update(rows, from, through); };
      options.on_run = [&](const engine::RunSummary& summary) {
        progress.Done();
        auto json = summary.ToJson();
        Print(json.dump() + "\n");
        if (state.ok()) {
          if (auto st = (*state)->RecordRun(json); !st.ok()) LS_LOG_WARN("job {}: {}", job.name, st.message());
        }
        if (metrics) metrics->RecordRun(summary);
      };
      options.on_error = [&](const Status& error) {
        progress.Done();
        if (state.ok()) {
          (void)(*state)->RecordError(error.message(), std::string(ErrorKindName(KindOf(error))));
        }
        if (metrics) metrics->RecordError(error);
      };
      options.on_running = [&](bool running) {
        if (!metrics) return;
        metrics->SetRunning(running);
        if (!running) refresh_status();
      };
      if (a->once || (!job.every && !job.streaming)) {
        auto summary = runner->RunOnce(options);
        if (!summary.ok()) {
          options.on_error(summary.status());
          return summary.status();
        }
        options.on_run(*summary);
        return Status::OK();
      }
      LogEvent(spdlog::level::info,
               fmt::format("job {}: running {}; Ctrl-C stops after the current run", job.name,
                           job.streaming ? "continuously" : fmt::format("every {} s", job.every->count())),
               {{"event", "schedule"}, {"job", job.name}, {"streaming", job.streaming},
                {"every_seconds", job.every ? job.every->count() : 0}});
      return runner->RunRepeatedly(options);
    };
  });

  auto b = std::make_shared<Args>();
  auto* status = cli.app.add_subcommand(
      "status",
      "Show a job's committed position in the target, the source's latest commit, the lag (commits and seconds), "
      "the last run and last error on this machine and whether a run is in progress (JSON)");
  status->add_option("job", b->job, "the job file (YAML or JSON)")->required()->check(CLI::ExistingFile);
  status->add_option("--fail-if-lag", b->fail_if_lag,
                     "exit with code 5 when the oldest source commit not applied yet is older than this (e.g. 15m, "
                     "90s; a bare number is seconds)");
  AddCatalogOption(*status, cli.global);
  status->callback([&cli, b] {
    cli.action = [&cli, b]() -> Status {
      std::optional<std::chrono::seconds> limit;
      if (!b->fail_if_lag.empty()) {
        ARROW_ASSIGN_OR_RAISE(limit, engine::ParseDuration(nlohmann::json(b->fail_if_lag), "--fail-if-lag"));
      }
      ARROW_ASSIGN_OR_RAISE(auto runner, OpenJob(b->job, cli.global, "", true));
      ARROW_ASSIGN_OR_RAISE(auto json, engine::JobStatusJson(*runner));
      Print(json.dump(2) + "\n");
      if (limit && !json.value("up_to_date", true)) {
        const auto& lag = json["lag_seconds"];
        if (lag.is_null() || lag.get<double>() > static_cast<double>(limit->count())) {
          ReportError(cli, fmt::format("job {} lags {} behind its source, more than --fail-if-lag {}",
                                       runner->job().name,
                                       lag.is_null() ? std::string("an unknown time")
                                                     : fmt::format("{:.0f} s", lag.get<double>()),
                                       b->fail_if_lag),
                      kExitLagging);
          cli.exit_code = kExitLagging;
        }
      }
      return Status::OK();
    };
  });
}

}  // namespace lakesync::cli
