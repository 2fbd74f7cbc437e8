// lakesync._core: the Python extension over the same module libraries as the CLI. Bindings only:
// every rule lives in the C++ core; this file converts arguments, releases the GIL around core
// calls, moves Arrow streams across the C stream interface and maps errors to exceptions.
//
// Arrow data crosses the boundary only through the Arrow C stream interface (arrow/c/bridge.h) as
// PyCapsules named "arrow_array_stream" (the PyCapsule protocol, `__arrow_c_stream__`): readers are
// exported, writers import whatever stream Python hands over (pyarrow, polars, DuckDB...). The
// extension does not link pyarrow's C++ helper library (libarrow_python): the C interface is
// ABI-stable, and the only tie to pyarrow is libarrow itself, which must be the build the extension
// was compiled against (lakesync/__init__.py checks the version before loading this module).
//
// Options arrive as JSON text (the Python layer dumps its keyword arguments): the core's own
// parsers (sink, changelog and catalog configuration) validate them, with the CLI's messages.
#include <Python.h>

#include <arrow/c/abi.h>
#include <arrow/c/bridge.h>
#include <arrow/util/config.h>
#include <arrow/record_batch.h>
#include <arrow/table.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "lakesync/catalog/catalog_config.h"
#include "lakesync/common/executor.h"
#include "lakesync/common/logging.h"
#include "lakesync/common/status.h"
#include "lakesync/common/version.h"
#include "lakesync/delta/delta_table.h"
#include "lakesync/engine/job_config.h"
#include "lakesync/engine/job_runner.h"
#include "lakesync/engine/source_factory.h"
#include "lakesync/iceberg/changelog/changelog_config.h"
#include "lakesync/iceberg/changelog/changelog_source.h"
#include "lakesync/plan/key_shards.h"
#include "lakesync/sink/cdc_writer.h"
#include "lakesync/sink/staged_apply.h"
#include "lakesync/table/scan.h"
#include "lakesync/table/table.h"

namespace nb = nanobind;
using namespace nb::literals;
using Json = nlohmann::json;

namespace lakesync::python {
namespace {

// A failed Status on its way to Python: the translator below turns it into the exception class of
// its kind (lakesync.errors), with the status message, exactly what the CLI prints after "error: "
// (bytes that are not UTF-8 escaped, so Python can make a str of it).
class StatusError : public std::exception {
 public:
  explicit StatusError(const Status& st)
      : kind_(ErrorKindName(KindOf(st))), message_(EscapeInvalidUtf8(st.message())) {}
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
  std::string message_;
};

void Check(const Status& st) {
  if (!st.ok()) throw StatusError(st);
}
template <typename T>
T Value(Result<T> result) {
  if (!result.ok()) throw StatusError(result.status());
  return std::move(result).ValueUnsafe();
}

Json ParseJson(const std::string& text, const char* what) {
  try {
    return text.empty() ? Json::object() : Json::parse(text);
  } catch (const Json::exception& e) {
    throw StatusError(InvalidArgument("{}: {}", what, e.what()));
  }
}

// --- Arrow C stream capsules ------------------------------------------------------------------

constexpr char kStreamCapsule[] = "arrow_array_stream";

void ReleaseStreamCapsule(PyObject* capsule) {
  auto* stream = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule, kStreamCapsule));
  if (stream == nullptr) {
    PyErr_Clear();
    return;
  }
  if (stream->release != nullptr) stream->release(stream);
  delete stream;
}

nb::object ExportReader(std::shared_ptr<arrow::RecordBatchReader> reader) {
  auto* stream = new ArrowArrayStream();
  stream->release = nullptr;
  auto st = arrow::ExportRecordBatchReader(std::move(reader), stream);
  if (!st.ok()) {
    delete stream;
    throw StatusError(st);
  }
  PyObject* capsule = PyCapsule_New(stream, kStreamCapsule, &ReleaseStreamCapsule);
  if (capsule == nullptr) {
    stream->release(stream);
    delete stream;
    throw nb::python_error();
  }
  return nb::steal<nb::object>(capsule);
}

// Takes the stream out of a capsule (the capsule's stream is marked released, as the protocol asks).
std::shared_ptr<arrow::RecordBatchReader> ImportReader(nb::handle capsule) {
  if (!PyCapsule_IsValid(capsule.ptr(), kStreamCapsule)) {
    throw StatusError(InvalidArgument("expected an Arrow C stream capsule (from __arrow_c_stream__)"));
  }
  auto* stream = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule.ptr(), kStreamCapsule));
  if (stream->release == nullptr) throw StatusError(InvalidArgument("the Arrow stream was already consumed"));
  return Value(arrow::ImportRecordBatchReader(stream));
}

// Keeps what a reader points into (a changelog source, a scan, a Delta table, a job's source) alive as
// long as the reader: an exported stream may outlive the Python object that made it.
class KeepAliveReader : public arrow::RecordBatchReader {
 public:
  KeepAliveReader(std::shared_ptr<void> owner, std::shared_ptr<arrow::RecordBatchReader> inner)
      : owner_(std::move(owner)), inner_(std::move(inner)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return inner_->schema(); }
  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override { return inner_->ReadNext(out); }
  Status Close() override { return inner_->Close(); }

