// Runs a sync job: reads the source's commits after the position the sink committed to the target,
// applies them in one commit (per destination table) that records the new position, and repeats on
// a schedule or continuously. The position lives only in the target's snapshot summaries, so a run
// that crashes anywhere is simply run again: nothing is lost or applied twice.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lakesync/catalog/catalog.h"
#include "lakesync/engine/change_source.h"
#include "lakesync/engine/job_config.h"
#include "lakesync/sink/cdc_writer.h"

namespace lakesync::engine {

// Snapshot summary key a job's commits carry beside the sink's position: when the run that made the
// commit started (ms since the epoch), so a run's duration can be read from the target alone (the
// snapshot's timestamp-ms minus this; the dashboard's job page shows it). The sink reserves the
// "lakesync." prefix for lakesync's own bookkeeping.
inline constexpr char kSummaryRunStartMs[] = "lakesync.run-start-ms";

// What one run did; ToJson() is the machine-readable summary line.
struct RunSummary {
  std::string job;
  std::string sink_id;
  std::string target;       // the sink's table (or template)
  std::string source;
  std::string status;  // "committed", "nothing-new", "skipped" (another run committed it first)
  std::string message;
  std::optional<int64_t> committed_before;  // position found at the start of the run
  std::optional<int64_t> from, through;     // source range applied (ordinals, inclusive)
  bool initial_snapshot = false;            // the run imported the source's snapshot at `through`
  sink::ApplyResult apply;
  double duration_seconds = 0;
  int attempts = 1;
  // What the job's maintenance block did after the run, per table (null without one): a failure
  // there is reported here and never changes `status`.
  nlohmann::json maintenance;
  nlohmann::json ToJson() const;
  // One sentence for logs: what was applied from where to where ("applied versions 4..9 of delta
  // table /d/orders to shop.orders: 600 inserted, 500 updated, 400 deleted; snapshot 52...; 0.41 s").
  std::string Describe() const;
};

// Called as rows flow from the source, for progress displays: rows read so far, ordinal range.
using ProgressCallback = std::function<void(int64_t rows, int64_t from, int64_t through)>;

struct RunOptions {
  ProgressCallback progress;                  // may be empty
  const std::atomic<bool>* stop = nullptr;    // set (e.g. by SIGTERM) to end a schedule or stream loop
  // Called after every run of a schedule or a stream that did something (committed, or found its
  // commit already made), and after every RunOnce; runs that found nothing new in a schedule or a
  // stream are logged at debug level only, not reported here.
  std::function<void(const RunSummary&)> on_run;
  // Called when a run of a schedule or a stream failed after its retries (the loop goes on for
  // transient errors), and when a permanent error ends it.
  std::function<void(const Status&)> on_error;
  // Called with true when a run starts and false when it has ended, however it ended (metrics).
  std::function<void(bool running)> on_running;
};

// Opens the source a job names; `catalog` is the job's default catalog (an Iceberg source without
// catalog_properties reads from it). Errors: InvalidArgument naming the key for a bad source block.
using SourceOpener =
    std::function<Result<std::unique_ptr<ChangeSource>>(const JobConfig&, std::shared_ptr<catalog::Catalog>)>;

// What one run will read: the source range after the committed position (or the import).
struct RunPlan {
  std::optional<int64_t> committed_before;  // position found at the start of the run
  bool nothing_new = false;                 // then `message` says why and nothing is read
  std::string message;
  bool initial_snapshot = false;            // import the source's snapshot at `from` (== through)
  int64_t from = 0, through = 0;            // ordinals, inclusive
  std::string position;                     // the position text the commit records (of `through`)
  std::optional<int64_t> latest;            // the source's latest commit when planned
  // A first run into a non-empty target with initial_snapshot.if_target_not_empty: overwrite: the
  // target's rows are removed before the import (RunOnce does; target_check.h decides).
  bool overwrite = false;
};

// One unit of reading: the commits with ordinals in [from, through] (or the snapshot at `from`).
// Workers of a distributed run read tasks in parallel (docs/scale-out.md).
struct ReadTask {
  int64_t from = 0, through = 0;
  bool snapshot = false;
};

// One part of a run's range (schema_evolution, docs/jobs.md): commits the source reads with one
// schema, applied and committed on their own with their own position. `renames`: the columns the
// source renamed since the commit before `from` (old → new), for the sink to follow by id.
struct RunPart {
  int64_t from = 0, through = 0;
  std::string position;  // the position text of `through`
  std::map<std::string, std::string> renames;
};

// How JobRunner::Make treats a source it cannot open yet (its storage or catalog unreachable: a
// transient error). Such a failure is retried with the job's retry policy, as a run is; a job that
// repeats keeps trying, so a scheduled job started during an outage waits it out instead of exiting.
struct OpenOptions {
  bool keep_trying = false;                 // schedules and streams: retry transient failures until `stop`
  const std::atomic<bool>* stop = nullptr;  // set (Ctrl-C): give up now with the last error
};

class JobRunner {
 public:
  // `catalog`: the job's default catalog: where the sink writes unless its catalog_properties name
  // another, and where an Iceberg source reads unless its own do.
  static Result<std::unique_ptr<JobRunner>> Make(JobConfig job, std::shared_ptr<catalog::Catalog> catalog,
                                                 SourceOpener open_source, const OpenOptions& options = {});

