// The REST catalog client against the REST catalog server (both in process, on loopback, port 0)
// in front of a SQL catalog: every operation, the error model, multi-table commits, commits whose
// outcome is unknown, auth, path tricks, ETags and Idempotency-Key.
#include <atomic>
#include <mutex>

#include "catalog_test_util.h"
#include "lakesync/catalog/buffered_commits.h"
#include "lakesync/catalog/catalog_config.h"
#include "lakesync/catalog/rest/rest_catalog.h"
#include "lakesync/catalog/rest/rest_protocol.h"
#include "lakesync/catalog/rest/rest_server.h"
#include "lakesync/http/client.h"
#include "lakesync/http/server.h"

namespace lakesync::catalog::rest {
namespace {

using catalog::testing::LocalIO;
using catalog::testing::ScratchDir;
using catalog::testing::TableRequest;

// Commits through the real catalog, then claims not to know whether it did: what a server whose
// database answered but whose reply was lost looks like.
class UnknownAfterCommitCatalog : public BufferedCommitCatalog {
 public:
  using BufferedCommitCatalog::BufferedCommitCatalog;
  explicit UnknownAfterCommitCatalog(std::shared_ptr<Catalog> inner)
      : BufferedCommitCatalog(inner), real_(std::move(inner)) {}
  Result<LoadedTable> CommitTable(const TableIdentifier& id, const std::vector<iceberg::TableRequirement>& req,
                                  const std::vector<iceberg::TableUpdate>& updates) override {
    ARROW_RETURN_NOT_OK(real_->CommitTable(id, req, updates).status());
    ++commits;
    return CommitStateUnknown("the database connection dropped after COMMIT");
  }
  std::atomic<int> commits{0};

 private:
  std::shared_ptr<Catalog> real_;
};

class RestCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    warehouse_ = dir_.uri() + "/wh";
    SqlCatalogOptions options;
    options.catalog_name = "backend";
    options.database_path = (dir_.path() / "catalog.db").string();
    options.warehouse = warehouse_;
    options.io = LocalIO();
    auto sql = SqlCatalog::Make(options);
    ASSERT_TRUE(sql.ok()) << sql.status().ToString();
    backend_ = *sql;
  }

  void Serve(std::optional<ServerAuthConfig> auth = std::nullopt, std::shared_ptr<Catalog> catalog = nullptr,
             std::string prefix = "") {
    RestServerOptions options;
    options.catalog = catalog ? catalog : backend_;
    options.auth = std::move(auth);
    options.warehouse = warehouse_;
    options.prefix = prefix;
    options.http.log_requests = false;
    auto server = RestCatalogServer::Make(std::move(options));
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    ASSERT_OK(server_->Start());
  }

  Result<std::shared_ptr<RestCatalog>> Client(Properties extra = {}) {
    Properties props = {{"uri", server_->url()}};
    for (const auto& [k, v] : extra) props[k] = v;
    return RestCatalog::Make("remote", props);
  }

  std::shared_ptr<RestCatalog> MustClient(Properties extra = {}) {
    auto client = Client(std::move(extra));
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? *client : nullptr;
  }

  http::Response Raw(const std::string& method, const std::string& path, const std::string& body = "",
                     std::multimap<std::string, std::string> headers = {}) {
    auto client = http::Client::Make();
    http::Request request;
    request.method = method;
    request.url = server_->url() + path;
    request.body = body;
    if (!body.empty()) request.content_type = "application/json";
    request.headers = std::move(headers);
    auto response = (*client)->Send(request);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : http::Response{};
  }

  ScratchDir dir_;
  std::string warehouse_;
  std::shared_ptr<SqlCatalog> backend_;
  std::unique_ptr<RestCatalogServer> server_;
};

