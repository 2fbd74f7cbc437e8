#include <arrow/array.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/compute/api.h>
#include <arrow/scalar.h>
#include <arrow/type.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>

#include <fmt/ranges.h>

#include "lakesync/change/change_kind.h"
#include "lakesync/delta/actions.h"
#include "lakesync/delta/file_reader_internal.h"
#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/formats/parquet/parquet_properties.h"
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

class TaskReader : public arrow::RecordBatchReader {
 public:
  TaskReader(std::shared_ptr<io::FileIO> io, TableSchema schema, std::vector<ReadTask> tasks, StreamOptions options,
             std::vector<int> selected, std::shared_ptr<arrow::Schema> out_schema)
      : io_(std::move(io)),
        schema_(std::move(schema)),
        tasks_(std::move(tasks)),
        options_(std::move(options)),
        selected_(std::move(selected)),
        out_schema_(std::move(out_schema)) {
    std::vector<iceberg::NestedField> fields = schema_.read_schema->fields();
    change_type_index_ = static_cast<int>(fields.size());
    iceberg::NestedField change_type;
    change_type.id = schema_.read_schema->HighestFieldId() + 1;
    change_type.name = change::kChangeTypeColumn;
    change_type.type = iceberg::Type::String();
    fields.push_back(std::move(change_type));
    cdc_read_schema_ = std::make_shared<iceberg::Schema>(0, std::move(fields));
  }

