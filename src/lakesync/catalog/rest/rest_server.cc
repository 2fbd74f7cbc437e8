#include "lakesync/catalog/rest/rest_server.h"

#include <charconv>
#include <deque>
#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lakesync/catalog/rest/rest_protocol.h"
#include "lakesync/common/logging.h"
#include "lakesync/http/status_codes.h"
#include "lakesync/http/url.h"
#include "lakesync/iceberg/model/json_serde.h"
#include "lakesync/io/file_io.h"

namespace lakesync::catalog::rest {
namespace {

using Json = nlohmann::json;

// The spec answers unsupported operations with 406; every other code comes from the one table.
int RestStatusCode(ErrorKind kind) { return kind == ErrorKind::kUnsupported ? 406 : http::StatusCodeFor(kind); }

bool IsWrite(Endpoint e) {
  switch (e) {
    case Endpoint::kCreateNamespace:
    case Endpoint::kDropNamespace:
    case Endpoint::kUpdateProperties:
    case Endpoint::kCreateTable:
    case Endpoint::kRegisterTable:
    case Endpoint::kUpdateTable:
    case Endpoint::kDropTable:
    case Endpoint::kRenameTable:
    case Endpoint::kCommitTransaction: return true;
    default: return false;
  }
}

// Table properties that place files: they must stay inside the warehouse like the location itself.
constexpr const char* kPathProperties[] = {"write.data.path", "write.metadata.path", "write.object-storage.path",
                                           "write.folder-storage.path"};

struct Route {
  Endpoint endpoint;
  Namespace ns;
  std::optional<TableIdentifier> table;
};

// An error that becomes an HTTP answer: its status, and whether a "not found" is about a namespace.
struct HttpError {
  Status status;
  bool about_namespace = false;
};

}  // namespace

struct RestCatalogServer::Impl {
  RestServerOptions options;
  std::unique_ptr<http::Server> server;
  ServerAuth auth;
  std::string warehouse;  // normalised

  struct Cached {
    int status;
    std::string body;
    std::string content_type;
    std::chrono::steady_clock::time_point expires;
  };
  std::mutex idempotency_mutex;
  std::map<std::string, Cached> idempotency;
  std::deque<std::string> idempotency_order;

  explicit Impl(RestServerOptions o) : options(std::move(o)), auth(options.auth) {}

  Catalog& catalog() { return *options.catalog; }

  // A namespace's properties as clients see them: the stored ones, plus "location" where none is
  // stored, as Java's JdbcCatalog (behind Apache's REST fixture) reports it. Clients derive new
  // table locations from it: without it Trino creates a table eagerly (no stage-create) and then
  // refuses it because the location already holds the metadata file it just wrote.
  Result<Properties> NamespaceProperties(const Namespace& ns) {
    ARROW_ASSIGN_OR_RAISE(Properties props, catalog().LoadNamespaceMetadata(ns));
    if (!props.count("location")) {
      ARROW_ASSIGN_OR_RAISE(auto location, catalog().DefaultNamespaceLocation(ns));
      if (location) props["location"] = *location;
    }
    return props;
  }

  // ---- plumbing -------------------------------------------------------------------------------

  static void SendJson(httplib::Response& res, int status, const Json& body) {
    res.status = status;
    res.set_content(body.dump(), "application/json");
  }

  void SendError(httplib::Response& res, const Status& st, bool about_namespace) {
    const int code = RestStatusCode(KindOf(st));
    if (code >= 500) LS_LOG_WARN("rest-catalog: answering {}: {}", code, st.message());
    SendJson(res, code, ErrorResponseJson(st, code, about_namespace));
  }

  // Splits the raw request target into percent-decoded path segments, so that an encoded '/' inside
  // a name stays inside its segment (and is then refused by ValidateName).
  static Result<std::vector<std::string>> Segments(const httplib::Request& req) {
    std::string target = req.target.empty() ? req.path : req.target;
    target = target.substr(0, target.find('?'));
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= target.size()) {
      size_t slash = target.find('/', start);
      if (slash == std::string::npos) slash = target.size();
      if (slash > start) {
        ARROW_ASSIGN_OR_RAISE(auto seg, http::PercentDecode(std::string_view(target).substr(start, slash - start)));
        out.push_back(std::move(seg));
      }
      start = slash + 1;
    }
    return out;
  }

