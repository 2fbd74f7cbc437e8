#include "lakesync/engine/iceberg_source.h"

#include <arrow/api.h>
#include <fmt/format.h>

#include <functional>

#include "lakesync/common/config_keys.h"
#include "lakesync/common/logging.h"
#include "lakesync/engine/snapshot_as_inserts.h"
#include "lakesync/engine/source_keys.h"
#include "lakesync/iceberg/changelog/changelog_source.h"
#include "lakesync/iceberg/model/literal.h"
#include "lakesync/table/scan.h"

namespace lakesync::engine {
namespace {

using Json = nlohmann::json;
namespace cl = lakesync::changelog;

class IcebergSource : public ChangeSource {
 public:
  IcebergSource(std::shared_ptr<catalog::Catalog> catalog, catalog::TableIdentifier id, cl::ChangelogOptions options,
                std::optional<int64_t> import_snapshot_id, std::optional<int64_t> import_timestamp_ms,
                double poll_interval)
      : catalog_(std::move(catalog)),
        id_(std::move(id)),
        options_(std::move(options)),
        import_snapshot_id_(import_snapshot_id),
        import_timestamp_ms_(import_timestamp_ms),
        poll_interval_(poll_interval) {}

  bool import_only_ = false;  // an `iceberg` import rather than `iceberg_cdc`

  Status Init() {
    ARROW_ASSIGN_OR_RAISE(table_, table::Table::Load(catalog_, id_));
    // Validates columns, filter and bounds once, up front.
    ARROW_ASSIGN_OR_RAISE(auto probe, cl::ChangelogSource::Make(table_, options_));
    schema_ = probe->schema();
    return Status::OK();
  }

  // Beam's watermark_column: an existing, required, top-level long or timestamp column.
  Status CheckWatermarkColumn(const std::string& name) const {
    auto schema = table_->metadata()->Schema();
    const auto* field = schema->FindFieldByName(name);
    const bool top_level = std::any_of(schema->fields().begin(), schema->fields().end(),
                                       [&](const auto& f) { return f.name == name; });
    if (!field || !top_level) return InvalidArgument("watermark_column '{}' is not a top-level column", name);
    if (!field->required) return InvalidArgument("watermark_column '{}' must be a required column", name);
    const auto type = field->type->ToString();
    if (type != "long" && type.rfind("timestamp", 0) != 0) {
      return InvalidArgument("watermark_column '{}' must be a long or a timestamp column, not {}", name, type);
    }
    return Status::OK();
  }

  std::string Describe() const override { return fmt::format("iceberg table {}", id_.ToString()); }

  Result<std::string> Identity() override {
    ARROW_ASSIGN_OR_RAISE(table_, table::Table::Load(catalog_, id_));
    return table_->metadata()->table_uuid;
  }

  std::vector<std::string> IdentifierColumns() const override {
    std::vector<std::string> out;
    if (!table_) return out;
    auto schema = table_->metadata()->Schema();
    for (int32_t id : schema->identifier_field_ids()) out.push_back(schema->FindColumnName(id));
    return out;
  }

  Result<std::optional<int64_t>> CommitTimestampMs(int64_t ordinal) override {
    ARROW_ASSIGN_OR_RAISE(table_, table::Table::Load(catalog_, id_));
    auto snapshot = SnapshotWithSequence(ordinal);
    if (!snapshot.ok()) return std::optional<int64_t>();
    return std::optional<int64_t>((*snapshot)->timestamp_ms);
  }

  Result<std::optional<int64_t>> Latest() override {
    ARROW_ASSIGN_OR_RAISE(table_, table::Table::Load(catalog_, id_));
    auto current = table_->metadata()->CurrentSnapshot();
    if (!current) return std::optional<int64_t>();
    return std::optional<int64_t>(current->sequence_number);
  }

