// The changelog source: range resolution along the main lineage, pending snapshots, batch and
// streaming readers. Reading one snapshot's change set is in snapshot_changes.cc.
#include "lakesync/iceberg/changelog/changelog_source.h"

#include <arrow/builder.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <thread>

#include "lakesync/change/change_kind.h"
#include "lakesync/common/executor.h"
#include "lakesync/common/logging.h"
#include "lakesync/iceberg/changelog/changelog_internal.h"
#include "lakesync/iceberg/expr/binder.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/scan/data_file_reader.h"
#include "lakesync/iceberg/scan/delete_loader.h"

namespace lakesync::changelog {
namespace {

bool IsReplace(const iceberg::Snapshot& s) { return s.operation() == "replace"; }

Result<std::shared_ptr<arrow::DataType>> MetadataColumnType(const std::string& name) {
  if (name == kChangeTypeColumn) return arrow::utf8();
  if (name == kChangeOrdinalColumn) return arrow::int32();
  if (name == kCommitSnapshotIdColumn || name == kCommitSequenceColumn) return arrow::int64();
  if (name == kCommitTimestampColumn) return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
  return InvalidArgument("unsupported metadata column '{}'", name);
}

// The rows of the snapshots of `pending`, in order: each snapshot is prepared on the executor while
// the one before streams (RunAhead: one prepared ahead at most) and begun (marked read) as the
// consumer reaches it. The one place where a snapshot's end is seen, so ReadAll and Follow report it
// (on_snapshot_read) and stop between snapshots alike.
class PendingRows {
 public:
  PendingRows(ChangelogSource* source, std::vector<PendingSnapshot> pending,
              const ChangelogSource::SnapshotReadCallback* on_read, const std::function<bool()>* stop)
      : source_(source),
        on_read_(on_read),
        stop_(stop),
        pending_(std::move(pending)),
        ahead_([this]() -> Result<std::optional<RunAhead<ChangelogSource::Prepared>::Unit>> {
          if (next_ >= pending_.size()) return std::nullopt;
          const bool first = next_ == 0;
          const PendingSnapshot* snapshot = &pending_[next_++];
          return std::optional<RunAhead<ChangelogSource::Prepared>::Unit>(
              [source = source_, snapshot, first, all = &pending_]() -> Result<ChangelogSource::Prepared> {
                if (first) source->LookAhead(*all);
                return source->Prepare(*snapshot);
              });
        }) {}

  // The next batch; null once the last snapshot was read, or when `stop` said so between two
  // snapshots (stopped() tells which).
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) {
    *out = nullptr;
    while (!stopped_) {
      if (!rows_) {
        // Asked between two snapshots only: after the last one the caller decides what comes next.
        if (begun_ > 0 && begun_ < pending_.size() && *stop_ && (*stop_)()) {
          stopped_ = true;
          break;
        }
        ARROW_ASSIGN_OR_RAISE(auto prepared, ahead_.Next());
        if (!prepared) break;
        current_ = prepared->pending;
        ++begun_;
        ARROW_ASSIGN_OR_RAISE(rows_, source_->Begin(std::move(*prepared)));
      }
      ARROW_RETURN_NOT_OK(rows_->ReadNext(out));
      if (*out) return Status::OK();
      // The snapshot's rows ran out: the consumer has had them all.
      rows_.reset();
      if (*on_read_) ARROW_RETURN_NOT_OK((*on_read_)(current_));
    }
    return Status::OK();
  }
  bool stopped() const { return stopped_; }

 private:
  ChangelogSource* source_;
  const ChangelogSource::SnapshotReadCallback* on_read_;  // owned by the reader, which owns this
  const std::function<bool()>* stop_;
  std::vector<PendingSnapshot> pending_;  // declared before ahead_: its units point into it
  size_t next_ = 0;
  PendingSnapshot current_;  // the snapshot rows_ belongs to
  std::shared_ptr<arrow::RecordBatchReader> rows_;
  size_t begun_ = 0;  // snapshots whose rows were reached
  bool stopped_ = false;
  RunAhead<ChangelogSource::Prepared> ahead_;  // last: destroyed first, waiting for the unit ahead
};

// Concatenates the change sets of several snapshots.
class SequenceReader : public arrow::RecordBatchReader {
 public:
  SequenceReader(ChangelogSource* source, std::vector<PendingSnapshot> pending,
                 ChangelogSource::SnapshotReadCallback on_read)
      : source_(source), on_read_(std::move(on_read)), rows_(source, std::move(pending), &on_read_, &no_stop_) {}
  std::shared_ptr<arrow::Schema> schema() const override { return source_->schema(); }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override { return rows_.ReadNext(out); }

