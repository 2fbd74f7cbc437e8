// Beam's hadoop_config translated into FileIO properties: mapped keys, implementation classes without
// effect, everything else refused by name.
#include <gtest/gtest.h>

#include "lakesync/io/hadoop_config.h"

namespace lakesync::io {
namespace {

TEST(HadoopConfig, KeysWithACounterpartAreTranslated) {
  auto t = TranslateHadoopConfig({{"fs.s3a.endpoint", "http://127.0.0.1:9000"},
                                  {"fs.s3a.access.key", "k"},
                                  {"fs.s3a.secret.key", "s"},
                                  {"fs.s3a.path.style.access", "true"},
                                  {"fs.gs.impl", "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem"},
                                  {"fs.AbstractFileSystem.gs.impl", "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFS"},
                                  {"fs.gs.project.id", "p"},
                                  {"fs.gs.auth.type", "unauthenticated"},
                                  {"fs.azure.account.key.acct.dfs.core.windows.net", "secret"}},
                                 "job.yaml: source.hadoop_config");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->properties, (std::map<std::string, std::string>{{"s3.endpoint", "http://127.0.0.1:9000"},
                                                               {"s3.access-key-id", "k"},
                                                               {"s3.secret-access-key", "s"},
                                                               {"s3.path-style-access", "true"},
                                                               {"gcs.project-id", "p"},
                                                               {"gcs.no-auth", "true"},
                                                               {"adls.account-name", "acct"},
                                                               {"adls.account-key", "secret"}}));
  EXPECT_EQ(t->ignored, (std::vector<std::string>{"fs.AbstractFileSystem.gs.impl", "fs.gs.impl"}));
}

TEST(HadoopConfig, OtherKeysAreRefusedByName) {
  auto t = TranslateHadoopConfig({{"fs.s3a.connection.maximum", "100"}}, "job.yaml: source.hadoop_config");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(KindOf(t.status()), ErrorKind::kInvalidArgument);
  EXPECT_NE(t.status().message().find("fs.s3a.connection.maximum"), std::string::npos);
  EXPECT_NE(t.status().message().find("job.yaml"), std::string::npos);
  EXPECT_FALSE(TranslateHadoopConfig({{"fs.gs.auth.type", "SERVICE_ACCOUNT_JSON_KEYFILE"}}, "x").ok());
  EXPECT_FALSE(TranslateHadoopConfig({{"fs.s3a.aws.credentials.provider", "com.example.Custom"}}, "x").ok());
  // Two keys that disagree about one property.
  EXPECT_FALSE(TranslateHadoopConfig({{"fs.s3a.region", "eu"}, {"fs.s3a.endpoint.region", "us"}}, "x").ok());
}

}  // namespace
}  // namespace lakesync::io
