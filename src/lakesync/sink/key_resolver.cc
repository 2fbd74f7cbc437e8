#include "lakesync/sink/key_resolver.h"

#include <arrow/array.h>
#include <arrow/chunked_array.h>
#include <arrow/compute/api.h>
#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>
#include <arrow/table.h>

#include <unordered_map>
#include <unordered_set>

#include "lakesync/formats/parquet/arrow_literal.h"
#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/iceberg/expr/binder.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/write/transform_arrow.h"
#include "lakesync/table/delete_loader.h"
#include "lakesync/table/scan.h"

namespace lakesync::sink {
namespace {

using iceberg::TypeId;

// The set of keys to find. A single integer key column (the common case) is kept as integers;
// anything else as the byte encoding equality deletes use, so both compare values exactly.
class KeySet {
 public:
  static Result<KeySet> Make(const arrow::Table& keys, const std::vector<int>& columns) {
    KeySet set;
    const auto& first = *keys.column(columns[0])->type();
    set.integer_ = columns.size() == 1 && (first.id() == arrow::Type::INT64 || first.id() == arrow::Type::INT32);
    const int64_t n = keys.num_rows();
    if (set.integer_) {
      set.ints_.reserve(static_cast<size_t>(n));
      for (const auto& chunk : keys.column(columns[0])->chunks()) {
        for (int64_t i = 0; i < chunk->length(); ++i) set.ints_.insert(IntegerAt(*chunk, i));
      }
      return set;
    }
    set.encoded_.reserve(static_cast<size_t>(n));
    auto combined = keys.CombineChunksToBatch();
    if (!combined.ok()) return combined.status();
    std::string key;
    for (int64_t i = 0; i < n; ++i) {
      key.clear();
      for (int c : columns) ARROW_RETURN_NOT_OK(table::AppendKeyValue(key, *(*combined)->column(c), i));
      set.encoded_.insert(key);
    }
    return set;
  }

  static int64_t IntegerAt(const arrow::Array& a, int64_t i) {
    return a.type_id() == arrow::Type::INT64 ? static_cast<const arrow::Int64Array&>(a).Value(i)
                                             : static_cast<const arrow::Int32Array&>(a).Value(i);
  }

  size_t size() const { return integer_ ? ints_.size() : encoded_.size(); }
  bool integer() const { return integer_; }
  bool ContainsInteger(int64_t v) const { return ints_.count(v) > 0; }
  bool ContainsEncoded(const std::string& k) const { return encoded_.count(k) > 0; }

