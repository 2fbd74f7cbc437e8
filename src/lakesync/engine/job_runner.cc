#include "lakesync/engine/job_runner.h"

#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <thread>

#include "lakesync/common/logging.h"
#include "lakesync/engine/lag.h"
#include "lakesync/engine/target_check.h"
#include "lakesync/iceberg/model/literal.h"
#include "lakesync/sink/table_template.h"

namespace lakesync::engine {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

// Passes batches through, reporting rows read; optionally drops the named columns (control
// columns of a snapshot import into an append-mode sink).
class ObservedReader : public arrow::RecordBatchReader {
 public:
  ObservedReader(std::shared_ptr<arrow::RecordBatchReader> inner, std::vector<std::string> drop,
                 std::function<void(int64_t)> on_rows)
      : inner_(std::move(inner)), on_rows_(std::move(on_rows)) {
    const auto& schema = inner_->schema();
    arrow::FieldVector fields;
    for (int i = 0; i < schema->num_fields(); ++i) {
      if (std::find(drop.begin(), drop.end(), schema->field(i)->name()) != drop.end()) continue;
      keep_.push_back(i);
      fields.push_back(schema->field(i));
    }
    schema_ = arrow::schema(fields, schema->metadata());
  }
  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  lakesync::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    ARROW_RETURN_NOT_OK(inner_->ReadNext(out));
    if (!*out) return lakesync::Status::OK();
    rows_ += (*out)->num_rows();
    if (on_rows_) on_rows_(rows_);
    if (static_cast<int>(keep_.size()) != (*out)->num_columns()) {
      ARROW_ASSIGN_OR_RAISE(*out, (*out)->SelectColumns(keep_));
    }
    return lakesync::Status::OK();
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> inner_;
  std::function<void(int64_t)> on_rows_;
  std::vector<int> keep_;
  std::shared_ptr<arrow::Schema> schema_;
  int64_t rows_ = 0;
};

Json ApplyJson(const sink::ApplyResult& r) {
  Json tables = Json::array();
  int64_t data_files = 0, delete_files = 0, bytes = 0;
  for (const auto& t : r.tables) {
    tables.push_back(sink::TableApplyResultToJson(t));
    data_files += t.data_files;
    delete_files += t.delete_files;
    bytes += t.data_bytes;
  }
  const auto& c = r.changes;
  return {{"tables", tables},
          {"rows", {{"total", c.changes}, {"insert", c.inserts}, {"update_before", c.update_befores},
                    {"update_after", c.update_afters}, {"delete", c.deletes}}},
          {"files", {{"data", data_files}, {"delete", delete_files}}},
          {"bytes", bytes},
          {"dead_letters", r.dead_letters}};
}

bool IsSinkIdCharacter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

// Waits `seconds` of backoff, but not past a stop request.
void WaitUnlessStopped(double seconds, const std::atomic<bool>* stop) {
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (!(stop && stop->load()) && Clock::now() < until) {
    std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(100)));
  }
}

constexpr double kMaxBackoffSeconds = 60;

bool AllSkipped(const sink::ApplyResult& r) {
  if (r.tables.empty()) return false;
  for (const auto& t : r.tables) {
    if (!t.skipped) return false;
  }
  return true;
}

}  // namespace

bool IsTransient(const lakesync::Status& status) {
  switch (KindOf(status)) {
    // Not kCommitConflict: the commit loop (table::SnapshotUpdate) owns commit retries and has spent
    // the table's retry budget when a conflict gets here; running the whole job again would nest a
    // second retry loop around it.
    case ErrorKind::kUnavailable:
    case ErrorKind::kIO:
    // Safe to run again: if the commit did land, the next attempt finds its position and skips.
    case ErrorKind::kCommitStateUnknown:
      return true;
    default:
      return false;
  }
}

std::string DefaultSinkId(std::string_view source_identity, std::string_view target_table) {
  std::string id = fmt::format("{}.{}", source_identity, target_table);
  for (char& c : id) {
    if (!IsSinkIdCharacter(c)) c = '_';
  }
  return id.substr(0, sink::kMaxSinkIdLength);
}

