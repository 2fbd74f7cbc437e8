// How catalog properties and environment variables become object-store settings. No network:
// filesystems are made but never asked to do I/O.
#include <arrow/filesystem/filesystem.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "lakesync/io/file_io.h"
#include "lakesync/io/object_stores_internal.h"

namespace lakesync::io {
namespace {

using internal::EnvLookup;
using internal::GcsConfig;
using internal::Properties;
using internal::S3Config;

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(S3Config, EndpointRegionAndStaticKeysFromProperties) {
  auto config = S3Config::FromProperties({{"s3.endpoint", "http://127.0.0.1:9000/"},
                                          {"s3.access-key-id", "AKID"},
                                          {"s3.secret-access-key", "SECRET"},
                                          {"s3.session-token", "TOKEN"},
                                          {"s3.region", "eu-west-1"}},
                                         FakeEnv({{"AWS_ACCESS_KEY_ID", "ENVKEY"},
                                                  {"AWS_SECRET_ACCESS_KEY", "ENVSECRET"},
                                                  {"AWS_REGION", "ap-south-1"}}));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->endpoint_override, "127.0.0.1:9000");
  EXPECT_EQ(config->scheme, "http");
  EXPECT_EQ(config->region, "eu-west-1");
  EXPECT_EQ(config->credentials, S3Config::Credentials::kExplicit);
  EXPECT_EQ(config->access_key, "AKID");
  EXPECT_EQ(config->secret_key, "SECRET");
  EXPECT_EQ(config->session_token, "TOKEN");
  EXPECT_FALSE(config->force_virtual_addressing);
}

TEST(S3Config, EnvironmentFillsWhatPropertiesLeaveOpen) {
  auto config = S3Config::FromProperties(
      {}, FakeEnv({{"AWS_ACCESS_KEY_ID", "ENVKEY"},
                   {"AWS_SECRET_ACCESS_KEY", "ENVSECRET"},
                   {"AWS_SESSION_TOKEN", "ENVTOKEN"},
                   {"AWS_DEFAULT_REGION", "us-west-2"},
                   {"AWS_ENDPOINT_URL", "https://minio.local:9000"}}));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->credentials, S3Config::Credentials::kExplicit);
  EXPECT_EQ(config->access_key, "ENVKEY");
  EXPECT_EQ(config->session_token, "ENVTOKEN");
  EXPECT_EQ(config->region, "us-west-2");
  EXPECT_EQ(config->endpoint_override, "minio.local:9000");
  EXPECT_EQ(config->scheme, "https");
}

TEST(S3Config, PyicebergClientAliasesAreAccepted) {
  auto config = S3Config::FromProperties({{"client.access-key-id", "A"},
                                          {"client.secret-access-key", "S"},
                                          {"client.region", "eu-central-1"}},
                                         FakeEnv({}));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->credentials, S3Config::Credentials::kExplicit);
  EXPECT_EQ(config->access_key, "A");
  EXPECT_EQ(config->region, "eu-central-1");
}

TEST(S3Config, NoCredentialsMeansAnonymousUnlessTheDefaultChainIsAskedFor) {
  auto none = S3Config::FromProperties({}, FakeEnv({}));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->credentials, S3Config::Credentials::kAnonymous);
  EXPECT_EQ(none->region, "") << "AWS itself: the region is resolved from the bucket";

  auto asked = S3Config::FromProperties({{"s3.anonymous", "false"}}, FakeEnv({}));
  ASSERT_TRUE(asked.ok());
  EXPECT_EQ(asked->credentials, S3Config::Credentials::kDefaultChain);

  auto profile = S3Config::FromProperties({}, FakeEnv({{"AWS_PROFILE", "dev"}}));
  ASSERT_TRUE(profile.ok());
  EXPECT_EQ(profile->credentials, S3Config::Credentials::kDefaultChain);

  auto forced = S3Config::FromProperties(
      {{"s3.anonymous", "TRUE"}, {"s3.access-key-id", "A"}, {"s3.secret-access-key", "S"}}, FakeEnv({}));
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(forced->credentials, S3Config::Credentials::kAnonymous);
}

TEST(S3Config, CustomEndpointDefaultsRegionAndPathStyle) {
  auto config = S3Config::FromProperties({{"s3.endpoint", "localhost:9000"}}, FakeEnv({}));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->region, "us-east-1");
  EXPECT_EQ(config->scheme, "https");
  EXPECT_FALSE(config->force_virtual_addressing);

  auto virtual_hosts = S3Config::FromProperties(
      {{"s3.endpoint", "http://localhost:9000"}, {"s3.path-style-access", "false"}}, FakeEnv({}));
  ASSERT_TRUE(virtual_hosts.ok());
  EXPECT_TRUE(virtual_hosts->force_virtual_addressing);
}

TEST(S3Config, MalformedValuesNameTheProperty) {
  struct Case {
    Properties properties;
    std::string key;
  };
  for (const Case& c : std::vector<Case>{
           {{{"s3.path-style-access", "yes"}}, "s3.path-style-access"},
           {{{"s3.anonymous", "1"}}, "s3.anonymous"},
           {{{"s3.connect-timeout", "soon"}}, "s3.connect-timeout"},
           {{{"s3.endpoint", "ftp://host"}}, "s3.endpoint"},
           {{{"s3.endpoint", "http://host/path"}}, "s3.endpoint"},
           {{{"s3.access-key-id", "A"}}, "s3.secret-access-key"},
       }) {
    auto config = S3Config::FromProperties(c.properties, FakeEnv({}));
    ASSERT_FALSE(config.ok()) << c.key;
    EXPECT_EQ(KindOf(config.status()), ErrorKind::kInvalidArgument);
    EXPECT_NE(config.status().message().find(c.key), std::string::npos) << config.status().message();
  }
}