TEST_F(RestCatalogTest, NamespacesRoundTrip) {
  Serve();
  auto client = MustClient();
  ASSERT_NE(client, nullptr);
  ASSERT_OK(client->CreateNamespace({"shop"}, {{"owner", "ana"}}));
  ASSERT_OK(client->CreateNamespace({"shop", "eu"}, {}));
  EXPECT_KIND(client->CreateNamespace({"shop"}, {}), ErrorKind::kAlreadyExists);
  ASSERT_OK_AND_ASSIGN(auto top, client->ListNamespaces({}));
  EXPECT_EQ(top, (std::vector<Namespace>{{"shop"}}));
  ASSERT_OK_AND_ASSIGN(auto children, client->ListNamespaces({"shop"}));
  EXPECT_EQ(children, (std::vector<Namespace>{{"shop", "eu"}}));
  ASSERT_OK_AND_ASSIGN(auto props, client->LoadNamespaceMetadata({"shop"}));
  EXPECT_EQ(props.at("owner"), "ana");
  // The server reports where the namespace's tables go (as Java's JdbcCatalog does), without
  // storing it; Trino derives new table locations from it.
  EXPECT_EQ(props.at("location"), warehouse_ + "/shop");
  ASSERT_OK_AND_ASSIGN(props, client->LoadNamespaceMetadata({"shop", "eu"}));
  EXPECT_EQ(props, (Properties{{"location", warehouse_ + "/shop/eu"}}));
  ASSERT_OK_AND_ASSIGN(props, backend_->LoadNamespaceMetadata({"shop"}));
  EXPECT_EQ(props.count("location"), 0u);
  ASSERT_OK(client->UpdateNamespaceProperties({"shop"}, {"owner"}, {{"team", "data"}}));
  ASSERT_OK_AND_ASSIGN(props, backend_->LoadNamespaceMetadata({"shop"}));
  EXPECT_EQ(props.count("owner"), 0u);
  EXPECT_EQ(props.at("team"), "data");
  ASSERT_OK_AND_ASSIGN(bool exists, client->NamespaceExists({"shop", "eu"}));
  EXPECT_TRUE(exists);
  ASSERT_OK_AND_ASSIGN(exists, client->NamespaceExists({"nope"}));
  EXPECT_FALSE(exists);
  EXPECT_KIND(client->DropNamespace({"shop"}), ErrorKind::kNamespaceNotEmpty);
  EXPECT_KIND(client->LoadNamespaceMetadata({"nope"}), ErrorKind::kNotFound);
  ASSERT_OK(client->DropNamespace({"shop", "eu"}));
  ASSERT_OK(client->DropNamespace({"shop"}));
  ASSERT_OK_AND_ASSIGN(top, backend_->ListNamespaces({}));
  EXPECT_TRUE(top.empty());
}

TEST_F(RestCatalogTest, TablesCreateLoadRenameRegisterDrop) {
  Serve();
  auto client = MustClient();
  ASSERT_NE(client, nullptr);
  ASSERT_OK(client->CreateNamespace({"shop"}, {}));
  const TableIdentifier orders{{"shop"}, "orders"};
  ASSERT_OK_AND_ASSIGN(auto created, client->CreateTable(TableRequest(orders, {{"format-version", "3"}})));
  EXPECT_EQ(created.metadata->format_version, 3);
  EXPECT_EQ(created.metadata->location, warehouse_ + "/shop/orders");
  EXPECT_KIND(client->CreateTable(TableRequest(orders)), ErrorKind::kAlreadyExists);
  EXPECT_KIND(client->CreateTable(TableRequest({{"missing"}, "t"})), ErrorKind::kNotFound);
  ASSERT_OK_AND_ASSIGN(auto loaded, client->LoadTable(orders));
  EXPECT_EQ(loaded.metadata_location, created.metadata_location);
  EXPECT_EQ(loaded.metadata->table_uuid, created.metadata->table_uuid);
  ASSERT_OK_AND_ASSIGN(auto tables, client->ListTables({"shop"}));
  EXPECT_EQ(tables, std::vector<TableIdentifier>{orders});
  EXPECT_KIND(client->LoadTable({{"shop"}, "nope"}), ErrorKind::kNotFound);

  const TableIdentifier renamed{{"shop"}, "orders_v2"};
  ASSERT_OK(client->RenameTable(orders, renamed));
  ASSERT_OK_AND_ASSIGN(bool exists, client->TableExists(orders));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(exists, client->TableExists(renamed));
  EXPECT_TRUE(exists);

  const TableIdentifier again{{"shop"}, "orders_registered"};
  ASSERT_OK_AND_ASSIGN(auto registered, client->RegisterTable(again, created.metadata_location));
  EXPECT_EQ(registered.metadata->table_uuid, created.metadata->table_uuid);
  EXPECT_KIND(client->RegisterTable(again, created.metadata_location), ErrorKind::kAlreadyExists);

  ASSERT_OK(client->DropTable(again, /*purge=*/false));
  ASSERT_OK(client->DropTable(renamed, /*purge=*/true));
  EXPECT_KIND(client->DropTable(renamed, false), ErrorKind::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "wh" / "shop" / "orders"));
}