Json RunSummary::ToJson() const {
  Json j = {{"job", job}, {"sink_id", sink_id}, {"target", target}, {"source", source}, {"status", status},
            {"duration_seconds", duration_seconds}, {"attempts", attempts}};
  j["committed_before"] = committed_before ? Json(*committed_before) : Json(nullptr);
  j["range"] = from ? Json{{"from", *from}, {"through", *through}} : Json(nullptr);
  if (initial_snapshot) j["initial_snapshot"] = true;
  if (!message.empty()) j["message"] = message;
  j.update(ApplyJson(apply));
  std::optional<int64_t> snapshot;
  for (const auto& t : apply.tables) {
    if (t.snapshot_id) snapshot = t.snapshot_id;
  }
  j["snapshot_id"] = snapshot ? Json(*snapshot) : Json(nullptr);
  if (!maintenance.is_null()) j["maintenance"] = maintenance;
  return j;
}

std::string RunSummary::Describe() const {
  if (status != "committed") {
    return fmt::format("job {}: {} ({} -> {}){}{}", job, status, source, target, message.empty() ? "" : ": ",
                       message);
  }
  const auto& c = apply.changes;
  std::optional<int64_t> snapshot;
  int64_t written = 0, deleted = 0;
  for (const auto& t : apply.tables) {
    if (t.snapshot_id) snapshot = t.snapshot_id;
    written += t.rows_written;
    deleted += t.rows_deleted;
  }
  std::string what;
  if (initial_snapshot) {
    what = fmt::format("imported {} rows of {} as of position {}", written, source, *through);
  } else {
    what = fmt::format("applied positions {}..{} of {}: {} inserted, {} updated, {} deleted ({} rows written, {} "
                       "removed)",
                       *from, *through, source, c.inserts, c.update_afters, c.deletes, written, deleted);
  }
  return fmt::format("job {}: {} to {}; snapshot {}; {:.2f} s", job, what, target,
                     snapshot ? std::to_string(*snapshot) : "-", duration_seconds);
}

JobRunner::JobRunner(JobConfig job, std::shared_ptr<catalog::Catalog> catalog, std::unique_ptr<ChangeSource> source,
                     std::string source_identity)
    : job_(std::move(job)),
      catalog_(std::move(catalog)),
      source_(std::move(source)),
      source_identity_(std::move(source_identity)) {}

Result<std::unique_ptr<JobRunner>> JobRunner::Make(JobConfig job, std::shared_ptr<catalog::Catalog> catalog,
                                                   SourceOpener open_source, const OpenOptions& options) {
  // Opening the source reads it (a Delta log, an Iceberg table's metadata): during an outage that is
  // a transient failure, retried here like a failed run (RunOnceWithRetries) rather than ending the job.
  auto open = [&]() -> Result<std::pair<std::unique_ptr<ChangeSource>, std::string>> {
    ARROW_ASSIGN_OR_RAISE(auto source, open_source(job, catalog));
    LS_ASSIGN_OR_RAISE_CTX(std::string identity, source->Identity(), "{}: reading the identity of the {}",
                           job.location, source->Describe());
    return std::make_pair(std::move(source), std::move(identity));
  };
  double backoff = job.retry.initial_backoff_seconds;
  auto opened = open();
  for (int attempt = 1; !opened.ok(); ++attempt) {
    const bool stopped = options.stop && options.stop->load();
    if (!IsTransient(opened.status()) || stopped || (!options.keep_trying && attempt >= job.retry.max_attempts)) {
      return opened.status();
    }
    const std::string of = options.keep_trying ? "" : fmt::format(" of {}", job.retry.max_attempts);
    LogEvent(spdlog::level::warn,
             fmt::format("job {}: cannot open the source yet (attempt {}{}), retrying in {:.1f} s: {}", job.name,
                         attempt, of, backoff, opened.status().message()),
             {{"event", "retry"}, {"job", job.name}, {"stage", "open-source"}, {"attempt", attempt},
              {"backoff_seconds", backoff}, {"error", opened.status().message()},
              {"error_kind", std::string(ErrorKindName(KindOf(opened.status())))}});
    WaitUnlessStopped(backoff, options.stop);
    backoff = std::min(backoff * 2, kMaxBackoffSeconds);
    opened = open();
  }
  auto [source, identity] = std::move(*opened);
  if (auto from_sink = job.sink.catalog()) {
    ARROW_ASSIGN_OR_RAISE(catalog, catalog::LoadCatalog(*from_sink));
  }
  if (!job.sink.sink_id) job.sink.sink_id = DefaultSinkId(identity, job.sink.table);
  return std::unique_ptr<JobRunner>(
      new JobRunner(std::move(job), std::move(catalog), std::move(source), std::move(identity)));
}

