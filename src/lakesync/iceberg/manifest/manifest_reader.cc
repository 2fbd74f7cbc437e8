#include "lakesync/iceberg/manifest/manifest_reader.h"

#include <charconv>
#include <map>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "lakesync/formats/avro/avro_file_reader.h"
#include "lakesync/formats/avro/avro_value.h"
#include "lakesync/iceberg/manifest/manifest_avro_internal.h"
#include "lakesync/iceberg/model/json_serde.h"

namespace lakesync::iceberg {

namespace ef = internal::entry_field;
using avro::AvroNode;
using avro::AvroType;
using internal::OptionalChild;
using internal::OptionalLong;
using internal::RequiredChild;
using internal::StatusName;

namespace {

// How an int-keyed metrics map is stored: an array of key/value records (the spec's form), or an
// Avro map whose string keys spell the ids.
struct MapLayout {
  int field = -1;
  bool avro_map = false;
  int key = 0;
  int value = 1;
};

MapLayout ResolveMap(const AvroNode& record, int32_t id, const char* name) {
  MapLayout m;
  m.field = record.FindField(id, name);
  if (m.field < 0) return m;
  const AvroNode& type = record.fields[static_cast<size_t>(m.field)].type->NonNull();
  if (type.type == AvroType::kMap) {
    m.avro_map = true;
  } else if (type.type == AvroType::kArray && type.items->type == AvroType::kRecord) {
    const int key = type.items->FindField(std::nullopt, "key");
    const int value = type.items->FindField(std::nullopt, "value");
    if (key >= 0) m.key = key;
    if (value >= 0) m.value = value;
  }
  return m;
}

Result<std::optional<int64_t>> ParseLong(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size()) return Corrupt("'{}' is not an integer", *text);
  return v;
}

Result<std::optional<int32_t>> OptionalInt(const avro_value_t& record, int index) {
  ARROW_ASSIGN_OR_RAISE(auto child, OptionalChild(record, index));
  if (!child) return std::nullopt;
  return avro::ReadInt(*child);
}

Result<std::optional<std::string>> OptionalBytes(const avro_value_t& record, int index) {
  ARROW_ASSIGN_OR_RAISE(auto child, OptionalChild(record, index));
  if (!child) return std::nullopt;
  return avro::ReadBytes(*child);
}

template <typename V>
Status ReadIntKeyedMap(const avro_value_t& record, const MapLayout& layout, std::map<int32_t, V>* out) {
  ARROW_ASSIGN_OR_RAISE(auto map, OptionalChild(record, layout.field));
  if (!map) return Status::OK();
  ARROW_ASSIGN_OR_RAISE(size_t n, avro::ChildCount(*map));
  for (size_t i = 0; i < n; ++i) {
    int32_t key = 0;
    avro_value_t value_holder;
    if (layout.avro_map) {
      const char* name = nullptr;
      if (avro_value_get_by_index(&*map, i, &value_holder, &name) != 0 || name == nullptr) {
        return Corrupt("cannot read map entry {}", i);
      }
      std::string_view text(name);
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), key);
      if (ec != std::errc() || end != text.data() + text.size()) return Corrupt("map key '{}' is not a field id", text);
    } else {
      ARROW_ASSIGN_OR_RAISE(avro_value_t pair, avro::ChildAt(*map, i));
      ARROW_ASSIGN_OR_RAISE(avro_value_t k, RequiredChild(pair, layout.key));
      ARROW_ASSIGN_OR_RAISE(key, avro::ReadInt(k));
      ARROW_ASSIGN_OR_RAISE(value_holder, avro::ChildAt(pair, static_cast<size_t>(layout.value)));
    }
    ARROW_ASSIGN_OR_RAISE(auto value, avro::NonNullValue(value_holder));
    if (!value) continue;  // a null metric says nothing
    if constexpr (std::is_same_v<V, int64_t>) {
      ARROW_ASSIGN_OR_RAISE((*out)[key], avro::ReadLong(*value));
    } else {
      ARROW_ASSIGN_OR_RAISE((*out)[key], avro::ReadBytes(*value));
    }
  }
  return Status::OK();
}

