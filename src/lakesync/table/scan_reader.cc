// Reading planned scan tasks: data files with deletes applied, the filter evaluated and the selected
// columns projected, one batch at a time.
#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/extension_type.h>
#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <arrow/util/bit_run_reader.h>
#include <arrow/util/bit_util.h>
#include <arrow/util/bitmap_ops.h>
#include <arrow/util/parallel.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/iceberg/expr/row_filter.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/table/delete_loader.h"
#include "lakesync/table/scan.h"
#include "lakesync/table/scan_internal.h"

namespace lakesync::table {
namespace {

// A run of kept rows of a batch: rows [begin, begin + length).
struct RowRun {
  int64_t begin = 0;
  int64_t length = 0;
};

// Whether CopyRuns copies this column: flat fixed-width types (numbers, dates, times, timestamps,
// decimals, fixed binary), booleans, and strings/binaries with 32-bit offsets.
bool CopyRunsHandles(const arrow::Array& array) {
  const arrow::ArrayData& data = *array.data();
  switch (array.type_id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
      return data.buffers.size() == 3 && data.buffers[1] != nullptr;
    case arrow::Type::DICTIONARY:
    case arrow::Type::EXTENSION:
      return false;
    default:
      break;
  }
  const auto* fixed = dynamic_cast<const arrow::FixedWidthType*>(array.type().get());
  return fixed != nullptr && data.buffers.size() == 2 && data.buffers[1] != nullptr &&
         (fixed->bit_width() == 1 || fixed->bit_width() % 8 == 0);
}

// Copies the rows in `runs` (`kept` rows in all) of `array`, which CopyRunsHandles accepts: one
// memcpy (or bitmap copy) per run and column. With deletes sparse, runs are long and this costs a
// fraction of a row-by-row gather (Arrow's Take).
Result<std::shared_ptr<arrow::Array>> CopyRuns(const arrow::Array& array, const std::vector<RowRun>& runs,
                                               int64_t kept) {
  arrow::MemoryPool* pool = arrow::default_memory_pool();
  const arrow::ArrayData& data = *array.data();
  const int64_t offset = data.offset;
  auto copy_bits = [&](const uint8_t* bits) -> Result<std::shared_ptr<arrow::Buffer>> {
    ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> out, arrow::AllocateEmptyBitmap(kept, pool));
    int64_t position = 0;
    uint8_t* out_bits = out->mutable_data();
    for (const auto& run : runs) {
      if (run.length < 64) {
        // Bit by bit: cheaper than CopyBitmap's set-up for the short runs dense deletes leave.
        for (int64_t i = 0; i < run.length; ++i) {
          if (arrow::bit_util::GetBit(bits, offset + run.begin + i)) arrow::bit_util::SetBit(out_bits, position + i);
        }
      } else {
        arrow::internal::CopyBitmap(bits, offset + run.begin, run.length, out_bits, position);
      }
      position += run.length;
    }
    return out;
  };
  std::shared_ptr<arrow::Buffer> validity;
  if (array.null_count() > 0) {
    ARROW_ASSIGN_OR_RAISE(validity, copy_bits(data.buffers[0]->data()));
  }
  const int64_t null_count = validity ? arrow::kUnknownNullCount : 0;

