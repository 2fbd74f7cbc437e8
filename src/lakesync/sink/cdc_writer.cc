#include "lakesync/sink/cdc_writer.h"

#include "lakesync/table/pending_files.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>
#include <arrow/table.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <tuple>
#include <utility>

#include "lakesync/catalog/buffered_commits.h"
#include "lakesync/common/executor.h"
#include "lakesync/common/failpoint.h"
#include "lakesync/common/logging.h"
#include "lakesync/formats/tabular/tabular.h"
#include "lakesync/iceberg/commit/table_update.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/model/spec_syntax.h"
#include "lakesync/iceberg/write/data_file_writer.h"
#include "lakesync/iceberg/write/equality_delete_writer.h"
#include "lakesync/iceberg/write/file_namer.h"
#include "lakesync/iceberg/write/partition_splitter.h"
#include "lakesync/sink/apply_phases_internal.h"
#include "lakesync/sink/key_resolver.h"
#include "lakesync/sink/staged_apply.h"
#include "lakesync/sink/table_template.h"
#include "lakesync/table/append.h"
#include "lakesync/table/row_deletes.h"
#include "lakesync/table/snapshot_update.h"

namespace lakesync::sink {
namespace {

std::string PositionKey(const std::string& sink_id) { return kSummarySourcePositionPrefix + sink_id; }

Result<std::shared_ptr<arrow::Table>> ConcatTables(const std::vector<std::shared_ptr<arrow::Table>>& tables,
                                                   const std::shared_ptr<arrow::Schema>& schema) {
  if (tables.empty()) return arrow::Table::MakeEmpty(schema);
  return arrow::ConcatenateTables(tables);
}

// Equality deletes only reach rows of their own partition, so a delete image must carry the partition
// its row lives in. Two kinds do not: a key-only DELETE (null in a partition source column that is not
// a key column) and an after-image standing in for a missing before-image (the row may have moved).
// Written as equality deletes they would silently delete nothing; such keys are resolved to positions
// instead, which is right whatever partition the row is in. `old_image` has one flag per row of
// `deletes` (CollapsedPart::delete_is_old_image). Returns {equality part, position part}, null when empty.
Result<std::pair<std::shared_ptr<arrow::Table>, std::shared_ptr<arrow::Table>>> SplitUnroutableDeletes(
    const std::shared_ptr<arrow::Table>& deletes, const std::vector<bool>& old_image,
    const iceberg::TableMetadata& m, const std::vector<std::string>& key_columns) {
  namespace cp = arrow::compute;
  if (static_cast<int64_t>(old_image.size()) != deletes->num_rows()) {
    return Status::Invalid("delete images and their flags differ in length");
  }
  auto schema = m.Schema();
  std::optional<arrow::Datum> unroutable;
  for (const auto& f : m.Spec()->fields()) {
    const std::string source = schema->FindColumnName(f.source_id);
    if (std::find(key_columns.begin(), key_columns.end(), source) != key_columns.end()) continue;
    auto column = deletes->GetColumnByName(source);
    if (!column) return std::make_pair(nullptr, deletes);  // a nested source: resolve every key
    ARROW_ASSIGN_OR_RAISE(auto null, cp::IsNull(column));
    if (unroutable) {
      ARROW_ASSIGN_OR_RAISE(unroutable, cp::Or(*unroutable, null));
    } else {
      unroutable = null;
    }
  }
  // Without a partition source outside the key, every image lies in its key's partition.
  if (!unroutable) return std::make_pair(deletes, nullptr);
  arrow::BooleanBuilder flags;
  ARROW_RETURN_NOT_OK(flags.Reserve(deletes->num_rows()));
  for (bool old : old_image) flags.UnsafeAppend(!old);
  ARROW_ASSIGN_OR_RAISE(auto not_old, flags.Finish());
  ARROW_ASSIGN_OR_RAISE(unroutable, cp::Or(*unroutable, not_old));
  ARROW_ASSIGN_OR_RAISE(auto routable, cp::Invert(*unroutable));
  ARROW_ASSIGN_OR_RAISE(auto by_equality, cp::Filter(deletes, routable));
  ARROW_ASSIGN_OR_RAISE(auto by_position, cp::Filter(deletes, *unroutable));
  auto non_empty = [](const arrow::Datum& d) {
    return d.table()->num_rows() > 0 ? d.table() : std::shared_ptr<arrow::Table>();
  };
  return std::make_pair(non_empty(by_equality), non_empty(by_position));
}

}  // namespace

Result<SourcePosition> ParseSourcePosition(std::string_view text) {
  static const std::regex kPattern(R"(^(\d{1,18})(:.*)?$)");
  std::cmatch m;
  if (!std::regex_match(text.begin(), text.end(), m, kPattern)) {
    return InvalidArgument("source position '{}' must start with a non-negative integer (e.g. a Delta version, "
                           "or '<sequence number>:<snapshot id>')", text);
  }
  return SourcePosition{std::stoll(m[1].str()), std::string(text)};
}

nlohmann::json ApplyResultToJson(const ApplyResult& r, double seconds) {
  nlohmann::json tables = nlohmann::json::array();
  for (const auto& t : r.tables) tables.push_back(TableApplyResultToJson(t));
  const auto& c = r.changes;
  return {{"tables", tables},
          {"changes", {{"total", c.changes}, {"inserts", c.inserts}, {"update_befores", c.update_befores},
                       {"update_afters", c.update_afters}, {"deletes", c.deletes}, {"keys", c.keys},
                       {"rows_to_write", c.rows_to_write}, {"keys_to_delete", c.keys_to_delete},
                       {"collapsed_away", c.collapsed_away}, {"spilled_bytes", c.spilled_bytes}}},
          {"dead_letters", r.dead_letters},
          {"dead_letter_location", r.dead_letter_location},
          {"duration_seconds", seconds}};
}

nlohmann::json TableApplyResultToJson(const TableApplyResult& t) {
  nlohmann::json j = {{"table", t.table},           {"created", t.created},
                      {"skipped", t.skipped},       {"rows_written", t.rows_written},
                      {"rows_deleted", t.rows_deleted}, {"missing_deletes", t.missing_deletes},
                      {"data_files", t.data_files}, {"delete_files", t.delete_files},
                      {"data_bytes", t.data_bytes}, {"commit_attempts", t.attempts}};
  j["snapshot_id"] = t.snapshot_id ? nlohmann::json(*t.snapshot_id) : nlohmann::json(nullptr);
  if (!t.message.empty()) j["message"] = t.message;
  return j;
}

Result<std::optional<SourcePosition>> CommittedPosition(const iceberg::TableMetadata& metadata,
                                                        const std::string& sink_id) {
  std::optional<SourcePosition> best;
  const std::string key = PositionKey(sink_id);
  if (auto current = metadata.CurrentSnapshot()) {
    for (const auto& s : metadata.Ancestors(current->snapshot_id)) {
      auto it = s->summary.find(key);
      if (it == s->summary.end()) continue;
      ARROW_ASSIGN_OR_RAISE(best, ParseSourcePosition(it->second));
      break;
    }
  }
  // A copy in the table properties survives the expiry of the snapshot that carried it.
  if (auto it = metadata.properties.find(key); it != metadata.properties.end()) {
    ARROW_ASSIGN_OR_RAISE(auto from_property, ParseSourcePosition(it->second));
    if (!best || from_property.ordinal > best->ordinal) best = from_property;
  }
  return best;
}

Result<std::optional<int64_t>> FindCommittedPosition(table::Table& table, const std::string& sink_id,
                                                    const std::string& position) {
  ARROW_RETURN_NOT_OK(table.Refresh());
  const auto& metadata = *table.metadata();
  auto current = metadata.CurrentSnapshot();
  if (!current) return std::optional<int64_t>();
  const std::string key = PositionKey(sink_id);
  for (const auto& s : metadata.Ancestors(current->snapshot_id)) {
    auto it = s->summary.find(key);
    if (it != s->summary.end() && it->second == position) return std::optional<int64_t>(s->snapshot_id);
  }
  return std::optional<int64_t>();
}

namespace {

// After a commit whose outcome is unknown (a 5xx or a lost answer from a REST catalog): the files
// are kept, and the table is reloaded to see whether the commit landed. Returns the snapshot that
// carries the position, or the original error, with what was checked, when none does or the sink
// records no position (then nothing can tell).
Result<int64_t> ResolveUnknownCommit(table::Table& table, const Status& error, const std::optional<std::string>& sink_id,
                                     const std::optional<SourcePosition>& position) {
  if (!sink_id || !position) {
    return WithContext(error, "the commit's outcome is unknown and without a sink_id and source position it cannot be "
                              "checked; the files written are kept: check the table's history before applying again");
  }
  auto found = FindCommittedPosition(table, *sink_id, position->text);
  if (!found.ok()) {
    return WithContext(error, fmt::format("the commit's outcome is unknown and reloading {} to check failed ({}); the "
                                          "files written are kept",
                                          table.name(), found.status().message()));
  }
  if (*found) {
    LS_LOG_WARN("the commit to {} had an unknown outcome; reloading shows it landed as snapshot {} ({} = {})",
                table.name(), **found, PositionKey(*sink_id), position->text);
    return **found;
  }
  return WithContext(error, fmt::format("the commit's outcome was unknown and reloading {} shows no snapshot with {} = {}: "
                                        "it did not land (its files are kept); running the job again applies it",
                                        table.name(), PositionKey(*sink_id), position->text));
}

}  // namespace

struct CdcWriter::Destination {
  std::string name;
  catalog::TableIdentifier id;
  std::shared_ptr<table::Table> table;
  bool created = false;
  bool skipped = false;
  std::string message;
  std::vector<std::string> table_columns;  // table order
  std::shared_ptr<arrow::Schema> table_arrow;
  // The same with every column nullable: delete images may carry only their key (a DELETE row need
  // not repeat the rest of the row).
  std::shared_ptr<arrow::Schema> delete_arrow;
  // The input's table columns (table_columns) with the table's types, all nullable: what the
  // collapser receives, converted as each input batch arrives so that a value that does not convert
  // is reported with its input row.
  std::shared_ptr<arrow::Schema> input_arrow;
  std::vector<std::string> key_columns;
  std::unique_ptr<plan::ChangeCollapser> collapser;
  std::unique_ptr<iceberg::RollingDataWriter> append_writer;
  std::vector<std::string> written;  // files to delete if we fail
  // schema_evolution: the schema the rows are written with, committed with the snapshot; unset when
  // the table's schema stays.
  std::optional<iceberg::EvolvedSchema> evolved;
  // The schema rows are written with: the evolved one, else the table's current one.
  iceberg::SchemaPtr write_schema() const { return evolved ? evolved->schema : table->metadata()->Schema(); }
  ~Destination() {
    if (append_writer) {
      for (const auto& f : append_writer->Abort()) (void)table->io()->Delete(f);
    }
    // Still recording: the apply stopped before this destination wrote anything it keeps.
    if (table && table->pending_files()) table::EndWriteAttempt(*table, Status::OK());
  }
};

CdcWriter::CdcWriter(std::shared_ptr<catalog::Catalog> catalog, SinkConfig config)
    : catalog_(std::move(catalog)), config_(std::move(config)) {}
CdcWriter::~CdcWriter() = default;

Result<std::unique_ptr<CdcWriter>> CdcWriter::Make(std::shared_ptr<catalog::Catalog> catalog, SinkConfig config) {
  if (config.table.empty()) return InvalidArgument("table: the sink needs a table");
  return std::unique_ptr<CdcWriter>(new CdcWriter(std::move(catalog), std::move(config)));
}

namespace {

// The input columns that are table columns (not control columns, not projected away), in input order.
std::vector<std::string> TableColumnsOf(const arrow::Schema& input, const SinkConfig& config,
                                        const std::set<std::string>& control) {
  std::vector<std::string> out;
  for (const auto& f : input.fields()) {
    const std::string& n = f->name();
    if (config.keep) {
      if (std::find(config.keep->begin(), config.keep->end(), n) != config.keep->end()) out.push_back(n);
      continue;
    }
    if (control.count(n)) continue;
    if (config.drop && std::find(config.drop->begin(), config.drop->end(), n) != config.drop->end()) continue;
    out.push_back(n);
  }
  return out;
}

// `only`: the named struct column's children become the row; control columns stay top-level.
Result<std::shared_ptr<arrow::RecordBatch>> FlattenOnly(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                        const std::string& only,
                                                        const std::set<std::string>& control) {
  auto column = batch->GetColumnByName(only);
  if (!column || column->type_id() != arrow::Type::STRUCT) {
    return InvalidArgument("only: '{}' is not a record column of the input", only);
  }
  const auto& st = static_cast<const arrow::StructArray&>(*column);
  arrow::FieldVector fields;
  arrow::ArrayVector arrays;
  for (int i = 0; i < st.num_fields(); ++i) {
    fields.push_back(st.struct_type()->field(i));
    ARROW_ASSIGN_OR_RAISE(auto child, st.GetFlattenedField(i));
    arrays.push_back(child);
  }
  for (int i = 0; i < batch->num_columns(); ++i) {
    if (control.count(batch->schema()->field(i)->name())) {
      fields.push_back(batch->schema()->field(i));
      arrays.push_back(batch->column(i));
    }
  }
  return arrow::RecordBatch::Make(arrow::schema(fields), batch->num_rows(), arrays);
}

}  // namespace

Result<CdcWriter::Destination*> CdcWriter::DestinationFor(const std::string& name,
                                                          const std::shared_ptr<arrow::Schema>& input_schema,
                                                          const ApplyOptions& options) {
  for (auto& d : destinations_) {
    if (d->name == name) return d.get();
  }
  auto dest = std::make_unique<Destination>();
  dest->name = name;
  ARROW_ASSIGN_OR_RAISE(dest->id, catalog::TableIdentifier::Parse(name));
  const bool merge = config_.mode == WriteMode::kMergeOnRead;
  std::set<std::string> control;
  if (merge) {
    control.insert(config_.sequence_number_column);
    if (config_.change_type_column) control.insert(*config_.change_type_column);
  }
  const std::vector<std::string> input_columns = TableColumnsOf(*input_schema, config_, control);

  // A staged apply works on the state its driver pinned, and never creates the table.
  auto loaded = pinned_ ? OpenPinned(catalog_, *pinned_) : table::Table::Load(catalog_, dest->id);
  if (!loaded.ok() && (pinned_ || KindOf(loaded.status()) != ErrorKind::kNotFound)) return loaded.status();
  if (loaded.ok()) {
    dest->table = *loaded;
  } else {
    // Create the namespace and table from the input (minus control columns).
    if (merge && config_.equality_columns.empty()) {
      return InvalidArgument("equality_columns is required to create table {} (they become its identifier fields)",
                             name);
    }
    arrow::FieldVector fields;
    for (const auto& c : input_columns) {
      auto f = input_schema->GetFieldByName(c);
      const bool key = std::find(config_.equality_columns.begin(), config_.equality_columns.end(), c) !=
                       config_.equality_columns.end();
      fields.push_back(key ? f->WithNullable(false) : f);
    }
    LS_ASSIGN_OR_RAISE_CTX(auto schema, iceberg::FromArrowSchema(*arrow::schema(fields), true),
                           "deriving the schema of {} from the input", name);
    std::vector<int32_t> ids;
    for (const auto& c : config_.equality_columns) {
      const auto* f = schema->FindFieldByName(c);
      if (!f) return InvalidArgument("equality_columns: '{}' is not a column of the input", c);
      ids.push_back(f->id);
    }
    schema = std::make_shared<const iceberg::Schema>(0, schema->fields(), ids);
    LS_RETURN_NOT_OK_CTX(schema->Validate(), "equality_columns");
    catalog::CreateTableRequest req;
    req.identifier = dest->id;
    req.schema = schema;
    LS_ASSIGN_OR_RAISE_CTX(req.spec, iceberg::ParsePartitionFields(config_.partition_fields, *schema),
                           "partition_fields");
    LS_ASSIGN_OR_RAISE_CTX(req.sort_order, iceberg::ParseSortFields(config_.sort_fields, *schema), "sort_fields");
    req.properties = config_.table_properties;
    ARROW_ASSIGN_OR_RAISE(bool ns_exists, catalog_->NamespaceExists(dest->id.ns));
    if (!ns_exists) {
      auto st = catalog_->CreateNamespace(dest->id.ns, {});
      if (!st.ok() && KindOf(st) != ErrorKind::kAlreadyExists) return st;
    }
    auto created = catalog_->CreateTable(req);
    if (!created.ok() && KindOf(created.status()) != ErrorKind::kAlreadyExists) return created.status();
    ARROW_ASSIGN_OR_RAISE(dest->table, table::Table::Load(catalog_, dest->id));
    dest->created = created.ok();
    if (dest->created) LS_LOG_INFO("created table {} for the sink", name);
  }

  // Files of earlier attempts that never committed go first; this attempt's files are recorded.
  ARROW_RETURN_NOT_OK(table::BeginWriteAttempt(*dest->table));
  const auto& m = *dest->table->metadata();
  if (options.schema_evolution == SchemaEvolution::kAdditive && !pinned_ && evolution_allowed_) {
    ARROW_RETURN_NOT_OK(EvolveFor(*dest, *input_schema, input_columns, options));
  }
  // A distributed apply's shards write with the schema its Prepare planned (committed with the data).
  if (pinned_ && pinned_->schema) dest->evolved = pinned_->schema;
  auto schema = dest->write_schema();
  for (const auto& f : schema->fields()) {
    if (std::find(input_columns.begin(), input_columns.end(), f.name) != input_columns.end()) {
      dest->table_columns.push_back(f.name);
    }
  }
  for (const auto& c : input_columns) {
    if (!schema->FindFieldByName(c) || schema->TopLevelIndex(schema->FindFieldByName(c)->id) < 0) {
      return InvalidArgument("{}: input column '{}' is not a column of table {} (drop it with `drop`, or add it "
                             "to the table)", options.source_name, c, name);
    }
  }
  ARROW_ASSIGN_OR_RAISE(dest->table_arrow, iceberg::ToArrowSchema(*schema));
  {
    arrow::FieldVector nullable;
    for (const auto& f : dest->table_arrow->fields()) nullable.push_back(f->WithNullable(true));
    dest->delete_arrow = arrow::schema(nullable);
    arrow::FieldVector input;
    for (const auto& c : dest->table_columns) input.push_back(dest->delete_arrow->GetFieldByName(c));
    dest->input_arrow = arrow::schema(input);
  }

  // Exactly-once: a batch at or below the committed position is skipped, loudly.
  if (config_.sink_id && options.source_position) {
    ARROW_ASSIGN_OR_RAISE(auto position, ParseSourcePosition(*options.source_position));
    ARROW_ASSIGN_OR_RAISE(auto committed, CommittedPosition(m, *config_.sink_id));
    if (committed && position.ordinal <= committed->ordinal) {
      dest->skipped = true;
      dest->message = fmt::format("source position {} is at or below position {} already committed to {} by sink "
                                  "'{}'; skipping these changes", position.text, committed->text, name,
                                  *config_.sink_id);
      LS_LOG_WARN("{}", dest->message);
    }
  }

  if (merge) {
    if (!config_.equality_columns.empty()) {
      dest->key_columns = config_.equality_columns;
    } else {
      for (int32_t id : schema->identifier_field_ids()) dest->key_columns.push_back(schema->FindColumnName(id));
    }
    if (dest->key_columns.empty()) {
      return InvalidArgument("table {} has no identifier fields: set equality_columns", name);
    }
    for (const auto& k : dest->key_columns) {
      const auto* f = schema->FindFieldByName(k);
      if (!f || schema->TopLevelIndex(f->id) < 0) {
        return InvalidArgument("equality_columns: '{}' is not a top-level column of table {}", k, name);
      }
    }
    if (config_.delete_strategy == DeleteStrategy::kEquality && config_.upsert) {
      // Equality deletes only reach their own partition: with upsert there is no before-image to tell
      // the old partition, so the partition must follow from the key (Beam has the same rule).
      for (const auto& f : m.Spec()->fields()) {
        const std::string source = schema->FindColumnName(f.source_id);
        if (std::find(dest->key_columns.begin(), dest->key_columns.end(), source) == dest->key_columns.end()) {
          return InvalidArgument("upsert with delete_strategy equality needs every partition source column among "
                                 "equality_columns; '{}' is not (use delete_strategy position)", source);
        }
      }
    }
    plan::CollapseOptions copts;
    copts.key_columns = dest->key_columns;
    copts.sequence_column = config_.sequence_number_column;
    copts.change_type_column = config_.change_type_column;
    ARROW_ASSIGN_OR_RAISE(copts.mapper, change::ChangeKindMapper::Make(config_.change_type_map));
    copts.upsert = config_.upsert;
    copts.output_columns = dest->table_columns;
    // Delete images are resolved by key; equality deletes also need the partition the old row lived
    // in. Nothing else reads their other columns, so the collapser may keep UPDATE_BEFORE and DELETE
    // rows without them (change_collapser.h, delete_image_columns).
    copts.delete_image_columns.emplace();
    if (config_.delete_strategy == DeleteStrategy::kEquality) {
      for (const auto& f : m.Spec()->fields()) {
        const std::string source = schema->FindColumnName(f.source_id);
        if (std::find(dest->table_columns.begin(), dest->table_columns.end(), source) == dest->table_columns.end()) {
          copts.delete_image_columns.reset();  // a nested source (or one not in the input): keep every column
          break;
        }
        copts.delete_image_columns->push_back(source);
      }
    }
    copts.memory_limit_bytes = static_cast<int64_t>(config_.sorter_memory_mb) << 20;
    copts.dead_letter = config_.error_handling.has_value();
    copts.source_name = options.source_name;
    arrow::FieldVector prepared = dest->input_arrow->fields();
    for (const auto& c : control) {
      auto f = input_schema->GetFieldByName(c);
      if (!f) {
        return InvalidArgument("{}: the input has no column '{}' ({})", options.source_name, c,
                               c == config_.sequence_number_column ? "sequence_number_column" : "change_type_column");
      }
      prepared.push_back(f);
    }
    LS_ASSIGN_OR_RAISE_CTX(dest->collapser, plan::ChangeCollapser::Make(arrow::schema(prepared), copts),
                           "applying changes to {}", name);
  } else {
    auto writer_options = table::DataWriterOptionsFor(*dest->table);
    writer_options.schema = dest->write_schema();
    for (const auto& [k, v] : config_.write_properties) writer_options.properties[k] = v;
    ARROW_ASSIGN_OR_RAISE(dest->append_writer, iceberg::RollingDataWriter::Make(writer_options));
  }
  destinations_.push_back(std::move(dest));
  return destinations_.back().get();
}

Status CdcWriter::EvolveFor(Destination& dest, const arrow::Schema& input_schema,
                            const std::vector<std::string>& input_columns, const ApplyOptions& options) {
  const auto& m = *dest.table->metadata();
  SchemaEvolutionInput what;
  what.table_name = dest.name;
  what.source_name = options.source_name;
  what.position = options.source_position.value_or("");
  what.input_columns = input_columns;
  if (!config_.equality_columns.empty()) {
    what.key_columns = config_.equality_columns;
  } else {
    for (int32_t id : m.Schema()->identifier_field_ids()) what.key_columns.push_back(m.Schema()->FindColumnName(id));
  }
  what.renames = options.column_renames;
  ARROW_ASSIGN_OR_RAISE(auto changes, PlanSchemaEvolution(m, input_schema, what));
  if (changes.empty()) return Status::OK();
  LS_ASSIGN_OR_RAISE_CTX(auto evolved, iceberg::EvolveSchema(m, changes), "schema_evolution: table {}", dest.name);
  if (!evolved.changed) return Status::OK();
  std::vector<std::string> said;
  for (const auto& c : changes) said.push_back(c.ToString());
  LS_LOG_INFO("schema_evolution: {} follows the source's schema in this commit: {}", dest.name, fmt::join(said, ", "));
  dest.evolved = std::move(evolved);
  return Status::OK();
}

std::pair<std::string, int64_t> CdcWriter::InputRow(const ApplyOptions& options, bool contiguous) const {
  // Rows routed to several tables by a template are not contiguous in the input: their row numbers
  // count the rows of the batch routed to that table, which the message then says.
  if (!contiguous) return {options.source_name + " (rows routed to one table)", 0};
  if (options.locate_input_row) return options.locate_input_row(batch_first_row_);
  return {options.source_name, batch_first_row_};
}

Status CdcWriter::Route(const std::shared_ptr<arrow::RecordBatch>& input, const ApplyOptions& options) {
  std::shared_ptr<arrow::RecordBatch> batch = input;
  std::set<std::string> control;
  if (config_.mode == WriteMode::kMergeOnRead) {
    control.insert(config_.sequence_number_column);
    if (config_.change_type_column) control.insert(*config_.change_type_column);
  }
  if (config_.only) {
    ARROW_ASSIGN_OR_RAISE(batch, FlattenOnly(batch, *config_.only, control));
  }

  // Split rows by destination table (templates) — one destination without placeholders.
  std::vector<std::pair<std::string, std::shared_ptr<arrow::RecordBatch>>> routed;
  if (!IsTemplate(config_.table)) {
    routed.emplace_back(config_.table, batch);
  } else {
    std::map<std::string, std::vector<int64_t>> rows_of;
    const auto placeholders = TemplatePlaceholders(config_.table);
    std::vector<std::shared_ptr<arrow::Array>> columns;
    for (const auto& p : placeholders) {
      auto column = batch->GetColumnByName(p.substr(0, p.find('.')));
      if (!column) return InvalidArgument("table template {}: the input has no column '{}'", config_.table, p);
      if (p.find('.') != std::string::npos) {
        // Nested placeholder a.b.c: walk the struct path.
        std::string rest = p.substr(p.find('.') + 1);
        while (!rest.empty()) {
          const auto dot = rest.find('.');
          const std::string part = rest.substr(0, dot);
          if (column->type_id() != arrow::Type::STRUCT) {
            return InvalidArgument("table template {}: '{}' is not a record", config_.table, p);
          }
          ARROW_ASSIGN_OR_RAISE(column, static_cast<const arrow::StructArray&>(*column).GetFlattenedField(
                                            static_cast<const arrow::StructType&>(*column->type()).GetFieldIndex(part)));
          rest = dot == std::string::npos ? "" : rest.substr(dot + 1);
        }
      }
      ARROW_ASSIGN_OR_RAISE(auto as_text, arrow::compute::Cast(*column, arrow::utf8()));
      columns.push_back(as_text);
    }
    for (int64_t r = 0; r < batch->num_rows(); ++r) {
      ARROW_ASSIGN_OR_RAISE(
          auto name, RenderTableTemplate(config_.table, [&](std::string_view placeholder) -> std::optional<std::string> {
            for (size_t i = 0; i < placeholders.size(); ++i) {
              if (placeholders[i] == placeholder) {
                const auto& c = static_cast<const arrow::StringArray&>(*columns[i]);
                if (c.IsNull(r)) return std::nullopt;
                return std::string(c.GetView(r));
              }
            }
            return std::nullopt;
          }));
      rows_of[name].push_back(r);
    }
    for (const auto& [name, rows] : rows_of) {
      arrow::Int64Builder indices;
      ARROW_RETURN_NOT_OK(indices.AppendValues(rows));
      ARROW_ASSIGN_OR_RAISE(auto idx, indices.Finish());
      ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(batch, idx));
      routed.emplace_back(name, taken.record_batch());
    }
  }