  Result<std::optional<int64_t>> FirstOrdinal() override {
    if (import_snapshot_id_ || import_timestamp_ms_) {
      ARROW_ASSIGN_OR_RAISE(auto snapshot, ImportSnapshot());
      return std::optional<int64_t>(snapshot->sequence_number);
    }
    if (import_only_) return Latest();  // an import without a bound reads the current snapshot
    ARROW_ASSIGN_OR_RAISE(auto pending, Pending(options_));
    if (pending.empty()) {
      // An import (or an initial snapshot) of a table whose start bound selects nothing reads the
      // current snapshot; a changelog simply has nothing yet.
      return std::optional<int64_t>();
    }
    return std::optional<int64_t>(pending.front().snapshot->sequence_number);
  }

  Result<std::optional<int64_t>> EndOrdinal() override {
    if (!options_.end_snapshot_id && !options_.end_timestamp_ms) return std::optional<int64_t>();
    ARROW_ASSIGN_OR_RAISE(auto pending, Pending(options_));
    if (pending.empty()) return std::optional<int64_t>();
    return std::optional<int64_t>(pending.back().snapshot->sequence_number);
  }

  Result<std::optional<int64_t>> NextAfter(int64_t ordinal) override {
    cl::ChangelogOptions o = options_;
    o.after_sequence_number = ordinal;
    ARROW_ASSIGN_OR_RAISE(auto pending, Pending(o));
    if (pending.empty()) return std::optional<int64_t>();
    return std::optional<int64_t>(pending.front().snapshot->sequence_number);
  }

  Result<std::shared_ptr<arrow::RecordBatchReader>> ReadChanges(int64_t from, int64_t through) override {
    ARROW_ASSIGN_OR_RAISE(table_, table::Table::Load(catalog_, id_));
    cl::ChangelogOptions o = options_;
    o.after_sequence_number = from - 1;
    ARROW_ASSIGN_OR_RAISE(auto end, SnapshotWithSequence(through));
    o.end_snapshot_id = end->snapshot_id;
    o.end_timestamp_ms.reset();
    ARROW_ASSIGN_OR_RAISE(auto source, cl::ChangelogSource::Make(table_, o));
    ARROW_ASSIGN_OR_RAISE(auto reader, source->ReadAll());
    // The reader reads through the source; keep it alive with the reader.
    return std::make_shared<OwningReader>(std::move(source), std::move(reader));
  }

  Result<std::map<std::string, std::string>> RenamesSince(int64_t before, int64_t /*at*/) override {
    // Reads project every snapshot to the current schema: a field id (a column's, or a nested
    // field's at any depth) whose own name differs between the schema of snapshot `before` and the
    // current one was renamed; listed by full path, old → new ("st.a" → "st.b").
    std::map<std::string, std::string> renames;
    ARROW_ASSIGN_OR_RAISE(table_, table::Table::Load(catalog_, id_));
    const auto& m = *table_->metadata();
    auto snapshot = SnapshotWithSequence(before);
    if (!snapshot.ok() || !(*snapshot)->schema_id) return renames;  // expired, or no schema recorded
    auto old_schema = m.SchemaById(*(*snapshot)->schema_id);
    auto current = m.Schema();
    if (!old_schema || !current) return renames;
    std::function<void(const std::vector<iceberg::NestedField>&)> visit = [&](const auto& fields) {
      for (const auto& f : fields) {
        const iceberg::NestedField* now = current->FindFieldById(f.id);
        if (now && now->name != f.name) renames[old_schema->FindColumnName(f.id)] = current->FindColumnName(f.id);
        if (f.type->is_nested()) visit(f.type->fields());
      }
    };
    visit(old_schema->fields());
    return renames;
  }

