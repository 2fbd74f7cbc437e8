#include <arrow/array.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/compute/api.h>
#include <arrow/scalar.h>
#include <arrow/type.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>

#include <fmt/ranges.h>

#include "lakesync/change/change_kind.h"
#include "lakesync/common/constant_column.h"
#include "lakesync/common/executor.h"
#include "lakesync/delta/actions.h"
#include "lakesync/delta/file_reader_internal.h"
#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/formats/parquet/parquet_properties.h"
#include "lakesync/formats/parquet/row_group_units.h"
#include "lakesync/iceberg/model/literal.h"
#include "lakesync/io/location.h"

namespace lakesync::delta::internal {
namespace {

// `data` (read in the Iceberg read schema's Arrow layout) as `type`: the same layout with other
// field names, except byte/short columns, which are read as int32 and cast down.
Result<std::shared_ptr<arrow::ArrayData>> Retype(const std::shared_ptr<arrow::ArrayData>& data,
                                                 const std::shared_ptr<arrow::DataType>& type) {
  if (data->type->id() != type->id() && type->num_fields() == 0) {
    ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*arrow::MakeArray(data), type));
    return cast->data();
  }
  auto out = data->Copy();
  out->type = type;
  if (type->id() == arrow::Type::MAP) {
    // A map's only child is its entries struct.
    ARROW_ASSIGN_OR_RAISE(out->child_data[0], Retype(data->child_data[0], type->field(0)->type()));
    return out;
  }
  if (static_cast<int>(data->child_data.size()) != type->num_fields()) {
    return Corrupt("column layout {} does not match {}", data->type->ToString(), type->ToString());
  }
  for (int i = 0; i < type->num_fields(); ++i) {
    ARROW_ASSIGN_OR_RAISE(out->child_data[i], Retype(data->child_data[i], type->field(i)->type()));
  }
  return out;
}

// A partition value (Delta's string serialization) as a scalar of the column's type.
Result<std::shared_ptr<arrow::Scalar>> PartitionScalar(const std::optional<std::string>& value,
                                                       const std::shared_ptr<arrow::DataType>& type,
                                                       const std::string& column) {
  if (!value || value->empty()) return arrow::MakeNullScalar(type);
  const std::string& v = *value;
  switch (type->id()) {
    case arrow::Type::STRING: return arrow::MakeScalar(v);
    case arrow::Type::BINARY: return std::make_shared<arrow::BinaryScalar>(arrow::Buffer::FromString(v));
    case arrow::Type::DATE32: {
      LS_ASSIGN_OR_RAISE_CTX(auto days, iceberg::ParseDate(v), "partition value '{}' of column {}", v, column);
      return std::make_shared<arrow::Date32Scalar>(days);
    }
    case arrow::Type::TIMESTAMP: {
      LS_ASSIGN_OR_RAISE_CTX(auto micros, iceberg::ParseTimestamp(v, false), "partition value '{}' of column {}", v,
                             column);
      return std::make_shared<arrow::TimestampScalar>(micros, type);
    }
    default: {
      auto parsed = arrow::Scalar::Parse(type, v);
      if (!parsed.ok()) {
        return Corrupt("partition value '{}' of column {} is not a valid {}", v, column, type->ToString());
      }
      return *parsed;
    }
  }
}

std::shared_ptr<arrow::Field> MetaField(MetaColumn c) {
  switch (c) {
    case MetaColumn::kChangeType: return arrow::field(change::kChangeTypeColumn, arrow::utf8(), false);
    case MetaColumn::kCommitVersion: return arrow::field(change::kCommitVersionColumn, arrow::int64(), false);
    case MetaColumn::kCommitTimestamp:
      return arrow::field(change::kCommitTimestampColumn, arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), false);
  }
  return nullptr;
}

Result<std::vector<int>> SelectedColumns(const TableSchema& schema, const StreamOptions& options) {
  std::vector<int> sel;
  if (options.select.empty()) {
    for (int i = 0; i < schema.output->num_fields(); ++i) sel.push_back(i);
    return sel;
  }
  for (const auto& name : options.select) {
    const int i = schema.output->GetFieldIndex(name);
    if (i < 0) {
      std::vector<std::string> names;
      for (const auto& f : schema.output->fields()) names.push_back(f->name());
      return InvalidArgument("no column '{}' in the table; its columns are {}", name, fmt::join(names, ", "));
    }
    sel.push_back(i);
  }
  return sel;
}

