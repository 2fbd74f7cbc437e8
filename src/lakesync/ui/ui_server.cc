#include "lakesync/ui/ui_server.h"

#include "lakesync/common/logging.h"
#include "lakesync/http/status_codes.h"
#include "lakesync/ui/assets.h"

namespace lakesync::ui {
namespace {

using Json = nlohmann::json;

void SendJson(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  // Live data: a browser must ask again, never show a cached page of an older state.
  res.set_header("Cache-Control", "no-store");
  res.set_content(body.dump(), "application/json");
}

void SendError(httplib::Response& res, const Status& st) {
  const int code = http::StatusCodeFor(KindOf(st));
  if (code >= 500) LS_LOG_WARN("ui: answering {}: {}", code, st.message());
  SendJson(res, code,
           {{"error", {{"message", st.message()}, {"kind", std::string(ErrorKindName(KindOf(st)))}, {"code", code}}}});
}

}  // namespace

std::string_view ContentTypeFor(std::string_view path) {
  auto ends = [&](std::string_view ext) {
    return path.size() >= ext.size() && path.substr(path.size() - ext.size()) == ext;
  };
  if (ends(".js")) return "application/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".txt")) return "text/plain; charset=utf-8";
  if (ends(".json")) return "application/json";
  return "text/html; charset=utf-8";
}

Result<std::unique_ptr<UiServer>> UiServer::Make(UiServerOptions options) {
  std::unique_ptr<UiServer> server(new UiServer());
  if (options.http.name == "http") options.http.name = "ui";
  ARROW_ASSIGN_OR_RAISE(server->server_, http::Server::Make(options.http));
  ARROW_ASSIGN_OR_RAISE(server->dashboard_, Dashboard::Make(std::move(options.dashboard)));
  server->auth_ = std::make_unique<catalog::rest::ServerAuth>(std::move(options.auth));
  server->InstallRoutes();
  return server;
}

void UiServer::InstallRoutes() {
  auto& routes = server_->routes();
  for (const auto& asset : EmbeddedAssets()) {
    const std::string path(asset.path);
    const std::string_view body = asset.body;
    routes.Get(path, [path, body](const httplib::Request&, httplib::Response& res) {
      res.set_content(body.data(), body.size(), std::string(ContentTypeFor(path)).c_str());
    });
  }

  // Wraps an API call: authentication, the namespace scope of the caller's grant, errors as JSON.
  auto api = [this](std::function<Result<Json>(const httplib::Request&, const NamespaceFilter&)> call) {
    return [this, call](const httplib::Request& req, httplib::Response& res) {
      auto grant = auth_->Authenticate(req.get_header_value("Authorization"));
      if (!grant.ok()) {
        res.set_header("WWW-Authenticate", "Bearer");
        return SendError(res, grant.status());
      }
      NamespaceFilter visible;
      if (!grant->namespaces.empty()) {
        visible = [g = *grant](const catalog::Namespace& ns) { return g.Covers(ns); };
      }
      auto result = call(req, visible);
      if (!result.ok()) return SendError(res, result.status());
      SendJson(res, 200, *result);
    };
  };
  auto param = [](const httplib::Request& req, const char* name) -> Result<std::string> {
    if (!req.has_param(name)) return InvalidArgument("missing query parameter '{}'", name);
    return req.get_param_value(name);
  };
  routes.Get("/api/v1/overview", api([this](const httplib::Request&, const NamespaceFilter& visible) {
               return dashboard_->Overview(visible);
             }));
  routes.Get("/api/v1/table", api([this, param](const httplib::Request& req, const NamespaceFilter& visible)
                                      -> Result<Json> {
               ARROW_ASSIGN_OR_RAISE(auto name, param(req, "name"));
               return dashboard_->Table(name, visible);
             }));
  routes.Get("/api/v1/jobs", api([this](const httplib::Request&, const NamespaceFilter& visible) {
               return dashboard_->Jobs(visible);
             }));
  routes.Get("/api/v1/job", api([this, param](const httplib::Request& req, const NamespaceFilter& visible)
                                    -> Result<Json> {
               ARROW_ASSIGN_OR_RAISE(auto id, param(req, "sink_id"));
               return dashboard_->Job(id, visible);
             }));
  routes.Get(R"(/api/.*)", [](const httplib::Request& req, httplib::Response& res) {
    SendError(res, NotFound("no such endpoint: {}", req.path));
  });

  // Nothing in the dashboard changes anything: every other method is refused on every path.
  auto refuse = [](const httplib::Request& req, httplib::Response& res) {
    res.set_header("Allow", "GET, HEAD");
    SendJson(res, 405,
             {{"error",
               {{"message", "lakesync ui is read-only: " + req.method + " is not allowed"}, {"code", 405}}}});
  };
  routes.Post(R"(.*)", refuse);
  routes.Put(R"(.*)", refuse);
  routes.Patch(R"(.*)", refuse);
  routes.Delete(R"(.*)", refuse);
  routes.Options(R"(.*)", refuse);
}

}  // namespace lakesync::ui
