#include "lakesync/sink/key_resolver.h"

#include <arrow/array.h>
#include <arrow/chunked_array.h>
#include <arrow/compute/api.h>
#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>
#include <arrow/table.h>
#include <arrow/util/bit_util.h>

#include <unordered_set>

#include "lakesync/formats/parquet/arrow_literal.h"
#include "lakesync/iceberg/expr/binder.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/write/transform_arrow.h"
#include "lakesync/iceberg/model/key_columns.h"
#include "lakesync/iceberg/scan/data_file_reader.h"
#include "lakesync/iceberg/scan/task_units.h"
#include "lakesync/table/scan.h"

namespace lakesync::sink {
namespace {

using iceberg::TypeId;

// key >= min AND key <= max for every orderable key column: the scan planner prunes files whose
// column bounds cannot hold any of the keys.
Result<iceberg::BoundExpr> BoundsFilter(const arrow::Table& keys, const iceberg::Schema& schema,
                                        const std::vector<std::string>& key_columns) {
  iceberg::BoundExpr filter = iceberg::BoundExpr::AlwaysTrue();
  for (const auto& name : key_columns) {
    const auto* field = schema.FindFieldByName(name);
    if (!field) return InvalidArgument("key column '{}' is not in the table", name);
    switch (field->type->id()) {
      case TypeId::kBoolean:
      case TypeId::kUuid:
      case TypeId::kFixed:
      case TypeId::kBinary:
        continue;  // bounds on these prune little; skip
      default:
        break;
    }
    auto column = keys.GetColumnByName(name);
    ARROW_ASSIGN_OR_RAISE(auto minmax, arrow::compute::MinMax(column));
    const auto& pair = minmax.scalar_as<arrow::StructScalar>();
    ARROW_ASSIGN_OR_RAISE(auto min_array, arrow::MakeArrayFromScalar(*pair.value[0], 1));
    ARROW_ASSIGN_OR_RAISE(auto max_array, arrow::MakeArrayFromScalar(*pair.value[1], 1));
    if (min_array->IsNull(0) || max_array->IsNull(0)) continue;
    ARROW_ASSIGN_OR_RAISE(auto lo, parquet_io::LiteralFromArray(*min_array, 0, *field->type));
    ARROW_ASSIGN_OR_RAISE(auto hi, parquet_io::LiteralFromArray(*max_array, 0, *field->type));
    ARROW_ASSIGN_OR_RAISE(auto ref, iceberg::BindReference(schema, {name}));
    ARROW_ASSIGN_OR_RAISE(auto ge, iceberg::BoundExpr::Predicate(iceberg::Operation::kGtEq, ref, {lo}));
    ARROW_ASSIGN_OR_RAISE(auto le, iceberg::BoundExpr::Predicate(iceberg::Operation::kLtEq, ref, {hi}));
    filter = iceberg::BoundExpr::And(filter, iceberg::BoundExpr::And(ge, le));
  }
  return filter;
}

// For specs whose fields all derive from key columns, the partition tuples the keys map to: files in
// other partitions cannot hold the keys. Specs with other source columns are absent (no pruning).
Result<std::map<int32_t, std::unordered_set<std::string>>> KeyPartitions(const iceberg::TableMetadata& m,
                                                                         const arrow::Table& keys,
                                                                         const std::vector<std::string>& key_columns) {
  std::map<int32_t, std::unordered_set<std::string>> out;
  const auto& schema = *m.Schema();
  std::set<int32_t> key_ids;
  for (const auto& n : key_columns) key_ids.insert(schema.FindFieldByName(n)->id);
  ARROW_ASSIGN_OR_RAISE(auto batch, keys.CombineChunksToBatch());
  for (const auto& spec : m.partition_specs) {
    if (spec->fields().empty()) continue;
    bool derived = true;
    for (const auto& f : spec->fields()) derived &= key_ids.count(f.source_id) > 0;
    if (!derived) continue;
    std::vector<std::shared_ptr<arrow::Array>> values;
    std::vector<iceberg::TypePtr> types;
    ARROW_ASSIGN_OR_RAISE(auto partition_type, spec->PartitionType(schema));
    for (size_t i = 0; i < spec->fields().size(); ++i) {
      const auto& f = spec->fields()[i];
      const auto* source = schema.FindFieldById(f.source_id);
      auto column = batch->GetColumnByName(schema.FindColumnName(f.source_id));
      ARROW_ASSIGN_OR_RAISE(auto transformed, iceberg::ApplyTransform(f.transform, *source->type, column));
      values.push_back(transformed);
      types.push_back(partition_type->fields()[i].type);
    }
    auto& set = out[spec->spec_id()];
    iceberg::DataFile probe;
    probe.spec_id = spec->spec_id();
    for (int64_t r = 0; r < batch->num_rows(); ++r) {
      probe.partition.clear();
      for (size_t i = 0; i < values.size(); ++i) {
        if (values[i]->IsNull(r)) {
          probe.partition.push_back(iceberg::Literal::Null());
        } else {
          ARROW_ASSIGN_OR_RAISE(auto lit, parquet_io::LiteralFromArray(*values[i], r, *types[i]));
          probe.partition.push_back(std::move(lit));
        }
      }
      set.insert(iceberg::PartitionTupleKey(probe));
    }
  }
  return out;
}

}  // namespace

Result<ResolvedPositions> ResolveKeys(const std::shared_ptr<table::Table>& table, const arrow::Table& keys,
                                      const std::vector<std::string>& key_columns, table::PositionDeletes& deletes) {
  ResolvedPositions result;
  if (keys.num_rows() == 0) return result;
  const auto& m = *table->metadata();
  auto schema = m.Schema();
  std::vector<int32_t> key_ids;
  std::vector<std::shared_ptr<arrow::Array>> wanted_columns;
  ARROW_ASSIGN_OR_RAISE(auto wanted_batch, keys.CombineChunksToBatch());
  for (const auto& name : key_columns) {
    const int idx = keys.schema()->GetFieldIndex(name);
    const auto* field = schema->FindFieldByName(name);
    if (idx < 0 || !field) return InvalidArgument("key column '{}' is missing", name);
    key_ids.push_back(field->id);
    wanted_columns.push_back(wanted_batch->column(idx));
  }
  // The keys to find, in the one key encoding equality deletes use (iceberg/model/key_columns.h).
  ARROW_ASSIGN_OR_RAISE(auto wanted_keys, iceberg::KeyColumns::Make(wanted_columns));
  ARROW_ASSIGN_OR_RAISE(const iceberg::KeySet wanted, iceberg::KeySet::Make(wanted_keys));
  result.stats.keys = static_cast<int64_t>(wanted.size());
  // A table without a snapshot holds no rows: every key is missing (and must be counted as such).
  if (!m.CurrentSnapshot()) return result;

  table::ScanOptions options;
  ARROW_ASSIGN_OR_RAISE(options.bound_filter, BoundsFilter(keys, *schema, key_columns));
  ARROW_ASSIGN_OR_RAISE(auto scan, table::TableScan::Make(table, options));
  ARROW_ASSIGN_OR_RAISE(auto tasks, scan->PlanFiles());
  result.stats.files_pruned = scan->stats().data_files_skipped;
  ARROW_ASSIGN_OR_RAISE(auto partitions, KeyPartitions(m, keys, key_columns));

  // Key columns are read like any scan reads them (identity partition values, name mapping, type
  // promotion), with a live mask from the file's deletes: deleted rows must not be matched again.
  LS_ASSIGN_OR_RAISE_CTX(auto context, iceberg::ScanContext::Make(table->io(), m, schema), "resolving keys in {}",
                         table->name());
  auto candidates = std::make_shared<std::vector<table::FileScanTask>>();
  for (auto& task : tasks) {
    if (auto it = partitions.find(task.file->spec_id);
        it != partitions.end() && !it->second.count(iceberg::PartitionTupleKey(*task.file))) {
      ++result.stats.files_pruned;
      continue;
    }
    candidates->push_back(std::move(task));
  }
  result.stats.files_scanned = static_cast<int64_t>(candidates->size());
  iceberg::DataFileReadOptions read;
  read.columns = key_ids;
  read.deletes = iceberg::DataFileReadOptions::Deletes::kMask;
  // Each row group of each candidate file is probed on a worker (the wanted set is only read there, so
  // no locks); the matches come back in file and row-group order and are recorded here, so the
  // positions and the files they name do not depend on the thread count. A unit names the keys it
  // found by their index in the wanted set; one bit vector over those indexes counts the distinct
  // keys found (no set per unit).
  struct UnitMatches {
    size_t task_index = 0;
    puffin::PositionBitmap positions;
    int64_t rows = 0;
    std::vector<int64_t> found;  // wanted-set indexes, one per matched row
  };
  auto probe = [&wanted](size_t task_index, iceberg::DataFileReader& reader) -> Result<UnitMatches> {
    UnitMatches out;
    out.task_index = task_index;
    std::vector<int64_t> indexes;
    while (true) {
      LS_ASSIGN_OR_RAISE_CTX(auto next, reader.Next(), "resolving keys in {}", reader.path());
      if (!next) break;
      const auto& batch = *next->batch;
      const uint8_t* live = next->live[0] ? next->live[0]->data() : nullptr;
      ARROW_ASSIGN_OR_RAISE(auto row_keys, iceberg::KeyColumns::Make(batch.columns()));
      wanted.FindAll(row_keys, indexes);
      for (int64_t i = 0; i < batch.num_rows(); ++i) {
        const int64_t index = indexes[static_cast<size_t>(i)];
        if (index == iceberg::KeySet::kAbsent) continue;
        if (live && !arrow::bit_util::GetBit(live, i)) continue;
        out.found.push_back(index);
        ARROW_RETURN_NOT_OK(out.positions.Add(next->first_row_position + i));
        ++out.rows;
      }
    }
    return out;
  };
  ARROW_ASSIGN_OR_RAISE(auto units, iceberg::TaskUnitStream<UnitMatches>::Make(context, candidates, std::move(read),
                                                                             probe));
  std::vector<uint64_t> found(static_cast<size_t>((wanted.index_space() + 63) / 64), 0);
  int64_t keys_found = 0;
  while (true) {
    auto next = units->Next();
    if (!next.ok()) return WithContext(next.status(), "resolving keys in " + table->name());
    if (!next->has_value()) break;
    UnitMatches& matches = **next;
    if (matches.rows == 0) continue;
    const table::FileScanTask& task = (*candidates)[matches.task_index];
    ARROW_RETURN_NOT_OK(deletes.Add(task, matches.positions));
    result.stats.rows_found += matches.rows;
    for (const int64_t index : matches.found) {
      uint64_t& word = found[static_cast<size_t>(index / 64)];
      const uint64_t bit = uint64_t{1} << (index % 64);
      keys_found += (word & bit) == 0 ? 1 : 0;
      word |= bit;
    }
    result.data_files.insert(task.file->file_path);
  }
  result.stats.keys_found = keys_found;
  return result;
}

}  // namespace lakesync::sink