  for (auto& [name, rows] : routed) {
    ARROW_ASSIGN_OR_RAISE(Destination * dest, DestinationFor(name, rows->schema(), options));
    if (dest->skipped) continue;
    if (dest->collapser) {
      // The collapser's input: the table columns converted to the table's types (table order), then
      // the control columns. Converting here, before rows are collapsed and reordered, is what lets
      // an error name the input row (every row, an UPDATE_BEFORE image's included).
      std::vector<int> idx;
      for (const auto& n : dest->table_columns) idx.push_back(rows->schema()->GetFieldIndex(n));
      ARROW_ASSIGN_OR_RAISE(auto values, rows->SelectColumns(idx));
      const auto [source, first_row] = InputRow(options, routed.size() == 1 && !IsTemplate(config_.table));
      ARROW_ASSIGN_OR_RAISE(auto conformed, tabular::ConformBatch(values, dest->input_arrow, source, first_row));
      arrow::FieldVector fields = conformed->schema()->fields();
      arrow::ArrayVector arrays = conformed->columns();
      for (const auto& c : control) {
        fields.push_back(rows->schema()->GetFieldByName(c));
        arrays.push_back(rows->GetColumnByName(c));
      }
      ARROW_RETURN_NOT_OK(
          dest->collapser->Add(arrow::RecordBatch::Make(arrow::schema(fields), rows->num_rows(), arrays)));
    } else {
      std::vector<int> idx;
      for (const auto& n : TableColumnsOf(*rows->schema(), config_, control)) {
        idx.push_back(rows->schema()->GetFieldIndex(n));
      }
      ARROW_ASSIGN_OR_RAISE(auto prepared, rows->SelectColumns(idx));
      const auto [source, first_row] = InputRow(options, routed.size() == 1 && !IsTemplate(config_.table));
      ARROW_ASSIGN_OR_RAISE(auto conformed, tabular::ConformBatch(prepared, dest->table_arrow, source, first_row));
      ARROW_RETURN_NOT_OK(dest->append_writer->Write(conformed));
    }
  }
  return Status::OK();
}

