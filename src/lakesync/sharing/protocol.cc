#include "lakesync/sharing/protocol.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>

#include "lakesync/common/text.h"
#include "lakesync/delta/delta_table.h"
#include "lakesync/http/status_codes.h"

namespace lakesync::sharing {
namespace {

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    out.emplace_back(TrimSpace(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start)));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

Result<int64_t> ParseInt(std::string_view text, std::string_view name) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgument("{} is not a valid number: '{}'", name, text);
  }
  return v;
}

// Body fields: absent or null means not given; a present field of the wrong type is an error.
Result<std::optional<int64_t>> IntField(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<int64_t>();
  if (it->is_number_integer()) return std::optional<int64_t>(it->get<int64_t>());
  return InvalidArgument("field '{}' must be an integer, not {}", key, it->dump());
}
Result<std::optional<std::string>> StringField(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<std::string>();
  if (it->is_string()) return std::optional<std::string>(it->get<std::string>());
  return InvalidArgument("field '{}' must be a string, not {}", key, it->dump());
}
Result<bool> BoolField(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return false;
  if (it->is_boolean()) return it->get<bool>();
  return InvalidArgument("field '{}' must be a boolean, not {}", key, it->dump());
}

std::optional<int64_t> OptInt(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}
std::optional<std::string> OptString(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

}  // namespace

std::string_view ResponseFormatName(ResponseFormat format) {
  return format == ResponseFormat::kDelta ? "delta" : "parquet";
}

Result<bool> ParseBool(std::string_view text, std::string_view name) {
  const std::string v = AsciiLower(TrimSpace(text));
  if (v == "true") return true;
  if (v == "false") return false;
  return InvalidArgument("{} must be true or false, not '{}'", name, text);
}

Result<Capabilities> Capabilities::Parse(std::string_view header) {
  Capabilities caps;
  for (const std::string& part : Split(header, ';')) {
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    const std::string key = AsciiLower(TrimSpace(part.substr(0, eq)));
    const std::string value = eq == std::string::npos ? "" : part.substr(eq + 1);
    if (key == "responseformat") {
      for (const std::string& f : Split(value, ',')) {
        const std::string format = AsciiLower(f);
        if (format == "parquet") {
          caps.response_formats.push_back(ResponseFormat::kParquet);
        } else if (format == "delta") {
          caps.response_formats.push_back(ResponseFormat::kDelta);
        } else if (!format.empty()) {
          return InvalidArgument("{}: unknown responseformat '{}' (parquet or delta)", kCapabilitiesHeader, f);
        }
      }
    } else if (key == "readerfeatures") {
      for (const std::string& f : Split(value, ',')) {
        if (!f.empty()) caps.reader_features.insert(AsciiLower(f));
      }
    } else if (key == "includeendstreamaction") {
      ARROW_ASSIGN_OR_RAISE(caps.include_end_stream_action, ParseBool(value, "includeendstreamaction"));
    } else if (key == "asyncquery") {
      ARROW_ASSIGN_OR_RAISE(caps.async_query, ParseBool(value, "asyncquery"));
    }
  }
  return caps;
}

std::string Capabilities::ToHeader() const {
  std::vector<std::string> parts;
  if (!response_formats.empty()) {
    std::string v = "responseformat=";
    for (size_t i = 0; i < response_formats.size(); ++i) {
      if (i) v += ",";
      v += ResponseFormatName(response_formats[i]);
    }
    parts.push_back(v);
  }
  if (!reader_features.empty()) {
    std::string v = "readerfeatures=";
    bool first = true;
    for (const auto& f : reader_features) {
      if (!first) v += ",";
      v += f;
      first = false;
    }
    parts.push_back(v);
  }
  if (include_end_stream_action) parts.push_back("includeendstreamaction=true");
  if (async_query) parts.push_back("asyncquery=true");
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ";" : "") + parts[i];
  return out;
}

// ---- Errors ----

Json ErrorBody::ToJson() const { return Json{{"errorCode", error_code}, {"message", message}}; }

ErrorBody ErrorBody::FromText(std::string_view body) {
  auto j = Json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object()) {
    ErrorBody e;
    e.error_code = OptString(j, "errorCode").value_or("");
    e.message = OptString(j, "message").value_or("");
    if (!e.error_code.empty() || !e.message.empty()) return e;
  }
  return ErrorBody{kInternalError, std::string(body.substr(0, 500))};
}

