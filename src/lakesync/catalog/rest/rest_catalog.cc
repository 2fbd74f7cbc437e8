#include "lakesync/catalog/rest/rest_catalog.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

#include "lakesync/common/logging.h"
#include "lakesync/common/text.h"
#include "lakesync/common/version.h"
#include "lakesync/http/status_codes.h"
#include "lakesync/http/url.h"
#include "lakesync/iceberg/model/json_serde.h"
#include "lakesync/io/file_io.h"

namespace lakesync::catalog::rest {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::optional<std::string> Get(const Properties& props, const char* key) {
  auto it = props.find(key);
  if (it == props.end()) return std::nullopt;
  return it->second;
}

Result<int64_t> PositiveInt(const std::string& catalog, const Properties& props, const char* key, int64_t fallback) {
  auto v = Get(props, key);
  if (!v) return fallback;
  int64_t out = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (v->empty() || ec != std::errc() || end != v->data() + v->size() || out <= 0) {
    return InvalidArgument("catalog '{}': catalog_properties.{} must be a positive integer, got '{}'", catalog, key, *v);
  }
  return out;
}

Result<bool> Bool(const std::string& catalog, const Properties& props, const char* key, bool fallback) {
  auto v = Get(props, key);
  if (!v) return fallback;
  const std::string l = AsciiLower(*v);
  if (l == "true") return true;
  if (l == "false") return false;
  return InvalidArgument("catalog '{}': catalog_properties.{} must be true or false, got '{}'", catalog, key, *v);
}

// The auth scheme the properties ask for: "none" or "oauth2".
Result<std::string> AuthType(const std::string& catalog, const Properties& props) {
  auto type = Get(props, kPropAuthType);
  if (!type) return (Get(props, kPropToken) || Get(props, kPropCredential)) ? "oauth2" : "none";
  const std::string t = AsciiLower(*type);
  if (t == "none" || t == "oauth2") return t;
  return Unsupported(
      "catalog '{}': catalog_properties.{} '{}' is not supported; lakesync's REST client supports none and oauth2 "
      "(a bearer `token`, or `credential` id:secret for the client-credentials flow)",
      catalog, kPropAuthType, *type);
}

}  // namespace

const std::set<std::string>& RestClientPropertyNames() {
  static const std::set<std::string> kNames = {kPropUri,   kPropWarehouse,       kPropPrefix, kPropToken,
                                                kPropCredential, kPropOAuth2ServerUri, kPropScope, kPropAuthType,
                                                kPropCaBundle,   kPropVerify,          kPropConnectTimeout,
                                                kPropSocketTimeout};
  return kNames;
}

Status ValidateRestProperties(const std::string& catalog_name, const Properties& properties) {
  auto uri = Get(properties, kPropUri);
  if (!uri || uri->empty()) {
    return InvalidArgument("catalog '{}': catalog_properties.uri is required for a rest catalog (e.g. "
                           "http://127.0.0.1:8181)",
                           catalog_name);
  }
  LS_RETURN_NOT_OK_CTX(http::ParseUrl(*uri).status(), "catalog '{}': catalog_properties.uri", catalog_name);
  if (auto server = Get(properties, kPropOAuth2ServerUri)) {
    LS_RETURN_NOT_OK_CTX(http::ParseUrl(*server).status(), "catalog '{}': catalog_properties.{}", catalog_name,
                         kPropOAuth2ServerUri);
  }
  if (auto credential = Get(properties, kPropCredential)) {
    const size_t colon = credential->find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == credential->size()) {
      return InvalidArgument("catalog '{}': catalog_properties.credential must be CLIENT_ID:CLIENT_SECRET",
                             catalog_name);
    }
  }
  ARROW_RETURN_NOT_OK(AuthType(catalog_name, properties).status());
  ARROW_RETURN_NOT_OK(Bool(catalog_name, properties, kPropVerify, true).status());
  ARROW_RETURN_NOT_OK(PositiveInt(catalog_name, properties, kPropConnectTimeout, 1).status());
  ARROW_RETURN_NOT_OK(PositiveInt(catalog_name, properties, kPropSocketTimeout, 1).status());
  return Status::OK();
}

