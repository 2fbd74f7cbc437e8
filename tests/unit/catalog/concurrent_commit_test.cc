// Concurrent commits on both catalogs: several threads (each with its own catalog object, so with
// its own SQLite connection for the SQL catalog) add properties to one table, retrying on conflict.
// No update may be lost and no failed attempt may be visible.
#include <atomic>
#include <thread>

#include "catalog_test_util.h"
#include "lakesync/catalog/metadata_files.h"

namespace lakesync::catalog {
namespace {

using testing::CountFiles;
using testing::LocalIO;
using testing::ScratchDir;
using testing::TableRequest;

constexpr int kThreads = 6;
constexpr int kCommitsPerThread = 8;

struct Outcome {
  std::atomic<int> successes{0};
  std::atomic<int> conflicts{0};
  std::atomic<int> failures{0};
  std::mutex mutex;
  std::vector<std::string> errors;
  std::vector<std::string> winning_locations;
};

// Each thread commits kCommitsPerThread distinct properties; a conflict means "reload and re-apply".
void RunWriters(const std::function<std::shared_ptr<Catalog>()>& open, const TableIdentifier& id, Outcome* outcome) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::shared_ptr<Catalog> catalog = open();
      if (!catalog) {
        outcome->failures++;
        return;
      }
      for (int c = 0; c < kCommitsPerThread; ++c) {
        const std::string key = fmt::format("writer-{}-commit-{}", t, c);
        for (int attempt = 0;; ++attempt) {
          auto loaded = catalog->LoadTable(id);
          if (!loaded.ok()) {
            std::lock_guard lock(outcome->mutex);
            outcome->errors.push_back(loaded.status().ToString());
            outcome->failures++;
            return;
          }
          // Require the table to still be the one we loaded, as a writer that re-applies on a fresh
          // load would; the catalog's own compare-and-swap is what catches the races.
          auto committed = catalog->CommitTable(id, {iceberg::AssertTableUuid{loaded->metadata->table_uuid}},
                                                {iceberg::SetProperties{{{key, std::to_string(attempt)}}}});
          if (committed.ok()) {
            outcome->successes++;
            std::lock_guard lock(outcome->mutex);
            outcome->winning_locations.push_back(committed->metadata_location);
            break;
          }
          const ErrorKind kind = KindOf(committed.status());
          if (kind == ErrorKind::kCommitConflict || kind == ErrorKind::kUnavailable) {
            outcome->conflicts++;
            if (attempt < 1000) continue;
          }
          std::lock_guard lock(outcome->mutex);
          outcome->errors.push_back(committed.status().ToString());
          outcome->failures++;
          return;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
}

void CheckFinalState(Catalog& catalog, const TableIdentifier& id, const LoadedTable& created, Outcome& outcome) {
  EXPECT_EQ(outcome.failures.load(), 0) << (outcome.errors.empty() ? "" : outcome.errors[0]);
  EXPECT_EQ(outcome.successes.load(), kThreads * kCommitsPerThread);
  auto loaded = catalog.LoadTable(id);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  for (int t = 0; t < kThreads; ++t) {
    for (int c = 0; c < kCommitsPerThread; ++c) {
      EXPECT_EQ(loaded->metadata->properties.count(fmt::format("writer-{}-commit-{}", t, c)), 1u)
          << "lost update writer " << t << " commit " << c;
    }
  }
  // Every successful commit is one link in a single chain: the metadata log names the creation
  // and every winner but the last, each exactly once, in commit order.
  const auto& log = loaded->metadata->metadata_log;
  ASSERT_EQ(static_cast<int>(log.size()), kThreads * kCommitsPerThread);
  EXPECT_EQ(log.front().metadata_file, created.metadata_location);
  std::set<std::string> winners(outcome.winning_locations.begin(), outcome.winning_locations.end());
  EXPECT_EQ(static_cast<int>(winners.size()), kThreads * kCommitsPerThread);
  for (size_t i = 1; i < log.size(); ++i) {
    EXPECT_EQ(winners.count(log[i].metadata_file), 1u) << log[i].metadata_file;
    EXPECT_EQ(ParseMetadataVersion(log[i].metadata_file), ParseMetadataVersion(log[i - 1].metadata_file) + 1);
  }
  EXPECT_EQ(winners.count(loaded->metadata_location), 1u);
  std::cout << "commits: " << outcome.successes.load() << ", conflicts retried: " << outcome.conflicts.load() << "\n";
}

TEST(ConcurrentCommitTest, SqlCatalogSeparateConnections) {
  ScratchDir dir;
  SqlCatalogOptions options;
  options.catalog_name = "concurrent";
  options.database_path = (dir.path() / "catalog.db").string();
  options.warehouse = dir.uri() + "/wh";
  options.io = LocalIO();
  ASSERT_OK_AND_ASSIGN(auto catalog, SqlCatalog::Make(options));
  ASSERT_OK(catalog->CreateNamespace({"ns"}, {}));
  const TableIdentifier id{{"ns"}, "t"};
  ASSERT_OK_AND_ASSIGN(auto created, catalog->CreateTable(TableRequest(id)));

  Outcome outcome;
  RunWriters(
      [&]() -> std::shared_ptr<Catalog> {
        auto c = SqlCatalog::Make(options);
        return c.ok() ? *c : nullptr;
      },
      id, &outcome);
  CheckFinalState(*catalog, id, created, outcome);
  // Losers removed their metadata files: one file per winning version plus the creation.
  EXPECT_EQ(CountFiles(dir.path() / "wh" / "ns" / "t" / "metadata", ".metadata.json"),
            kThreads * kCommitsPerThread + 1);
}

TEST(ConcurrentCommitTest, SqlCatalogSharedObject) {
  ScratchDir dir;
  SqlCatalogOptions options;
  options.catalog_name = "concurrent";
  options.database_path = (dir.path() / "catalog.db").string();
  options.warehouse = dir.uri() + "/wh";
  options.io = LocalIO();
  ASSERT_OK_AND_ASSIGN(auto catalog, SqlCatalog::Make(options));
  ASSERT_OK(catalog->CreateNamespace({"ns"}, {}));
  const TableIdentifier id{{"ns"}, "t"};
  ASSERT_OK_AND_ASSIGN(auto created, catalog->CreateTable(TableRequest(id)));
  Outcome outcome;
  RunWriters([&]() -> std::shared_ptr<Catalog> { return catalog; }, id, &outcome);
  CheckFinalState(*catalog, id, created, outcome);
}

TEST(ConcurrentCommitTest, FilesystemCatalog) {
  ScratchDir dir;
  FilesystemCatalogOptions options;
  options.catalog_name = "concurrent";
  options.warehouse = dir.uri() + "/wh";
  options.io = LocalIO();
  ASSERT_OK_AND_ASSIGN(auto catalog, FilesystemCatalog::Make(options));
  const TableIdentifier id{{"ns"}, "t"};
  ASSERT_OK_AND_ASSIGN(auto created, catalog->CreateTable(TableRequest(id)));
  Outcome outcome;
  RunWriters(
      [&]() -> std::shared_ptr<Catalog> {
        auto c = FilesystemCatalog::Make(options);
        return c.ok() ? *c : nullptr;
      },
      id, &outcome);
  CheckFinalState(*catalog, id, created, outcome);
  const auto metadata_dir = dir.path() / "wh" / "ns" / "t" / "metadata";
  EXPECT_EQ(CountFiles(metadata_dir, ".metadata.json"), kThreads * kCommitsPerThread + 1);
  EXPECT_TRUE(std::filesystem::exists(metadata_dir / fmt::format("v{}.metadata.json", kThreads * kCommitsPerThread + 1)));
}

TEST(ConcurrentCommitTest, ConcurrentCreateHasOneWinner) {
  ScratchDir dir;
  SqlCatalogOptions options;
  options.catalog_name = "concurrent";
  options.database_path = (dir.path() / "catalog.db").string();
  options.warehouse = dir.uri() + "/wh";
  options.io = LocalIO();
  ASSERT_OK_AND_ASSIGN(auto catalog, SqlCatalog::Make(options));
  ASSERT_OK(catalog->CreateNamespace({"ns"}, {}));
  FilesystemCatalogOptions fs_options{"fs", dir.uri() + "/fswh", LocalIO()};
  for (bool sql : {true, false}) {
    std::atomic<int> created{0};
    std::atomic<int> already{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        std::shared_ptr<Catalog> c;
        if (sql) {
          auto made = SqlCatalog::Make(options);
          if (made.ok()) c = *made;
        } else {
          auto made = FilesystemCatalog::Make(fs_options);
          if (made.ok()) c = *made;
        }
        if (!c) return;
        auto result = c->CreateTable(TableRequest({{"ns"}, "raced"}));
        if (result.ok()) {
          created++;
        } else if (KindOf(result.status()) == ErrorKind::kAlreadyExists) {
          already++;
        } else {
          ADD_FAILURE() << (sql ? "sql: " : "filesystem: ") << result.status().ToString();
        }
      });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(created.load(), 1) << (sql ? "sql" : "filesystem");
    EXPECT_EQ(already.load(), kThreads - 1) << (sql ? "sql" : "filesystem");
  }
}

}  // namespace
}  // namespace lakesync::catalog