// What every unit of a read shares (immutable once the reader is made).
struct ReadShared {
  std::shared_ptr<io::FileIO> io;
  TableSchema schema;
  StreamOptions options;
  std::vector<int> selected;
  std::shared_ptr<arrow::Schema> out_schema;
  iceberg::SchemaPtr cdc_read_schema;
  int change_type_index = 0;
};

// What the units of one file share (parquet_io::RowGroupUnits): its task and partition values.
// A file's constant columns are made once for all its batches (common/constant_column.h); its units
// assemble batches on several threads at once.
struct PlannedTask {
  const ReadTask* task = nullptr;
  std::vector<std::unique_ptr<ConstantColumn>> partition_columns;  // by output column; null where read
  std::unique_ptr<ConstantColumn> change_type;                     // data files of a change feed
  std::unique_ptr<ConstantColumn> commit_version;
  std::unique_ptr<ConstantColumn> commit_timestamp;
};

using UnitBatches = std::vector<std::shared_ptr<arrow::RecordBatch>>;
using StreamedBatches = OrderedStream<std::shared_ptr<arrow::RecordBatch>>;
using TaskUnits = parquet_io::RowGroupUnits<PlannedTask, parquet_io::ParquetDataReader, UnitBatches>;

std::string What(const ReadTask& task) {
  return fmt::format("{} file {} (version {})", task.is_cdc ? "change data" : "data", task.location, task.version);
}

Result<std::unique_ptr<parquet_io::ParquetDataReader>> OpenTaskFile(const ReadShared& shared, const ReadTask& task,
                                                                    std::optional<int> row_group) {
  Result<std::shared_ptr<arrow::io::RandomAccessFile>> file =
      task.size && *task.size >= 0 ? shared.io->OpenInput(task.location, *task.size) : shared.io->OpenInput(task.location);
  if (!file.ok()) return WithContext(file.status(), "reading " + What(task));
  parquet_io::ParquetReadOptions opts;
  opts.batch_size = shared.options.batch_size;
  // An overwrite can change a column's type (schema overwrite); the files it removes keep the old one.
  opts.convert_by_value = true;
  if (row_group) opts.row_groups = std::vector<int>{*row_group};
  // Under id column mapping data files are matched by field id; change data files also carry
  // the unmapped _change_type column, so those are matched by physical name.
  opts.ignore_field_ids = shared.schema.mode != ColumnMappingMode::kId || task.is_cdc;
  auto reader = parquet_io::ParquetDataReader::Open(*file, task.location,
                                                    task.is_cdc ? shared.cdc_read_schema : shared.schema.read_schema,
                                                    opts);
  if (!reader.ok()) return WithContext(reader.status(), fmt::format("version {}", task.version));
  return std::move(*reader);
}

// Partition columns are constant per file.
Result<std::vector<std::shared_ptr<arrow::Scalar>>> PartitionScalars(const ReadShared& shared, const ReadTask& task) {
  const TableSchema& schema = shared.schema;
  std::vector<std::shared_ptr<arrow::Scalar>> scalars(schema.output->num_fields());
  for (int i = 0; i < schema.output->num_fields(); ++i) {
    if (schema.read_index[i] >= 0) continue;
    std::optional<std::string> value;
    auto it = task.partition_values.find(schema.physical_names[i]);
    if (it == task.partition_values.end()) it = task.partition_values.find(schema.output->field(i)->name());
    if (it != task.partition_values.end()) value = it->second;
    LS_ASSIGN_OR_RAISE_CTX(scalars[i], PartitionScalar(value, schema.output->field(i)->type(), schema.output->field(i)->name()),
                           "{}", What(task));
  }
  return scalars;
}