const char* ErrorCodeFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNotFound: return kResourceDoesNotExist;
    case ErrorKind::kInvalidArgument: return kInvalidParameterValue;
    case ErrorKind::kUnsupported: return kUnsupportedOperation;
    case ErrorKind::kUnauthenticated: return kUnauthenticated;
    case ErrorKind::kForbidden: return kPermissionDenied;
    default: return kInternalError;
  }
}

int HttpStatusFor(ErrorKind kind) {
  // The protocol answers an unsupported table or operation with 400 (the client can do nothing but
  // change its request); everything else follows the one table in http/status_codes.
  if (kind == ErrorKind::kUnsupported) return 400;
  return http::StatusCodeFor(kind);
}

Status StatusFromAnswer(int http_status, std::string_view body, std::string_view what) {
  const ErrorBody e = ErrorBody::FromText(body);
  ErrorKind kind = http::ErrorKindForStatusCode(http_status);
  if (e.error_code == kUnsupportedOperation) kind = ErrorKind::kUnsupported;
  if (kind == ErrorKind::kUnknown) kind = ErrorKind::kIO;
  return MakeError(kind, fmt::format("{}: the sharing server answered {} {}: {}", what, http_status,
                                     e.error_code.empty() ? std::string("") : e.error_code, e.message));
}

// ---- Profiles ----

Result<Profile> Profile::FromJson(const Json& json) {
  if (!json.is_object()) return InvalidArgument("a profile is a JSON object");
  Profile p;
  ARROW_ASSIGN_OR_RAISE(auto version, IntField(json, "shareCredentialsVersion"));
  if (!version) return InvalidArgument("profile: shareCredentialsVersion is required");
  if (*version < 1 || *version > 2) {
    return Unsupported("profile: shareCredentialsVersion {} is not supported (1 or 2)", *version);
  }
  p.share_credentials_version = static_cast<int>(*version);
  ARROW_ASSIGN_OR_RAISE(auto type, StringField(json, "type"));
  if (type && *type != "bearer_token") {
    return Unsupported("profile: credential type '{}' is not supported; lakesync reads bearer_token profiles", *type);
  }
  ARROW_ASSIGN_OR_RAISE(auto endpoint, StringField(json, "endpoint"));
  if (!endpoint || endpoint->empty()) return InvalidArgument("profile: endpoint is required");
  p.endpoint = *endpoint;
  if (!p.endpoint.empty() && p.endpoint.back() == '/') p.endpoint.pop_back();
  ARROW_ASSIGN_OR_RAISE(auto token, StringField(json, "bearerToken"));
  if (!token || token->empty()) return InvalidArgument("profile: bearerToken is required");
  p.bearer_token = *token;
  ARROW_ASSIGN_OR_RAISE(auto expires, StringField(json, "expirationTime"));
  if (expires) {
    LS_ASSIGN_OR_RAISE_CTX(p.expiration_time_ms, delta::ParseTimestampMillis(*expires), "profile: expirationTime");
  }
  return p;
}

Result<Profile> Profile::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("profile file {} cannot be read", path);
  std::stringstream text;
  text << in.rdbuf();
  auto json = Json::parse(text.str(), nullptr, false);
  if (json.is_discarded()) return InvalidArgument("profile file {} is not JSON", path);
  LS_ASSIGN_OR_RAISE_CTX(auto profile, FromJson(json), "profile file {}", path);
  return profile;
}

Result<TableUrl> TableUrl::Parse(std::string_view url) {
  const size_t hash = url.rfind('#');
  if (hash == std::string_view::npos || hash == 0) {
    return InvalidArgument("'{}' is not a shared table URL: expected PROFILE#SHARE.SCHEMA.TABLE", url);
  }
  TableUrl t;
  t.profile = std::string(url.substr(0, hash));
  auto parts = Split(url.substr(hash + 1), '.');
  if (parts.size() != 3 || parts[0].empty() || parts[1].empty() || parts[2].empty()) {
    return InvalidArgument("'{}' is not a shared table URL: expected PROFILE#SHARE.SCHEMA.TABLE (three names)", url);
  }
  t.share = parts[0];
  t.schema = parts[1];
  t.table = parts[2];
  return t;
}

// ---- List items ----

Json ToJson(const ShareItem& item) {
  Json j{{"name", item.name}};
  if (item.id) j["id"] = *item.id;
  return j;
}
Json ToJson(const SchemaItem& item) { return Json{{"name", item.name}, {"share", item.share}}; }
Json ToJson(const TableItem& item) {
  Json j{{"name", item.name}, {"schema", item.schema}, {"share", item.share}};
  if (item.share_id) j["shareId"] = *item.share_id;
  if (item.id) j["id"] = *item.id;
  return j;
}

