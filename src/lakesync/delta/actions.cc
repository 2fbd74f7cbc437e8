#include "lakesync/delta/actions.h"

#include <cctype>

namespace lakesync::delta {
namespace {

using nlohmann::json;

// A present, non-null member, or nullptr. Checkpoint rows converted to JSON carry nulls for absent
// fields, so null and absent mean the same thing everywhere here.
const json* Member(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<std::string> RequiredString(const json& obj, const char* key, const char* action, const std::string& where) {
  const json* v = Member(obj, key);
  if (v == nullptr || !v->is_string()) {
    return Corrupt("{}: '{}' action has no string field '{}'", where, action, key);
  }
  return v->get<std::string>();
}

Result<std::optional<int64_t>> OptionalInt(const json& obj, const char* key, const char* action,
                                           const std::string& where) {
  const json* v = Member(obj, key);
  if (v == nullptr) return std::optional<int64_t>();
  if (v->is_number_integer()) return std::optional<int64_t>(v->get<int64_t>());
  // Some writers store numbers as strings in free-form places; accept digits only.
  if (v->is_string()) {
    try {
      size_t used = 0;
      int64_t x = std::stoll(v->get<std::string>(), &used);
      if (used == v->get<std::string>().size()) return std::optional<int64_t>(x);
    } catch (...) {
    }
  }
  return Corrupt("{}: '{}' action field '{}' is not an integer", where, action, key);
}

Result<int64_t> RequiredInt(const json& obj, const char* key, const char* action, const std::string& where) {
  ARROW_ASSIGN_OR_RAISE(auto v, OptionalInt(obj, key, action, where));
  if (!v) return Corrupt("{}: '{}' action has no field '{}'", where, action, key);
  return *v;
}

Result<std::optional<std::vector<std::string>>> OptionalStrings(const json& obj, const char* key,
                                                                const std::string& where) {
  const json* v = Member(obj, key);
  if (v == nullptr) return std::optional<std::vector<std::string>>();
  if (!v->is_array()) return Corrupt("{}: field '{}' is not a list", where, key);
  std::vector<std::string> out;
  for (const auto& e : *v) {
    if (!e.is_string()) return Corrupt("{}: field '{}' holds a non-string", where, key);
    out.push_back(e.get<std::string>());
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

Result<DeletionVectorDescriptor> ParseDv(const json& dv, const std::string& where) {
  DeletionVectorDescriptor d;
  ARROW_ASSIGN_OR_RAISE(d.storage_type, RequiredString(dv, "storageType", "deletionVector", where));
  ARROW_ASSIGN_OR_RAISE(d.path_or_inline_dv, RequiredString(dv, "pathOrInlineDv", "deletionVector", where));
  ARROW_ASSIGN_OR_RAISE(auto offset, OptionalInt(dv, "offset", "deletionVector", where));
  if (offset) d.offset = static_cast<int32_t>(*offset);
  ARROW_ASSIGN_OR_RAISE(auto size, RequiredInt(dv, "sizeInBytes", "deletionVector", where));
  d.size_in_bytes = static_cast<int32_t>(size);
  ARROW_ASSIGN_OR_RAISE(d.cardinality, RequiredInt(dv, "cardinality", "deletionVector", where));
  if (d.storage_type != "u" && d.storage_type != "i" && d.storage_type != "p") {
    return Corrupt("{}: deletion vector has unknown storageType '{}'", where, d.storage_type);
  }
  return d;
}

Result<FileAction> ParseFile(const json& obj, FileAction::Kind kind, const char* name, const std::string& where) {
  if (!obj.is_object()) return Corrupt("{}: '{}' action is not an object", where, name);
  FileAction f;
  f.kind = kind;
  ARROW_ASSIGN_OR_RAISE(f.path, RequiredString(obj, "path", name, where));
  if (const json* pv = Member(obj, "partitionValues")) {
    if (!pv->is_object()) return Corrupt("{}: '{}' partitionValues is not an object", where, name);
    std::map<std::string, std::optional<std::string>> values;
    for (auto it = pv->begin(); it != pv->end(); ++it) {
      if (it.value().is_null()) {
        values[it.key()] = std::nullopt;
      } else if (it.value().is_string()) {
        values[it.key()] = it.value().get<std::string>();
      } else {
        values[it.key()] = it.value().dump();
      }
    }
    f.partition_values = std::move(values);
  } else if (kind != FileAction::Kind::kRemove) {
    return Corrupt("{}: '{}' action for {} has no partitionValues", where, name, f.path);
  }
  ARROW_ASSIGN_OR_RAISE(f.size, OptionalInt(obj, "size", name, where));
  ARROW_ASSIGN_OR_RAISE(auto mtime, OptionalInt(obj, "modificationTime", name, where));
  f.modification_time = mtime.value_or(0);
  if (const json* dc = Member(obj, "dataChange")) {
    if (!dc->is_boolean()) return Corrupt("{}: '{}' dataChange is not a boolean", where, name);
    f.data_change = dc->get<bool>();
  } else if (kind == FileAction::Kind::kCdc) {
    f.data_change = false;
  }
  if (const json* st = Member(obj, "stats"); st && st->is_string()) f.stats = st->get<std::string>();
  if (const json* dv = Member(obj, "deletionVector")) {
    LS_ASSIGN_OR_RAISE_CTX(f.deletion_vector, ParseDv(*dv, where), "'{}' action for {}", name, f.path);
  }
  return f;
}

}  // namespace

std::string DeletionVectorDescriptor::UniqueId() const {
  std::string id = storage_type + path_or_inline_dv;
  if (offset) id += "@" + std::to_string(*offset);
  return id;
}

std::string FileAction::Key() const {
  return deletion_vector ? path + '\0' + deletion_vector->UniqueId() : path;
}

std::optional<int64_t> FileAction::NumRecords() const {
  if (!stats) return std::nullopt;
  auto parsed = json::parse(*stats, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  auto it = parsed.find("numRecords");
  if (it == parsed.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

Result<Action> ParseAction(const json& obj, const std::string& where) {
  Action a;
  if (!obj.is_object()) return Corrupt("{}: an action is not a JSON object", where);
  if (const json* p = Member(obj, "protocol")) {
    Protocol pr;
    ARROW_ASSIGN_OR_RAISE(auto r, RequiredInt(*p, "minReaderVersion", "protocol", where));
    ARROW_ASSIGN_OR_RAISE(auto w, RequiredInt(*p, "minWriterVersion", "protocol", where));
    pr.min_reader_version = static_cast<int32_t>(r);
    pr.min_writer_version = static_cast<int32_t>(w);
    ARROW_ASSIGN_OR_RAISE(pr.reader_features, OptionalStrings(*p, "readerFeatures", where));
    ARROW_ASSIGN_OR_RAISE(pr.writer_features, OptionalStrings(*p, "writerFeatures", where));
    a.protocol = std::move(pr);
  } else if (const json* m = Member(obj, "metaData")) {
    Metadata md;
    ARROW_ASSIGN_OR_RAISE(md.id, RequiredString(*m, "id", "metaData", where));
    ARROW_ASSIGN_OR_RAISE(md.schema_string, RequiredString(*m, "schemaString", "metaData", where));
    ARROW_ASSIGN_OR_RAISE(auto pcs, OptionalStrings(*m, "partitionColumns", where));
    if (pcs) md.partition_columns = std::move(*pcs);
    if (const json* conf = Member(*m, "configuration")) {
      if (!conf->is_object()) return Corrupt("{}: metaData configuration is not an object", where);
      for (auto it = conf->begin(); it != conf->end(); ++it) {
        if (it.value().is_string()) md.configuration[it.key()] = it.value().get<std::string>();
      }
    }
    ARROW_ASSIGN_OR_RAISE(md.created_time, OptionalInt(*m, "createdTime", "metaData", where));
    if (const json* n = Member(*m, "name"); n && n->is_string()) md.name = n->get<std::string>();
    if (const json* d = Member(*m, "description"); d && d->is_string()) md.description = d->get<std::string>();
    if (const json* fmt = Member(*m, "format"); fmt && fmt->is_object()) {
      if (const json* p = Member(*fmt, "provider"); p && p->is_string()) md.format_provider = p->get<std::string>();
      if (const json* o = Member(*fmt, "options"); o && o->is_object()) {
        for (auto it = o->begin(); it != o->end(); ++it) {
          if (it.value().is_string()) md.format_options[it.key()] = it.value().get<std::string>();
        }
      }
    }
    a.metadata = std::move(md);
  } else if (const json* add = Member(obj, "add")) {
    ARROW_ASSIGN_OR_RAISE(a.file, ParseFile(*add, FileAction::Kind::kAdd, "add", where));
  } else if (const json* rm = Member(obj, "remove")) {
    ARROW_ASSIGN_OR_RAISE(a.file, ParseFile(*rm, FileAction::Kind::kRemove, "remove", where));
  } else if (const json* cdc = Member(obj, "cdc")) {
    ARROW_ASSIGN_OR_RAISE(a.file, ParseFile(*cdc, FileAction::Kind::kCdc, "cdc", where));
  } else if (const json* ci = Member(obj, "commitInfo")) {
    CommitInfo info;
    if (ci->is_object()) {
      if (auto v = OptionalInt(*ci, "inCommitTimestamp", "commitInfo", where); v.ok()) info.in_commit_timestamp = *v;
      if (auto v = OptionalInt(*ci, "timestamp", "commitInfo", where); v.ok()) info.timestamp = *v;
      if (const json* op = Member(*ci, "operation"); op && op->is_string()) info.operation = op->get<std::string>();
      if (const json* om = Member(*ci, "operationMetrics"); om && om->is_object()) {
        for (auto it = om->begin(); it != om->end(); ++it) {
          info.operation_metrics[it.key()] = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
        }
      }
    }
    a.commit_info = std::move(info);
  } else if (const json* sc = Member(obj, "sidecar")) {
    Sidecar s;
    ARROW_ASSIGN_OR_RAISE(s.path, RequiredString(*sc, "path", "sidecar", where));
    ARROW_ASSIGN_OR_RAISE(auto size, OptionalInt(*sc, "sizeInBytes", "sidecar", where));
    s.size_in_bytes = size.value_or(-1);
    a.sidecar = std::move(s);
  } else if (Member(obj, "checkpointMetadata") != nullptr) {
    a.checkpoint_metadata = true;
  }
  return a;
}

Result<std::string> PercentDecode(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') {
      out.push_back(path[i]);
      continue;
    }
    if (i + 2 >= path.size() || hex(path[i + 1]) < 0 || hex(path[i + 2]) < 0) {
      return Corrupt("path '{}' has a malformed percent escape at position {}", path, i);
    }
    out.push_back(static_cast<char>(hex(path[i + 1]) * 16 + hex(path[i + 2])));
    i += 2;
  }
  return out;
}

bool IsHttpUrl(std::string_view path) {
  auto starts = [&](std::string_view prefix) {
    if (path.size() < prefix.size()) return false;
    for (size_t i = 0; i < prefix.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(path[i])) != prefix[i]) return false;
    }
    return true;
  };
  return starts("http://") || starts("https://");
}

json ProtocolToJson(const Protocol& protocol) {
  json out = {{"minReaderVersion", protocol.min_reader_version}, {"minWriterVersion", protocol.min_writer_version}};
  if (protocol.reader_features) out["readerFeatures"] = *protocol.reader_features;
  if (protocol.writer_features) out["writerFeatures"] = *protocol.writer_features;
  return out;
}

json MetadataToJson(const Metadata& metadata) {
  json out = {{"id", metadata.id},
              {"format", {{"provider", metadata.format_provider}, {"options", json(metadata.format_options)}}},
              {"schemaString", metadata.schema_string},
              {"partitionColumns", metadata.partition_columns},
              {"configuration", json(metadata.configuration)}};
  if (metadata.name) out["name"] = *metadata.name;
  if (metadata.description) out["description"] = *metadata.description;
  if (metadata.created_time) out["createdTime"] = *metadata.created_time;
  return out;
}

json DeletionVectorToJson(const DeletionVectorDescriptor& dv) {
  json out = {{"storageType", dv.storage_type},
              {"pathOrInlineDv", dv.path_or_inline_dv},
              {"sizeInBytes", dv.size_in_bytes},
              {"cardinality", dv.cardinality}};
  if (dv.offset) out["offset"] = *dv.offset;
  return out;
}

json FileActionToJson(const FileAction& file) {
  json out = {{"path", file.path}};
  if (file.partition_values) {
    json pv = json::object();
    for (const auto& [k, v] : *file.partition_values) pv[k] = v ? json(*v) : json(nullptr);
    out["partitionValues"] = std::move(pv);
  }
  if (file.size) out["size"] = *file.size;
  if (file.kind == FileAction::Kind::kAdd) out["modificationTime"] = file.modification_time;
  out["dataChange"] = file.data_change;
  if (file.stats) out["stats"] = *file.stats;
  if (file.deletion_vector) out["deletionVector"] = DeletionVectorToJson(*file.deletion_vector);
  return out;
}

const char* FileActionName(FileAction::Kind kind) {
  switch (kind) {
    case FileAction::Kind::kAdd: return "add";
    case FileAction::Kind::kRemove: return "remove";
    case FileAction::Kind::kCdc: return "cdc";
  }
  return "add";
}

}  // namespace lakesync::delta
