#include "lakesync/table/delete_loader.h"

#include <arrow/array.h>
#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>

#include <cmath>
#include <cstring>

#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/formats/puffin/deletion_vector_file.h"
#include "lakesync/formats/puffin/puffin_reader.h"
#include "lakesync/iceberg/write/position_delete_writer.h"

namespace lakesync::table {
namespace {

template <typename T>
void AppendRaw(std::string& key, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  key.append(buf, sizeof(T));
}

Result<std::unique_ptr<parquet_io::ParquetDataReader>> OpenDeleteFile(const io::FileIO& io,
                                                                      const iceberg::DataFile& file,
                                                                      iceberg::SchemaPtr read_schema) {
  if (file.file_format != iceberg::FileFormat::kParquet) {
    return Unsupported("delete file {} is {}; lakesync reads Parquet delete files", file.file_path,
                       iceberg::FileFormatName(file.file_format));
  }
  ARROW_ASSIGN_OR_RAISE(auto input, io.OpenInput(file.file_path, file.file_size_in_bytes));
  parquet_io::ParquetReadOptions options;
  parquet_io::ExpectManifestEntry(options, file);
  return parquet_io::ParquetDataReader::Open(std::move(input), file.file_path, std::move(read_schema), options);
}

}  // namespace

Status AppendKeyValue(std::string& key, const arrow::Array& column, int64_t row) {
  if (column.IsNull(row)) {
    key.push_back('\0');
    return Status::OK();
  }
  key.push_back('\1');
  switch (column.type_id()) {
    case arrow::Type::BOOL:
      key.push_back(static_cast<const arrow::BooleanArray&>(column).Value(row) ? '\1' : '\0');
      return Status::OK();
    case arrow::Type::FLOAT: {
      float v = static_cast<const arrow::FloatArray&>(column).Value(row);
      if (std::isnan(v)) v = std::numeric_limits<float>::quiet_NaN();  // one NaN pattern
      AppendRaw(key, v);
      return Status::OK();
    }
    case arrow::Type::DOUBLE: {
      double v = static_cast<const arrow::DoubleArray&>(column).Value(row);
      if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
      AppendRaw(key, v);
      return Status::OK();
    }
    case arrow::Type::STRING:
    case arrow::Type::BINARY: {
      const auto v = static_cast<const arrow::BinaryArray&>(column).GetView(row);
      AppendRaw(key, static_cast<uint32_t>(v.size()));
      key.append(v.data(), v.size());
      return Status::OK();
    }
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY: {
      const auto v = static_cast<const arrow::LargeBinaryArray&>(column).GetView(row);
      AppendRaw(key, static_cast<uint32_t>(v.size()));
      key.append(v.data(), v.size());
      return Status::OK();
    }
    case arrow::Type::FIXED_SIZE_BINARY:
    case arrow::Type::DECIMAL128: {
      const auto v = static_cast<const arrow::FixedSizeBinaryArray&>(column).GetView(row);
      key.append(v.data(), v.size());
      return Status::OK();
    }
    default:
      break;
  }
  const auto* fixed = dynamic_cast<const arrow::FixedWidthType*>(column.type().get());
  if (fixed && column.type()->id() != arrow::Type::BOOL && fixed->bit_width() % 8 == 0) {
    const int width = fixed->bit_width() / 8;
    const auto* data = column.data()->GetValues<uint8_t>(1, 0);
    key.append(reinterpret_cast<const char*>(data + (column.offset() + row) * width), static_cast<size_t>(width));
    return Status::OK();
  }
  return Unsupported("equality deletes on columns of Arrow type {} are not supported", column.type()->ToString());
}

Result<std::shared_ptr<const DeleteLoader::PositionsByFile>> DeleteLoader::LoadPositionDeleteFile(
    const iceberg::DataFilePtr& file) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = position_files_.find(file->file_path); it != position_files_.end()) return it->second;
  }
  auto positions = std::make_shared<PositionsByFile>();
  LS_ASSIGN_OR_RAISE_CTX(auto reader, OpenDeleteFile(*io_, *file, iceberg::PositionDeleteSchema()),
                         "reading position delete file");
  while (true) {
    LS_ASSIGN_OR_RAISE_CTX(auto batch, reader->Next(), "reading position delete file {}", file->file_path);
    if (!batch) break;
    const auto& paths = *batch->batch->column(0);
    const auto& pos = static_cast<const arrow::Int64Array&>(*batch->batch->column(1));
    for (int64_t i = 0; i < batch->batch->num_rows(); ++i) {
      std::string_view path = paths.type_id() == arrow::Type::LARGE_STRING
                                  ? static_cast<const arrow::LargeStringArray&>(paths).GetView(i)
                                  : static_cast<const arrow::StringArray&>(paths).GetView(i);
      auto it = positions->find(path);
      if (it == positions->end()) it = positions->emplace(std::string(path), puffin::PositionBitmap()).first;
      LS_RETURN_NOT_OK_CTX(it->second.Add(pos.Value(i)), "position delete file {}, row {}", file->file_path,
                           batch->first_row_position + i);
    }
  }
  // A file recorded as deleting rows of one data file must name only that file (spec "Position
  // Delete Files"); otherwise its manifest entry is damaged and scans would skip it for the data
  // file its rows really delete from.
  if (file->referenced_data_file) {
    for (const auto& [path, bits] : *positions) {
      if (path != *file->referenced_data_file) {
        return Corrupt("position delete file {} is recorded as deleting rows of {} only, but its rows name {}",
                       file->file_path, *file->referenced_data_file, path);
      }
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  position_files_[file->file_path] = positions;
  return std::shared_ptr<const PositionsByFile>(positions);
}

Result<std::vector<std::string>> DeleteLoader::PositionDeleteTargets(const iceberg::DataFilePtr& file) {
  ARROW_ASSIGN_OR_RAISE(auto by_file, LoadPositionDeleteFile(file));
  std::vector<std::string> out;
  for (const auto& [path, positions] : *by_file) out.push_back(path);
  return out;
}

Result<std::shared_ptr<const puffin::FileMetadata>> DeleteLoader::PuffinFooter(
    const std::shared_ptr<arrow::io::RandomAccessFile>& input, const iceberg::DataFile& dv) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = puffin_footers_.find(dv.file_path); it != puffin_footers_.end()) return it->second;
  }
  puffin::PuffinReaderOptions options;
  options.file_size = dv.file_size_in_bytes;
  LS_ASSIGN_OR_RAISE_CTX(auto reader, puffin::PuffinReader::Open(input, options), "reading the Puffin footer of {}",
                         dv.file_path);
  auto footer = std::make_shared<const puffin::FileMetadata>(reader->metadata());
  std::lock_guard<std::mutex> lock(mutex_);
  puffin_footers_[dv.file_path] = footer;
  return footer;
}