Result<std::optional<int64_t>> JobRunner::CommittedOrdinal() {
  const std::string& sink_id = *job_.sink.sink_id;
  LS_ASSIGN_OR_RAISE_CTX(auto targets, InspectTargets(*catalog_, job_.sink.table), "{}", job_.location);
  // A template routes rows to several tables of one namespace: resume from the least advanced table
  // that carries this sink's progress. (Where the catalog commits several tables atomically they
  // carry the same position; elsewhere they commit one after another, and a table ahead of the others
  // re-applies the changes it already has, which merge-on-read by key makes harmless.)
  std::optional<int64_t> least;
  for (const auto& t : targets) {
    auto it = t.sinks.find(sink_id);
    if (it == t.sinks.end()) continue;
    if (!least || it->second.ordinal < *least) least = it->second.ordinal;
  }
  return least;
}

Result<RunPlan> JobRunner::Plan() {
  RunPlan plan;
  ARROW_ASSIGN_OR_RAISE(plan.committed_before, CommittedOrdinal());
  ARROW_ASSIGN_OR_RAISE(plan.latest, source_->Latest());
  ARROW_ASSIGN_OR_RAISE(auto end, source_->EndOrdinal());
  auto nothing = [&](std::string message) {
    plan.nothing_new = true;
    plan.message = std::move(message);
    return plan;
  };
  if (!plan.latest) return nothing("the source has no commits yet");
  const int64_t limit = end ? std::min(*end, *plan.latest) : *plan.latest;
  const auto& committed = plan.committed_before;

  bool import = !IsCdcSource(job_.source_type) || (job_.initial_snapshot && !committed);
  bool skip_import = false;
  if (!committed) {
    // A first run: make sure the target does not already hold this source (or someone else's).
    LS_ASSIGN_OR_RAISE_CTX(auto targets, InspectTargets(*catalog_, job_.sink.table), "{}", job_.location);
    ARROW_ASSIGN_OR_RAISE(auto decision, DecideFirstRun(job_, *job_.sink.sink_id, import, targets));
    if (decision == FirstRun::kSkipImport) {
      skip_import = import;
      import = false;
    }
    plan.overwrite = decision == FirstRun::kOverwrite;
  }
  if (import) {
    if (committed) {
      return nothing(fmt::format("the {} import was already committed at position {}",
                                 SourceTypeName(job_.source_type), *committed));
    }
    ARROW_ASSIGN_OR_RAISE(auto at, source_->FirstOrdinal());
    if (!at) return nothing("no source commit matches the configured start yet");
    plan.from = plan.through = *at;
    plan.initial_snapshot = true;
  } else {
    if (skip_import && !IsCdcSource(job_.source_type)) {
      return nothing("the target is not empty and initial_snapshot.if_target_not_empty is skip: nothing imported");
    }
    std::optional<int64_t> first;
    if (committed) {
      ARROW_ASSIGN_OR_RAISE(first, source_->NextAfter(*committed));
    } else if (skip_import) {
      // The target holds the source as of the start bound: continue after it.
      ARROW_ASSIGN_OR_RAISE(auto at, source_->FirstOrdinal());
      if (at) {
        ARROW_ASSIGN_OR_RAISE(first, source_->NextAfter(*at));
      }
    } else {
      ARROW_ASSIGN_OR_RAISE(first, source_->FirstOrdinal());
    }
    if (!first || *first > limit) {
      return nothing(committed ? fmt::format("nothing after position {} (source latest {})", *committed, *plan.latest)
                               : "no source commit matches the configured start yet");
    }
    plan.from = *first;
    plan.through = limit;
  }
  plan.position = source_->PositionText(plan.through);
  return plan;
}