TEST_F(RestCatalogTest, StagedCreateCommitsWithAssertCreate) {
  Serve();
  auto client = MustClient();
  ASSERT_NE(client, nullptr);
  ASSERT_OK(client->CreateNamespace({"shop"}, {}));
  const TableIdentifier id{{"shop"}, "staged"};
  ASSERT_OK_AND_ASSIGN(auto staged, client->StageCreateTable(TableRequest(id)));
  EXPECT_TRUE(staged.metadata_location.empty());
  ASSERT_OK_AND_ASSIGN(bool exists, backend_->TableExists(id));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(auto committed, client->CommitTable(id, {iceberg::AssertCreate{}},
                                                           iceberg::UpdatesForNewTable(*staged.metadata)));
  EXPECT_FALSE(committed.metadata_location.empty());
  ASSERT_OK_AND_ASSIGN(exists, backend_->TableExists(id));
  EXPECT_TRUE(exists);
  // A second create through the same path conflicts.
  EXPECT_KIND(client->CommitTable(id, {iceberg::AssertCreate{}}, iceberg::UpdatesForNewTable(*staged.metadata)),
              ErrorKind::kCommitConflict);
}

TEST_F(RestCatalogTest, CommitsCheckRequirementsAndConflictsAre409) {
  Serve();
  auto client = MustClient();
  ASSERT_NE(client, nullptr);
  ASSERT_OK(client->CreateNamespace({"shop"}, {}));
  const TableIdentifier id{{"shop"}, "t"};
  ASSERT_OK_AND_ASSIGN(auto created, client->CreateTable(TableRequest(id)));
  const std::vector<iceberg::TableRequirement> reqs = {iceberg::AssertTableUuid{created.metadata->table_uuid},
                                                       iceberg::AssertCurrentSchemaId{0}};
  ASSERT_OK_AND_ASSIGN(auto first, client->CommitTable(id, reqs, {iceberg::SetProperties{{{"k", "1"}}}}));
  EXPECT_EQ(first.metadata->properties.at("k"), "1");
  ASSERT_OK_AND_ASSIGN(auto stored, backend_->LoadTable(id));
  EXPECT_EQ(stored.metadata_location, first.metadata_location);
  EXPECT_KIND(client->CommitTable(id, {iceberg::AssertTableUuid{"00000000-0000-0000-0000-000000000000"}},
                                  {iceberg::SetProperties{{{"k", "2"}}}}),
              ErrorKind::kCommitConflict);
  EXPECT_KIND(client->CommitTable({{"shop"}, "missing"}, {}, {iceberg::SetProperties{{{"k", "2"}}}}),
              ErrorKind::kNotFound);
  // An invalid update is the client's fault (400), not a conflict.
  EXPECT_KIND(client->CommitTable(id, {}, {iceberg::SetCurrentSchema{42}}), ErrorKind::kInvalidArgument);
}

