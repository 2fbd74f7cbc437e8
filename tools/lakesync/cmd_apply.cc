// lakesync apply: apply change files (Parquet or JSON Lines) to an Iceberg table in one commit per
// destination table, with every sink write option as a flag or from --config.
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "cli.h"
#include "lakesync/common/logging.h"
#include "lakesync/catalog/catalog_config.h"
#include "lakesync/change/metadata_columns.h"
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

// A file removed when the command ends.
struct TempFile {
  std::string path;
  TempFile() = default;
  explicit TempFile(std::string p) : path(std::move(p)) {}
  TempFile(TempFile&& o) noexcept : path(std::move(o.path)) { o.path.clear(); }
  TempFile& operator=(TempFile&& o) noexcept {
    std::swap(path, o.path);
    return *this;
  }
  ~TempFile() {
    if (!path.empty()) std::remove(path.c_str());
  }
};

Result<TempFile> SpoolStdin() {
  std::string pattern = (std::filesystem::temp_directory_path() / "lakesync-stdin-XXXXXX").string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) return IOError("creating a temporary file for standard input: {}", std::strerror(errno));
  TempFile file(pattern);
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return IOError("reading standard input: {}", std::strerror(errno));
    }
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(fd, buffer + done, static_cast<size_t>(n - done));
      if (w < 0) {
        if (errno == EINTR) continue;
        ::close(fd);
        return IOError("spooling standard input to {}: {}", file.path, std::strerror(errno));
      }
      done += w;
    }
  }
  ::close(fd);
  return file;
}

