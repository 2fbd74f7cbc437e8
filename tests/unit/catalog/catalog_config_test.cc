// Catalog configuration: YAML parsing, validation errors that name the key, and LoadCatalog.
#include <cstdlib>

#include "catalog_test_util.h"
#include "lakesync/catalog/catalog_config.h"

namespace lakesync::catalog {
namespace {

using testing::ScratchDir;

// The error of parsing `yaml`, which must fail with `kind` and mention every string in `needles`.
void ExpectError(const std::string& yaml, ErrorKind kind, const std::vector<std::string>& needles) {
  auto config = ParseCatalogConfig(yaml, "jobs/catalog.yaml");
  ASSERT_FALSE(config.ok()) << yaml;
  EXPECT_EQ(KindOf(config.status()), kind) << config.status().ToString();
  for (const auto& needle : needles) {
    EXPECT_NE(config.status().message().find(needle), std::string::npos)
        << "'" << needle << "' not in: " << config.status().message();
  }
}

TEST(CatalogConfigTest, ParsesNameAndProperties) {
  ASSERT_OK_AND_ASSIGN(auto config, ParseCatalogConfig(R"(
catalog_name: prod
catalog_properties:
  type: sql
  uri: sqlite:////tmp/x/catalog.db
  warehouse: file:///tmp/x/wh
  s3.path-style-access: true
  sqlite.busy-timeout-ms: 5000
)",
                                                       "c.yaml"));
  EXPECT_EQ(config.catalog_name, "prod");
  EXPECT_EQ(config.catalog_properties,
            (std::map<std::string, std::string>{{"type", "sql"},
                                                {"uri", "sqlite:////tmp/x/catalog.db"},
                                                {"warehouse", "file:///tmp/x/wh"},
                                                {"s3.path-style-access", "true"},
                                                {"sqlite.busy-timeout-ms", "5000"}}));
  ASSERT_OK_AND_ASSIGN(auto defaulted, ParseCatalogConfig("catalog_properties: {type: hadoop, warehouse: /tmp/w}", "c"));
  EXPECT_EQ(defaulted.catalog_name, "lakesync");
}

TEST(CatalogConfigTest, ErrorsNameTheKeyAndTheFile) {
  ExpectError("catalog_name: x\ncatalog_propertys: {type: sql}\n", ErrorKind::kInvalidArgument,
              {"catalog_propertys", "jobs/catalog.yaml"});
  ExpectError("catalog_properties: {type: oracle, warehouse: /w}", ErrorKind::kInvalidArgument, {"type", "oracle"});
  ExpectError("catalog_properties: {warehouse: /w}", ErrorKind::kInvalidArgument, {"type"});
  ExpectError("catalog_properties: {type: hadoop}", ErrorKind::kInvalidArgument, {"warehouse", "jobs/catalog.yaml"});
  ExpectError("catalog_properties: {type: sql, uri: 'sqlite:////tmp/c.db'}", ErrorKind::kInvalidArgument,
              {"warehouse"});
  ExpectError("catalog_properties: {type: sql, warehouse: /w}", ErrorKind::kInvalidArgument, {"uri"});
  ExpectError("catalog_properties: {type: sql, warehouse: /w, uri: 'mysql://host/db'}", ErrorKind::kInvalidArgument,
              {"uri", "mysql://host/db"});
  ExpectError("catalog_properties: {type: sql, warehouse: /w, uri: 'sqlite://host/c.db'}",
              ErrorKind::kInvalidArgument, {"uri"});
  // PostgreSQL URIs are accepted (postgres_catalog_test.cc); one without a database is not.
  ExpectError("catalog_properties: {type: sql, warehouse: /w, uri: 'postgresql://u@h'}", ErrorKind::kInvalidArgument,
              {"uri", "database"});
  // REST: the client's properties are checked without contacting the server.
  ExpectError("catalog_properties: {type: rest, warehouse: /w}", ErrorKind::kInvalidArgument, {"uri"});
  ExpectError("catalog_properties: {type: rest, uri: 'http://x', rest.auth.type: google}", ErrorKind::kUnsupported,
              {"rest.auth.type", "none and oauth2"});
  ExpectError("catalog_properties: {type: rest, uri: 'http://x', credential: only-an-id}",
              ErrorKind::kInvalidArgument, {"credential"});
  ExpectError("catalog_properties: {type: hive, warehouse: /w}", ErrorKind::kUnsupported, {"hive"});
  ExpectError("catalog_properties: {type: hadoop, warehouse: 'ftp://h/w'}", ErrorKind::kInvalidArgument,
              {"warehouse", "ftp://h/w"});
  ExpectError("catalog_properties: {type: sql, warehouse: /w, uri: 'sqlite:////c.db', sqlite.busy-timeout-ms: soon}",
              ErrorKind::kInvalidArgument, {"sqlite.busy-timeout-ms", "soon"});
  ExpectError("catalog_properties: {type: hadoop, warehouse: /w, filesystem.allow-unsafe-object-store-commits: maybe}",
              ErrorKind::kInvalidArgument, {"filesystem.allow-unsafe-object-store-commits"});
  ExpectError("catalog_properties: {type: hadoop, warehouse: [a, b]}", ErrorKind::kInvalidArgument,
              {"catalog_properties.warehouse"});
  ExpectError("catalog_properties: [type, sql]", ErrorKind::kInvalidArgument, {"catalog_properties"});
  ExpectError("catalog_name: {a: b}\ncatalog_properties: {type: hadoop, warehouse: /w}", ErrorKind::kInvalidArgument,
              {"catalog_name"});
  ExpectError("", ErrorKind::kInvalidArgument, {"jobs/catalog.yaml", "empty"});
  ExpectError("catalog_properties: {type: sql", ErrorKind::kInvalidArgument, {"jobs/catalog.yaml"});
  ExpectError("catalog_properties: {catalog-impl: org.apache.iceberg.jdbc.JdbcCatalog, warehouse: /w}",
              ErrorKind::kUnsupported, {"catalog-impl"});
}

TEST(CatalogConfigTest, LoadCatalogFileAndOpen) {
  ScratchDir dir;
  const std::string db = (dir.path() / "sub.db").string();
  const std::string file = (dir.path() / "catalog.yaml").string();
  {
    std::ofstream out(file);
    out << "catalog_name: files\ncatalog_properties:\n  type: sql\n  uri: sqlite:///" << db
        << "\n  warehouse: " << dir.path().string() << "/wh\n";
  }
  ASSERT_OK_AND_ASSIGN(auto config, LoadCatalogConfigFile(file));
  ASSERT_OK_AND_ASSIGN(auto catalog, LoadCatalog(config));
  EXPECT_EQ(catalog->name(), "files");
  ASSERT_OK(catalog->CreateNamespace({"ns"}, {}));
  ASSERT_OK_AND_ASSIGN(auto table, catalog->CreateTable(testing::TableRequest({{"ns"}, "t"})));
  // The database is where the four-slash URI says, and the warehouse was made a file:// URI.
  EXPECT_TRUE(std::filesystem::exists(db));
  EXPECT_EQ(table.metadata->location, "file://" + dir.path().string() + "/wh/ns/t");
  EXPECT_KIND(LoadCatalogConfigFile((dir.path() / "missing.yaml").string()), ErrorKind::kNotFound);
}

TEST(CatalogConfigTest, UriForms) {
  ScratchDir dir;
  const std::string jdbc_db = (dir.path() / "jdbc.db").string();
  for (const std::string& uri : std::vector<std::string>{"sqlite:///:memory:", "sqlite://", "jdbc:sqlite::memory:",
                                                         "jdbc:sqlite:" + jdbc_db}) {
    CatalogConfig config;
    config.catalog_properties = {{"type", "SQL"}, {"uri", uri}, {"warehouse", dir.uri()}};
    auto catalog = LoadCatalog(config);
    ASSERT_TRUE(catalog.ok()) << uri << ": " << catalog.status().ToString();
    EXPECT_OK((*catalog)->CreateNamespace({"ns"}, {}));
  }
  EXPECT_TRUE(std::filesystem::exists(jdbc_db));

  CatalogConfig fs;
  fs.catalog_properties = {{"type", "hadoop"}, {"warehouse", dir.path().string() + "/fs"}};
  ASSERT_OK_AND_ASSIGN(auto catalog, LoadCatalog(fs));
  ASSERT_OK(catalog->CreateTable(testing::TableRequest({{"ns"}, "t"})).status());
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "fs" / "ns" / "t" / "metadata" / "v1.metadata.json"));
}