 private:
  std::shared_ptr<void> owner_;
  std::shared_ptr<arrow::RecordBatchReader> inner_;
};

std::shared_ptr<arrow::RecordBatchReader> Owning(std::shared_ptr<void> owner,
                                                 std::shared_ptr<arrow::RecordBatchReader> reader) {
  return std::make_shared<KeepAliveReader>(std::move(owner), std::move(reader));
}

// --- Catalog ------------------------------------------------------------------------------------

class PyCatalog {
 public:
  // config_yaml: a YAML or JSON document with catalog_name and catalog_properties (the
  // --catalog-config keys); path: a file holding one; neither: the embedded default catalog.
  PyCatalog(std::optional<std::string> config_text, std::optional<std::string> path) {
    nb::gil_scoped_release release;
    if (path) {
      config_ = Value(catalog::LoadCatalogConfigFile(*path));
    } else if (config_text) {
      config_ = Value(catalog::ParseCatalogConfig(*config_text, "Catalog(config)"));
    } else {
      config_ = Value(catalog::DefaultCatalogConfig());
    }
    catalog_ = Value(catalog::LoadCatalog(config_));
  }

  const std::shared_ptr<catalog::Catalog>& catalog() const { return catalog_; }
  std::string name() const { return config_.catalog_name; }
  std::string properties_json() const { return Json(config_.catalog_properties).dump(); }
  // The resolved configuration (the embedded default made explicit), to reopen it in another process.
  std::string config_json() const {
    return Json{{"catalog_name", config_.catalog_name}, {"catalog_properties", config_.catalog_properties}}.dump();
  }

  std::vector<std::string> list_tables(const std::string& ns) {
    nb::gil_scoped_release release;
    auto parsed = Value(catalog::ParseNamespace(ns));
    std::vector<std::string> out;
    for (const auto& id : Value(catalog_->ListTables(parsed))) out.push_back(id.ToString());
    return out;
  }

  std::string metadata_location(const std::string& table) {
    nb::gil_scoped_release release;
    auto id = Value(catalog::TableIdentifier::Parse(table));
    return Value(catalog_->LoadTable(id)).metadata_location;
  }

  nb::object scan(const std::string& table, const std::string& filter, std::optional<std::vector<std::string>> columns,
                  std::optional<int64_t> snapshot_id, const std::string& ref, std::optional<int64_t> limit) {
    std::shared_ptr<arrow::RecordBatchReader> reader;
    {
      nb::gil_scoped_release release;
      auto id = Value(catalog::TableIdentifier::Parse(table));
      auto t = Value(table::Table::Load(catalog_, id));
      table::ScanOptions options;
      options.filter = filter;
      options.snapshot_id = snapshot_id;
      options.ref = ref;
      options.limit = limit;
      if (columns) options.select = *columns;
      std::shared_ptr<table::TableScan> scan = Value(table::TableScan::Make(t, options));
      reader = Owning(scan, Value(scan->Open()));
    }
    return ExportReader(std::move(reader));
  }

  nb::object iceberg_changes(const std::string& options_json) {
    auto options = ParseJson(options_json, "iceberg_changes options");
    // Not a job key: resuming after a position is the job engine's business, offered here directly.
    std::optional<int64_t> after;
    if (options.contains("after_sequence_number")) {
      if (!options["after_sequence_number"].is_null()) {
        if (!options["after_sequence_number"].is_number_integer()) {
          throw StatusError(InvalidArgument("iceberg_changes: after_sequence_number must be an integer"));
        }
        after = options["after_sequence_number"].get<int64_t>();
      }
      options.erase("after_sequence_number");
    }
    std::shared_ptr<arrow::RecordBatchReader> reader;
    {
      nb::gil_scoped_release release;
      // The job configuration's parser (Beam's keys); the CLI's default columns (all five).
      auto config = Value(changelog::ParseChangelogConfig(options, "iceberg_changes"));
      if (!config.metadata_columns) config.metadata_columns = changelog::AllMetadataColumns();
      if (config.streaming) {
        throw StatusError(InvalidArgument("iceberg_changes: streaming is not offered here; read batches of snapshots "
                                          "and resume after the last sequence number (after_sequence_number)"));
      }
      std::shared_ptr<catalog::Catalog> cat = catalog_;
      if (auto own = config.catalog()) cat = Value(catalog::LoadCatalog(*own));
      auto id = Value(catalog::TableIdentifier::Parse(config.table));
      auto t = Value(table::Table::Load(cat, id));
      auto source_options = changelog::OptionsFromConfig(config);
      if (after) source_options.after_sequence_number = after;
      std::shared_ptr<changelog::ChangelogSource> source =
          Value(changelog::ChangelogSource::Make(t, std::move(source_options)));
      reader = Owning(source, Value(source->ReadAll()));
    }
    return ExportReader(std::move(reader));
  }

