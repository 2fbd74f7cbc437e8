// Named catalogs (~/.lakesync.yaml, LAKESYNC_CONFIG) and pyiceberg-style environment overrides.
#include <fstream>

#include "catalog_test_util.h"
#include "lakesync/catalog/named_catalogs.h"

namespace lakesync::catalog {
namespace {

using testing::ScratchDir;

std::string Write(const ScratchDir& dir, const std::string& name, const std::string& text) {
  const std::string path = (dir.path() / name).string();
  std::ofstream(path) << text;
  return path;
}

TEST(NamedCatalogsTest, ReadsTheFileNamedByLakesyncConfig) {
  ScratchDir dir;
  const std::string file = Write(dir, "lakesync.yaml", R"(
default-catalog: prod
catalog:
  prod:
    type: sql
    uri: sqlite:////tmp/prod.db
    warehouse: /tmp/prod-wh
  Dev:
    type: hadoop
    warehouse: /tmp/dev
)");
  ASSERT_OK_AND_ASSIGN(auto named, LoadNamedCatalogs({{"LAKESYNC_CONFIG", file}}));
  EXPECT_EQ(named.source, file);
  EXPECT_EQ(named.default_catalog.value_or(""), "prod");
  ASSERT_OK_AND_ASSIGN(auto prod, ResolveNamedCatalog(named, "PROD"));  // names are case-insensitive
  EXPECT_EQ(prod.catalog_name, "prod");
  EXPECT_EQ(prod.catalog_properties.at("uri"), "sqlite:////tmp/prod.db");
  ASSERT_OK_AND_ASSIGN(auto dev, ResolveNamedCatalog(named, "dev"));
  EXPECT_EQ(dev.catalog_properties.at("type"), "hadoop");
  auto missing = ResolveNamedCatalog(named, "prd");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(KindOf(missing.status()), ErrorKind::kNotFound);
  EXPECT_NE(missing.status().message().find("did you mean 'prod'?"), std::string::npos) << missing.status().ToString();
}

TEST(NamedCatalogsTest, EnvironmentVariablesOverrideAndDefineCatalogs) {
  ScratchDir dir;
  const std::string file = Write(dir, "l.yaml", "catalog:\n  prod: {type: sql, uri: 'sqlite:////a.db', warehouse: /w}\n");
  ASSERT_OK_AND_ASSIGN(auto named, LoadNamedCatalogs({{"LAKESYNC_CONFIG", file},
                                                      {"LAKESYNC_CATALOG__PROD__URI", "sqlite:////b.db"},
                                                      {"LAKESYNC_CATALOG__PROD__S3__ACCESS_KEY_ID", "k"},
                                                      {"LAKESYNC_CATALOG__PROD__S3__SECRET_ACCESS_KEY", "s"},
                                                      {"LAKESYNC_CATALOG__ENVONLY__TYPE", "hadoop"},
                                                      {"LAKESYNC_CATALOG__ENVONLY__WAREHOUSE", "/e"},
                                                      {"UNRELATED", "x"}}));
  ASSERT_OK_AND_ASSIGN(auto prod, ResolveNamedCatalog(named, "prod"));
  EXPECT_EQ(prod.catalog_properties.at("uri"), "sqlite:////b.db");
  EXPECT_EQ(prod.catalog_properties.at("s3.access-key-id"), "k");
  EXPECT_EQ(prod.catalog_properties.at("s3.secret-access-key"), "s");
  ASSERT_OK_AND_ASSIGN(auto env_only, ResolveNamedCatalog(named, "envonly"));
  EXPECT_EQ(env_only.catalog_properties.at("warehouse"), "/e");
}

TEST(NamedCatalogsTest, ErrorsNameTheFileAndTheKey) {
  ScratchDir dir;
  auto bad_key = LoadNamedCatalogs({{"LAKESYNC_CONFIG", Write(dir, "a.yaml", "catalogs: {}\n")}});
  ASSERT_FALSE(bad_key.ok());
  EXPECT_NE(bad_key.status().message().find("did you mean 'catalog'?"), std::string::npos);
  EXPECT_EQ(KindOf(LoadNamedCatalogs({{"LAKESYNC_CONFIG", (dir.path() / "none.yaml").string()}}).status()),
            ErrorKind::kNotFound);
  // A catalog's properties are checked when it is chosen, naming the file.
  const std::string file = Write(dir, "b.yaml", "catalog:\n  x: {type: hadoop, warehouse: /w, wharehouse: /v}\n");
  ASSERT_OK_AND_ASSIGN(auto named, LoadNamedCatalogs({{"LAKESYNC_CONFIG", file}}));
  auto x = ResolveNamedCatalog(named, "x");
  ASSERT_FALSE(x.ok());
  EXPECT_NE(x.status().message().find(file), std::string::npos);
  EXPECT_NE(x.status().message().find("wharehouse"), std::string::npos);
  // Nothing configured is not an error until a name is asked for.
  ASSERT_OK_AND_ASSIGN(auto none, LoadNamedCatalogs({{"HOME", dir.path().string()}}));
  EXPECT_TRUE(none.catalogs.empty());
  EXPECT_EQ(KindOf(ResolveNamedCatalog(none, "prod").status()), ErrorKind::kNotFound);
}

}  // namespace
}  // namespace lakesync::catalog
