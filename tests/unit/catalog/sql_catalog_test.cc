// SqlCatalog on SQLite: namespaces, tables, commits, and the on-disk layout other programs share.
#include <sqlite3.h>

#include <regex>

#include "catalog_test_util.h"
#include "lakesync/catalog/metadata_files.h"

namespace lakesync::catalog {
namespace {

using testing::CountFiles;
using testing::LocalIO;
using testing::LocalPath;
using testing::ScratchDir;
using testing::SqlCatalogPeer;
using testing::TableRequest;

// Runs SQL directly on the database file, as another program would.
std::vector<std::vector<std::string>> RawQuery(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  std::vector<std::vector<std::string>> rows;
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db) << ": " << sql;
  while (stmt && sqlite3_step(stmt) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
      const unsigned char* text = sqlite3_column_text(stmt, c);
      row.push_back(text ? reinterpret_cast<const char*>(text) : "<NULL>");
    }
    rows.push_back(std::move(row));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

class SqlCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_path_ = (dir_.path() / "catalog.db").string();
    warehouse_ = dir_.uri() + "/wh";
    catalog_ = Open("test_catalog");
    ASSERT_NE(catalog_, nullptr);
  }

  SqlCatalogOptions Options(const std::string& name) {
    SqlCatalogOptions options;
    options.catalog_name = name;
    options.database_path = db_path_;
    options.warehouse = warehouse_;
    options.io = LocalIO();
    return options;
  }

  std::shared_ptr<SqlCatalog> Open(const std::string& name) {
    auto catalog = SqlCatalog::Make(Options(name));
    EXPECT_TRUE(catalog.ok()) << catalog.status().ToString();
    return catalog.ok() ? *catalog : nullptr;
  }

  ScratchDir dir_;
  std::string db_path_;
  std::string warehouse_;
  std::shared_ptr<SqlCatalog> catalog_;
};

TEST_F(SqlCatalogTest, NewDatabaseHasPyicebergLayout) {
  EXPECT_TRUE(catalog_->has_iceberg_type());
  auto columns = RawQuery(db_path_, "SELECT name, \"notnull\", pk FROM pragma_table_info('iceberg_tables') ORDER BY cid");
  std::vector<std::string> names;
  for (const auto& c : columns) names.push_back(c[0]);
  EXPECT_EQ(names, (std::vector<std::string>{"catalog_name", "table_namespace", "table_name", "metadata_location",
                                             "previous_metadata_location", "iceberg_type"}));
  auto props = RawQuery(db_path_, "SELECT name, pk FROM pragma_table_info('iceberg_namespace_properties') ORDER BY cid");
  ASSERT_EQ(props.size(), 4u);
  EXPECT_EQ(props[0][0], "catalog_name");
  EXPECT_EQ(props[3][0], "property_value");
  // Primary key (catalog_name, namespace, property_key).
  EXPECT_EQ(props[0][1], "1");
  EXPECT_EQ(props[1][1], "2");
  EXPECT_EQ(props[2][1], "3");
  // The journal mode is left at SQLite's default rollback journal.
  EXPECT_EQ(RawQuery(db_path_, "PRAGMA journal_mode")[0][0], "delete");
}

