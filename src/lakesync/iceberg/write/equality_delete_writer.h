// v2 equality delete files (spec "Equality Delete Files"): Parquet rows holding the deleted values of
// the equality columns, in the table schema projected to those columns (field ids kept). The
// DataFile has content EQUALITY_DELETES and equality_ids. An opt-in fallback: position deletes and
// deletion vectors are what lakesync writes normally.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/formats/parquet/parquet_file_writer.h"
#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/schema.h"
#include "lakesync/iceberg/write/output_factory.h"

namespace lakesync::iceberg {

struct EqualityDeleteWriterOptions {
  SchemaPtr table_schema;
  std::vector<int32_t> equality_field_ids;
  std::string location;
  OutputFactory output_factory;
  int32_t spec_id = 0;
  std::vector<Literal> partition;
  std::map<std::string, std::string> properties;  // write.delete.parquet.*, write.metadata.metrics.*
  std::optional<int32_t> sort_order_id;
};

class EqualityDeleteWriter {
 public:
  // Returns InvalidArgument for no equality ids, an id not in the schema, a non-primitive field or
  // one inside a list or map, a missing location/factory, malformed properties; output errors.
  static Result<std::unique_ptr<EqualityDeleteWriter>> Make(EqualityDeleteWriterOptions options);

  // The schema of the rows: the table schema projected to the equality fields.
  const SchemaPtr& delete_schema() const { return delete_schema_; }

  // Rows either in the delete schema's Arrow layout or in the full table schema (then projected by
  // field id). Returns InvalidArgument for any other layout.
  Status Write(const std::shared_ptr<arrow::RecordBatch>& rows);

  int64_t record_count() const { return writer_->record_count(); }
  Result<DataFile> Close();
  Status Abort() { return writer_->Abort(); }

 private:
  EqualityDeleteWriter() = default;

  EqualityDeleteWriterOptions options_;
  SchemaPtr delete_schema_;
  std::shared_ptr<arrow::Schema> table_arrow_schema_;
  std::unique_ptr<parquet_io::ParquetFileWriter> writer_;
};

}  // namespace lakesync::iceberg
