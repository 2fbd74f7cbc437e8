#include "lakesync/iceberg/manifest/manifest_list.h"

#include <charconv>

#include "lakesync/formats/avro/avro_file_reader.h"
#include "lakesync/formats/avro/avro_file_writer.h"
#include "lakesync/formats/avro/avro_value.h"
#include "lakesync/iceberg/manifest/manifest_avro_internal.h"
#include "lakesync/iceberg/manifest/manifest_writer.h"
#include "lakesync/iceberg/model/table_metadata.h"

namespace lakesync::iceberg {

namespace lf = internal::list_field;
using avro::AvroNode;
using avro::AvroType;
using internal::OptionalChild;
using internal::OptionalLong;
using internal::RequiredChild;

namespace {

Status SetField(avro_value_t* record, const AvroNode& schema, const char* name, auto&& write) {
  const int index = schema.FindField(std::nullopt, name);
  ARROW_ASSIGN_OR_RAISE(avro_value_t field, avro::MutableField(record, static_cast<size_t>(index)));
  return write(&field);
}

Status SetOptional(avro_value_t* field, bool present, auto&& write) {
  if (!present) return avro::SetNullBranch(field);
  ARROW_ASSIGN_OR_RAISE(avro_value_t branch, avro::SetNonNullBranch(field));
  return write(&branch);
}

Status EncodeManifest(avro_value_t* record, const AvroNode& schema, const ManifestFile& m, int format_version) {
  auto long_field = [&](const char* name, int64_t v) {
    return SetField(record, schema, name, [&](avro_value_t* f) { return avro::WriteLong(f, v); });
  };
  auto int_field = [&](const char* name, int32_t v) {
    return SetField(record, schema, name, [&](avro_value_t* f) { return avro::WriteInt(f, v); });
  };
  RETURN_NOT_OK(SetField(record, schema, "manifest_path",
                         [&](avro_value_t* f) { return avro::WriteString(f, m.manifest_path); }));
  RETURN_NOT_OK(long_field("manifest_length", m.manifest_length));
  RETURN_NOT_OK(int_field("partition_spec_id", m.partition_spec_id));
  RETURN_NOT_OK(int_field("content", static_cast<int32_t>(m.content)));
  RETURN_NOT_OK(long_field("sequence_number", m.sequence_number));
  RETURN_NOT_OK(long_field("min_sequence_number", m.min_sequence_number));
  RETURN_NOT_OK(long_field("added_snapshot_id", m.added_snapshot_id));
  RETURN_NOT_OK(int_field("added_files_count", m.added_files_count));
  RETURN_NOT_OK(int_field("existing_files_count", m.existing_files_count));
  RETURN_NOT_OK(int_field("deleted_files_count", m.deleted_files_count));
  RETURN_NOT_OK(long_field("added_rows_count", m.added_rows_count));
  RETURN_NOT_OK(long_field("existing_rows_count", m.existing_rows_count));
  RETURN_NOT_OK(long_field("deleted_rows_count", m.deleted_rows_count));
  RETURN_NOT_OK(SetField(record, schema, "partitions", [&](avro_value_t* f) {
    return SetOptional(f, true, [&](avro_value_t* array) -> Status {
      for (const auto& s : m.partitions) {
        ARROW_ASSIGN_OR_RAISE(avro_value_t summary, avro::AppendElement(array));
        ARROW_ASSIGN_OR_RAISE(avro_value_t contains_null, avro::MutableField(&summary, 0));
        RETURN_NOT_OK(avro::WriteBool(&contains_null, s.contains_null));
        ARROW_ASSIGN_OR_RAISE(avro_value_t contains_nan, avro::MutableField(&summary, 1));
        RETURN_NOT_OK(SetOptional(&contains_nan, s.contains_nan.has_value(),
                                  [&](avro_value_t* b) { return avro::WriteBool(b, s.contains_nan.value_or(false)); }));
        ARROW_ASSIGN_OR_RAISE(avro_value_t lower, avro::MutableField(&summary, 2));
        RETURN_NOT_OK(SetOptional(&lower, s.lower_bound.has_value(),
                                  [&](avro_value_t* b) { return avro::WriteBytes(b, s.lower_bound.value_or("")); }));
        ARROW_ASSIGN_OR_RAISE(avro_value_t upper, avro::MutableField(&summary, 3));
        RETURN_NOT_OK(SetOptional(&upper, s.upper_bound.has_value(),
                                  [&](avro_value_t* b) { return avro::WriteBytes(b, s.upper_bound.value_or("")); }));
      }
      return Status::OK();
    });
  }));
  RETURN_NOT_OK(SetField(record, schema, "key_metadata", [&](avro_value_t* f) {
    return SetOptional(f, m.key_metadata.has_value(),
                       [&](avro_value_t* b) { return avro::WriteBytes(b, m.key_metadata.value_or("")); });
  }));
  if (format_version >= 3) {
    RETURN_NOT_OK(SetField(record, schema, "first_row_id", [&](avro_value_t* f) {
      return SetOptional(f, m.first_row_id.has_value(),
                         [&](avro_value_t* b) { return avro::WriteLong(b, m.first_row_id.value_or(0)); });
    }));
  }
  return Status::OK();
}

Result<std::optional<int64_t>> MetadataLong(const avro::AvroFileReader& reader, const std::string& key) {
  auto text = reader.FindMetadata(key);
  if (!text || *text == "null") return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size()) {
    return Corrupt("{}: metadata '{}' is not an integer: '{}'", reader.name(), key, *text);
  }
  return v;
}

struct ListLayout {
  int path, length, spec_id, content, sequence_number, min_sequence_number, snapshot_id;
  int added_files, existing_files, deleted_files, added_rows, existing_rows, deleted_rows;
  int partitions, key_metadata, first_row_id;
  int contains_null = -1, contains_nan = -1, lower = -1, upper = -1;
};

Result<ManifestFile> DecodeManifest(const avro_value_t& record, const ListLayout& l) {
  ManifestFile m;
  LS_ASSIGN_OR_RAISE_CTX(avro_value_t path, RequiredChild(record, l.path), "field 'manifest_path'");
  LS_ASSIGN_OR_RAISE_CTX(m.manifest_path, avro::ReadString(path), "field 'manifest_path'");
  auto required_long = [&](int index, const char* name, int64_t* out) -> Status {
    LS_ASSIGN_OR_RAISE_CTX(avro_value_t v, RequiredChild(record, index), "field '{}'", name);
    LS_ASSIGN_OR_RAISE_CTX(*out, avro::ReadLong(v), "field '{}'", name);
    return Status::OK();
  };
  RETURN_NOT_OK(required_long(l.length, "manifest_length", &m.manifest_length));
  int64_t spec_id = 0;
  RETURN_NOT_OK(required_long(l.spec_id, "partition_spec_id", &spec_id));
  if (spec_id < INT32_MIN || spec_id > INT32_MAX) return Corrupt("field 'partition_spec_id' is out of range");
  m.partition_spec_id = static_cast<int32_t>(spec_id);
  RETURN_NOT_OK(required_long(l.snapshot_id, "added_snapshot_id", &m.added_snapshot_id));
  LS_ASSIGN_OR_RAISE_CTX(auto content, OptionalLong(record, l.content), "field 'content'");
  if (content && *content != 0 && *content != 1) return Corrupt("field 'content' has the invalid value {}", *content);
  m.content = static_cast<ManifestContent>(content.value_or(0));
  LS_ASSIGN_OR_RAISE_CTX(auto seq, OptionalLong(record, l.sequence_number), "field 'sequence_number'");
  m.sequence_number = seq.value_or(0);
  LS_ASSIGN_OR_RAISE_CTX(auto min_seq, OptionalLong(record, l.min_sequence_number), "field 'min_sequence_number'");
  m.min_sequence_number = min_seq.value_or(0);
  auto count = [&](int index, const char* name, int32_t* out) -> Status {
    LS_ASSIGN_OR_RAISE_CTX(auto v, OptionalLong(record, index), "field '{}'", name);
    if (!v) {
      m.counts_unknown = true;
      return Status::OK();
    }
    if (*v < 0 || *v > INT32_MAX) return Corrupt("field '{}' has the invalid value {}", name, *v);
    *out = static_cast<int32_t>(*v);
    return Status::OK();
  };
  RETURN_NOT_OK(count(l.added_files, "added_files_count", &m.added_files_count));
  RETURN_NOT_OK(count(l.existing_files, "existing_files_count", &m.existing_files_count));
  RETURN_NOT_OK(count(l.deleted_files, "deleted_files_count", &m.deleted_files_count));
  auto rows = [&](int index, const char* name, int64_t* out) -> Status {
    LS_ASSIGN_OR_RAISE_CTX(auto v, OptionalLong(record, index), "field '{}'", name);
    if (!v) {
      m.counts_unknown = true;
      return Status::OK();
    }
    *out = *v;
    return Status::OK();
  };
  RETURN_NOT_OK(rows(l.added_rows, "added_rows_count", &m.added_rows_count));
  RETURN_NOT_OK(rows(l.existing_rows, "existing_rows_count", &m.existing_rows_count));
  RETURN_NOT_OK(rows(l.deleted_rows, "deleted_rows_count", &m.deleted_rows_count));

  LS_ASSIGN_OR_RAISE_CTX(auto partitions, OptionalChild(record, l.partitions), "field 'partitions'");
  if (partitions) {
    LS_ASSIGN_OR_RAISE_CTX(size_t n, avro::ChildCount(*partitions), "field 'partitions'");
    for (size_t i = 0; i < n; ++i) {
      PartitionFieldSummary s;
      auto decode = [&]() -> Status {
        ARROW_ASSIGN_OR_RAISE(avro_value_t element, avro::ChildAt(*partitions, i));
        ARROW_ASSIGN_OR_RAISE(auto summary, avro::NonNullValue(element));
        if (!summary) return Corrupt("summary is null");
        ARROW_ASSIGN_OR_RAISE(auto contains_null, OptionalChild(*summary, l.contains_null));
        if (contains_null) {
          ARROW_ASSIGN_OR_RAISE(s.contains_null, avro::ReadBool(*contains_null));
        }
        ARROW_ASSIGN_OR_RAISE(auto contains_nan, OptionalChild(*summary, l.contains_nan));
        if (contains_nan) {
          ARROW_ASSIGN_OR_RAISE(s.contains_nan, avro::ReadBool(*contains_nan));
        }
        ARROW_ASSIGN_OR_RAISE(auto lower, OptionalChild(*summary, l.lower));
        if (lower) {
          ARROW_ASSIGN_OR_RAISE(s.lower_bound, avro::ReadBytes(*lower));
        }
        ARROW_ASSIGN_OR_RAISE(auto upper, OptionalChild(*summary, l.upper));
        if (upper) {
          ARROW_ASSIGN_OR_RAISE(s.upper_bound, avro::ReadBytes(*upper));
        }
        return Status::OK();
      };
      LS_RETURN_NOT_OK_CTX(decode(), "partition summary {}", i);
      m.partitions.push_back(std::move(s));
    }
  }
  LS_ASSIGN_OR_RAISE_CTX(auto key_metadata, OptionalChild(record, l.key_metadata), "field 'key_metadata'");
  if (key_metadata) {
    LS_ASSIGN_OR_RAISE_CTX(m.key_metadata, avro::ReadBytes(*key_metadata), "field 'key_metadata'");
  }
  LS_ASSIGN_OR_RAISE_CTX(m.first_row_id, OptionalLong(record, l.first_row_id), "field 'first_row_id'");
  return m;
}

}  // namespace