 private:
  ChangelogSource* source_;
  ChangelogSource::SnapshotReadCallback on_read_;
  std::function<bool()> no_stop_;
  PendingRows rows_;
};

// Reads what is pending, then polls for new snapshots.
class FollowReader : public arrow::RecordBatchReader {
 public:
  FollowReader(ChangelogSource* source, std::chrono::milliseconds interval, std::function<bool()> stop,
               ChangelogSource::SnapshotReadCallback on_read)
      : source_(source), interval_(interval), stop_(std::move(stop)), on_read_(std::move(on_read)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return source_->schema(); }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    *out = nullptr;
    while (true) {
      if (snapshots_) {
        ARROW_RETURN_NOT_OK(snapshots_->ReadNext(out));
        if (*out) return Status::OK();
        if (snapshots_->stopped()) return Status::OK();
        // Nothing is being prepared any more: the table may be refreshed below.
        snapshots_.reset();
      }
      if (source_->reached_end() || (stop_ && stop_())) return Status::OK();
      if (polled_) {
        // Sleep in short steps so a stop request is seen promptly.
        auto until = std::chrono::steady_clock::now() + interval_;
        while (std::chrono::steady_clock::now() < until) {
          if (stop_ && stop_()) return Status::OK();
          std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(
              std::chrono::milliseconds(100), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                  until - std::chrono::steady_clock::now()) +
                                                  std::chrono::milliseconds(1)));
        }
        ARROW_RETURN_NOT_OK(source_->Refresh());
      }
      polled_ = true;
      ARROW_ASSIGN_OR_RAISE(auto pending, source_->Pending());
      snapshots_ = std::make_unique<PendingRows>(source_, std::move(pending), &on_read_, &stop_);
    }
  }

 private:
  ChangelogSource* source_;
  std::chrono::milliseconds interval_;
  std::function<bool()> stop_;
  ChangelogSource::SnapshotReadCallback on_read_;
  bool polled_ = false;
  std::unique_ptr<PendingRows> snapshots_;
};

}  // namespace

ChangelogOptions OptionsFromConfig(const ChangelogConfig& config) {
  ChangelogOptions o;
  o.start_snapshot_id = config.start_snapshot_id;
  o.start_inclusive = true;  // Beam's from_snapshot and `latest` include the snapshot itself
  o.start_timestamp_ms = config.start_timestamp_ms;
  o.end_snapshot_id = config.end_snapshot_id;
  o.end_timestamp_ms = config.end_timestamp_ms;
  o.starting_strategy = config.EffectiveStartingStrategy();
  o.metadata_columns = config.metadata_columns.value_or(std::vector<std::string>{});
  o.equality_columns = config.equality_columns;
  o.filter = config.filter;
  o.keep = config.keep;
  o.drop = config.drop;
  return o;
}

Result<std::unique_ptr<ChangelogSource>> OpenChangelogSource(const ChangelogConfig& config,
                                                             std::optional<int64_t> after_sequence_number) {
  catalog::CatalogConfig catalog_config;
  if (auto given = config.catalog()) {
    catalog_config = *given;
  } else {
    ARROW_ASSIGN_OR_RAISE(catalog_config, catalog::DefaultCatalogConfig());
  }
  ARROW_ASSIGN_OR_RAISE(auto catalog, catalog::LoadCatalog(catalog_config));
  ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(config.table));
  LS_ASSIGN_OR_RAISE_CTX(auto table, table::Table::Load(catalog, id), "opening the changelog source {}", config.table);
  ChangelogOptions options = OptionsFromConfig(config);
  options.after_sequence_number = after_sequence_number;
  LS_ASSIGN_OR_RAISE_CTX(auto source, ChangelogSource::Make(table, std::move(options)),
                         "opening the changelog source {}", config.table);
  return source;
}

