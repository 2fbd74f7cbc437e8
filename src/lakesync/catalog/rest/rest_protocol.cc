#include "lakesync/catalog/rest/rest_protocol.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "lakesync/http/status_codes.h"
#include "lakesync/http/url.h"
#include "lakesync/iceberg/model/json_serde.h"

namespace lakesync::catalog::rest {
namespace {

using Json = nlohmann::json;

// Errors in a request body are the client's fault: the model's parsers call malformed JSON
// "corrupt" (they were written for files), which here is a bad request.
Status AsBadRequest(const Status& st, std::string_view what) {
  if (st.ok()) return st;
  const ErrorKind kind = KindOf(st);
  if (kind == ErrorKind::kCorrupt || kind == ErrorKind::kUnknown) {
    return InvalidArgument("{}: {}", what, st.message());
  }
  return WithContext(st, what);
}

Result<std::string> RequiredString(const Json& j, const char* key, std::string_view what) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return InvalidArgument("{}: '{}' must be a string", what, key);
  return it->get<std::string>();
}


// A created table's schema gets fresh field ids whatever ids the request carries, as Java's
// TableMetadata.newTableMetadata (and so every Java REST server) does: Spark's RESTCatalog sends the
// 0-based ids of its own schema conversion, pyiceberg ids it already made fresh (unchanged here).
// The order is TypeUtil.assignFreshIds' (the one iceberg/model/arrow_schema.cc follows): all fields
// of a struct first, then their children; a list's element; a map's key and value. The identifier
// fields, the partition spec's and the sort order's source ids follow the fields they name, and
// partition fields are numbered from 1000 (Java's freshSpec). The remap works on the JSON because
// the model refuses the ids being replaced (0, say) when it parses a schema.
class FreshIds {
 public:
  Status Schema(Json& schema) {
    ARROW_RETURN_NOT_OK(Type(schema));
    if (auto it = schema.find("identifier-field-ids"); it != schema.end() && it->is_array()) {
      for (auto& id : *it) ARROW_RETURN_NOT_OK(Remap(id, "identifier-field-ids"));
    }
    return Status::OK();
  }

  // The "source-id" (or v3 "source-ids") of each field of a partition spec or sort order.
  Status SourceIds(Json& doc, std::string_view what, bool number_partition_fields) {
    auto fields = doc.find("fields");
    if (fields == doc.end() || !fields->is_array()) return Status::OK();
    int32_t next_partition_id = iceberg::kPartitionDataIdStart;
    for (auto& f : *fields) {
      if (!f.is_object()) continue;
      if (auto it = f.find("source-id"); it != f.end()) ARROW_RETURN_NOT_OK(Remap(*it, what));
      if (auto it = f.find("source-ids"); it != f.end() && it->is_array()) {
        for (auto& id : *it) ARROW_RETURN_NOT_OK(Remap(id, what));
      }
      if (number_partition_fields) f["field-id"] = next_partition_id++;
    }
    return Status::OK();
  }

 private:
  Status Type(Json& type) {
    if (!type.is_object()) return Status::OK();  // a primitive type is a string
    const std::string kind = type.value("type", "");
    if (kind == "struct") {
      auto fields = type.find("fields");
      if (fields == type.end() || !fields->is_array()) return Status::OK();
      for (auto& f : *fields) {
        if (f.is_object() && f.contains("id")) ARROW_RETURN_NOT_OK(Assign(f["id"]));
      }
      for (auto& f : *fields) {
        if (f.is_object() && f.contains("type")) ARROW_RETURN_NOT_OK(Type(f["type"]));
      }
    } else if (kind == "list") {
      if (type.contains("element-id")) ARROW_RETURN_NOT_OK(Assign(type["element-id"]));
      if (type.contains("element")) ARROW_RETURN_NOT_OK(Type(type["element"]));
    } else if (kind == "map") {
      if (type.contains("key-id")) ARROW_RETURN_NOT_OK(Assign(type["key-id"]));
      if (type.contains("value-id")) ARROW_RETURN_NOT_OK(Assign(type["value-id"]));
      if (type.contains("key")) ARROW_RETURN_NOT_OK(Type(type["key"]));
      if (type.contains("value")) ARROW_RETURN_NOT_OK(Type(type["value"]));
    }
    return Status::OK();
  }