Result<std::vector<ReadTask>> JobRunner::Tasks(const RunPlan& plan) {
  std::vector<ReadTask> tasks;
  if (plan.nothing_new) return tasks;
  if (plan.initial_snapshot) {
    tasks.push_back({plan.from, plan.through, true});
    return tasks;
  }
  std::optional<int64_t> at = plan.from;
  while (at && *at <= plan.through) {
    tasks.push_back({*at, *at, false});
    ARROW_ASSIGN_OR_RAISE(at, source_->NextAfter(*at));
  }
  return tasks;
}

Result<std::shared_ptr<arrow::RecordBatchReader>> JobRunner::Read(const ReadTask& task) {
  std::shared_ptr<arrow::RecordBatchReader> changes;
  if (task.snapshot) {
    ARROW_ASSIGN_OR_RAISE(changes, source_->ReadSnapshot(task.from));
  } else {
    ARROW_ASSIGN_OR_RAISE(changes, source_->ReadChanges(task.from, task.through));
  }
  if (job_.sink.mode == sink::WriteMode::kAppend && task.snapshot) {
    return std::make_shared<ObservedReader>(
        changes, std::vector<std::string>{source_->change_type_column(), source_->sequence_column()}, nullptr);
  }
  return changes;
}

Result<sink::SinkConfig> JobRunner::SinkConfigForRun(int64_t started_ms) {
  sink::SinkConfig config = job_.sink;
  config.snapshot_properties[kSummaryRunStartMs] = std::to_string(started_ms);
  if (config.mode != sink::WriteMode::kMergeOnRead || !config.equality_columns.empty()) return config;
  auto keys = source_->IdentifierColumns();
  if (keys.empty()) return config;
  if (!sink::IsTemplate(config.table)) {
    ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(config.table));
    ARROW_ASSIGN_OR_RAISE(bool exists, catalog_->TableExists(id));
    // An existing target keeps its own identifier fields (the sink's default).
    if (exists) return config;
  }
  LS_LOG_DEBUG("job {}: equality_columns from the source's identifier fields: {}", job_.name, fmt::join(keys, ", "));
  config.equality_columns = std::move(keys);
  return config;
}

Result<RunSummary> JobRunner::RunOnceAttempt(const RunOptions& options) {
  const auto started = Clock::now();
  const int64_t started_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  RunSummary summary;
  summary.job = job_.name;
  summary.sink_id = *job_.sink.sink_id;
  summary.target = job_.sink.table;
  summary.source = source_->Describe();
  auto finish = [&](std::string status, std::string message) {
    summary.status = std::move(status);
    summary.message = std::move(message);
    summary.duration_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return summary;
  };

  ARROW_ASSIGN_OR_RAISE(auto plan, Plan());
  summary.committed_before = plan.committed_before;
  if (plan.nothing_new) return finish("nothing-new", plan.message);
  const int64_t from = plan.from, through = plan.through;
  summary.from = from;
  summary.through = through;
  summary.initial_snapshot = plan.initial_snapshot;
  if (!plan.initial_snapshot && !plan.overwrite && job_.schema_evolution == sink::SchemaEvolution::kAdditive) {
    ARROW_ASSIGN_OR_RAISE(auto applied, ApplyBySchema(plan, options, started_ms));
    summary.apply = std::move(applied);
    if (AllSkipped(summary.apply)) return finish("skipped", summary.apply.tables.front().message);
    return finish("committed", "");
  }
  ARROW_ASSIGN_OR_RAISE(auto changes, Read(ReadTask{from, through, plan.initial_snapshot}));
  if (plan.overwrite) {
    LS_ASSIGN_OR_RAISE_CTX(auto targets, InspectTargets(*catalog_, job_.sink.table), "{}", job_.location);
    for (const auto& t : targets) {
      LS_LOG_WARN("job {}: removing the rows of {} before the import (initial_snapshot.if_target_not_empty: "
                  "overwrite)", job_.name, t.id.ToString());
      ARROW_RETURN_NOT_OK(ClearTable(catalog_, t.id));
    }
  }
  auto observed = std::make_shared<ObservedReader>(changes, std::vector<std::string>{}, [&](int64_t rows) {
    if (options.progress) options.progress(rows, from, through);
  });
  ARROW_ASSIGN_OR_RAISE(auto config, SinkConfigForRun(started_ms));
  ARROW_ASSIGN_OR_RAISE(auto writer, sink::CdcWriter::Make(catalog_, std::move(config)));
  sink::ApplyOptions apply;
  apply.source_position = plan.position;
  apply.source_name = summary.source;
  apply.schema_evolution = job_.schema_evolution;
  ARROW_ASSIGN_OR_RAISE(summary.apply, writer->Apply(*observed, apply));
  if (AllSkipped(summary.apply)) {
    return finish("skipped", summary.apply.tables.front().message);
  }
  return finish("committed", "");
}