Result<std::shared_ptr<arrow::RecordBatch>> Assemble(const ReadShared& shared, const PlannedTask& file,
                                                     const parquet_io::PositionedBatch& pb) {
  const ReadTask& task = *file.task;
  const TableSchema& schema = shared.schema;
  std::shared_ptr<arrow::RecordBatch> batch = pb.batch;
  const int64_t n = batch->num_rows();
  if (task.drop || task.keep_only) {
    arrow::Int64Builder idx;
    ARROW_RETURN_NOT_OK(idx.Reserve(n));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t pos = pb.first_row_position + i;
      if (task.drop && task.drop->Contains(pos)) continue;
      if (task.keep_only && !task.keep_only->Contains(pos)) continue;
      idx.UnsafeAppend(i);
    }
    if (idx.length() != n) {
      ARROW_ASSIGN_OR_RAISE(auto indices, idx.Finish());
      ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(batch, indices));
      batch = taken.record_batch();
    }
  }
  const int64_t rows = batch->num_rows();
  if (rows == 0) return batch;
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (int i : shared.selected) {
    const auto& type = schema.output->field(i)->type();
    if (schema.read_index[i] < 0) {
      ARROW_ASSIGN_OR_RAISE(auto arr, file.partition_columns[i]->Get(rows));
      columns.push_back(std::move(arr));
    } else {
      LS_ASSIGN_OR_RAISE_CTX(auto data, Retype(batch->column(schema.read_index[i])->data(), type), "{}", What(task));
      columns.push_back(arrow::MakeArray(data));
    }
  }
  for (MetaColumn c : shared.options.meta_columns) {
    switch (c) {
      case MetaColumn::kChangeType: {
        if (!task.is_cdc) {
          ARROW_ASSIGN_OR_RAISE(auto arr, file.change_type->Get(rows));
          columns.push_back(std::move(arr));
        } else {
          auto col = batch->column(shared.change_type_index);
          if (col->null_count() > 0) {
            return Corrupt("{}: column _change_type is missing or has nulls", What(task));
          }
          columns.push_back(col);
        }
        break;
      }
      case MetaColumn::kCommitVersion: {
        ARROW_ASSIGN_OR_RAISE(auto arr, file.commit_version->Get(rows));
        columns.push_back(std::move(arr));
        break;
      }
      case MetaColumn::kCommitTimestamp: {
        ARROW_ASSIGN_OR_RAISE(auto arr, file.commit_timestamp->Get(rows));
        columns.push_back(std::move(arr));
        break;
      }
    }
  }
  return arrow::RecordBatch::Make(shared.out_schema, rows, std::move(columns));
}

// Reads a unit's rows (on a pool thread, or inline).
Result<UnitBatches> ReadUnitBatches(const ReadShared& shared, const PlannedTask& file,
                                    parquet_io::ParquetDataReader& reader) {
  UnitBatches out;
  while (true) {
    ARROW_ASSIGN_OR_RAISE(auto next, reader.Next());
    if (!next) break;
    ARROW_ASSIGN_OR_RAISE(auto batch, Assemble(shared, file, *next));
    if (batch && batch->num_rows() > 0) out.push_back(std::move(batch));
  }
  return out;
}