  Status Assign(Json& id) {
    if (!id.is_number_integer()) return Status::OK();  // the model's parser names the bad value
    const int64_t old_id = id.get<int64_t>();
    id = ++last_id_;
    if (!fresh_.emplace(old_id, last_id_).second) ambiguous_.insert(old_id);
    return Status::OK();
  }

  Status Remap(Json& id, std::string_view what) {
    if (!id.is_number_integer()) return Status::OK();
    const int64_t old_id = id.get<int64_t>();
    if (ambiguous_.count(old_id)) {
      return InvalidArgument("{}: field id {} names more than one schema field", what, old_id);
    }
    auto it = fresh_.find(old_id);
    if (it == fresh_.end()) return InvalidArgument("{}: field id {} is not in the schema", what, old_id);
    id = it->second;
    return Status::OK();
  }

  int32_t last_id_ = 0;
  std::map<int64_t, int32_t> fresh_;
  std::set<int64_t> ambiguous_;
};

}  // namespace

const std::vector<EndpointInfo>& Endpoints() {
  static const std::vector<EndpointInfo> kEndpoints = {
      {Endpoint::kGetConfig, "GET", "/v1/config", "getConfig"},
      {Endpoint::kGetToken, "POST", "/v1/oauth/tokens", "getToken"},
      {Endpoint::kListNamespaces, "GET", "/v1/{prefix}/namespaces", "listNamespaces"},
      {Endpoint::kCreateNamespace, "POST", "/v1/{prefix}/namespaces", "createNamespace"},
      {Endpoint::kLoadNamespaceMetadata, "GET", "/v1/{prefix}/namespaces/{namespace}", "loadNamespaceMetadata"},
      {Endpoint::kNamespaceExists, "HEAD", "/v1/{prefix}/namespaces/{namespace}", "namespaceExists"},
      {Endpoint::kDropNamespace, "DELETE", "/v1/{prefix}/namespaces/{namespace}", "dropNamespace"},
      {Endpoint::kUpdateProperties, "POST", "/v1/{prefix}/namespaces/{namespace}/properties", "updateProperties"},
      {Endpoint::kListTables, "GET", "/v1/{prefix}/namespaces/{namespace}/tables", "listTables"},
      {Endpoint::kCreateTable, "POST", "/v1/{prefix}/namespaces/{namespace}/tables", "createTable"},
      {Endpoint::kRegisterTable, "POST", "/v1/{prefix}/namespaces/{namespace}/register", "registerTable"},
      {Endpoint::kLoadTable, "GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", "loadTable"},
      {Endpoint::kUpdateTable, "POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", "updateTable"},
      {Endpoint::kDropTable, "DELETE", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", "dropTable"},
      {Endpoint::kTableExists, "HEAD", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", "tableExists"},
      {Endpoint::kRenameTable, "POST", "/v1/{prefix}/tables/rename", "renameTable"},
      {Endpoint::kReportMetrics, "POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
       "reportMetrics"},
      {Endpoint::kCommitTransaction, "POST", "/v1/{prefix}/transactions/commit", "commitTransaction"},
  };
  return kEndpoints;
}

const EndpointInfo& InfoFor(Endpoint endpoint) { return Endpoints()[static_cast<size_t>(endpoint)]; }

std::string EndpointId(Endpoint endpoint) {
  const auto& info = InfoFor(endpoint);
  return fmt::format("{} {}", info.method, info.path);
}

const std::set<std::string>& DefaultEndpointIds() {
  static const std::set<std::string> kDefaults = [] {
    std::set<std::string> ids;
    for (Endpoint e : {Endpoint::kListNamespaces, Endpoint::kCreateNamespace, Endpoint::kLoadNamespaceMetadata,
                       Endpoint::kDropNamespace, Endpoint::kUpdateProperties, Endpoint::kListTables,
                       Endpoint::kCreateTable, Endpoint::kLoadTable, Endpoint::kUpdateTable, Endpoint::kDropTable,
                       Endpoint::kRegisterTable, Endpoint::kReportMetrics, Endpoint::kRenameTable,
                       Endpoint::kCommitTransaction}) {
      ids.insert(EndpointId(e));
    }
    return ids;
  }();
  return kDefaults;
}

// ---- names ------------------------------------------------------------------------------------

Status ValidateName(std::string_view name, std::string_view what) {
  if (name.empty()) return InvalidArgument("invalid {}: empty name", what);
  for (unsigned char c : name) {
    // Control characters (the separator among them) and '/' would change what a name means once it
    // is part of a path; '\' likewise on some filesystems.
    if (c < 0x20 || c == 0x7f || c == '/' || c == '\\') {
      return InvalidArgument("invalid {} '{}': names may not contain '/', '\\' or control characters", what,
                             http::PercentEncode(name));
    }
  }
  if (name == "." || name == "..") return InvalidArgument("invalid {} '{}'", what, name);
  return Status::OK();
}

std::string EncodeNamespace(const Namespace& ns) {
  std::string joined;
  for (size_t i = 0; i < ns.size(); ++i) {
    if (i) joined.push_back(kNamespaceSeparator);
    joined += ns[i];
  }
  return http::PercentEncode(joined);
}

Result<Namespace> DecodeNamespace(std::string_view decoded) {
  Namespace ns;
  size_t start = 0;
  while (true) {
    const size_t sep = decoded.find(kNamespaceSeparator, start);
    std::string_view level = decoded.substr(start, sep == std::string_view::npos ? std::string_view::npos : sep - start);
    ARROW_RETURN_NOT_OK(ValidateName(level, "namespace level"));
    ns.emplace_back(level);
    if (sep == std::string_view::npos) break;
    start = sep + 1;
  }
  return ns;
}

Paths::Paths(std::string uri, std::string prefix) {
  while (!uri.empty() && uri.back() == '/') uri.pop_back();
  root_ = uri + "/v1";
  base_ = prefix.empty() ? root_ : root_ + "/" + prefix;
}

std::string Paths::Config() const { return root_ + "/config"; }
std::string Paths::Tokens() const { return root_ + "/oauth/tokens"; }
std::string Paths::Namespaces() const { return base_ + "/namespaces"; }
std::string Paths::Namespace(const catalog::Namespace& ns) const { return Namespaces() + "/" + EncodeNamespace(ns); }
std::string Paths::NamespaceProperties(const catalog::Namespace& ns) const { return Namespace(ns) + "/properties"; }
std::string Paths::Tables(const catalog::Namespace& ns) const { return Namespace(ns) + "/tables"; }
std::string Paths::Register(const catalog::Namespace& ns) const { return Namespace(ns) + "/register"; }
std::string Paths::Table(const TableIdentifier& id) const {
  return Tables(id.ns) + "/" + http::PercentEncode(id.name);
}
std::string Paths::Metrics(const TableIdentifier& id) const { return Table(id) + "/metrics"; }
std::string Paths::Rename() const { return base_ + "/tables/rename"; }
std::string Paths::CommitTransaction() const { return base_ + "/transactions/commit"; }

// ---- errors -----------------------------------------------------------------------------------

std::string_view ErrorTypeFor(ErrorKind kind, bool about_namespace) {
  switch (kind) {
    case ErrorKind::kNotFound: return about_namespace ? "NoSuchNamespaceException" : "NoSuchTableException";
    case ErrorKind::kAlreadyExists: return "AlreadyExistsException";
    case ErrorKind::kNamespaceNotEmpty: return "NamespaceNotEmptyException";
    case ErrorKind::kCommitConflict: return "CommitFailedException";
    case ErrorKind::kCommitStateUnknown: return "CommitStateUnknownException";
    case ErrorKind::kInvalidArgument: return "BadRequestException";
    case ErrorKind::kUnauthenticated: return "NotAuthorizedException";
    case ErrorKind::kForbidden: return "ForbiddenException";
    case ErrorKind::kUnsupported: return "UnsupportedOperationException";
    case ErrorKind::kUnavailable: return "ServiceUnavailableException";
    default: return "InternalServerError";
  }
}

nlohmann::json ErrorResponseJson(const Status& status, int code, bool about_namespace) {
  return Json{{"error",
               {{"message", EscapeInvalidUtf8(status.message())},
                {"type", std::string(ErrorTypeFor(KindOf(status), about_namespace))},
                {"code", code}}}};
}

Status StatusFromErrorResponse(Endpoint endpoint, int http_status, std::string_view body, std::string_view context) {
  std::string message;
  std::string type;
  try {
    Json j = Json::parse(body);
    if (j.is_object() && j.contains("error") && j["error"].is_object()) {
      const auto& e = j["error"];
      if (e.contains("message") && e["message"].is_string()) message = e["message"].get<std::string>();
      if (e.contains("type") && e["type"].is_string()) type = e["type"].get<std::string>();
    }
  } catch (const Json::exception&) {
  }
  if (message.empty()) {
    message = body.empty() ? std::string(http::ReasonPhrase(http_status)) : std::string(body.substr(0, 500));
  }
  ErrorKind kind = http::ErrorKindForStatusCode(http_status);
  if (http_status == 409) {
    if (type == "AlreadyExistsException") kind = ErrorKind::kAlreadyExists;
    else if (type == "NamespaceNotEmptyException") kind = ErrorKind::kNamespaceNotEmpty;
    else if (type == "CommitFailedException") kind = ErrorKind::kCommitConflict;
    else if (endpoint == Endpoint::kDropNamespace) kind = ErrorKind::kNamespaceNotEmpty;
    else if (endpoint != Endpoint::kUpdateTable && endpoint != Endpoint::kCommitTransaction) {
      kind = ErrorKind::kAlreadyExists;
    }
  }
  const bool commit = endpoint == Endpoint::kUpdateTable || endpoint == Endpoint::kCommitTransaction;
  if (commit && http_status >= 500) {
    return CommitStateUnknown("{}: the server answered {} ({}); the commit may or may not have been applied", context,
                              http_status, message);
  }
  return MakeError(kind, fmt::format("{}: {} (HTTP {})", context, message, http_status));
}

// ---- bodies -----------------------------------------------------------------------------------

nlohmann::json NamespaceToJson(const catalog::Namespace& ns) { return Json(ns); }

Result<catalog::Namespace> NamespaceFromJson(const nlohmann::json& json) {
  if (!json.is_array()) return InvalidArgument("a namespace must be an array of strings, got {}", json.dump());
  catalog::Namespace ns;
  for (const auto& level : json) {
    if (!level.is_string()) return InvalidArgument("a namespace must be an array of strings, got {}", json.dump());
    ARROW_RETURN_NOT_OK(ValidateName(level.get<std::string>(), "namespace level"));
    ns.push_back(level.get<std::string>());
  }
  return ns;
}

nlohmann::json TableIdentifierToJson(const TableIdentifier& id) {
  return Json{{"namespace", NamespaceToJson(id.ns)}, {"name", id.name}};
}

Result<TableIdentifier> TableIdentifierFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return InvalidArgument("a table identifier must be an object, got {}", json.dump());
  TableIdentifier id;
  if (!json.contains("namespace")) return InvalidArgument("a table identifier needs 'namespace'");
  ARROW_ASSIGN_OR_RAISE(id.ns, NamespaceFromJson(json["namespace"]));
  ARROW_ASSIGN_OR_RAISE(id.name, RequiredString(json, "name", "table identifier"));
  ARROW_RETURN_NOT_OK(ValidateName(id.name, "table name"));
  return id;
}

Result<Properties> PropertiesFromJson(const nlohmann::json& json, std::string_view what) {
  Properties out;
  if (json.is_null()) return out;
  if (!json.is_object()) return InvalidArgument("{} must be an object of strings", what);
  for (const auto& [k, v] : json.items()) {
    if (!v.is_string()) return InvalidArgument("{}: the value of '{}' must be a string", what, k);
    out[k] = v.get<std::string>();
  }
  return out;
}

nlohmann::json ToJson(const ConfigResponse& config) {
  Json j = {{"defaults", config.defaults}, {"overrides", config.overrides}};
  if (config.endpoints) j["endpoints"] = *config.endpoints;
  if (config.idempotency_key_lifetime) j["idempotency-key-lifetime"] = *config.idempotency_key_lifetime;
  return j;
}

Result<ConfigResponse> ConfigResponseFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return InvalidArgument("the config response is not an object");
  ConfigResponse out;
  if (json.contains("defaults")) {
    ARROW_ASSIGN_OR_RAISE(out.defaults, PropertiesFromJson(json["defaults"], "defaults"));
  }
  if (json.contains("overrides")) {
    ARROW_ASSIGN_OR_RAISE(out.overrides, PropertiesFromJson(json["overrides"], "overrides"));
  }
  if (auto it = json.find("endpoints"); it != json.end() && !it->is_null()) {
    if (!it->is_array()) return InvalidArgument("the config response's 'endpoints' is not a list");
    out.endpoints.emplace();
    for (const auto& e : *it) {
      if (e.is_string()) out.endpoints->push_back(e.get<std::string>());
    }
  }
  if (auto it = json.find("idempotency-key-lifetime"); it != json.end() && it->is_string()) {
    out.idempotency_key_lifetime = it->get<std::string>();
  }
  return out;
}

