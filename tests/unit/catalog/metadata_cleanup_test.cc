// write.metadata.delete-after-commit.enabled with write.metadata.previous-versions-max: metadata files
// that fall off the metadata log are deleted after a commit; the ones still in the log stay.
#include <filesystem>

#include "catalog_test_util.h"

namespace lakesync::catalog::testing {
namespace {

int CountMetadataFiles(const std::filesystem::path& dir) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().string().ends_with(".metadata.json")) ++n;
  }
  return n;
}

void CommitProperties(Catalog& catalog, const TableIdentifier& id, int count) {
  for (int i = 0; i < count; ++i) {
    ASSERT_OK(catalog.CommitTable(id, {}, {iceberg::SetProperties{{{"k" + std::to_string(i), "v"}}}}).status());
  }
}

TEST(MetadataCleanupTest, DeletesFilesThatFallOffTheLog) {
  ScratchDir dir;
  SqlCatalogOptions options{"c", (dir.path() / "c.db").string(), dir.uri() + "/wh", LocalIO()};
  ASSERT_OK_AND_ASSIGN(auto catalog, SqlCatalog::Make(options));
  ASSERT_OK(catalog->CreateNamespace({"ns"}, {}));
  const TableIdentifier id{{"ns"}, "t"};
  ASSERT_OK(catalog->CreateTable(TableRequest(id, {{"write.metadata.delete-after-commit.enabled", "true"},
                                                   {"write.metadata.previous-versions-max", "2"}}))
                .status());
  CommitProperties(*catalog, id, 5);
  ASSERT_OK_AND_ASSIGN(auto loaded, catalog->LoadTable(id));
  // The current file plus the two the log keeps; the three older ones are gone.
  EXPECT_EQ(loaded.metadata->metadata_log.size(), 2u);
  EXPECT_EQ(CountMetadataFiles(dir.path() / "wh" / "ns" / "t" / "metadata"), 3);
  for (const auto& entry : loaded.metadata->metadata_log) {
    EXPECT_TRUE(std::filesystem::exists(entry.metadata_file.substr(std::string("file://").size())))
        << entry.metadata_file;
  }
}

TEST(MetadataCleanupTest, KeepsEverythingByDefault) {
  ScratchDir dir;
  SqlCatalogOptions options{"c", (dir.path() / "c.db").string(), dir.uri() + "/wh", LocalIO()};
  ASSERT_OK_AND_ASSIGN(auto catalog, SqlCatalog::Make(options));
  ASSERT_OK(catalog->CreateNamespace({"ns"}, {}));
  const TableIdentifier id{{"ns"}, "t"};
  ASSERT_OK(catalog->CreateTable(TableRequest(id, {{"write.metadata.previous-versions-max", "2"}})).status());
  CommitProperties(*catalog, id, 5);
  EXPECT_EQ(CountMetadataFiles(dir.path() / "wh" / "ns" / "t" / "metadata"), 6);
}

}  // namespace
}  // namespace lakesync::catalog::testing