TEST_F(RestCatalogTest, MultiTableTransactionsAreAllOrNothing) {
  Serve();
  auto client = MustClient();
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->SupportsMultiTableCommit());
  ASSERT_OK(client->CreateNamespace({"shop"}, {}));
  const TableIdentifier a{{"shop"}, "a"}, b{{"shop"}, "b"};
  ASSERT_OK_AND_ASSIGN(auto ta, client->CreateTable(TableRequest(a)));
  ASSERT_OK_AND_ASSIGN(auto tb, client->CreateTable(TableRequest(b)));
  // b's requirement fails: a must not change either.
  Status st = client->CommitTransaction(
      {TableChange{a, {iceberg::AssertTableUuid{ta.metadata->table_uuid}}, {iceberg::SetProperties{{{"x", "1"}}}}},
       TableChange{b, {iceberg::AssertTableUuid{ta.metadata->table_uuid}}, {iceberg::SetProperties{{{"x", "1"}}}}}});
  EXPECT_EQ(KindOf(st), ErrorKind::kCommitConflict) << st.ToString();
  ASSERT_OK_AND_ASSIGN(auto la, backend_->LoadTable(a));
  EXPECT_EQ(la.metadata_location, ta.metadata_location);
  ASSERT_OK(client->CommitTransaction(
      {TableChange{a, {iceberg::AssertTableUuid{ta.metadata->table_uuid}}, {iceberg::SetProperties{{{"x", "1"}}}}},
       TableChange{b, {iceberg::AssertTableUuid{tb.metadata->table_uuid}}, {iceberg::SetProperties{{{"x", "2"}}}}}}));
  ASSERT_OK_AND_ASSIGN(la, backend_->LoadTable(a));
  ASSERT_OK_AND_ASSIGN(auto lb, backend_->LoadTable(b));
  EXPECT_EQ(la.metadata->properties.at("x"), "1");
  EXPECT_EQ(lb.metadata->properties.at("x"), "2");

  // The buffering catalog the sink uses holds commits back until CommitAll.
  BufferedCommitCatalog buffered(client);
  ASSERT_OK(buffered.CommitTable(a, {}, {iceberg::SetProperties{{{"y", "1"}}}}).status());
  ASSERT_OK(buffered.CommitTable(b, {}, {iceberg::SetProperties{{{"y", "1"}}}}).status());
  EXPECT_KIND(buffered.CommitTable(b, {}, {}), ErrorKind::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(la, backend_->LoadTable(a));
  EXPECT_EQ(la.metadata->properties.count("y"), 0u);
  ASSERT_OK(buffered.CommitAll());
  ASSERT_OK_AND_ASSIGN(la, backend_->LoadTable(a));
  ASSERT_OK_AND_ASSIGN(lb, backend_->LoadTable(b));
  EXPECT_EQ(la.metadata->properties.at("y"), "1");
  EXPECT_EQ(lb.metadata->properties.at("y"), "1");
}

TEST_F(RestCatalogTest, UnknownCommitOutcomeIsReportedAsSuchAndNothingIsDeleted) {
  auto unknown = std::make_shared<UnknownAfterCommitCatalog>(backend_);
  Serve(std::nullopt, unknown);
  auto client = MustClient();
  ASSERT_NE(client, nullptr);
  ASSERT_OK(client->CreateNamespace({"shop"}, {}));
  const TableIdentifier id{{"shop"}, "t"};
  ASSERT_OK(backend_->CreateTable(TableRequest(id)).status());
  auto committed = client->CommitTable(id, {}, {iceberg::SetProperties{{{"k", "v"}}}});
  EXPECT_EQ(KindOf(committed.status()), ErrorKind::kCommitStateUnknown) << committed.status().ToString();
  EXPECT_EQ(unknown->commits.load(), 1);
  // The commit landed: a reload through the client shows it.
  ASSERT_OK_AND_ASSIGN(auto loaded, client->LoadTable(id));
  EXPECT_EQ(loaded.metadata->properties.at("k"), "v");
}

TEST_F(RestCatalogTest, UnreachableServerIsUnavailable) {
  Serve();
  const std::string url = server_->url();
  server_->Stop();
  auto client = RestCatalog::Make("remote", {{"uri", url}, {"rest.client.connection-timeout-ms", "500"}});
  EXPECT_KIND(client, ErrorKind::kUnavailable);
}

TEST_F(RestCatalogTest, ClientPropertiesAreValidated) {
  EXPECT_KIND(RestCatalog::Make("c", {}), ErrorKind::kInvalidArgument);
  EXPECT_KIND(RestCatalog::Make("c", {{"uri", "ftp://x"}}), ErrorKind::kInvalidArgument);
  EXPECT_KIND(RestCatalog::Make("c", {{"uri", "http://127.0.0.1:1"}, {"credential", "nosecret"}}),
              ErrorKind::kInvalidArgument);
  auto google = RestCatalog::Make("c", {{"uri", "http://127.0.0.1:1"}, {"rest.auth.type", "google"}});
  EXPECT_KIND(google, ErrorKind::kUnsupported);
  EXPECT_NE(google.status().message().find("none and oauth2"), std::string::npos) << google.status().ToString();
  // The catalog config accepts type rest without a warehouse and checks the same properties.
  CatalogConfig config{"c", {{"type", "rest"}, {"uri", "http://127.0.0.1:1"}}};
  EXPECT_OK(ValidateCatalogConfig(config));
  config.catalog_properties["rest.auth.type"] = "sigv4";
  EXPECT_KIND(ValidateCatalogConfig(config), ErrorKind::kUnsupported);
}