  // Maps a path (after "v1" and the optional prefix) and a method to an endpoint.
  Result<Route> Match(const std::string& method, const std::vector<std::string>& s) {
    const bool get = method == "GET";
    const bool head = method == "HEAD";
    auto not_found = [&] { return NotFound("no such endpoint: {} /{}", method, fmt::join(s, "/")); };
    auto no_method = [&] { return InvalidArgument("method {} is not allowed on /{}", method, fmt::join(s, "/")); };
    if (s.empty()) return not_found();
    if (s[0] == "tables" && s.size() == 2 && s[1] == "rename") {
      if (method != "POST") return no_method();
      return Route{Endpoint::kRenameTable, {}, std::nullopt};
    }
    if (s[0] == "transactions" && s.size() == 2 && s[1] == "commit") {
      if (method != "POST") return no_method();
      return Route{Endpoint::kCommitTransaction, {}, std::nullopt};
    }
    if (s[0] != "namespaces") return not_found();
    if (s.size() == 1) {
      if (get) return Route{Endpoint::kListNamespaces, {}, std::nullopt};
      if (method == "POST") return Route{Endpoint::kCreateNamespace, {}, std::nullopt};
      return no_method();
    }
    ARROW_ASSIGN_OR_RAISE(Namespace ns, DecodeNamespace(s[1]));
    if (s.size() == 2) {
      if (get) return Route{Endpoint::kLoadNamespaceMetadata, ns, std::nullopt};
      if (head) return Route{Endpoint::kNamespaceExists, ns, std::nullopt};
      if (method == "DELETE") return Route{Endpoint::kDropNamespace, ns, std::nullopt};
      return no_method();
    }
    if (s.size() == 3) {
      if (s[2] == "properties") {
        if (method != "POST") return no_method();
        return Route{Endpoint::kUpdateProperties, ns, std::nullopt};
      }
      if (s[2] == "register") {
        if (method != "POST") return no_method();
        return Route{Endpoint::kRegisterTable, ns, std::nullopt};
      }
      if (s[2] == "tables") {
        if (get) return Route{Endpoint::kListTables, ns, std::nullopt};
        if (method == "POST") return Route{Endpoint::kCreateTable, ns, std::nullopt};
        return no_method();
      }
      return not_found();
    }
    if (s[2] != "tables") return not_found();
    ARROW_RETURN_NOT_OK(ValidateName(s[3], "table name"));
    TableIdentifier id{ns, s[3]};
    if (s.size() == 4) {
      if (get) return Route{Endpoint::kLoadTable, ns, id};
      if (head) return Route{Endpoint::kTableExists, ns, id};
      if (method == "POST") return Route{Endpoint::kUpdateTable, ns, id};
      if (method == "DELETE") return Route{Endpoint::kDropTable, ns, id};
      return no_method();
    }
    if (s.size() == 5 && s[4] == "metrics") {
      if (method != "POST") return no_method();
      return Route{Endpoint::kReportMetrics, ns, id};
    }
    return not_found();
  }

  static Status Require(const Grant& grant, const Namespace& ns) {
    if (grant.Covers(ns)) return Status::OK();
    return MakeError(ErrorKind::kForbidden,
                     fmt::format("this token may not access namespace '{}'", NamespaceToString(ns)));
  }

  Status CheckLocation(const std::string& location, std::string_view what) {
    if (warehouse.empty()) return Status::OK();
    auto normalized = io::NormalizeLocation(location);
    if (!normalized.ok()) return InvalidArgument("{} '{}' is not a valid location", what, location);
    const std::string& l = *normalized;
    const bool dots = l.find("/../") != std::string::npos || l.find("/./") != std::string::npos ||
                      l.ends_with("/..") || l.ends_with("/.");
    if (dots || !(l == warehouse || l.rfind(warehouse + "/", 0) == 0)) {
      return MakeError(ErrorKind::kForbidden,
                       fmt::format("{} '{}' is outside this catalog's warehouse {}", what, location, warehouse));
    }
    return Status::OK();
  }

  Status CheckPathProperties(const Properties& props) {
    for (const char* key : kPathProperties) {
      if (auto it = props.find(key); it != props.end()) ARROW_RETURN_NOT_OK(CheckLocation(it->second, key));
    }
    return Status::OK();
  }

