// A client for any Iceberg REST catalog (catalog_properties.type: rest), over the shared HTTP client
// (http/client.h) and the protocol defined once in rest_protocol.h.
//
// Properties (the names Java's RESTCatalog and pyiceberg use; lakesync's own are marked):
//   uri                    required: the service root (…/v1/config is asked first)
//   warehouse              optional: sent to /v1/config as ?warehouse=
//   prefix                 optional: the path prefix (usually given by the server's config)
//   token                  a bearer token sent as `Authorization: Bearer <token>`
//   credential             `client_id:client_secret` for the OAuth2 client-credentials flow; the token is
//                          fetched from `oauth2-server-uri` (default <uri>/v1/oauth/tokens) with `scope`
//                          (default `catalog`) and fetched again before it expires
//   rest.auth.type         `none` or `oauth2` (default: oauth2 when token or credential is set, else
//                          none); other schemes (sigv4, google, basic, class names) are kUnsupported
//   header.<Name>          sent as HTTP header <Name> with every request
//   ssl.cabundle           PEM file of CAs that verify an https server (pyiceberg's name)
//   ssl.verify             lakesync: false accepts any server certificate (default true)
//   rest.client.connection-timeout-ms, rest.client.socket-timeout-ms   Java's timeout names
// Every other property (s3.*, gcs.*, ...) configures the FileIO, merged as the spec says: the
// server's `defaults`, then these properties, then the server's `overrides`. A table's `config` and
// matching `storage-credentials` from loadTable (vended credentials) give that table its own FileIO.
//
// Errors map from HTTP answers through rest_protocol.h: 404 → kNotFound, 409 → kAlreadyExists /
// kNamespaceNotEmpty / kCommitConflict, 401/403 → kUnauthenticated / kForbidden, and any 5xx or lost
// answer to a commit → kCommitStateUnknown (the caller never deletes files then and checks whether
// the commit landed). Conflicts are returned, never retried here: the commit loop above retries.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "lakesync/catalog/catalog.h"
#include "lakesync/catalog/rest/rest_protocol.h"
#include "lakesync/http/client.h"

namespace lakesync::catalog::rest {

inline constexpr char kPropUri[] = "uri";
inline constexpr char kPropWarehouse[] = "warehouse";
inline constexpr char kPropPrefix[] = "prefix";
inline constexpr char kPropToken[] = "token";
inline constexpr char kPropCredential[] = "credential";
inline constexpr char kPropOAuth2ServerUri[] = "oauth2-server-uri";
inline constexpr char kPropScope[] = "scope";
inline constexpr char kPropAuthType[] = "rest.auth.type";
inline constexpr char kPropHeaderPrefix[] = "header.";
inline constexpr char kPropCaBundle[] = "ssl.cabundle";
inline constexpr char kPropVerify[] = "ssl.verify";
inline constexpr char kPropConnectTimeout[] = "rest.client.connection-timeout-ms";
inline constexpr char kPropSocketTimeout[] = "rest.client.socket-timeout-ms";

// The properties above that the REST client reads (for the catalog config's known-keys check).
const std::set<std::string>& RestClientPropertyNames();

// Checks the properties without contacting the server. Errors: kInvalidArgument naming the key
// (missing uri, malformed credential or timeout); kUnsupported for an auth type other than none/oauth2.
Status ValidateRestProperties(const std::string& catalog_name, const Properties& properties);

class RestCatalog : public Catalog {
 public:
  // Validates the properties, fetches a token when configured, asks GET /v1/config and merges it.
  // Errors: as ValidateRestProperties; kUnavailable when the server cannot be reached;
  // kUnauthenticated/kForbidden when it refuses us.
  static Result<std::shared_ptr<RestCatalog>> Make(std::string name, Properties properties);

  std::string name() const override { return name_; }
  std::shared_ptr<io::FileIO> io() const override { return io_; }

  Result<std::vector<Namespace>> ListNamespaces(const Namespace& parent) override;
  Status CreateNamespace(const Namespace& ns, const Properties& properties) override;
  Result<Properties> LoadNamespaceMetadata(const Namespace& ns) override;
  Result<bool> NamespaceExists(const Namespace& ns) override;
  Status DropNamespace(const Namespace& ns) override;
  Status UpdateNamespaceProperties(const Namespace& ns, const std::vector<std::string>& removals,
                                   const Properties& updates) override;

  Result<std::vector<TableIdentifier>> ListTables(const Namespace& ns) override;
  Result<LoadedTable> CreateTable(const CreateTableRequest& request) override;
  Result<LoadedTable> StageCreateTable(const CreateTableRequest& request) override;
  Result<LoadedTable> LoadTable(const TableIdentifier& identifier) override;
  Result<bool> TableExists(const TableIdentifier& identifier) override;
  Status DropTable(const TableIdentifier& identifier, bool purge) override;
  Status RenameTable(const TableIdentifier& from, const TableIdentifier& to) override;
  Result<LoadedTable> RegisterTable(const TableIdentifier& identifier, const std::string& metadata_location) override;
  Result<LoadedTable> CommitTable(const TableIdentifier& identifier,
                                  const std::vector<iceberg::TableRequirement>& requirements,
                                  const std::vector<iceberg::TableUpdate>& updates) override;
  // When the server advertises POST /v1/{prefix}/transactions/commit.
  bool SupportsMultiTableCommit() const override;
  Status CommitTransaction(const std::vector<TableChange>& changes) override;

  // The merged properties (defaults < client < overrides) and the endpoints the server offers.
  const Properties& properties() const { return properties_; }
  bool Supports(Endpoint endpoint) const;

 private:
  RestCatalog(std::string name, Properties properties) : name_(std::move(name)), client_props_(std::move(properties)) {}
  Status Initialize();
  Status ConfigureHttp(const Properties& props);
  // Sends a request with the current token; answers outside 2xx become errors for `endpoint`.
  Result<http::Response> Call(Endpoint endpoint, http::Request request, std::string_view context,
                              bool allow_not_found = false);
  Result<std::string> AuthorizationHeader();
  Status FetchToken();
  Result<LoadedTable> ToLoadedTable(const TableIdentifier& id, const LoadTableResult& result);
  Result<LoadedTable> CreateOrStage(const CreateTableRequest& request, bool stage);

  std::string name_;
  Properties client_props_;
  Properties properties_;  // merged
  std::set<std::string> endpoints_;
  std::unique_ptr<Paths> paths_;
  std::shared_ptr<http::Client> http_;
  std::shared_ptr<io::FileIO> io_;

  // OAuth2 state (guarded by auth_mutex_).
  std::mutex auth_mutex_;
  std::string auth_type_;  // "none" or "oauth2"
  std::string token_;
  std::string token_uri_;
  std::chrono::steady_clock::time_point token_refresh_at_ = std::chrono::steady_clock::time_point::max();

  // Per-table FileIOs for vended credentials, by their property set.
  std::mutex io_mutex_;
  std::map<Properties, std::shared_ptr<io::FileIO>> table_ios_;
};

}  // namespace lakesync::catalog::rest