Result<WrittenManifestList> WriteManifestList(const ManifestListWriteOptions& options,
                                              std::vector<ManifestFile> manifests) {
  const std::string& where = options.location;
  const int v = options.format_version;
  if (v != 2 && v != 3) {
    return InvalidArgument("writing manifest list {}: format version {} is not supported (2 or 3)", where, v);
  }
  if (v >= 3 && !options.first_row_id) {
    return InvalidArgument("writing manifest list {}: v3 needs the snapshot's first-row-id", where);
  }

  WrittenManifestList out;
  int64_t next_row_id = options.first_row_id.value_or(0);
  for (ManifestFile& m : manifests) {
    auto bad = [&](std::string_view why) {
      return InvalidArgument("writing manifest list {}: manifest {}: {}", where, m.manifest_path, why);
    };
    if (m.counts_unknown) return bad("its file counts are unknown");
    if (m.added_snapshot_id == kUnassignedSnapshotId) m.added_snapshot_id = options.snapshot_id;
    if (m.sequence_number == kUnassignedSequenceNumber) {
      if (m.added_snapshot_id != options.snapshot_id) {
        return bad(fmt::format("an unassigned sequence number belongs to snapshot {}, not {}", m.added_snapshot_id,
                               options.snapshot_id));
      }
      m.sequence_number = options.sequence_number;
    }
    if (m.min_sequence_number == kUnassignedSequenceNumber) {
      if (m.added_snapshot_id != options.snapshot_id) {
        return bad(fmt::format("an unassigned minimum sequence number belongs to snapshot {}, not {}",
                               m.added_snapshot_id, options.snapshot_id));
      }
      m.min_sequence_number = options.sequence_number;
    }
    if (m.added_files_count < 0 || m.existing_files_count < 0 || m.deleted_files_count < 0 || m.added_rows_count < 0 ||
        m.existing_rows_count < 0 || m.deleted_rows_count < 0) {
      return bad("negative file or row counts");
    }
    if (m.first_row_id && (v < 3 || m.content != ManifestContent::kData)) {
      return bad("only v3 data manifests have a first_row_id");
    }
    if (v >= 3 && m.content == ManifestContent::kData && !m.first_row_id) {
      m.first_row_id = next_row_id;
      next_row_id += m.added_rows_count + m.existing_rows_count;
    }
  }
  out.added_rows = next_row_id - options.first_row_id.value_or(0);

  LS_ASSIGN_OR_RAISE_CTX(std::string codec_name, ManifestCodecName(options.codec), "writing manifest list {}", where);
  ARROW_ASSIGN_OR_RAISE(avro::AvroCodec codec, avro::ParseAvroCodec(codec_name));
  ARROW_ASSIGN_OR_RAISE(std::string schema_json, internal::ManifestListSchemaJson(v));
  std::vector<std::pair<std::string, std::string>> metadata = {
      {"snapshot-id", std::to_string(options.snapshot_id)},
      {"parent-snapshot-id", options.parent_snapshot_id ? std::to_string(*options.parent_snapshot_id) : "null"},
      {"sequence-number", std::to_string(options.sequence_number)},
      {"format-version", std::to_string(v)},
  };
  if (v >= 3) metadata.emplace_back("first-row-id", std::to_string(*options.first_row_id));
  avro::AvroFileWriterOptions avro_options;
  avro_options.codec = codec;
  avro_options.name = where;
  ARROW_ASSIGN_OR_RAISE(auto writer,
                        avro::AvroFileWriter::Make(std::move(schema_json), std::move(metadata), avro_options));
  for (const ManifestFile& m : manifests) {
    avro_value_t* record = writer->NewRecord();
    LS_RETURN_NOT_OK_CTX(EncodeManifest(record, writer->schema(), m, v), "writing manifest list {}: manifest {}", where,
                         m.manifest_path);
    LS_RETURN_NOT_OK_CTX(writer->Append(), "writing manifest list {}", where);
  }
  ARROW_ASSIGN_OR_RAISE(out.bytes, writer->Finish());
  out.manifests = std::move(manifests);
  return out;
}