Result<UpdatePropertiesRequest> UpdatePropertiesRequestFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return InvalidArgument("the request body must be an object");
  UpdatePropertiesRequest out;
  if (auto it = json.find("removals"); it != json.end() && !it->is_null()) {
    if (!it->is_array()) return InvalidArgument("'removals' must be a list of strings");
    for (const auto& r : *it) {
      if (!r.is_string()) return InvalidArgument("'removals' must be a list of strings");
      out.removals.push_back(r.get<std::string>());
    }
  }
  if (json.contains("updates")) {
    ARROW_ASSIGN_OR_RAISE(out.updates, PropertiesFromJson(json["updates"], "updates"));
  }
  return out;
}

nlohmann::json ToJson(const CreateTableBody& body) {
  Json j = {{"name", body.name}, {"schema", iceberg::SchemaToJson(*body.schema)}};
  if (body.location) j["location"] = *body.location;
  if (body.spec) j["partition-spec"] = iceberg::PartitionSpecToJson(*body.spec);
  if (body.write_order) j["write-order"] = iceberg::SortOrderToJson(*body.write_order);
  if (body.stage_create) j["stage-create"] = true;
  j["properties"] = body.properties;
  return j;
}

Result<CreateTableBody> CreateTableBodyFromJson(const nlohmann::json& json) {
  constexpr std::string_view kWhat = "create table request";
  if (!json.is_object()) return InvalidArgument("{}: the body must be an object", kWhat);
  CreateTableBody out;
  ARROW_ASSIGN_OR_RAISE(out.name, RequiredString(json, "name", kWhat));
  ARROW_RETURN_NOT_OK(ValidateName(out.name, "table name"));
  if (auto it = json.find("location"); it != json.end() && !it->is_null()) {
    if (!it->is_string()) return InvalidArgument("{}: 'location' must be a string", kWhat);
    out.location = it->get<std::string>();
  }
  if (!json.contains("schema")) return InvalidArgument("{}: 'schema' is required", kWhat);
  FreshIds fresh;
  Json schema_json = json["schema"];
  if (schema_json.is_object()) ARROW_RETURN_NOT_OK(fresh.Schema(schema_json));
  auto schema = iceberg::SchemaFromJson(schema_json);
  ARROW_RETURN_NOT_OK(AsBadRequest(schema.status(), "create table request: schema"));
  out.schema = *schema;
  if (auto it = json.find("partition-spec"); it != json.end() && !it->is_null()) {
    Json spec = *it;
    if (spec.is_object() && !spec.contains("spec-id")) spec["spec-id"] = 0;
    if (spec.is_object()) {
      ARROW_RETURN_NOT_OK(fresh.SourceIds(spec, "create table request: partition-spec", /*number_partition_fields=*/true));
    }
    auto parsed = iceberg::PartitionSpecFromJson(spec);
    ARROW_RETURN_NOT_OK(AsBadRequest(parsed.status(), "create table request: partition-spec"));
    out.spec = *parsed;
  }
  if (auto it = json.find("write-order"); it != json.end() && !it->is_null()) {
    Json order = *it;
    if (order.is_object()) ARROW_RETURN_NOT_OK(fresh.SourceIds(order, "create table request: write-order", false));
    auto parsed = iceberg::SortOrderFromJson(order);
    ARROW_RETURN_NOT_OK(AsBadRequest(parsed.status(), "create table request: write-order"));
    out.write_order = *parsed;
  }
  if (auto it = json.find("stage-create"); it != json.end() && !it->is_null()) {
    if (!it->is_boolean()) return InvalidArgument("{}: 'stage-create' must be true or false", kWhat);
    out.stage_create = it->get<bool>();
  }
  if (json.contains("properties")) {
    ARROW_ASSIGN_OR_RAISE(out.properties, PropertiesFromJson(json["properties"], "create table request: properties"));
  }
  return out;
}

