// manifest_probe: lakesync's manifest and manifest-list codecs from the command line, so that
// tests/interop/test_manifest_oracle.py can hold them against fastavro, pyiceberg and DuckDB.
//
//   manifest_probe write <request.json>          writes manifests and a manifest list, prints JSON
//   manifest_probe read-list <list.avro>         prints the manifest list as JSON
//   manifest_probe read <list.avro> [--metadata <metadata.json>]
//                                                prints the list and every manifest's entries
//
// Paths inside files may carry a file:// scheme; the probe strips it to open local files.
//
// Partition values travel in their storage form ("raw"): booleans, numbers for int/date/long/time/
// timestamps, numbers or "NaN"/"Infinity"/"-Infinity" for floats, strings, lower-case hex for
// binary/fixed/uuid, and the unscaled value as a decimal string for decimals. Byte strings (bounds,
// key metadata) are hex. The write request:
//   {"format_version": 2, "schema": {...}, "specs": [{"spec-id": 0, "fields": [...]}],
//    "snapshot_id": 1, "parent_snapshot_id": null, "sequence_number": 1, "first_row_id": null,
//    "codec": "gzip", "list_path": "...", "existing_manifests": [<manifest as read-list prints it>],
//    "manifests": [{"path": "...", "spec_id": 0, "content": "data", "codec": "gzip",
//                   "entries": [{"status": 1, "snapshot_id": null, "sequence_number": null,
//                                "file_sequence_number": null, "data_file": {...}}]}]}
// Errors print "error<TAB><kind><TAB><message>" to stderr and exit with 1; usage errors exit 2.
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "lakesync/iceberg/manifest/manifest_list.h"
#include "lakesync/iceberg/manifest/manifest_reader.h"
#include "lakesync/iceberg/manifest/manifest_writer.h"
#include "lakesync/iceberg/model/json_serde.h"

namespace {

using nlohmann::json;
using namespace lakesync;
using namespace lakesync::iceberg;

std::string LocalPath(const std::string& location) {
  const std::string scheme = "file://";
  return location.rfind(scheme, 0) == 0 ? location.substr(scheme.size()) : location;
}

Result<std::string> ReadFile(const std::string& location) {
  std::ifstream in(LocalPath(location), std::ios::binary);
  if (!in) return NotFound("cannot open {}", location);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Status WriteFile(const std::string& location, const std::string& bytes) {
  std::ofstream out(LocalPath(location), std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) return IOError("cannot write {}", location);
  return Status::OK();
}

std::string Hex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xF]);
  }
  return out;
}

Result<std::string> Unhex(const json& j) {
  if (!j.is_string() || j.get<std::string>().size() % 2 != 0) {
    return InvalidArgument("expected a hex string: {}", j.dump());
  }
  const std::string s = j.get<std::string>();
  std::string out;
  for (size_t i = 0; i < s.size(); i += 2) out.push_back(static_cast<char>(std::stoi(s.substr(i, 2), nullptr, 16)));
  return out;
}

json Optional(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }
json OptionalHex(const std::optional<std::string>& v) { return v ? json(Hex(*v)) : json(nullptr); }

json FloatJson(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

double JsonFloat(const json& j) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    return std::stod(s);
  }
  return j.get<double>();
}

json RawLiteral(const Literal& v) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
          return FloatJson(static_cast<double>(x));
        } else if constexpr (std::is_same_v<T, Bytes>) {
          return Hex(x.data);
        } else if constexpr (std::is_same_v<T, Decimal>) {
          return Int128ToString(x.unscaled);
        } else {
          return x;
        }
      },
      v.value());
}