TEST_F(SqlCatalogTest, NamespaceCrudWithNestedLevels) {
  ASSERT_OK(catalog_->CreateNamespace({"a"}, {{"owner", "me"}}));
  ASSERT_OK(catalog_->CreateNamespace({"a", "b"}, {}));
  ASSERT_OK(catalog_->CreateNamespace({"a", "b", "c"}, {}));
  ASSERT_OK(catalog_->CreateNamespace({"x"}, {}));
  EXPECT_KIND(catalog_->CreateNamespace({"a", "b"}, {}), ErrorKind::kAlreadyExists);

  ASSERT_OK_AND_ASSIGN(auto top, catalog_->ListNamespaces({}));
  EXPECT_EQ(top, (std::vector<Namespace>{{"a"}, {"x"}}));
  ASSERT_OK_AND_ASSIGN(auto under_a, catalog_->ListNamespaces({"a"}));
  EXPECT_EQ(under_a, (std::vector<Namespace>{{"a", "b"}}));
  ASSERT_OK_AND_ASSIGN(auto under_ab, catalog_->ListNamespaces({"a", "b"}));
  EXPECT_EQ(under_ab, (std::vector<Namespace>{{"a", "b", "c"}}));
  ASSERT_OK_AND_ASSIGN(auto leaf, catalog_->ListNamespaces({"a", "b", "c"}));
  EXPECT_TRUE(leaf.empty());
  EXPECT_KIND(catalog_->ListNamespaces({"nope"}), ErrorKind::kNotFound);

  // The exists marker is stored (as Java does) but not shown.
  ASSERT_OK_AND_ASSIGN(auto props, catalog_->LoadNamespaceMetadata({"a"}));
  EXPECT_EQ(props, (Properties{{"owner", "me"}}));
  EXPECT_EQ(RawQuery(db_path_, "SELECT property_value FROM iceberg_namespace_properties WHERE namespace = 'a.b' AND "
                               "property_key = 'exists' AND catalog_name = 'test_catalog'")
                .size(),
            1u);

  ASSERT_OK(catalog_->UpdateNamespaceProperties({"a"}, {"owner"}, {{"k1", "v1"}, {"k2", "v2"}}));
  ASSERT_OK_AND_ASSIGN(props, catalog_->LoadNamespaceMetadata({"a"}));
  EXPECT_EQ(props, (Properties{{"k1", "v1"}, {"k2", "v2"}}));
  ASSERT_OK(catalog_->UpdateNamespaceProperties({"a"}, {}, {{"k1", "changed"}}));
  ASSERT_OK_AND_ASSIGN(props, catalog_->LoadNamespaceMetadata({"a"}));
  EXPECT_EQ(props.at("k1"), "changed");
  EXPECT_KIND(catalog_->UpdateNamespaceProperties({"a"}, {"k1"}, {{"k1", "x"}}), ErrorKind::kInvalidArgument);
  EXPECT_KIND(catalog_->UpdateNamespaceProperties({"missing"}, {}, {{"k", "v"}}), ErrorKind::kNotFound);
  EXPECT_KIND(catalog_->LoadNamespaceMetadata({"missing"}), ErrorKind::kNotFound);

  // A parent with children cannot be dropped; leaves first.
  EXPECT_KIND(catalog_->DropNamespace({"a"}), ErrorKind::kNamespaceNotEmpty);
  ASSERT_OK(catalog_->DropNamespace({"a", "b", "c"}));
  ASSERT_OK(catalog_->DropNamespace({"a", "b"}));
  ASSERT_OK(catalog_->DropNamespace({"a"}));
  EXPECT_KIND(catalog_->DropNamespace({"a"}), ErrorKind::kNotFound);
  ASSERT_OK_AND_ASSIGN(top, catalog_->ListNamespaces({}));
  EXPECT_EQ(top, (std::vector<Namespace>{{"x"}}));
  EXPECT_EQ(RawQuery(db_path_, "SELECT count(*) FROM iceberg_namespace_properties WHERE namespace LIKE 'a%'")[0][0], "0");

  EXPECT_KIND(catalog_->CreateNamespace({"bad.level"}, {}), ErrorKind::kInvalidArgument);
  EXPECT_KIND(catalog_->CreateNamespace({}, {}), ErrorKind::kInvalidArgument);
}