  // One run, with transient failures retried per the job's retry policy.
  Result<RunSummary> RunOnce(const RunOptions& options = {});

  // RunOnce every `job.every` (runs never overlap; missed ticks are skipped, not queued) or, for a
  // streaming job, continuously at the source's poll interval (or the sink's
  // triggering_frequency_seconds). Returns when `options.stop` is set, or with the first permanent
  // error; transient errors that outlast the retries are logged and the next tick tries again.
  Status RunRepeatedly(const RunOptions& options);

  // The committed position for the job's sink, the source's latest commit and the lag between them
  // (in commits, and in seconds since the oldest commit not applied yet).
  Result<nlohmann::json> StatusJson();

  // A run's steps, for a distributed run (RunOnce is Plan, Read of the whole range, and one apply).
  // Plan: the range after the sink's committed position (a first run checks the target first, as
  // target_check.h says, and may refuse). Tasks: the plan cut into one task per
  // source commit (or the import as one task). Read: one task's changes, shaped for the sink (the
  // control columns of an import into an append-mode sink dropped).
  Result<RunPlan> Plan();
  Result<std::vector<ReadTask>> Tasks(const RunPlan& plan);
  // Parts: the plan's range split at the source's schema changes (SchemaChangesIn) with the renames
  // each part follows, under schema_evolution additive; otherwise (and for an import or overwrite)
  // the whole range as one part. The CLI's run and the Beam driver both apply these parts in order.
  Result<std::vector<RunPart>> Parts(const RunPlan& plan);
  Result<std::shared_ptr<arrow::RecordBatchReader>> Read(const ReadTask& task);
  std::string DescribeSource() const { return source_->Describe(); }
  // The job's source, for readers of its commit history (the dashboard's lag over time, lag.h).
  ChangeSource& source() { return *source_; }

  // What a run would do now, without writing anything: the sink_id, target and catalog, the
  // committed position, and each step (an import, the changes after it) with its source range and
  // the number of change rows, counted by reading the source. A run that would be refused fails
  // the same way here.
  Result<nlohmann::json> DryRun();

  const JobConfig& job() const { return job_; }
  // The sink id progress is recorded under: the job's sink_id, or the one derived from the source's
  // identity and the target table (DefaultSinkId).
  const std::string& sink_id() const { return *job_.sink.sink_id; }
  bool sink_id_derived() const { return !job_.sink_id_given; }
  const std::string& source_identity() const { return source_identity_; }
  const std::shared_ptr<catalog::Catalog>& catalog() const { return catalog_; }

 private:
  JobRunner(JobConfig job, std::shared_ptr<catalog::Catalog> catalog, std::unique_ptr<ChangeSource> source,
            std::string source_identity);
  Result<RunSummary> RunOnceAttempt(const RunOptions& options);
  Result<RunSummary> RunOnceWithRetries(const RunOptions& options);
  Result<std::optional<int64_t>> CommittedOrdinal();
  // The sink options for this run: equality_columns from the source's identifier fields when the job
  // names none and the target does not exist yet; the run's start (kSummaryRunStartMs) for every
  // commit's summary.
  Result<sink::SinkConfig> SinkConfigForRun(int64_t started_ms);
  // schema_evolution additive: applies the plan's range in parts split at the source's schema changes.
  Result<sink::ApplyResult> ApplyBySchema(const RunPlan& plan, const RunOptions& options, int64_t started_ms);
  void LogRun(const RunSummary& summary, bool repeated) const;
  // The maintenance block on the run's target tables, after its commit (job_maintenance.h).
  void RunMaintenanceAfter(RunSummary& summary);

  JobConfig job_;
  std::shared_ptr<catalog::Catalog> catalog_;
  std::unique_ptr<ChangeSource> source_;
  std::string source_identity_;
  bool repeating_ = false;  // in RunRepeatedly: polls that find nothing are logged at debug only
};

// The default sink id: the source's identity (ChangeSource::Identity) and the target table, as one
// token of the characters sink ids allow ("<uuid>.<namespace>.<table>"), at most
// sink::kMaxSinkIdLength long. Never the job's name or file name: renaming or copying a job file
// must not make it forget its progress.
std::string DefaultSinkId(std::string_view source_identity, std::string_view target_table);

// Transient: worth running again (object store or catalog unavailable, I/O hiccups, a commit whose
// outcome is unknown). Commit conflicts are not: the commit loop has retried them already.
bool IsTransient(const lakesync::Status& status);

}  // namespace lakesync::engine