Result<ManifestList> ReadManifestList(std::string_view bytes, std::string_view location) {
  const std::string name(location);
  ARROW_ASSIGN_OR_RAISE(auto reader, avro::AvroFileReader::Open(bytes, name));
  const AvroNode& schema = reader->schema();
  if (schema.type != AvroType::kRecord) return Corrupt("{}: manifest list records are not Avro records", name);
  ListLayout l;
  l.path = schema.FindField(lf::kManifestPath, "manifest_path");
  l.length = schema.FindField(lf::kManifestLength, "manifest_length");
  l.spec_id = schema.FindField(lf::kPartitionSpecId, "partition_spec_id");
  l.content = schema.FindField(lf::kContent, "content");
  l.sequence_number = schema.FindField(lf::kSequenceNumber, "sequence_number");
  l.min_sequence_number = schema.FindField(lf::kMinSequenceNumber, "min_sequence_number");
  l.snapshot_id = schema.FindField(lf::kAddedSnapshotId, "added_snapshot_id");
  l.added_files = schema.FindField(lf::kAddedFilesCount, "added_files_count");
  l.existing_files = schema.FindField(lf::kExistingFilesCount, "existing_files_count");
  l.deleted_files = schema.FindField(lf::kDeletedFilesCount, "deleted_files_count");
  l.added_rows = schema.FindField(lf::kAddedRowsCount, "added_rows_count");
  l.existing_rows = schema.FindField(lf::kExistingRowsCount, "existing_rows_count");
  l.deleted_rows = schema.FindField(lf::kDeletedRowsCount, "deleted_rows_count");
  l.partitions = schema.FindField(lf::kPartitions, "partitions");
  l.key_metadata = schema.FindField(lf::kKeyMetadata, "key_metadata");
  l.first_row_id = schema.FindField(lf::kFirstRowId, "first_row_id");
  for (auto [index, field] : {std::pair{l.path, "manifest_path"}, {l.length, "manifest_length"},
                              {l.spec_id, "partition_spec_id"}, {l.snapshot_id, "added_snapshot_id"}}) {
    if (index < 0) return Corrupt("{}: manifest list has no {} field", name, field);
  }
  if (l.partitions >= 0) {
    const AvroNode& array = schema.fields[static_cast<size_t>(l.partitions)].type->NonNull();
    if (array.type == AvroType::kArray && array.items->NonNull().type == AvroType::kRecord) {
      const AvroNode& summary = array.items->NonNull();
      l.contains_null = summary.FindField(lf::kContainsNull, "contains_null");
      l.contains_nan = summary.FindField(lf::kContainsNan, "contains_nan");
      l.lower = summary.FindField(lf::kLowerBound, "lower_bound");
      l.upper = summary.FindField(lf::kUpperBound, "upper_bound");
    } else {
      return Corrupt("{}: the partitions field is not an array of records", name);
    }
  }

  ManifestList out;
  auto version = MetadataLong(*reader, "format-version");
  if (!version.ok()) return version.status();
  if (*version) {
    if (**version < 1 || **version > kMaxFormatVersion) {
      return Unsupported("{}: manifest list format version {} is not supported", name, **version);
    }
    out.format_version = static_cast<int>(**version);
  } else {
    out.format_version = l.sequence_number >= 0 ? 2 : 1;
  }
  ARROW_ASSIGN_OR_RAISE(out.snapshot_id, MetadataLong(*reader, "snapshot-id"));
  ARROW_ASSIGN_OR_RAISE(out.parent_snapshot_id, MetadataLong(*reader, "parent-snapshot-id"));
  ARROW_ASSIGN_OR_RAISE(out.sequence_number, MetadataLong(*reader, "sequence-number"));
  ARROW_ASSIGN_OR_RAISE(out.first_row_id, MetadataLong(*reader, "first-row-id"));

  while (true) {
    ARROW_ASSIGN_OR_RAISE(const avro_value_t* record, reader->Next());
    if (record == nullptr) break;
    LS_ASSIGN_OR_RAISE_CTX(ManifestFile m, DecodeManifest(*record, l), "{}: manifest list entry {}", name,
                           reader->records_read() - 1);
    out.manifests.push_back(std::move(m));
  }
  return out;
}

}  // namespace lakesync::iceberg