Result<CdcWriter::StagedRows> CdcWriter::StageRows(Destination& dest, const ApplyOptions& options) {
  StagedRows staged;
  const auto& table = dest.table;
  auto io = table->io();
  auto delete_all = [&](std::vector<std::string>& files) {
    for (const auto& f : files) {
      auto st = io->Delete(f);
      if (!st.ok()) LS_LOG_WARN("could not delete {}: {}", f, st.message());
    }
    files.clear();
  };

  // 1. Data files: the final rows.
  std::vector<iceberg::DataFile> data_files;
  std::vector<std::shared_ptr<arrow::Table>> delete_images;
  std::vector<bool> delete_is_old_image;  // one flag per delete image row, in the same order
  if (dest.append_writer) {
    auto closed = dest.append_writer->Close();
    dest.append_writer.reset();
    ARROW_RETURN_NOT_OK(closed.status());
    data_files = std::move(*closed);
  } else {
    auto writer_options = table::DataWriterOptionsFor(*table);
    writer_options.schema = dest.write_schema();
    for (const auto& [k, v] : config_.write_properties) writer_options.properties[k] = v;
    // One operation id for the apply (DataWriterOptionsFor's); each key shard's writer is a task of its
    // own (task id = shard number), so file names are distinct and do not depend on which thread wrote them.
    // Key shards (plan/change_collapser.h) are collapsed and written side by side on the executor,
    // each into data files of its own, and gathered in shard order: the files are the same whatever
    // the thread count, and the shards in flight share sorter_memory_mb between them.
    internal::PhaseClock clock;
    LS_ASSIGN_OR_RAISE_CTX(auto shards, dest.collapser->TakeShards(), "applying changes to {}", dest.name);
    clock.Log(dest.name, fmt::format("splitting the changes into {} key shards", shards.size()));
    struct ShardOutput {
      std::vector<iceberg::DataFile> files;
      std::vector<std::shared_ptr<arrow::Table>> delete_images;
      std::vector<bool> delete_is_old_image;
    };
    // A shard's delete images are conformed to the table's types in the shard, on the pool, so only
    // their concatenation is left to this thread. Images resolved to positions are only read by key
    // (key_resolver.h): they keep just the key columns. Equality deletes keep the whole image (the
    // partition it names, SplitUnroutableDeletes).
    const bool whole_images = config_.delete_strategy == DeleteStrategy::kEquality;
    std::shared_ptr<arrow::Schema> image_schema = dest.delete_arrow;
    if (!whole_images) {
      arrow::FieldVector keys;
      for (const auto& k : dest.key_columns) keys.push_back(dest.delete_arrow->GetFieldByName(k));
      image_schema = arrow::schema(keys);
    }
    auto conform_image = [&](const arrow::Table& images) -> Result<std::shared_ptr<arrow::Table>> {
      ARROW_ASSIGN_OR_RAISE(auto batch, images.CombineChunksToBatch());
      if (!whole_images) {
        std::vector<int> keep;  // a key column absent from the input is filled with nulls, as before
        for (const auto& k : dest.key_columns) {
          if (const int i = batch->schema()->GetFieldIndex(k); i >= 0) keep.push_back(i);
        }
        ARROW_ASSIGN_OR_RAISE(batch, batch->SelectColumns(keep));
      }
      ARROW_ASSIGN_OR_RAISE(auto conformed, tabular::ConformBatch(batch, image_schema, options.source_name));
      return arrow::Table::FromRecordBatches({conformed});
    };
    std::mutex started_mutex;
    std::vector<std::string> started;  // every file a shard began: deleted if any shard fails
    auto stage_shard = [&](size_t i) -> Result<ShardOutput> {
      plan::CollapseShard& shard = *shards[i];
      auto options_for_shard = writer_options;
      options_for_shard.task_id = shard.index();
      ARROW_ASSIGN_OR_RAISE(auto writer, iceberg::RollingDataWriter::Make(options_for_shard));
      auto keep_for_cleanup = [&](std::vector<std::string> paths) {
        std::lock_guard lock(started_mutex);
        started.insert(started.end(), paths.begin(), paths.end());
      };
      ShardOutput out;
      Status st = [&]() -> Status {
        while (true) {
          ARROW_ASSIGN_OR_RAISE(auto part, shard.NextPart());
          if (!part) break;
          arrow::TableBatchReader rows(*part->rows);
          std::shared_ptr<arrow::RecordBatch> batch;
          while (true) {
            ARROW_RETURN_NOT_OK(rows.ReadNext(&batch));
            if (!batch) break;
            ARROW_ASSIGN_OR_RAISE(auto conformed, tabular::ConformBatch(batch, dest.table_arrow, options.source_name));
            ARROW_RETURN_NOT_OK(writer->Write(conformed));
          }
          if (part->deletes->num_rows() > 0) {
            ARROW_ASSIGN_OR_RAISE(auto image, conform_image(*part->deletes));
            out.delete_images.push_back(std::move(image));
            out.delete_is_old_image.insert(out.delete_is_old_image.end(), part->delete_is_old_image.begin(),
                                           part->delete_is_old_image.end());
          }
        }
        return Status::OK();
      }();
      if (!st.ok()) {
        keep_for_cleanup(writer->Abort());
        return st;
      }
      auto closed = writer->Close();
      if (!closed.ok()) {
        keep_for_cleanup(writer->Abort());
        return closed.status();
      }
      std::vector<std::string> paths;
      for (const auto& f : *closed) paths.push_back(f.file_path);
      keep_for_cleanup(std::move(paths));
      out.files = std::move(*closed);
      return out;
    };
    auto outputs = ParallelMap<ShardOutput>(shards.size(), stage_shard);
    clock.Log(dest.name, "collapsing the key shards and writing their data files");
    if (!outputs.ok()) {
      // ParallelMap waited for every shard in flight: `started` is complete.
      dest.written.insert(dest.written.end(), started.begin(), started.end());
      delete_all(dest.written);
      return outputs.status();
    }
    for (auto& out : *outputs) {
      for (auto& f : out.files) data_files.push_back(std::move(f));
      for (auto& d : out.delete_images) delete_images.push_back(std::move(d));
      delete_is_old_image.insert(delete_is_old_image.end(), out.delete_is_old_image.begin(),
                                 out.delete_is_old_image.end());
    }
  }
  for (const auto& f : data_files) {
    dest.written.push_back(f.file_path);
    staged.rows_written += f.record_count;
    staged.data_bytes += f.file_size_in_bytes;
  }
  staged.data_files = std::move(data_files);

  // Delete images as the table's Arrow types (the key encoding compares exact types; each shard
  // conformed its own), in one chunk.
  std::shared_ptr<arrow::Table> deletes;
  if (!delete_images.empty()) {
    ARROW_ASSIGN_OR_RAISE(auto concatenated, ConcatTables(delete_images, delete_images.front()->schema()));
    ARROW_ASSIGN_OR_RAISE(auto batch, concatenated->CombineChunksToBatch());
    ARROW_ASSIGN_OR_RAISE(deletes, arrow::Table::FromRecordBatches({batch}));
  }
  std::shared_ptr<arrow::Table> equality_deletes;
  if (deletes && config_.delete_strategy == DeleteStrategy::kEquality) {
    ARROW_ASSIGN_OR_RAISE(std::tie(equality_deletes, staged.position_deletes),
                          SplitUnroutableDeletes(deletes, delete_is_old_image, *table->metadata(),
                                                 dest.key_columns));
    if (staged.position_deletes) {
      LS_LOG_INFO("{}: {} deletes do not tell the partition of the row they replace (key-only deletes or "
                  "after-images without a before-image); resolving them to positions", dest.name,
                  staged.position_deletes->num_rows());
    }
  } else {
    staged.position_deletes = deletes;
  }

  // 2. Equality deletes do not depend on the table state: written once.
  if (equality_deletes) {
    const auto& m = *table->metadata();
    const auto schema = dest.write_schema();  // the delete images' schema (evolved with the data)
    std::vector<int32_t> ids;
    for (const auto& k : dest.key_columns) ids.push_back(schema->FindFieldByName(k)->id);
    ARROW_ASSIGN_OR_RAISE(auto splitter, iceberg::PartitionSplitter::Make(schema, m.Spec()));
    ARROW_ASSIGN_OR_RAISE(auto batch, equality_deletes->CombineChunksToBatch());
    ARROW_ASSIGN_OR_RAISE(auto groups, splitter->Split(batch));
    // One file per partition, written in parallel on the executor; locations are chosen (and
    // recorded for cleanup) in partition order first, so nothing depends on the thread count.
    iceberg::FileNamer namer(table::DataLocation(m), 0, 0, table->NewFileStem());
    std::vector<std::string> locations;
    for (const auto& g : groups) {
      locations.push_back(namer.NewLocation(m.Spec()->PartitionPath(*schema, g.partition), true));
      dest.written.push_back(locations.back());
    }
    ARROW_ASSIGN_OR_RAISE(
        staged.equality_files,
        ParallelMap<iceberg::DataFile>(groups.size(), [&](size_t i) -> Result<iceberg::DataFile> {
          const auto& g = groups[i];
          iceberg::EqualityDeleteWriterOptions eq;
          eq.table_schema = schema;
          eq.equality_field_ids = ids;
          eq.location = locations[i];
          eq.output_factory = table->Outputs();
          eq.spec_id = m.Spec()->spec_id();
          eq.partition = g.partition;
          eq.properties = m.properties;
          ARROW_ASSIGN_OR_RAISE(auto writer, iceberg::EqualityDeleteWriter::Make(eq));
          // The key columns, in the delete schema's order and types.
          ARROW_ASSIGN_OR_RAISE(auto key_arrow, iceberg::ToArrowSchema(*writer->delete_schema()));
          arrow::ArrayVector key_arrays;
          for (const auto& f : key_arrow->fields()) key_arrays.push_back(g.rows->GetColumnByName(f->name()));
          ARROW_RETURN_NOT_OK(writer->Write(arrow::RecordBatch::Make(key_arrow, g.rows->num_rows(), key_arrays)));
          return writer->Close();
        }));
    for (const auto& file : staged.equality_files) staged.equality_deleted += file.record_count;
  }
  return staged;
}