nlohmann::json ToJson(const LoadTableResult& result) {
  Json j = {{"metadata", iceberg::TableMetadataToJson(*result.metadata)}};
  if (result.metadata_location) j["metadata-location"] = *result.metadata_location;
  j["config"] = result.config;
  if (!result.storage_credentials.empty()) {
    Json creds = Json::array();
    for (const auto& [prefix, config] : result.storage_credentials) creds.push_back({{"prefix", prefix}, {"config", config}});
    j["storage-credentials"] = creds;
  }
  return j;
}

Result<LoadTableResult> LoadTableResultFromJson(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("metadata")) return Corrupt("a load table result needs 'metadata'");
  LoadTableResult out;
  if (auto it = json.find("metadata-location"); it != json.end() && it->is_string()) {
    out.metadata_location = it->get<std::string>();
  }
  LS_ASSIGN_OR_RAISE_CTX(auto metadata, iceberg::TableMetadataFromJson(json["metadata"]), "table metadata in the answer");
  out.metadata = metadata;
  if (json.contains("config")) {
    auto config = PropertiesFromJson(json["config"], "config");
    if (!config.ok()) return Corrupt("{}", config.status().message());
    out.config = *config;
  }
  if (auto it = json.find("storage-credentials"); it != json.end() && it->is_array()) {
    for (const auto& c : *it) {
      if (!c.is_object() || !c.contains("prefix") || !c["prefix"].is_string()) continue;
      auto config = PropertiesFromJson(c.value("config", Json::object()), "storage-credentials config");
      if (!config.ok()) return Corrupt("{}", config.status().message());
      out.storage_credentials.emplace_back(c["prefix"].get<std::string>(), *config);
    }
  }
  return out;
}

