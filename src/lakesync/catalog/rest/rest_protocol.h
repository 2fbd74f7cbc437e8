// The Iceberg REST catalog protocol (shared/specs/rest-catalog-open-api.yaml), defined once for the
// client (rest_catalog.h) and the server (rest_server.h): the endpoint table, how namespaces and names
// travel in paths, the request and response bodies with their JSON forms, and the error model (the
// spec's `{"error": {"message", "type", "code"}}` body and the exception type names Java and
// pyiceberg key on).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/catalog/catalog.h"
#include "lakesync/common/status.h"
#include "lakesync/iceberg/commit/table_update.h"

namespace lakesync::catalog::rest {

// ---- endpoints --------------------------------------------------------------------------------
// The operations lakesync speaks, named after the spec's operationIds.
enum class Endpoint {
  kGetConfig,
  kGetToken,
  kListNamespaces,
  kCreateNamespace,
  kLoadNamespaceMetadata,
  kNamespaceExists,
  kDropNamespace,
  kUpdateProperties,
  kListTables,
  kCreateTable,
  kRegisterTable,
  kLoadTable,
  kUpdateTable,
  kDropTable,
  kTableExists,
  kRenameTable,
  kReportMetrics,
  kCommitTransaction,
};

struct EndpointInfo {
  Endpoint endpoint;
  std::string_view method;    // GET, HEAD, POST, DELETE
  std::string_view path;      // as the spec writes it: "/v1/{prefix}/namespaces/{namespace}"
  std::string_view operation; // the operationId
};

// Every endpoint above, in the order of the enum.
const std::vector<EndpointInfo>& Endpoints();
const EndpointInfo& InfoFor(Endpoint endpoint);
// "GET /v1/{prefix}/namespaces": the form of the config response's `endpoints` list.
std::string EndpointId(Endpoint endpoint);

// The endpoints a client may assume when the config response has no `endpoints` field (the list in
// the spec's getConfig description; HEAD requests are not in it, and clients fall back to GET).
const std::set<std::string>& DefaultEndpointIds();

// ---- names in paths ---------------------------------------------------------------------------
// The spec's default namespace separator: the unit separator 0x1F (percent-encoded "%1F").
inline constexpr char kNamespaceSeparator = '\x1f';

// One path segment for a namespace: levels joined by 0x1F, then percent-encoded.
std::string EncodeNamespace(const Namespace& ns);
// The decoded `namespace` path segment or `parent` query value split into levels. Levels must be
// non-empty and free of control characters and '/' (no name reaches a file path unchecked).
// Errors: kInvalidArgument naming the value.
Result<Namespace> DecodeNamespace(std::string_view decoded);
// Checks a table or namespace level name the same way. Errors: kInvalidArgument naming it.
Status ValidateName(std::string_view name, std::string_view what);

// Builds request URLs: <uri>/v1[/<prefix>]/..., every name percent-encoded as one segment.
class Paths {
 public:
  Paths(std::string uri, std::string prefix);
  std::string Config() const;  // without ?warehouse (the caller adds it)
  std::string Tokens() const;
  std::string Namespaces() const;
  std::string Namespace(const catalog::Namespace& ns) const;
  std::string NamespaceProperties(const catalog::Namespace& ns) const;
  std::string Tables(const catalog::Namespace& ns) const;
  std::string Register(const catalog::Namespace& ns) const;
  std::string Table(const TableIdentifier& id) const;
  std::string Metrics(const TableIdentifier& id) const;
  std::string Rename() const;
  std::string CommitTransaction() const;