template <typename T>
Status ReadList(const avro_value_t& record, int index, std::vector<T>* out) {
  ARROW_ASSIGN_OR_RAISE(auto list, OptionalChild(record, index));
  if (!list) return Status::OK();
  ARROW_ASSIGN_OR_RAISE(size_t n, avro::ChildCount(*list));
  for (size_t i = 0; i < n; ++i) {
    ARROW_ASSIGN_OR_RAISE(avro_value_t element, avro::ChildAt(*list, i));
    ARROW_ASSIGN_OR_RAISE(auto non_null, avro::NonNullValue(element));
    if (!non_null) return Corrupt("list element {} is null", i);
    if constexpr (std::is_same_v<T, int64_t>) {
      ARROW_ASSIGN_OR_RAISE(int64_t v, avro::ReadLong(*non_null));
      out->push_back(v);
    } else {
      ARROW_ASSIGN_OR_RAISE(int32_t v, avro::ReadInt(*non_null));
      out->push_back(v);
    }
  }
  return Status::OK();
}

}  // namespace

struct ManifestReader::Layout {
  int status = -1, snapshot_id = -1, sequence_number = -1, file_sequence_number = -1, data_file = -1;
  int content = -1, file_path = -1, file_format = -1, partition = -1, record_count = -1, file_size = -1;
  int key_metadata = -1, split_offsets = -1, equality_ids = -1, sort_order_id = -1, first_row_id = -1;
  int referenced_data_file = -1, content_offset = -1, content_size = -1;
  MapLayout column_sizes, value_counts, null_value_counts, nan_value_counts, lower_bounds, upper_bounds;
  // For each partition_type_ field: its index in the writer's partition record, or -1.
  std::vector<int> partition_fields;
};

ManifestReader::ManifestReader() = default;
ManifestReader::~ManifestReader() = default;

Result<std::unique_ptr<ManifestReader>> ManifestReader::Open(std::string_view bytes, const ManifestFile& manifest,
                                                             const TableMetadata* metadata) {
  std::unique_ptr<ManifestReader> r(new ManifestReader());
  r->manifest_ = manifest;
  r->next_row_id_ = manifest.first_row_id;
  ARROW_ASSIGN_OR_RAISE(r->reader_, avro::AvroFileReader::Open(bytes, manifest.manifest_path));
  RETURN_NOT_OK(r->Resolve(metadata));
  return r;
}

