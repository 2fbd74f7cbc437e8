#include "lakesync/iceberg/write/equality_delete_writer.h"

#include <algorithm>

#include <arrow/array.h>
#include <arrow/record_batch.h>

#include "lakesync/formats/parquet/schema_projection.h"
#include "lakesync/iceberg/model/arrow_schema.h"

namespace lakesync::iceberg {
namespace {

bool InsideCollection(const std::vector<NestedField>& fields, int32_t id, bool in_collection, bool* found) {
  for (const auto& f : fields) {
    if (f.id == id) {
      *found = true;
      return in_collection;
    }
    const bool child = in_collection || f.type->id() == TypeId::kList || f.type->id() == TypeId::kMap;
    if (InsideCollection(f.type->fields(), id, child, found)) return true;
    if (*found) return false;
  }
  return false;
}

// Projects `data` (of `from`) to the fields of `to`, matching struct children by field id.
Result<std::shared_ptr<arrow::ArrayData>> Project(const std::shared_ptr<arrow::ArrayData>& data,
                                                  const NestedField& from, const NestedField& to) {
  if (to.type->id() != TypeId::kStruct || to.type->Equals(*from.type)) return data;
  ARROW_ASSIGN_OR_RAISE(auto type, ToArrowType(*to.type));
  auto out = data->Copy();
  out->type = type;
  out->child_data.clear();
  for (const auto& child : to.type->fields()) {
    const auto& from_fields = from.type->fields();
    size_t k = 0;
    while (k < from_fields.size() && from_fields[k].id != child.id) ++k;
    if (k == from_fields.size()) return InvalidArgument("field id {} is not in the table schema", child.id);
    ARROW_ASSIGN_OR_RAISE(auto c, Project(data->child_data[k], from_fields[k], child));
    out->child_data.push_back(std::move(c));
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<EqualityDeleteWriter>> EqualityDeleteWriter::Make(EqualityDeleteWriterOptions options) {
  if (!options.table_schema) return InvalidArgument("an equality delete writer needs the table schema");
  if (options.equality_field_ids.empty()) return InvalidArgument("an equality delete writer needs equality field ids");
  if (options.location.empty() || !options.output_factory) {
    return InvalidArgument("an equality delete writer needs a location and an output factory");
  }
  for (int32_t id : options.equality_field_ids) {
    const NestedField* f = options.table_schema->FindFieldById(id);
    if (!f) return InvalidArgument("equality field id {} is not in the table schema", id);
    if (!f->type->is_primitive()) {
      return InvalidArgument("equality field '{}' is not a primitive column", options.table_schema->FindColumnName(id));
    }
    bool found = false;
    if (InsideCollection(options.table_schema->fields(), id, false, &found)) {
      return InvalidArgument("equality field '{}' is inside a list or map", options.table_schema->FindColumnName(id));
    }
  }
  std::unique_ptr<EqualityDeleteWriter> w(new EqualityDeleteWriter());
  ARROW_ASSIGN_OR_RAISE(w->delete_schema_, parquet_io::SelectFields(*options.table_schema, options.equality_field_ids));
  ARROW_ASSIGN_OR_RAISE(w->table_arrow_schema_, ToArrowSchema(*options.table_schema));
  parquet_io::ParquetWriterOptions parquet_options;
  ARROW_ASSIGN_OR_RAISE(parquet_options.parquet,
                        parquet_io::ParquetWriteProperties::FromTableProperties(options.properties, true));
  ARROW_ASSIGN_OR_RAISE(parquet_options.metrics,
                        parquet_io::MetricsConfig::Make(options.properties, *w->delete_schema_));
  LS_ASSIGN_OR_RAISE_CTX(auto sink, options.output_factory(options.location), "opening equality delete file {}",
                         options.location);
  ARROW_ASSIGN_OR_RAISE(w->writer_, parquet_io::ParquetFileWriter::Make(std::move(sink), options.location,
                                                                        w->delete_schema_, parquet_options));
  w->options_ = std::move(options);
  return w;
}

Status EqualityDeleteWriter::Write(const std::shared_ptr<arrow::RecordBatch>& rows) {
  if (!rows) return Status::OK();
  if (rows->schema()->Equals(*table_arrow_schema_, /*check_metadata=*/false) &&
      !rows->schema()->Equals(*writer_->arrow_schema(), false)) {
    std::vector<std::shared_ptr<arrow::Array>> columns;
    const auto& table_fields = options_.table_schema->fields();
    for (const auto& f : delete_schema_->fields()) {
      const int idx = options_.table_schema->TopLevelIndex(f.id);
      ARROW_ASSIGN_OR_RAISE(auto data, Project(rows->column_data(idx), table_fields[static_cast<size_t>(idx)], f));
      columns.push_back(arrow::MakeArray(data));
    }
    return writer_->Write(*arrow::RecordBatch::Make(writer_->arrow_schema(), rows->num_rows(), columns));
  }
  const auto& want = *writer_->arrow_schema();
  if (rows->num_columns() == want.num_fields() && rows->schema()->field_names() != want.field_names()) {
    // The delete schema's columns in another order (the order a caller named its key columns in):
    // taken by name, since the file's columns follow the table schema's order.
    std::vector<int> by_name;
    for (const auto& f : want.fields()) by_name.push_back(rows->schema()->GetFieldIndex(f->name()));
    if (std::find(by_name.begin(), by_name.end(), -1) == by_name.end()) {
      ARROW_ASSIGN_OR_RAISE(auto reordered, rows->SelectColumns(by_name));
      return writer_->Write(*reordered);
    }
  }
  if (rows->num_columns() != writer_->arrow_schema()->num_fields()) {
    return InvalidArgument(
        "equality delete rows for {} must have the delete schema's {} columns or the table's, got {}",
        options_.location, writer_->arrow_schema()->num_fields(), rows->num_columns());
  }
  return writer_->Write(*rows);
}

Result<DataFile> EqualityDeleteWriter::Close() {
  ARROW_ASSIGN_OR_RAISE(auto metrics, writer_->Close());
  DataFile f;
  f.content = FileContent::kEqualityDeletes;
  f.file_path = options_.location;
  f.file_format = FileFormat::kParquet;
  f.spec_id = options_.spec_id;
  f.partition = options_.partition;
  f.equality_ids = options_.equality_field_ids;
  f.sort_order_id = options_.sort_order_id;
  metrics.ApplyTo(f);
  return f;
}

}  // namespace lakesync::iceberg