  if (array.type_id() == arrow::Type::STRING || array.type_id() == arrow::Type::BINARY) {
    const auto* offsets = data.GetValues<int32_t>(1);  // already shifted by the array's offset
    const uint8_t* values = data.buffers[2] ? data.buffers[2]->data() : nullptr;
    int64_t bytes = 0;
    for (const auto& run : runs) bytes += offsets[run.begin + run.length] - offsets[run.begin];
    ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> out_offsets,
                          arrow::AllocateBuffer((kept + 1) * static_cast<int64_t>(sizeof(int32_t)), pool));
    ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> out_values, arrow::AllocateBuffer(bytes, pool));
    auto* next_offset = reinterpret_cast<int32_t*>(out_offsets->mutable_data());
    uint8_t* next_value = out_values->mutable_data();
    int32_t position = 0;  // fits: the output is a subset of an array with 32-bit offsets
    for (const auto& run : runs) {
      const int32_t base = offsets[run.begin];
      const int32_t length = offsets[run.begin + run.length] - base;
      for (int64_t i = 0; i < run.length; ++i) *next_offset++ = position + (offsets[run.begin + i] - base);
      if (length > 0) std::memcpy(next_value, values + base, static_cast<size_t>(length));
      next_value += length;
      position += length;
    }
    *next_offset = position;
    return arrow::MakeArray(
        arrow::ArrayData::Make(array.type(), kept, {validity, out_offsets, out_values}, null_count));
  }

  const int bit_width = static_cast<const arrow::FixedWidthType&>(*array.type()).bit_width();
  if (bit_width == 1) {
    ARROW_ASSIGN_OR_RAISE(auto out_values, copy_bits(data.buffers[1]->data()));
    return arrow::MakeArray(arrow::ArrayData::Make(array.type(), kept, {validity, out_values}, null_count));
  }
  const int64_t width = bit_width / 8;
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> out_values, arrow::AllocateBuffer(kept * width, pool));
  const uint8_t* values = data.buffers[1]->data() + offset * width;
  uint8_t* next = out_values->mutable_data();
  for (const auto& run : runs) {
    std::memcpy(next, values + run.begin * width, static_cast<size_t>(run.length * width));
    next += run.length * width;
  }
  return arrow::MakeArray(arrow::ArrayData::Make(array.type(), kept, {validity, out_values}, null_count));
}

// The kept rows' indices, for Take: 32-bit where the batch allows. Written straight into the buffer
// (a builder's per-value bookkeeping costs more than the loop itself).
template <typename ArrayType>
Result<std::shared_ptr<arrow::Array>> FillIndices(const std::vector<RowRun>& runs, int64_t kept) {
  using Value = typename ArrayType::value_type;
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> buffer,
                        arrow::AllocateBuffer(kept * static_cast<int64_t>(sizeof(Value))));
  auto* next = reinterpret_cast<Value*>(buffer->mutable_data());
  for (const auto& run : runs) {
    const auto begin = static_cast<Value>(run.begin);
    for (Value i = 0; i < static_cast<Value>(run.length); ++i) *next++ = begin + i;
  }
  return std::make_shared<ArrayType>(kept, std::move(buffer));
}

Result<std::shared_ptr<arrow::Array>> RunIndices(const std::vector<RowRun>& runs, int64_t kept, int64_t n) {
  if (n <= std::numeric_limits<uint32_t>::max()) return FillIndices<arrow::UInt32Array>(runs, kept);
  return FillIndices<arrow::Int64Array>(runs, kept);
}

class ScanReader : public arrow::RecordBatchReader {
 public:
  ScanReader(std::shared_ptr<Table> table, std::shared_ptr<TableScan::State> state, ScanOptions options,
             std::vector<FileScanTask> tasks, std::shared_ptr<arrow::Schema> output_schema)
      : table_(std::move(table)), state_(std::move(state)), options_(std::move(options)),
        tasks_(std::move(tasks)), output_schema_(std::move(output_schema)),
        loader_(table_->io(), state_->schema) {
    if (options_.limit) remaining_ = *options_.limit;
  }