Status ManifestReader::Resolve(const TableMetadata* metadata) {
  const std::string& path = manifest_.manifest_path;
  const AvroNode& entry = reader_->schema();
  if (entry.type != AvroType::kRecord) return Corrupt("{}: manifest records are not Avro records", path);
  auto l = std::make_unique<Layout>();
  l->status = entry.FindField(ef::kStatus, "status");
  l->snapshot_id = entry.FindField(ef::kSnapshotId, "snapshot_id");
  l->sequence_number = entry.FindField(ef::kSequenceNumber, "sequence_number");
  l->file_sequence_number = entry.FindField(ef::kFileSequenceNumber, "file_sequence_number");
  l->data_file = entry.FindField(ef::kDataFile, "data_file");
  if (l->status < 0 || l->data_file < 0) return Corrupt("{}: manifest entries have no status or data_file field", path);
  const AvroNode& file = entry.fields[static_cast<size_t>(l->data_file)].type->NonNull();
  if (file.type != AvroType::kRecord) return Corrupt("{}: data_file is not a record", path);
  l->content = file.FindField(ef::kContent, "content");
  l->file_path = file.FindField(ef::kFilePath, "file_path");
  l->file_format = file.FindField(ef::kFileFormat, "file_format");
  l->partition = file.FindField(ef::kPartition, "partition");
  l->record_count = file.FindField(ef::kRecordCount, "record_count");
  l->file_size = file.FindField(ef::kFileSize, "file_size_in_bytes");
  for (auto [index, name] : {std::pair{l->file_path, "file_path"}, {l->file_format, "file_format"},
                             {l->partition, "partition"}, {l->record_count, "record_count"},
                             {l->file_size, "file_size_in_bytes"}}) {
    if (index < 0) return Corrupt("{}: data_file has no {} field", path, name);
  }
  l->key_metadata = file.FindField(ef::kKeyMetadata, "key_metadata");
  l->split_offsets = file.FindField(ef::kSplitOffsets, "split_offsets");
  l->equality_ids = file.FindField(ef::kEqualityIds, "equality_ids");
  l->sort_order_id = file.FindField(ef::kSortOrderId, "sort_order_id");
  l->first_row_id = file.FindField(ef::kFirstRowId, "first_row_id");
  l->referenced_data_file = file.FindField(ef::kReferencedDataFile, "referenced_data_file");
  l->content_offset = file.FindField(ef::kContentOffset, "content_offset");
  l->content_size = file.FindField(ef::kContentSize, "content_size_in_bytes");
  l->column_sizes = ResolveMap(file, ef::kColumnSizes, "column_sizes");
  l->value_counts = ResolveMap(file, ef::kValueCounts, "value_counts");
  l->null_value_counts = ResolveMap(file, ef::kNullValueCounts, "null_value_counts");
  l->nan_value_counts = ResolveMap(file, ef::kNanValueCounts, "nan_value_counts");
  l->lower_bounds = ResolveMap(file, ef::kLowerBounds, "lower_bounds");
  l->upper_bounds = ResolveMap(file, ef::kUpperBounds, "upper_bounds");

  // Format version: the metadata says; old v1 writers may not, and then have no sequence numbers.
  auto version_text = reader_->FindMetadata("format-version");
  if (version_text) {
    auto version = ParseLong(version_text);
    if (!version.ok() || !*version) return Corrupt("{}: invalid format-version '{}'", path, *version_text);
    if (**version > kMaxFormatVersion || **version < 1) {
      return Unsupported("{}: manifest format version {} is not supported", path, **version);
    }
    format_version_ = static_cast<int>(**version);
  } else {
    format_version_ = l->sequence_number >= 0 ? 2 : 1;
  }

  // The table schema and spec from the manifest's own metadata; unreadable ones are ignored since
  // the table metadata or the writer schema can stand in for them.
  try {
    if (auto text = reader_->FindMetadata("schema")) {
      auto j = nlohmann::json::parse(*text, nullptr, false);
      if (!j.is_discarded()) {
        auto s = SchemaFromJson(j);
        if (s.ok()) schema_ = *s;
      }
    }
    if (metadata != nullptr) spec_ = metadata->SpecById(manifest_.partition_spec_id);
    if (!spec_) {
      if (auto text = reader_->FindMetadata("partition-spec")) {
        auto j = nlohmann::json::parse(*text, nullptr, false);
        if (!j.is_discarded()) {
          auto s = PartitionSpecFromFieldsJson(manifest_.partition_spec_id, j);
          if (s.ok()) spec_ = *s;
        }
      }
    }
  } catch (const nlohmann::json::exception&) {
    // Malformed metadata JSON: fall back to the writer schema like a missing key.
  }

  // Partition result types: bind the spec to a schema that has its source columns (the table's
  // current schema, the manifest's, then older table schemas).
  TypePtr bound;
  if (spec_) {
    std::vector<SchemaPtr> candidates;
    if (metadata != nullptr && metadata->Schema()) candidates.push_back(metadata->Schema());
    if (schema_) candidates.push_back(schema_);
    if (metadata != nullptr) candidates.insert(candidates.end(), metadata->schemas.rbegin(), metadata->schemas.rend());
    for (const auto& s : candidates) {
      auto t = spec_->PartitionType(*s);
      if (t.ok()) {
        bound = *t;
        break;
      }
    }
  }
  const AvroNode& partition = file.fields[static_cast<size_t>(l->partition)].type->NonNull();
  if (partition.type != AvroType::kRecord) return Corrupt("{}: the partition field is not a record", path);
  std::vector<NestedField> fields;
  if (spec_) {
    for (size_t i = 0; i < spec_->fields().size(); ++i) {
      const PartitionField& pf = spec_->fields()[i];
      const int index = partition.FindField(pf.field_id, pf.name);
      TypePtr type = bound ? bound->fields()[i].type : nullptr;
      if (index >= 0) {
        const AvroNode& written = *partition.fields[static_cast<size_t>(index)].type;
        // Unknown transforms have no result type: take the one the writer recorded.
        if (!type || (type->id() == TypeId::kUnknown && written.NonNull().type != AvroType::kNull)) {
          type = internal::InferIcebergType(written);
        }
      }
      if (!type) type = Type::Unknown();
      fields.push_back(NestedField{pf.field_id, pf.name, false, type, "", std::nullopt, std::nullopt});
      l->partition_fields.push_back(index);
    }
  } else {
    for (size_t i = 0; i < partition.fields.size(); ++i) {
      const avro::AvroField& af = partition.fields[i];
      fields.push_back(NestedField{af.field_id.value_or(0), af.iceberg_name, false,
                                   internal::InferIcebergType(*af.type), "", std::nullopt, std::nullopt});
      l->partition_fields.push_back(static_cast<int>(i));
    }
  }
  partition_type_ = Type::Struct(std::move(fields));
  layout_ = std::move(l);
  return Status::OK();
}