  // Applies a change stream (one process, like `lakesync apply`): the summary as JSON text.
  std::string apply(nb::handle changes, const std::string& options_json, std::optional<std::string> source_position,
                    const std::string& source_name) {
    auto options = ParseJson(options_json, "apply options");
    auto reader = ImportReader(changes);
    nb::gil_scoped_release release;
    const auto started = std::chrono::steady_clock::now();
    auto config = Value(sink::ParseSinkConfig(options, "apply"));
    for (const auto& ignored : config.ignored_options) {
      LS_LOG_WARN("sink option '{}' has no effect in lakesync: {}", ignored.key, ignored.reason);
    }
    std::shared_ptr<catalog::Catalog> cat = catalog_;
    if (auto own = config.catalog()) cat = Value(catalog::LoadCatalog(*own));
    auto writer = Value(sink::CdcWriter::Make(cat, config));
    sink::ApplyOptions apply_options;
    apply_options.source_position = source_position;
    apply_options.source_name = source_name;
    auto result = Value(writer->Apply(*reader, apply_options));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return sink::ApplyResultToJson(result, seconds).dump();
  }

 private:
  catalog::CatalogConfig config_;
  std::shared_ptr<catalog::Catalog> catalog_;
};

nb::object DeltaChanges(const std::string& path, const std::string& options_json) {
  auto o = ParseJson(options_json, "delta_changes options");
  std::shared_ptr<arrow::RecordBatchReader> reader;
  {
    nb::gil_scoped_release release;
    delta::ChangeFeedOptions options;
    std::map<std::string, std::string> storage;
    try {
      auto timestamp = [](const Json& v, const char* key) -> int64_t {
        if (v.is_number_integer()) return v.get<int64_t>();
        auto parsed = delta::ParseTimestampMillis(v.get<std::string>());
        if (!parsed.ok()) throw StatusError(WithContext(parsed.status(), key));
        return *parsed;
      };
      for (const auto& [key, v] : o.items()) {
        if (v.is_null()) continue;
        if (key == "start_version") options.start_version = v.get<int64_t>();
        else if (key == "end_version") options.end_version = v.get<int64_t>();
        else if (key == "start_timestamp") options.start_timestamp_ms = timestamp(v, "start_timestamp");
        else if (key == "end_timestamp") options.end_timestamp_ms = timestamp(v, "end_timestamp");
        else if (key == "columns") options.metadata_columns = v.get<std::vector<std::string>>();
        else if (key == "storage_properties") storage = v.get<std::map<std::string, std::string>>();
        else throw StatusError(InvalidArgument("delta_changes: unknown option '{}'", key));
      }
    } catch (const Json::exception& e) {
      throw StatusError(InvalidArgument("delta_changes: {}", e.what()));
    }
    auto table = Value(delta::DeltaTable::Open(path, storage));
    reader = Owning(table, Value(table->ReadChanges(options)));
  }
  return ExportReader(std::move(reader));
}

std::shared_ptr<catalog::Catalog> CatalogOrDefault(PyCatalog* catalog) {
  if (catalog) return catalog->catalog();
  return Value(catalog::LoadCatalog(Value(catalog::DefaultCatalogConfig())));
}

std::string Run(const std::string& job_path, PyCatalog* catalog) {
  nb::gil_scoped_release release;
  auto job = Value(engine::LoadJobConfigFile(job_path));
  // The job's threads: sizes the process's executor, as `lakesync run` does (LAKESYNC_THREADS first).
  if (job.threads) Check(ConfigureThreads(std::nullopt, job.threads));
  auto runner = Value(engine::JobRunner::Make(std::move(job), CatalogOrDefault(catalog), engine::OpenSource));
  return Value(runner->RunOnce()).ToJson().dump();
}

std::vector<std::pair<int32_t, nb::object>> SplitByShard(nb::handle changes, const std::vector<std::string>& keys,
                                                        int32_t num_shards) {
  auto reader = ImportReader(changes);
  std::map<int32_t, std::vector<std::shared_ptr<arrow::RecordBatch>>> parts;
  {
    nb::gil_scoped_release release;
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      Check(reader->ReadNext(&batch));
      if (!batch) break;
      for (auto& [shard, rows] : Value(plan::SplitByKeyShard(batch, keys, num_shards))) {
        parts[shard].push_back(std::move(rows));
      }
    }
  }
  std::vector<std::pair<int32_t, nb::object>> out;
  for (auto& [shard, batches] : parts) {
    out.emplace_back(shard, ExportReader(Value(arrow::RecordBatchReader::Make(std::move(batches), reader->schema()))));
  }
  return out;
}

// --- A distributed apply's steps (sink/staged_apply.h), shared by PySink and PyJob -----------------

sink::ApplyTarget TargetFrom(const Json& doc) { return Value(sink::ApplyTarget::FromJson(doc)); }