TEST_F(SqlCatalogTest, LikeWildcardsInNamesAreEscaped) {
  // Unescaped, "ns_1.%" would match "nsX1.child" and "%.%" would match everything.
  ASSERT_OK(catalog_->CreateNamespace({"nsX1", "child"}, {}));
  ASSERT_OK(catalog_->CreateNamespace({"p%q", "child"}, {}));
  ASSERT_OK(catalog_->CreateNamespace({"e!x", "child"}, {}));
  ASSERT_OK(catalog_->CreateNamespace({"Upper", "child"}, {}));

  ASSERT_OK_AND_ASSIGN(bool exists, catalog_->NamespaceExists({"nsX1"}));
  EXPECT_TRUE(exists);  // through its child
  ASSERT_OK_AND_ASSIGN(exists, catalog_->NamespaceExists({"ns_1"}));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(exists, catalog_->NamespaceExists({"%"}));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(exists, catalog_->NamespaceExists({"p%q"}));
  EXPECT_TRUE(exists);
  ASSERT_OK_AND_ASSIGN(exists, catalog_->NamespaceExists({"pXq"}));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(exists, catalog_->NamespaceExists({"e!x"}));
  EXPECT_TRUE(exists);
  ASSERT_OK_AND_ASSIGN(exists, catalog_->NamespaceExists({"e"}));
  EXPECT_FALSE(exists);
  // SQLite's LIKE ignores ASCII case; namespaces do not.
  ASSERT_OK_AND_ASSIGN(exists, catalog_->NamespaceExists({"upper"}));
  EXPECT_FALSE(exists);

  ASSERT_OK(catalog_->CreateNamespace({"ns_1"}, {}));
  ASSERT_OK_AND_ASSIGN(auto children, catalog_->ListNamespaces({"ns_1"}));
  EXPECT_TRUE(children.empty());
  // Dropping "ns_1" must not see "nsX1.child" as its child.
  ASSERT_OK(catalog_->DropNamespace({"ns_1"}));

  // Tables count for namespace existence with the same escaping.
  ASSERT_OK(catalog_->CreateNamespace({"t_s"}, {}));
  ASSERT_OK(catalog_->CreateTable(TableRequest({{"t_s"}, "tbl"})).status());
  ASSERT_OK(catalog_->UpdateNamespaceProperties({"t_s"}, {}, {}));
  ASSERT_OK_AND_ASSIGN(exists, catalog_->NamespaceExists({"tXs"}));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(auto top, catalog_->ListNamespaces({}));
  EXPECT_EQ(top, (std::vector<Namespace>{{"Upper"}, {"e!x"}, {"nsX1"}, {"p%q"}, {"t_s"}}));
}

