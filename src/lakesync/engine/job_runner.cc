#include "lakesync/engine/job_runner.h"

#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "lakesync/common/logging.h"
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

Json RunSummary::ToJson() const {
  Json j = {{"job", job}, {"source", source}, {"status", status}, {"duration_seconds", duration_seconds},
            {"attempts", attempts}};
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
  return j;
}

JobRunner::JobRunner(JobConfig job, std::shared_ptr<catalog::Catalog> catalog, std::unique_ptr<ChangeSource> source)
    : job_(std::move(job)), catalog_(std::move(catalog)), source_(std::move(source)) {}

Result<std::unique_ptr<JobRunner>> JobRunner::Make(JobConfig job, std::shared_ptr<catalog::Catalog> catalog,
                                                   SourceOpener open_source) {
  ARROW_ASSIGN_OR_RAISE(auto source, open_source(job, catalog));
  if (auto from_sink = job.sink.catalog()) {
    ARROW_ASSIGN_OR_RAISE(catalog, catalog::LoadCatalog(*from_sink));
  }
  return std::unique_ptr<JobRunner>(new JobRunner(std::move(job), std::move(catalog), std::move(source)));
}

Result<std::optional<int64_t>> JobRunner::CommittedOrdinal() {
  const std::string& sink_id = *job_.sink.sink_id;
  auto position_of = [&](const catalog::TableIdentifier& id) -> Result<std::optional<int64_t>> {
    auto loaded = catalog_->LoadTable(id);
    if (!loaded.ok()) {
      if (KindOf(loaded.status()) == ErrorKind::kNotFound) return std::optional<int64_t>();
      return loaded.status();
    }
    ARROW_ASSIGN_OR_RAISE(auto position, sink::CommittedPosition(*loaded->metadata, sink_id));
    if (!position) return std::optional<int64_t>();
    return std::optional<int64_t>(position->ordinal);
  };
  const std::string& table = job_.sink.table;
  if (!sink::IsTemplate(table)) {
    ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(table));
    return position_of(id);
  }
  // A template routes rows to several tables of one namespace: resume from the least advanced table
  // that carries this sink's progress. (Where the catalog commits several tables atomically they
  // carry the same position; elsewhere they commit one after another, and a table ahead of the others
  // re-applies the changes it already has, which merge-on-read by key makes harmless.)
  const auto dot = table.rfind('.');
  if (dot == std::string::npos || sink::IsTemplate(table.substr(0, dot))) {
    return Unsupported("{}: sink.table '{}': jobs support templates in the table name only, not in the namespace",
                       job_.location, table);
  }
  ARROW_ASSIGN_OR_RAISE(auto ns, catalog::ParseNamespace(table.substr(0, dot)));
  ARROW_ASSIGN_OR_RAISE(bool exists, catalog_->NamespaceExists(ns));
  if (!exists) return std::optional<int64_t>();
  ARROW_ASSIGN_OR_RAISE(auto ids, catalog_->ListTables(ns));
  std::optional<int64_t> least;
  for (const auto& id : ids) {
    ARROW_ASSIGN_OR_RAISE(auto position, position_of(id));
    if (position && (!least || *position < *least)) least = position;
  }
  return least;
}

Result<RunPlan> JobRunner::Plan() {
  RunPlan plan;
  ARROW_ASSIGN_OR_RAISE(plan.committed_before, CommittedOrdinal());
  ARROW_ASSIGN_OR_RAISE(auto latest, source_->Latest());
  ARROW_ASSIGN_OR_RAISE(auto end, source_->EndOrdinal());
  auto nothing = [&](std::string message) {
    plan.nothing_new = true;
    plan.message = std::move(message);
    return plan;
  };
  if (!latest) return nothing("the source has no commits yet");
  const int64_t limit = end ? std::min(*end, *latest) : *latest;
  const auto& committed = plan.committed_before;

  const bool import = !IsCdcSource(job_.source_type) || (job_.initial_snapshot && !committed);
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
    std::optional<int64_t> first;
    if (committed) {
      ARROW_ASSIGN_OR_RAISE(first, source_->NextAfter(*committed));
    } else {
      ARROW_ASSIGN_OR_RAISE(first, source_->FirstOrdinal());
    }
    if (!first || *first > limit) {
      return nothing(committed ? fmt::format("nothing after position {} (source latest {})", *committed, *latest)
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

Result<RunSummary> JobRunner::RunOnceAttempt(const RunOptions& options) {
  const auto started = Clock::now();
  RunSummary summary;
  summary.job = job_.name;
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
  ARROW_ASSIGN_OR_RAISE(auto changes, Read(ReadTask{from, through, plan.initial_snapshot}));
  auto observed = std::make_shared<ObservedReader>(changes, std::vector<std::string>{}, [&](int64_t rows) {
    if (options.progress) options.progress(rows, from, through);
  });
  ARROW_ASSIGN_OR_RAISE(auto writer, sink::CdcWriter::Make(catalog_, job_.sink));
  sink::ApplyOptions apply;
  apply.source_position = plan.position;
  apply.source_name = summary.source;
  ARROW_ASSIGN_OR_RAISE(summary.apply, writer->Apply(*observed, apply));
  if (AllSkipped(summary.apply)) {
    return finish("skipped", summary.apply.tables.front().message);
  }
  return finish("committed", "");
}

Result<RunSummary> JobRunner::RunOnce(const RunOptions& options) {
  double backoff = job_.retry.initial_backoff_seconds;
  for (int attempt = 1;; ++attempt) {
    auto result = RunOnceAttempt(options);
    if (result.ok()) {
      result->attempts = attempt;
      // An initial import is followed at once by the changes after it, so one run leaves the target
      // current (the import's own summary is reported through on_run).
      if (result->initial_snapshot && result->status == "committed" && IsCdcSource(job_.source_type)) {
        if (options.on_run) options.on_run(*result);
        return RunOnce(options);
      }
      return result;
    }
    if (!IsTransient(result.status()) || attempt >= job_.retry.max_attempts) return result.status();
    LS_LOG_WARN("job {}: attempt {} of {} failed, retrying in {:.1f} s: {}", job_.name, attempt,
                job_.retry.max_attempts, backoff, result.status().message());
    std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
    backoff = std::min(backoff * 2, 60.0);
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
  auto next = Clock::now();
  while (!stopped()) {
    auto result = RunOnce(options);
    if (!result.ok()) {
      if (!IsTransient(result.status())) return result.status();
      LS_LOG_ERROR("job {}: run failed after {} attempts, trying again at the next tick: {}", job_.name,
                   job_.retry.max_attempts, result.status().message());
    } else {
      if (options.on_run) options.on_run(*result);
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
            {"sink_id", *job_.sink.sink_id}};
  j["committed_position"] = committed ? Json(*committed) : Json(nullptr);
  j["source_latest"] = latest ? Json(*latest) : Json(nullptr);
  if (latest) {
    std::optional<int64_t> pending_from;
    if (committed) {
      ARROW_ASSIGN_OR_RAISE(pending_from, source_->NextAfter(*committed));
    } else {
      ARROW_ASSIGN_OR_RAISE(pending_from, source_->FirstOrdinal());
    }
    j["up_to_date"] = !pending_from || *pending_from > *latest;
    j["lag"] = committed ? Json(*latest - *committed) : Json(nullptr);
  }
  return j;
}

}  // namespace lakesync::engine
