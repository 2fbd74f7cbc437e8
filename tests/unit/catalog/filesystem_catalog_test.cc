// FilesystemCatalog ("hadoop"): directory layout, version-hint handling and the create-if-absent commit.
#include <regex>

#include "catalog_test_util.h"

namespace lakesync::catalog {
namespace {

using testing::CountFiles;
using testing::FilesystemCatalogPeer;
using testing::LocalIO;
using testing::ReadText;
using testing::ScratchDir;
using testing::TableRequest;

void WriteText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

class FilesystemCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    wh_ = dir_.path() / "wh";
    catalog_ = FilesystemCatalogPeer::Make(Options());
    ASSERT_NE(catalog_, nullptr);
  }
  FilesystemCatalogOptions Options() {
    FilesystemCatalogOptions options;
    options.catalog_name = "fs";
    options.warehouse = wh_.string();  // a plain path; the catalog normalises it to file:///
    options.io = LocalIO();
    return options;
  }
  // Creates ns.t and commits `commits` property changes: versions v1..v(1+commits).
  LoadedTable MakeTable(const TableIdentifier& id, int commits) {
    auto created = catalog_->CreateTable(TableRequest(id));
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    LoadedTable last = *created;
    for (int i = 0; i < commits; ++i) {
      auto committed = catalog_->CommitTable(id, {}, {iceberg::SetProperties{{{"step", std::to_string(i)}}}});
      EXPECT_TRUE(committed.ok()) << committed.status().ToString();
      last = *committed;
    }
    return last;
  }

  ScratchDir dir_;
  std::filesystem::path wh_;
  std::shared_ptr<FilesystemCatalogPeer> catalog_;
};

TEST_F(FilesystemCatalogTest, LayoutAndVersionHint) {
  const TableIdentifier id{{"db", "sales"}, "orders"};
  ASSERT_OK_AND_ASSIGN(auto created, catalog_->CreateTable(TableRequest(id)));
  const auto metadata_dir = wh_ / "db" / "sales" / "orders" / "metadata";
  EXPECT_EQ(created.metadata->location, "file://" + (wh_ / "db/sales/orders").string());
  EXPECT_EQ(created.metadata_location, "file://" + (metadata_dir / "v1.metadata.json").string());
  EXPECT_TRUE(std::filesystem::exists(metadata_dir / "v1.metadata.json"));
  // The hint is the bare number: no newline.
  EXPECT_EQ(ReadText(metadata_dir / "version-hint.text"), "1");

  ASSERT_OK_AND_ASSIGN(auto committed, catalog_->CommitTable(id, {}, {iceberg::SetProperties{{{"k", "v"}}}}));
  EXPECT_EQ(committed.metadata_location, "file://" + (metadata_dir / "v2.metadata.json").string());
  EXPECT_EQ(ReadText(metadata_dir / "version-hint.text"), "2");
  ASSERT_OK_AND_ASSIGN(auto loaded, catalog_->LoadTable(id));
  EXPECT_EQ(loaded.metadata_location, committed.metadata_location);
  EXPECT_EQ(loaded.metadata->properties.at("k"), "v");
  ASSERT_EQ(loaded.metadata->metadata_log.size(), 1u);
  EXPECT_EQ(loaded.metadata->metadata_log[0].metadata_file, created.metadata_location);
  // No temporary files are left behind.
  for (const auto& entry : std::filesystem::directory_iterator(metadata_dir)) {
    EXPECT_NE(entry.path().filename().string().front(), '.') << entry.path();
  }
  EXPECT_KIND(catalog_->CreateTable(TableRequest(id)), ErrorKind::kAlreadyExists);
}

TEST_F(FilesystemCatalogTest, VersionProbing) {
  const TableIdentifier id{{"ns"}, "t"};
  MakeTable(id, 2);  // v1, v2, v3
  const auto metadata_dir = wh_ / "ns" / "t" / "metadata";
  const std::string v3 = "file://" + (metadata_dir / "v3.metadata.json").string();
  auto current = [&]() -> std::string {
    auto location = catalog_->CurrentMetadataLocation(id);
    EXPECT_TRUE(location.ok()) << location.status().ToString();
    return location.ok() && *location ? **location : "(none)";
  };
  EXPECT_EQ(current(), v3);
  // Stale hint: probe forward.
  WriteText(metadata_dir / "version-hint.text", "1");
  EXPECT_EQ(current(), v3);
  // Hint with a trailing newline (written by hand): tolerated.
  WriteText(metadata_dir / "version-hint.text", "2\n");
  EXPECT_EQ(current(), v3);
  // Corrupt hint: list.
  WriteText(metadata_dir / "version-hint.text", "three");
  EXPECT_EQ(current(), v3);
  // Hint beyond the last version: list.
  WriteText(metadata_dir / "version-hint.text", "9");
  EXPECT_EQ(current(), v3);
  // Missing hint: list.
  std::filesystem::remove(metadata_dir / "version-hint.text");
  EXPECT_EQ(current(), v3);
  ASSERT_OK_AND_ASSIGN(auto loaded, catalog_->LoadTable(id));
  EXPECT_EQ(loaded.metadata->properties.at("step"), "1");
  // A commit after all that continues at v4 and rewrites the hint.
  ASSERT_OK_AND_ASSIGN(auto committed, catalog_->CommitTable(id, {}, {iceberg::SetProperties{{{"k", "v"}}}}));
  EXPECT_EQ(committed.metadata_location, "file://" + (metadata_dir / "v4.metadata.json").string());
  EXPECT_EQ(ReadText(metadata_dir / "version-hint.text"), "4");
}