// `evolution`, `renames`: the schema change the commit makes (sink/schema_evolution.h), planned here
// from the input's schema and carried to the shards and the commit by the target.
std::string Prepare(const std::shared_ptr<catalog::Catalog>& cat, const sink::SinkConfig& config,
                    const std::shared_ptr<arrow::Schema>& schema, const std::optional<std::string>& position,
                    const std::string& source_name, sink::SchemaEvolution evolution = sink::SchemaEvolution::kNone,
                    const std::map<std::string, std::string>& renames = {}) {
  auto writer = Value(sink::CdcWriter::Make(cat, config));
  sink::ApplyOptions options;
  options.source_position = position;
  options.source_name = source_name;
  options.schema_evolution = evolution;
  options.column_renames = renames;
  return Value(writer->Prepare(schema, options)).ToJson().dump();
}

std::string Stage(const std::shared_ptr<catalog::Catalog>& cat, const sink::SinkConfig& config, const Json& target_doc,
                  arrow::RecordBatchReader& changes, const std::string& source_name) {
  auto target = TargetFrom(target_doc);
  auto writer = Value(sink::CdcWriter::Make(cat, config));
  sink::ApplyOptions options;
  options.source_name = source_name;
  auto staged = Value(writer->Stage(changes, target, options));
  auto pinned = Value(sink::OpenPinned(cat, target));
  return Value(sink::StagedShardToJson(staged, *pinned->metadata())).dump();
}

// `entries`: elements of staged shards' "positions" lists; every data file in exactly one call.
std::string WriteDeletesFor(const std::shared_ptr<catalog::Catalog>& cat, const Json& target_doc,
                            const std::vector<Json>& entries) {
  auto target = TargetFrom(target_doc);
  auto pinned = Value(sink::OpenPinned(cat, target));
  std::vector<sink::PositionsInFile> positions;
  Json doc = {{"data_files", Json::array()}, {"delete_files", Json::array()}, {"positions", entries},
              {"resolved_data_files", Json::array()}};
  auto shard = Value(sink::StagedShardFromJson(doc, *pinned->metadata()));
  std::vector<std::string> written;
  auto deletes = sink::WriteDeletes(pinned, shard.positions, written);
  if (!deletes.ok()) {
    for (const auto& f : written) (void)pinned->io()->Delete(f);
    throw StatusError(deletes.status());
  }
  return Value(sink::StagedDeletesToJson(*deletes, *pinned->metadata())).dump();
}

struct Committed {
  sink::ApplyResult apply;
  std::string status;  // committed, skipped, nothing-new
  std::string message;
};

// The single commit of every shard's files and every group's delete files, with the progress
// tokens for `position`.
Committed CommitShards(const std::shared_ptr<catalog::Catalog>& cat, const sink::SinkConfig& config,
                       const Json& target_doc, const std::optional<std::string>& position,
                       const std::vector<Json>& shard_docs, const std::vector<Json>& delete_docs) {
  Committed out;
  auto target = TargetFrom(target_doc);
  sink::TableApplyResult table_result;
  table_result.table = target.table;
  table_result.created = target.created;
  auto done = [&](std::string status, std::string message) {
    out.status = std::move(status);
    out.message = std::move(message);
    out.apply.tables.push_back(table_result);
    return out;
  };
  if (target.skipped) {
    table_result.skipped = true;
    table_result.message = target.message;
    return done("skipped", target.message);
  }
  auto pinned = Value(sink::OpenPinned(cat, target));
  const auto& m = *pinned->metadata();
  sink::FilesToCommit files;
  files.schema = target.schema;  // planned by Prepare on the pinned state, made current with the snapshot
  files.schema_base = pinned->metadata();
  std::vector<std::string> owned;
  int64_t rows_deleted = 0;
  auto& changes = out.apply.changes;
  for (const auto& d : shard_docs) {
    auto shard = Value(sink::StagedShardFromJson(d, m));
    for (auto& f : shard.data_files) {
      owned.push_back(f.file_path);
      files.data_files.push_back(std::move(f));
    }
    for (auto& f : shard.delete_files) {
      owned.push_back(f.file_path);
      files.delete_files.push_back(std::move(f));
    }
    files.resolved_data_files.insert(shard.resolved_data_files.begin(), shard.resolved_data_files.end());
    table_result.rows_written += shard.rows_written;
    table_result.data_bytes += shard.data_bytes;
    table_result.missing_deletes += shard.missing_deletes;
    rows_deleted += shard.equality_deleted;
    changes += shard.changes;
  }
  for (const auto& d : delete_docs) {
    auto deletes = Value(sink::StagedDeletesFromJson(d, m));
    for (auto& f : deletes.added) {
      owned.push_back(f.file_path);
      files.delete_files.push_back(std::move(f));
    }
    for (auto& r : deletes.removed) files.removed_deletes.push_back(std::move(r));
    rows_deleted += deletes.rows_deleted;
  }
  table_result.data_files = static_cast<int64_t>(files.data_files.size());
  auto delete_owned = [&] {
    for (const auto& f : owned) (void)pinned->io()->Delete(f);
  };
  // Commit on the table's current state; CommitFiles validates what changed since the pin.
  auto id = Value(catalog::TableIdentifier::Parse(target.table));
  auto current = Value(table::Table::Load(cat, id));
  auto committed = sink::CommitFiles(current, files, config, position);
  if (!committed.ok()) {
    if (KindOf(committed.status()) != ErrorKind::kCommitStateUnknown) delete_owned();
    throw StatusError(WithContext(committed.status(), "committing to " + target.table));
  }
  switch (committed->outcome) {
    case sink::CommitOutcome::kNothingToDo:
      table_result.skipped = true;
      table_result.message = committed->message;
      return done("nothing-new", committed->message);
    case sink::CommitOutcome::kAlreadyApplied:
      if (committed->files_are_live) {
        // A retried commit whose first try landed: the files are the table's now.
        table_result.message = "committed by an earlier try of this commit";
        return done("committed", table_result.message);
      }
      delete_owned();
      table_result.skipped = true;
      table_result.message = committed->message;
      LS_LOG_WARN("{}", committed->message);
      return done("skipped", committed->message);
    case sink::CommitOutcome::kCommitted:
      break;
  }
  table_result.snapshot_id = committed->snapshot_id;
  table_result.attempts = committed->attempts > 0 ? committed->attempts : 1;
  table_result.rows_deleted = rows_deleted;
  table_result.delete_files = static_cast<int64_t>(sink::DistinctFiles(files.delete_files));
  LS_LOG_INFO("committed {} data and {} delete files to {} (snapshot {})", table_result.data_files,
              table_result.delete_files, target.table, *committed->snapshot_id);
  return done("committed", "");
}

