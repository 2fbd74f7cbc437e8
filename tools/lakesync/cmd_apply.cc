// lakesync apply: apply change files (Parquet or JSON Lines) to an Iceberg table in one commit per
// destination table, with every sink write option as a flag or from --config.
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>

#include "cli.h"
#include "lakesync/common/logging.h"
#include "lakesync/catalog/catalog_config.h"
#include "lakesync/formats/tabular/tabular.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/sink/cdc_writer.h"
#include "lakesync/sink/table_template.h"
#include "lakesync/table/table.h"

namespace lakesync::cli {
namespace {

// Reads several files in turn as one stream; every file must have the first file's schema.
class FilesReader : public arrow::RecordBatchReader {
 public:
  static Result<std::shared_ptr<FilesReader>> Make(std::shared_ptr<io::FileIO> io, std::vector<std::string> files,
                                                   std::optional<tabular::Format> format,
                                                   std::shared_ptr<arrow::Schema> json_schema) {
    auto r = std::shared_ptr<FilesReader>(new FilesReader());
    r->io_ = std::move(io);
    r->files_ = std::move(files);
    r->format_ = format;
    r->json_schema_ = std::move(json_schema);
    ARROW_RETURN_NOT_OK(r->OpenNext());
    r->schema_ = r->current_->schema();
    return r;
  }
  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  // The file holding the input row with this 0-based ordinal (over all files), and the rows of that
  // file before it: what error messages name.
  std::pair<std::string, int64_t> Locate(int64_t row) const {
    for (size_t i = starts_.size(); i-- > 0;) {
      if (row >= starts_[i]) return {files_[i], row - starts_[i]};
    }
    return {files_.empty() ? std::string("changes") : files_[0], row};
  }
  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    while (true) {
      ARROW_RETURN_NOT_OK(current_->ReadNext(out));
      if (*out) {
        rows_read_ += (*out)->num_rows();
        if (!(*out)->schema()->Equals(*schema_, false)) {
          return InvalidArgument("{} has columns {} but {} has {}: change files applied together must have one "
                                 "schema", files_[next_ - 1], (*out)->schema()->ToString(), files_[0],
                                 schema_->ToString());
        }
        return Status::OK();
      }
      if (next_ >= files_.size()) return Status::OK();
      ARROW_RETURN_NOT_OK(OpenNext());
    }
  }

 private:
  Status OpenNext() {
    starts_.push_back(rows_read_);
    const std::string& file = files_[next_++];
    ARROW_ASSIGN_OR_RAISE(auto location, io::NormalizeLocation(file));
    tabular::Format format;
    if (format_) {
      format = *format_;
    } else {
      ARROW_ASSIGN_OR_RAISE(format, tabular::FormatFromPath(file));
    }
    tabular::ReadOptions options;
    if (format != tabular::Format::kParquet) options.target_schema = json_schema_;
    LS_ASSIGN_OR_RAISE_CTX(current_, tabular::OpenReader(*io_, location, format, options), "reading {}", file);
    return Status::OK();
  }
  std::shared_ptr<io::FileIO> io_;
  std::vector<std::string> files_;
  std::optional<tabular::Format> format_;
  std::shared_ptr<arrow::Schema> json_schema_;
  size_t next_ = 0;
  std::vector<int64_t> starts_;  // the ordinal of each opened file's first row
  int64_t rows_read_ = 0;
  std::shared_ptr<arrow::RecordBatchReader> current_;
  std::shared_ptr<arrow::Schema> schema_;
};

}  // namespace

