// lakesync run / status: run a sync job (once, on a schedule or continuously) and show its progress.
#include <fmt/format.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>

#include "cli.h"
#include "lakesync/common/logging.h"
#include "lakesync/engine/job_runner.h"
#include "lakesync/engine/source_factory.h"

namespace lakesync::cli {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop = true; }

// One line on the terminal, redrawn: commits, rows and throughput of the current run.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  void Update(int64_t rows, int64_t from, int64_t through) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (rows_ == 0) started_ = now;
    rows_ = rows;
    if (now - drawn_ < std::chrono::milliseconds(200)) return;
    drawn_ = now;
    const double seconds = std::chrono::duration<double>(now - started_).count();
    fmt::print(stderr, "\r  commits {}..{}  rows {:>12}  {:>10.0f} rows/s ", from, through, rows,
               seconds > 0 ? rows / seconds : 0.0);
    std::fflush(stderr);
    drawn_any_ = true;
  }
  void Done() {
    if (drawn_any_) fmt::print(stderr, "\n");
    rows_ = 0;
    drawn_any_ = false;
  }

 private:
  bool enabled_;
  int64_t rows_ = 0;
  bool drawn_any_ = false;
  std::chrono::steady_clock::time_point started_, drawn_;
};

Result<std::unique_ptr<engine::JobRunner>> OpenJob(const std::string& path, const GlobalOptions& global,
                                                   const std::string& every) {
  ARROW_ASSIGN_OR_RAISE(auto job, engine::LoadJobConfigFile(path));
  if (!every.empty()) {
    ARROW_ASSIGN_OR_RAISE(auto interval, engine::ParseDuration(nlohmann::json(every), "--every"));
    if (job.streaming) return InvalidArgument("--every: {} is a streaming job, which runs continuously", path);
    job.every = interval;
  }
  for (const auto& ignored : job.sink.ignored_options) {
    LS_LOG_WARN("{}: sink option '{}' has no effect in lakesync: {}", path, ignored.key, ignored.reason);
  }
  ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(global));
  return engine::JobRunner::Make(std::move(job), std::move(catalog), engine::OpenSource);
}

}  // namespace

void RegisterRunCommands(Cli& cli) {
  struct Args {
    std::string job, every;
    bool once = false;
  };
  auto a = std::make_shared<Args>();
  auto* run = cli.app.add_subcommand(
      "run",
      "Run a sync job: apply the source's changes after the position committed in the target, once (default), on "
      "a schedule (schedule: {every: 15m} or --every) or continuously (source.streaming: true). Prints one JSON "
      "summary line per run on standard output; see docs/jobs.md");
  run->add_option("job", a->job, "the job file (YAML or JSON)")->required()->check(CLI::ExistingFile);
  run->add_option("--every", a->every, "run on this schedule (e.g. 30s, 15m, 1h), overriding the job's");
  run->add_flag("--once", a->once, "run once even if the job has a schedule or streams");
  AddCatalogOption(*run, cli.global);
  run->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto runner, OpenJob(a->job, cli.global, a->every));
      ProgressLine progress(isatty(STDERR_FILENO) != 0);
      engine::RunOptions options;
      options.progress = [&](int64_t rows, int64_t from, int64_t through) { progress.Update(rows, from, through); };
      options.on_run = [&](const engine::RunSummary& summary) {
        progress.Done();
        Print(summary.ToJson().dump() + "\n");
      };
      const auto& job = runner->job();
      if (a->once || (!job.every && !job.streaming)) {
        ARROW_ASSIGN_OR_RAISE(auto summary, runner->RunOnce(options));
        options.on_run(summary);
        return Status::OK();
      }
      std::signal(SIGINT, OnSignal);
      std::signal(SIGTERM, OnSignal);
      options.stop = &g_stop;
      LS_LOG_INFO("job {}: running {}; stop with Ctrl-C", job.name,
                  job.streaming ? "continuously" : fmt::format("every {} s", job.every->count()));
      return runner->RunRepeatedly(options);
    };
  });

  auto b = std::make_shared<Args>();
  auto* status = cli.app.add_subcommand(
      "status", "Show a job's committed position in the target, the source's latest commit and the lag (JSON)");
  status->add_option("job", b->job, "the job file (YAML or JSON)")->required()->check(CLI::ExistingFile);
  AddCatalogOption(*status, cli.global);
  status->callback([&cli, b] {
    cli.action = [&cli, b]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto runner, OpenJob(b->job, cli.global, ""));
      ARROW_ASSIGN_OR_RAISE(auto json, runner->StatusJson());
      Print(json.dump(2) + "\n");
      return Status::OK();
    };
  });
}

}  // namespace lakesync::cli