  Result<std::shared_ptr<arrow::RecordBatchReader>> ReadSnapshot(int64_t ordinal) override {
    ARROW_ASSIGN_OR_RAISE(table_, table::Table::Load(catalog_, id_));
    ARROW_ASSIGN_OR_RAISE(auto snapshot, SnapshotWithSequence(ordinal));
    table::ScanOptions scan_options;
    scan_options.snapshot_id = snapshot->snapshot_id;
    scan_options.filter = options_.filter;
    const size_t metadata = options_.metadata_columns.size();
    for (int i = 0; i < schema_->num_fields() - static_cast<int>(metadata); ++i) {
      scan_options.select.push_back(schema_->field(i)->name());
    }
    ARROW_ASSIGN_OR_RAISE(auto scan, table::TableScan::Make(table_, scan_options));
    ARROW_ASSIGN_OR_RAISE(auto rows, scan->Open());
    const auto ts = std::make_shared<arrow::TimestampScalar>(snapshot->timestamp_ms * 1000,
                                                              arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"));
    return SnapshotAsInserts(std::move(rows), schema_,
                             {{cl::kChangeTypeColumn, arrow::MakeScalar("INSERT")},
                              {cl::kChangeOrdinalColumn, arrow::MakeScalar(int32_t{0})},
                              {cl::kCommitSnapshotIdColumn, arrow::MakeScalar(snapshot->snapshot_id)},
                              {cl::kCommitSequenceColumn, arrow::MakeScalar(snapshot->sequence_number)},
                              {cl::kCommitTimestampColumn, ts}});
  }

  std::string PositionText(int64_t ordinal) const override {
    // The sequence number orders positions; the snapshot id makes the position readable.
    if (table_) {
      for (const auto& s : table_->metadata()->snapshots) {
        if (s->sequence_number == ordinal) return fmt::format("{}:{}", ordinal, s->snapshot_id);
      }
    }
    return std::to_string(ordinal);
  }

  std::string change_type_column() const override { return cl::kChangeTypeColumn; }
  std::string sequence_column() const override { return cl::kCommitSequenceColumn; }
  double poll_interval_seconds() const override { return poll_interval_; }

 private:
  // Keeps the changelog source alive while its reader is read.
  class OwningReader : public arrow::RecordBatchReader {
   public:
    OwningReader(std::unique_ptr<cl::ChangelogSource> source, std::shared_ptr<arrow::RecordBatchReader> reader)
        : source_(std::move(source)), reader_(std::move(reader)) {}
    std::shared_ptr<arrow::Schema> schema() const override { return reader_->schema(); }
    Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override { return reader_->ReadNext(out); }

   private:
    std::unique_ptr<cl::ChangelogSource> source_;
    std::shared_ptr<arrow::RecordBatchReader> reader_;
  };

  Result<std::vector<cl::PendingSnapshot>> Pending(const cl::ChangelogOptions& options) {
    ARROW_ASSIGN_OR_RAISE(table_, table::Table::Load(catalog_, id_));
    ARROW_ASSIGN_OR_RAISE(auto source, cl::ChangelogSource::Make(table_, options));
    return source->Pending();
  }

  Result<iceberg::SnapshotPtr> SnapshotWithSequence(int64_t sequence) {
    auto current = table_->metadata()->CurrentSnapshot();
    if (current) {
      for (const auto& s : table_->metadata()->Ancestors(current->snapshot_id)) {
        if (s->sequence_number == sequence) return s;
      }
    }
    return NotFound("{}: no snapshot with sequence number {} on the main branch (expired?)", id_.ToString(),
                    sequence);
  }

  Result<iceberg::SnapshotPtr> ImportSnapshot() {
    ARROW_ASSIGN_OR_RAISE(table_, table::Table::Load(catalog_, id_));
    const auto& m = *table_->metadata();
    if (import_snapshot_id_) {
      auto s = m.SnapshotById(*import_snapshot_id_);
      if (!s) return NotFound("{}: source.snapshot_id {} does not exist", id_.ToString(), *import_snapshot_id_);
      return s;
    }
    iceberg::SnapshotPtr best;
    if (auto current = m.CurrentSnapshot()) {
      for (const auto& s : m.Ancestors(current->snapshot_id)) {
        if (s->timestamp_ms <= *import_timestamp_ms_ && (!best || s->timestamp_ms > best->timestamp_ms)) best = s;
      }
    }
    if (!best) return InvalidArgument("{}: no snapshot was current at source.timestamp", id_.ToString());
    return best;
  }

  std::shared_ptr<catalog::Catalog> catalog_;
  catalog::TableIdentifier id_;
  cl::ChangelogOptions options_;
  std::optional<int64_t> import_snapshot_id_, import_timestamp_ms_;
  double poll_interval_;
  std::shared_ptr<table::Table> table_;
  std::shared_ptr<arrow::Schema> schema_;
};

}  // namespace

Result<std::unique_ptr<ChangeSource>> OpenIcebergSource(const JobConfig& job, std::shared_ptr<catalog::Catalog> catalog) {
  const std::string where = job.location + ": source";
  Json block = job.source;
  block.erase("initial_snapshot");  // the engine's key
  std::optional<int64_t> import_snapshot_id, import_timestamp_ms;
  if (job.source_type == SourceType::kIceberg) {
    ARROW_RETURN_NOT_OK(CheckKnownKeys(
        block, {"table", "catalog_name", "catalog_properties", "snapshot_id", "timestamp", "filter", "keep", "drop"},
        where));
    ARROW_ASSIGN_OR_RAISE(import_snapshot_id, OptionalVersion(block, "snapshot_id", job.location));
    if (block.contains("timestamp") && !block.at("timestamp").is_null()) {
      const Json& t = block.at("timestamp");
      if (t.is_number_integer()) {
        import_timestamp_ms = t.get<int64_t>();
      } else if (t.is_string()) {
        auto micros = iceberg::ParseTimestamp(t.get<std::string>(), false);
        if (!micros.ok()) return InvalidArgument("{}.timestamp: {}", where, micros.status().message());
        import_timestamp_ms = *micros / 1000;
      } else {
        return InvalidArgument("{}.timestamp must be ISO-8601 or epoch milliseconds", where);
      }
    }
    if (import_snapshot_id && import_timestamp_ms) {
      return InvalidArgument("{}: set snapshot_id or timestamp, not both", where);
    }
    block.erase("snapshot_id");
    block.erase("timestamp");
  }
  ARROW_ASSIGN_OR_RAISE(auto config, cl::ParseChangelogConfig(block, where));
  cl::ChangelogOptions options = cl::OptionsFromConfig(config);
  // The sink needs the change kind and the sequence number; asked-for columns keep their order.
  for (const char* c : {cl::kChangeTypeColumn, cl::kCommitSequenceColumn}) {
    if (std::find(options.metadata_columns.begin(), options.metadata_columns.end(), c) ==
        options.metadata_columns.end()) {
      options.metadata_columns.push_back(c);
    }
  }
  if (auto own = config.catalog()) {
    ARROW_ASSIGN_OR_RAISE(catalog, catalog::LoadCatalog(*own));
  }
  ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(config.table));
  auto source = std::make_unique<IcebergSource>(catalog, id, options, import_snapshot_id, import_timestamp_ms,
                                                config.poll_interval_seconds);
  source->import_only_ = job.source_type == SourceType::kIceberg;
  LS_RETURN_NOT_OK_CTX(source->Init(), "{}.table {}", where, config.table);
  if (config.watermark_column) {
    LS_RETURN_NOT_OK_CTX(source->CheckWatermarkColumn(*config.watermark_column), "{}", where);
    LS_LOG_WARN("{}.watermark_column has no effect in lakesync: it stamps event times for Beam's windows, and "
                "lakesync applies changes in commit order without windows", where);
  }
  return std::unique_ptr<ChangeSource>(std::move(source));
}

}  // namespace lakesync::engine