Result<ManifestEntry> ManifestReader::Decode(const avro_value_t& record) {
  const Layout& l = *layout_;
  ManifestEntry entry;
  DataFile file;
  file.spec_id = manifest_.partition_spec_id;

  LS_ASSIGN_OR_RAISE_CTX(avro_value_t status_value, RequiredChild(record, l.status), "field 'status'");
  LS_ASSIGN_OR_RAISE_CTX(int32_t status, avro::ReadInt(status_value), "field 'status'");
  if (status < 0 || status > 2) return Corrupt("field 'status' has the invalid value {}", status);
  entry.status = static_cast<ManifestEntryStatus>(status);
  LS_ASSIGN_OR_RAISE_CTX(entry.snapshot_id, OptionalLong(record, l.snapshot_id), "field 'snapshot_id'");
  LS_ASSIGN_OR_RAISE_CTX(entry.sequence_number, OptionalLong(record, l.sequence_number), "field 'sequence_number'");
  LS_ASSIGN_OR_RAISE_CTX(entry.file_sequence_number, OptionalLong(record, l.file_sequence_number),
                         "field 'file_sequence_number'");

  LS_ASSIGN_OR_RAISE_CTX(avro_value_t df, RequiredChild(record, l.data_file), "field 'data_file'");
  LS_ASSIGN_OR_RAISE_CTX(auto content, OptionalInt(df, l.content), "field 'content'");
  if (content && (*content < 0 || *content > 2)) return Corrupt("field 'content' has the invalid value {}", *content);
  file.content = static_cast<FileContent>(content.value_or(0));
  LS_ASSIGN_OR_RAISE_CTX(avro_value_t path, RequiredChild(df, l.file_path), "field 'file_path'");
  LS_ASSIGN_OR_RAISE_CTX(file.file_path, avro::ReadString(path), "field 'file_path'");
  LS_ASSIGN_OR_RAISE_CTX(avro_value_t format, RequiredChild(df, l.file_format), "field 'file_format'");
  LS_ASSIGN_OR_RAISE_CTX(std::string format_name, avro::ReadString(format), "field 'file_format'");
  LS_ASSIGN_OR_RAISE_CTX(file.file_format, ParseFileFormat(format_name), "field 'file_format'");

  LS_ASSIGN_OR_RAISE_CTX(avro_value_t partition, RequiredChild(df, l.partition), "field 'partition'");
  const auto& types = partition_type_->fields();
  file.partition.reserve(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    LS_ASSIGN_OR_RAISE_CTX(auto value, OptionalChild(partition, l.partition_fields[i]), "partition field '{}'",
                           types[i].name);
    if (!value) {
      file.partition.push_back(Literal::Null());
      continue;
    }
    LS_ASSIGN_OR_RAISE_CTX(Literal literal, internal::ReadLiteral(*value, *types[i].type), "partition field '{}'",
                           types[i].name);
    file.partition.push_back(std::move(literal));
  }

  LS_ASSIGN_OR_RAISE_CTX(avro_value_t records, RequiredChild(df, l.record_count), "field 'record_count'");
  LS_ASSIGN_OR_RAISE_CTX(file.record_count, avro::ReadLong(records), "field 'record_count'");
  LS_ASSIGN_OR_RAISE_CTX(avro_value_t size, RequiredChild(df, l.file_size), "field 'file_size_in_bytes'");
  LS_ASSIGN_OR_RAISE_CTX(file.file_size_in_bytes, avro::ReadLong(size), "field 'file_size_in_bytes'");
  LS_RETURN_NOT_OK_CTX(ReadIntKeyedMap(df, l.column_sizes, &file.column_sizes), "field 'column_sizes'");
  LS_RETURN_NOT_OK_CTX(ReadIntKeyedMap(df, l.value_counts, &file.value_counts), "field 'value_counts'");
  LS_RETURN_NOT_OK_CTX(ReadIntKeyedMap(df, l.null_value_counts, &file.null_value_counts), "field 'null_value_counts'");
  LS_RETURN_NOT_OK_CTX(ReadIntKeyedMap(df, l.nan_value_counts, &file.nan_value_counts), "field 'nan_value_counts'");
  LS_RETURN_NOT_OK_CTX(ReadIntKeyedMap(df, l.lower_bounds, &file.lower_bounds), "field 'lower_bounds'");
  LS_RETURN_NOT_OK_CTX(ReadIntKeyedMap(df, l.upper_bounds, &file.upper_bounds), "field 'upper_bounds'");
  LS_ASSIGN_OR_RAISE_CTX(file.key_metadata, OptionalBytes(df, l.key_metadata), "field 'key_metadata'");
  LS_RETURN_NOT_OK_CTX(ReadList(df, l.split_offsets, &file.split_offsets), "field 'split_offsets'");
  LS_RETURN_NOT_OK_CTX(ReadList(df, l.equality_ids, &file.equality_ids), "field 'equality_ids'");
  LS_ASSIGN_OR_RAISE_CTX(file.sort_order_id, OptionalInt(df, l.sort_order_id), "field 'sort_order_id'");
  LS_ASSIGN_OR_RAISE_CTX(file.first_row_id, OptionalLong(df, l.first_row_id), "field 'first_row_id'");
  LS_ASSIGN_OR_RAISE_CTX(auto referenced, OptionalChild(df, l.referenced_data_file), "field 'referenced_data_file'");
  if (referenced) {
    LS_ASSIGN_OR_RAISE_CTX(file.referenced_data_file, avro::ReadString(*referenced), "field 'referenced_data_file'");
  }
  LS_ASSIGN_OR_RAISE_CTX(file.content_offset, OptionalLong(df, l.content_offset), "field 'content_offset'");
  LS_ASSIGN_OR_RAISE_CTX(file.content_size_in_bytes, OptionalLong(df, l.content_size), "field 'content_size_in_bytes'");

  RETURN_NOT_OK(Inherit(&entry, &file));
  entry.data_file = std::make_shared<const DataFile>(std::move(file));
  return entry;
}