  std::shared_ptr<arrow::Schema> schema() const override { return output_schema_; }

  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    *out = nullptr;
    while (remaining_ != 0) {
      if (!reader_) {
        if (next_task_ >= tasks_.size()) return Status::OK();
        const FileScanTask& task = tasks_[next_task_++];
        LS_RETURN_NOT_OK_CTX(OpenTask(task), "reading data file {} of {}", task.file->file_path, table_->name());
      }
      auto next = reader_->Next();
      if (!next.ok()) return WithContext(next.status(), "reading data file " + current_path_ + " of " + table_->name());
      if (!next->has_value()) {
        reader_.reset();
        continue;
      }
      auto batch = ProcessBatch(**next);
      if (!batch.ok()) return WithContext(batch.status(), "reading data file " + current_path_ + " of " + table_->name());
      if ((*batch)->num_rows() == 0) continue;
      if (remaining_ > 0 && (*batch)->num_rows() > remaining_) *batch = (*batch)->Slice(0, remaining_);
      if (remaining_ > 0) remaining_ -= (*batch)->num_rows();
      *out = *batch;
      return Status::OK();
    }
    return Status::OK();
  }

 private:
  Status OpenTask(const FileScanTask& task) {
    current_path_ = task.file->file_path;
    if (task.file->file_format != iceberg::FileFormat::kParquet) {
      return Unsupported("data file format {} is not supported (lakesync reads Parquet)",
                         iceberg::FileFormatName(task.file->file_format));
    }
    ARROW_ASSIGN_OR_RAISE(deleted_, loader_.DeletedPositions(task.file->file_path, task.deletion_vector,
                                                             task.position_deletes));
    equality_.clear();
    std::set<int32_t> needed;
    for (const auto& f : state_->output->fields()) needed.insert(f.id);
    for (int32_t id : iceberg::ReferencedFieldIds(state_->filter)) needed.insert(TopLevelIdOf(id));
    for (const auto& file : task.equality_deletes) {
      ARROW_ASSIGN_OR_RAISE(auto set, loader_.EqualityDeletes(file));
      for (int32_t id : set->field_ids) needed.insert(id);
      equality_.push_back(std::move(set));
    }
    ARROW_RETURN_NOT_OK(MergeEqualitySets());
    std::vector<iceberg::NestedField> fields;
    for (const auto& f : state_->schema->fields()) {
      if (needed.count(f.id)) fields.push_back(f);
    }
    read_schema_ = std::make_shared<const iceberg::Schema>(state_->schema->schema_id(), fields);
    column_of_id_.clear();
    for (size_t i = 0; i < fields.size(); ++i) column_of_id_[fields[i].id] = static_cast<int>(i);
    parquet_io::ParquetReadOptions read_options;
    read_options.batch_size = options_.batch_rows;
    read_options.use_threads = options_.use_threads;
    parquet_io::ExpectManifestEntry(read_options, *task.file);
    ARROW_ASSIGN_OR_RAISE(auto input, table_->io()->OpenInput(task.file->file_path, task.file->file_size_in_bytes));
    ARROW_ASSIGN_OR_RAISE(reader_, parquet_io::ParquetDataReader::Open(std::move(input), task.file->file_path,
                                                                       read_schema_, read_options));
    return Status::OK();
  }

  // Every equality delete file attached to a task applies to all of its rows, so files with the same
  // equality columns act as the union of their keys. A table written by a CDC sink with equality
  // deletes collects one such file per commit; probing one merged set per row instead of one set per
  // file keeps the cost per row flat as commits accumulate. The union for one combination of files is
  // kept, since consecutive tasks (the files of one commit) usually share it.
  Status MergeEqualitySets() {
    if (equality_.size() < 2) return Status::OK();
    std::map<std::vector<int32_t>, std::vector<std::shared_ptr<const EqualityDeleteSet>>> by_columns;
    for (auto& set : equality_) by_columns[set->field_ids].push_back(std::move(set));
    equality_.clear();
    for (auto& [ids, sets] : by_columns) {
      if (sets.size() == 1) {
        equality_.push_back(std::move(sets.front()));
        continue;
      }
      // Keyed by the sets themselves (held, so their addresses cannot be reused by other sets).
      const auto& identity = sets;
      if (auto it = merged_.find(identity); it != merged_.end()) {
        equality_.push_back(it->second);
        continue;
      }
      size_t total = 0;
      for (const auto& set : sets) total += set->keys.size();
      auto merged = std::make_shared<EqualityDeleteSet>();
      merged->field_ids = ids;
      merged->keys.reserve(total);
      for (const auto& set : sets) merged->keys.insert(set->keys.begin(), set->keys.end());
      // Only the newest union is kept: the key sets can be large.
      merged_.clear();
      merged_.emplace(identity, merged);
      equality_.push_back(std::move(merged));
    }
    return Status::OK();
  }

  int32_t TopLevelIdOf(int32_t id) const {
    if (state_->schema->TopLevelIndex(id) >= 0) return id;
    const std::string name = state_->schema->FindColumnName(id);
    const auto* top = state_->schema->FindFieldByName(name.substr(0, name.find('.')));
    return top ? top->id : id;
  }

  Result<std::shared_ptr<arrow::RecordBatch>> ProcessBatch(const parquet_io::PositionedBatch& positioned) {
    const auto& batch = positioned.batch;
    const int64_t n = batch->num_rows();
    const int64_t first = positioned.first_row_position;
    // Rows to keep as a bitmap (1 = keep), made only when some row goes: null means keep all.
    std::shared_ptr<arrow::Buffer> keep;
    auto drop = [&](int64_t row) -> Status {
      if (!keep) {
        ARROW_ASSIGN_OR_RAISE(keep, arrow::AllocateBitmap(n));
        arrow::bit_util::SetBitsTo(keep->mutable_data(), 0, n, true);
      }
      arrow::bit_util::ClearBit(keep->mutable_data(), row);
      return Status::OK();
    };
    if (!deleted_.IsEmpty()) {
      for (int64_t pos : deleted_.ToVector(first, first + n)) ARROW_RETURN_NOT_OK(drop(pos - first));
    }
    std::string key;
    for (const auto& set : equality_) {
      std::vector<const arrow::Array*> columns;
      for (int32_t id : set->field_ids) columns.push_back(batch->column(column_of_id_.at(id)).get());
      for (int64_t i = 0; i < n; ++i) {
        key.clear();
        for (const auto* c : columns) ARROW_RETURN_NOT_OK(AppendKeyValue(key, *c, i));
        if (set->keys.count(key)) ARROW_RETURN_NOT_OK(drop(i));
      }
    }
    if (state_->filter.op() != iceberg::Operation::kTrue) {
      ARROW_ASSIGN_OR_RAISE(auto selection, iceberg::EvaluateRowFilter(state_->filter, *batch));
      // The selection is never null (EvaluateRowFilter's contract), so its values are the bitmap.
      if (selection->true_count() != n) {
        const uint8_t* selected = selection->values()->data();
        if (keep) {
          arrow::internal::BitmapAnd(keep->data(), 0, selected, selection->offset(), n, 0, keep->mutable_data());
        } else {
          ARROW_ASSIGN_OR_RAISE(keep, arrow::internal::CopyBitmap(arrow::default_memory_pool(), selected,
                                                                  selection->offset(), n));
        }
      }
    }
    // Project to the output columns (and _file/_pos), then drop what was deleted or filtered out.
    arrow::ArrayVector columns;
    for (const auto& f : state_->output->fields()) {
      const auto& column = batch->column(column_of_id_.at(f.id));
      const auto& type = output_schema_->field(static_cast<int>(columns.size()))->type();
      columns.push_back(column->type()->Equals(*type) ? column : arrow::MakeArray(iceberg::RetypeArrayData(column->data(), type)));
    }
    if (options_.with_file_and_pos) {
      arrow::StringBuilder paths;
      ARROW_RETURN_NOT_OK(paths.Reserve(n));
      ARROW_RETURN_NOT_OK(paths.ReserveData(n * static_cast<int64_t>(current_path_.size())));
      arrow::Int64Builder positions;
      ARROW_RETURN_NOT_OK(positions.Reserve(n));
      for (int64_t i = 0; i < n; ++i) {
        paths.UnsafeAppend(current_path_);
        positions.UnsafeAppend(first + i);
      }
      ARROW_ASSIGN_OR_RAISE(auto path_array, paths.Finish());
      ARROW_ASSIGN_OR_RAISE(auto pos_array, positions.Finish());
      columns.push_back(path_array);
      columns.push_back(pos_array);
    }
    if (!keep) return arrow::RecordBatch::Make(output_schema_, n, std::move(columns));
    return SelectRows(std::move(columns), *keep, n);
  }

  // The rows of `columns` whose bit is set in `keep`. Runs of kept rows are found once per batch and
  // every column is copied run by run (CopyRuns), or gathered by Arrow's Take where CopyRuns does not
  // handle the type; with use_threads the columns are copied in parallel on Arrow's CPU pool. The copy
  // is what deletes cost a scan: on one core, after the columns were decoded on all of them, it would
  // add its whole time to the scan's.
  Result<std::shared_ptr<arrow::RecordBatch>> SelectRows(arrow::ArrayVector columns, const arrow::Buffer& keep,
                                                         int64_t n) {
    std::vector<RowRun> runs;
    int64_t kept = 0;
    arrow::internal::SetBitRunReader run_reader(keep.data(), 0, n);
    for (auto run = run_reader.NextRun(); run.length != 0; run = run_reader.NextRun()) {
      runs.push_back(RowRun{run.position, run.length});
      kept += run.length;
    }
    if (kept == 0) {
      for (auto& c : columns) c = c->Slice(0, 0);
      return arrow::RecordBatch::Make(output_schema_, 0, std::move(columns));
    }
    // Copying run by run costs a call per run and column; when runs are short (dense deletes) a
    // row-by-row gather is cheaper. Measured on the benchmark table (docs/benchmarks.md): runs win at
    // 1% deleted (average run ~100 rows), Take wins at 10% (~9 rows).
    constexpr int64_t kMinAverageRunForCopy = 16;
    const bool by_runs = kept >= kMinAverageRunForCopy * static_cast<int64_t>(runs.size());
    auto copies = [&](const arrow::Array& column) { return by_runs && CopyRunsHandles(column); };
    std::shared_ptr<arrow::Array> indices;  // for Take, made only when a column needs it
    for (const auto& c : columns) {
      if (!copies(*c)) {
        ARROW_ASSIGN_OR_RAISE(indices, RunIndices(runs, kept, n));
        break;
      }
    }
    // Batches are at most batch_rows long; a copy of a small one is not worth a task hand-off.
    constexpr int64_t kMinRowsForThreads = 4096;
    const bool threads = options_.use_threads && columns.size() > 1 && n >= kMinRowsForThreads;
    arrow::ArrayVector out(columns.size());
    ARROW_RETURN_NOT_OK(arrow::internal::OptionalParallelFor(
        threads, static_cast<int>(columns.size()), [&](int i) -> Status {
          const arrow::Array& column = *columns[static_cast<size_t>(i)];
          if (copies(column)) {
            ARROW_ASSIGN_OR_RAISE(out[static_cast<size_t>(i)], CopyRuns(column, runs, kept));
          } else {
            ARROW_ASSIGN_OR_RAISE(out[static_cast<size_t>(i)],
                                  arrow::compute::Take(column, *indices, arrow::compute::TakeOptions::NoBoundsCheck()));
          }
          return Status::OK();
        }));
    return arrow::RecordBatch::Make(output_schema_, kept, std::move(out));
  }

  std::shared_ptr<Table> table_;
  std::shared_ptr<TableScan::State> state_;
  ScanOptions options_;
  std::vector<FileScanTask> tasks_;
  std::shared_ptr<arrow::Schema> output_schema_;
  DeleteLoader loader_;
  size_t next_task_ = 0;
  int64_t remaining_ = -1;  // -1: no limit
  std::unique_ptr<parquet_io::ParquetDataReader> reader_;
  std::string current_path_;
  puffin::PositionBitmap deleted_;
  std::vector<std::shared_ptr<const EqualityDeleteSet>> equality_;
  // The last union built by MergeEqualitySets, keyed by the sets it was built from.
  std::map<std::vector<std::shared_ptr<const EqualityDeleteSet>>, std::shared_ptr<const EqualityDeleteSet>> merged_;
  iceberg::SchemaPtr read_schema_;
  std::map<int32_t, int> column_of_id_;
};

}  // namespace

Result<std::shared_ptr<arrow::RecordBatchReader>> TableScan::Open() {
  ARROW_ASSIGN_OR_RAISE(auto tasks, PlanFiles());
  return std::make_shared<ScanReader>(table_, state_, options_, std::move(tasks), output_schema_);
}

}  // namespace lakesync::table