namespace {

// One run's applies, one per part of its range, summed into one result (one entry per table: counts
// added, the last part's snapshot).
void AddApply(sink::ApplyResult& total, sink::ApplyResult part) {
  for (auto& t : part.tables) {
    auto it = std::find_if(total.tables.begin(), total.tables.end(), [&](const auto& x) { return x.table == t.table; });
    if (it == total.tables.end()) {
      total.tables.push_back(std::move(t));
      continue;
    }
    it->created |= t.created;
    if (!t.skipped) {
      it->skipped = false;
      it->message = t.message;
    }
    if (t.snapshot_id) it->snapshot_id = t.snapshot_id;
    it->rows_written += t.rows_written;
    it->rows_deleted += t.rows_deleted;
    it->missing_deletes += t.missing_deletes;
    it->data_files += t.data_files;
    it->delete_files += t.delete_files;
    it->data_bytes += t.data_bytes;
    it->attempts += t.attempts;
  }
  total.changes += part.changes;
  total.dead_letters += part.dead_letters;
  if (!part.dead_letter_location.empty()) total.dead_letter_location = part.dead_letter_location;
}

}  // namespace

Result<std::vector<RunPart>> JobRunner::Parts(const RunPlan& plan) {
  std::vector<RunPart> parts;
  if (plan.nothing_new) return parts;
  if (plan.initial_snapshot || plan.overwrite || job_.schema_evolution != sink::SchemaEvolution::kAdditive) {
    parts.push_back({plan.from, plan.through, plan.position, {}});
    return parts;
  }
  // A range that crosses schema changes is applied in parts, one per schema, each committed with its
  // own position: the rows before a change are written with the schema they had (the columns added
  // later are null in them), and each part's commit carries the schema change it needs with its
  // snapshot. A failure in a later part leaves the earlier parts committed; the next run resumes
  // after the last committed part.
  ARROW_ASSIGN_OR_RAISE(auto changes_at, source_->SchemaChangesIn(plan.from, plan.through));
  int64_t start = plan.from;
  for (int64_t at : changes_at) {
    if (at <= start || at > plan.through) continue;
    parts.push_back({start, at - 1, source_->PositionText(at - 1), {}});
    start = at;
  }
  parts.push_back({start, plan.through, source_->PositionText(plan.through), {}});
  if (parts.size() > 1) {
    LS_LOG_INFO("job {}: the source's schema changes at position(s) {} inside {}..{}; applying {} parts, each "
                "committed with its own schema", job_.name, fmt::join(changes_at, ", "), plan.from, plan.through,
                parts.size());
  }
  std::optional<int64_t> before = plan.committed_before;
  for (auto& part : parts) {
    if (before) {
      LS_ASSIGN_OR_RAISE_CTX(part.renames, source_->RenamesSince(*before, part.from),
                             "{}: looking for renamed columns", job_.location);
    }
    before = part.through;
  }
  return parts;
}