Status ManifestReader::Inherit(ManifestEntry* entry, DataFile* file) {
  if (!entry->snapshot_id) entry->snapshot_id = manifest_.added_snapshot_id;
  const bool inherits = entry->status == ManifestEntryStatus::kAdded || manifest_.sequence_number == 0;
  for (auto [seq, name] : {std::pair{&entry->sequence_number, "sequence_number"},
                           std::pair{&entry->file_sequence_number, "file_sequence_number"}}) {
    if (*seq) continue;
    if (format_version_ == 1) {
      *seq = 0;  // v1 has no sequence numbers: everything is 0
    } else if (inherits) {
      *seq = manifest_.sequence_number;
    } else {
      return Corrupt("{} entry for {} has no {} (only ADDED entries inherit it)", StatusName(entry->status),
                     file->file_path, name);
    }
  }
  if (next_row_id_ && file->content == FileContent::kData && !file->first_row_id) {
    file->first_row_id = *next_row_id_;
    *next_row_id_ += file->record_count;
  }
  return Status::OK();
}

Result<std::optional<ManifestEntry>> ManifestReader::Next() {
  ARROW_ASSIGN_OR_RAISE(const avro_value_t* record, reader_->Next());
  if (record == nullptr) {
    ARROW_RETURN_NOT_OK(CheckCounts());
    return std::nullopt;
  }
  LS_ASSIGN_OR_RAISE_CTX(ManifestEntry entry, Decode(*record), "{}: entry {}", manifest_.manifest_path,
                         reader_->records_read() - 1);
  const int index = entry.status == ManifestEntryStatus::kAdded      ? 0
                     : entry.status == ManifestEntryStatus::kExisting ? 1
                                                                      : 2;
  counted_files_[index] += 1;
  counted_rows_[index] += entry.data_file->record_count;
  return entry;
}