Result<ShareItem> ShareItemFromJson(const Json& json) {
  auto name = OptString(json, "name");
  if (!name) return Corrupt("a share item has no name: {}", json.dump());
  return ShareItem{*name, OptString(json, "id")};
}
Result<SchemaItem> SchemaItemFromJson(const Json& json) {
  auto name = OptString(json, "name");
  auto share = OptString(json, "share");
  if (!name || !share) return Corrupt("a schema item lacks name or share: {}", json.dump());
  return SchemaItem{*name, *share};
}
Result<TableItem> TableItemFromJson(const Json& json) {
  auto name = OptString(json, "name");
  auto schema = OptString(json, "schema");
  auto share = OptString(json, "share");
  if (!name || !schema || !share) return Corrupt("a table item lacks name, schema or share: {}", json.dump());
  return TableItem{*name, *schema, *share, OptString(json, "shareId"), OptString(json, "id")};
}

// ---- Requests ----

Json QueryRequest::ToJson() const {
  Json j = Json::object();
  if (!predicate_hints.empty()) j["predicateHints"] = predicate_hints;
  if (json_predicate_hints) j["jsonPredicateHints"] = *json_predicate_hints;
  if (limit_hint) j["limitHint"] = *limit_hint;
  if (version) j["version"] = *version;
  if (timestamp) j["timestamp"] = *timestamp;
  if (starting_version) j["startingVersion"] = *starting_version;
  if (ending_version) j["endingVersion"] = *ending_version;
  if (max_files) j["maxFiles"] = *max_files;
  if (page_token) j["pageToken"] = *page_token;
  if (include_refresh_token) j["includeRefreshToken"] = true;
  if (refresh_token) j["refreshToken"] = *refresh_token;
  if (include_historical_protocol) j["includeHistoricalProtocol"] = true;
  return j;
}