TEST(GcsConfig, EmulatorEndpointMeansAnonymousOverHttp) {
  auto config = GcsConfig::FromProperties({{"gcs.endpoint", "http://127.0.0.1:4443"}}, FakeEnv({}));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->endpoint_override, "127.0.0.1:4443");
  EXPECT_EQ(config->scheme, "http");
  EXPECT_EQ(config->credentials, GcsConfig::Credentials::kAnonymous);

  auto from_env = GcsConfig::FromProperties({}, FakeEnv({{"STORAGE_EMULATOR_HOST", "localhost:9023"}}));
  ASSERT_TRUE(from_env.ok());
  EXPECT_EQ(from_env->endpoint_override, "localhost:9023");
  EXPECT_EQ(from_env->scheme, "http");

  auto java_key = GcsConfig::FromProperties({{"gcs.service.host", "https://gcs.internal:443"}}, FakeEnv({}));
  ASSERT_TRUE(java_key.ok());
  EXPECT_EQ(java_key->endpoint_override, "gcs.internal:443");
  EXPECT_EQ(java_key->scheme, "https");
}

TEST(GcsConfig, TokenAndDefaultCredentials) {
  auto token = GcsConfig::FromProperties(
      {{"gcs.oauth2.token", "ya29.x"}, {"gcs.oauth2.token-expires-at", "1700000000000"}}, FakeEnv({}));
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(token->credentials, GcsConfig::Credentials::kAccessToken);
  EXPECT_EQ(token->access_token, "ya29.x");
  EXPECT_EQ(token->token_expires_at_ms, 1700000000000);

  auto adc = GcsConfig::FromProperties({}, FakeEnv({}));
  ASSERT_TRUE(adc.ok());
  EXPECT_EQ(adc->credentials, GcsConfig::Credentials::kDefault);

  auto no_auth = GcsConfig::FromProperties({{"gcs.no-auth", "true"}}, FakeEnv({}));
  ASSERT_TRUE(no_auth.ok());
  EXPECT_EQ(no_auth->credentials, GcsConfig::Credentials::kAnonymous);

  auto bad = GcsConfig::FromProperties(
      {{"gcs.oauth2.token", "t"}, {"gcs.oauth2.token-expires-at", "tomorrow"}}, FakeEnv({}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("gcs.oauth2.token-expires-at"), std::string::npos);
}

TEST(AzureConfig, PartialServicePrincipalIsRejected) {
  auto partial = internal::AzureConfig::FromProperties({{"adls.tenant-id", "t"}, {"adls.client-id", "c"}});
  ASSERT_FALSE(partial.ok());
  EXPECT_EQ(KindOf(partial.status()), ErrorKind::kInvalidArgument);
  EXPECT_NE(partial.status().message().find("adls.client-secret"), std::string::npos);
}

TEST(FileIOMake, RejectsMalformedKnownKeysAndIgnoresUnknownOnes) {
  auto bad = FileIO::Make({{"s3.path-style-access", "maybe"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(KindOf(bad.status()), ErrorKind::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("s3.path-style-access"), std::string::npos);

  auto unknown = FileIO::Make({{"write.format.default", "parquet"}, {"s3.some-future-key", "x"}});
  ASSERT_TRUE(unknown.ok()) << unknown.status().ToString();
  EXPECT_EQ((*unknown)->properties().at("write.format.default"), "parquet");
}

// Making a filesystem contacts nobody; these check that each scheme maps to the right Arrow
// filesystem and path, and that filesystems are shared as documented.
TEST(FileIOResolve, MapsEachSchemeToItsFilesystemAndPath) {
  auto io = FileIO::Make({{"s3.endpoint", "http://127.0.0.1:1"},
                          {"s3.access-key-id", "a"},
                          {"s3.secret-access-key", "b"},
                          {"gcs.endpoint", "http://127.0.0.1:1"},
                          {"adls.anon", "true"}});
  ASSERT_TRUE(io.ok()) << io.status().ToString();

  auto local = (*io)->Resolve("file:/tmp/x/../y");
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EXPECT_EQ(local->filesystem->type_name(), "local");
  EXPECT_EQ(local->path, "/tmp/y");

  auto s3 = (*io)->Resolve("s3a://bucket/t/data/x.parquet");
  ASSERT_TRUE(s3.ok()) << s3.status().ToString();
  EXPECT_EQ(s3->filesystem->type_name(), "s3");
  EXPECT_EQ(s3->path, "bucket/t/data/x.parquet");
  auto s3_same_bucket = (*io)->Resolve("s3://bucket/other/");
  ASSERT_TRUE(s3_same_bucket.ok());
  EXPECT_EQ(s3_same_bucket->filesystem, s3->filesystem) << "one client per bucket";
  EXPECT_EQ(s3_same_bucket->path, "bucket/other");
  auto s3_other_bucket = (*io)->Resolve("s3://bucket2/k");
  ASSERT_TRUE(s3_other_bucket.ok());
  EXPECT_NE(s3_other_bucket->filesystem, s3->filesystem);

  auto gs = (*io)->Resolve("gs://bucket/t/x");
  ASSERT_TRUE(gs.ok()) << gs.status().ToString();
  EXPECT_EQ(gs->filesystem->type_name(), "gcs");
  EXPECT_EQ(gs->path, "bucket/t/x");

  auto abfs = (*io)->Resolve("abfss://container@account.dfs.core.windows.net/t/x");
  ASSERT_TRUE(abfs.ok()) << abfs.status().ToString();
  EXPECT_EQ(abfs->filesystem->type_name(), "abfs");
  EXPECT_EQ(abfs->path, "container/t/x");
}

}  // namespace
}  // namespace lakesync::io