Result<std::shared_ptr<const PlanMap>> ChangelogSource::Shared::PlanOf(const iceberg::SnapshotPtr& snapshot) {
  if (!snapshot) return std::make_shared<const PlanMap>();
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (cached_snapshot_id == snapshot->snapshot_id) return cached_plan;
  }
  ARROW_ASSIGN_OR_RAISE(auto plan, PlanUncached(snapshot));
  std::lock_guard<std::mutex> lock(mutex);
  cached_snapshot_id = snapshot->snapshot_id;
  cached_plan = plan;
  return cached_plan;
}

Result<std::shared_ptr<const PlanMap>> ChangelogSource::Shared::PlanUncached(
    const iceberg::SnapshotPtr& snapshot) const {
  if (!snapshot) return std::make_shared<const PlanMap>();
  table::ScanOptions options;
  options.snapshot_id = snapshot->snapshot_id;
  options.filter = filter_text;  // prunes files by partition and metrics; rows are filtered when read
  ARROW_ASSIGN_OR_RAISE(auto scan, table::TableScan::Make(table, options));
  LS_ASSIGN_OR_RAISE_CTX(auto tasks, scan->PlanFiles(), "planning snapshot {} of {}", snapshot->snapshot_id,
                         table->name());
  auto plan = std::make_shared<PlanMap>();
  for (auto& task : tasks) {
    std::string path = task.file->file_path;
    if (!plan->emplace(path, std::move(task)).second) {
      return Corrupt("data file {} is live twice in snapshot {} of {}", path, snapshot->snapshot_id, table->name());
    }
  }
  return std::shared_ptr<const PlanMap>(std::move(plan));
}