 private:
  std::string base_;  // <uri>/v1[/<prefix>]
  std::string root_;  // <uri>/v1
};

// ---- errors -----------------------------------------------------------------------------------
// The exception type names of the spec's examples (Java's exception classes), by error kind.
std::string_view ErrorTypeFor(ErrorKind kind, bool about_namespace = false);

// The error body for a status: {"error": {"message", "type", "code"}}.
nlohmann::json ErrorResponseJson(const Status& status, int code, bool about_namespace = false);

// What the client makes of a non-2xx answer to `endpoint`: the kind from the status code (the one
// table in http/status_codes.h), refined by the error type where the code alone is ambiguous (409:
// already exists, namespace not empty or commit conflict), and kCommitStateUnknown for any 5xx to a
// commit (the spec: the commit may or may not have happened). The message names `context` and keeps
// the server's message.
Status StatusFromErrorResponse(Endpoint endpoint, int http_status, std::string_view body, std::string_view context);

// ---- bodies -----------------------------------------------------------------------------------
nlohmann::json TableIdentifierToJson(const TableIdentifier& id);
Result<TableIdentifier> TableIdentifierFromJson(const nlohmann::json& json);
nlohmann::json NamespaceToJson(const catalog::Namespace& ns);
Result<catalog::Namespace> NamespaceFromJson(const nlohmann::json& json);
Result<Properties> PropertiesFromJson(const nlohmann::json& json, std::string_view what);

// GET /v1/config
struct ConfigResponse {
  Properties defaults;
  Properties overrides;
  std::optional<std::vector<std::string>> endpoints;  // absent: DefaultEndpointIds()
  std::optional<std::string> idempotency_key_lifetime;  // ISO-8601 duration, e.g. "PT30M"
};
nlohmann::json ToJson(const ConfigResponse& config);
Result<ConfigResponse> ConfigResponseFromJson(const nlohmann::json& json);

// POST .../namespaces/{namespace}/properties
struct UpdatePropertiesRequest {
  std::vector<std::string> removals;
  Properties updates;
};
Result<UpdatePropertiesRequest> UpdatePropertiesRequestFromJson(const nlohmann::json& json);

// POST .../namespaces/{namespace}/tables. `name` is the table name alone.
struct CreateTableBody {
  std::string name;
  std::optional<std::string> location;
  iceberg::SchemaPtr schema;
  iceberg::PartitionSpecPtr spec;
  iceberg::SortOrderPtr write_order;
  bool stage_create = false;
  Properties properties;
};
nlohmann::json ToJson(const CreateTableBody& body);
Result<CreateTableBody> CreateTableBodyFromJson(const nlohmann::json& json);

// LoadTableResult (load, create, register) and CommitTableResponse (the same without config).
struct LoadTableResult {
  std::optional<std::string> metadata_location;  // absent for a staged create
  iceberg::TableMetadataPtr metadata;
  Properties config;  // table-specific client settings, e.g. vended storage credentials
  // storage-credentials: {prefix, config} pairs; the longest prefix matching a path wins.
  std::vector<std::pair<std::string, Properties>> storage_credentials;
};
nlohmann::json ToJson(const LoadTableResult& result);
Result<LoadTableResult> LoadTableResultFromJson(const nlohmann::json& json);

// POST .../tables/{table} and each entry of transactions/commit.
struct TableCommit {
  std::optional<TableIdentifier> identifier;  // required inside a transaction
  std::vector<iceberg::TableRequirement> requirements;
  std::vector<iceberg::TableUpdate> updates;
};
nlohmann::json ToJson(const TableCommit& commit);
Result<TableCommit> TableCommitFromJson(const nlohmann::json& json);

// POST /v1/{prefix}/tables/rename
struct RenameTableBody {
  TableIdentifier source;
  TableIdentifier destination;
};
Result<RenameTableBody> RenameTableBodyFromJson(const nlohmann::json& json);

// POST .../namespaces/{namespace}/register
struct RegisterTableBody {
  std::string name;
  std::string metadata_location;
  bool overwrite = false;
};
Result<RegisterTableBody> RegisterTableBodyFromJson(const nlohmann::json& json);

// OAuth2 token endpoint answer ({"access_token", "token_type", "expires_in", "issued_token_type"}).
struct TokenResponse {
  std::string access_token;
  std::string token_type = "bearer";
  std::optional<int64_t> expires_in;  // seconds
};
nlohmann::json ToJson(const TokenResponse& token);
Result<TokenResponse> TokenResponseFromJson(const nlohmann::json& json);

// Parses a JSON request or response body. Errors: kInvalidArgument (request) naming `what`.
Result<nlohmann::json> ParseBody(std::string_view body, std::string_view what);

}  // namespace lakesync::catalog::rest