Result<Literal> LiteralFromRaw(const Type& type, const json& j) {
  if (j.is_null()) return Literal::Null();
  switch (type.id()) {
    case TypeId::kBoolean: return Literal(j.get<bool>());
    case TypeId::kInt:
    case TypeId::kDate: return Literal(j.get<int32_t>());
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: return Literal(j.get<int64_t>());
    case TypeId::kFloat: return Literal(static_cast<float>(JsonFloat(j)));
    case TypeId::kDouble: return Literal(JsonFloat(j));
    case TypeId::kString: return Literal(j.get<std::string>());
    case TypeId::kUuid:
    case TypeId::kFixed:
    case TypeId::kBinary: {
      ARROW_ASSIGN_OR_RAISE(std::string bytes, Unhex(j));
      return Literal(Bytes{std::move(bytes)});
    }
    case TypeId::kDecimal: {
      const std::string text = j.is_string() ? j.get<std::string>() : j.dump();
      ARROW_ASSIGN_OR_RAISE(__int128 unscaled, ParseDecimal(text, 0));
      return Literal(Decimal{unscaled});
    }
    default: return InvalidArgument("no raw form for type {}", type.ToString());
  }
}

template <typename V>
json IntMap(const std::map<int32_t, V>& m) {
  json out = json::object();
  for (const auto& [k, v] : m) {
    if constexpr (std::is_same_v<V, std::string>) {
      out[std::to_string(k)] = Hex(v);
    } else {
      out[std::to_string(k)] = v;
    }
  }
  return out;
}

template <typename V>
Result<std::map<int32_t, V>> IntMapFromJson(const json& j) {
  std::map<int32_t, V> out;
  if (j.is_null()) return out;
  for (const auto& [k, v] : j.items()) {
    if constexpr (std::is_same_v<V, std::string>) {
      ARROW_ASSIGN_OR_RAISE(out[std::stoi(k)], Unhex(v));
    } else {
      out[std::stoi(k)] = v.template get<V>();
    }
  }
  return out;
}

json ManifestJson(const ManifestFile& m) {
  json partitions = json::array();
  for (const auto& s : m.partitions) {
    partitions.push_back({{"contains_null", s.contains_null},
                          {"contains_nan", s.contains_nan ? json(*s.contains_nan) : json(nullptr)},
                          {"lower_bound", OptionalHex(s.lower_bound)},
                          {"upper_bound", OptionalHex(s.upper_bound)}});
  }
  return {{"manifest_path", m.manifest_path},
          {"manifest_length", m.manifest_length},
          {"partition_spec_id", m.partition_spec_id},
          {"content", static_cast<int>(m.content)},
          {"sequence_number", m.sequence_number},
          {"min_sequence_number", m.min_sequence_number},
          {"added_snapshot_id", m.added_snapshot_id},
          {"added_files_count", m.added_files_count},
          {"existing_files_count", m.existing_files_count},
          {"deleted_files_count", m.deleted_files_count},
          {"added_rows_count", m.added_rows_count},
          {"existing_rows_count", m.existing_rows_count},
          {"deleted_rows_count", m.deleted_rows_count},
          {"partitions", partitions},
          {"key_metadata", OptionalHex(m.key_metadata)},
          {"first_row_id", Optional(m.first_row_id)},
          {"counts_unknown", m.counts_unknown}};
}

json EntryJson(const ManifestEntry& e) {
  const DataFile& f = *e.data_file;
  json partition = json::array();
  for (const auto& v : f.partition) partition.push_back(RawLiteral(v));
  json file = {{"content", static_cast<int>(f.content)},
               {"file_path", f.file_path},
               {"file_format", std::string(FileFormatName(f.file_format))},
               {"spec_id", f.spec_id},
               {"partition", partition},
               {"record_count", f.record_count},
               {"file_size_in_bytes", f.file_size_in_bytes},
               {"column_sizes", IntMap(f.column_sizes)},
               {"value_counts", IntMap(f.value_counts)},
               {"null_value_counts", IntMap(f.null_value_counts)},
               {"nan_value_counts", IntMap(f.nan_value_counts)},
               {"lower_bounds", IntMap(f.lower_bounds)},
               {"upper_bounds", IntMap(f.upper_bounds)},
               {"key_metadata", OptionalHex(f.key_metadata)},
               {"split_offsets", f.split_offsets},
               {"equality_ids", f.equality_ids},
               {"sort_order_id", f.sort_order_id ? json(*f.sort_order_id) : json(nullptr)},
               {"first_row_id", Optional(f.first_row_id)},
               {"referenced_data_file", f.referenced_data_file ? json(*f.referenced_data_file) : json(nullptr)},
               {"content_offset", Optional(f.content_offset)},
               {"content_size_in_bytes", Optional(f.content_size_in_bytes)}};
  return {{"status", static_cast<int>(e.status)},
          {"snapshot_id", Optional(e.snapshot_id)},
          {"sequence_number", Optional(e.sequence_number)},
          {"file_sequence_number", Optional(e.file_sequence_number)},
          {"data_file", file}};
}