Result<std::unique_ptr<ChangelogSource>> ChangelogSource::Make(std::shared_ptr<table::Table> table,
                                                               ChangelogOptions options) {
  const auto& m = *table->metadata();
  if (m.format_version < 2) {
    return InvalidArgument(
        "table {} has format version {}; the changelog needs format version 2 or 3 (sequence numbers)",
        table->name(), m.format_version);
  }
  ARROW_RETURN_NOT_OK(CheckMetadataColumns("metadata columns", options.metadata_columns));
  if (!options.keep.empty() && !options.drop.empty()) {
    return InvalidArgument("keep and drop are mutually exclusive");
  }
  std::unique_ptr<ChangelogSource> source(new ChangelogSource());
  auto shared = std::make_shared<Shared>();
  shared->table = table;
  shared->schema = m.Schema();
  const auto& fields = shared->schema->fields();
  auto index_of = [&](const std::string& name, std::string_view what) -> Result<int> {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].name == name) return static_cast<int>(i);
    }
    std::vector<std::string> names;
    for (const auto& f : fields) names.push_back(f.name);
    return InvalidArgument("{} names column '{}', which table {} does not have (columns: {})", what, name,
                           table->name(), fmt::join(names, ", "));
  };
  // Output table columns.
  if (!options.keep.empty()) {
    for (const auto& name : options.keep) {
      ARROW_ASSIGN_OR_RAISE(int i, index_of(name, "keep"));
      shared->output_columns.push_back(i);
    }
  } else {
    std::set<int> dropped;
    for (const auto& name : options.drop) {
      ARROW_ASSIGN_OR_RAISE(int i, index_of(name, "drop"));
      dropped.insert(i);
    }
    for (size_t i = 0; i < fields.size(); ++i) {
      if (!dropped.count(static_cast<int>(i))) shared->output_columns.push_back(static_cast<int>(i));
    }
  }
  // Keys: the given equality columns, else the identifier fields.
  if (!options.equality_columns.empty()) {
    for (const auto& name : options.equality_columns) {
      ARROW_ASSIGN_OR_RAISE(int i, index_of(name, "equality_columns"));
      shared->key_columns.push_back(i);
    }
  } else {
    for (int32_t id : shared->schema->identifier_field_ids()) {
      const int i = shared->schema->TopLevelIndex(id);
      if (i < 0) {
        return Unsupported("identifier field {} of table {} is nested; give equality_columns", id, table->name());
      }
      shared->key_columns.push_back(i);
    }
  }
  for (int i : shared->key_columns) source->key_names_.push_back(fields[static_cast<size_t>(i)].name);
  for (int i : shared->key_columns) {
    if (std::find(shared->output_columns.begin(), shared->output_columns.end(), i) == shared->output_columns.end()) {
      return InvalidArgument("key column '{}' must not be dropped from the output",
                             fields[static_cast<size_t>(i)].name);
    }
  }
  shared->filter_text = options.filter;
  if (!options.filter.empty()) {
    LS_ASSIGN_OR_RAISE_CTX(shared->filter, iceberg::ParseAndBind(options.filter, *shared->schema, true),
                           "invalid filter");
  }
  ARROW_ASSIGN_OR_RAISE(shared->read_arrow_schema, iceberg::ToArrowSchema(*shared->schema));
  std::vector<iceberg::NestedField> out_fields;
  for (int i : shared->output_columns) out_fields.push_back(fields[static_cast<size_t>(i)]);
  iceberg::Schema out_schema(shared->schema->schema_id(), out_fields);
  ARROW_ASSIGN_OR_RAISE(auto arrow_out, iceberg::ToArrowSchema(out_schema, /*uuid_extension=*/true));
  for (const auto& name : options.metadata_columns) {
    if (arrow_out->GetFieldIndex(name) >= 0) {
      return InvalidArgument("metadata column {} clashes with a column of table {}", name, table->name());
    }
    ARROW_ASSIGN_OR_RAISE(auto type, MetadataColumnType(name));
    ARROW_ASSIGN_OR_RAISE(arrow_out, arrow_out->AddField(arrow_out->num_fields(), arrow::field(name, type, false)));
  }
  shared->output_schema = arrow_out;
  shared->emitted_schema = arrow_out;
  if (const int at = arrow_out->GetFieldIndex(kChangeTypeColumn); at >= 0 && options.change_type_as_dictionary) {
    arrow::StringBuilder names;
    // Entry i names the kind whose value is i: Emit appends static_cast<int8_t>(kind).
    for (int8_t code = 0; code <= static_cast<int8_t>(change::ChangeKind::kDelete); ++code) {
      ARROW_RETURN_NOT_OK(names.Append(change::ChangeKindName(static_cast<change::ChangeKind>(code))));
    }
    ARROW_ASSIGN_OR_RAISE(shared->change_type_names, names.Finish());
    ARROW_ASSIGN_OR_RAISE(shared->emitted_schema,
                          arrow_out->SetField(at, arrow::field(kChangeTypeColumn,
                                                               arrow::dictionary(arrow::int8(), arrow::utf8()), false)));
  }
  shared->metadata_columns = options.metadata_columns;
  shared->batch_rows = options.batch_rows;
  shared->cache_budget_bytes = options.cache_budget_bytes;
  shared->rows_ahead.set_budget_bytes(options.look_ahead_budget_bytes);

  source->table_ = std::move(table);
  source->options_ = std::move(options);
  source->shared_ = std::move(shared);
  source->output_schema_ = source->shared_->output_schema;
  // Resolve the start now: `latest` means the snapshot current when the source opened, and range
  // errors should surface before anything is read.
  ARROW_RETURN_NOT_OK(source->Pending().status());
  return source;
}

Status ChangelogSource::Refresh() { return table_->Refresh(); }

const SnapshotReadStats& ChangelogSource::last_stats() const { return shared_->last_stats; }

// The snapshots from the end bound back to the oldest one retained, oldest first. Sets
// *end_sequence to the end's sequence number (or -1 when the table has no snapshot).
Result<std::vector<iceberg::SnapshotPtr>> ChangelogSource::Lineage(int64_t* end_sequence) const {
  const auto& m = *table_->metadata();
  iceberg::SnapshotPtr end;
  if (options_.end_snapshot_id) {
    end = m.SnapshotById(*options_.end_snapshot_id);
    if (!end) {
      return NotFound("table {} has no snapshot {} (end bound; unknown or expired)", table_->name(),
                      *options_.end_snapshot_id);
    }
  } else {
    end = m.SnapshotForRef(iceberg::kMainBranch);
  }
  std::vector<iceberg::SnapshotPtr> lineage;
  if (end) {
    lineage = m.Ancestors(end->snapshot_id);
    std::reverse(lineage.begin(), lineage.end());
  }
  if (options_.end_timestamp_ms) {
    while (!lineage.empty() && lineage.back()->timestamp_ms > *options_.end_timestamp_ms) lineage.pop_back();
  }
  *end_sequence = lineage.empty() ? -1 : lineage.back()->sequence_number;
  return lineage;
}

