// The Iceberg REST catalog server behind `lakesync catalog serve`: serves any catalog::Catalog (SQL on
// SQLite, filesystem) over the protocol in rest_protocol.h, on the shared http::Server.
//
// - Routes: config, OAuth2 tokens, namespaces (list with paging, create, load, exists, drop,
//   properties), tables (list with paging, create and stage-create, load with ETag/If-None-Match and
//   snapshots=all|refs, exists, commit, drop with purge, register, rename, metrics) and, when the
//   catalog can (SupportsMultiTableCommit), the atomic transactions/commit. Paths work with or
//   without the configured prefix.
// - Commits go to Catalog::CommitTable / CommitTransaction: the same requirement and update code the
//   SQL catalog uses. A failed requirement or a lost race is 409; 5xx only when the catalog itself
//   cannot tell whether the commit happened (kCommitStateUnknown) or failed for a server-side reason;
//   nothing is ever deleted after an ambiguous failure.
// - Idempotency-Key on mutating requests: a retried request with the same key gets the first answer
//   again (for `idempotency_lifetime`, in memory) instead of being applied twice.
// - Every name is checked (rest_protocol.h ValidateName) before it reaches the catalog, and table
//   locations and registered metadata files must lie under `warehouse` (when given).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "lakesync/catalog/catalog.h"
#include "lakesync/catalog/rest/server_auth.h"
#include "lakesync/http/server.h"

namespace lakesync::catalog::rest {

struct RestServerOptions {
  std::shared_ptr<Catalog> catalog;
  http::ServerOptions http;  // listen address, worker threads, logging
  std::optional<ServerAuthConfig> auth;  // nullopt: no authentication
  // Table locations (create, register, SetLocation, write.*.path) must be under this location;
  // empty: any location is accepted.
  std::string warehouse;
  // An optional path prefix, advertised in the config's overrides; requests may use it or none.
  std::string prefix;
  Properties config_defaults;
  Properties config_overrides;
  std::chrono::seconds idempotency_lifetime{1800};
};

class RestCatalogServer {
 public:
  // Errors: kInvalidArgument for a null catalog or a prefix that is not one plain path segment.
  static Result<std::unique_ptr<RestCatalogServer>> Make(RestServerOptions options);
  ~RestCatalogServer();

  // As http::Server::Start: binds and serves on a background thread.
  Status Start();
  void Stop();
  int port() const;
  std::string url() const;
  http::Server& http_server();

 private:
  struct Impl;
  explicit RestCatalogServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lakesync::catalog::rest