// The Delta part of the units (parquet_io::RowGroupUnits does the rest): a file is planned by opening
// it (its footer: missing and truncated files fail here, in order) and parsing its partition values;
// files whose kept rows are none are skipped.
TaskUnits::Hooks TaskHooks(std::shared_ptr<const ReadShared> shared, const std::vector<ReadTask>* tasks) {
  TaskUnits::Hooks hooks;
  hooks.plan = [shared, tasks](size_t index) -> Result<std::optional<TaskUnits::Planned>> {
    const ReadTask& task = (*tasks)[index];
    if (task.keep_only && task.keep_only->IsEmpty()) return std::nullopt;
    TaskUnits::Planned planned;
    ARROW_ASSIGN_OR_RAISE(planned.reader, OpenTaskFile(*shared, task, std::nullopt));
    auto file = std::make_shared<PlannedTask>();
    file->task = &task;
    ARROW_ASSIGN_OR_RAISE(auto partition_scalars, PartitionScalars(*shared, task));
    const int64_t rows = shared->options.batch_size;
    for (auto& scalar : partition_scalars) {
      file->partition_columns.push_back(scalar ? std::make_unique<ConstantColumn>(std::move(scalar), rows) : nullptr);
    }
    file->change_type = std::make_unique<ConstantColumn>(std::make_shared<arrow::StringScalar>(task.change_type), rows);
    file->commit_version = std::make_unique<ConstantColumn>(std::make_shared<arrow::Int64Scalar>(task.version), rows);
    file->commit_timestamp = std::make_unique<ConstantColumn>(
        std::make_shared<arrow::TimestampScalar>(task.commit_timestamp_ms * 1000,
                                                 arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
        rows);
    planned.row_groups = planned.reader->selected_row_groups();
    planned.file = std::move(file);
    return std::optional<TaskUnits::Planned>(std::move(planned));
  };
  hooks.open_row_group = [shared](const PlannedTask& file, int row_group) {
    return OpenTaskFile(*shared, *file.task, row_group);
  };
  hooks.read = [shared](const PlannedTask& file, int, parquet_io::ParquetDataReader& reader) {
    return ReadUnitBatches(*shared, file, reader);
  };
  hooks.describe = [](const PlannedTask& file) { return What(*file.task); };
  return hooks;
}

// The files of a read, in order: each is split into row groups read on the engine's executor
// (common/executor.h), or, where PreferSerialUnits says so (wide reads), streamed batch by batch
// (StartStreaming); either way emitted in task, row-group and batch order, so the output does not
// depend on the thread count. A file's footer is read (and its partition values parsed) on the
// consumer's thread when its turn comes; at most the executor's window of row groups, or
// RowGroupUnits::kBatchesAhead batches, is read ahead.
class TaskReader : public arrow::RecordBatchReader {
 public:
  static Result<std::shared_ptr<TaskReader>> Make(std::shared_ptr<const ReadShared> shared,
                                                  std::vector<ReadTask> tasks) {
    std::shared_ptr<TaskReader> r(new TaskReader());
    r->shared_ = std::move(shared);
    r->tasks_ = std::move(tasks);
    r->units_ = std::make_unique<TaskUnits>(r->tasks_.size(), TaskHooks(r->shared_, &r->tasks_));
    // The first file that has rows to read, planned now to choose between splitting by row group and
    // decoding one file's columns in parallel.
    size_t files = 0;
    for (const auto& t : r->tasks_) files += (t.keep_only && t.keep_only->IsEmpty()) ? 0 : 1;
    size_t first_units = 0;
    if (files == 1) {
      ARROW_ASSIGN_OR_RAISE(first_units, r->units_->RowGroupsOfFirstFile());
    }
    const bool serial = PreferSerialUnits(files, first_units, r->shared_->schema.read_schema->fields().size());
    r->units_->Start(!serial, serial);
    if (serial) r->StartStreaming();
    return r;
  }

  std::shared_ptr<arrow::Schema> schema() const override { return shared_->out_schema; }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    *out = nullptr;
    const auto& limit = shared_->options.limit;
    while (true) {
      if (limit && emitted_ >= *limit) return Status::OK();
      if (streamed_) {
        ARROW_ASSIGN_OR_RAISE(auto batch, streamed_->Next());
        if (!batch) return Status::OK();
        if (!*batch || (*batch)->num_rows() == 0) continue;
        Emit(std::move(*batch), out);
        return Status::OK();
      }
      if (next_batch_ >= batches_.size()) {
        ARROW_ASSIGN_OR_RAISE(auto next, units_->Next());
        if (!next) return Status::OK();
        batches_ = std::move(*next);
        next_batch_ = 0;
        continue;
      }
      Emit(std::move(batches_[next_batch_++]), out);
      return Status::OK();
    }
  }

  void Emit(std::shared_ptr<arrow::RecordBatch> batch, std::shared_ptr<arrow::RecordBatch>* out) {
    const auto& limit = shared_->options.limit;
    if (limit && emitted_ + batch->num_rows() > *limit) batch = batch->Slice(0, *limit - emitted_);
    emitted_ += batch->num_rows();
    *out = std::move(batch);
  }

 private:
  TaskReader() = default;

  // Unsplit reads: one file at a time, batch by batch (RowGroupUnits::StreamBatches): a batch is
  // decoded on this thread and converted and assembled on the pool while the next one decodes.
  void StartStreaming() {
    streamed_ = units_->StreamBatches<std::shared_ptr<arrow::RecordBatch>>(
        [shared = shared_](const std::shared_ptr<const PlannedTask>& file, parquet_io::ParquetDataReader& reader)
            -> Result<std::optional<StreamedBatches::Unit>> {
          ARROW_ASSIGN_OR_RAISE(auto decoded, reader.NextDecoded());
          if (!decoded) return std::nullopt;
          return std::optional<StreamedBatches::Unit>(
              [shared, file, d = std::move(*decoded)]() -> Result<std::shared_ptr<arrow::RecordBatch>> {
                ARROW_ASSIGN_OR_RAISE(auto converted, d.Convert());
                return Assemble(*shared, *file, converted);
              });
        });
  }

  std::shared_ptr<const ReadShared> shared_;
  std::vector<ReadTask> tasks_;  // not resized after Make: units point into it
  UnitBatches batches_;
  size_t next_batch_ = 0;
  int64_t emitted_ = 0;
  std::unique_ptr<TaskUnits> units_;
  // Destroyed first (waiting for the batches in flight), before the units and the file they read.
  std::unique_ptr<StreamedBatches> streamed_;
};

}  // namespace