Result<std::vector<PendingSnapshot>> ChangelogSource::Pending() {
  const auto& m = *table_->metadata();
  int64_t end_sequence = -1;
  ARROW_ASSIGN_OR_RAISE(auto lineage, Lineage(&end_sequence));
  if (!start_resolved_) {
    if (options_.after_sequence_number) {
      start_after_ = *options_.after_sequence_number;
    } else if (options_.start_snapshot_id) {
      auto start = m.SnapshotById(*options_.start_snapshot_id);
      if (!start) {
        return NotFound("table {} has no snapshot {} (start bound; unknown or expired)", table_->name(),
                        *options_.start_snapshot_id);
      }
      const bool ancestor = std::any_of(lineage.begin(), lineage.end(), [&](const iceberg::SnapshotPtr& s) {
        return s->snapshot_id == start->snapshot_id;
      });
      if (!ancestor) {
        return InvalidArgument("start snapshot {} is not an ancestor of the end snapshot {} of table {}",
                               start->snapshot_id,
                               lineage.empty() ? std::string("(none)") : std::to_string(lineage.back()->snapshot_id),
                               table_->name());
      }
      start_after_ = options_.start_inclusive ? start->sequence_number - 1 : start->sequence_number;
    } else if (options_.start_timestamp_ms) {
      start_after_ = end_sequence;  // nothing when no snapshot is that recent
      for (const auto& s : lineage) {
        if (s->timestamp_ms >= *options_.start_timestamp_ms) {
          start_after_ = s->sequence_number - 1;
          break;
        }
      }
    } else if (options_.starting_strategy == StartingStrategy::kLatest) {
      auto current = m.SnapshotForRef(iceberg::kMainBranch);
      if (!current) {
        start_after_ = -1;
      } else {
        start_after_ = options_.start_inclusive ? current->sequence_number - 1 : current->sequence_number;
      }
    } else {
      start_after_ = -1;  // earliest: the whole retained history
    }
    start_resolved_ = true;
  }
  const int64_t after = position_ ? std::max(*position_, *start_after_) : *start_after_;
  // Reading a snapshot needs its parent's state: a range that starts at a snapshot whose parent
  // expired cannot be computed.
  if (!lineage.empty() && lineage.front()->parent_snapshot_id && lineage.front()->sequence_number > after) {
    return InvalidArgument(
        "table {}: the changelog range includes snapshot {}, whose parent {} has expired; start at a later "
        "snapshot (a child of {})",
        table_->name(), lineage.front()->snapshot_id, *lineage.front()->parent_snapshot_id,
        lineage.front()->snapshot_id);
  }
  // Some writers (pyiceberg's expire_snapshots) drop the parent id of the oldest snapshot kept. A
  // parentless snapshot whose data files were committed before it has lost its parent too.
  if (!lineage.empty() && !lineage.front()->parent_snapshot_id && lineage.front()->sequence_number > after &&
      lineage.front()->sequence_number > 1) {
    const auto& root = lineage.front();
    ARROW_ASSIGN_OR_RAISE(auto plan, shared_->PlanOf(root));
    for (const auto& [path, task] : *plan) {
      if (task.data_sequence_number > 0 && task.data_sequence_number < root->sequence_number) {
        return InvalidArgument(
            "table {}: the changelog range includes snapshot {}, whose parent has expired (it has no parent "
            "but holds {}, committed at sequence number {}); start at a later snapshot (a child of {})",
            table_->name(), root->snapshot_id, path, task.data_sequence_number, root->snapshot_id);
      }
    }
  }
  std::vector<PendingSnapshot> out;
  int32_t ordinal = next_ordinal_;
  for (const auto& s : lineage) {
    if (s->sequence_number <= after) continue;
    if (IsReplace(*s)) continue;
    out.push_back(PendingSnapshot{s, ordinal++});
  }
  // A bounded range is complete once its end is read; an unbounded stream never ends.
  reached_end_ = (options_.end_snapshot_id || options_.end_timestamp_ms) && out.empty() &&
                 (end_sequence <= after || end_sequence < 0) &&
                 (options_.end_snapshot_id.has_value() || [&] {
                   // With an end timestamp, the end is final once a later snapshot exists.
                   auto current = m.SnapshotForRef(iceberg::kMainBranch);
                   return current && current->timestamp_ms > *options_.end_timestamp_ms;
                 }());
  return out;
}