  std::shared_ptr<arrow::Schema> schema() const override { return out_schema_; }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    *out = nullptr;
    while (true) {
      if (options_.limit && emitted_ >= *options_.limit) return Status::OK();
      if (!current_) {
        if (next_task_ >= tasks_.size()) return Status::OK();
        task_ = &tasks_[next_task_++];
        if (task_->keep_only && task_->keep_only->IsEmpty()) continue;
        ARROW_RETURN_NOT_OK(OpenTask());
      }
      ARROW_ASSIGN_OR_RAISE(auto next, current_->Next());
      if (!next) {
        current_.reset();
        continue;
      }
      ARROW_ASSIGN_OR_RAISE(auto batch, Assemble(*next));
      if (!batch || batch->num_rows() == 0) continue;
      if (options_.limit && emitted_ + batch->num_rows() > *options_.limit) {
        batch = batch->Slice(0, *options_.limit - emitted_);
      }
      emitted_ += batch->num_rows();
      *out = std::move(batch);
      return Status::OK();
    }
  }

 private:
  std::string What() const {
    return fmt::format("{} file {} (version {})", task_->is_cdc ? "change data" : "data", task_->location,
                       task_->version);
  }

  Status OpenTask() {
    Result<std::shared_ptr<arrow::io::RandomAccessFile>> file =
        task_->size && *task_->size >= 0 ? io_->OpenInput(task_->location, *task_->size)
                                         : io_->OpenInput(task_->location);
    if (!file.ok()) return WithContext(file.status(), "reading " + What());
    parquet_io::ParquetReadOptions opts;
    opts.batch_size = options_.batch_size;
    opts.use_threads = true;  // decode columns in parallel; files are still read one at a time
    // Under id column mapping data files are matched by field id; change data files also carry
    // the unmapped _change_type column, so those are matched by physical name.
    opts.ignore_field_ids = schema_.mode != ColumnMappingMode::kId || task_->is_cdc;
    auto reader = parquet_io::ParquetDataReader::Open(*file, task_->location,
                                                      task_->is_cdc ? cdc_read_schema_ : schema_.read_schema, opts);
    if (!reader.ok()) {
      return WithContext(reader.status(), fmt::format("version {}", task_->version));
    }
    current_ = std::move(*reader);
    // Partition columns are constant per file.
    partition_scalars_.assign(schema_.output->num_fields(), nullptr);
    for (int i = 0; i < schema_.output->num_fields(); ++i) {
      if (schema_.read_index[i] >= 0) continue;
      std::optional<std::string> value;
      auto it = task_->partition_values.find(schema_.physical_names[i]);
      if (it == task_->partition_values.end()) it = task_->partition_values.find(schema_.output->field(i)->name());
      if (it != task_->partition_values.end()) value = it->second;
      LS_ASSIGN_OR_RAISE_CTX(partition_scalars_[i],
                             PartitionScalar(value, schema_.output->field(i)->type(), schema_.output->field(i)->name()),
                             "{}", What());
    }
    return Status::OK();
  }

  Result<std::shared_ptr<arrow::RecordBatch>> Assemble(const parquet_io::PositionedBatch& pb) {
    std::shared_ptr<arrow::RecordBatch> batch = pb.batch;
    const int64_t n = batch->num_rows();
    if (task_->drop || task_->keep_only) {
      arrow::Int64Builder idx;
      ARROW_RETURN_NOT_OK(idx.Reserve(n));
      for (int64_t i = 0; i < n; ++i) {
        const int64_t pos = pb.first_row_position + i;
        if (task_->drop && task_->drop->Contains(pos)) continue;
        if (task_->keep_only && !task_->keep_only->Contains(pos)) continue;
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
    for (int i : selected_) {
      const auto& type = schema_.output->field(i)->type();
      if (schema_.read_index[i] < 0) {
        ARROW_ASSIGN_OR_RAISE(auto arr, arrow::MakeArrayFromScalar(*partition_scalars_[i], rows));
        columns.push_back(std::move(arr));
      } else {
        LS_ASSIGN_OR_RAISE_CTX(auto data, Retype(batch->column(schema_.read_index[i])->data(), type), "{}", What());
        columns.push_back(arrow::MakeArray(data));
      }
    }
    for (MetaColumn c : options_.meta_columns) {
      switch (c) {
        case MetaColumn::kChangeType: {
          if (!task_->is_cdc) {
            ARROW_ASSIGN_OR_RAISE(auto arr, arrow::MakeArrayFromScalar(arrow::StringScalar(task_->change_type), rows));
            columns.push_back(std::move(arr));
          } else {
            auto col = batch->column(change_type_index_);
            if (col->null_count() > 0) {
              return Corrupt("{}: column _change_type is missing or has nulls", What());
            }
            columns.push_back(col);
          }
          break;
        }
        case MetaColumn::kCommitVersion: {
          ARROW_ASSIGN_OR_RAISE(auto arr, arrow::MakeArrayFromScalar(arrow::Int64Scalar(task_->version), rows));
          columns.push_back(std::move(arr));
          break;
        }
        case MetaColumn::kCommitTimestamp: {
          arrow::TimestampScalar ts(task_->commit_timestamp_ms * 1000, arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"));
          ARROW_ASSIGN_OR_RAISE(auto arr, arrow::MakeArrayFromScalar(ts, rows));
          columns.push_back(std::move(arr));
          break;
        }
      }
    }
    return arrow::RecordBatch::Make(out_schema_, rows, std::move(columns));
  }

  std::shared_ptr<io::FileIO> io_;
  TableSchema schema_;
  std::vector<ReadTask> tasks_;
  StreamOptions options_;
  std::vector<int> selected_;
  std::shared_ptr<arrow::Schema> out_schema_;
  iceberg::SchemaPtr cdc_read_schema_;
  int change_type_index_ = 0;
  size_t next_task_ = 0;
  const ReadTask* task_ = nullptr;
  std::unique_ptr<parquet_io::ParquetDataReader> current_;
  std::vector<std::shared_ptr<arrow::Scalar>> partition_scalars_;
  int64_t emitted_ = 0;
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
  ARROW_ASSIGN_OR_RAISE(auto sel, SelectedColumns(schema, options));
  ARROW_ASSIGN_OR_RAISE(auto out_schema, OutputSchema(schema, options));
  return std::make_shared<TaskReader>(std::move(io), std::move(schema), std::move(tasks), std::move(options),
                                      std::move(sel), std::move(out_schema));
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