  Status CheckUpdates(const std::vector<iceberg::TableUpdate>& updates) {
    for (const auto& u : updates) {
      if (auto* loc = std::get_if<iceberg::SetLocation>(&u)) ARROW_RETURN_NOT_OK(CheckLocation(loc->location, "location"));
      if (auto* props = std::get_if<iceberg::SetProperties>(&u)) ARROW_RETURN_NOT_OK(CheckPathProperties(props->updates));
      if (auto* snap = std::get_if<iceberg::AddSnapshot>(&u)) {
        if (snap->snapshot && !snap->snapshot->manifest_list.empty()) {
          ARROW_RETURN_NOT_OK(CheckLocation(snap->snapshot->manifest_list, "manifest-list"));
        }
      }
    }
    return Status::OK();
  }

  // A "not found" from a table operation names the namespace when that is what is missing.
  // A table that is not found because its namespace is not: the message says so, and the error type
  // is NoSuchNamespaceException only where the spec lists it (creating a table). loadTable,
  // updateTable and dropTable answer NoSuchTableException: Java's RESTSessionCatalog passes any other
  // type through, and Spark resolves `db.t.snapshots` by catching NoSuchTableException for `db.t`.
  HttpError TableError(const Status& st, const Namespace& ns, bool namespace_error_type) {
    if (KindOf(st) != ErrorKind::kNotFound) return {st, false};
    auto exists = catalog().NamespaceExists(ns);
    if (exists.ok() && !*exists) {
      return {NotFound("namespace '{}' does not exist", NamespaceToString(ns)), namespace_error_type};
    }
    return {st, false};
  }