TEST_F(SqlCatalogTest, CreateLoadListTables) {
  const TableIdentifier id{{"db", "sales"}, "orders"};
  EXPECT_KIND(catalog_->CreateTable(TableRequest(id)), ErrorKind::kNotFound);  // namespace missing
  ASSERT_OK(catalog_->CreateNamespace({"db", "sales"}, {}));
  ASSERT_OK_AND_ASSIGN(auto created, catalog_->CreateTable(TableRequest(id, {{"owner", "team"}})));

  // Java's JdbcCatalog layout: <warehouse>/<ns levels>/<table>, metadata/00000-<uuid>.metadata.json.
  EXPECT_EQ(created.metadata->location, warehouse_ + "/db/sales/orders");
  EXPECT_TRUE(std::regex_match(created.metadata_location,
                               std::regex(warehouse_ + "/db/sales/orders/metadata/00000-[0-9a-f-]{36}\\.metadata\\.json")))
      << created.metadata_location;
  EXPECT_TRUE(std::filesystem::exists(LocalPath(created.metadata_location)));
  EXPECT_EQ(created.metadata->properties.at("owner"), "team");

  ASSERT_OK_AND_ASSIGN(auto loaded, catalog_->LoadTable(id));
  EXPECT_EQ(loaded.metadata_location, created.metadata_location);
  EXPECT_EQ(loaded.metadata->table_uuid, created.metadata->table_uuid);
  EXPECT_TRUE(loaded.metadata->Schema()->SameSchema(*testing::TestSchema()));

  auto row = RawQuery(db_path_, "SELECT catalog_name, table_namespace, table_name, metadata_location, "
                                "previous_metadata_location, iceberg_type FROM iceberg_tables");
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0], (std::vector<std::string>{"test_catalog", "db.sales", "orders", created.metadata_location, "<NULL>",
                                              "TABLE"}));

  EXPECT_KIND(catalog_->CreateTable(TableRequest(id)), ErrorKind::kAlreadyExists);
  ASSERT_OK(catalog_->CreateTable(TableRequest({{"db", "sales"}, "customers"})).status());
  ASSERT_OK_AND_ASSIGN(auto tables, catalog_->ListTables({"db", "sales"}));
  EXPECT_EQ(tables, (std::vector<TableIdentifier>{{{"db", "sales"}, "customers"}, {{"db", "sales"}, "orders"}}));
  ASSERT_OK_AND_ASSIGN(auto parent_tables, catalog_->ListTables({"db"}));
  EXPECT_TRUE(parent_tables.empty());
  EXPECT_KIND(catalog_->ListTables({"nope"}), ErrorKind::kNotFound);
  ASSERT_OK_AND_ASSIGN(bool exists, catalog_->TableExists(id));
  EXPECT_TRUE(exists);
  ASSERT_OK_AND_ASSIGN(exists, catalog_->TableExists({{"db", "sales"}, "nope"}));
  EXPECT_FALSE(exists);
  EXPECT_KIND(catalog_->LoadTable({{"db", "sales"}, "nope"}), ErrorKind::kNotFound);
  EXPECT_KIND(catalog_->DropNamespace({"db", "sales"}), ErrorKind::kNamespaceNotEmpty);
}

TEST_F(SqlCatalogTest, CatalogNamesAreSeparate) {
  ASSERT_OK(catalog_->CreateNamespace({"shared"}, {}));
  ASSERT_OK(catalog_->CreateTable(TableRequest({{"shared"}, "t"})).status());
  auto other = Open("other_catalog");
  ASSERT_NE(other, nullptr);
  ASSERT_OK_AND_ASSIGN(auto namespaces, other->ListNamespaces({}));
  EXPECT_TRUE(namespaces.empty());
  EXPECT_KIND(other->LoadTable({{"shared"}, "t"}), ErrorKind::kNotFound);
  // The same name in a second connection sees everything.
  auto same = Open("test_catalog");
  ASSERT_OK_AND_ASSIGN(auto loaded, same->LoadTable({{"shared"}, "t"}));
  EXPECT_EQ(loaded.identifier.name, "t");
}

TEST_F(SqlCatalogTest, CommitAdvancesVersionAndPreviousLocation) {
  ASSERT_OK(catalog_->CreateNamespace({"ns"}, {}));
  const TableIdentifier id{{"ns"}, "t"};
  ASSERT_OK_AND_ASSIGN(auto created, catalog_->CreateTable(TableRequest(id)));
  ASSERT_OK_AND_ASSIGN(auto committed,
                       catalog_->CommitTable(id, {iceberg::AssertTableUuid{created.metadata->table_uuid}},
                                             {iceberg::SetProperties{{{"k", "v"}}}}));
  EXPECT_EQ(ParseMetadataVersion(committed.metadata_location), 1);
  EXPECT_EQ(committed.metadata->properties.at("k"), "v");
  ASSERT_EQ(committed.metadata->metadata_log.size(), 1u);
  EXPECT_EQ(committed.metadata->metadata_log[0].metadata_file, created.metadata_location);
  auto row = RawQuery(db_path_, "SELECT metadata_location, previous_metadata_location FROM iceberg_tables");
  EXPECT_EQ(row[0], (std::vector<std::string>{committed.metadata_location, created.metadata_location}));
  ASSERT_OK_AND_ASSIGN(auto loaded, catalog_->LoadTable(id));
  EXPECT_EQ(loaded.metadata->properties.at("k"), "v");
}