std::optional<int64_t> OptLong(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<int64_t>();
}

Result<ManifestEntry> EntryFromJson(const json& j, const Type& partition_type) {
  ManifestEntry e;
  e.status = static_cast<ManifestEntryStatus>(j.value("status", 1));
  e.snapshot_id = OptLong(j, "snapshot_id");
  e.sequence_number = OptLong(j, "sequence_number");
  e.file_sequence_number = OptLong(j, "file_sequence_number");
  const json& d = j.at("data_file");
  auto f = std::make_shared<DataFile>();
  f->content = static_cast<FileContent>(d.value("content", 0));
  f->file_path = d.at("file_path").get<std::string>();
  ARROW_ASSIGN_OR_RAISE(f->file_format, ParseFileFormat(d.value("file_format", "PARQUET")));
  const json partition = d.value("partition", json::array());
  if (partition.size() != partition_type.fields().size()) {
    return InvalidArgument("{}: {} partition values for {} fields", f->file_path, partition.size(),
                           partition_type.fields().size());
  }
  for (size_t i = 0; i < partition.size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto v, LiteralFromRaw(*partition_type.fields()[i].type, partition[i]));
    f->partition.push_back(std::move(v));
  }
  f->record_count = d.at("record_count").get<int64_t>();
  f->file_size_in_bytes = d.at("file_size_in_bytes").get<int64_t>();
  ARROW_ASSIGN_OR_RAISE(f->column_sizes, IntMapFromJson<int64_t>(d.value("column_sizes", json())));
  ARROW_ASSIGN_OR_RAISE(f->value_counts, IntMapFromJson<int64_t>(d.value("value_counts", json())));
  ARROW_ASSIGN_OR_RAISE(f->null_value_counts, IntMapFromJson<int64_t>(d.value("null_value_counts", json())));
  ARROW_ASSIGN_OR_RAISE(f->nan_value_counts, IntMapFromJson<int64_t>(d.value("nan_value_counts", json())));
  ARROW_ASSIGN_OR_RAISE(f->lower_bounds, IntMapFromJson<std::string>(d.value("lower_bounds", json())));
  ARROW_ASSIGN_OR_RAISE(f->upper_bounds, IntMapFromJson<std::string>(d.value("upper_bounds", json())));
  if (d.contains("key_metadata") && !d["key_metadata"].is_null()) {
    ARROW_ASSIGN_OR_RAISE(f->key_metadata, Unhex(d["key_metadata"]));
  }
  auto present = [&](const char* key) { return d.contains(key) && !d[key].is_null(); };
  if (present("split_offsets")) f->split_offsets = d["split_offsets"].get<std::vector<int64_t>>();
  if (present("equality_ids")) f->equality_ids = d["equality_ids"].get<std::vector<int32_t>>();
  if (present("sort_order_id")) f->sort_order_id = d["sort_order_id"].get<int32_t>();
  f->first_row_id = OptLong(d, "first_row_id");
  if (d.contains("referenced_data_file") && !d["referenced_data_file"].is_null()) {
    f->referenced_data_file = d["referenced_data_file"].get<std::string>();
  }
  f->content_offset = OptLong(d, "content_offset");
  f->content_size_in_bytes = OptLong(d, "content_size_in_bytes");
  e.data_file = std::move(f);
  return e;
}