Status ManifestReader::CheckCounts() {
  // A manifest whose entries decode but disagree with the counts its manifest list recorded when it
  // was written has been damaged since (a flipped bit inside a deflate block can still inflate, to
  // other entries). Serving it would apply deletes to nothing or resurrect rows; refuse instead.
  // v1 lists may leave counts out (counts_unknown): then there is nothing to compare.
  if (manifest_.counts_unknown || counts_checked_) return Status::OK();
  counts_checked_ = true;
  const int64_t listed_files[3] = {manifest_.added_files_count, manifest_.existing_files_count,
                                   manifest_.deleted_files_count};
  const int64_t listed_rows[3] = {manifest_.added_rows_count, manifest_.existing_rows_count,
                                  manifest_.deleted_rows_count};
  static constexpr const char* kNames[3] = {"added", "existing", "deleted"};
  for (int i = 0; i < 3; ++i) {
    if (counted_files_[i] != listed_files[i] || counted_rows_[i] != listed_rows[i]) {
      return Corrupt(
          "manifest {} disagrees with its manifest list entry: it holds {} {} file(s) with {} row(s), the list "
          "says {} file(s) with {} row(s)",
          manifest_.manifest_path, counted_files_[i], kNames[i], counted_rows_[i], listed_files[i], listed_rows[i]);
    }
  }
  return Status::OK();
}

Result<std::vector<ManifestEntry>> ReadManifest(std::string_view bytes, const ManifestFile& manifest,
                                                const TableMetadata* metadata) {
  ARROW_ASSIGN_OR_RAISE(auto reader, ManifestReader::Open(bytes, manifest, metadata));
  std::vector<ManifestEntry> out;
  while (true) {
    ARROW_ASSIGN_OR_RAISE(auto entry, reader->Next());
    if (!entry) break;
    out.push_back(std::move(*entry));
  }
  return out;
}

}  // namespace lakesync::iceberg
