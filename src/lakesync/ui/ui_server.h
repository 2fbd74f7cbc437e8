// `lakesync ui` as a server: the dashboard's JSON API (dashboard_api.h) and its embedded pages
// (assets.h) on the http module's server (port 0, worker pool, request logs, /healthz, graceful stop).
//
// Read-only by construction: only GET and HEAD are routed; every other method on every path is
// answered 405 (Allow: GET, HEAD). With auth (the bearer tokens of `lakesync catalog serve`'s auth
// file, catalog/rest/server_auth.h) every /api/ request needs a valid token, and a token scoped to
// namespaces sees only those; the static pages hold no data and are served to anyone, and they send
// the token the user types in with each API request.
#pragma once

#include <memory>
#include <optional>

#include "lakesync/catalog/rest/server_auth.h"
#include "lakesync/http/server.h"
#include "lakesync/ui/dashboard_api.h"

namespace lakesync::ui {

struct UiServerOptions {
  http::ServerOptions http;
  std::optional<catalog::rest::ServerAuthConfig> auth;  // nullopt: no authentication
  DashboardOptions dashboard;
};

class UiServer {
 public:
  static Result<std::unique_ptr<UiServer>> Make(UiServerOptions options);
  Status Start() { return server_->Start(); }
  std::string url() const { return server_->url(); }
  http::Server& http_server() { return *server_; }
  Dashboard& dashboard() { return *dashboard_; }

 private:
  UiServer() = default;
  void InstallRoutes();

  std::unique_ptr<http::Server> server_;
  std::unique_ptr<Dashboard> dashboard_;
  std::unique_ptr<catalog::rest::ServerAuth> auth_;
};

}  // namespace lakesync::ui