TEST_F(FilesystemCatalogTest, StaleSwapIsACommitConflict) {
  const TableIdentifier id{{"ns"}, "t"};
  MakeTable(id, 0);
  ASSERT_OK_AND_ASSIGN(auto first, catalog_->LoadTable(id));
  ASSERT_OK_AND_ASSIGN(auto second, catalog_->LoadTable(id));
  iceberg::ApplyOptions apply;
  apply.base_metadata_location = first.metadata_location;
  ASSERT_OK_AND_ASSIGN(auto next1, iceberg::ApplyUpdates(first.metadata.get(), {iceberg::SetProperties{{{"w", "1"}}}}, apply));
  ASSERT_OK_AND_ASSIGN(auto next2, iceberg::ApplyUpdates(second.metadata.get(), {iceberg::SetProperties{{{"w", "2"}}}}, apply));
  ASSERT_OK(catalog_->SwapMetadata(id, first.metadata_location, *next1).status());
  EXPECT_KIND(catalog_->SwapMetadata(id, second.metadata_location, *next2), ErrorKind::kCommitConflict);
  ASSERT_OK_AND_ASSIGN(auto loaded, catalog_->LoadTable(id));
  EXPECT_EQ(loaded.metadata->properties.at("w"), "1");

  // Another writer's v3 appeared after our load (the hint still says 2): the swap from v2 must not
  // overwrite it (the early check or the create-if-absent refuses), and v3 stays as written.
  const auto metadata_dir = wh_ / "ns" / "t" / "metadata";
  const std::string v2 = loaded.metadata_location;
  apply.base_metadata_location = v2;
  ASSERT_OK_AND_ASSIGN(auto next3, iceberg::ApplyUpdates(loaded.metadata.get(), {iceberg::SetProperties{{{"w", "3"}}}}, apply));
  WriteText(metadata_dir / "v3.metadata.json", ReadText(testing::LocalPath(v2)));
  EXPECT_KIND(catalog_->SwapMetadata(id, v2, *next3), ErrorKind::kCommitConflict);
  ASSERT_OK_AND_ASSIGN(loaded, catalog_->LoadTable(id));
  EXPECT_EQ(loaded.metadata_location, "file://" + (metadata_dir / "v3.metadata.json").string());
  EXPECT_EQ(loaded.metadata->properties.at("w"), "1");  // the other writer's content, untouched
}

TEST_F(FilesystemCatalogTest, GzipMetadata) {
  const TableIdentifier id{{"ns"}, "gz"};
  ASSERT_OK_AND_ASSIGN(auto created,
                       catalog_->CreateTable(TableRequest(id, {{"write.metadata.compression-codec", "gzip"}})));
  const auto metadata_dir = wh_ / "ns" / "gz" / "metadata";
  EXPECT_EQ(created.metadata_location, "file://" + (metadata_dir / "v1.gz.metadata.json").string());
  const std::string bytes = ReadText(metadata_dir / "v1.gz.metadata.json");
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  ASSERT_OK(catalog_->CommitTable(id, {}, {iceberg::SetProperties{{{"k", "v"}}}}).status());
  std::filesystem::remove(metadata_dir / "version-hint.text");
  ASSERT_OK_AND_ASSIGN(auto loaded, catalog_->LoadTable(id));
  EXPECT_EQ(loaded.metadata_location, "file://" + (metadata_dir / "v2.gz.metadata.json").string());
  EXPECT_EQ(loaded.metadata->properties.at("k"), "v");
  // Switching the codec off continues the numbering with the plain name.
  ASSERT_OK_AND_ASSIGN(auto plain, catalog_->CommitTable(id, {}, {iceberg::RemoveProperties{{"write.metadata.compression-codec"}}}));
  EXPECT_EQ(plain.metadata_location, "file://" + (metadata_dir / "v3.metadata.json").string());
}