Result<puffin::PositionBitmap> DeleteLoader::DeletedPositions(
    const std::string& data_file, const iceberg::DataFilePtr& deletion_vector,
    const std::vector<iceberg::DataFilePtr>& position_deletes) {
  puffin::PositionBitmap deleted;
  if (deletion_vector) {
    const auto& dv = *deletion_vector;
    if (!dv.content_offset || !dv.content_size_in_bytes) {
      return Corrupt("deletion vector for {} in {} lacks content_offset/content_size_in_bytes", data_file,
                     dv.file_path);
    }
    LS_ASSIGN_OR_RAISE_CTX(auto input, io_->OpenInput(dv.file_path, dv.file_size_in_bytes),
                           "reading the deletion vector of {}", data_file);
    ARROW_ASSIGN_OR_RAISE(auto footer, PuffinFooter(input, dv));
    ARROW_RETURN_NOT_OK(puffin::CheckDeletionVectorAgainstFooter(*footer, dv.file_path, *dv.content_offset,
                                                                 *dv.content_size_in_bytes, data_file));
    LS_ASSIGN_OR_RAISE_CTX(deleted,
                           puffin::ReadDeletionVector(*input, *dv.content_offset, *dv.content_size_in_bytes,
                                                      dv.record_count),
                           "reading the deletion vector of {} from {}", data_file, dv.file_path);
  }
  for (const auto& file : position_deletes) {
    ARROW_ASSIGN_OR_RAISE(auto by_file, LoadPositionDeleteFile(file));
    if (auto it = by_file->find(data_file); it != by_file->end()) deleted.Or(it->second);
  }
  return deleted;
}

Result<std::shared_ptr<const EqualityDeleteSet>> DeleteLoader::EqualityDeletes(const iceberg::DataFilePtr& file) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = equality_files_.find(file->file_path); it != equality_files_.end()) return it->second;
  }
  auto set = std::make_shared<EqualityDeleteSet>();
  set->field_ids = file->equality_ids;
  if (set->field_ids.empty()) return Corrupt("equality delete file {} has no equality_ids", file->file_path);
  std::vector<iceberg::NestedField> fields;
  for (int32_t id : set->field_ids) {
    if (schema_->TopLevelIndex(id) < 0) {
      const auto* nested = schema_->FindFieldById(id);
      if (!nested) {
        return Unsupported("equality delete file {} uses field id {}, which is not in the table schema",
                           file->file_path, id);
      }
      return Unsupported("equality delete file {} deletes by nested field '{}'; lakesync supports top-level "
                         "equality columns", file->file_path, schema_->FindColumnName(id));
    }
    fields.push_back(schema_->fields()[static_cast<size_t>(schema_->TopLevelIndex(id))]);
  }
  auto read_schema = std::make_shared<const iceberg::Schema>(0, fields);
  LS_ASSIGN_OR_RAISE_CTX(auto reader, OpenDeleteFile(*io_, *file, read_schema), "reading equality delete file");
  std::string key;
  while (true) {
    LS_ASSIGN_OR_RAISE_CTX(auto batch, reader->Next(), "reading equality delete file {}", file->file_path);
    if (!batch) break;
    const auto& b = *batch->batch;
    for (int64_t i = 0; i < b.num_rows(); ++i) {
      key.clear();
      for (int c = 0; c < b.num_columns(); ++c) ARROW_RETURN_NOT_OK(AppendKeyValue(key, *b.column(c), i));
      set->keys.insert(key);
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  equality_files_[file->file_path] = set;
  return std::shared_ptr<const EqualityDeleteSet>(set);
}

}  // namespace lakesync::table