Result<QueryRequest> QueryRequest::FromJson(const Json& j) {
  if (!j.is_object()) return InvalidArgument("the query body must be a JSON object");
  QueryRequest r;
  if (auto it = j.find("predicateHints"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return InvalidArgument("field 'predicateHints' must be a list of strings");
    for (const auto& p : *it) {
      if (!p.is_string()) return InvalidArgument("field 'predicateHints' must be a list of strings");
      r.predicate_hints.push_back(p.get<std::string>());
    }
  }
  ARROW_ASSIGN_OR_RAISE(r.json_predicate_hints, StringField(j, "jsonPredicateHints"));
  ARROW_ASSIGN_OR_RAISE(r.limit_hint, IntField(j, "limitHint"));
  ARROW_ASSIGN_OR_RAISE(r.version, IntField(j, "version"));
  ARROW_ASSIGN_OR_RAISE(r.timestamp, StringField(j, "timestamp"));
  ARROW_ASSIGN_OR_RAISE(r.starting_version, IntField(j, "startingVersion"));
  ARROW_ASSIGN_OR_RAISE(r.ending_version, IntField(j, "endingVersion"));
  ARROW_ASSIGN_OR_RAISE(r.max_files, IntField(j, "maxFiles"));
  ARROW_ASSIGN_OR_RAISE(r.page_token, StringField(j, "pageToken"));
  ARROW_ASSIGN_OR_RAISE(r.include_refresh_token, BoolField(j, "includeRefreshToken"));
  ARROW_ASSIGN_OR_RAISE(r.refresh_token, StringField(j, "refreshToken"));
  ARROW_ASSIGN_OR_RAISE(r.include_historical_protocol, BoolField(j, "includeHistoricalProtocol"));
  return r;
}

std::multimap<std::string, std::string> ChangesRequest::ToQuery() const {
  std::multimap<std::string, std::string> q;
  if (starting_version) q.emplace("startingVersion", std::to_string(*starting_version));
  if (starting_timestamp) q.emplace("startingTimestamp", *starting_timestamp);
  if (ending_version) q.emplace("endingVersion", std::to_string(*ending_version));
  if (ending_timestamp) q.emplace("endingTimestamp", *ending_timestamp);
  if (include_historical_metadata) q.emplace("includeHistoricalMetadata", "true");
  if (max_files) q.emplace("maxFiles", std::to_string(*max_files));
  if (page_token) q.emplace("pageToken", *page_token);
  return q;
}

Result<ChangesRequest> ChangesRequest::FromQuery(const std::multimap<std::string, std::string>& params) {
  ChangesRequest r;
  for (const auto& [key, value] : params) {
    if (key == "startingVersion") {
      ARROW_ASSIGN_OR_RAISE(r.starting_version, ParseInt(value, "startingVersion"));
    } else if (key == "startingTimestamp") {
      r.starting_timestamp = value;
    } else if (key == "endingVersion") {
      ARROW_ASSIGN_OR_RAISE(r.ending_version, ParseInt(value, "endingVersion"));
    } else if (key == "endingTimestamp") {
      r.ending_timestamp = value;
    } else if (key == "includeHistoricalMetadata") {
      ARROW_ASSIGN_OR_RAISE(r.include_historical_metadata, ParseBool(value, "includeHistoricalMetadata"));
    } else if (key == "maxFiles") {
      ARROW_ASSIGN_OR_RAISE(r.max_files, ParseInt(value, "maxFiles"));
    } else if (key == "pageToken") {
      r.page_token = value;
    }
  }
  return r;
}

// ---- Lines ----

Json ToJson(const ProtocolLine& line, ResponseFormat format) {
  Json p;
  if (format == ResponseFormat::kDelta && line.delta_protocol) {
    p = {{"deltaProtocol", delta::ProtocolToJson(*line.delta_protocol)}};
  } else {
    p = {{"minReaderVersion", line.min_reader_version}};
  }
  if (line.version) p["version"] = *line.version;
  return Json{{"protocol", std::move(p)}};
}

Json ToJson(const MetadataLine& line, ResponseFormat format) {
  Json m;
  if (format == ResponseFormat::kDelta) {
    m = {{"deltaMetadata", delta::MetadataToJson(line.metadata)}};
  } else {
    const auto& md = line.metadata;
    m = {{"id", md.id},
         {"format", {{"provider", md.format_provider}}},
         {"schemaString", md.schema_string},
         {"partitionColumns", md.partition_columns},
         {"configuration", Json(md.configuration)}};
    if (md.name) m["name"] = *md.name;
    if (md.description) m["description"] = *md.description;
  }
  if (line.version) m["version"] = *line.version;
  if (line.size) m["size"] = *line.size;
  if (line.num_files) m["numFiles"] = *line.num_files;
  return Json{{"metaData", std::move(m)}};
}

Json ToJson(const FileLine& line, ResponseFormat format) {
  Json f;
  if (format == ResponseFormat::kDelta) {
    f = {{"id", line.id}};
    if (line.deletion_vector_file_id) f["deletionVectorFileId"] = *line.deletion_vector_file_id;
    if (line.version) f["version"] = *line.version;
    if (line.timestamp) f["timestamp"] = *line.timestamp;
    if (line.expiration_timestamp) f["expirationTimestamp"] = *line.expiration_timestamp;
    delta::FileAction action = line.action.value_or(ToFileAction(line));
    action.path = line.url;
    f["deltaSingleAction"] = {{delta::FileActionName(action.kind), delta::FileActionToJson(action)}};
    return Json{{"file", std::move(f)}};
  }
  // Parquet format: partition values are strings, and "" stands for null (PROTOCOL.md).
  Json pv = Json::object();
  for (const auto& [k, v] : line.partition_values) pv[k] = v.value_or("");
  f = {{"url", line.url}, {"id", line.id}, {"partitionValues", std::move(pv)}, {"size", line.size}};
  if (line.stats) f["stats"] = *line.stats;
  if (line.version) f["version"] = *line.version;
  if (line.timestamp) f["timestamp"] = *line.timestamp;
  if (line.expiration_timestamp) f["expirationTimestamp"] = *line.expiration_timestamp;
  const char* key = "file";
  switch (line.kind) {
    case FileLine::Kind::kFile: key = "file"; break;
    case FileLine::Kind::kAdd: key = "add"; break;
    case FileLine::Kind::kCdf: key = "cdf"; break;
    case FileLine::Kind::kRemove: key = "remove"; break;
  }
  return Json{{key, std::move(f)}};
}

Json ToJson(const EndStreamAction& line) {
  Json e = Json::object();
  if (line.refresh_token) e["refreshToken"] = *line.refresh_token;
  if (line.next_page_token) e["nextPageToken"] = *line.next_page_token;
  if (line.min_url_expiration_timestamp) e["minUrlExpirationTimestamp"] = *line.min_url_expiration_timestamp;
  if (line.error_message) e["errorMessage"] = *line.error_message;
  return Json{{"endStreamAction", std::move(e)}};
}

delta::FileAction ToFileAction(const FileLine& line) {
  if (line.action) {
    delta::FileAction a = *line.action;
    a.path = line.url;
    return a;
  }
  delta::FileAction a;
  switch (line.kind) {
    case FileLine::Kind::kFile:
    case FileLine::Kind::kAdd: a.kind = delta::FileAction::Kind::kAdd; break;
    case FileLine::Kind::kCdf: a.kind = delta::FileAction::Kind::kCdc; break;
    case FileLine::Kind::kRemove: a.kind = delta::FileAction::Kind::kRemove; break;
  }
  a.path = line.url;
  a.partition_values = line.partition_values;
  a.size = line.size;
  a.stats = line.stats;
  a.data_change = true;
  return a;
}

Result<Line> ParseLine(std::string_view text, ResponseFormat format, int line_number) {
  auto j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Corrupt("line {} of the answer is not a JSON object", line_number);
  const std::string where = fmt::format("line {} of the answer", line_number);
  Line line;
  if (auto it = j.find("protocol"); it != j.end() && it->is_object()) {
    ProtocolLine p;
    if (auto dp = it->find("deltaProtocol"); dp != it->end()) {
      ARROW_ASSIGN_OR_RAISE(auto action, delta::ParseAction(Json{{"protocol", *dp}}, where));
      p.delta_protocol = action.protocol;
      p.min_reader_version = p.delta_protocol->min_reader_version;
    } else {
      p.min_reader_version = static_cast<int32_t>(OptInt(*it, "minReaderVersion").value_or(1));
    }
    p.version = OptInt(*it, "version");
    line.protocol = std::move(p);
  } else if (auto it = j.find("metaData"); it != j.end() && it->is_object()) {
    MetadataLine m;
    const Json& body = it->contains("deltaMetadata") ? it->at("deltaMetadata") : *it;
    ARROW_ASSIGN_OR_RAISE(auto action, delta::ParseAction(Json{{"metaData", body}}, where));
    if (!action.metadata) return Corrupt("{}: metaData has no metadata", where);
    m.metadata = std::move(*action.metadata);
    m.version = OptInt(*it, "version");
    m.size = OptInt(*it, "size");
    m.num_files = OptInt(*it, "numFiles");
    line.metadata = std::move(m);
  } else if (auto it = j.find("endStreamAction"); it != j.end() && it->is_object()) {
    EndStreamAction e;
    e.refresh_token = OptString(*it, "refreshToken");
    e.next_page_token = OptString(*it, "nextPageToken");
    e.error_message = OptString(*it, "errorMessage");
    e.min_url_expiration_timestamp = OptInt(*it, "minUrlExpirationTimestamp");
    line.end_stream = std::move(e);
  } else {
    for (const auto& [key, kind] : {std::pair{"file", FileLine::Kind::kFile}, std::pair{"add", FileLine::Kind::kAdd},
                                    std::pair{"cdf", FileLine::Kind::kCdf}, std::pair{"remove", FileLine::Kind::kRemove}}) {
      auto it = j.find(key);
      if (it == j.end() || !it->is_object()) continue;
      FileLine f;
      f.kind = kind;
      f.id = OptString(*it, "id").value_or("");
      f.deletion_vector_file_id = OptString(*it, "deletionVectorFileId");
      f.version = OptInt(*it, "version");
      f.timestamp = OptInt(*it, "timestamp");
      f.expiration_timestamp = OptInt(*it, "expirationTimestamp");
      if (auto dsa = it->find("deltaSingleAction"); dsa != it->end()) {
        ARROW_ASSIGN_OR_RAISE(auto action, delta::ParseAction(*dsa, where));
        if (!action.file) return Corrupt("{}: deltaSingleAction holds no add, remove or cdc action", where);
        f.url = action.file->path;
        f.size = action.file->size.value_or(0);
        f.stats = action.file->stats;
        if (action.file->partition_values) f.partition_values = *action.file->partition_values;
        f.action = std::move(action.file);
      } else {
        auto url = OptString(*it, "url");
        if (!url) return Corrupt("{}: a {} line has no url", where, key);
        f.url = *url;
        f.size = OptInt(*it, "size").value_or(0);
        f.stats = OptString(*it, "stats");
        if (auto pv = it->find("partitionValues"); pv != it->end() && pv->is_object()) {
          for (auto p = pv->begin(); p != pv->end(); ++p) {
            if (p.value().is_string()) {
              // Parquet format: an empty string stands for null.
              const std::string v = p.value().get<std::string>();
              f.partition_values[p.key()] = v.empty() ? std::nullopt : std::optional<std::string>(v);
            } else {
              f.partition_values[p.key()] = std::nullopt;
            }
          }
        }
      }
      (void)format;
      line.file = std::move(f);
      break;
    }
  }
  return line;
}

}  // namespace lakesync::sharing