Result<sink::ApplyResult> JobRunner::ApplyBySchema(const RunPlan& plan, const RunOptions& options,
                                                  int64_t started_ms) {
  ARROW_ASSIGN_OR_RAISE(auto parts, Parts(plan));
  ARROW_ASSIGN_OR_RAISE(auto config, SinkConfigForRun(started_ms));
  sink::ApplyResult total;
  for (const auto& part : parts) {
    const int64_t from = part.from, through = part.through;
    sink::ApplyOptions apply;
    apply.source_position = part.position;
    apply.source_name = source_->Describe();
    apply.schema_evolution = job_.schema_evolution;
    apply.column_renames = part.renames;
    ARROW_ASSIGN_OR_RAISE(auto changes, Read(ReadTask{from, through, false}));
    auto observed = std::make_shared<ObservedReader>(changes, std::vector<std::string>{}, [&](int64_t rows) {
      if (options.progress) options.progress(rows, from, through);
    });
    ARROW_ASSIGN_OR_RAISE(auto writer, sink::CdcWriter::Make(catalog_, config));
    LS_ASSIGN_OR_RAISE_CTX(auto result, writer->Apply(*observed, apply), "applying positions {}..{}", from, through);
    AddApply(total, std::move(result));
  }
  return total;
}

void JobRunner::RunMaintenanceAfter(RunSummary& summary) {
  if (!job_.maintenance) return;
  // The tables this run wrote; a run that found nothing new maintains the sink's table all the same
  // (expiry and orphan removal are due by time, not by writes).
  std::vector<std::string> tables;
  for (const auto& t : summary.apply.tables) tables.push_back(t.table);
  if (tables.empty() && !sink::IsTemplate(job_.sink.table)) tables.push_back(job_.sink.table);
  auto now = MaintenanceNowMs();
  summary.maintenance = Json::object();
  for (const auto& name : tables) {
    auto id = catalog::TableIdentifier::Parse(name);
    if (!now.ok() || !id.ok()) {
      summary.maintenance[name] = {{"error", (!now.ok() ? now.status() : id.status()).message()}};
      continue;
    }
    if (!catalog_->TableExists(*id).ValueOr(false)) continue;
    summary.maintenance[name] = RunMaintenance(*job_.maintenance, catalog_, *id, *now);
  }
}

void JobRunner::LogRun(const RunSummary& summary, bool repeated) const {
  // The facts of the summary line as flat fields (log collectors filter on scalars).
  const auto& c = summary.apply.changes;
  int64_t written = 0, removed = 0;
  std::optional<int64_t> snapshot;
  for (const auto& t : summary.apply.tables) {
    written += t.rows_written;
    removed += t.rows_deleted;
    if (t.snapshot_id) snapshot = t.snapshot_id;
  }
  Json fields = {{"event", "run"},
                 {"job", summary.job},
                 {"sink_id", summary.sink_id},
                 {"target", summary.target},
                 {"status", summary.status},
                 {"duration_seconds", summary.duration_seconds},
                 {"attempts", summary.attempts}};
  if (summary.from) {
    fields["from"] = *summary.from;
    fields["through"] = *summary.through;
  }
  if (summary.committed_before) fields["committed_before"] = *summary.committed_before;
  if (summary.initial_snapshot) fields["initial_snapshot"] = true;
  if (summary.status == "committed") {
    fields["rows"] = c.changes;
    fields["inserted"] = c.inserts;
    fields["updated"] = c.update_afters;
    fields["deleted"] = c.deletes;
    fields["rows_written"] = written;
    fields["rows_removed"] = removed;
  }
  if (snapshot) fields["snapshot_id"] = *snapshot;
  // In a schedule or a stream, a poll that finds nothing is not news.
  const auto level =
      summary.status == "nothing-new" && repeated ? spdlog::level::debug : spdlog::level::info;
  LogEvent(level, summary.Describe(), fields);
}

Result<RunSummary> JobRunner::RunOnce(const RunOptions& options) {
  if (options.on_running) options.on_running(true);
  auto result = RunOnceWithRetries(options);
  if (options.on_running) options.on_running(false);
  return result;
}