 private:
  bool integer_ = false;
  std::unordered_set<int64_t> ints_;
  std::unordered_set<std::string> encoded_;
};

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

int FieldIndex(const arrow::Schema& schema, int32_t field_id) {
  for (int i = 0; i < schema.num_fields(); ++i) {
    if (iceberg::ArrowFieldId(*schema.field(i)) == field_id) return i;
  }
  return -1;
}

}  // namespace

Result<ResolvedPositions> ResolveKeys(const std::shared_ptr<table::Table>& table, const arrow::Table& keys,
                                      const std::vector<std::string>& key_columns, table::PositionDeletes& deletes) {
  ResolvedPositions result;
  if (keys.num_rows() == 0) return result;
  const auto& m = *table->metadata();
  auto schema = m.Schema();
  std::vector<int> key_positions;
  std::vector<int32_t> key_ids;
  for (const auto& name : key_columns) {
    const int idx = keys.schema()->GetFieldIndex(name);
    const auto* field = schema->FindFieldByName(name);
    if (idx < 0 || !field) return InvalidArgument("key column '{}' is missing", name);
    key_positions.push_back(idx);
    key_ids.push_back(field->id);
  }
  ARROW_ASSIGN_OR_RAISE(auto set, KeySet::Make(keys, key_positions));
  result.stats.keys = static_cast<int64_t>(set.size());
  // A table without a snapshot holds no rows: every key is missing (and must be counted as such).
  if (!m.CurrentSnapshot()) return result;

  table::ScanOptions options;
  ARROW_ASSIGN_OR_RAISE(options.bound_filter, BoundsFilter(keys, *schema, key_columns));
  ARROW_ASSIGN_OR_RAISE(auto scan, table::TableScan::Make(table, options));
  ARROW_ASSIGN_OR_RAISE(auto tasks, scan->PlanFiles());
  result.stats.files_pruned = scan->stats().data_files_skipped;
  ARROW_ASSIGN_OR_RAISE(auto partitions, KeyPartitions(m, keys, key_columns));

  table::DeleteLoader loader(table->io(), schema);
  std::unordered_set<int64_t> found_ints;
  std::unordered_set<std::string> found_keys;
  std::string key;
  for (const auto& task : tasks) {
    if (auto it = partitions.find(task.file->spec_id);
        it != partitions.end() && !it->second.count(iceberg::PartitionTupleKey(*task.file))) {
      ++result.stats.files_pruned;
      continue;
    }
    ++result.stats.files_scanned;
    const auto& path = task.file->file_path;
    // Rows already deleted are not live: they must not be matched again.
    ARROW_ASSIGN_OR_RAISE(auto deleted, loader.DeletedPositions(path, task.deletion_vector, task.position_deletes));
    std::vector<std::shared_ptr<const table::EqualityDeleteSet>> equality;
    std::vector<int32_t> read_ids = key_ids;
    for (const auto& file : task.equality_deletes) {
      ARROW_ASSIGN_OR_RAISE(auto eq, loader.EqualityDeletes(file));
      for (int32_t id : eq->field_ids) {
        if (std::find(read_ids.begin(), read_ids.end(), id) == read_ids.end()) read_ids.push_back(id);
      }
      equality.push_back(std::move(eq));
    }
    ARROW_ASSIGN_OR_RAISE(auto input, table->io()->OpenInput(path, task.file->file_size_in_bytes));
    parquet_io::ParquetReadOptions read_options;
    parquet_io::ExpectManifestEntry(read_options, *task.file);
    LS_ASSIGN_OR_RAISE_CTX(auto reader,
                           parquet_io::OpenKeyColumnReader(std::move(input), path, *schema, read_ids, read_options),
                           "resolving keys in {}", path);
    std::vector<int> key_idx;
    for (int32_t id : key_ids) key_idx.push_back(FieldIndex(*reader->schema(), id));
    bool matched_any = false;
    while (true) {
      LS_ASSIGN_OR_RAISE_CTX(auto positioned, reader->Next(), "resolving keys in {}", path);
      if (!positioned) break;
      const auto& batch = *positioned->batch;
      const int64_t first = positioned->first_row_position;
      // Columns looked up once per batch: RecordBatch::column() returns a shared_ptr, whose
      // reference counting per row showed up in profiles of large applies.
      std::vector<std::shared_ptr<arrow::Array>> held;  // keeps the arrays behind key_columns alive
      std::vector<const arrow::Array*> key_columns;
      for (int c : key_idx) {
        held.push_back(batch.column(c));
        key_columns.push_back(held.back().get());
      }
      for (int64_t i = 0; i < batch.num_rows(); ++i) {
        const int64_t pos = first + i;
        int64_t int_key = 0;
        if (set.integer()) {
          const auto& column = *key_columns[0];
          if (column.IsNull(i)) continue;
          int_key = KeySet::IntegerAt(column, i);
          if (!set.ContainsInteger(int_key)) continue;
        } else {
          key.clear();
          for (const arrow::Array* column : key_columns) ARROW_RETURN_NOT_OK(table::AppendKeyValue(key, *column, i));
          if (!set.ContainsEncoded(key)) continue;
        }
        if (deleted.Contains(pos)) continue;
        bool equality_deleted = false;
        for (const auto& eq : equality) {
          std::string eq_key;
          for (int32_t id : eq->field_ids) {
            ARROW_RETURN_NOT_OK(table::AppendKeyValue(eq_key, *batch.column(FieldIndex(*reader->schema(), id)), i));
          }
          equality_deleted |= eq->keys.count(eq_key) > 0;
        }
        if (equality_deleted) continue;
        if (set.integer()) {
          found_ints.insert(int_key);
        } else {
          found_keys.insert(key);
        }
        ARROW_RETURN_NOT_OK(deletes.Add(task.file, task.deletion_vector, pos));
        ++result.stats.rows_found;
        matched_any = true;
      }
    }
    if (matched_any) result.data_files.insert(path);
  }
  result.stats.keys_found = static_cast<int64_t>(set.integer() ? found_ints.size() : found_keys.size());
  return result;
}

}  // namespace lakesync::sink