std::vector<Json> ParseAll(const std::vector<std::string>& texts, const char* what) {
  std::vector<Json> out;
  for (const auto& t : texts) out.push_back(ParseJson(t, what));
  return out;
}

// A sink without a job (WriteIcebergChanges): the sink keys of docs/sink.md.
class PySink {
 public:
  PySink(PyCatalog& catalog, const std::string& options_json) {
    auto options = ParseJson(options_json, "sink options");
    nb::gil_scoped_release release;
    config_ = Value(sink::ParseSinkConfig(options, "sink"));
    catalog_ = catalog.catalog();
    if (auto own = config_.catalog()) catalog_ = Value(catalog::LoadCatalog(*own));
  }
  int32_t num_shards() const { return config_.num_shards; }
  bool merge_on_read() const { return config_.mode == sink::WriteMode::kMergeOnRead; }

  std::string prepare(nb::handle changes, std::optional<std::string> position, const std::string& schema_evolution) {
    auto reader = ImportReader(changes);
    nb::gil_scoped_release release;
    auto evolution = Value(sink::ParseSchemaEvolution(schema_evolution, "schema_evolution"));
    return Prepare(catalog_, config_, reader->schema(), position, "changes", evolution);
  }
  std::string stage(const std::string& target_json, nb::handle changes) {
    auto target = ParseJson(target_json, "target");
    auto reader = ImportReader(changes);
    nb::gil_scoped_release release;
    return Stage(catalog_, config_, target, *reader, "changes");
  }
  std::string write_deletes(const std::string& target_json, const std::vector<std::string>& entries) {
    auto target = ParseJson(target_json, "target");
    auto docs = ParseAll(entries, "staged positions");
    nb::gil_scoped_release release;
    return WriteDeletesFor(catalog_, target, docs);
  }
  std::string commit(const std::string& target_json, std::optional<std::string> position,
                     const std::vector<std::string>& shards, const std::vector<std::string>& deletes) {
    auto target = ParseJson(target_json, "target");
    auto shard_docs = ParseAll(shards, "staged shard");
    auto delete_docs = ParseAll(deletes, "staged deletes");
    nb::gil_scoped_release release;
    const auto started = std::chrono::steady_clock::now();
    auto committed = CommitShards(catalog_, config_, target, position, shard_docs, delete_docs);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return sink::ApplyResultToJson(committed.apply, seconds).dump();
  }

 private:
  sink::SinkConfig config_;
  std::shared_ptr<catalog::Catalog> catalog_;
};