TEST(CatalogConfigTest, DefaultConfigUsesWarehouseEnvironment) {
  ScratchDir dir;
  const auto warehouse = dir.path() / "default-wh";
  ASSERT_EQ(setenv("LAKESYNC_WAREHOUSE", warehouse.string().c_str(), 1), 0);
  auto config = DefaultCatalogConfig();
  unsetenv("LAKESYNC_WAREHOUSE");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->catalog_name, "lakesync");
  EXPECT_EQ(config->catalog_properties.at("type"), "sql");
  EXPECT_EQ(config->catalog_properties.at("uri"), "sqlite:///" + (warehouse / "catalog.db").string());
  EXPECT_EQ(config->catalog_properties.at("warehouse"), "file://" + warehouse.string());
  EXPECT_TRUE(std::filesystem::is_directory(warehouse));
  ASSERT_OK_AND_ASSIGN(auto catalog, LoadCatalog(*config));
  ASSERT_OK(catalog->CreateNamespace({"ns"}, {}));
  EXPECT_TRUE(std::filesystem::exists(warehouse / "catalog.db"));

  ASSERT_EQ(setenv("LAKESYNC_WAREHOUSE", "s3://bucket/wh", 1), 0);
  auto remote = DefaultCatalogConfig();
  unsetenv("LAKESYNC_WAREHOUSE");
  EXPECT_EQ(KindOf(remote.status()), ErrorKind::kInvalidArgument);
  EXPECT_NE(remote.status().message().find("LAKESYNC_WAREHOUSE"), std::string::npos);
}