TEST_F(RestCatalogTest, ConfigAdvertisesEndpointsAndPrefix) {
  Serve(std::nullopt, nullptr, "wh1");
  auto client = MustClient();
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->properties().at("prefix"), "wh1");
  EXPECT_TRUE(client->Supports(Endpoint::kCommitTransaction));
  EXPECT_TRUE(client->Supports(Endpoint::kTableExists));
  ASSERT_OK(client->CreateNamespace({"p"}, {}));
  EXPECT_EQ(Raw("GET", "/v1/wh1/namespaces").status, 200);
  EXPECT_EQ(Raw("GET", "/v1/namespaces").status, 200);
  EXPECT_EQ(Raw("GET", "/v1/other/namespaces").status, 404);
  auto config = Raw("GET", "/v1/config?warehouse=anything");
  ASSERT_EQ(config.status, 200);
  auto j = nlohmann::json::parse(config.body);
  EXPECT_EQ(j["overrides"]["prefix"], "wh1");
  EXPECT_EQ(j["idempotency-key-lifetime"], "PT1800S");
}

ServerAuthConfig TestAuth() {
  auto auth = ParseServerAuth(R"(
tokens:
  - token: admin
    access: read-write
  - token: reader
    access: read-only
  - token: shop-writer
    access: read-write
    namespaces: [shop]
clients:
  - client_id: etl
    client_secret: etl-secret
    access: read-write
token_lifetime_seconds: 600
)",
                              "auth.yaml");
  EXPECT_TRUE(auth.ok()) << auth.status().ToString();
  return *auth;
}

TEST_F(RestCatalogTest, AuthRefusesMissingWrongReadOnlyAndOutOfScopeTokens) {
  Serve(TestAuth());
  EXPECT_KIND(Client(), ErrorKind::kUnauthenticated);
  EXPECT_KIND(Client({{"token", "wrong"}}), ErrorKind::kUnauthenticated);
  EXPECT_EQ(Raw("GET", "/v1/config", "", {{"Authorization", "Bearer None"}}).status, 401);
  auto admin = MustClient({{"token", "admin"}});
  ASSERT_NE(admin, nullptr);
  ASSERT_OK(admin->CreateNamespace({"shop"}, {}));
  ASSERT_OK(admin->CreateNamespace({"hr"}, {}));
  auto reader = MustClient({{"token", "reader"}});
  ASSERT_NE(reader, nullptr);
  ASSERT_OK(reader->ListNamespaces({}).status());
  EXPECT_KIND(reader->CreateNamespace({"x"}, {}), ErrorKind::kForbidden);
  EXPECT_KIND(reader->CreateTable(TableRequest({{"shop"}, "t"})), ErrorKind::kForbidden);
  auto scoped = MustClient({{"token", "shop-writer"}});
  ASSERT_NE(scoped, nullptr);
  ASSERT_OK(scoped->CreateTable(TableRequest({{"shop"}, "t"})).status());
  EXPECT_KIND(scoped->CreateTable(TableRequest({{"hr"}, "t"})), ErrorKind::kForbidden);
  EXPECT_KIND(scoped->LoadNamespaceMetadata({"hr"}), ErrorKind::kForbidden);
  EXPECT_KIND(scoped->RenameTable({{"shop"}, "t"}, {{"hr"}, "t"}), ErrorKind::kForbidden);
  ASSERT_OK_AND_ASSIGN(auto visible, scoped->ListNamespaces({}));
  EXPECT_EQ(visible, std::vector<Namespace>{{"shop"}});
  // OAuth2 client credentials: a token from the endpoint, then the catalog with it.
  auto etl = MustClient({{"credential", "etl:etl-secret"}});
  ASSERT_NE(etl, nullptr);
  ASSERT_OK(etl->CreateNamespace({"etl"}, {}));
  EXPECT_KIND(Client({{"credential", "etl:wrong"}}), ErrorKind::kUnauthenticated);
}