Result<TableApplyResult> CdcWriter::Finish(Destination& dest, const ApplyOptions& options) {
  TableApplyResult result;
  result.table = dest.name;
  result.created = dest.created;
  if (dest.skipped) {
    result.skipped = true;
    result.message = dest.message;
    return result;
  }
  const auto& table = dest.table;
  auto io = table->io();
  auto delete_all = [&](std::vector<std::string>& files) {
    for (const auto& f : files) {
      auto st = io->Delete(f);
      if (!st.ok()) LS_LOG_WARN("could not delete {}: {}", f, st.message());
    }
    files.clear();
  };

  internal::PhaseClock clock;
  ARROW_ASSIGN_OR_RAISE(auto staged, StageRows(dest, options));
  clock.Log(dest.name, "staging (collapsing, data files, delete images)");
  result.rows_written = staged.rows_written;
  result.data_bytes = staged.data_bytes;
  result.data_files = static_cast<int64_t>(staged.data_files.size());
  result.rows_deleted = staged.equality_deleted;

  // 3. Resolve, write position deletes and commit (staged_apply.h, steps 2-4 in one process).
  //    Positions depend on the table state: the one commit loop (SnapshotUpdate, through
  //    CommitFiles) resolves them again on the refreshed table after a conflict and owns every retry
  //    (data files are written once and reused).
  std::optional<SourcePosition> position;
  if (options.source_position) {
    ARROW_ASSIGN_OR_RAISE(position, ParseSourcePosition(*options.source_position));
  }
  FilesToCommit files;
  files.data_files = staged.data_files;
  files.delete_files = staged.equality_files;
  int64_t deleted_positions = 0;
  std::vector<iceberg::DataFile> attempt_delete_files;  // the last attempt's
  ResolveAttempt resolve;
  if (staged.position_deletes) {
    resolve = [&](table::AttemptDeletes& deletes, std::set<std::string>& resolved_files) -> Status {
      internal::PhaseClock clock;
      table::PositionDeletes positions(table);
      ARROW_ASSIGN_OR_RAISE(auto resolved, ResolveKeys(table, *staged.position_deletes, dest.key_columns, positions));
      clock.Log(dest.name, fmt::format("resolving {} keys to positions", staged.position_deletes->num_rows()));
      resolved_files = resolved.data_files;
      result.missing_deletes = resolved.stats.keys - resolved.stats.keys_found;
      deleted_positions = positions.count();
      ARROW_RETURN_NOT_OK(positions.WriteTo(deletes));
      clock.Log(dest.name, fmt::format("writing the deletes of {} positions", deleted_positions));
      attempt_delete_files = deletes.added;
      return Status::OK();
    };
  }
  auto delete_file_count = [&] {
    std::vector<iceberg::DataFile> all = files.delete_files;
    all.insert(all.end(), attempt_delete_files.begin(), attempt_delete_files.end());
    return static_cast<int64_t>(DistinctFiles(all));
  };
  if (dest.evolved) files.schema = dest.evolved;
  clock.Restart();
  auto committed = CommitFiles(table, files, config_, options.source_position, resolve);
  clock.Log(dest.name, "committing (key resolution and deletes included)");
  if (committed.ok()) {
    switch (committed->outcome) {
      case CommitOutcome::kNothingToDo:
        result.skipped = true;
        result.message = committed->message;
        return result;
      case CommitOutcome::kAlreadyApplied:
        delete_all(dest.written);
        result.skipped = true;
        result.message = committed->message;
        LS_LOG_WARN("{}", result.message);
        return result;
      case CommitOutcome::kCommitted:
        result.snapshot_id = committed->snapshot_id;
        result.attempts = committed->attempts;
        result.rows_deleted += deleted_positions;
        result.delete_files = delete_file_count();
        dest.written.clear();
        return result;
    }
  }
  const Status& error = committed.status();
  if (KindOf(error) == ErrorKind::kCommitStateUnknown) {  // keep every file
    ARROW_ASSIGN_OR_RAISE(int64_t landed, ResolveUnknownCommit(*table, error, config_.sink_id, position));
    result.snapshot_id = landed;
    result.attempts = 1;  // at least the one whose outcome was unknown (the error does not carry the count)
    result.rows_deleted += deleted_positions;
    result.delete_files = delete_file_count();
    result.message = "the commit's outcome was unknown; reloading showed it landed";
    dest.written.clear();
    return result;
  }
  delete_all(dest.written);
  return error;
}

