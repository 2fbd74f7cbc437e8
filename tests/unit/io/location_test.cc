#include "lakesync/io/location.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace lakesync::io {
namespace {

std::string Normalized(std::string_view input) {
  auto result = NormalizeLocation(input);
  EXPECT_TRUE(result.ok()) << input << ": " << result.status().ToString();
  return result.ok() ? *result : std::string();
}

TEST(NormalizeLocation, AbsolutePathBecomesFileUri) {
  EXPECT_EQ(Normalized("/tmp/warehouse/db/t"), "file:///tmp/warehouse/db/t");
}

TEST(NormalizeLocation, RemovesTrailingSlashDotsAndDoubledSlashes) {
  EXPECT_EQ(Normalized("/tmp/warehouse/"), "file:///tmp/warehouse");
  EXPECT_EQ(Normalized("/tmp//a/./b/../c"), "file:///tmp/a/c");
  EXPECT_EQ(Normalized("/"), "file:///");
  EXPECT_EQ(Normalized("/.."), "file:///");
}

TEST(NormalizeLocation, RelativePathResolvesAgainstCurrentDirectory) {
  const std::string cwd = std::filesystem::current_path().string();
  EXPECT_EQ(Normalized("some/dir"), "file://" + cwd + "/some/dir");
  EXPECT_EQ(Normalized("."), "file://" + cwd);
}

TEST(NormalizeLocation, AcceptsEveryFileUriSpelling) {
  // Java's Hadoop Path writes "file:/abs"; most other writers "file:///abs".
  EXPECT_EQ(Normalized("file:/tmp/t"), "file:///tmp/t");
  EXPECT_EQ(Normalized("file:///tmp/t"), "file:///tmp/t");
  EXPECT_EQ(Normalized("file://localhost/tmp/t"), "file:///tmp/t");
  EXPECT_EQ(Normalized("FILE:///tmp/t/"), "file:///tmp/t");
  EXPECT_EQ(Normalized("file:////tmp/t"), "file:///tmp/t");
}

TEST(NormalizeLocation, KeepsObjectStoreUrisUnchanged) {
  for (const char* uri : {"s3://bucket/t/metadata/v1.metadata.json", "s3a://bucket/t/", "s3://bucket",
                          "gs://bucket/a//b", "abfss://c@acct.dfs.core.windows.net/t",
                          "abfs://c@acct.dfs.core.windows.net/t"}) {
    EXPECT_EQ(Normalized(uri), uri);
  }
}

TEST(NormalizeLocation, RejectsWhatItCannotServe) {
  auto empty = NormalizeLocation("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(KindOf(empty.status()), ErrorKind::kInvalidArgument);

  auto remote = NormalizeLocation("file://otherhost/tmp/t");
  ASSERT_FALSE(remote.ok());
  EXPECT_EQ(KindOf(remote.status()), ErrorKind::kInvalidArgument);
  EXPECT_NE(remote.status().message().find("otherhost"), std::string::npos);

  auto http = NormalizeLocation("http://example.com/t");
  ASSERT_FALSE(http.ok());
  EXPECT_EQ(KindOf(http.status()), ErrorKind::kUnsupported);
  EXPECT_NE(http.status().message().find("http://example.com/t"), std::string::npos);

  auto no_bucket = NormalizeLocation("s3:///key");
  ASSERT_FALSE(no_bucket.ok());
  EXPECT_EQ(KindOf(no_bucket.status()), ErrorKind::kInvalidArgument);

  auto single_slash = NormalizeLocation("s3:/bucket/key");
  ASSERT_FALSE(single_slash.ok());
  EXPECT_EQ(KindOf(single_slash.status()), ErrorKind::kInvalidArgument);
}

TEST(ParseLocation, SplitsObjectStoreUris) {
  auto s3 = ParseLocation("s3a://bucket/t/data/x.parquet");
  ASSERT_TRUE(s3.ok());
  EXPECT_EQ(s3->kind, StorageKind::kS3);
  EXPECT_EQ(s3->scheme, "s3a");
  EXPECT_EQ(s3->authority, "bucket");
  EXPECT_EQ(s3->path, "t/data/x.parquet");

  auto gs = ParseLocation("gs://bucket");
  ASSERT_TRUE(gs.ok());
  EXPECT_EQ(gs->kind, StorageKind::kGcs);
  EXPECT_EQ(gs->authority, "bucket");
  EXPECT_EQ(gs->path, "");

  auto abfs = ParseLocation("abfss://container@account.dfs.core.windows.net/t/x");
  ASSERT_TRUE(abfs.ok());
  EXPECT_EQ(abfs->kind, StorageKind::kAzure);
  EXPECT_EQ(abfs->authority, "container@account.dfs.core.windows.net");
  EXPECT_EQ(abfs->path, "t/x");

  auto local = ParseLocation("file:/tmp/x/../y");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->kind, StorageKind::kLocal);
  EXPECT_EQ(local->path, "/tmp/y");
}

TEST(JoinLocation, PutsExactlyOneSlashBetween) {
  EXPECT_EQ(JoinLocation("s3://b/t", "metadata"), "s3://b/t/metadata");
  EXPECT_EQ(JoinLocation("s3://b/t/", "metadata"), "s3://b/t/metadata");
  EXPECT_EQ(JoinLocation("s3://b/t//", "//metadata/v1.json"), "s3://b/t/metadata/v1.json");
  EXPECT_EQ(JoinLocation("file:///tmp/t", "data/x"), "file:///tmp/t/data/x");
  EXPECT_EQ(JoinLocation("file:/tmp/t/", "x"), "file:/tmp/t/x");
  EXPECT_EQ(JoinLocation("/tmp/t", "x"), "/tmp/t/x");
}

TEST(JoinLocation, KeepsRootsWhole) {
  EXPECT_EQ(JoinLocation("file:///", "tmp"), "file:///tmp");
  EXPECT_EQ(JoinLocation("/", "tmp"), "/tmp");
  EXPECT_EQ(JoinLocation("s3://b/", "k"), "s3://b/k");
}

TEST(JoinLocation, EmptySideReturnsTheOther) {
  EXPECT_EQ(JoinLocation("s3://b/t/", ""), "s3://b/t");
  EXPECT_EQ(JoinLocation("", "x/y"), "x/y");
}

}  // namespace
}  // namespace lakesync::io
