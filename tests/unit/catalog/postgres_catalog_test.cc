// SqlCatalog on PostgreSQL: the same behaviour as on SQLite, against a real server. The server comes
// from LAKESYNC_TEST_POSTGRES (a libpq URI of a database the test may create databases from;
// scripts/test.sh starts one with tests/pgserver.py); without it the server tests skip. Every test
// works in a database of its own.
#include <libpq-fe.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <thread>

#include "catalog_test_util.h"
#include "lakesync/catalog/catalog_config.h"
#include "lakesync/catalog/metadata_files.h"
#include "lakesync/catalog/sql/postgres_internal.h"

namespace lakesync::catalog {
namespace {

using testing::CountFiles;
using testing::LocalIO;
using testing::LocalPath;
using testing::ScratchDir;
using testing::SqlCatalogPeer;
using testing::TableRequest;

// Runs one statement on `uri` outside any catalog (as another program would); returns the rows.
std::vector<std::vector<std::string>> Raw(const std::string& uri, const std::string& sql) {
  PGconn* conn = PQconnectdb(uri.c_str());
  EXPECT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  PGresult* result = PQexec(conn, sql.c_str());
  const auto status = PQresultStatus(result);
  EXPECT_TRUE(status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) << PQresultErrorMessage(result) << sql;
  std::vector<std::vector<std::string>> rows;
  for (int r = 0; status == PGRES_TUPLES_OK && r < PQntuples(result); ++r) {
    std::vector<std::string> row;
    for (int c = 0; c < PQnfields(result); ++c) {
      row.push_back(PQgetisnull(result, r, c) ? "<NULL>" : PQgetvalue(result, r, c));
    }
    rows.push_back(std::move(row));
  }
  PQclear(result);
  PQfinish(conn);
  return rows;
}

class PostgresCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* server = std::getenv("LAKESYNC_TEST_POSTGRES");
    if (server == nullptr || *server == '\0') {
      GTEST_SKIP() << "LAKESYNC_TEST_POSTGRES is not set (scripts/test.sh starts a server)";
    }
    std::random_device rd;
    database_ = fmt::format("gt_{:08x}{:08x}", rd(), rd());
    Raw(server, "CREATE DATABASE " + database_);
    std::string base(server);
    uri_ = base.substr(0, base.rfind('/') + 1) + database_;
    server_ = server;
    warehouse_ = dir_.uri() + "/wh";
    catalog_ = Open("test_catalog");
    ASSERT_NE(catalog_, nullptr);
  }
  void TearDown() override {
    catalog_.reset();
    if (!server_.empty()) Raw(server_, "DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
  }

  SqlCatalogOptions Options(const std::string& name) {
    SqlCatalogOptions options;
    options.catalog_name = name;
    options.postgres_uri = uri_;
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
  std::string server_, database_, uri_, warehouse_;
  std::shared_ptr<SqlCatalog> catalog_;
};

TEST_F(PostgresCatalogTest, CreatesThePyicebergTables) {
  EXPECT_TRUE(catalog_->has_iceberg_type());
  auto columns = Raw(uri_, "SELECT column_name FROM information_schema.columns WHERE table_name = 'iceberg_tables' "
                           "ORDER BY ordinal_position");
  std::vector<std::string> names;
  for (const auto& c : columns) names.push_back(c[0]);
  EXPECT_EQ(names, (std::vector<std::string>{"catalog_name", "table_namespace", "table_name", "metadata_location",
                                             "previous_metadata_location", "iceberg_type"}));
  // A second catalog on the same database finds the tables and creates nothing.
  EXPECT_NE(Open("other"), nullptr);
}

TEST_F(PostgresCatalogTest, NamespacesAndEscapedWildcards) {
  ASSERT_OK(catalog_->CreateNamespace({"a"}, {{"owner", "me"}}));
  ASSERT_OK(catalog_->CreateNamespace({"a", "b"}, {}));
  ASSERT_OK(catalog_->CreateNamespace({"nsX1", "child"}, {}));
  EXPECT_KIND(catalog_->CreateNamespace({"a"}, {}), ErrorKind::kAlreadyExists);
  ASSERT_OK_AND_ASSIGN(auto top, catalog_->ListNamespaces({}));
  EXPECT_EQ(top, (std::vector<Namespace>{{"a"}, {"nsX1"}}));
  // "ns_1" must not match "nsX1" (LIKE wildcard escaped), "A" not "a" (PostgreSQL's LIKE is
  // case-sensitive anyway; the exact-prefix check keeps both databases alike).
  ASSERT_OK_AND_ASSIGN(bool exists, catalog_->NamespaceExists({"ns_1"}));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(exists, catalog_->NamespaceExists({"A"}));
  EXPECT_FALSE(exists);
  ASSERT_OK(catalog_->UpdateNamespaceProperties({"a"}, {"owner"}, {{"k", "v"}}));
  ASSERT_OK_AND_ASSIGN(auto props, catalog_->LoadNamespaceMetadata({"a"}));
  EXPECT_EQ(props, (Properties{{"k", "v"}}));
  EXPECT_KIND(catalog_->DropNamespace({"a"}), ErrorKind::kNamespaceNotEmpty);
  ASSERT_OK(catalog_->DropNamespace({"a", "b"}));
  ASSERT_OK(catalog_->DropNamespace({"a"}));
  EXPECT_KIND(catalog_->DropNamespace({"a"}), ErrorKind::kNotFound);
}

TEST_F(PostgresCatalogTest, TablesCommitsRenameAndDrop) {
  ASSERT_OK(catalog_->CreateNamespace({"ns"}, {}));
  const TableIdentifier id{{"ns"}, "t"};
  ASSERT_OK_AND_ASSIGN(auto created, catalog_->CreateTable(TableRequest(id)));
  EXPECT_KIND(catalog_->CreateTable(TableRequest(id)), ErrorKind::kAlreadyExists);
  ASSERT_OK_AND_ASSIGN(auto committed,
                       catalog_->CommitTable(id, {iceberg::AssertTableUuid{created.metadata->table_uuid}},
                                             {iceberg::SetProperties{{{"k", "v"}}}}));
  EXPECT_EQ(ParseMetadataVersion(committed.metadata_location), 1);
  auto row = Raw(uri_, "SELECT metadata_location, previous_metadata_location, iceberg_type FROM iceberg_tables");
  EXPECT_EQ(row[0], (std::vector<std::string>{committed.metadata_location, created.metadata_location, "TABLE"}));
  ASSERT_OK_AND_ASSIGN(auto tables, catalog_->ListTables({"ns"}));
  EXPECT_EQ(tables, (std::vector<TableIdentifier>{id}));

  ASSERT_OK(catalog_->CreateNamespace({"other"}, {}));
  const TableIdentifier to{{"other"}, "renamed"};
  ASSERT_OK(catalog_->RenameTable(id, to));
  EXPECT_KIND(catalog_->LoadTable(id), ErrorKind::kNotFound);
  ASSERT_OK_AND_ASSIGN(auto loaded, catalog_->LoadTable(to));
  EXPECT_EQ(loaded.metadata->properties.at("k"), "v");
  ASSERT_OK(catalog_->DropTable(to, /*purge=*/false));
  EXPECT_KIND(catalog_->LoadTable(to), ErrorKind::kNotFound);
  ASSERT_OK_AND_ASSIGN(auto registered, catalog_->RegisterTable(id, committed.metadata_location));
  EXPECT_EQ(registered.metadata_location, committed.metadata_location);
}

TEST_F(PostgresCatalogTest, StaleSwapIsACommitConflictAndLeavesNoFile) {
  auto peer = SqlCatalogPeer::Make(Options("test_catalog"));
  ASSERT_NE(peer, nullptr);
  ASSERT_OK(peer->CreateNamespace({"ns"}, {}));
  const TableIdentifier id{{"ns"}, "t"};
  ASSERT_OK_AND_ASSIGN(auto created, peer->CreateTable(TableRequest(id)));
  ASSERT_OK_AND_ASSIGN(auto first, peer->LoadTable(id));
  ASSERT_OK_AND_ASSIGN(auto second, peer->LoadTable(id));
  iceberg::ApplyOptions apply;
  apply.base_metadata_location = first.metadata_location;
  ASSERT_OK_AND_ASSIGN(auto next1, iceberg::ApplyUpdates(first.metadata.get(), {iceberg::SetProperties{{{"w", "1"}}}}, apply));
  ASSERT_OK_AND_ASSIGN(auto next2, iceberg::ApplyUpdates(second.metadata.get(), {iceberg::SetProperties{{{"w", "2"}}}}, apply));
  ASSERT_OK_AND_ASSIGN(std::string won, peer->SwapMetadata(id, first.metadata_location, *next1));
  auto lost = peer->SwapMetadata(id, second.metadata_location, *next2);
  EXPECT_EQ(KindOf(lost.status()), ErrorKind::kCommitConflict) << lost.status().ToString();
  ASSERT_OK_AND_ASSIGN(auto current, peer->CurrentMetadataLocation(id));
  EXPECT_EQ(current, won);
  EXPECT_EQ(CountFiles(LocalPath(warehouse_) + "/ns/t/metadata", ".metadata.json"), 2);
  EXPECT_KIND(peer->SwapMetadata(id, "", *created.metadata), ErrorKind::kAlreadyExists);
}

// A multi-table commit (a table template's tables, REST commitTransaction) is one PostgreSQL
// transaction: a stale base on any table swaps no row, and the metadata files it wrote are deleted.
TEST_F(PostgresCatalogTest, MultiTableSwapIsAllOrNothing) {
  auto peer = SqlCatalogPeer::Make(Options("test_catalog"));
  ASSERT_NE(peer, nullptr);
  ASSERT_TRUE(peer->SupportsMultiTableCommit());
  ASSERT_OK(peer->CreateNamespace({"ns"}, {}));
  const TableIdentifier a{{"ns"}, "a"}, b{{"ns"}, "b"};
  ASSERT_OK(peer->CreateTable(TableRequest(a)).status());
  ASSERT_OK(peer->CreateTable(TableRequest(b)).status());
  ASSERT_OK_AND_ASSIGN(auto base_a, peer->LoadTable(a));
  ASSERT_OK_AND_ASSIGN(auto base_b, peer->LoadTable(b));
  auto next = [](const LoadedTable& base, const std::string& value) {
    iceberg::ApplyOptions apply;
    apply.base_metadata_location = base.metadata_location;
    auto updated = iceberg::ApplyUpdates(base.metadata.get(), {iceberg::SetProperties{{{"v", value}}}}, apply);
    EXPECT_TRUE(updated.ok()) << updated.status().ToString();
    return updated.ok() ? *updated : nullptr;
  };
  // Another writer moves b on: a transaction still based on the old b must change neither table.
  ASSERT_OK_AND_ASSIGN(std::string b_now, peer->SwapMetadata(b, base_b.metadata_location, *next(base_b, "other")));
  using Prepared = SqlCatalogPeer::PreparedCommit;
  auto lost = peer->SwapMetadataAll({Prepared{a, base_a, next(base_a, "tx")}, Prepared{b, base_b, next(base_b, "tx")}});
  EXPECT_EQ(KindOf(lost.status()), ErrorKind::kCommitConflict) << lost.status().ToString();
  ASSERT_OK_AND_ASSIGN(auto current_a, peer->CurrentMetadataLocation(a));
  ASSERT_OK_AND_ASSIGN(auto current_b, peer->CurrentMetadataLocation(b));
  EXPECT_EQ(current_a, base_a.metadata_location);
  EXPECT_EQ(current_b, b_now);
  EXPECT_EQ(CountFiles(LocalPath(warehouse_) + "/ns/a/metadata", ".metadata.json"), 1);
  EXPECT_EQ(CountFiles(LocalPath(warehouse_) + "/ns/b/metadata", ".metadata.json"), 2);

  // On current bases both swap.
  ASSERT_OK_AND_ASSIGN(auto fresh_b, peer->LoadTable(b));
  ASSERT_OK_AND_ASSIGN(auto done, peer->SwapMetadataAll({Prepared{a, base_a, next(base_a, "tx")},
                                                         Prepared{b, fresh_b, next(fresh_b, "tx")}}));
  ASSERT_EQ(done.size(), 2u);
  ASSERT_OK_AND_ASSIGN(auto loaded_a, peer->LoadTable(a));
  ASSERT_OK_AND_ASSIGN(auto loaded_b, peer->LoadTable(b));
  EXPECT_EQ(loaded_a.metadata->properties.at("v"), "tx");
  EXPECT_EQ(loaded_b.metadata->properties.at("v"), "tx");
}

// Four catalogs (four connections, as four processes would have) commit to one table at once: every
// commit lands exactly once, the losers of each race retry, and the history is a single chain.
TEST_F(PostgresCatalogTest, ConcurrentCommitsFromManyConnections) {
  ASSERT_OK(catalog_->CreateNamespace({"ns"}, {}));
  const TableIdentifier id{{"ns"}, "t"};
  ASSERT_OK(catalog_->CreateTable(TableRequest(id)).status());
  constexpr int kWriters = 4, kCommitsEach = 6;
  std::atomic<int> conflicts{0};
  std::vector<std::thread> threads;
  std::vector<Status> failures(kWriters);
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      auto catalog = SqlCatalog::Make(Options("test_catalog"));
      if (!catalog.ok()) {
        failures[w] = catalog.status();
        return;
      }
      for (int c = 0; c < kCommitsEach; ++c) {
        while (true) {
          auto loaded = (*catalog)->LoadTable(id);
          if (!loaded.ok()) {
            failures[w] = loaded.status();
            return;
          }
          auto committed = (*catalog)->CommitTable(
              id, {iceberg::AssertTableUuid{loaded->metadata->table_uuid}},
              {iceberg::SetProperties{{{fmt::format("w{}-c{}", w, c), "1"}}}});
          if (committed.ok()) break;
          // A requirement that held, then a swap that lost: reload and retry.
          if (KindOf(committed.status()) != ErrorKind::kCommitConflict) {
            failures[w] = committed.status();
            return;
          }
          ++conflicts;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& f : failures) ASSERT_OK(f);
  ASSERT_OK_AND_ASSIGN(auto loaded, catalog_->LoadTable(id));
  for (int w = 0; w < kWriters; ++w) {
    for (int c = 0; c < kCommitsEach; ++c) EXPECT_EQ(loaded.metadata->properties.count(fmt::format("w{}-c{}", w, c)), 1u);
  }
  EXPECT_EQ(ParseMetadataVersion(loaded.metadata_location), kWriters * kCommitsEach);
  RecordProperty("conflicts", conflicts.load());
}

TEST(PostgresPlaceholders, QuestionMarksBecomeNumberedParameters) {
  using sql_internal::ToPostgresPlaceholders;
  EXPECT_EQ(ToPostgresPlaceholders("SELECT a FROM t WHERE b = ? AND c = ?"),
            "SELECT a FROM t WHERE b = $1 AND c = $2");
  EXPECT_EQ(ToPostgresPlaceholders("x = ?1 OR y LIKE ?3 ESCAPE '!' AND length(?4) = ?12"),
            "x = $1 OR y LIKE $3 ESCAPE '!' AND length($4) = $12");
  EXPECT_EQ(ToPostgresPlaceholders("VALUES (?, '?', 'it''s ?', ?)"), "VALUES ($1, '?', 'it''s ?', $2)");
}

TEST(PostgresCatalogConfig, UriSpellings) {
  auto config = [](const std::string& uri) {
    CatalogConfig c;
    c.catalog_properties = {{"type", "sql"}, {"uri", uri}, {"warehouse", "file:///tmp/wh"}};
    return ValidateCatalogConfig(c);
  };
  EXPECT_OK(config("postgresql://me@127.0.0.1:5432/db"));
  EXPECT_OK(config("postgres://me:secret@db.example:5432/lake?sslmode=require"));
  EXPECT_OK(config("postgresql+psycopg2://me@localhost/db"));
  EXPECT_OK(config("jdbc:postgresql://localhost:5432/db?user=me&password=x"));
  EXPECT_KIND(config("postgresql://localhost:5432"), ErrorKind::kInvalidArgument);
  EXPECT_KIND(config("jdbc:postgresql:db"), ErrorKind::kInvalidArgument);
  // Passwords never reach a message.
  auto st = config("postgresql://me:hunter2@");
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidArgument);
  EXPECT_EQ(st.message().find("hunter2"), std::string::npos) << st.message();
}

TEST(PostgresCatalogConfig, UnreachableServerIsUnavailable) {
  // Port 1 on loopback: nothing listens, the connection is refused at once.
  CatalogConfig c;
  c.catalog_properties = {{"type", "sql"}, {"uri", "postgresql://me:hunter2@127.0.0.1:1/db"},
                          {"warehouse", "file:///tmp/wh"}};
  auto catalog = LoadCatalog(c);
  ASSERT_FALSE(catalog.ok());
  EXPECT_EQ(KindOf(catalog.status()), ErrorKind::kUnavailable) << catalog.status().ToString();
  EXPECT_EQ(catalog.status().message().find("hunter2"), std::string::npos) << catalog.status().message();
}

}  // namespace
}  // namespace lakesync::catalog
