#include "lakesync/iceberg/manifest/manifest_writer.h"

#include <algorithm>
#include <map>
#include <type_traits>

#include "lakesync/formats/avro/avro_file_writer.h"
#include "lakesync/formats/avro/avro_value.h"
#include "lakesync/iceberg/manifest/manifest_avro_internal.h"
#include "lakesync/iceberg/manifest/partition_summary.h"
#include "lakesync/iceberg/model/json_serde.h"

namespace lakesync::iceberg {

using internal::StatusName;

struct ManifestWriter::Layout {
  int status, snapshot_id, sequence_number, file_sequence_number, data_file;
  int content, file_path, file_format, partition, record_count, file_size, column_sizes, value_counts,
      null_value_counts, nan_value_counts, lower_bounds, upper_bounds, key_metadata, split_offsets, equality_ids,
      sort_order_id, first_row_id, referenced_data_file, content_offset, content_size;
};

namespace {

int Index(const avro::AvroNode& record, const char* name) { return record.FindField(std::nullopt, name); }

Status SetOptionalLong(avro_value_t* record, int index, std::optional<int64_t> v) {
  ARROW_ASSIGN_OR_RAISE(avro_value_t field, avro::MutableField(record, static_cast<size_t>(index)));
  if (!v) return avro::SetNullBranch(&field);
  ARROW_ASSIGN_OR_RAISE(avro_value_t branch, avro::SetNonNullBranch(&field));
  return avro::WriteLong(&branch, *v);
}

Status SetOptionalInt(avro_value_t* record, int index, std::optional<int32_t> v) {
  ARROW_ASSIGN_OR_RAISE(avro_value_t field, avro::MutableField(record, static_cast<size_t>(index)));
  if (!v) return avro::SetNullBranch(&field);
  ARROW_ASSIGN_OR_RAISE(avro_value_t branch, avro::SetNonNullBranch(&field));
  return avro::WriteInt(&branch, *v);
}

Status SetOptionalBytes(avro_value_t* record, int index, const std::optional<std::string>& v, bool as_string) {
  ARROW_ASSIGN_OR_RAISE(avro_value_t field, avro::MutableField(record, static_cast<size_t>(index)));
  if (!v) return avro::SetNullBranch(&field);
  ARROW_ASSIGN_OR_RAISE(avro_value_t branch, avro::SetNonNullBranch(&field));
  return as_string ? avro::WriteString(&branch, *v) : avro::WriteBytes(&branch, *v);
}

// Empty maps and lists are written as null: readers treat both as "no metrics".
template <typename V>
Status SetIntKeyedMap(avro_value_t* record, int index, const std::map<int32_t, V>& map) {
  ARROW_ASSIGN_OR_RAISE(avro_value_t field, avro::MutableField(record, static_cast<size_t>(index)));
  if (map.empty()) return avro::SetNullBranch(&field);
  ARROW_ASSIGN_OR_RAISE(avro_value_t array, avro::SetNonNullBranch(&field));
  for (const auto& [key, value] : map) {
    ARROW_ASSIGN_OR_RAISE(avro_value_t pair, avro::AppendElement(&array));
    ARROW_ASSIGN_OR_RAISE(avro_value_t k, avro::MutableField(&pair, 0));
    ARROW_ASSIGN_OR_RAISE(avro_value_t v, avro::MutableField(&pair, 1));
    RETURN_NOT_OK(avro::WriteInt(&k, key));
    if constexpr (std::is_same_v<V, int64_t>) {
      RETURN_NOT_OK(avro::WriteLong(&v, value));
    } else {
      RETURN_NOT_OK(avro::WriteBytes(&v, value));
    }
  }
  return Status::OK();
}

template <typename T>
Status SetList(avro_value_t* record, int index, const std::vector<T>& list) {
  ARROW_ASSIGN_OR_RAISE(avro_value_t field, avro::MutableField(record, static_cast<size_t>(index)));
  if (list.empty()) return avro::SetNullBranch(&field);
  ARROW_ASSIGN_OR_RAISE(avro_value_t array, avro::SetNonNullBranch(&field));
  for (const T& item : list) {
    ARROW_ASSIGN_OR_RAISE(avro_value_t element, avro::AppendElement(&array));
    if constexpr (std::is_same_v<T, int64_t>) {
      RETURN_NOT_OK(avro::WriteLong(&element, item));
    } else {
      RETURN_NOT_OK(avro::WriteInt(&element, item));
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::string> ManifestCodecName(std::string_view codec) {
  if (codec == "gzip" || codec == "deflate") return std::string("deflate");
  if (codec == "zstd" || codec == "zstandard") return std::string("zstandard");
  if (codec == "snappy") return std::string("snappy");
  if (codec == "uncompressed" || codec == "null") return std::string("null");
  return InvalidArgument("unknown manifest compression codec '{}' (use gzip, zstd, snappy or uncompressed)", codec);
}

ManifestWriter::~ManifestWriter() = default;

Result<std::unique_ptr<ManifestWriter>> ManifestWriter::Make(ManifestWriterOptions options) {
  if (!options.schema) return InvalidArgument("writing manifest {}: no table schema given", options.location);
  if (!options.spec) return InvalidArgument("writing manifest {}: no partition spec given", options.location);
  if (options.format_version != 2 && options.format_version != 3) {
    return InvalidArgument("writing manifest {}: format version {} is not supported (2 or 3)", options.location,
                           options.format_version);
  }
  std::unique_ptr<ManifestWriter> w(new ManifestWriter());
  LS_ASSIGN_OR_RAISE_CTX(w->partition_type_, options.spec->PartitionType(*options.schema), "writing manifest {}",
                         options.location);
  LS_ASSIGN_OR_RAISE_CTX(std::string codec_name, ManifestCodecName(options.codec), "writing manifest {}",
                         options.location);
  ARROW_ASSIGN_OR_RAISE(avro::AvroCodec codec, avro::ParseAvroCodec(codec_name));
  LS_ASSIGN_OR_RAISE_CTX(std::string schema_json,
                         internal::ManifestEntrySchemaJson(options.format_version, *w->partition_type_),
                         "writing manifest {}", options.location);
  std::vector<std::pair<std::string, std::string>> metadata = {
      {"schema", SchemaToJson(*options.schema).dump()},
      {"schema-id", std::to_string(options.schema->schema_id())},
      {"partition-spec", PartitionFieldsToJson(*options.spec).dump()},
      {"partition-spec-id", std::to_string(options.spec->spec_id())},
      {"format-version", std::to_string(options.format_version)},
      {"content", options.content == ManifestContent::kData ? "data" : "deletes"},
  };
  avro::AvroFileWriterOptions avro_options;
  avro_options.codec = codec;
  avro_options.name = options.location;
  ARROW_ASSIGN_OR_RAISE(w->writer_,
                        avro::AvroFileWriter::Make(std::move(schema_json), std::move(metadata), avro_options));

  const avro::AvroNode& entry = w->writer_->schema();
  auto layout = std::make_unique<Layout>();
  layout->status = Index(entry, "status");
  layout->snapshot_id = Index(entry, "snapshot_id");
  layout->sequence_number = Index(entry, "sequence_number");
  layout->file_sequence_number = Index(entry, "file_sequence_number");
  layout->data_file = Index(entry, "data_file");
  const avro::AvroNode& file = *entry.fields[static_cast<size_t>(layout->data_file)].type;
  layout->content = Index(file, "content");
  layout->file_path = Index(file, "file_path");
  layout->file_format = Index(file, "file_format");
  layout->partition = Index(file, "partition");
  layout->record_count = Index(file, "record_count");
  layout->file_size = Index(file, "file_size_in_bytes");
  layout->column_sizes = Index(file, "column_sizes");
  layout->value_counts = Index(file, "value_counts");
  layout->null_value_counts = Index(file, "null_value_counts");
  layout->nan_value_counts = Index(file, "nan_value_counts");
  layout->lower_bounds = Index(file, "lower_bounds");
  layout->upper_bounds = Index(file, "upper_bounds");
  layout->key_metadata = Index(file, "key_metadata");
  layout->split_offsets = Index(file, "split_offsets");
  layout->equality_ids = Index(file, "equality_ids");
  layout->sort_order_id = Index(file, "sort_order_id");
  layout->first_row_id = Index(file, "first_row_id");
  layout->referenced_data_file = Index(file, "referenced_data_file");
  layout->content_offset = Index(file, "content_offset");
  layout->content_size = Index(file, "content_size_in_bytes");
  w->layout_ = std::move(layout);
  w->summaries_ = std::make_unique<PartitionSummaryBuilder>(w->partition_type_);
  w->options_ = std::move(options);
  return w;
}

Status ManifestWriter::Add(const ManifestEntry& entry) {
  const std::string& where = options_.location;
  if (finished_) return InvalidArgument("manifest {} is already finished", where);
  if (!entry.data_file) return InvalidArgument("manifest {}: an entry has no data file", where);
  const DataFile& f = *entry.data_file;
  const int v = options_.format_version;
  auto bad = [&](std::string_view why) {
    return InvalidArgument("manifest {}: {} entry for {}: {}", where, StatusName(entry.status), f.file_path, why);
  };

  const bool is_data = f.content == FileContent::kData;
  if (is_data != (options_.content == ManifestContent::kData)) {
    return bad(is_data ? "a data file cannot go into a delete manifest"
                       : "a delete file cannot go into a data manifest");
  }
  if (entry.status != ManifestEntryStatus::kAdded) {
    if (!entry.sequence_number || !entry.file_sequence_number) {
      return bad("EXISTING and DELETED entries must carry both sequence numbers");
    }
    if (entry.status == ManifestEntryStatus::kExisting && !entry.snapshot_id) {
      return bad("an EXISTING entry must keep the snapshot id that added the file");
    }
  }
  if (f.record_count < 0 || f.file_size_in_bytes < 0) return bad("negative record count or file size");
  const bool equality = f.content == FileContent::kEqualityDeletes;
  if (equality && f.equality_ids.empty()) return bad("equality deletes need equality_ids");
  if (!equality && !f.equality_ids.empty()) return bad("only equality deletes have equality_ids");
  if (f.first_row_id && (!is_data || v < 3)) return bad("first_row_id belongs to v3 data files only");
  if (f.IsDeletionVector()) {
    if (v < 3) return bad("deletion vectors need format version 3");
    if (!f.referenced_data_file || !f.content_offset || !f.content_size_in_bytes) {
      return bad("a deletion vector needs referenced_data_file, content_offset and content_size_in_bytes");
    }
  } else if (f.content_offset || f.content_size_in_bytes) {
    return bad("content_offset and content_size_in_bytes belong to deletion vectors only");
  }
  if (v >= 3 && f.content == FileContent::kPositionDeletes && !f.IsDeletionVector() &&
      entry.status == ManifestEntryStatus::kAdded) {
    return bad("v3 tables take deletion vectors, not new position delete files");
  }
  const auto& partition_fields = partition_type_->fields();
  if (f.partition.size() != partition_fields.size()) {
    return bad(fmt::format("the partition tuple has {} values but spec {} has {} fields", f.partition.size(),
                           options_.spec->spec_id(), partition_fields.size()));
  }
  for (size_t i = 0; i < partition_fields.size(); ++i) {
    if (!LiteralMatchesType(f.partition[i], *partition_fields[i].type) ||
        (partition_fields[i].type->id() == TypeId::kUnknown && !f.partition[i].is_null())) {
      return bad(fmt::format("partition value for '{}' does not match type {}", partition_fields[i].name,
                             partition_fields[i].type->ToString()));
    }
  }

  const Layout& l = *layout_;
  avro_value_t* record = writer_->NewRecord();
  auto encode = [&]() -> Status {
    ARROW_ASSIGN_OR_RAISE(avro_value_t status, avro::MutableField(record, l.status));
    RETURN_NOT_OK(avro::WriteInt(&status, static_cast<int32_t>(entry.status)));
    RETURN_NOT_OK(SetOptionalLong(record, l.snapshot_id, entry.snapshot_id));
    RETURN_NOT_OK(SetOptionalLong(record, l.sequence_number, entry.sequence_number));
    RETURN_NOT_OK(SetOptionalLong(record, l.file_sequence_number, entry.file_sequence_number));
    ARROW_ASSIGN_OR_RAISE(avro_value_t file, avro::MutableField(record, l.data_file));
    ARROW_ASSIGN_OR_RAISE(avro_value_t content, avro::MutableField(&file, l.content));
    RETURN_NOT_OK(avro::WriteInt(&content, static_cast<int32_t>(f.content)));
    ARROW_ASSIGN_OR_RAISE(avro_value_t path, avro::MutableField(&file, l.file_path));
    RETURN_NOT_OK(avro::WriteString(&path, f.file_path));
    ARROW_ASSIGN_OR_RAISE(avro_value_t format, avro::MutableField(&file, l.file_format));
    RETURN_NOT_OK(avro::WriteString(&format, FileFormatName(f.file_format)));
    ARROW_ASSIGN_OR_RAISE(avro_value_t partition, avro::MutableField(&file, l.partition));
    for (size_t i = 0; i < partition_fields.size(); ++i) {
      ARROW_ASSIGN_OR_RAISE(avro_value_t value, avro::MutableField(&partition, i));
      if (f.partition[i].is_null()) {
        RETURN_NOT_OK(avro::SetNullBranch(&value));
      } else {
        ARROW_ASSIGN_OR_RAISE(avro_value_t branch, avro::SetNonNullBranch(&value));
        LS_RETURN_NOT_OK_CTX(internal::WriteLiteral(&branch, *partition_fields[i].type, f.partition[i]),
                             "partition field '{}'", partition_fields[i].name);
      }
    }
    ARROW_ASSIGN_OR_RAISE(avro_value_t records, avro::MutableField(&file, l.record_count));
    RETURN_NOT_OK(avro::WriteLong(&records, f.record_count));
    ARROW_ASSIGN_OR_RAISE(avro_value_t size, avro::MutableField(&file, l.file_size));
    RETURN_NOT_OK(avro::WriteLong(&size, f.file_size_in_bytes));
    RETURN_NOT_OK(SetIntKeyedMap(&file, l.column_sizes, f.column_sizes));
    RETURN_NOT_OK(SetIntKeyedMap(&file, l.value_counts, f.value_counts));
    RETURN_NOT_OK(SetIntKeyedMap(&file, l.null_value_counts, f.null_value_counts));
    RETURN_NOT_OK(SetIntKeyedMap(&file, l.nan_value_counts, f.nan_value_counts));
    RETURN_NOT_OK(SetIntKeyedMap(&file, l.lower_bounds, f.lower_bounds));
    RETURN_NOT_OK(SetIntKeyedMap(&file, l.upper_bounds, f.upper_bounds));
    RETURN_NOT_OK(SetOptionalBytes(&file, l.key_metadata, f.key_metadata, /*as_string=*/false));
    RETURN_NOT_OK(SetList(&file, l.split_offsets, f.split_offsets));
    RETURN_NOT_OK(SetList(&file, l.equality_ids, f.equality_ids));
    RETURN_NOT_OK(SetOptionalInt(&file, l.sort_order_id, f.sort_order_id));
    if (l.first_row_id >= 0) RETURN_NOT_OK(SetOptionalLong(&file, l.first_row_id, f.first_row_id));
    RETURN_NOT_OK(SetOptionalBytes(&file, l.referenced_data_file, f.referenced_data_file, /*as_string=*/true));
    if (l.content_offset >= 0) RETURN_NOT_OK(SetOptionalLong(&file, l.content_offset, f.content_offset));
    if (l.content_size >= 0) RETURN_NOT_OK(SetOptionalLong(&file, l.content_size, f.content_size_in_bytes));
    return writer_->Append();
  };
  LS_RETURN_NOT_OK_CTX(encode(), "manifest {}: entry for {}", where, f.file_path);

  switch (entry.status) {
    case ManifestEntryStatus::kAdded:
      ++added_files_;
      added_rows_ += f.record_count;
      break;
    case ManifestEntryStatus::kExisting:
      ++existing_files_;
      existing_rows_ += f.record_count;
      break;
    case ManifestEntryStatus::kDeleted:
      ++deleted_files_;
      deleted_rows_ += f.record_count;
      break;
  }
  if (entry.status != ManifestEntryStatus::kDeleted && entry.sequence_number) {
    min_sequence_number_ = std::min(min_sequence_number_.value_or(*entry.sequence_number), *entry.sequence_number);
  }
  return summaries_->Update(f.partition);
}

Result<std::string> ManifestWriter::Finish() {
  if (finished_) return InvalidArgument("manifest {} is already finished", options_.location);
  finished_ = true;
  return writer_->Finish();
}

Result<ManifestFile> ManifestWriter::ToManifestFile(std::string location, int64_t length) const {
  if (!finished_) return InvalidArgument("manifest {} is not finished", options_.location);
  ManifestFile m;
  m.manifest_path = std::move(location);
  m.manifest_length = length;
  m.partition_spec_id = options_.spec->spec_id();
  m.content = options_.content;
  m.sequence_number = kUnassignedSequenceNumber;
  m.min_sequence_number = min_sequence_number_.value_or(kUnassignedSequenceNumber);
  m.added_snapshot_id = options_.snapshot_id.value_or(kUnassignedSnapshotId);
  m.added_files_count = added_files_;
  m.existing_files_count = existing_files_;
  m.deleted_files_count = deleted_files_;
  m.added_rows_count = added_rows_;
  m.existing_rows_count = existing_rows_;
  m.deleted_rows_count = deleted_rows_;
  ARROW_ASSIGN_OR_RAISE(m.partitions, summaries_->Summaries());
  return m;
}

int64_t ManifestWriter::entries_written() const { return writer_->records_written(); }

}  // namespace lakesync::iceberg