TEST_F(SqlCatalogTest, StaleSwapIsACommitConflictAndLeavesNoFile) {
  auto peer = SqlCatalogPeer::Make(Options("test_catalog"));
  ASSERT_NE(peer, nullptr);
  ASSERT_OK(peer->CreateNamespace({"ns"}, {}));
  const TableIdentifier id{{"ns"}, "t"};
  ASSERT_OK_AND_ASSIGN(auto created, peer->CreateTable(TableRequest(id)));
  // Two writers load the same version...
  ASSERT_OK_AND_ASSIGN(auto first, peer->LoadTable(id));
  ASSERT_OK_AND_ASSIGN(auto second, peer->LoadTable(id));
  ASSERT_EQ(first.metadata_location, second.metadata_location);
  iceberg::ApplyOptions apply;
  apply.base_metadata_location = first.metadata_location;
  ASSERT_OK_AND_ASSIGN(auto next1, iceberg::ApplyUpdates(first.metadata.get(), {iceberg::SetProperties{{{"w", "1"}}}}, apply));
  ASSERT_OK_AND_ASSIGN(auto next2, iceberg::ApplyUpdates(second.metadata.get(), {iceberg::SetProperties{{{"w", "2"}}}}, apply));
  // ...and both swap from it: the first wins, the second is a conflict.
  ASSERT_OK_AND_ASSIGN(std::string won, peer->SwapMetadata(id, first.metadata_location, *next1));
  auto lost = peer->SwapMetadata(id, second.metadata_location, *next2);
  EXPECT_EQ(KindOf(lost.status()), ErrorKind::kCommitConflict) << lost.status().ToString();
  ASSERT_OK_AND_ASSIGN(auto current, peer->CurrentMetadataLocation(id));
  EXPECT_EQ(current, won);
  ASSERT_OK_AND_ASSIGN(auto loaded, peer->LoadTable(id));
  EXPECT_EQ(loaded.metadata->properties.at("w"), "1");
  // The loser's metadata file was removed: only 00000 and the winner's 00001 remain.
  EXPECT_EQ(CountFiles(LocalPath(warehouse_) + "/ns/t/metadata", ".metadata.json"), 2);
  // A create over an existing table is refused as well.
  EXPECT_KIND(peer->SwapMetadata(id, "", *created.metadata), ErrorKind::kAlreadyExists);
  EXPECT_EQ(CountFiles(LocalPath(warehouse_) + "/ns/t/metadata", ".metadata.json"), 2);
}

TEST_F(SqlCatalogTest, FailedRequirementIsACommitConflict) {
  ASSERT_OK(catalog_->CreateNamespace({"ns"}, {}));
  const TableIdentifier id{{"ns"}, "t"};
  ASSERT_OK_AND_ASSIGN(auto created, catalog_->CreateTable(TableRequest(id)));
  EXPECT_KIND(catalog_->CommitTable(id, {iceberg::AssertTableUuid{"00000000-0000-0000-0000-000000000000"}},
                                    {iceberg::SetProperties{{{"k", "v"}}}}),
              ErrorKind::kCommitConflict);
  EXPECT_KIND(catalog_->CommitTable(id, {iceberg::AssertCreate{}}, {iceberg::SetProperties{{{"k", "v"}}}}),
              ErrorKind::kCommitConflict);
  EXPECT_KIND(catalog_->CommitTable(id, {iceberg::AssertCurrentSchemaId{7}}, {iceberg::SetProperties{{{"k", "v"}}}}),
              ErrorKind::kCommitConflict);
  // Nothing moved.
  ASSERT_OK_AND_ASSIGN(auto loaded, catalog_->LoadTable(id));
  EXPECT_EQ(loaded.metadata_location, created.metadata_location);
  EXPECT_EQ(loaded.metadata->properties.count("k"), 0u);
}