Result<ManifestFile> ManifestFromJson(const json& j) {
  ManifestFile m;
  m.manifest_path = j.at("manifest_path").get<std::string>();
  m.manifest_length = j.at("manifest_length").get<int64_t>();
  m.partition_spec_id = j.at("partition_spec_id").get<int32_t>();
  m.content = static_cast<ManifestContent>(j.value("content", 0));
  m.sequence_number = j.at("sequence_number").get<int64_t>();
  m.min_sequence_number = j.at("min_sequence_number").get<int64_t>();
  m.added_snapshot_id = j.at("added_snapshot_id").get<int64_t>();
  m.added_files_count = j.at("added_files_count").get<int32_t>();
  m.existing_files_count = j.at("existing_files_count").get<int32_t>();
  m.deleted_files_count = j.at("deleted_files_count").get<int32_t>();
  m.added_rows_count = j.at("added_rows_count").get<int64_t>();
  m.existing_rows_count = j.at("existing_rows_count").get<int64_t>();
  m.deleted_rows_count = j.at("deleted_rows_count").get<int64_t>();
  for (const auto& sj : j.value("partitions", json::array())) {
    PartitionFieldSummary s;
    s.contains_null = sj.at("contains_null").get<bool>();
    if (!sj.value("contains_nan", json()).is_null()) s.contains_nan = sj["contains_nan"].get<bool>();
    if (!sj.value("lower_bound", json()).is_null()) {
      ARROW_ASSIGN_OR_RAISE(s.lower_bound, Unhex(sj["lower_bound"]));
    }
    if (!sj.value("upper_bound", json()).is_null()) {
      ARROW_ASSIGN_OR_RAISE(s.upper_bound, Unhex(sj["upper_bound"]));
    }
    m.partitions.push_back(std::move(s));
  }
  if (!j.value("key_metadata", json()).is_null()) {
    ARROW_ASSIGN_OR_RAISE(m.key_metadata, Unhex(j["key_metadata"]));
  }
  m.first_row_id = OptLong(j, "first_row_id");
  return m;
}

Result<json> Write(const json& request) {
  const int version = request.value("format_version", 2);
  ARROW_ASSIGN_OR_RAISE(SchemaPtr schema, SchemaFromJson(request.at("schema")));
  std::map<int32_t, PartitionSpecPtr> specs;
  for (const auto& sj : request.value("specs", json::array())) {
    ARROW_ASSIGN_OR_RAISE(auto spec, PartitionSpecFromJson(sj));
    specs[spec->spec_id()] = spec;
  }
  const int64_t snapshot_id = request.at("snapshot_id").get<int64_t>();
  std::vector<ManifestFile> listed;
  // Manifests of earlier snapshots, listed again as they are (as read-list prints them).
  for (const auto& mj : request.value("existing_manifests", json::array())) {
    ARROW_ASSIGN_OR_RAISE(auto manifest, ManifestFromJson(mj));
    listed.push_back(std::move(manifest));
  }
  for (const auto& mj : request.at("manifests")) {
    ManifestWriterOptions options;
    options.format_version = version;
    options.schema = schema;
    const int32_t spec_id = mj.value("spec_id", 0);
    options.spec = specs.count(spec_id) ? specs[spec_id] : PartitionSpec::Unpartitioned();
    options.content = mj.value("content", "data") == "deletes" ? ManifestContent::kDeletes : ManifestContent::kData;
    options.snapshot_id = snapshot_id;
    options.codec = mj.value("codec", request.value("codec", "gzip"));
    options.location = mj.at("path").get<std::string>();
    ARROW_ASSIGN_OR_RAISE(auto partition_type, options.spec->PartitionType(*schema));
    ARROW_ASSIGN_OR_RAISE(auto writer, ManifestWriter::Make(options));
    for (const auto& ej : mj.value("entries", json::array())) {
      ARROW_ASSIGN_OR_RAISE(auto entry, EntryFromJson(ej, *partition_type));
      RETURN_NOT_OK(writer->Add(entry));
    }
    ARROW_ASSIGN_OR_RAISE(std::string bytes, writer->Finish());
    RETURN_NOT_OK(WriteFile(options.location, bytes));
    ARROW_ASSIGN_OR_RAISE(auto manifest, writer->ToManifestFile(options.location, static_cast<int64_t>(bytes.size())));
    listed.push_back(std::move(manifest));
  }
  ManifestListWriteOptions list_options;
  list_options.format_version = version;
  list_options.snapshot_id = snapshot_id;
  list_options.parent_snapshot_id = OptLong(request, "parent_snapshot_id");
  list_options.sequence_number = request.value("sequence_number", int64_t{1});
  list_options.first_row_id = OptLong(request, "first_row_id");
  list_options.codec = request.value("codec", "gzip");
  list_options.location = request.at("list_path").get<std::string>();
  ARROW_ASSIGN_OR_RAISE(auto written, WriteManifestList(list_options, std::move(listed)));
  RETURN_NOT_OK(WriteFile(list_options.location, written.bytes));
  json manifests = json::array();
  for (const auto& m : written.manifests) manifests.push_back(ManifestJson(m));
  return json{{"manifests", manifests}, {"added_rows", written.added_rows}};
}

