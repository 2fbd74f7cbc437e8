// Shared helpers for the catalog unit tests: a scratch directory, a small schema, and peers that
// expose the commit primitives (CurrentMetadataLocation, SwapMetadata) of the catalogs so that a
// stale-base swap can be driven deterministically.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "lakesync/catalog/catalog.h"
#include "lakesync/catalog/filesystem/filesystem_catalog.h"
#include "lakesync/catalog/sql/sql_catalog.h"
#include "lakesync/iceberg/model/json_serde.h"
#include "lakesync/io/file_io.h"

namespace lakesync::catalog::testing {

#define ASSERT_OK(expr)                                   \
  do {                                                    \
    auto _st = (expr);                                    \
    ASSERT_TRUE(_st.ok()) << _st.ToString();              \
  } while (0)
#define EXPECT_OK(expr)                                   \
  do {                                                    \
    auto _st = (expr);                                    \
    EXPECT_TRUE(_st.ok()) << _st.ToString();              \
  } while (0)
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr)                  \
  auto LS_CONCAT(_r_, __LINE__) = (rexpr);                \
  ASSERT_TRUE(LS_CONCAT(_r_, __LINE__).ok()) << LS_CONCAT(_r_, __LINE__).status().ToString(); \
  lhs = std::move(LS_CONCAT(_r_, __LINE__)).ValueUnsafe()
#define EXPECT_KIND(expr, kind)                                             \
  do {                                                                      \
    auto _st = ::lakesync::catalog::testing::StatusOf(expr);                \
    EXPECT_EQ(::lakesync::KindOf(_st), kind) << _st.ToString();             \
  } while (0)

inline Status StatusOf(const Status& st) { return st; }
template <typename T>
Status StatusOf(const Result<T>& r) {
  return r.status();
}

// A fresh directory under the system temp dir, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("lakesync-catalog-test-{:08x}{:08x}", rd(), rd());
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string uri() const { return "file://" + path_.string(); }

 private:
  std::filesystem::path path_;
};

inline iceberg::SchemaPtr TestSchema() {
  auto schema = iceberg::SchemaFromJson(nlohmann::json::parse(R"({
    "type": "struct", "schema-id": 0,
    "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "data", "required": false, "type": "string"},
      {"id": 3, "name": "ts", "required": false, "type": "timestamptz"}
    ]})"));
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return *schema;
}

inline CreateTableRequest TableRequest(const TableIdentifier& id, Properties properties = {}) {
  CreateTableRequest request;
  request.identifier = id;
  request.schema = TestSchema();
  request.properties = std::move(properties);
  return request;
}

inline std::shared_ptr<io::FileIO> LocalIO() {
  auto io = io::FileIO::Make();
  EXPECT_TRUE(io.ok()) << io.status().ToString();
  return *io;
}

inline std::string LocalPath(const std::string& location) {
  auto parsed = io::ParseLocation(location);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed->path;
}

inline std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline int CountFiles(const std::filesystem::path& dir, std::string_view suffix) {
  int n = 0;
  if (!std::filesystem::exists(dir)) return 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) ++n;
  }
  return n;
}

class SqlCatalogPeer : public SqlCatalog {
 public:
  static std::shared_ptr<SqlCatalogPeer> Make(SqlCatalogOptions options) {
    std::shared_ptr<SqlCatalogPeer> peer(new SqlCatalogPeer(std::move(options)));
    Status st = peer->Open();
    EXPECT_TRUE(st.ok()) << st.ToString();
    return st.ok() ? peer : nullptr;
  }
  using SqlCatalog::CurrentMetadataLocation;
  using SqlCatalog::SwapMetadata;
  using SqlCatalog::SwapMetadataAll;
  using SqlCatalog::PreparedCommit;

 private:
  explicit SqlCatalogPeer(SqlCatalogOptions options) : SqlCatalog(std::move(options)) {}
};

class FilesystemCatalogPeer : public FilesystemCatalog {
 public:
  static std::shared_ptr<FilesystemCatalogPeer> Make(FilesystemCatalogOptions options) {
    std::shared_ptr<FilesystemCatalogPeer> peer(new FilesystemCatalogPeer(std::move(options)));
    Status st = peer->Init();
    EXPECT_TRUE(st.ok()) << st.ToString();
    return st.ok() ? peer : nullptr;
  }
  using FilesystemCatalog::CurrentMetadataLocation;
  using FilesystemCatalog::SwapMetadata;

 private:
  explicit FilesystemCatalogPeer(FilesystemCatalogOptions options) : FilesystemCatalog(std::move(options)) {}
};

}  // namespace lakesync::catalog::testing