Result<std::vector<MetaColumn>> ParseMetaColumns(const std::vector<std::string>& names) {
  std::vector<MetaColumn> out;
  for (const auto& n : names) {
    MetaColumn c;
    if (n == change::kChangeTypeColumn) c = MetaColumn::kChangeType;
    else if (n == change::kCommitVersionColumn) c = MetaColumn::kCommitVersion;
    else if (n == change::kCommitTimestampColumn) c = MetaColumn::kCommitTimestamp;
    else {
      return InvalidArgument("unknown Delta change feed column '{}' (allowed: _change_type, _commit_version, "
                             "_commit_timestamp)",
                             n);
    }
    if (std::find(out.begin(), out.end(), c) != out.end()) return InvalidArgument("column '{}' is listed twice", n);
    out.push_back(c);
  }
  return out;
}

Result<std::shared_ptr<arrow::Schema>> OutputSchema(const TableSchema& schema, const StreamOptions& options) {
  ARROW_ASSIGN_OR_RAISE(auto sel, SelectedColumns(schema, options));
  arrow::FieldVector fields;
  for (int i : sel) fields.push_back(schema.output->field(i));
  for (MetaColumn c : options.meta_columns) fields.push_back(MetaField(c));
  return arrow::schema(fields);
}

Result<std::shared_ptr<arrow::RecordBatchReader>> MakeTaskReader(std::shared_ptr<io::FileIO> io, TableSchema schema,
                                                                 std::vector<ReadTask> tasks, StreamOptions options) {
  if (!options.select.empty()) {
    // Read only the selected columns: project the schema, then output it whole.
    ARROW_ASSIGN_OR_RAISE(auto sel, SelectedColumns(schema, options));
    TableSchema projected;
    projected.mode = schema.mode;
    projected.fingerprint = schema.fingerprint;
    arrow::FieldVector fields;
    std::vector<iceberg::NestedField> read;
    for (int i : sel) {
      fields.push_back(schema.output->field(i));
      projected.physical_names.push_back(schema.physical_names[i]);
      if (schema.read_index[i] < 0) {
        projected.read_index.push_back(-1);
      } else {
        projected.read_index.push_back(static_cast<int>(read.size()));
        read.push_back(schema.read_schema->fields()[schema.read_index[i]]);
      }
    }
    projected.output = arrow::schema(fields);
    projected.read_schema = std::make_shared<iceberg::Schema>(0, std::move(read));
    schema = std::move(projected);
    options.select.clear();
  }
  auto shared = std::make_shared<ReadShared>();
  ARROW_ASSIGN_OR_RAISE(shared->selected, SelectedColumns(schema, options));
  ARROW_ASSIGN_OR_RAISE(shared->out_schema, OutputSchema(schema, options));
  // Change data files are read with _change_type after the table's columns.
  std::vector<iceberg::NestedField> fields = schema.read_schema->fields();
  shared->change_type_index = static_cast<int>(fields.size());
  iceberg::NestedField change_type;
  change_type.id = schema.read_schema->HighestFieldId() + 1;
  change_type.name = change::kChangeTypeColumn;
  change_type.type = iceberg::Type::String();
  fields.push_back(std::move(change_type));
  shared->cdc_read_schema = std::make_shared<iceberg::Schema>(0, std::move(fields));
  shared->io = std::move(io);
  shared->schema = std::move(schema);
  shared->options = std::move(options);
  ARROW_ASSIGN_OR_RAISE(auto reader, TaskReader::Make(std::move(shared), std::move(tasks)));
  return reader;
}

Status CheckParquetFile(const io::FileIO& io, const std::string& location, std::optional<int64_t> size) {
  ARROW_ASSIGN_OR_RAISE(auto file, size && *size >= 0 ? io.OpenInput(location, *size) : io.OpenInput(location));
  try {
    auto reader = parquet::ParquetFileReader::Open(file, parquet_io::ParquetReaderProperties(nullptr));
    (void)reader->metadata();
  } catch (const std::exception& e) {
    return Corrupt("{} is not a readable Parquet file: {}", location, e.what());
  }
  return Status::OK();
}

Result<std::string> ResolvePath(const std::string& table_root, const std::string& log_path) {
  if (IsHttpUrl(log_path)) return log_path;  // a Delta Sharing signed URL: its escapes are part of it
  ARROW_ASSIGN_OR_RAISE(auto decoded, PercentDecode(log_path));
  if (decoded.find("://") != std::string::npos || decoded.rfind("file:", 0) == 0) return decoded;
  if (!decoded.empty() && decoded[0] == '/') {
    // An absolute local path; keep the table's scheme for file: roots.
    return table_root.rfind("file:", 0) == 0 ? "file://" + decoded : decoded;
  }
  return io::JoinLocation(table_root, decoded);
}

}  // namespace lakesync::delta::internal