TEST_F(SqlCatalogTest, RenameTable) {
  ASSERT_OK(catalog_->CreateNamespace({"a"}, {}));
  ASSERT_OK(catalog_->CreateNamespace({"b"}, {}));
  const TableIdentifier from{{"a"}, "t"};
  const TableIdentifier to{{"b"}, "renamed"};
  ASSERT_OK_AND_ASSIGN(auto created, catalog_->CreateTable(TableRequest(from)));
  ASSERT_OK(catalog_->CreateTable(TableRequest({{"b"}, "taken"})).status());
  EXPECT_KIND(catalog_->RenameTable(from, {{"b"}, "taken"}), ErrorKind::kAlreadyExists);
  EXPECT_KIND(catalog_->RenameTable(from, {{"missing"}, "t"}), ErrorKind::kNotFound);
  EXPECT_KIND(catalog_->RenameTable({{"a"}, "nope"}, to), ErrorKind::kNotFound);
  ASSERT_OK(catalog_->RenameTable(from, to));
  EXPECT_KIND(catalog_->LoadTable(from), ErrorKind::kNotFound);
  ASSERT_OK_AND_ASSIGN(auto loaded, catalog_->LoadTable(to));
  EXPECT_EQ(loaded.metadata_location, created.metadata_location);
  ASSERT_OK_AND_ASSIGN(auto tables, catalog_->ListTables({"b"}));
  EXPECT_EQ(tables, (std::vector<TableIdentifier>{to, {{"b"}, "taken"}}));
}

TEST_F(SqlCatalogTest, DropTableWithAndWithoutPurge) {
  ASSERT_OK(catalog_->CreateNamespace({"ns"}, {}));
  const TableIdentifier kept{{"ns"}, "kept"};
  const TableIdentifier purged{{"ns"}, "purged"};
  ASSERT_OK_AND_ASSIGN(auto t1, catalog_->CreateTable(TableRequest(kept)));
  ASSERT_OK_AND_ASSIGN(auto t2, catalog_->CreateTable(TableRequest(purged)));
  ASSERT_OK(catalog_->CommitTable(purged, {}, {iceberg::SetProperties{{{"k", "v"}}}}).status());

  ASSERT_OK(catalog_->DropTable(kept, /*purge=*/false));
  EXPECT_KIND(catalog_->LoadTable(kept), ErrorKind::kNotFound);
  EXPECT_TRUE(std::filesystem::exists(LocalPath(t1.metadata_location)));

  ASSERT_OK(catalog_->DropTable(purged, /*purge=*/true));
  EXPECT_KIND(catalog_->LoadTable(purged), ErrorKind::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(LocalPath(t2.metadata->location)));
  EXPECT_TRUE(std::filesystem::exists(LocalPath(warehouse_)));

  EXPECT_KIND(catalog_->DropTable(kept, false), ErrorKind::kNotFound);
  EXPECT_KIND(catalog_->DropTable(kept, true), ErrorKind::kNotFound);
  ASSERT_OK(catalog_->DropNamespace({"ns"}));
}

TEST_F(SqlCatalogTest, PurgeNeverDeletesTheWarehouseOrAbove) {
  ASSERT_OK(catalog_->CreateNamespace({"ns"}, {}));
  ASSERT_OK(catalog_->CreateTable(TableRequest({{"ns"}, "inside"})).status());
  // A table whose location is the directory holding the warehouse (and the database).
  CreateTableRequest above = TableRequest({{"ns"}, "above"});
  above.location = dir_.uri();
  ASSERT_OK_AND_ASSIGN(auto created, catalog_->CreateTable(above));
  ASSERT_OK(catalog_->DropTable({{"ns"}, "above"}, /*purge=*/true));
  EXPECT_FALSE(std::filesystem::exists(LocalPath(created.metadata_location)));
  EXPECT_TRUE(std::filesystem::exists(db_path_));
  ASSERT_OK(catalog_->LoadTable({{"ns"}, "inside"}).status());
}