Result<std::shared_ptr<RestCatalog>> RestCatalog::Make(std::string name, Properties properties) {
  ARROW_RETURN_NOT_OK(ValidateRestProperties(name, properties));
  std::shared_ptr<RestCatalog> catalog(new RestCatalog(std::move(name), std::move(properties)));
  LS_RETURN_NOT_OK_CTX(catalog->Initialize(), "opening REST catalog '{}' at {}", catalog->name_,
                       http::RedactedUrl(catalog->client_props_.at(kPropUri)));
  return catalog;
}

Status RestCatalog::ConfigureHttp(const Properties& props) {
  http::ClientOptions options;
  ARROW_ASSIGN_OR_RAISE(int64_t connect_ms, PositiveInt(name_, props, kPropConnectTimeout, 10'000));
  ARROW_ASSIGN_OR_RAISE(int64_t socket_ms, PositiveInt(name_, props, kPropSocketTimeout, 60'000));
  options.connect_timeout = std::chrono::milliseconds(connect_ms);
  options.read_timeout = std::chrono::milliseconds(socket_ms);
  options.write_timeout = std::chrono::milliseconds(socket_ms);
  options.ca_file = Get(props, kPropCaBundle).value_or("");
  ARROW_ASSIGN_OR_RAISE(options.verify_tls, Bool(name_, props, kPropVerify, true));
  options.default_headers.emplace("User-Agent", std::string("lakesync/") + LAKESYNC_VERSION);
  options.default_headers.emplace("X-Client-Version", std::string("lakesync/") + LAKESYNC_VERSION);
  // Ask for vended credentials as Java and pyiceberg do; servers that do not vend ignore it.
  options.default_headers.emplace("X-Iceberg-Access-Delegation", "vended-credentials");
  for (const auto& [k, v] : props) {
    if (k.rfind(kPropHeaderPrefix, 0) == 0 && k.size() > std::strlen(kPropHeaderPrefix)) {
      options.default_headers.emplace(k.substr(std::strlen(kPropHeaderPrefix)), v);
    }
  }
  ARROW_ASSIGN_OR_RAISE(http_, http::Client::Make(std::move(options)));
  return Status::OK();
}

Status RestCatalog::Initialize() {
  ARROW_RETURN_NOT_OK(ConfigureHttp(client_props_));
  ARROW_ASSIGN_OR_RAISE(auth_type_, AuthType(name_, client_props_));
  const std::string uri = client_props_.at(kPropUri);
  Paths bootstrap(uri, "");
  token_uri_ = Get(client_props_, kPropOAuth2ServerUri).value_or(bootstrap.Tokens());
  if (auth_type_ == "oauth2") {
    if (auto token = Get(client_props_, kPropToken)) token_ = *token;
    if (Get(client_props_, kPropCredential)) ARROW_RETURN_NOT_OK(FetchToken());
  }

  std::string config_url = bootstrap.Config();
  if (auto warehouse = Get(client_props_, kPropWarehouse)) {
    config_url += "?" + http::EncodeQuery({{"warehouse", *warehouse}});
  }
  paths_ = std::make_unique<Paths>(uri, "");
  ARROW_ASSIGN_OR_RAISE(auto response, Call(Endpoint::kGetConfig, http::Request::Get(config_url), "GET /v1/config"));
  ARROW_ASSIGN_OR_RAISE(Json body, ParseBody(response.body, "the config response"));
  LS_ASSIGN_OR_RAISE_CTX(ConfigResponse config, ConfigResponseFromJson(body), "GET /v1/config");

  properties_ = config.defaults;
  for (const auto& [k, v] : client_props_) properties_[k] = v;
  for (const auto& [k, v] : config.overrides) properties_[k] = v;
  if (config.endpoints) {
    endpoints_ = std::set<std::string>(config.endpoints->begin(), config.endpoints->end());
  } else {
    endpoints_ = DefaultEndpointIds();
  }
  // The merged set may change headers, TLS settings or timeouts (server defaults/overrides).
  if (properties_ != client_props_) ARROW_RETURN_NOT_OK(ConfigureHttp(properties_));
  paths_ = std::make_unique<Paths>(properties_.at(kPropUri), Get(properties_, kPropPrefix).value_or(""));
  LS_ASSIGN_OR_RAISE_CTX(io_, io::FileIO::Make(properties_), "catalog '{}'", name_);
  return Status::OK();
}

Status RestCatalog::FetchToken() {
  const std::string credential = client_props_.at(kPropCredential);
  const size_t colon = credential.find(':');
  std::multimap<std::string, std::string> form = {{"grant_type", "client_credentials"},
                                                  {"client_id", credential.substr(0, colon)},
                                                  {"client_secret", credential.substr(colon + 1)},
                                                  {"scope", Get(client_props_, kPropScope).value_or("catalog")}};
  http::Request request =
      http::Request::Post(token_uri_, http::EncodeQuery(form), "application/x-www-form-urlencoded");
  // Asking for a token twice is harmless.
  request.idempotent = true;
  ARROW_ASSIGN_OR_RAISE(auto response, http_->Send(request));
  if (response.status < 200 || response.status >= 300) {
    std::string detail = response.body.substr(0, 300);
    try {
      Json j = Json::parse(response.body);
      if (j.is_object() && j.contains("error")) {
        detail = j["error"].is_string() ? j["error"].get<std::string>() : j["error"].dump();
        if (j.contains("error_description") && j["error_description"].is_string()) {
          detail += ": " + j["error_description"].get<std::string>();
        }
      }
    } catch (const Json::exception&) {
    }
    const ErrorKind kind = response.status == 400 || response.status == 401 ? ErrorKind::kUnauthenticated
                                                                              : http::ErrorKindForStatusCode(response.status);
    return MakeError(kind, fmt::format("OAuth2 token request to {} refused (HTTP {}): {}", http::RedactedUrl(token_uri_),
                                       response.status, detail));
  }
  ARROW_ASSIGN_OR_RAISE(Json body, ParseBody(response.body, "the token response"));
  LS_ASSIGN_OR_RAISE_CTX(TokenResponse token, TokenResponseFromJson(body), "OAuth2 token from {}",
                         http::RedactedUrl(token_uri_));
  token_ = token.access_token;
  if (token.expires_in && *token.expires_in > 0) {
    // Fetch a new one when 90% of the lifetime has passed (at most 5 minutes early), so a request
    // never goes out with a token about to expire.
    const int64_t early = std::min<int64_t>(300, std::max<int64_t>(1, *token.expires_in / 10));
    token_refresh_at_ = Clock::now() + std::chrono::seconds(*token.expires_in - early);
  } else {
    token_refresh_at_ = Clock::time_point::max();
  }
  return Status::OK();
}

Result<std::string> RestCatalog::AuthorizationHeader() {
  std::lock_guard lock(auth_mutex_);
  if (auth_type_ != "oauth2") return std::string();
  if (Get(client_props_, kPropCredential) && Clock::now() >= token_refresh_at_) {
    LS_RETURN_NOT_OK_CTX(FetchToken(), "refreshing the OAuth2 token of catalog '{}'", name_);
  }
  return token_.empty() ? std::string() : "Bearer " + token_;
}

Result<http::Response> RestCatalog::Call(Endpoint endpoint, http::Request request, std::string_view context,
                                         bool allow_not_found) {
  ARROW_ASSIGN_OR_RAISE(std::string authorization, AuthorizationHeader());
  if (!authorization.empty()) request.headers.emplace("Authorization", authorization);
  if (request.method == "POST" && request.content_type.empty()) request.content_type = "application/json";
  auto response = http_->Send(request);
  if (!response.ok()) {
    const bool commit = endpoint == Endpoint::kUpdateTable || endpoint == Endpoint::kCommitTransaction;
    if (commit && KindOf(response.status()) != ErrorKind::kUnavailable) {
      // The request may have reached the server (a timeout, a broken connection).
      return CommitStateUnknown("{}: {}", context, response.status().message());
    }
    return WithContext(response.status(), context);
  }
  if (response->status >= 200 && response->status < 300) return response;
  if (allow_not_found && response->status == 404) return response;
  return StatusFromErrorResponse(endpoint, response->status, response->body, context);
}

bool RestCatalog::Supports(Endpoint endpoint) const { return endpoints_.count(EndpointId(endpoint)) > 0; }

// ---- namespaces -------------------------------------------------------------------------------

Result<std::vector<Namespace>> RestCatalog::ListNamespaces(const Namespace& parent) {
  std::vector<Namespace> out;
  std::string page_token;
  const std::string context = "listing namespaces" + (parent.empty() ? "" : " in '" + NamespaceToString(parent) + "'");
  while (true) {
    std::multimap<std::string, std::string> query;
    if (!parent.empty()) {
      std::string joined;
      for (size_t i = 0; i < parent.size(); ++i) joined += (i ? std::string(1, kNamespaceSeparator) : "") + parent[i];
      query.emplace("parent", joined);
    }
    if (!page_token.empty()) query.emplace("pageToken", page_token);
    std::string url = paths_->Namespaces();
    if (!query.empty()) url += "?" + http::EncodeQuery(query);
    ARROW_ASSIGN_OR_RAISE(auto response, Call(Endpoint::kListNamespaces, http::Request::Get(url), context));
    ARROW_ASSIGN_OR_RAISE(Json body, ParseBody(response.body, context));
    if (!body.is_object() || !body.contains("namespaces") || !body["namespaces"].is_array()) {
      return Corrupt("{}: the answer has no 'namespaces' list", context);
    }
    for (const auto& ns : body["namespaces"]) {
      LS_ASSIGN_OR_RAISE_CTX(auto parsed, NamespaceFromJson(ns), "{}", context);
      out.push_back(std::move(parsed));
    }
    auto next = body.find("next-page-token");
    if (next == body.end() || !next->is_string() || next->get<std::string>().empty()) break;
    page_token = next->get<std::string>();
  }
  return out;
}

Status RestCatalog::CreateNamespace(const Namespace& ns, const Properties& properties) {
  Json body = {{"namespace", NamespaceToJson(ns)}, {"properties", properties}};
  return Call(Endpoint::kCreateNamespace, http::Request::Post(paths_->Namespaces(), body.dump()),
              "creating namespace '" + NamespaceToString(ns) + "'")
      .status();
}

Result<Properties> RestCatalog::LoadNamespaceMetadata(const Namespace& ns) {
  const std::string context = "loading namespace '" + NamespaceToString(ns) + "'";
  ARROW_ASSIGN_OR_RAISE(auto response,
                        Call(Endpoint::kLoadNamespaceMetadata, http::Request::Get(paths_->Namespace(ns)), context));
  ARROW_ASSIGN_OR_RAISE(Json body, ParseBody(response.body, context));
  if (!body.is_object()) return Corrupt("{}: the answer is not an object", context);
  return PropertiesFromJson(body.value("properties", Json::object()), context);
}

Result<bool> RestCatalog::NamespaceExists(const Namespace& ns) {
  const std::string context = "checking namespace '" + NamespaceToString(ns) + "'";
  http::Request request = http::Request::Get(paths_->Namespace(ns));
  Endpoint endpoint = Endpoint::kLoadNamespaceMetadata;
  if (Supports(Endpoint::kNamespaceExists)) {
    request.method = "HEAD";
    endpoint = Endpoint::kNamespaceExists;
  }
  ARROW_ASSIGN_OR_RAISE(auto response, Call(endpoint, request, context, /*allow_not_found=*/true));
  return response.status != 404;
}

Status RestCatalog::DropNamespace(const Namespace& ns) {
  http::Request request = http::Request::Get(paths_->Namespace(ns));
  request.method = "DELETE";
  return Call(Endpoint::kDropNamespace, request, "dropping namespace '" + NamespaceToString(ns) + "'").status();
}

Status RestCatalog::UpdateNamespaceProperties(const Namespace& ns, const std::vector<std::string>& removals,
                                              const Properties& updates) {
  Json body = {{"removals", removals}, {"updates", updates}};
  return Call(Endpoint::kUpdateProperties, http::Request::Post(paths_->NamespaceProperties(ns), body.dump()),
              "updating properties of namespace '" + NamespaceToString(ns) + "'")
      .status();
}

// ---- tables -----------------------------------------------------------------------------------

Result<std::vector<TableIdentifier>> RestCatalog::ListTables(const Namespace& ns) {
  const std::string context = "listing tables in '" + NamespaceToString(ns) + "'";
  std::vector<TableIdentifier> out;
  std::string page_token;
  while (true) {
    std::string url = paths_->Tables(ns);
    if (!page_token.empty()) url += "?" + http::EncodeQuery({{"pageToken", page_token}});
    ARROW_ASSIGN_OR_RAISE(auto response, Call(Endpoint::kListTables, http::Request::Get(url), context));
    ARROW_ASSIGN_OR_RAISE(Json body, ParseBody(response.body, context));
    if (!body.is_object() || !body.contains("identifiers") || !body["identifiers"].is_array()) {
      return Corrupt("{}: the answer has no 'identifiers' list", context);
    }
    for (const auto& id : body["identifiers"]) {
      LS_ASSIGN_OR_RAISE_CTX(auto parsed, TableIdentifierFromJson(id), "{}", context);
      out.push_back(std::move(parsed));
    }
    auto next = body.find("next-page-token");
    if (next == body.end() || !next->is_string() || next->get<std::string>().empty()) break;
    page_token = next->get<std::string>();
  }
  return out;
}

Result<LoadedTable> RestCatalog::ToLoadedTable(const TableIdentifier& id, const LoadTableResult& result) {
  LoadedTable loaded{id, result.metadata_location.value_or(""), result.metadata, nullptr};
  if (result.config.empty() && result.storage_credentials.empty()) return loaded;
  // Vended credentials: the table's config over the catalog's, then the credential set whose prefix
  // is the longest one the table location starts with.
  Properties props = properties_;
  for (const auto& [k, v] : result.config) props[k] = v;
  const std::pair<std::string, Properties>* best = nullptr;
  for (const auto& cred : result.storage_credentials) {
    if (result.metadata->location.rfind(cred.first, 0) == 0 && (!best || cred.first.size() > best->first.size())) {
      best = &cred;
    }
  }
  if (best) {
    for (const auto& [k, v] : best->second) props[k] = v;
  }
  if (props == properties_) return loaded;
  std::lock_guard lock(io_mutex_);
  auto it = table_ios_.find(props);
  if (it == table_ios_.end()) {
    LS_ASSIGN_OR_RAISE_CTX(auto table_io, io::FileIO::Make(props), "table '{}': vended storage configuration",
                           id.ToString());
    // Credentials rotate: keep a bounded number of FileIOs.
    if (table_ios_.size() >= 64) table_ios_.clear();
    it = table_ios_.emplace(props, table_io).first;
  }
  loaded.io = it->second;
  return loaded;
}

Result<LoadedTable> RestCatalog::CreateOrStage(const CreateTableRequest& request, bool stage) {
  const std::string context = (stage ? "staging table '" : "creating table '") + request.identifier.ToString() + "'";
  if (!request.schema) return InvalidArgument("{}: a schema is required", context);
  CreateTableBody body;
  body.name = request.identifier.name;
  body.location = request.location;
  body.schema = request.schema;
  body.spec = request.spec;
  body.write_order = request.sort_order;
  body.stage_create = stage;
  body.properties = request.properties;
  ARROW_ASSIGN_OR_RAISE(auto response, Call(Endpoint::kCreateTable,
                                            http::Request::Post(paths_->Tables(request.identifier.ns),
                                                                ToJson(body).dump()),
                                            context));
  ARROW_ASSIGN_OR_RAISE(Json json, ParseBody(response.body, context));
  LS_ASSIGN_OR_RAISE_CTX(auto result, LoadTableResultFromJson(json), "{}", context);
  if (!stage && !result.metadata_location) return Corrupt("{}: the answer has no metadata-location", context);
  if (stage) result.metadata_location.reset();
  return ToLoadedTable(request.identifier, result);
}

Result<LoadedTable> RestCatalog::CreateTable(const CreateTableRequest& request) {
  return CreateOrStage(request, /*stage=*/false);
}

Result<LoadedTable> RestCatalog::StageCreateTable(const CreateTableRequest& request) {
  return CreateOrStage(request, /*stage=*/true);
}

Result<LoadedTable> RestCatalog::LoadTable(const TableIdentifier& identifier) {
  const std::string context = "loading table '" + identifier.ToString() + "'";
  // Always the whole history: scans, changelogs and commit validations walk old snapshots.
  const std::string url = paths_->Table(identifier) + "?snapshots=all";
  ARROW_ASSIGN_OR_RAISE(auto response, Call(Endpoint::kLoadTable, http::Request::Get(url), context));
  ARROW_ASSIGN_OR_RAISE(Json json, ParseBody(response.body, context));
  LS_ASSIGN_OR_RAISE_CTX(auto result, LoadTableResultFromJson(json), "{}", context);
  if (!result.metadata_location) return Corrupt("{}: the answer has no metadata-location", context);
  return ToLoadedTable(identifier, result);
}

Result<bool> RestCatalog::TableExists(const TableIdentifier& identifier) {
  const std::string context = "checking table '" + identifier.ToString() + "'";
  http::Request request = http::Request::Get(paths_->Table(identifier));
  Endpoint endpoint = Endpoint::kLoadTable;
  if (Supports(Endpoint::kTableExists)) {
    request.method = "HEAD";
    endpoint = Endpoint::kTableExists;
  }
  ARROW_ASSIGN_OR_RAISE(auto response, Call(endpoint, request, context, /*allow_not_found=*/true));
  return response.status != 404;
}

Status RestCatalog::DropTable(const TableIdentifier& identifier, bool purge) {
  http::Request request =
      http::Request::Get(paths_->Table(identifier) + "?purgeRequested=" + (purge ? "true" : "false"));
  request.method = "DELETE";
  return Call(Endpoint::kDropTable, request, "dropping table '" + identifier.ToString() + "'").status();
}

Status RestCatalog::RenameTable(const TableIdentifier& from, const TableIdentifier& to) {
  Json body = {{"source", TableIdentifierToJson(from)}, {"destination", TableIdentifierToJson(to)}};
  http::Request request = http::Request::Post(paths_->Rename(), body.dump());
  return Call(Endpoint::kRenameTable, request, "renaming table '" + from.ToString() + "' to '" + to.ToString() + "'")
      .status();
}

Result<LoadedTable> RestCatalog::RegisterTable(const TableIdentifier& identifier,
                                               const std::string& metadata_location) {
  const std::string context = "registering table '" + identifier.ToString() + "'";
  Json body = {{"name", identifier.name}, {"metadata-location", metadata_location}};
  ARROW_ASSIGN_OR_RAISE(auto response, Call(Endpoint::kRegisterTable,
                                            http::Request::Post(paths_->Register(identifier.ns), body.dump()), context));
  ARROW_ASSIGN_OR_RAISE(Json json, ParseBody(response.body, context));
  LS_ASSIGN_OR_RAISE_CTX(auto result, LoadTableResultFromJson(json), "{}", context);
  if (!result.metadata_location) result.metadata_location = metadata_location;
  return ToLoadedTable(identifier, result);
}

Result<LoadedTable> RestCatalog::CommitTable(const TableIdentifier& identifier,
                                             const std::vector<iceberg::TableRequirement>& requirements,
                                             const std::vector<iceberg::TableUpdate>& updates) {
  const std::string context = "committing to table '" + identifier.ToString() + "'";
  TableCommit commit{identifier, requirements, updates};
  ARROW_ASSIGN_OR_RAISE(auto response, Call(Endpoint::kUpdateTable,
                                            http::Request::Post(paths_->Table(identifier), ToJson(commit).dump()),
                                            context));
  // Once the server said yes, a body we cannot read does not undo the commit.
  auto json = ParseBody(response.body, context);
  if (!json.ok()) return CommitStateUnknown("{}: committed, but the answer is unreadable: {}", context,
                                            json.status().message());
  auto result = LoadTableResultFromJson(*json);
  if (!result.ok() || !result->metadata_location) {
    return CommitStateUnknown("{}: committed, but the answer has no readable metadata", context);
  }
  return ToLoadedTable(identifier, *result);
}

bool RestCatalog::SupportsMultiTableCommit() const { return Supports(Endpoint::kCommitTransaction); }

Status RestCatalog::CommitTransaction(const std::vector<TableChange>& changes) {
  if (!SupportsMultiTableCommit()) {
    return Unsupported("REST catalog '{}' does not offer POST /v1/{{prefix}}/transactions/commit", name_);
  }
  Json table_changes = Json::array();
  std::string names;
  for (const auto& change : changes) {
    table_changes.push_back(ToJson(TableCommit{change.identifier, change.requirements, change.updates}));
    names += (names.empty() ? "" : ", ") + change.identifier.ToString();
  }
  Json body = {{"table-changes", table_changes}};
  return Call(Endpoint::kCommitTransaction, http::Request::Post(paths_->CommitTransaction(), body.dump()),
              "committing a transaction on " + names)
      .status();
}

}  // namespace lakesync::catalog::rest