TEST_F(FilesystemCatalogTest, Namespaces) {
  ASSERT_OK(catalog_->CreateNamespace({"a"}, {}));
  ASSERT_OK(catalog_->CreateNamespace({"a", "b"}, {}));
  EXPECT_TRUE(std::filesystem::is_directory(wh_ / "a" / "b"));
  EXPECT_KIND(catalog_->CreateNamespace({"a"}, {}), ErrorKind::kAlreadyExists);
  EXPECT_KIND(catalog_->CreateNamespace({"c"}, {{"k", "v"}}), ErrorKind::kUnsupported);
  EXPECT_KIND(catalog_->CreateNamespace({"x/y"}, {}), ErrorKind::kInvalidArgument);
  EXPECT_KIND(catalog_->CreateNamespace({".."}, {}), ErrorKind::kInvalidArgument);
  MakeTable({{"a"}, "t"}, 0);

  ASSERT_OK_AND_ASSIGN(auto top, catalog_->ListNamespaces({}));
  EXPECT_EQ(top, (std::vector<Namespace>{{"a"}}));
  ASSERT_OK_AND_ASSIGN(auto under_a, catalog_->ListNamespaces({"a"}));
  EXPECT_EQ(under_a, (std::vector<Namespace>{{"a", "b"}}));  // the table directory is not a namespace
  ASSERT_OK_AND_ASSIGN(auto tables, catalog_->ListTables({"a"}));
  EXPECT_EQ(tables, (std::vector<TableIdentifier>{{{"a"}, "t"}}));
  ASSERT_OK_AND_ASSIGN(bool exists, catalog_->NamespaceExists({"a", "t"}));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(exists, catalog_->NamespaceExists({"a", "t", "metadata"}));
  EXPECT_FALSE(exists);
  EXPECT_KIND(catalog_->CreateNamespace({"a", "t", "inner"}, {}), ErrorKind::kInvalidArgument);
  EXPECT_KIND(catalog_->CreateTable(TableRequest({{"a", "t"}, "inner"})), ErrorKind::kInvalidArgument);
  EXPECT_KIND(catalog_->ListTables({"missing"}), ErrorKind::kNotFound);

  ASSERT_OK_AND_ASSIGN(auto props, catalog_->LoadNamespaceMetadata({"a", "b"}));
  EXPECT_EQ(props.at("location"), "file://" + (wh_ / "a" / "b").string());
  EXPECT_KIND(catalog_->UpdateNamespaceProperties({"a"}, {}, {{"k", "v"}}), ErrorKind::kUnsupported);

  EXPECT_KIND(catalog_->DropNamespace({"a"}), ErrorKind::kNamespaceNotEmpty);
  ASSERT_OK(catalog_->DropNamespace({"a", "b"}));
  EXPECT_KIND(catalog_->DropNamespace({"a", "b"}), ErrorKind::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(wh_ / "a" / "b"));

  // Tables create their namespace directories implicitly, as Java's HadoopCatalog does.
  MakeTable({{"implicit", "deep"}, "t"}, 0);
  ASSERT_OK_AND_ASSIGN(exists, catalog_->NamespaceExists({"implicit", "deep"}));
  EXPECT_TRUE(exists);
}

TEST_F(FilesystemCatalogTest, DropRenameRegister) {
  const TableIdentifier id{{"ns"}, "t"};
  auto table = MakeTable(id, 1);
  EXPECT_KIND(catalog_->RenameTable(id, {{"ns"}, "u"}), ErrorKind::kUnsupported);
  EXPECT_KIND(catalog_->RegisterTable({{"ns"}, "u"}, table.metadata_location), ErrorKind::kUnsupported);
  CreateTableRequest elsewhere = TableRequest({{"ns"}, "other"});
  elsewhere.location = dir_.uri() + "/somewhere";
  EXPECT_KIND(catalog_->CreateTable(elsewhere), ErrorKind::kInvalidArgument);
  ASSERT_OK(catalog_->DropTable(id, /*purge=*/false));
  EXPECT_FALSE(std::filesystem::exists(wh_ / "ns" / "t"));
  EXPECT_KIND(catalog_->LoadTable(id), ErrorKind::kNotFound);
  EXPECT_KIND(catalog_->DropTable(id, true), ErrorKind::kNotFound);
}

TEST(FilesystemCatalogObjectStoreTest, CommitsRefusedUnlessAccepted) {
  FilesystemCatalogOptions options;
  options.catalog_name = "fs";
  options.warehouse = "s3://some-bucket/wh";
  options.io = LocalIO();
  ASSERT_OK_AND_ASSIGN(auto catalog, FilesystemCatalog::Make(options));
  auto created = catalog->CreateTable(TableRequest({{"ns"}, "t"}));
  EXPECT_EQ(KindOf(created.status()), ErrorKind::kUnsupported) << created.status().ToString();
  EXPECT_NE(created.status().message().find(kPropAllowUnsafeObjectStoreCommits), std::string::npos);
  EXPECT_NE(created.status().message().find("s3://some-bucket/wh/ns/t"), std::string::npos);
}

TEST_F(FilesystemCatalogTest, SharedWithSecondInstance) {
  // Two catalog objects on one warehouse see each other's commits.
  auto other = FilesystemCatalog::Make(Options());
  ASSERT_TRUE(other.ok());
  const TableIdentifier id{{"ns"}, "t"};
  MakeTable(id, 0);
  ASSERT_OK((*other)->CommitTable(id, {}, {iceberg::SetProperties{{{"from", "other"}}}}).status());
  ASSERT_OK_AND_ASSIGN(auto loaded, catalog_->LoadTable(id));
  EXPECT_EQ(loaded.metadata->properties.at("from"), "other");
  EXPECT_EQ(CountFiles(wh_ / "ns" / "t" / "metadata", ".metadata.json"), 2);
}

}  // namespace
}  // namespace lakesync::catalog