TEST_F(SqlCatalogTest, RegisterTable) {
  ASSERT_OK(catalog_->CreateNamespace({"ns"}, {}));
  ASSERT_OK_AND_ASSIGN(auto created, catalog_->CreateTable(TableRequest({{"ns"}, "t"})));
  ASSERT_OK_AND_ASSIGN(auto registered, catalog_->RegisterTable({{"ns"}, "alias"}, created.metadata_location));
  EXPECT_EQ(registered.metadata->table_uuid, created.metadata->table_uuid);
  ASSERT_OK_AND_ASSIGN(auto loaded, catalog_->LoadTable({{"ns"}, "alias"}));
  EXPECT_EQ(loaded.metadata_location, created.metadata_location);
  EXPECT_KIND(catalog_->RegisterTable({{"ns"}, "alias"}, created.metadata_location), ErrorKind::kAlreadyExists);
  EXPECT_KIND(catalog_->RegisterTable({{"missing"}, "x"}, created.metadata_location), ErrorKind::kNotFound);
  EXPECT_KIND(catalog_->RegisterTable({{"ns"}, "y"}, warehouse_ + "/nothing/v1.metadata.json"), ErrorKind::kNotFound);
}

TEST_F(SqlCatalogTest, GzipMetadata) {
  ASSERT_OK(catalog_->CreateNamespace({"ns"}, {}));
  const TableIdentifier id{{"ns"}, "gz"};
  ASSERT_OK_AND_ASSIGN(auto created,
                       catalog_->CreateTable(TableRequest(id, {{"write.metadata.compression-codec", "gzip"}})));
  EXPECT_TRUE(std::regex_search(created.metadata_location, std::regex("/00000-[0-9a-f-]+\\.gz\\.metadata\\.json$")))
      << created.metadata_location;
  const std::string bytes = testing::ReadText(LocalPath(created.metadata_location));
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  ASSERT_OK_AND_ASSIGN(auto committed, catalog_->CommitTable(id, {}, {iceberg::SetProperties{{{"k", "v"}}}}));
  EXPECT_TRUE(std::regex_search(committed.metadata_location, std::regex("/00001-[0-9a-f-]+\\.gz\\.metadata\\.json$")));
  ASSERT_OK_AND_ASSIGN(auto loaded, catalog_->LoadTable(id));
  EXPECT_EQ(loaded.metadata->properties.at("k"), "v");
}

TEST_F(SqlCatalogTest, NamespaceLocationPropertyPlacesTables) {
  const std::string ns_location = dir_.uri() + "/elsewhere";
  ASSERT_OK(catalog_->CreateNamespace({"ns"}, {{"location", ns_location}}));
  ASSERT_OK_AND_ASSIGN(auto created, catalog_->CreateTable(TableRequest({{"ns"}, "t"})));
  EXPECT_EQ(created.metadata->location, ns_location + "/t");
}

TEST(SqlCatalogLayoutTest, V0DatabaseWithoutIcebergType) {
  // Java's default ("V0") layout: no iceberg_type column. We must work with it and not add it.
  ScratchDir dir;
  const std::string db_path = (dir.path() / "v0.db").string();
  RawQuery(db_path,
           "CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, "
           "table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location "
           "VARCHAR(1000), PRIMARY KEY (catalog_name, table_namespace, table_name))");
  RawQuery(db_path,
           "CREATE TABLE iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT "
           "NULL, property_key VARCHAR(255), property_value VARCHAR(1000), PRIMARY KEY (catalog_name, namespace, "
           "property_key))");
  SqlCatalogOptions options{"java", db_path, dir.uri() + "/wh", LocalIO()};
  ASSERT_OK_AND_ASSIGN(auto catalog, SqlCatalog::Make(options));
  EXPECT_FALSE(catalog->has_iceberg_type());
  ASSERT_OK(catalog->CreateNamespace({"ns"}, {}));
  ASSERT_OK(catalog->CreateTable(TableRequest({{"ns"}, "t"})).status());
  ASSERT_OK(catalog->CommitTable({{"ns"}, "t"}, {}, {iceberg::SetProperties{{{"k", "v"}}}}).status());
  ASSERT_OK_AND_ASSIGN(auto loaded, catalog->LoadTable({{"ns"}, "t"}));
  EXPECT_EQ(loaded.metadata->properties.at("k"), "v");
  EXPECT_TRUE(RawQuery(db_path, "SELECT 1 FROM pragma_table_info('iceberg_tables') WHERE name = 'iceberg_type'").empty());
}

