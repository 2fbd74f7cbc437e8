#include "lakesync/engine/snapshot_as_inserts.h"

#include <arrow/api.h>
#include <arrow/compute/cast.h>

#include "lakesync/common/constant_column.h"

namespace lakesync::engine {
namespace {

class SnapshotAsInsertsReader : public arrow::RecordBatchReader {
 public:
  SnapshotAsInsertsReader(std::shared_ptr<arrow::RecordBatchReader> rows, std::shared_ptr<arrow::Schema> schema,
                          std::vector<std::shared_ptr<arrow::Scalar>> constants)
      : rows_(std::move(rows)), schema_(std::move(schema)) {
    for (auto& value : constants) constants_.push_back(std::make_unique<ConstantColumn>(std::move(value)));
  }
  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    std::shared_ptr<arrow::RecordBatch> batch;
    ARROW_RETURN_NOT_OK(rows_->ReadNext(&batch));
    if (!batch) {
      *out = nullptr;
      return Status::OK();
    }
    arrow::ArrayVector arrays;
    for (int i = 0; i < batch->num_columns(); ++i) {
      const auto& want = schema_->field(i)->type();
      auto column = batch->column(i);
      if (!column->type()->Equals(*want)) {
        // Same column, a representation the change stream spells differently (e.g. a dictionary or
        // a large string): cast so every batch of the stream has one schema.
        ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(column, want));
        column = cast.make_array();
      }
      arrays.push_back(std::move(column));
    }
    for (const auto& constant : constants_) {
      ARROW_ASSIGN_OR_RAISE(auto array, constant->Get(batch->num_rows()));
      arrays.push_back(std::move(array));
    }
    *out = arrow::RecordBatch::Make(schema_, batch->num_rows(), std::move(arrays));
    return Status::OK();
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> rows_;
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<std::unique_ptr<ConstantColumn>> constants_;  // made once, sliced per batch
};

}  // namespace

Result<std::shared_ptr<arrow::RecordBatchReader>> SnapshotAsInserts(
    std::shared_ptr<arrow::RecordBatchReader> rows, std::shared_ptr<arrow::Schema> output_schema,
    std::map<std::string, std::shared_ptr<arrow::Scalar>> constants) {
  const auto& have = rows->schema();
  if (have->num_fields() > output_schema->num_fields()) {
    return InvalidArgument("the snapshot has columns {} but the change stream has {}", have->ToString(),
                           output_schema->ToString());
  }
  for (int i = 0; i < have->num_fields(); ++i) {
    if (have->field(i)->name() != output_schema->field(i)->name()) {
      return InvalidArgument("snapshot column {} is '{}' but the change stream's is '{}'", i, have->field(i)->name(),
                             output_schema->field(i)->name());
    }
  }
  std::vector<std::shared_ptr<arrow::Scalar>> values;
  for (int i = have->num_fields(); i < output_schema->num_fields(); ++i) {
    const auto& field = output_schema->field(i);
    auto it = constants.find(field->name());
    if (it == constants.end()) return InvalidArgument("no value for control column {} of an import", field->name());
    ARROW_ASSIGN_OR_RAISE(auto value, it->second->CastTo(field->type()));
    values.push_back(std::move(value));
  }
  return std::make_shared<SnapshotAsInsertsReader>(std::move(rows), std::move(output_schema), std::move(values));
}

Result<std::shared_ptr<arrow::RecordBatchReader>> DeltaSnapshotAsInserts(
    std::shared_ptr<arrow::RecordBatchReader> rows, const std::vector<std::string>& metadata_columns, int64_t version,
    const std::function<Result<int64_t>()>& commit_timestamp_ms) {
  arrow::FieldVector fields = rows->schema()->fields();
  std::map<std::string, std::shared_ptr<arrow::Scalar>> values;
  for (const auto& c : metadata_columns) {
    if (c == "_change_type") {
      fields.push_back(arrow::field(c, arrow::utf8()));
      values[c] = arrow::MakeScalar("insert");
    } else if (c == "_commit_version") {
      fields.push_back(arrow::field(c, arrow::int64()));
      values[c] = arrow::MakeScalar(version);
    } else if (c == "_commit_timestamp") {
      const auto type = arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
      fields.push_back(arrow::field(c, type));
      ARROW_ASSIGN_OR_RAISE(int64_t ms, commit_timestamp_ms());
      values[c] = std::make_shared<arrow::TimestampScalar>(ms * 1000, type);
    }
  }
  return SnapshotAsInserts(std::move(rows), arrow::schema(fields), std::move(values));
}

}  // namespace lakesync::engine