  static Result<std::optional<size_t>> PageParam(const httplib::Request& req, const char* name) {
    if (!req.has_param(name)) return std::optional<size_t>();
    const std::string v = req.get_param_value(name);
    if (v.empty()) return std::optional<size_t>();
    size_t out = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || end != v.data() + v.size() || (std::string_view(name) == "pageSize" && out == 0)) {
      return InvalidArgument("{} must be a positive integer, got '{}'", name, v);
    }
    return std::optional<size_t>(out);
  }

  // Slices a listing by pageToken (an offset) and pageSize; sets next-page-token when more remain.
  template <typename T>
  static Result<std::vector<T>> Page(const httplib::Request& req, std::vector<T> all, Json& body) {
    ARROW_ASSIGN_OR_RAISE(auto token, PageParam(req, "pageToken"));
    ARROW_ASSIGN_OR_RAISE(auto size, PageParam(req, "pageSize"));
    const size_t start = std::min(all.size(), token.value_or(0));
    const size_t end = size ? std::min(all.size(), start + *size) : all.size();
    if (end < all.size()) body["next-page-token"] = std::to_string(end);
    return std::vector<T>(all.begin() + start, all.begin() + end);
  }

  Json LoadResultJson(const LoadedTable& loaded, bool refs_only) {
    LoadTableResult result;
    if (!loaded.metadata_location.empty()) result.metadata_location = loaded.metadata_location;
    if (refs_only) {
      // Only the snapshots refs point at; the stored metadata keeps its whole history.
      auto copy = std::make_shared<iceberg::TableMetadata>(*loaded.metadata);
      std::set<int64_t> referenced;
      for (const auto& [name, ref] : copy->refs) referenced.insert(ref.snapshot_id);
      std::erase_if(copy->snapshots, [&](const auto& s) { return !referenced.count(s->snapshot_id); });
      result.metadata = copy;
    } else {
      result.metadata = loaded.metadata;
    }
    return ToJson(result);
  }

  // ---- handlers -------------------------------------------------------------------------------

  Result<Json> Config(const httplib::Request& req) {
    ConfigResponse config;
    config.defaults = options.config_defaults;
    config.overrides = options.config_overrides;
    if (!options.prefix.empty()) config.overrides["prefix"] = options.prefix;
    config.endpoints.emplace();
    for (const auto& info : Endpoints()) {
      if (info.endpoint == Endpoint::kGetConfig || info.endpoint == Endpoint::kGetToken) continue;
      if (info.endpoint == Endpoint::kCommitTransaction && !catalog().SupportsMultiTableCommit()) continue;
      config.endpoints->push_back(EndpointId(info.endpoint));
    }
    config.idempotency_key_lifetime = fmt::format("PT{}S", options.idempotency_lifetime.count());
    return ToJson(config);
  }

  void Token(const httplib::Request& req, httplib::Response& res) {
    auto param = [&](const char* name) { return req.has_param(name) ? req.get_param_value(name) : std::string(); };
    // The credentials come as form fields (what pyiceberg, Java, DuckDB and lakesync send); HTTP Basic
    // client authentication (RFC 6749 2.3.1) is not accepted.
    auto issued = auth.IssueToken(param("grant_type"), param("client_id"), param("client_secret"));
    if (!issued.ok()) {
      const ErrorKind kind = KindOf(issued.status());
      const char* error = kind == ErrorKind::kUnauthenticated ? "invalid_client"
                          : kind == ErrorKind::kInvalidArgument ? "unsupported_grant_type"
                                                                 : "invalid_request";
      SendJson(res, kind == ErrorKind::kUnauthenticated ? 401 : 400,
               Json{{"error", error}, {"error_description", issued.status().message()}});
      return;
    }
    SendJson(res, 200, ToJson(TokenResponse{issued->first, "bearer", issued->second}));
  }

  // Runs the endpoint; returns the answer's status code and body (empty for 204/304).
  Result<std::pair<int, Json>> Handle(const Route& route, const Grant& grant, const httplib::Request& req,
                                      httplib::Response& res, HttpError& error_hint) {
    using R = Result<std::pair<int, Json>>;
    const Json kNone;
    auto body = [&]() { return ParseBody(req.body, InfoFor(route.endpoint).operation); };
    switch (route.endpoint) {
      case Endpoint::kListNamespaces: {
        Namespace parent;
        if (req.has_param("parent") && !req.get_param_value("parent").empty()) {
          ARROW_ASSIGN_OR_RAISE(parent, DecodeNamespace(req.get_param_value("parent")));
          error_hint.about_namespace = true;
          ARROW_ASSIGN_OR_RAISE(bool exists, catalog().NamespaceExists(parent));
          if (!exists) return NotFound("namespace '{}' does not exist", NamespaceToString(parent));
        }
        if (!grant.Sees(parent) && !parent.empty()) ARROW_RETURN_NOT_OK(Require(grant, parent));
        ARROW_ASSIGN_OR_RAISE(auto all, catalog().ListNamespaces(parent));
        std::erase_if(all, [&](const Namespace& ns) { return !grant.Sees(ns); });
        Json out = Json::object();
        ARROW_ASSIGN_OR_RAISE(auto page, Page(req, std::move(all), out));
        out["namespaces"] = Json::array();
        for (const auto& ns : page) out["namespaces"].push_back(NamespaceToJson(ns));
        return R(std::make_pair(200, out));
      }
      case Endpoint::kCreateNamespace: {
        ARROW_ASSIGN_OR_RAISE(Json j, body());
        if (!j.is_object() || !j.contains("namespace")) return InvalidArgument("createNamespace: 'namespace' is required");
        ARROW_ASSIGN_OR_RAISE(Namespace ns, NamespaceFromJson(j["namespace"]));
        if (ns.empty()) return InvalidArgument("createNamespace: the namespace must have at least one level");
        ARROW_RETURN_NOT_OK(Require(grant, ns));
        ARROW_ASSIGN_OR_RAISE(Properties props, PropertiesFromJson(j.value("properties", Json::object()), "properties"));
        if (auto it = props.find("location"); it != props.end()) ARROW_RETURN_NOT_OK(CheckLocation(it->second, "location"));
        error_hint.about_namespace = true;
        ARROW_RETURN_NOT_OK(catalog().CreateNamespace(ns, props));
        ARROW_ASSIGN_OR_RAISE(auto stored, NamespaceProperties(ns));
        return R(std::make_pair(200, Json{{"namespace", NamespaceToJson(ns)}, {"properties", stored}}));
      }
      case Endpoint::kLoadNamespaceMetadata: {
        ARROW_RETURN_NOT_OK(Require(grant, route.ns));
        error_hint.about_namespace = true;
        ARROW_ASSIGN_OR_RAISE(auto props, NamespaceProperties(route.ns));
        return R(std::make_pair(200, Json{{"namespace", NamespaceToJson(route.ns)}, {"properties", props}}));
      }
      case Endpoint::kNamespaceExists: {
        ARROW_RETURN_NOT_OK(Require(grant, route.ns));
        ARROW_ASSIGN_OR_RAISE(bool exists, catalog().NamespaceExists(route.ns));
        return R(std::make_pair(exists ? 204 : 404, kNone));
      }
      case Endpoint::kDropNamespace: {
        ARROW_RETURN_NOT_OK(Require(grant, route.ns));
        error_hint.about_namespace = true;
        ARROW_RETURN_NOT_OK(catalog().DropNamespace(route.ns));
        return R(std::make_pair(204, kNone));
      }
      case Endpoint::kUpdateProperties: {
        ARROW_RETURN_NOT_OK(Require(grant, route.ns));
        ARROW_ASSIGN_OR_RAISE(Json j, body());
        ARROW_ASSIGN_OR_RAISE(auto request, UpdatePropertiesRequestFromJson(j));
        if (auto it = request.updates.find("location"); it != request.updates.end()) {
          ARROW_RETURN_NOT_OK(CheckLocation(it->second, "location"));
        }
        error_hint.about_namespace = true;
        ARROW_ASSIGN_OR_RAISE(auto before, catalog().LoadNamespaceMetadata(route.ns));
        ARROW_RETURN_NOT_OK(catalog().UpdateNamespaceProperties(route.ns, request.removals, request.updates));
        Json removed = Json::array(), missing = Json::array(), updated = Json::array();
        for (const auto& r : request.removals) (before.count(r) ? removed : missing).push_back(r);
        for (const auto& [k, v] : request.updates) updated.push_back(k);
        return R(std::make_pair(200, Json{{"updated", updated}, {"removed", removed}, {"missing", missing}}));
      }
      case Endpoint::kListTables: {
        ARROW_RETURN_NOT_OK(Require(grant, route.ns));
        error_hint.about_namespace = true;
        ARROW_ASSIGN_OR_RAISE(auto all, catalog().ListTables(route.ns));
        Json out = Json::object();
        ARROW_ASSIGN_OR_RAISE(auto page, Page(req, std::move(all), out));
        out["identifiers"] = Json::array();
        for (const auto& id : page) out["identifiers"].push_back(TableIdentifierToJson(id));
        return R(std::make_pair(200, out));
      }
      case Endpoint::kCreateTable: {
        ARROW_RETURN_NOT_OK(Require(grant, route.ns));
        ARROW_ASSIGN_OR_RAISE(Json j, body());
        ARROW_ASSIGN_OR_RAISE(auto create, CreateTableBodyFromJson(j));
        if (create.location) ARROW_RETURN_NOT_OK(CheckLocation(*create.location, "location"));
        ARROW_RETURN_NOT_OK(CheckPathProperties(create.properties));
        CreateTableRequest request{TableIdentifier{route.ns, create.name}, create.schema, create.spec,
                                   create.write_order, create.location, create.properties};
        auto created = create.stage_create ? catalog().StageCreateTable(request) : catalog().CreateTable(request);
        if (!created.ok()) {
          error_hint = TableError(created.status(), route.ns, /*namespace_error_type=*/true);
          return error_hint.status;
        }
        if (created->metadata) ARROW_RETURN_NOT_OK(CheckLocation(created->metadata->location, "location"));
        return R(std::make_pair(200, LoadResultJson(*created, false)));
      }
      case Endpoint::kRegisterTable: {
        ARROW_RETURN_NOT_OK(Require(grant, route.ns));
        ARROW_ASSIGN_OR_RAISE(Json j, body());
        ARROW_ASSIGN_OR_RAISE(auto reg, RegisterTableBodyFromJson(j));
        if (reg.overwrite) return InvalidArgument("registerTable: overwrite is not supported by this server");
        ARROW_RETURN_NOT_OK(CheckLocation(reg.metadata_location, "metadata-location"));
        ARROW_ASSIGN_OR_RAISE(bool ns_exists, catalog().NamespaceExists(route.ns));
        if (!ns_exists) {
          error_hint.about_namespace = true;
          return NotFound("namespace '{}' does not exist", NamespaceToString(route.ns));
        }
        ARROW_ASSIGN_OR_RAISE(auto loaded, catalog().RegisterTable(TableIdentifier{route.ns, reg.name},
                                                                   reg.metadata_location));
        return R(std::make_pair(200, LoadResultJson(loaded, false)));
      }
      case Endpoint::kLoadTable: {
        ARROW_RETURN_NOT_OK(Require(grant, route.ns));
        std::string mode = req.has_param("snapshots") ? req.get_param_value("snapshots") : "all";
        if (mode != "all" && mode != "refs") {
          return InvalidArgument("snapshots must be 'all' or 'refs', got '{}'", mode);
        }
        auto loaded = catalog().LoadTable(*route.table);
        if (!loaded.ok()) {
          error_hint = TableError(loaded.status(), route.ns, /*namespace_error_type=*/false);
          return error_hint.status;
        }
        const std::string key = loaded->metadata_location + "|" + mode;
        const std::string etag = fmt::format("\"{:016x}\"", std::hash<std::string>{}(key));
        res.set_header("ETag", etag);
        if (req.get_header_value("If-None-Match") == etag) return R(std::make_pair(304, kNone));
        // A metadata location names immutable content: its answer is encoded once.
        if (auto cached = CachedBody(key)) {
          res.set_content(*cached, "application/json");
          return R(std::make_pair(200, kNone));
        }
        std::string body = LoadResultJson(*loaded, mode == "refs").dump();
        RememberBody(key, body);
        res.set_content(body, "application/json");
        return R(std::make_pair(200, kNone));
      }
      case Endpoint::kTableExists: {
        ARROW_RETURN_NOT_OK(Require(grant, route.ns));
        ARROW_ASSIGN_OR_RAISE(bool exists, catalog().TableExists(*route.table));
        return R(std::make_pair(exists ? 204 : 404, kNone));
      }
      case Endpoint::kUpdateTable: {
        ARROW_RETURN_NOT_OK(Require(grant, route.ns));
        ARROW_ASSIGN_OR_RAISE(Json j, body());
        ARROW_ASSIGN_OR_RAISE(auto commit, TableCommitFromJson(j));
        if (commit.identifier && !(*commit.identifier == *route.table)) {
          return InvalidArgument("the body's identifier {} does not match the path's table {}",
                                 commit.identifier->ToString(), route.table->ToString());
        }
        ARROW_RETURN_NOT_OK(CheckUpdates(commit.updates));
        const bool creates = std::any_of(commit.requirements.begin(), commit.requirements.end(), [](const auto& r) {
          return std::holds_alternative<iceberg::AssertCreate>(r);
        });
        if (creates) {
          ARROW_ASSIGN_OR_RAISE(bool ns_exists, catalog().NamespaceExists(route.ns));
          if (!ns_exists) {
            error_hint.about_namespace = true;
            return NotFound("namespace '{}' does not exist", NamespaceToString(route.ns));
          }
        } else {
          ARROW_ASSIGN_OR_RAISE(bool exists, catalog().TableExists(*route.table));
          if (!exists) {
            error_hint = TableError(NotFound("table '{}' does not exist", route.table->ToString()), route.ns,
                                    /*namespace_error_type=*/false);
            return error_hint.status;
          }
        }
        ARROW_ASSIGN_OR_RAISE(auto committed,
                              catalog().CommitTable(*route.table, commit.requirements, commit.updates));
        Json out = LoadResultJson(committed, false);
        out.erase("config");
        return R(std::make_pair(200, out));
      }
      case Endpoint::kDropTable: {
        ARROW_RETURN_NOT_OK(Require(grant, route.ns));
        const std::string purge = req.has_param("purgeRequested") ? req.get_param_value("purgeRequested") : "false";
        if (purge != "true" && purge != "false") return InvalidArgument("purgeRequested must be true or false");
        Status st = catalog().DropTable(*route.table, purge == "true");
        if (!st.ok()) {
          error_hint = TableError(st, route.ns, /*namespace_error_type=*/false);
          return error_hint.status;
        }
        return R(std::make_pair(204, kNone));
      }
      case Endpoint::kRenameTable: {
        ARROW_ASSIGN_OR_RAISE(Json j, body());
        ARROW_ASSIGN_OR_RAISE(auto rename, RenameTableBodyFromJson(j));
        ARROW_RETURN_NOT_OK(Require(grant, rename.source.ns));
        ARROW_RETURN_NOT_OK(Require(grant, rename.destination.ns));
        Status st = catalog().RenameTable(rename.source, rename.destination);
        if (!st.ok() && KindOf(st) == ErrorKind::kNotFound) {
          // The spec: 404 for a missing source table or destination namespace, with the type saying which.
          auto dest_ns = catalog().NamespaceExists(rename.destination.ns);
          error_hint.about_namespace = dest_ns.ok() && !*dest_ns;
        }
        ARROW_RETURN_NOT_OK(st);
        return R(std::make_pair(204, kNone));
      }
      case Endpoint::kReportMetrics: {
        ARROW_RETURN_NOT_OK(Require(grant, route.ns));
        ARROW_ASSIGN_OR_RAISE(Json j, body());
        if (!j.is_object()) return InvalidArgument("reportMetrics: the body must be an object");
        const Json type = j.value("report-type", Json("unknown"));
        LogEvent(spdlog::level::info, "rest-catalog metrics report",
                 {{"table", route.table->ToString()}, {"report_type", type.is_string() ? type : Json("unknown")}});
        return R(std::make_pair(204, kNone));
      }
      case Endpoint::kCommitTransaction: {
        if (!catalog().SupportsMultiTableCommit()) {
          return Unsupported("catalog '{}' cannot commit several tables atomically", catalog().name());
        }
        ARROW_ASSIGN_OR_RAISE(Json j, body());
        if (!j.is_object() || !j.contains("table-changes") || !j["table-changes"].is_array()) {
          return InvalidArgument("commitTransaction: 'table-changes' must be a list");
        }
        std::vector<TableChange> changes;
        for (const auto& c : j["table-changes"]) {
          ARROW_ASSIGN_OR_RAISE(auto commit, TableCommitFromJson(c));
          if (!commit.identifier) return InvalidArgument("commitTransaction: every table change needs 'identifier'");
          ARROW_RETURN_NOT_OK(Require(grant, commit.identifier->ns));
          ARROW_RETURN_NOT_OK(CheckUpdates(commit.updates));
          changes.push_back(TableChange{*commit.identifier, commit.requirements, commit.updates});
        }
        ARROW_RETURN_NOT_OK(catalog().CommitTransaction(changes));
        return R(std::make_pair(204, kNone));
      }
      default: break;
    }
    return NotFound("no such endpoint");
  }

  // Encoded loadTable answers by "<metadata location>|<snapshots mode>" (a few, most recent).
  std::mutex body_mutex;
  std::map<std::string, std::shared_ptr<const std::string>> bodies;
  std::deque<std::string> body_order;

  std::shared_ptr<const std::string> CachedBody(const std::string& key) {
    std::lock_guard lock(body_mutex);
    auto it = bodies.find(key);
    return it == bodies.end() ? nullptr : it->second;
  }

  void RememberBody(const std::string& key, std::string body) {
    constexpr size_t kMaxBodies = 64;
    std::lock_guard lock(body_mutex);
    if (bodies.count(key)) return;
    bodies[key] = std::make_shared<const std::string>(std::move(body));
    body_order.push_back(key);
    if (body_order.size() > kMaxBodies) {
      bodies.erase(body_order.front());
      body_order.pop_front();
    }
  }

  std::optional<Cached> Replay(const std::string& key) {
    std::lock_guard lock(idempotency_mutex);
    auto it = idempotency.find(key);
    if (it == idempotency.end()) return std::nullopt;
    if (std::chrono::steady_clock::now() >= it->second.expires) return std::nullopt;
    return it->second;
  }

  void Remember(const std::string& key, const httplib::Response& res) {
    constexpr size_t kMaxEntries = 10000;
    std::lock_guard lock(idempotency_mutex);
    const auto now = std::chrono::steady_clock::now();
    while (!idempotency_order.empty() &&
           (idempotency.size() >= kMaxEntries || idempotency[idempotency_order.front()].expires <= now)) {
      idempotency.erase(idempotency_order.front());
      idempotency_order.pop_front();
    }
    if (idempotency.count(key)) return;
    idempotency[key] = Cached{res.status, res.body, res.get_header_value("Content-Type"), now + options.idempotency_lifetime};
    idempotency_order.push_back(key);
  }

  void Dispatch(const httplib::Request& req, httplib::Response& res) {
    try {
      DispatchUnsafe(req, res);
    } catch (const nlohmann::json::exception& e) {
      SendError(res, InvalidArgument("malformed request body: {}", e.what()), false);
    }
  }

  void DispatchUnsafe(const httplib::Request& req, httplib::Response& res) {
    auto segments = Segments(req);
    if (!segments.ok()) return SendError(res, segments.status(), false);
    auto& s = *segments;
    if (s.empty() || s[0] != "v1") return SendError(res, NotFound("no such endpoint: {}", req.path), false);
    s.erase(s.begin());
    if (s.size() == 2 && s[0] == "oauth" && s[1] == "tokens") {
      if (req.method != "POST") return SendError(res, InvalidArgument("use POST for /v1/oauth/tokens"), false);
      return Token(req, res);
    }
    auto grant = auth.Authenticate(req.get_header_value("Authorization"));
    if (!grant.ok()) {
      res.set_header("WWW-Authenticate", "Bearer");
      return SendError(res, grant.status(), false);
    }
    if (s.size() == 1 && s[0] == "config") {
      if (req.method != "GET" && req.method != "HEAD") {
        return SendError(res, InvalidArgument("use GET for /v1/config"), false);
      }
      auto config = Config(req);
      if (!config.ok()) return SendError(res, config.status(), false);
      return SendJson(res, 200, *config);
    }
    // An optional prefix: "/v1/<prefix>/namespaces/...". The words that start an unprefixed path
    // cannot be prefixes (Make refuses them).
    if (!s.empty() && s[0] != "namespaces" && s[0] != "tables" && s[0] != "transactions") {
      if (options.prefix.empty() || s[0] != options.prefix) {
        return SendError(res, NotFound("unknown prefix '{}' (this server's is '{}')", s[0], options.prefix), false);
      }
      s.erase(s.begin());
    }
    auto route = Match(req.method, s);
    if (!route.ok()) {
      // A name refused by ValidateName is a bad request; an unknown path 404, a wrong method 405.
      const bool wrong_method = route.status().message().find("is not allowed on") != std::string::npos;
      if (wrong_method) {
        res.status = 405;
        res.set_content(ErrorResponseJson(route.status(), 405).dump(), "application/json");
        return;
      }
      return SendError(res, route.status(), false);
    }
    if (IsWrite(route->endpoint) && !grant->read_write) {
      return SendError(res, MakeError(ErrorKind::kForbidden, "this token is read-only"), false);
    }
    const std::string key = req.get_header_value("Idempotency-Key");
    const bool mutation = req.method == "POST" || req.method == "DELETE";
    std::string cache_key;
    if (mutation && !key.empty()) {
      cache_key = key + "\n" + req.method + "\n" + req.path;
      if (auto cached = Replay(cache_key)) {
        res.status = cached->status;
        if (!cached->body.empty()) res.set_content(cached->body, cached->content_type);
        return;
      }
    }
    HttpError hint;
    auto answer = Handle(*route, *grant, req, res, hint);
    if (!answer.ok()) {
      SendError(res, answer.status(), hint.about_namespace);
    } else {
      res.status = answer->first;
      // A null body: none (204, 304), or the handler set the content itself.
      if (!answer->second.is_null()) res.set_content(answer->second.dump(), "application/json");
    }
    // Only settled outcomes are replayed; a 5xx may not be the final word.
    if (!cache_key.empty() && res.status < 500) Remember(cache_key, res);
  }
};