TEST_F(RestCatalogTest, NoAuthServerAcceptsBearerNone) {
  Serve();
  EXPECT_EQ(Raw("GET", "/v1/config", "", {{"Authorization", "Bearer None"},
                                          {"X-Iceberg-Access-Delegation", "vended-credentials"}})
                .status,
            200);
}

TEST_F(RestCatalogTest, PathTricksInNamesAreRefused) {
  Serve();
  ASSERT_OK(backend_->CreateNamespace({"shop"}, {}));
  for (const char* path : {"/v1/namespaces/..%2F..%2Fetc/tables", "/v1/namespaces/shop/tables/%2E%2E",
                           "/v1/namespaces/shop/tables/a%2Fb", "/v1/namespaces/shop%1F..%2F/tables",
                           "/v1/namespaces/sh%00op"}) {
    auto res = Raw("GET", path);
    EXPECT_EQ(res.status, 400) << path << ": " << res.body;
  }
  const std::string schema = iceberg::SchemaToJson(*catalog::testing::TestSchema()).dump();
  auto res = Raw("POST", "/v1/namespaces/shop/tables", R"({"name": "../../escape", "schema": )" + schema + "}");
  EXPECT_EQ(res.status, 400) << res.body;
  res = Raw("POST", "/v1/namespaces/shop/tables", R"({"name": "t", "location": "file:///tmp/elsewhere", "schema": )" +
                                                      schema + "}");
  EXPECT_EQ(res.status, 403) << res.body;
  res = Raw("POST", "/v1/namespaces/shop/tables",
            R"({"name": "t", "location": ")" + warehouse_ + R"(/../x", "schema": )" + schema + "}");
  EXPECT_EQ(res.status, 403) << res.body;
  res = Raw("POST", "/v1/namespaces", R"({"namespace": ["a/b"]})");
  EXPECT_EQ(res.status, 400) << res.body;
  ASSERT_OK_AND_ASSIGN(auto tables, backend_->ListTables({"shop"}));
  EXPECT_TRUE(tables.empty());
}

TEST_F(RestCatalogTest, LoadTableHonoursETagsAndSnapshotModes) {
  Serve();
  ASSERT_OK(backend_->CreateNamespace({"shop"}, {}));
  ASSERT_OK(backend_->CreateTable(TableRequest({{"shop"}, "t"})).status());
  auto first = Raw("GET", "/v1/namespaces/shop/tables/t");
  ASSERT_EQ(first.status, 200);
  const std::string etag = first.Header("ETag");
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(Raw("GET", "/v1/namespaces/shop/tables/t", "", {{"If-None-Match", etag}}).status, 304);
  auto refs = Raw("GET", "/v1/namespaces/shop/tables/t?snapshots=refs", "", {{"If-None-Match", etag}});
  EXPECT_EQ(refs.status, 200);
  EXPECT_NE(refs.Header("ETag"), etag);
  EXPECT_EQ(Raw("GET", "/v1/namespaces/shop/tables/t?snapshots=some").status, 400);
  ASSERT_OK(backend_->CommitTable({{"shop"}, "t"}, {}, {iceberg::SetProperties{{{"k", "v"}}}}).status());
  EXPECT_EQ(Raw("GET", "/v1/namespaces/shop/tables/t", "", {{"If-None-Match", etag}}).status, 200);
}