TEST(CatalogConfigTest, UnknownPropertiesAreRefusedPerCatalogType) {
  // A typo names the key it probably meant.
  ExpectError("catalog_properties: {type: sql, uri: 'sqlite:////tmp/c.db', warehouse: /w, foo: 1}",
              ErrorKind::kInvalidArgument, {"catalog_properties.foo"});
  ExpectError("catalog_properties: {type: sql, uri: 'sqlite:////tmp/c.db', warehouse: /w, s3.endpont: x}",
              ErrorKind::kInvalidArgument, {"s3.endpont", "did you mean 's3.endpoint'?"});
  ExpectError("catalog_properties: {type: hadoop, warehouse: /w, wharehouse: /x}", ErrorKind::kInvalidArgument,
              {"did you mean 'warehouse'?"});
  // A key of another catalog type is not one of this type's.
  ExpectError("catalog_properties: {type: hadoop, warehouse: /w, sqlite.busy-timeout-ms: 10}",
              ErrorKind::kInvalidArgument, {"sqlite.busy-timeout-ms"});
  // Every FileIO key and each type's own keys pass; Java's FileIO classes are accepted as the no-op
  // they are here, other classes refused.
  ASSERT_OK(ParseCatalogConfig("catalog_properties: {type: sql, uri: 'sqlite:////tmp/c.db', warehouse: /w, "
                               "sqlite.busy-timeout-ms: 10, init_catalog_tables: false, s3.endpoint: "
                               "'http://127.0.0.1:9', client.region: eu, gcs.no-auth: true, adls.anon: true, "
                               "io-impl: org.apache.iceberg.gcp.gcs.GCSFileIO}",
                               "c")
                .status());
  ExpectError("catalog_properties: {type: hadoop, warehouse: /w, io-impl: com.example.MyFileIO}",
              ErrorKind::kUnsupported, {"io-impl", "com.example.MyFileIO"});
  // Each type's keys come from one table.
  bool found_sql = false;
  for (const auto& type : CatalogTypes()) {
    if (type.names.front() != "sql") continue;
    found_sql = true;
    EXPECT_NE(std::find(type.keys.begin(), type.keys.end(), "uri"), type.keys.end());
  }
  EXPECT_TRUE(found_sql);
}

TEST(CatalogConfigTest, RelativePathsResolveAgainstAFolder) {
  std::map<std::string, std::string> props = {{"type", "sql"}, {"uri", "sqlite:///cat/c.db"}, {"warehouse", "wh"}};
  ResolveRelativePaths(props, "/srv/jobs");
  EXPECT_EQ(props.at("uri"), "sqlite:////srv/jobs/cat/c.db");
  EXPECT_EQ(props.at("warehouse"), "/srv/jobs/wh");
  std::map<std::string, std::string> kept = {{"uri", "sqlite:////abs/c.db"}, {"warehouse", "s3://b/w"}};
  ResolveRelativePaths(kept, "/srv/jobs");
  EXPECT_EQ(kept.at("uri"), "sqlite:////abs/c.db");
  EXPECT_EQ(kept.at("warehouse"), "s3://b/w");
  std::map<std::string, std::string> jdbc = {{"uri", "jdbc:sqlite:rel/c.db"}};
  ResolveRelativePaths(jdbc, "/srv/jobs");
  EXPECT_EQ(jdbc.at("uri"), "jdbc:sqlite:/srv/jobs/rel/c.db");
  std::map<std::string, std::string> memory = {{"uri", "sqlite:///:memory:"}};
  ResolveRelativePaths(memory, "/srv/jobs");
  EXPECT_EQ(memory.at("uri"), "sqlite:///:memory:");
}

TEST(CatalogConfigTest, TheDefaultWarehouseIsInTheGivenFolder) {
  ScratchDir dir;
  unsetenv("LAKESYNC_WAREHOUSE");
  ASSERT_OK_AND_ASSIGN(auto config, DefaultCatalogConfig(dir.path().string()));
  EXPECT_EQ(config.catalog_properties.at("warehouse"), "file://" + (dir.path() / "lakesync-warehouse").string());
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "lakesync-warehouse"));
}

}  // namespace
}  // namespace lakesync::catalog