void RegisterApplyCommand(Cli& cli) {
  struct Args {
    std::string config, table, format, source_position;
    std::vector<std::string> changes, sets;
    std::string mode, equality_columns, sequence_column, change_type_column, change_type_map, delete_strategy,
        sink_id, partition_fields, sort_fields, table_properties, snapshot_properties, error_output;
    std::optional<int> sorter_memory_mb;
    bool upsert = false, json = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = cli.app.add_subcommand(
      "apply",
      "Apply change files (Parquet or JSON Lines: table columns plus a change type and a sequence column) to an "
      "Iceberg table, merge-on-read: deletion vectors on v3, position deletes on v2, one commit per table");
  cmd->add_option("--changes", a->changes, "change files, applied together as one commit")->required();
  cmd->add_option("--config", a->config,
                  "sink options (YAML/JSON: the sink block of a job, or a whole job file with a 'sink' key); "
                  "flags override it");
  cmd->add_option("--table,-t", a->table, "NAMESPACE.TABLE, or a template such as db.orders_{region}");
  cmd->add_option("--mode", a->mode, "append or merge-on-read (default from the config, else append)");
  cmd->add_option("--equality-columns", a->equality_columns,
                  "comma-separated key columns (default: the table's identifier fields; required to create)");
  cmd->add_option("--sequence-number-column", a->sequence_column,
                  "int64 column ordering one key's changes (default _commit_snapshot_sequence_number; without "
                  "that column, changes apply in file and row order)");
  cmd->add_option("--change-type-column", a->change_type_column, "column holding each row's change kind");
  cmd->add_option("--change-type-map", a->change_type_map,
                  "source codes to kinds, e.g. c=INSERT,u=UPDATE_AFTER,d=DELETE");
  cmd->add_flag("--upsert", a->upsert, "every INSERT/UPDATE_AFTER replaces its key; no before-images needed");
  cmd->add_option("--delete-strategy", a->delete_strategy,
                  "position (default: deletion vectors on v3, position deletes on v2) or equality");
  cmd->add_option("--sink-id", a->sink_id, "stable sink identity for exactly-once progress in snapshot summaries");
  cmd->add_option("--source-position", a->source_position,
                  "position of these changes in the source (e.g. a Delta version); a position at or below the one "
                  "committed for --sink-id is skipped");
  cmd->add_option("--partition-fields", a->partition_fields, "partition terms for a new table, comma-separated");
  cmd->add_option("--sort-fields", a->sort_fields, "sort terms for a new table, comma-separated");
  cmd->add_option("--table-properties", a->table_properties, "properties for a new table: k=v,k2=v2");
  cmd->add_option("--snapshot-properties", a->snapshot_properties, "extra snapshot summary entries: k=v,k2=v2");
  cmd->add_option("--sorter-memory-mb", a->sorter_memory_mb, "memory for collapsing changes before spilling");
  cmd->add_option("--error-output", a->error_output,
                  "dead-letter Parquet file for rows that cannot be applied (default: such rows fail the run)");
  cmd->add_option("--set", a->sets, "any sink option KEY=VALUE (repeatable), e.g. --set num_shards=4");
  cmd->add_option("--input-format", a->format, "parquet or jsonl (default: from each file's extension)");
  cmd->add_flag("--json", a->json, "print a JSON summary instead of text");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      const auto started = std::chrono::steady_clock::now();
      sink::SinkConfig config;
      if (!a->config.empty()) {
        ARROW_ASSIGN_OR_RAISE(config, sink::LoadSinkConfigFile(a->config));
      }
      std::vector<std::pair<std::string, std::string>> overrides;
      auto flag = [&](const char* key, const std::string& value) {
        if (!value.empty()) overrides.emplace_back(key, value);
      };
      flag("table", a->table);
      flag("mode", a->mode);
      flag("equality_columns", a->equality_columns);
      flag("sequence_number_column", a->sequence_column);
      flag("change_type_column", a->change_type_column);
      flag("change_type_map", a->change_type_map);
      if (a->upsert) flag("upsert", "true");
      flag("delete_strategy", a->delete_strategy);
      flag("sink_id", a->sink_id);
      flag("partition_fields", a->partition_fields);
      flag("sort_fields", a->sort_fields);
      flag("table_properties", a->table_properties);
      flag("snapshot_properties", a->snapshot_properties);
      if (a->sorter_memory_mb) flag("sorter_memory_mb", std::to_string(*a->sorter_memory_mb));
      if (!a->error_output.empty()) flag("error_handling", "output=" + a->error_output);
      for (const auto& s : a->sets) {
        const auto eq = s.find('=');
        if (eq == std::string::npos) return InvalidArgument("--set '{}': expected KEY=VALUE", s);
        overrides.emplace_back(s.substr(0, eq), s.substr(eq + 1));
      }
      // Any change-type column implies merge-on-read unless a mode was chosen.
      if (a->mode.empty() && !config.is_given("mode") &&
          (!a->change_type_column.empty() || a->upsert || !a->equality_columns.empty())) {
        overrides.emplace(overrides.begin(), "mode", "merge-on-read");
      }
      ARROW_RETURN_NOT_OK(sink::ApplySinkOverrides(config, overrides));
      for (const auto& ignored : config.ignored_options) {
        LS_LOG_WARN("sink option '{}' has no effect in lakesync: {}", ignored.key, ignored.reason);
      }

      std::shared_ptr<catalog::Catalog> catalog;
      if (auto from_sink = config.catalog()) {
        ARROW_ASSIGN_OR_RAISE(catalog, catalog::LoadCatalog(*from_sink));
      } else {
        ARROW_ASSIGN_OR_RAISE(catalog, OpenCatalog(cli.global));
      }
      // JSON Lines need the column types: the table's (when it exists), plus the control columns.
      std::shared_ptr<arrow::Schema> json_schema;
      if (!sink::IsTemplate(config.table)) {
        ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(config.table));
        auto existing = table::Table::Load(catalog, id);
        if (existing.ok()) {
          ARROW_ASSIGN_OR_RAISE(auto arrow_schema, iceberg::ToArrowSchema(*(*existing)->metadata()->Schema()));
          arrow::FieldVector fields;
          for (const auto& f : arrow_schema->fields()) fields.push_back(f->WithNullable(true));
          if (config.mode == sink::WriteMode::kMergeOnRead) {
            fields.push_back(arrow::field(config.sequence_number_column, arrow::int64()));
            if (config.change_type_column) fields.push_back(arrow::field(*config.change_type_column, arrow::utf8()));
          }
          json_schema = arrow::schema(fields);
        }
      }
      std::optional<tabular::Format> format;
      if (!a->format.empty()) {
        ARROW_ASSIGN_OR_RAISE(auto f, tabular::ParseFormat(a->format));
        format = f;
      }
      ARROW_ASSIGN_OR_RAISE(auto reader, FilesReader::Make(catalog->io(), a->changes, format, json_schema));
      ARROW_ASSIGN_OR_RAISE(auto writer, sink::CdcWriter::Make(catalog, config));
      sink::ApplyOptions options;
      if (!a->source_position.empty()) options.source_position = a->source_position;
      options.source_name = a->changes.size() == 1 ? a->changes[0] : a->changes[0] + " (and others)";
      options.locate_input_row = [reader](int64_t row) { return reader->Locate(row); };
      ARROW_ASSIGN_OR_RAISE(auto result, writer->Apply(*reader, options));
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (a->json) {
        Print(sink::ApplyResultToJson(result, seconds).dump() + "\n");
        return Status::OK();
      }
      std::string out;
      for (const auto& t : result.tables) {
        if (t.skipped) {
          out += fmt::format("{}: nothing committed: {}\n", t.table, t.message);
          continue;
        }
        out += fmt::format("{}{}: wrote {} rows in {} data files, deleted {} rows with {} delete files; snapshot {}",
                           t.table, t.created ? " (created)" : "", t.rows_written, t.data_files, t.rows_deleted,
                           t.delete_files, t.snapshot_id ? std::to_string(*t.snapshot_id) : "-");
        if (t.missing_deletes) out += fmt::format(" ({} deletes of keys not in the table)", t.missing_deletes);
        out += "\n";
      }
      const auto& c = result.changes;
      out += fmt::format("{} changes ({} inserts, {} updates, {} deletes) in {:.2f} s\n", c.changes, c.inserts,
                         c.update_afters, c.deletes, seconds);
      if (result.dead_letters) {
        out += fmt::format("{} rows could not be applied: see {}\n", result.dead_letters, result.dead_letter_location);
      }
      Print(out);
      return Status::OK();
    };
  });
}

}  // namespace lakesync::cli