TEST_F(RestCatalogTest, IdempotencyKeyReplaysTheFirstAnswer) {
  Serve();
  const std::multimap<std::string, std::string> key = {{"Idempotency-Key", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"}};
  auto first = Raw("POST", "/v1/namespaces", R"({"namespace": ["once"]})", key);
  EXPECT_EQ(first.status, 200) << first.body;
  auto again = Raw("POST", "/v1/namespaces", R"({"namespace": ["once"]})", key);
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.body, first.body);
  auto other = Raw("POST", "/v1/namespaces", R"({"namespace": ["once"]})");
  EXPECT_EQ(other.status, 409);
  EXPECT_EQ(nlohmann::json::parse(other.body)["error"]["type"], "AlreadyExistsException");
}

TEST_F(RestCatalogTest, ErrorsUseTheSpecsBody) {
  Serve();
  auto res = Raw("GET", "/v1/namespaces/nope");
  ASSERT_EQ(res.status, 404);
  auto j = nlohmann::json::parse(res.body);
  EXPECT_EQ(j["error"]["code"], 404);
  EXPECT_EQ(j["error"]["type"], "NoSuchNamespaceException");
  // loadTable's only 404 in the spec is NoSuchTableException, also when the namespace is missing
  // (the message says which); creating a table there is NoSuchNamespaceException.
  res = Raw("GET", "/v1/namespaces/nope/tables/t");
  EXPECT_EQ(res.status, 404);
  EXPECT_EQ(nlohmann::json::parse(res.body)["error"]["type"], "NoSuchTableException");
  EXPECT_NE(nlohmann::json::parse(res.body)["error"]["message"].get<std::string>().find("namespace 'nope'"),
            std::string::npos);
  res = Raw("POST", "/v1/namespaces/nope/tables",
            R"({"name": "t", "schema": {"type": "struct", "fields": [{"id": 1, "name": "a", "type": "int", "required": false}]}})");
  EXPECT_EQ(res.status, 404);
  EXPECT_EQ(nlohmann::json::parse(res.body)["error"]["type"], "NoSuchNamespaceException");
  ASSERT_OK(backend_->CreateNamespace({"shop"}, {}));
  res = Raw("GET", "/v1/namespaces/shop/tables/t");
  EXPECT_EQ(nlohmann::json::parse(res.body)["error"]["type"], "NoSuchTableException");
  EXPECT_EQ(Raw("POST", "/v1/namespaces", "{not json").status, 400);
  EXPECT_EQ(Raw("POST", "/v1/namespaces", R"({"namespace": 5})").status, 400);
  EXPECT_EQ(Raw("PUT", "/v1/namespaces").status, 405);
  EXPECT_EQ(Raw("GET", "/v1/nothing/here/at/all/x").status, 404);
}


// A server of our own making: a config without `endpoints`, defaults and overrides, a token endpoint
// issuing short-lived tokens, and a namespace listing that checks the headers it gets.
TEST(RestClientTest, ConfigMergeDefaultEndpointsHeadersAndTokenRefresh) {
  http::ServerOptions options;
  options.log_requests = false;
  ASSERT_OK_AND_ASSIGN(auto server, http::Server::Make(options));
  std::atomic<int> tokens{0};
  std::atomic<int> listed{0};
  std::string seen_project, seen_auth;
  std::mutex seen_mutex;
  server->routes().Post("/v1/oauth/tokens", [&](const httplib::Request& req, httplib::Response& res) {
    const int n = ++tokens;
    EXPECT_EQ(req.get_param_value("grant_type"), "client_credentials");
    EXPECT_EQ(req.get_param_value("client_id"), "id");
    EXPECT_EQ(req.get_param_value("client_secret"), "secret");
    res.set_content(nlohmann::json{{"access_token", "t" + std::to_string(n)}, {"token_type", "bearer"},
                                   {"expires_in", 1}}.dump(),
                    "application/json");
  });
  server->routes().Get("/v1/config", [&](const httplib::Request& req, httplib::Response& res) {
    EXPECT_EQ(req.get_param_value("warehouse"), "wh");
    res.set_content(R"({"defaults": {"s3.region": "eu-west-1", "clients": "4"},
                        "overrides": {"prefix": "p1", "clients": "8"}})",
                    "application/json");
  });
  server->routes().Get("/v1/p1/namespaces", [&](const httplib::Request& req, httplib::Response& res) {
    ++listed;
    {
      std::lock_guard lock(seen_mutex);
      seen_project = req.get_header_value("x-goog-user-project");
      seen_auth = req.get_header_value("Authorization");
    }
    res.set_content(R"({"namespaces": [["a"], ["b"]]})", "application/json");
  });
  ASSERT_OK(server->Start());
  ASSERT_OK_AND_ASSIGN(auto client, RestCatalog::Make("c", {{"uri", server->url()},
                                                            {"warehouse", "wh"},
                                                            {"credential", "id:secret"},
                                                            {"clients", "2"},
                                                            {"header.x-goog-user-project", "my-project"}}));
  // defaults < client < overrides
  EXPECT_EQ(client->properties().at("s3.region"), "eu-west-1");
  EXPECT_EQ(client->properties().at("clients"), "8");
  EXPECT_EQ(client->properties().at("prefix"), "p1");
  // No `endpoints`: the spec's default set, which has transactions but not HEAD.
  EXPECT_TRUE(client->Supports(Endpoint::kCommitTransaction));
  EXPECT_TRUE(client->SupportsMultiTableCommit());
  EXPECT_FALSE(client->Supports(Endpoint::kTableExists));
  ASSERT_OK_AND_ASSIGN(auto namespaces, client->ListNamespaces({}));
  EXPECT_EQ(namespaces, (std::vector<Namespace>{{"a"}, {"b"}}));
  {
    std::lock_guard lock(seen_mutex);
    EXPECT_EQ(seen_project, "my-project");
    EXPECT_EQ(seen_auth.rfind("Bearer t", 0), 0u) << seen_auth;
  }
  // The 1-second token is due for refresh at once: the next call fetches a new one first.
  const int before = tokens.load();
  ASSERT_OK(client->ListNamespaces({}).status());
  EXPECT_GT(tokens.load(), before);
  {
    std::lock_guard lock(seen_mutex);
    EXPECT_EQ(seen_auth, "Bearer t" + std::to_string(tokens.load()));
  }
  server->Stop();
}

}  // namespace
}  // namespace lakesync::catalog::rest