Result<ApplyResult> CdcWriter::Apply(arrow::RecordBatchReader& changes, const ApplyOptions& options) {
  destinations_.clear();
  evolution_allowed_ = true;
  struct Disallow {
    bool& flag;
    ~Disallow() { flag = false; }
  } disallow{evolution_allowed_};
  batch_first_row_ = 0;
  ApplyResult result;
  // A template writes several tables: where the catalog can, their commits are held back and made
  // in one atomic transaction at the end, so the tables never disagree about the source position.
  std::shared_ptr<catalog::BufferedCommitCatalog> buffered;
  const std::shared_ptr<catalog::Catalog> direct = catalog_;
  if (IsTemplate(config_.table) && catalog_->SupportsMultiTableCommit()) {
    buffered = std::make_shared<catalog::BufferedCommitCatalog>(catalog_);
    catalog_ = buffered;
  }
  struct Restore {
    std::shared_ptr<catalog::Catalog>& slot;
    std::shared_ptr<catalog::Catalog> value;
    ~Restore() { slot = value; }
  } restore{catalog_, direct};
  // A failed apply leaves no file behind (docs/cli.md): every destination's written files go, except
  // when a commit's outcome is unknown, where they may already belong to the table.
  auto fail = [&](const Status& st) {
    const bool keep = KindOf(st) == ErrorKind::kCommitStateUnknown;
    for (auto& d : destinations_) {
      if (d->append_writer) {
        for (const auto& f : d->append_writer->Abort()) (void)d->table->io()->Delete(f);
        d->append_writer.reset();
      }
      if (!keep) {
        for (const auto& f : d->written) {
          auto deleted = d->table->io()->Delete(f);
          if (!deleted.ok()) LS_LOG_WARN("could not delete {} after a failed apply: {}", f, deleted.message());
        }
        d->written.clear();
      }
      if (d->table) table::EndWriteAttempt(*d->table, st);
    }
    return st;
  };
  // Without an explicit sequence column, changes are ordered as they arrive (file order, row order).
  const bool synthesize_sequence = config_.mode == WriteMode::kMergeOnRead &&
                                   !config_.is_given("sequence_number_column") &&
                                   changes.schema()->GetFieldIndex(config_.sequence_number_column) < 0;
  int64_t next_sequence = 0;
  // --log-level debug: reading and routing interleave, so each is summed over the batches.
  internal::PhaseClock clock;
  internal::PhaseTime reading, routing;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    Status st = changes.ReadNext(&batch);
    reading += clock.Lap();
    if (!st.ok()) return fail(WithContext(st, "reading " + options.source_name));
    if (!batch) break;
    if (synthesize_sequence) {
      arrow::Int64Builder seq;
      ARROW_RETURN_NOT_OK(seq.Reserve(batch->num_rows()));
      for (int64_t i = 0; i < batch->num_rows(); ++i) seq.UnsafeAppend(next_sequence++);
      ARROW_ASSIGN_OR_RAISE(auto seq_array, seq.Finish());
      ARROW_ASSIGN_OR_RAISE(batch, batch->AddColumn(batch->num_columns(),
                                                    arrow::field(config_.sequence_number_column, arrow::int64(), false),
                                                    seq_array));
    }
    st = Route(batch, options);
    routing += clock.Lap();
    if (!st.ok()) return fail(st);
    batch_first_row_ += batch->num_rows();
  }
  internal::LogPhase(options.source_name, "reading the changes", reading);
  internal::LogPhase(options.source_name, "routing and preparing the changes (spilling included)", routing);
  if (destinations_.empty() && !IsTemplate(config_.table)) {
    // No rows at all: still record progress when a position is given, so the source moves on.
    auto st = DestinationFor(config_.table, changes.schema(), options).status();
    if (!st.ok() && !(KindOf(st) == ErrorKind::kInvalidArgument && config_.mode == WriteMode::kMergeOnRead)) {
      return fail(st);
    }
  }
  // Dead letters first: if they cannot be written, nothing is committed.
  if (config_.error_handling) {
    std::vector<std::shared_ptr<arrow::Table>> letters;
    for (auto& d : destinations_) {
      if (d->collapser && d->collapser->dead_letters()->num_rows() > 0) letters.push_back(d->collapser->dead_letters());
    }
    if (!letters.empty()) {
      ARROW_ASSIGN_OR_RAISE(auto all, arrow::ConcatenateTables(letters, arrow::ConcatenateTablesOptions{true}));
      result.dead_letters = all->num_rows();
      ARROW_ASSIGN_OR_RAISE(auto location, io::NormalizeLocation(config_.error_handling->output));
      ARROW_ASSIGN_OR_RAISE(auto out, catalog_->io()->OpenOutput(location));
      ARROW_ASSIGN_OR_RAISE(auto writer, tabular::MakeRecordWriter(tabular::Format::kParquet, all->schema(), out));
      arrow::TableBatchReader reader(*all);
      std::shared_ptr<arrow::RecordBatch> b;
      while (true) {
        ARROW_RETURN_NOT_OK(reader.ReadNext(&b));
        if (!b) break;
        ARROW_RETURN_NOT_OK(writer->Write(*b));
      }
      ARROW_RETURN_NOT_OK(writer->Close());
      ARROW_RETURN_NOT_OK(out->Close());
      result.dead_letter_location = location;
      LS_LOG_WARN("{} rows could not be applied; written with their reasons to {}", result.dead_letters, location);
    }
  }
  for (auto& d : destinations_) {
    auto r = Finish(*d, options);
    if (!r.ok()) return fail(WithContext(r.status(), "applying changes to " + d->name));
    // A buffered commit lands (or not) in CommitAll below: the record stays until then.
    if (!buffered) table::EndWriteAttempt(*d->table, Status::OK());
    if (d->collapser) result.changes += d->collapser->stats();
    result.tables.push_back(std::move(*r));
  }
  if (buffered) {
    const auto pending = buffered->pending();
    Status st = buffered->CommitAll();
    if (!st.ok() && KindOf(st) == ErrorKind::kCommitStateUnknown) {
      // Atomic: if one table carries the position, all of them do.
      for (auto& d : destinations_) {
        if (std::find(pending.begin(), pending.end(), d->id) == pending.end()) continue;
        std::optional<SourcePosition> position;
        if (options.source_position) {
          ARROW_ASSIGN_OR_RAISE(position, ParseSourcePosition(*options.source_position));
        }
        auto table = std::make_shared<table::Table>(direct, catalog::LoadedTable{d->id, "", nullptr, nullptr});
        ARROW_RETURN_NOT_OK(ResolveUnknownCommit(*table, st, config_.sink_id, position).status());
        st = Status::OK();
        break;
      }
    }
    if (!st.ok()) {
      // The data files were handed to the transaction and are no longer this apply's to delete: their
      // records stay, and the next write to each table deletes what it does not reference.
      for (auto& d : destinations_) {
        if (d->table) d->table->set_pending_files(nullptr);
      }
      return fail(WithContext(st, fmt::format("committing {} table(s) of {} in one transaction", pending.size(),
                                              config_.table)));
    }
    for (auto& d : destinations_) {
      if (d->table) table::EndWriteAttempt(*d->table, Status::OK());
    }
  }
  return result;
}

}  // namespace lakesync::sink