TEST(SqlCatalogLayoutTest, V1ViewsAreNotTables) {
  ScratchDir dir;
  const std::string db_path = (dir.path() / "v1.db").string();
  SqlCatalogOptions options{"c", db_path, dir.uri() + "/wh", LocalIO()};
  ASSERT_OK_AND_ASSIGN(auto catalog, SqlCatalog::Make(options));
  ASSERT_OK(catalog->CreateNamespace({"ns"}, {}));
  // A view row as Java's JdbcCatalog writes one.
  RawQuery(db_path, "INSERT INTO iceberg_tables VALUES ('c', 'ns', 'v', 'file:///x/v.metadata.json', NULL, 'VIEW')");
  // And a table row written by a pre-V1 client (iceberg_type NULL) counts as a table.
  ASSERT_OK_AND_ASSIGN(auto created, catalog->CreateTable(TableRequest({{"ns"}, "t"})));
  RawQuery(db_path, "INSERT INTO iceberg_tables VALUES ('c', 'ns', 'old', '" + created.metadata_location + "', NULL, NULL)");
  ASSERT_OK_AND_ASSIGN(auto tables, catalog->ListTables({"ns"}));
  EXPECT_EQ(tables, (std::vector<TableIdentifier>{{{"ns"}, "old"}, {{"ns"}, "t"}}));
  EXPECT_KIND(catalog->LoadTable({{"ns"}, "v"}), ErrorKind::kNotFound);
  ASSERT_OK(catalog->LoadTable({{"ns"}, "old"}).status());
  EXPECT_KIND(catalog->CreateTable(TableRequest({{"ns"}, "v"})), ErrorKind::kAlreadyExists);
  EXPECT_KIND(catalog->RenameTable({{"ns"}, "t"}, {{"ns"}, "v"}), ErrorKind::kAlreadyExists);
  EXPECT_KIND(catalog->DropNamespace({"ns"}), ErrorKind::kNamespaceNotEmpty);
}

TEST(SqlCatalogLayoutTest, NotADatabaseIsCorrupt) {
  ScratchDir dir;
  const std::string db_path = (dir.path() / "junk.db").string();
  {
    std::ofstream out(db_path);
    out << "this is not a SQLite database, but it is long enough to have a header............................";
  }
  SqlCatalogOptions options{"c", db_path, dir.uri(), LocalIO()};
  auto catalog = SqlCatalog::Make(options);
  EXPECT_EQ(KindOf(catalog.status()), ErrorKind::kCorrupt) << catalog.status().ToString();
  EXPECT_NE(catalog.status().message().find(db_path), std::string::npos);
}

TEST(SqlCatalogLayoutTest, InMemoryDatabase) {
  ScratchDir dir;
  SqlCatalogOptions options{"mem", ":memory:", dir.uri(), LocalIO()};
  ASSERT_OK_AND_ASSIGN(auto catalog, SqlCatalog::Make(options));
  ASSERT_OK(catalog->CreateNamespace({"ns"}, {}));
  ASSERT_OK(catalog->CreateTable(TableRequest({{"ns"}, "t"})).status());
  ASSERT_OK_AND_ASSIGN(auto tables, catalog->ListTables({"ns"}));
  EXPECT_EQ(tables.size(), 1u);
}

}  // namespace
}  // namespace lakesync::catalog