// Spark's RESTCatalog numbers a new table's fields from 0, depth first; the server gives them fresh
// ids in Java's TypeUtil.assignFreshIds order (a struct's fields, then their children) and moves the
// identifier fields, partition and sort source ids along with them.
TEST(RestProtocolTest, CreateTableRequestsGetFreshFieldIds) {
  const auto request = nlohmann::json::parse(R"({
    "name": "t",
    "schema": {"type": "struct", "schema-id": 0, "identifier-field-ids": [0], "fields": [
      {"id": 0, "name": "id", "type": "long", "required": true},
      {"id": 1, "name": "st", "required": false, "type": {"type": "struct", "fields": [
        {"id": 2, "name": "a", "type": "int", "required": false},
        {"id": 3, "name": "l", "required": false,
         "type": {"type": "list", "element-id": 4, "element": "int", "element-required": false}}]}},
      {"id": 5, "name": "m", "required": false,
       "type": {"type": "map", "key-id": 6, "key": "string", "value-id": 7, "value": "long", "value-required": false}},
      {"id": 8, "name": "s", "type": "string", "required": false}]},
    "partition-spec": {"spec-id": 0, "fields": [{"source-id": 8, "field-id": 0, "name": "s", "transform": "identity"}]},
    "write-order": {"order-id": 1, "fields": [
      {"source-id": 0, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}]}
  })");
  ASSERT_OK_AND_ASSIGN(auto body, lakesync::catalog::rest::CreateTableBodyFromJson(request));
  const auto& schema = *body.schema;
  auto id_of = [&](std::string_view name) {
    const auto* f = schema.FindFieldByName(name);
    return f ? f->id : -1;
  };
  EXPECT_EQ(id_of("id"), 1);
  EXPECT_EQ(id_of("st"), 2);
  EXPECT_EQ(id_of("m"), 3);
  EXPECT_EQ(id_of("s"), 4);
  EXPECT_EQ(id_of("st.a"), 5);
  EXPECT_EQ(id_of("st.l"), 6);
  EXPECT_EQ(id_of("st.l.element"), 7);
  EXPECT_EQ(id_of("m.key"), 8);
  EXPECT_EQ(id_of("m.value"), 9);
  EXPECT_EQ(schema.identifier_field_ids(), std::vector<int32_t>{1});
  ASSERT_EQ(body.spec->fields().size(), 1u);
  EXPECT_EQ(body.spec->fields()[0].source_id, 4);
  EXPECT_EQ(body.spec->fields()[0].field_id, 1000);
  ASSERT_EQ(body.write_order->fields.size(), 1u);
  EXPECT_EQ(body.write_order->fields[0].source_id, 1);

  // A partition source that is not a field of the schema is the client's mistake, said as such.
  auto bad = request;
  bad["partition-spec"]["fields"][0]["source-id"] = 42;
  EXPECT_KIND(lakesync::catalog::rest::CreateTableBodyFromJson(bad), lakesync::ErrorKind::kInvalidArgument);
}