nlohmann::json ToJson(const TableCommit& commit) {
  Json requirements = Json::array();
  for (const auto& r : commit.requirements) requirements.push_back(iceberg::RequirementToJson(r));
  Json updates = Json::array();
  for (const auto& u : commit.updates) updates.push_back(iceberg::UpdateToJson(u));
  Json j = {{"requirements", requirements}, {"updates", updates}};
  if (commit.identifier) j["identifier"] = TableIdentifierToJson(*commit.identifier);
  return j;
}

Result<TableCommit> TableCommitFromJson(const nlohmann::json& json) {
  constexpr std::string_view kWhat = "commit request";
  if (!json.is_object()) return InvalidArgument("{}: the body must be an object", kWhat);
  TableCommit out;
  if (auto it = json.find("identifier"); it != json.end() && !it->is_null()) {
    ARROW_ASSIGN_OR_RAISE(out.identifier, TableIdentifierFromJson(*it));
  }
  auto requirements = json.find("requirements");
  auto updates = json.find("updates");
  if (requirements == json.end() || !requirements->is_array() || updates == json.end() || !updates->is_array()) {
    return InvalidArgument("{}: 'requirements' and 'updates' must be lists", kWhat);
  }
  for (const auto& r : *requirements) {
    auto parsed = iceberg::RequirementFromJson(r);
    ARROW_RETURN_NOT_OK(AsBadRequest(parsed.status(), "commit request: requirement"));
    out.requirements.push_back(*parsed);
  }
  for (const auto& u : *updates) {
    auto parsed = iceberg::UpdateFromJson(u);
    ARROW_RETURN_NOT_OK(AsBadRequest(parsed.status(), "commit request: update"));
    out.updates.push_back(*parsed);
  }
  return out;
}