// A job's source without the job (ReadDeltaChanges, ReadIcebergChanges): the source block of a job
// file (Beam's keys), opened by the job engine's source factory.
class PySource {
 public:
  PySource(const std::string& type, const std::string& block_json, PyCatalog* catalog) {
    auto block = ParseJson(block_json, "source options");
    nb::gil_scoped_release release;
    engine::JobConfig job;
    job.name = "source";
    job.location = "source";
    if (type == "delta_lake_cdc") {
      job.source_type = engine::SourceType::kDeltaLakeCdc;
    } else if (type == "iceberg_cdc") {
      job.source_type = engine::SourceType::kIcebergCdc;
    } else {
      throw StatusError(InvalidArgument("source type '{}': expected delta_lake_cdc or iceberg_cdc", type));
    }
    // With `streaming`, the Beam transform polls (python/lakesync/beam): the source only answers one
    // question at a time (first, next after, end), as it does for `lakesync run`, and validates
    // poll_interval_seconds as a job would.
    job.streaming = block.contains("streaming") && block["streaming"] == true;
    job.source = block;
    source_ = std::shared_ptr<engine::ChangeSource>(Value(engine::OpenSource(job, CatalogOrDefault(catalog))));
  }
  std::string describe() const { return source_->Describe(); }
  // [first, last] ordinals to read (none when the range is empty), per the configured bounds.
  std::optional<std::pair<int64_t, int64_t>> range() {
    nb::gil_scoped_release release;
    auto latest = Value(source_->Latest());
    auto end = Value(source_->EndOrdinal());
    auto first = Value(source_->FirstOrdinal());
    if (!latest || !first) return std::nullopt;
    const int64_t last = end ? std::min(*end, *latest) : *latest;
    if (*first > last) return std::nullopt;
    return std::make_pair(*first, last);
  }
  // The pieces of range() one at a time, for polling: the newest commit (asking the source again:
  // call it first in each poll), the configured first ordinal (nullopt: no commit satisfies the start
  // bound yet), the end bound, and the commit after an ordinal.
  std::optional<int64_t> latest() {
    nb::gil_scoped_release release;
    return Value(source_->Latest());
  }
  std::optional<int64_t> first() {
    nb::gil_scoped_release release;
    return Value(source_->FirstOrdinal());
  }
  std::optional<int64_t> end() {
    nb::gil_scoped_release release;
    return Value(source_->EndOrdinal());
  }
  std::optional<int64_t> next_after(int64_t ordinal) {
    nb::gil_scoped_release release;
    return Value(source_->NextAfter(ordinal));
  }
  std::optional<int64_t> commit_timestamp_ms(int64_t ordinal) {
    nb::gil_scoped_release release;
    return Value(source_->CommitTimestampMs(ordinal));
  }
  double poll_interval_seconds() const { return source_->poll_interval_seconds(); }
  std::vector<int64_t> ordinals(int64_t first, int64_t last) {
    nb::gil_scoped_release release;
    std::vector<int64_t> out;
    std::optional<int64_t> at = first;
    while (at && *at <= last) {
      out.push_back(*at);
      at = Value(source_->NextAfter(*at));
    }
    return out;
  }
  nb::object read(int64_t from, int64_t through) {
    std::shared_ptr<arrow::RecordBatchReader> reader;
    {
      nb::gil_scoped_release release;
      reader = Owning(source_, Value(source_->ReadChanges(from, through)));
    }
    return ExportReader(std::move(reader));
  }
  std::string position(int64_t ordinal) const { return source_->PositionText(ordinal); }
  std::string change_type_column() const { return source_->change_type_column(); }
  std::string sequence_column() const { return source_->sequence_column(); }

 private:
  std::shared_ptr<engine::ChangeSource> source_;
};

Json PlanToJson(const engine::RunPlan& p) {
  Json j = {{"nothing_new", p.nothing_new}, {"message", p.message}, {"initial_snapshot", p.initial_snapshot},
            {"from", p.from},               {"through", p.through}, {"position", p.position}};
  j["committed_before"] = p.committed_before ? Json(*p.committed_before) : Json(nullptr);
  return j;
}

engine::RunPlan PlanFromJson(const Json& j) {
  try {
    engine::RunPlan p;
    p.nothing_new = j.at("nothing_new").get<bool>();
    p.message = j.at("message").get<std::string>();
    p.initial_snapshot = j.at("initial_snapshot").get<bool>();
    p.from = j.at("from").get<int64_t>();
    p.through = j.at("through").get<int64_t>();
    p.position = j.at("position").get<std::string>();
    if (!j.at("committed_before").is_null()) p.committed_before = j["committed_before"].get<int64_t>();
    return p;
  } catch (const Json::exception& e) {
    throw StatusError(InvalidArgument("plan: {}", e.what()));
  }
}

class PyJob {
 public:
  PyJob(const std::string& job_path, PyCatalog* catalog) {
    nb::gil_scoped_release release;
    auto job = Value(engine::LoadJobConfigFile(job_path));
    runner_ = std::shared_ptr<engine::JobRunner>(
        Value(engine::JobRunner::Make(std::move(job), CatalogOrDefault(catalog), engine::OpenSource)));
  }

  std::string name() const { return runner_->job().name; }
  int32_t num_shards() const { return runner_->job().sink.num_shards; }
  bool merge_on_read() const { return runner_->job().sink.mode == sink::WriteMode::kMergeOnRead; }