RestCatalogServer::RestCatalogServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RestCatalogServer::~RestCatalogServer() {
  if (impl_ && impl_->server) impl_->server->Stop();
}

Result<std::unique_ptr<RestCatalogServer>> RestCatalogServer::Make(RestServerOptions options) {
  if (!options.catalog) return InvalidArgument("REST catalog server: no catalog given");
  const std::string& p = options.prefix;
  if (!p.empty() && (p == "namespaces" || p == "tables" || p == "transactions" || p == "config" || p == "oauth" ||
                     !ValidateName(p, "prefix").ok())) {
    return InvalidArgument("REST catalog server: prefix '{}' must be one path segment other than namespaces, "
                           "tables, transactions, config or oauth",
                           p);
  }
  auto impl = std::make_unique<Impl>(std::move(options));
  if (!impl->options.warehouse.empty()) {
    ARROW_ASSIGN_OR_RAISE(impl->warehouse, io::NormalizeLocation(impl->options.warehouse));
    while (impl->warehouse.size() > 1 && impl->warehouse.back() == '/') impl->warehouse.pop_back();
  }
  if (impl->options.http.name == "http") impl->options.http.name = "rest-catalog";
  ARROW_ASSIGN_OR_RAISE(impl->server, http::Server::Make(impl->options.http));
  Impl* self = impl.get();
  auto handler = [self](const httplib::Request& req, httplib::Response& res) { self->Dispatch(req, res); };
  auto& routes = impl->server->routes();
  routes.Get(".*", handler);
  routes.Post(".*", handler);
  routes.Delete(".*", handler);
  routes.Put(".*", handler);
  routes.Patch(".*", handler);
  return std::unique_ptr<RestCatalogServer>(new RestCatalogServer(std::move(impl)));
}

Status RestCatalogServer::Start() { return impl_->server->Start(); }
void RestCatalogServer::Stop() { impl_->server->Stop(); }
int RestCatalogServer::port() const { return impl_->server->port(); }
std::string RestCatalogServer::url() const { return impl_->server->url(); }
http::Server& RestCatalogServer::http_server() { return *impl_->server; }

}  // namespace lakesync::catalog::rest