Result<RunSummary> JobRunner::RunOnceWithRetries(const RunOptions& options) {
  double backoff = job_.retry.initial_backoff_seconds;
  auto stopped = [&] { return options.stop && options.stop->load(); };
  for (int attempt = 1;; ++attempt) {
    auto result = RunOnceAttempt(options);
    if (result.ok()) {
      result->attempts = attempt;
      // An initial import is followed at once by the changes after it, so one run leaves the target
      // current (the import's own summary is reported through on_run).
      if (result->initial_snapshot && result->status == "committed" && IsCdcSource(job_.source_type)) {
        LogRun(*result, false);
        if (options.on_run) options.on_run(*result);
        return RunOnceWithRetries(options);
      }
      RunMaintenanceAfter(*result);
      LogRun(*result, repeating_);
      return result;
    }
    if (!IsTransient(result.status()) || attempt >= job_.retry.max_attempts || stopped()) return result.status();
    LogEvent(spdlog::level::warn,
             fmt::format("job {}: attempt {} of {} failed, retrying in {:.1f} s: {}", job_.name, attempt,
                         job_.retry.max_attempts, backoff, result.status().message()),
             {{"event", "retry"}, {"job", job_.name}, {"attempt", attempt}, {"max_attempts", job_.retry.max_attempts},
              {"backoff_seconds", backoff}, {"error", result.status().message()},
              {"error_kind", std::string(ErrorKindName(KindOf(result.status())))}});
    WaitUnlessStopped(backoff, options.stop);
    backoff = std::min(backoff * 2, kMaxBackoffSeconds);
  }
}

lakesync::Status JobRunner::RunRepeatedly(const RunOptions& options) {
  std::chrono::duration<double> interval;
  if (job_.streaming) {
    interval = std::chrono::duration<double>(job_.sink.triggering_frequency_seconds
                                                 ? *job_.sink.triggering_frequency_seconds
                                                 : source_->poll_interval_seconds());
  } else if (job_.every) {
    interval = *job_.every;
  } else {
    return InvalidArgument("{}: the job has neither a schedule nor streaming: run it once", job_.location);
  }
  auto stopped = [&] { return options.stop && options.stop->load(); };
  repeating_ = true;
  auto next = Clock::now();
  while (!stopped()) {
    auto result = RunOnce(options);
    if (!result.ok()) {
      if (options.on_error) options.on_error(result.status());
      if (!IsTransient(result.status())) return result.status();
      LogEvent(spdlog::level::err,
               fmt::format("job {}: run failed after {} attempts, trying again at the next tick: {}", job_.name,
                           job_.retry.max_attempts, result.status().message()),
               {{"event", "run-failed"}, {"job", job_.name}, {"error", result.status().message()},
                {"error_kind", std::string(ErrorKindName(KindOf(result.status())))}});
    } else {
      if (options.on_run && result->status != "nothing-new") options.on_run(*result);
      ARROW_ASSIGN_OR_RAISE(auto end, source_->EndOrdinal());
      const auto reached = result->through ? result->through : result->committed_before;
      if (end && reached && *reached >= *end) return lakesync::Status::OK();  // a bounded stream is done
    }
    // The next tick on the grid; ticks missed by a slow run are skipped, never queued.
    const auto now = Clock::now();
    do {
      next += std::chrono::duration_cast<Clock::duration>(interval);
    } while (next <= now);
    while (!stopped() && Clock::now() < next) {
      std::this_thread::sleep_for(std::min<Clock::duration>(next - Clock::now(), std::chrono::milliseconds(200)));
    }
  }
  return lakesync::Status::OK();
}

Result<Json> JobRunner::StatusJson() {
  ARROW_ASSIGN_OR_RAISE(auto committed, CommittedOrdinal());
  ARROW_ASSIGN_OR_RAISE(auto latest, source_->Latest());
  Json j = {{"job", job_.name}, {"source", source_->Describe()}, {"sink_table", job_.sink.table},
            {"sink_id", *job_.sink.sink_id}, {"sink_id_derived", !job_.sink_id_given}};
  j["committed_position"] = committed ? Json(*committed) : Json(nullptr);
  j["source_latest"] = latest ? Json(*latest) : Json(nullptr);
  j["lag_seconds"] = nullptr;
  if (latest) {
    std::optional<int64_t> pending_from;
    if (committed) {
      ARROW_ASSIGN_OR_RAISE(pending_from, source_->NextAfter(*committed));
    } else {
      ARROW_ASSIGN_OR_RAISE(pending_from, source_->FirstOrdinal());
    }
    // The oldest pending commit (with its time) and the latest one are all the lag needs (lag.h).
    std::vector<SourceCommit> pending;
    if (pending_from && *pending_from <= *latest) {
      ARROW_ASSIGN_OR_RAISE(auto waiting_since, source_->CommitTimestampMs(*pending_from));
      pending.push_back({*pending_from, waiting_since});
      if (*latest != *pending_from) pending.push_back({*latest, std::nullopt});
    }
    int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    // A commit stamped ahead of this machine's clock is pending all the same (waiting 0 s).
    if (!pending.empty() && pending.front().timestamp_ms) now_ms = std::max(now_ms, *pending.front().timestamp_ms);
    const Lag lag = LagAt(pending, committed, now_ms);
    j["up_to_date"] = lag.up_to_date;
    j["lag"] = committed ? Json(*latest - *committed) : Json(nullptr);
    if (lag.seconds) j["lag_seconds"] = *lag.seconds;
  }
  if (committed) {
    ARROW_ASSIGN_OR_RAISE(auto at, source_->CommitTimestampMs(*committed));
    if (at) j["committed_position_time"] = iceberg::FormatTimestamp(*at * 1000, false, false) + "Z";
  }
  return j;
}