Status ChangelogSource::CheckNotRead(const PendingSnapshot& pending) const {
  if (position_ && pending.snapshot->sequence_number <= *position_) {
    return InvalidArgument("snapshot {} (sequence number {}) was already read; the source is at {}",
                           pending.snapshot->snapshot_id, pending.snapshot->sequence_number, *position_);
  }
  return Status::OK();
}

Result<std::shared_ptr<arrow::RecordBatchReader>> ChangelogSource::Read(const PendingSnapshot& pending) {
  // Checked before preparing too: preparing a snapshot already read would replace the deleted
  // positions the next one starts from.
  ARROW_RETURN_NOT_OK(CheckNotRead(pending));
  ARROW_ASSIGN_OR_RAISE(auto prepared, Prepare(pending));
  return Begin(std::move(prepared));
}

Result<ChangelogSource::Prepared> ChangelogSource::Prepare(const PendingSnapshot& pending) const {
  ARROW_ASSIGN_OR_RAISE(auto rows, ReadSnapshotChanges(shared_, pending));
  return Prepared{pending, std::move(rows)};
}

void ChangelogSource::LookAhead(const std::vector<PendingSnapshot>& pending) const {
  auto& ahead = shared_->rows_ahead;
  ahead.SetRangeEnd(nullptr);
  shared_->range_context = nullptr;
  shared_->range_metadata = nullptr;
  // One snapshot has no later one to keep rows for.
  if (pending.size() < 2 || ahead.budget_bytes() <= 0) return;
  const auto& end = pending.back().snapshot;
  auto loaded = [&]() -> Status {
    LS_ASSIGN_OR_RAISE_CTX(auto plan, shared_->PlanUncached(end), "planning snapshot {}", end->snapshot_id);
    const iceberg::TableMetadataPtr metadata = table_->metadata();
    ARROW_ASSIGN_OR_RAISE(auto context, iceberg::ScanContext::Make(table_->io(), *metadata, shared_->schema));
    auto positions = std::make_shared<RowsAhead::PositionsByFile>();
    for (const auto& [path, task] : *plan) {
      if (!task.deletion_vector && task.position_deletes.empty()) continue;
      LS_ASSIGN_OR_RAISE_CTX(auto deleted,
                             context->deletes->DeletedPositions(path, task.deletion_vector, task.position_deletes),
                             "loading the deletes of {} in snapshot {}", path, end->snapshot_id);
      if (!deleted.IsEmpty()) positions->emplace(path, std::move(deleted));
    }
    ahead.SetRangeEnd(std::move(positions));
    shared_->range_context = std::move(context);
    shared_->range_metadata = metadata;
    return Status::OK();
  }();
  if (!loaded.ok()) {
    // Only an optimization: the snapshot that needs what failed to load reports it in its place.
    LS_LOG_DEBUG("changelog of {}: not keeping rows ahead ({})", table_->name(), loaded.ToString());
  }
}

Result<std::shared_ptr<arrow::RecordBatchReader>> ChangelogSource::Begin(Prepared prepared) {
  ARROW_RETURN_NOT_OK(CheckNotRead(prepared.pending));
  position_ = prepared.pending.snapshot->sequence_number;
  next_ordinal_ = prepared.pending.ordinal + 1;
  return std::move(prepared.rows);
}

Result<std::shared_ptr<arrow::RecordBatchReader>> ChangelogSource::ReadAll(SnapshotReadCallback on_snapshot_read) {
  ARROW_ASSIGN_OR_RAISE(auto pending, Pending());
  return std::make_shared<SequenceReader>(this, std::move(pending), std::move(on_snapshot_read));
}

Result<std::shared_ptr<arrow::RecordBatchReader>> ChangelogSource::Follow(std::chrono::milliseconds poll_interval,
                                                                          std::function<bool()> stop,
                                                                          SnapshotReadCallback on_snapshot_read) {
  return std::make_shared<FollowReader>(this, poll_interval, std::move(stop), std::move(on_snapshot_read));
}

}  // namespace lakesync::changelog