  // The driver's plan: range, read tasks, and the pinned target (the table created if needed).
  std::string plan() {
    nb::gil_scoped_release release;
    auto plan = Value(runner_->Plan());
    // Clearing a non-empty target before the import is a step of RunOnce only; a distributed run
    // refuses rather than importing on top of the rows it was told to replace.
    if (plan.overwrite) {
      throw StatusError(Unsupported("{}: initial_snapshot.if_target_not_empty: overwrite is done by lakesync run "
                                    "(or lakesync.run), not by a distributed run; run the import once that way",
                                    runner_->job().location));
    }
    Json out = {{"job", runner_->job().name}, {"source", runner_->DescribeSource()}, {"plan", PlanToJson(plan)},
                {"tasks", Json::array()}, {"parts", Json::array()}, {"target", nullptr}};
    if (plan.nothing_new) return out.dump();
    // The range split at the source's schema changes by the engine's own rule (JobRunner::Parts, what
    // `lakesync run` applies): each part is prepared, staged and committed in turn.
    auto parts = Value(runner_->Parts(plan));
    for (const auto& part : parts) {
      engine::RunPlan part_plan = plan;
      part_plan.from = part.from;
      part_plan.through = part.through;
      Json tasks = Json::array();
      for (const auto& t : Value(runner_->Tasks(part_plan))) {
        tasks.push_back({{"from", t.from}, {"through", t.through}, {"snapshot", t.snapshot}});
        out["tasks"].push_back(tasks.back());
      }
      out["parts"].push_back({{"from", part.from}, {"through", part.through}, {"position", part.position},
                              {"renames", part.renames}, {"tasks", std::move(tasks)}});
    }
    out["target"] = Json::parse(PrepareUnlocked(out["parts"].front()));
    return out.dump();
  }

  // The target of one part of the plan (an element of its "parts"), prepared on the table as it is
  // now: after the parts before it committed.
  std::string prepare(const std::string& part_json) {
    auto part = ParseJson(part_json, "part");
    nb::gil_scoped_release release;
    return PrepareUnlocked(part);
  }

  nb::object read(int64_t from, int64_t through, bool snapshot) {
    std::shared_ptr<arrow::RecordBatchReader> reader;
    {
      nb::gil_scoped_release release;
      reader = Owning(runner_, Value(runner_->Read(engine::ReadTask{from, through, snapshot})));
    }
    return ExportReader(std::move(reader));
  }

  std::string stage(const std::string& target_json, nb::handle changes) {
    auto target = ParseJson(target_json, "target");
    auto reader = ImportReader(changes);
    nb::gil_scoped_release release;
    return Stage(runner_->catalog(), runner_->job().sink, target, *reader, runner_->DescribeSource());
  }

  std::string write_deletes(const std::string& target_json, const std::vector<std::string>& entries) {
    auto target = ParseJson(target_json, "target");
    auto docs = ParseAll(entries, "staged positions");
    nb::gil_scoped_release release;
    return WriteDeletesFor(runner_->catalog(), target, docs);
  }

  // Returns the run's summary line (the same JSON as `lakesync run`).
  std::string commit(const std::string& plan_json, const std::vector<std::string>& shards,
                     const std::vector<std::string>& deletes) {
    auto doc = ParseJson(plan_json, "plan");
    auto shard_docs = ParseAll(shards, "staged shard");
    auto delete_docs = ParseAll(deletes, "staged deletes");
    nb::gil_scoped_release release;
    const auto started = std::chrono::steady_clock::now();
    engine::RunSummary summary;
    summary.job = runner_->job().name;
    summary.sink_id = runner_->sink_id();
    summary.target = runner_->job().sink.table;
    summary.source = runner_->DescribeSource();
    if (!doc.contains("plan")) throw StatusError(InvalidArgument("plan: missing 'plan'"));
    auto plan = PlanFromJson(doc["plan"]);
    if (doc.contains("part") && !doc["part"].is_null()) {  // one part of a range split at schema changes
      try {
        plan.from = doc["part"].at("from").get<int64_t>();
        plan.through = doc["part"].at("through").get<int64_t>();
        plan.position = doc["part"].at("position").get<std::string>();
      } catch (const Json::exception& e) {
        throw StatusError(InvalidArgument("plan: part: {}", e.what()));
      }
    }
    summary.committed_before = plan.committed_before;
    if (plan.nothing_new) {
      summary.status = "nothing-new";
      summary.message = plan.message;
    } else {
      summary.from = plan.from;
      summary.through = plan.through;
      summary.initial_snapshot = plan.initial_snapshot;
      auto committed = CommitShards(runner_->catalog(), runner_->job().sink, doc.at("target"), plan.position,
                                    shard_docs, delete_docs);
      summary.apply = std::move(committed.apply);
      summary.status = committed.status;
      summary.message = committed.message;
    }
    summary.duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return summary.ToJson().dump();
  }

 private:
  // The stream's schema (to create the table, and to plan the schema change) comes from the part's
  // first task's reader; nothing is read.
  std::string PrepareUnlocked(const Json& part) {
    engine::ReadTask first;
    std::string position;
    std::map<std::string, std::string> renames;
    try {
      const auto& task = part.at("tasks").at(0);
      first = {task.at("from").get<int64_t>(), task.at("through").get<int64_t>(), task.at("snapshot").get<bool>()};
      position = part.at("position").get<std::string>();
      renames = part.value("renames", std::map<std::string, std::string>{});
    } catch (const Json::exception& e) {
      throw StatusError(InvalidArgument("part: {}", e.what()));
    }
    auto reader = Value(runner_->Read(first));
    return Prepare(runner_->catalog(), runner_->job().sink, reader->schema(), position, runner_->DescribeSource(),
                   runner_->job().schema_evolution, renames);
  }