Result<ManifestList> ReadList(const std::string& path) {
  ARROW_ASSIGN_OR_RAISE(std::string bytes, ReadFile(path));
  return ReadManifestList(bytes, path);
}

json ListJson(const ManifestList& list) {
  json manifests = json::array();
  for (const auto& m : list.manifests) manifests.push_back(ManifestJson(m));
  return {{"format_version", list.format_version},
          {"snapshot_id", Optional(list.snapshot_id)},
          {"parent_snapshot_id", Optional(list.parent_snapshot_id)},
          {"sequence_number", Optional(list.sequence_number)},
          {"first_row_id", Optional(list.first_row_id)},
          {"manifests", manifests}};
}

Result<json> Read(const std::string& list_path, const std::string& metadata_path) {
  ARROW_ASSIGN_OR_RAISE(ManifestList list, ReadList(list_path));
  std::shared_ptr<TableMetadata> metadata;
  if (!metadata_path.empty()) {
    ARROW_ASSIGN_OR_RAISE(std::string text, ReadFile(metadata_path));
    ARROW_ASSIGN_OR_RAISE(metadata, ParseTableMetadata(text));
  }
  json manifests = json::array();
  for (const auto& m : list.manifests) {
    ARROW_ASSIGN_OR_RAISE(std::string bytes, ReadFile(m.manifest_path));
    ARROW_ASSIGN_OR_RAISE(auto reader, ManifestReader::Open(bytes, m, metadata.get()));
    json entries = json::array();
    while (true) {
      ARROW_ASSIGN_OR_RAISE(auto entry, reader->Next());
      if (!entry) break;
      entries.push_back(EntryJson(*entry));
    }
    json partition_type = json::array();
    for (const auto& f : reader->partition_type()->fields()) {
      partition_type.push_back({{"id", f.id}, {"name", f.name}, {"type", f.type->ToString()}});
    }
    manifests.push_back({{"manifest", ManifestJson(m)},
                         {"format_version", reader->format_version()},
                         {"partition_type", partition_type},
                         {"entries", entries}});
  }
  return json{{"list", ListJson(list)}, {"manifests", manifests}};
}

int Fail(const Status& st) {
  std::cerr << "error\t" << ErrorKindName(KindOf(st)) << "\t" << st.message() << "\n";
  return 1;
}

int Usage(const std::string& why) {
  std::cerr << "manifest_probe: " << why << "\n"
            << "usage: manifest_probe write <request.json> | read-list <list.avro>\n"
            << "       manifest_probe read <list.avro> [--metadata <metadata.json>]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage("missing arguments");
  const std::string op = argv[1];
  try {
    Result<json> out = InvalidArgument("no result");
    if (op == "write") {
      auto text = ReadFile(argv[2]);
      if (!text.ok()) return Fail(text.status());
      out = Write(json::parse(*text));
    } else if (op == "read-list") {
      auto list = ReadList(argv[2]);
      if (!list.ok()) return Fail(list.status());
      out = ListJson(*list);
    } else if (op == "read") {
      std::string metadata;
      if (argc == 5 && std::string(argv[3]) == "--metadata") {
        metadata = argv[4];
      } else if (argc != 3) {
        return Usage("unexpected arguments");
      }
      out = Read(argv[2], metadata);
    } else {
      return Usage("unknown op " + op);
    }
    if (!out.ok()) return Fail(out.status());
    std::cout << out->dump() << "\n";
    return 0;
  } catch (const std::exception& e) {
    return Usage(std::string("bad request: ") + e.what());
  }
}