// The columns of the first change file: a Parquet file's schema, a JSON Lines file's inferred types
// (tabular::InferJsonlSchema), a CSV file's as Arrow infers them.
Result<std::shared_ptr<arrow::Schema>> InputSchema(const io::FileIO& io, const std::string& file,
                                                   std::optional<tabular::Format> given) {
  ARROW_ASSIGN_OR_RAISE(auto location, io::NormalizeLocation(file));
  tabular::Format format;
  if (given) {
    format = *given;
  } else {
    ARROW_ASSIGN_OR_RAISE(format, tabular::FormatFromPath(file));
  }
  if (format == tabular::Format::kJsonl) return tabular::InferJsonlSchema(io, location);
  LS_ASSIGN_OR_RAISE_CTX(auto reader, tabular::OpenReader(io, location, format, {}), "reading {}", file);
  return reader->schema();
}

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
  cmd->add_option("--changes", a->changes,
                  "change files, applied together as one commit ('-': standard input, JSON Lines unless "
                  "--input-format says otherwise, e.g. lakesync changes ... --format jsonl | lakesync apply "
                  "--changes - ...)")
      ->required();
  cmd->add_option("--config", a->config,
                  "sink options (YAML/JSON: the sink block of a job, or a whole job file with a 'sink' key); "
                  "flags override it");
  cmd->add_option("--table,-t", a->table, "NAMESPACE.TABLE, or a template such as db.orders_{region}");
  cmd->add_option("--mode", a->mode,
                  "append or merge-on-read (default: --config's mode; else merge-on-read when the input has a "
                  "change-kind column (_change_type, change_type, CHANGE_TYPE) or --change-type-column, --upsert or "
                  "--equality-columns is given; else append)");
  cmd->add_option("--equality-columns", a->equality_columns,
                  "comma-separated key columns (default: the table's identifier fields; required to create)");
  cmd->add_option("--sequence-number-column", a->sequence_column,
                  "int64 column ordering one key's changes (default: _commit_snapshot_sequence_number, else "
                  "_commit_version, when the input has it; without one, changes apply in file and row order)");
  cmd->add_option("--change-type-column", a->change_type_column,
                  "column holding each row's change kind (default: _change_type, change_type or CHANGE_TYPE when "
                  "the input has it; Beam's CHANGE_TYPE-style names mean lakesync's _change_type)");
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
      auto overridden = [&](std::string_view key) {
        return config.is_given(key) ||
               std::any_of(overrides.begin(), overrides.end(), [&](const auto& o) { return o.first == key; });
      };
      auto overridden_value = [&](std::string_view key) -> std::optional<std::string> {
        for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
          if (it->first == key) return it->second;
        }
        if (key == "change_type_column" && config.change_type_column) return config.change_type_column;
        if (key == "sequence_number_column" && config.is_given(key)) return config.sequence_number_column;
        return std::nullopt;
      };

      std::optional<tabular::Format> format;
      if (!a->format.empty()) {
        ARROW_ASSIGN_OR_RAISE(auto f, tabular::ParseFormat(a->format));
        format = f;
      }
      // Standard input is spooled to a file: the columns are looked at before the rows are read.
      std::optional<TempFile> spooled;
      for (auto& file : a->changes) {
        if (file != "-") continue;
        if (spooled) return InvalidArgument("--changes names standard input ('-') twice");
        if (!format) format = tabular::Format::kJsonl;
        ARROW_ASSIGN_OR_RAISE(spooled, SpoolStdin());
        file = spooled->path;
      }
      // The catalog comes from the options as given (they may name one); the input is read with it.
      std::shared_ptr<catalog::Catalog> catalog;
      {
        sink::SinkConfig given = config;
        auto first = overrides;
        if (!overridden("mode") && (!a->change_type_column.empty() || a->upsert || !a->equality_columns.empty())) {
          first.emplace(first.begin(), "mode", "merge-on-read");
        }
        ARROW_RETURN_NOT_OK(sink::ApplySinkOverrides(given, first));
        if (auto from_sink = given.catalog()) {
          ARROW_ASSIGN_OR_RAISE(catalog, catalog::LoadCatalog(*from_sink));
        } else {
          ARROW_ASSIGN_OR_RAISE(catalog, OpenCatalog(cli.global));
        }
      }
      // What the input holds decides what it means: `lakesync changes` output (table columns, then
      // _change_type, _commit_snapshot_sequence_number or _commit_version, ...) applies as written.
      ARROW_ASSIGN_OR_RAISE(auto input_schema, InputSchema(*catalog->io(), a->changes.front(), format));
      const auto columns = input_schema->field_names();
      auto has = [&](const std::string& c) { return std::find(columns.begin(), columns.end(), c) != columns.end(); };
      std::vector<std::string> notes;
      bool change_column = false;
      if (auto given = overridden_value("change_type_column")) {
        change_column = true;
        if (auto resolved = change::ResolveColumn(*given, columns); resolved && *resolved != *given) {
          overrides.emplace_back("change_type_column", *resolved);
        }
      } else {
        for (const auto& candidate : change::ChangeTypeColumnCandidates()) {
          if (!has(candidate)) continue;
          overrides.emplace_back("change_type_column", candidate);
          notes.push_back(fmt::format("change kind from column {}", candidate));
          change_column = true;
          break;
        }
      }
      if (auto given = overridden_value("sequence_number_column")) {
        if (auto resolved = change::ResolveColumn(*given, columns); resolved && *resolved != *given) {
          overrides.emplace_back("sequence_number_column", *resolved);
        }
      } else {
        for (const auto& candidate : change::SequenceColumnCandidates()) {
          if (!has(candidate)) continue;
          overrides.emplace_back("sequence_number_column", candidate);
          notes.push_back(fmt::format("sequence from column {}", candidate));
          break;
        }
      }
      // A change column (found or named), --upsert or keys mean changes, unless a mode was chosen.
      if (!overridden("mode") && (change_column || a->upsert || !a->equality_columns.empty())) {
        overrides.emplace(overrides.begin(), "mode", "merge-on-read");
      }
      ARROW_RETURN_NOT_OK(sink::ApplySinkOverrides(config, overrides));
      for (const auto& ignored : config.ignored_options) {
        LS_LOG_WARN("sink option '{}' has no effect in lakesync: {}", ignored.key, ignored.reason);
      }
      if (!notes.empty()) LS_LOG_INFO("apply: {}", fmt::join(notes, "; "));

      // Text input needs the column types: the table's (when it exists) for its columns, the input's
      // own for the others (control and metadata columns).
      std::vector<std::string> table_columns;
      std::shared_ptr<arrow::Schema> text_schema = input_schema;
      if (!sink::IsTemplate(config.table)) {
        ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(config.table));
        auto existing = table::Table::Load(catalog, id);
        if (existing.ok()) {
          ARROW_ASSIGN_OR_RAISE(auto arrow_schema, iceberg::ToArrowSchema(*(*existing)->metadata()->Schema()));
          arrow::FieldVector fields;
          for (const auto& f : arrow_schema->fields()) {
            fields.push_back(f->WithNullable(true));
            table_columns.push_back(f->name());
          }
          for (const auto& f : input_schema->fields()) {
            if (!arrow_schema->GetFieldByName(f->name())) fields.push_back(f);
          }
          text_schema = arrow::schema(fields);
        }
      }
      // Metadata columns the table does not have are never written into it (the sink strips the
      // change-kind and sequence columns itself; these are the others: _change_ordinal,
      // _commit_snapshot_id, _commit_timestamp, ...).
      if (!config.keep && !config.only) {
        std::vector<std::string> drop = config.drop.value_or(std::vector<std::string>{});
        for (const auto& c : columns) {
          if (!change::IsMetadataColumn(c) || c == config.sequence_number_column ||
              (config.change_type_column && c == *config.change_type_column) ||
              std::find(table_columns.begin(), table_columns.end(), c) != table_columns.end() ||
              std::find(drop.begin(), drop.end(), c) != drop.end()) {
            continue;
          }
          drop.push_back(c);
        }
        if (!drop.empty()) {
          ARROW_RETURN_NOT_OK(sink::ApplySinkOverride(config, "drop", fmt::format("{}", fmt::join(drop, ","))));
          ARROW_RETURN_NOT_OK(sink::ValidateSinkConfig(config, "command line"));
        }
      }
      ARROW_ASSIGN_OR_RAISE(auto reader, FilesReader::Make(catalog->io(), a->changes, format, text_schema));
      ARROW_ASSIGN_OR_RAISE(auto writer, sink::CdcWriter::Make(catalog, config));
      sink::ApplyOptions options;
      if (!a->source_position.empty()) options.source_position = a->source_position;
      options.source_name = a->changes.size() == 1 ? a->changes[0] : a->changes[0] + " (and others)";
      options.locate_input_row = [reader](int64_t row) { return reader->Locate(row); };
      ARROW_ASSIGN_OR_RAISE(auto result, writer->Apply(*reader, options));
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (a->json) {
        auto json = sink::ApplyResultToJson(result, seconds);
        json["mode"] = std::string(sink::WriteModeName(config.mode));
        Print(json.dump() + "\n");
        return Status::OK();
      }
      std::string out;
      int64_t written = 0;
      for (const auto& t : result.tables) {
        if (t.skipped) {
          out += fmt::format("{}: nothing committed: {}\n", t.table, t.message);
          continue;
        }
        written += t.rows_written;
        out += fmt::format("{}{}: wrote {} rows in {} data files, deleted {} rows with {} delete files; snapshot {}",
                           t.table, t.created ? " (created)" : "", t.rows_written, t.data_files, t.rows_deleted,
                           t.delete_files, t.snapshot_id ? std::to_string(*t.snapshot_id) : "-");
        if (t.missing_deletes) out += fmt::format(" ({} deletes of keys not in the table)", t.missing_deletes);
        out += "\n";
      }
      const auto& c = result.changes;
      if (config.mode == sink::WriteMode::kAppend) {
        out += fmt::format("append mode: {} input rows appended as new rows in {:.2f} s\n", written, seconds);
      } else {
        out += fmt::format("merge-on-read: {} change rows read ({} inserts, {} update before-images, {} update "
                           "after-images, {} deletes) for {} keys in {:.2f} s\n",
                           c.changes, c.inserts, c.update_befores, c.update_afters, c.deletes, c.keys, seconds);
      }
      if (result.dead_letters) {
        out += fmt::format("{} rows could not be applied: see {}\n", result.dead_letters, result.dead_letter_location);
      }
      Print(out);
      return Status::OK();
    };
  });
}

}  // namespace lakesync::cli