Result<Json> JobRunner::DryRun() {
  ARROW_ASSIGN_OR_RAISE(auto plan, Plan());
  auto count = [](std::shared_ptr<arrow::RecordBatchReader> reader) -> Result<int64_t> {
    int64_t rows = 0;
    std::shared_ptr<arrow::RecordBatch> batch;
    while (true) {
      ARROW_RETURN_NOT_OK(reader->ReadNext(&batch));
      if (!batch) return rows;
      rows += batch->num_rows();
    }
  };
  LS_ASSIGN_OR_RAISE_CTX(auto targets, InspectTargets(*catalog_, job_.sink.table), "{}", job_.location);
  Json tables = Json::array();
  for (const auto& t : targets) {
    Json sinks = Json::object();
    for (const auto& [id, position] : t.sinks) sinks[id] = position.text;
    tables.push_back({{"table", t.id.ToString()}, {"records", t.records},
                      {"live_records", t.live_records ? Json(*t.live_records) : Json(nullptr)}, {"sinks", sinks}});
  }
  Json j = {{"dry_run", true},
            {"job", job_.name},
            {"source", source_->Describe()},
            {"source_identity", source_identity_},
            {"sink_id", *job_.sink.sink_id},
            {"sink_id_derived", !job_.sink_id_given},
            {"catalog", catalog_->name()},
            {"target", job_.sink.table},
            {"target_tables", tables}};
  j["committed_position"] = plan.committed_before ? Json(*plan.committed_before) : Json(nullptr);
  j["source_latest"] = plan.latest ? Json(*plan.latest) : Json(nullptr);
  Json steps = Json::array();
  if (plan.nothing_new) {
    j["message"] = plan.message;
  } else if (plan.initial_snapshot) {
    ARROW_ASSIGN_OR_RAISE(auto reader, source_->ReadSnapshot(plan.from));
    ARROW_ASSIGN_OR_RAISE(int64_t rows, count(reader));
    steps.push_back({{"step", "import"}, {"position", plan.from}, {"changes", rows}, {"overwrite", plan.overwrite}});
    if (IsCdcSource(job_.source_type)) {
      ARROW_ASSIGN_OR_RAISE(auto end, source_->EndOrdinal());
      const int64_t limit = end ? std::min(*end, *plan.latest) : *plan.latest;
      ARROW_ASSIGN_OR_RAISE(auto next, source_->NextAfter(plan.from));
      if (next && *next <= limit) {
        ARROW_ASSIGN_OR_RAISE(auto changes, source_->ReadChanges(*next, limit));
        ARROW_ASSIGN_OR_RAISE(int64_t n, count(changes));
        steps.push_back({{"step", "changes"}, {"from", *next}, {"through", limit}, {"changes", n}});
      }
    }
  } else {
    ARROW_ASSIGN_OR_RAISE(auto changes, source_->ReadChanges(plan.from, plan.through));
    ARROW_ASSIGN_OR_RAISE(int64_t n, count(changes));
    steps.push_back({{"step", "changes"}, {"from", plan.from}, {"through", plan.through}, {"changes", n}});
  }
  j["steps"] = steps;
  return j;
}

}  // namespace lakesync::engine