Result<RenameTableBody> RenameTableBodyFromJson(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("source") || !json.contains("destination")) {
    return InvalidArgument("rename table request: 'source' and 'destination' are required");
  }
  RenameTableBody out;
  ARROW_ASSIGN_OR_RAISE(out.source, TableIdentifierFromJson(json["source"]));
  ARROW_ASSIGN_OR_RAISE(out.destination, TableIdentifierFromJson(json["destination"]));
  return out;
}

Result<RegisterTableBody> RegisterTableBodyFromJson(const nlohmann::json& json) {
  constexpr std::string_view kWhat = "register table request";
  if (!json.is_object()) return InvalidArgument("{}: the body must be an object", kWhat);
  RegisterTableBody out;
  ARROW_ASSIGN_OR_RAISE(out.name, RequiredString(json, "name", kWhat));
  ARROW_RETURN_NOT_OK(ValidateName(out.name, "table name"));
  ARROW_ASSIGN_OR_RAISE(out.metadata_location, RequiredString(json, "metadata-location", kWhat));
  if (auto it = json.find("overwrite"); it != json.end() && !it->is_null()) {
    if (!it->is_boolean()) return InvalidArgument("{}: 'overwrite' must be true or false", kWhat);
    out.overwrite = it->get<bool>();
  }
  return out;
}

nlohmann::json ToJson(const TokenResponse& token) {
  Json j = {{"access_token", token.access_token},
            {"token_type", token.token_type},
            {"issued_token_type", "urn:ietf:params:oauth:token-type:access_token"}};
  if (token.expires_in) j["expires_in"] = *token.expires_in;
  return j;
}

Result<TokenResponse> TokenResponseFromJson(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("access_token") || !json["access_token"].is_string()) {
    return Corrupt("the token endpoint's answer has no access_token");
  }
  TokenResponse out;
  out.access_token = json["access_token"].get<std::string>();
  if (json.contains("token_type") && json["token_type"].is_string()) out.token_type = json["token_type"];
  if (json.contains("expires_in") && json["expires_in"].is_number_integer()) {
    out.expires_in = json["expires_in"].get<int64_t>();
  }
  return out;
}

Result<nlohmann::json> ParseBody(std::string_view body, std::string_view what) {
  try {
    return Json::parse(body);
  } catch (const Json::exception& e) {
    return InvalidArgument("{}: the body is not JSON: {}", what, e.what());
  }
}

}  // namespace lakesync::catalog::rest
