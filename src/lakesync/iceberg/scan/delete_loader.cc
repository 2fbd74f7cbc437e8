#include "lakesync/iceberg/scan/delete_loader.h"

#include <arrow/array.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>

#include <algorithm>

#include "lakesync/common/executor.h"
#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/formats/puffin/deletion_vector_file.h"
#include "lakesync/formats/puffin/puffin_reader.h"

namespace lakesync::iceberg {

std::map<int32_t, Literal> IdentityPartitionValues(const DataFile& file, const PartitionSpec* spec) {
  std::map<int32_t, Literal> out;
  if (spec == nullptr) return out;
  const auto& fields = spec->fields();
  for (size_t i = 0; i < fields.size() && i < file.partition.size(); ++i) {
    if (fields[i].transform.kind() != Transform::Kind::kIdentity || file.partition[i].is_null()) continue;
    // Two identity fields of one source hold the same value; the first wins.
    out.emplace(fields[i].source_id, file.partition[i]);
  }
  return out;
}

Result<std::shared_ptr<const DeleteLoader::PositionsByFile>> DeleteLoader::LoadPositionDeleteFile(
    const DataFilePtr& file) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = position_files_.find(file->file_path); it != position_files_.end()) return it->second;
  }
  if (file->file_format != FileFormat::kParquet) {
    return Unsupported("position delete file {} is {}; lakesync reads Parquet delete files", file->file_path,
                       FileFormatName(file->file_format));
  }
  auto positions = std::make_shared<PositionsByFile>();
  LS_ASSIGN_OR_RAISE_CTX(auto input, io_->OpenInput(file->file_path, file->file_size_in_bytes),
                         "reading position delete file {}", file->file_path);
  parquet_io::ParquetReadOptions options;
  parquet_io::ExpectManifestEntry(options, *file);  // row count and size as the manifest records them
  LS_ASSIGN_OR_RAISE_CTX(auto reader,
                         parquet_io::ParquetDataReader::Open(std::move(input), file->file_path, PositionDeleteSchema(),
                                                             std::move(options)),
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

Result<std::vector<std::string>> DeleteLoader::PositionDeleteTargets(const DataFilePtr& file) {
  ARROW_ASSIGN_OR_RAISE(auto by_file, LoadPositionDeleteFile(file));
  std::vector<std::string> out;
  for (const auto& [path, positions] : *by_file) out.push_back(path);
  return out;
}

Result<std::shared_ptr<const puffin::FileMetadata>> DeleteLoader::PuffinFooter(
    const std::shared_ptr<arrow::io::RandomAccessFile>& input, const DataFile& dv) {
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

Result<puffin::PositionBitmap> DeleteLoader::DeletedPositions(const std::string& data_file,
                                                              const DataFilePtr& deletion_vector,
                                                              const std::vector<DataFilePtr>& position_deletes) {
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

Result<std::vector<KeyColumns>> DeleteLoader::ReadEqualityKeys(const std::vector<int32_t>& field_ids,
                                                                const DataFile& file) {
  if (file.file_format != FileFormat::kParquet) {
    return Unsupported("equality delete file {} is {}; lakesync reads Parquet delete files", file.file_path,
                       FileFormatName(file.file_format));
  }
  if (field_ids.empty()) return Corrupt("equality delete file {} has no equality_ids", file.file_path);
  std::vector<NestedField> fields;
  for (int32_t id : field_ids) {
    if (schema_->TopLevelIndex(id) < 0) {
      if (!schema_->FindFieldById(id)) {
        return Unsupported("equality delete file {} uses field id {}, which is not in the table schema",
                           file.file_path, id);
      }
      return Unsupported("equality delete file {} deletes by nested field '{}'; lakesync supports top-level "
                         "equality columns", file.file_path, schema_->FindColumnName(id));
    }
    fields.push_back(schema_->fields()[static_cast<size_t>(schema_->TopLevelIndex(id))]);
  }
  // Read in the table schema's types and in field-id order, whatever the file's own column order:
  // data rows are read the same way, so equal values encode alike.
  auto read_schema = std::make_shared<const Schema>(0, fields);
  parquet_io::ParquetReadOptions options;
  parquet_io::ExpectManifestEntry(options, file);
  auto spec = specs_.find(file.spec_id);
  options.constants = IdentityPartitionValues(file, spec == specs_.end() ? nullptr : spec->second.get());
  LS_ASSIGN_OR_RAISE_CTX(auto input, io_->OpenInput(file.file_path, file.file_size_in_bytes),
                         "reading equality delete file {}", file.file_path);
  LS_ASSIGN_OR_RAISE_CTX(auto reader, parquet_io::ParquetDataReader::Open(std::move(input), file.file_path,
                                                                          read_schema, std::move(options)),
                         "reading equality delete file");
  std::vector<KeyColumns> out;
  while (true) {
    LS_ASSIGN_OR_RAISE_CTX(auto batch, reader->Next(), "reading equality delete file {}", file.file_path);
    if (!batch) break;
    ARROW_ASSIGN_OR_RAISE(auto keys, KeyColumns::Make(batch->batch->columns()));
    out.push_back(std::move(keys));
  }
  return out;
}

Result<std::shared_ptr<const EqualityKeyMap>> DeleteLoader::BuildEqualityKeyMap(
    const std::vector<int32_t>& field_ids, const std::vector<SequencedDeleteFile>& files) {
  auto map = std::make_shared<EqualityKeyMap>();
  map->field_ids = field_ids;
  if (field_ids.size() == 1) {
    // At most this many keys (fewer when files repeat keys): collected without regrowing.
    int64_t rows = 0;
    for (const auto& f : files) rows += std::max<int64_t>(f.file->record_count, 0);
    map->keys.ReserveWords(static_cast<size_t>(rows));
  }
  // Files are read (decoded, key columns made) in parallel; their keys go into the one map on this
  // thread in file order. The map is the same whatever the order (a key keeps its highest number).
  size_t next = 0;
  OrderedStream<std::vector<KeyColumns>> read(
      [&]() -> Result<std::optional<OrderedStream<std::vector<KeyColumns>>::Unit>> {
        if (next >= files.size()) return std::nullopt;
        const DataFile* file = files[next++].file.get();
        return std::optional<OrderedStream<std::vector<KeyColumns>>::Unit>(
            [this, &field_ids, file]() { return ReadEqualityKeys(field_ids, *file); });
      });
  for (const auto& file : files) {
    ARROW_ASSIGN_OR_RAISE(auto keys, read.Next());
    if (!keys) break;
    for (const auto& batch : *keys) {
      LS_RETURN_NOT_OK_CTX(map->keys.Insert(batch, file.sequence_number), "equality delete file {}",
                           file.file->file_path);
    }
  }
  map->keys.Seal();
  return std::shared_ptr<const EqualityKeyMap>(std::move(map));
}

}  // namespace lakesync::iceberg