namespace lakesync::sink {

Status CdcWriter::CheckDistributable() const {
  if (IsTemplate(config_.table)) {
    return Unsupported("table '{}': a distributed apply writes one table; table templates are not supported there yet",
                       config_.table);
  }
  if (config_.only) return Unsupported("only: not supported by a distributed apply yet");
  if (config_.error_handling) {
    return Unsupported("error_handling: not supported by a distributed apply yet (invalid rows fail the run)");
  }
  return Status::OK();
}

Result<ApplyTarget> CdcWriter::Prepare(const std::shared_ptr<arrow::Schema>& input_schema,
                                       const ApplyOptions& options) {
  ARROW_RETURN_NOT_OK(CheckDistributable());
  destinations_.clear();
  // The schema change is planned here, once, from the input's schema; the target carries it to every
  // shard and to the commit (ApplyTarget::schema), which makes it current with the snapshot.
  evolution_allowed_ = true;
  struct Disallow {
    bool& flag;
    ~Disallow() { flag = false; }
  } disallow{evolution_allowed_};
  ARROW_ASSIGN_OR_RAISE(Destination * dest, DestinationFor(config_.table, input_schema, options));
  ApplyTarget target;
  target.schema = dest->evolved;
  target.table = dest->name;
  target.metadata_location = dest->table->metadata_location();
  if (auto current = dest->table->metadata()->CurrentSnapshot()) target.snapshot_id = current->snapshot_id;
  target.key_columns = dest->key_columns;
  target.created = dest->created;
  target.skipped = dest->skipped;
  target.message = dest->message;
  destinations_.clear();
  return target;
}

Result<StagedShard> CdcWriter::Stage(arrow::RecordBatchReader& changes, const ApplyTarget& target,
                                     const ApplyOptions& options) {
  ARROW_RETURN_NOT_OK(CheckDistributable());
  if (config_.mode == WriteMode::kMergeOnRead &&
      changes.schema()->GetFieldIndex(config_.sequence_number_column) < 0) {
    return InvalidArgument("{}: a distributed apply needs the sequence column '{}' in the changes (arrival order "
                           "does not order changes across workers)", options.source_name,
                           config_.sequence_number_column);
  }
  destinations_.clear();
  pinned_ = &target;
  struct Unpin {
    CdcWriter* w;
    ~Unpin() { w->pinned_ = nullptr; }
  } unpin{this};
  ApplyOptions stage_options = options;
  stage_options.source_position.reset();  // the driver checked the position; the committer records it
  auto fail = [&](const Status& st) {
    for (auto& d : destinations_) {
      if (d->append_writer) {
        for (const auto& f : d->append_writer->Abort()) (void)d->table->io()->Delete(f);
        d->append_writer.reset();
      }
      for (const auto& f : d->written) (void)d->table->io()->Delete(f);
    }
    destinations_.clear();
    return st;
  };
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    Status st = changes.ReadNext(&batch);
    if (!st.ok()) return fail(WithContext(st, "reading " + options.source_name));
    if (!batch) break;
    st = Route(batch, stage_options);
    if (!st.ok()) return fail(st);
  }
  StagedShard out;
  if (destinations_.empty()) return out;  // no rows in this shard
  Destination& dest = *destinations_.front();
  auto staged = StageRows(dest, stage_options);
  if (!staged.ok()) return fail(WithContext(staged.status(), "applying changes to " + dest.name));
  out.data_files = std::move(staged->data_files);
  out.delete_files = std::move(staged->equality_files);
  out.rows_written = staged->rows_written;
  out.data_bytes = staged->data_bytes;
  out.equality_deleted = staged->equality_deleted;
  if (staged->position_deletes) {
    table::PositionDeletes positions(dest.table);
    auto resolved = ResolveKeys(dest.table, *staged->position_deletes, dest.key_columns, positions);
    if (!resolved.ok()) return fail(WithContext(resolved.status(), "applying changes to " + dest.name));
    out.resolved_data_files = resolved->data_files;
    out.missing_deletes = resolved->stats.keys - resolved->stats.keys_found;
    for (const auto& [path, t] : positions.targets()) out.positions.push_back({t.data_file, t.current_dv, t.positions});
  }
  if (dest.collapser) out.changes = dest.collapser->stats();
  // The files are handed on to a committer that did not write them: durable first (io/file_syncs.h).
  if (Status synced = dest.table->AwaitFileSyncs(); !synced.ok()) {
    return fail(WithContext(synced, "applying changes to " + dest.name));
  }
  dest.written.clear();  // handed over to the caller
  destinations_.clear();
  return out;
}

}  // namespace lakesync::sink