  std::shared_ptr<engine::JobRunner> runner_;
};

}  // namespace
}  // namespace lakesync::python

NB_MODULE(_core, m) {
  using namespace lakesync::python;
  m.doc() = "lakesync's C++ core (bindings; see the lakesync package for the documented API)";
  m.attr("__version__") = LAKESYNC_VERSION;
  m.attr("ARROW_VERSION") = ARROW_VERSION_STRING;
  // As the CLI: warnings and errors on standard error (spdlog's default logger would print to stdout,
  // which belongs to the host program); lakesync.set_log_level changes it.
  lakesync::ConfigureLogging("warn", "text");

  // Exceptions: the classes live in lakesync.errors (pure Python, documented there); the status
  // kind picks the class.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const StatusError& e) {
      nb::object errors = nb::module_::import_("lakesync.errors");
      nb::object cls = errors.attr("error_class")(e.kind());
      PyErr_SetObject(cls.ptr(), nb::str(e.what()).ptr());
    }
  });

  m.def("set_log_level", [](const std::string& level, const std::string& format) {
    lakesync::ConfigureLogging(level, format);
  }, "level"_a, "format"_a = "text");

  nb::class_<PyCatalog>(m, "Catalog")
      .def(nb::init<std::optional<std::string>, std::optional<std::string>>(), "config"_a.none(), "path"_a.none())
      .def_prop_ro("name", &PyCatalog::name)
      .def("properties_json", &PyCatalog::properties_json)
      .def("config_json", &PyCatalog::config_json)
      .def("list_tables", &PyCatalog::list_tables, "namespace"_a)
      .def("metadata_location", &PyCatalog::metadata_location, "table"_a)
      .def("scan", &PyCatalog::scan, "table"_a, "filter"_a, "columns"_a.none(), "snapshot_id"_a.none(), "ref"_a,
           "limit"_a.none())
      .def("iceberg_changes", &PyCatalog::iceberg_changes, "options_json"_a)
      .def("apply", &PyCatalog::apply, "changes"_a, "options_json"_a, "source_position"_a.none(), "source_name"_a);

  m.def("delta_changes", &DeltaChanges, "path"_a, "options_json"_a);
  m.def("run", &Run, "job_path"_a, "catalog"_a.none());
  m.def("split_by_shard", &SplitByShard, "changes"_a, "key_columns"_a, "num_shards"_a);

  nb::class_<PySink>(m, "Sink")
      .def(nb::init<PyCatalog&, const std::string&>(), "catalog"_a, "options_json"_a)
      .def_prop_ro("num_shards", &PySink::num_shards)
      .def_prop_ro("merge_on_read", &PySink::merge_on_read)
      .def("prepare", &PySink::prepare, "changes"_a, "position"_a.none(), "schema_evolution"_a = "none")
      .def("stage", &PySink::stage, "target_json"_a, "changes"_a)
      .def("write_deletes", &PySink::write_deletes, "target_json"_a, "entries_json"_a)
      .def("commit", &PySink::commit, "target_json"_a, "position"_a.none(), "shards_json"_a, "deletes_json"_a);

  nb::class_<PySource>(m, "Source")
      .def(nb::init<const std::string&, const std::string&, PyCatalog*>(), "type"_a, "block_json"_a,
           "catalog"_a.none())
      .def("describe", &PySource::describe)
      .def("range", &PySource::range)
      .def("latest", &PySource::latest)
      .def("first", &PySource::first)
      .def("end", &PySource::end)
      .def("next_after", &PySource::next_after, "ordinal"_a)
      .def("commit_timestamp_ms", &PySource::commit_timestamp_ms, "ordinal"_a)
      .def_prop_ro("poll_interval_seconds", &PySource::poll_interval_seconds)
      .def("ordinals", &PySource::ordinals, "first"_a, "last"_a)
      .def("read", &PySource::read, "from_"_a, "through"_a)
      .def("position", &PySource::position, "ordinal"_a)
      .def_prop_ro("change_type_column", &PySource::change_type_column)
      .def_prop_ro("sequence_column", &PySource::sequence_column);

  nb::class_<PyJob>(m, "Job")
      .def(nb::init<const std::string&, PyCatalog*>(), "job_path"_a, "catalog"_a.none())
      .def_prop_ro("name", &PyJob::name)
      .def_prop_ro("num_shards", &PyJob::num_shards)
      .def_prop_ro("merge_on_read", &PyJob::merge_on_read)
      .def("plan", &PyJob::plan)
      .def("prepare", &PyJob::prepare, "part_json"_a)
      .def("read", &PyJob::read, "from_"_a, "through"_a, "snapshot"_a)
      .def("stage", &PyJob::stage, "target_json"_a, "changes"_a)
      .def("write_deletes", &PyJob::write_deletes, "target_json"_a, "entries_json"_a)
      .def("commit", &PyJob::commit, "plan_json"_a, "shards_json"_a, "deletes_json"_a);
}
