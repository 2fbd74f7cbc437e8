// The sharing module: protocol types both ways, shares.yaml validation, signing, jsonPredicateHints,
// and the server with lakesync's client in one process on loopback, reading corpus tables exactly as
// the Delta source reads them directly, including a read whose signed URLs expire midway.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>

#include "status_test_util.h"
#include "temp_dir_test_util.h"
#include "lakesync/delta/delta_table.h"
#include "lakesync/http/client.h"
#include "lakesync/http/server.h"
#include "lakesync/sharing/client.h"
#include "lakesync/sharing/predicate.h"
#include "lakesync/sharing/protocol.h"
#include "lakesync/sharing/server.h"
#include "lakesync/sharing/server_config.h"
#include "lakesync/sharing/shared_table.h"
#include "lakesync/sharing/signer.h"

namespace lakesync::sharing {
namespace {

using Json = nlohmann::json;

TEST(CapabilitiesTest, ParsesCaseInsensitivelyAndRefusesUnknownFormats) {
  ASSERT_OK_AND_ASSIGN(auto caps,
                       Capabilities::Parse("ResponseFormat=delta,Parquet;readerFeatures=DeletionVectors,columnmapping;"
                                           "includeEndStreamAction=TRUE;future=x"));
  ASSERT_EQ(caps.response_formats.size(), 2u);
  EXPECT_EQ(caps.response_formats[0], ResponseFormat::kDelta);
  EXPECT_EQ(caps.response_formats[1], ResponseFormat::kParquet);
  EXPECT_EQ(caps.reader_features, (std::set<std::string>{"deletionvectors", "columnmapping"}));
  EXPECT_TRUE(caps.include_end_stream_action);
  ASSERT_OK_AND_ASSIGN(auto empty, Capabilities::Parse(""));
  EXPECT_TRUE(empty.response_formats.empty());
  EXPECT_EQ(KindOf(Capabilities::Parse("responseformat=avro").status()), ErrorKind::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(auto again, Capabilities::Parse(caps.ToHeader()));
  EXPECT_EQ(again.ToHeader(), caps.ToHeader());
}

TEST(ProtocolTest, RequestsRoundTripAndPythonBooleansParse) {
  QueryRequest q;
  q.version = 3;
  q.json_predicate_hints = "{}";
  q.max_files = 10;
  q.include_refresh_token = true;
  ASSERT_OK_AND_ASSIGN(auto back, QueryRequest::FromJson(q.ToJson()));
  EXPECT_EQ(back.ToJson(), q.ToJson());
  EXPECT_EQ(QueryRequest().ToJson().dump(), "{}");
  EXPECT_EQ(KindOf(QueryRequest::FromJson(Json{{"version", "3"}}).status()), ErrorKind::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(auto c, ChangesRequest::FromQuery({{"startingVersion", "2"},
                                                          {"endingTimestamp", "2024-01-01T00:00:00Z"},
                                                          {"includeHistoricalMetadata", "True"}}));
  EXPECT_EQ(c.starting_version, 2);
  EXPECT_TRUE(c.include_historical_metadata);
  EXPECT_EQ(c.ending_timestamp, "2024-01-01T00:00:00Z");
  EXPECT_FALSE(ChangesRequest::FromQuery({{"startingVersion", "two"}}).ok());
}

TEST(ProtocolTest, FileLinesRoundTripInBothFormats) {
  FileLine f;
  f.kind = FileLine::Kind::kCdf;
  f.url = "http://h/f?sig=a%2Fb";
  f.id = "abc";
  f.partition_values = {{"p", "x"}, {"q", std::nullopt}};
  f.size = 12;
  f.version = 4;
  f.timestamp = 1000;
  f.expiration_timestamp = 2000;
  ASSERT_OK_AND_ASSIGN(auto parquet, ParseLine(ToJson(f, ResponseFormat::kParquet).dump(), ResponseFormat::kParquet, 1));
  ASSERT_TRUE(parquet.file);
  EXPECT_EQ(parquet.file->kind, FileLine::Kind::kCdf);
  EXPECT_EQ(parquet.file->url, f.url);
  EXPECT_EQ(parquet.file->partition_values.at("p"), "x");
  EXPECT_FALSE(parquet.file->partition_values.at("q").has_value());  // null goes out as "" and comes back
  EXPECT_EQ(parquet.file->version, 4);
  ASSERT_OK_AND_ASSIGN(auto delta, ParseLine(ToJson(f, ResponseFormat::kDelta).dump(), ResponseFormat::kDelta, 1));
  ASSERT_TRUE(delta.file && delta.file->action);
  EXPECT_EQ(delta.file->action->kind, delta::FileAction::Kind::kCdc);
  EXPECT_EQ(delta.file->action->path, f.url);  // URLs are never percent-decoded
  EXPECT_EQ(ToFileAction(*delta.file).path, f.url);
  ASSERT_OK_AND_ASSIGN(auto end, ParseLine(R"({"endStreamAction":{"errorMessage":"boom"}})", ResponseFormat::kDelta, 9));
  ASSERT_TRUE(end.end_stream);
  EXPECT_EQ(end.end_stream->error_message, "boom");
  EXPECT_EQ(KindOf(ParseLine("not json", ResponseFormat::kDelta, 3).status()), ErrorKind::kCorrupt);
}

TEST(ProtocolTest, ProfilesAndTableUrls) {
  ASSERT_OK_AND_ASSIGN(auto p, Profile::FromJson(Json{{"shareCredentialsVersion", 1},
                                                      {"endpoint", "http://h:1/delta-sharing/"},
                                                      {"bearerToken", "t"},
                                                      {"expirationTime", "2021-11-12T00:12:29.0Z"}}));
  EXPECT_EQ(p.endpoint, "http://h:1/delta-sharing");
  EXPECT_TRUE(p.expiration_time_ms.has_value());
  EXPECT_EQ(KindOf(Profile::FromJson(Json{{"shareCredentialsVersion", 3}}).status()), ErrorKind::kUnsupported);
  EXPECT_EQ(KindOf(Profile::FromJson(Json{{"shareCredentialsVersion", 2}, {"type", "oauth_client_credentials"},
                                          {"endpoint", "http://h"}, {"bearerToken", "t"}})
                       .status()),
            ErrorKind::kUnsupported);
  EXPECT_FALSE(Profile::FromJson(Json{{"shareCredentialsVersion", 1}, {"endpoint", "http://h"}}).ok());
  ASSERT_OK_AND_ASSIGN(auto u, TableUrl::Parse("/a#b/p.share#s.sc.t"));
  EXPECT_EQ(u.profile, "/a#b/p.share");
  EXPECT_EQ(u.Name(), "s.sc.t");
  EXPECT_FALSE(TableUrl::Parse("p#s.t").ok());
  EXPECT_FALSE(TableUrl::Parse("s.sc.t").ok());
}

TEST(ServerConfigTest, RefusesUnknownKeysBadNamesAndDanglingGrants) {
  auto parse = [](const std::string& yaml) {
    auto j = Json::parse(yaml);
    return ServerConfig::FromJson(j, "shares.yaml");
  };
  const std::string tables = R"("shares":[{"name":"s","schemas":[{"name":"d","tables":[{"name":"t","location":"/x"}]}]}])";
  ASSERT_OK_AND_ASSIGN(auto ok, parse(R"({"version":1,)" + tables + R"(,"authorization":{"bearerToken":"x"}})"));
  EXPECT_EQ(ok.endpoint, "/delta-sharing");
  EXPECT_FALSE(ok.shares[0].schemas[0].tables[0].history_shared);
  auto unknown = parse(R"({"version":1,)" + tables + R"(,"authorization":{"bearerToken":"x"},"colour":1})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("colour"), std::string::npos);
  auto ssl = parse(R"({"version":1,)" + tables + R"(,"authorization":{"bearerToken":"x"},"ssl":{}})");
  ASSERT_FALSE(ssl.ok());
  EXPECT_NE(ssl.status().message().find("ssl"), std::string::npos);
  EXPECT_FALSE(parse(R"({"version":1,)" + tables + "}").ok());  // no way to authenticate
  auto dangling = parse(R"({"version":1,)" + tables +
                        R"(,"recipients":[{"name":"a","token":"t","shares":["nope"]}]})");
  ASSERT_FALSE(dangling.ok());
  EXPECT_NE(dangling.status().message().find("nope"), std::string::npos);
  EXPECT_FALSE(parse(R"({"version":1,"shares":[{"name":"a b"}],"authorization":{"bearerToken":"x"}})").ok());
  EXPECT_FALSE(parse(R"({"version":1,"shares":[{"name":"s","schemas":[{"name":"d.e"}]}],)"
                     R"("authorization":{"bearerToken":"x"}})")
                   .ok());
  ASSERT_OK_AND_ASSIGN(auto r, parse(R"({"version":1,)" + tables +
                                     R"(,"recipients":[{"name":"a","token":"secret","shares":["S"]}]})"));
  EXPECT_EQ(r.recipients[0].token_sha256, Sha256Hex("secret"));
  EXPECT_EQ(r.recipients[0].shares, (std::set<std::string>{"s"}));
}

TEST(SignerTest, DetectsTamperingAndForeignTokens) {
  Signer a("key-a"), b("key-b");
  const std::string sig = a.Sign("path\n123");
  EXPECT_TRUE(a.Verify("path\n123", sig));
  EXPECT_FALSE(a.Verify("path\n124", sig));
  EXPECT_FALSE(b.Verify("path\n123", sig));
  EXPECT_FALSE(a.Verify("path\n123", sig.substr(1)));
  const std::string token = a.Seal(Json{{"o", 5}});
  ASSERT_OK_AND_ASSIGN(auto claims, a.Open(token, "pageToken"));
  EXPECT_EQ(claims["o"], 5);
  EXPECT_EQ(KindOf(b.Open(token, "pageToken").status()), ErrorKind::kInvalidArgument);
  std::string altered = token;
  altered[1] = altered[1] == '7' ? '8' : '7';
  EXPECT_FALSE(a.Open(altered, "pageToken").ok());
  EXPECT_NE(Signer("").Sign("x"), Signer("").Sign("x"));  // random keys
}

TEST(PredicateTest, PrunesByPartitionValuesAndStats) {
  auto eq = R"({"op":"equal","children":[{"op":"column","name":"p","valueType":"int"},
                                         {"op":"literal","value":"5","valueType":"int"}]})";
  ASSERT_OK_AND_ASSIGN(auto p, FilePredicate::Parse(eq));
  EXPECT_TRUE(p.MayMatch({{"p", "5"}}, nullptr));
  EXPECT_FALSE(p.MayMatch({{"p", "6"}}, nullptr));
  EXPECT_FALSE(p.MayMatch({{"p", std::nullopt}}, nullptr));
  Json stats = Json::parse(R"({"numRecords":10,"minValues":{"p":1},"maxValues":{"p":4},"nullCount":{"p":0}})");
  EXPECT_FALSE(p.MayMatch({}, &stats));
  stats["maxValues"]["p"] = 9;
  EXPECT_TRUE(p.MayMatch({}, &stats));
  EXPECT_TRUE(p.MayMatch({}, nullptr));  // nothing known: keep the file
  auto range = R"({"op":"and","children":[
      {"op":"greaterThanOrEqual","children":[{"op":"column","name":"d","valueType":"date"},
                                            {"op":"literal","value":"2021-01-01","valueType":"date"}]},
      {"op":"not","children":[{"op":"isNull","children":[{"op":"column","name":"d","valueType":"date"}]}]}]})";
  ASSERT_OK_AND_ASSIGN(auto r, FilePredicate::Parse(range));
  EXPECT_TRUE(r.MayMatch({{"d", "2021-03-01"}}, nullptr));
  EXPECT_FALSE(r.MayMatch({{"d", "2020-12-31"}}, nullptr));
  EXPECT_FALSE(r.MayMatch({{"d", std::nullopt}}, nullptr));
  auto lt_literal_first = R"({"op":"lessThan","children":[{"op":"literal","value":"10","valueType":"long"},
                                                          {"op":"column","name":"x","valueType":"long"}]})";
  ASSERT_OK_AND_ASSIGN(auto l, FilePredicate::Parse(lt_literal_first));  // 10 < x
  EXPECT_FALSE(l.MayMatch({{"x", "10"}}, nullptr));
  EXPECT_TRUE(l.MayMatch({{"x", "11"}}, nullptr));
  auto ts = R"({"op":"lessThan","children":[{"op":"column","name":"t","valueType":"timestamp"},
                {"op":"literal","value":"2021-04-28T23:33:57Z","valueType":"timestamp"}]})";
  ASSERT_OK_AND_ASSIGN(auto t, FilePredicate::Parse(ts));
  EXPECT_TRUE(t.MayMatch({{"t", "2021-04-28 23:33:56"}}, nullptr));
  EXPECT_FALSE(t.MayMatch({{"t", "2021-04-28 23:33:57"}}, nullptr));
  for (const char* bad : {"[", R"({"op":"nand","children":[]})", R"({"op":"and","children":[{"op":"column","name":"a"}]})",
                          R"({"op":"equal","children":[{"op":"column","name":"a","valueType":"uuid"},{"op":"literal","value":"1"}]})"}) {
    EXPECT_FALSE(FilePredicate::Parse(bad).ok()) << bad;
  }
}

// ---- Server and client together ----

std::string ExtractCorpus(const std::string& archive) {
  const auto dir = lakesync::testing::ProcessTempDir("lakesync-sharing-unit-" + std::to_string(::getpid()));
  const std::string cmd = "tar --zstd -xf " LAKESYNC_SHARED_DIR "/corpora/delta-cdf/" + archive + ".tar.zst -C " +
                          dir.string();
  if (std::system(cmd.c_str()) != 0) return "";
  return (dir / archive).string();
}

std::shared_ptr<arrow::Table> ReadAll(const std::shared_ptr<arrow::RecordBatchReader>& reader) {
  auto table = reader->ToTable();
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return table.ok() ? *table : nullptr;
}

class SharingServerTest : public ::testing::Test {
 protected:
  void Start(const std::string& table_root, int64_t url_timeout_seconds = 3600) {
    root_ = table_root;
    ServerConfig config;
    config.bearer_token = "token";
    config.url_timeout_seconds = url_timeout_seconds;
    config.shares = {ShareConfig{"s", {SharedSchemaConfig{"d", {SharedTableConfig{"t", table_root, {}, true, 0}}}}}};
    SharingServiceOptions options;
    options.now_ms = [this] { return now_ms_.load(); };
    ASSERT_OK_AND_ASSIGN(service_, SharingService::Make(config, options));
    http::ServerOptions so;
    so.log_requests = false;
    ASSERT_OK_AND_ASSIGN(server_, http::Server::Make(so));
    service_->Register(*server_);
    ASSERT_OK(server_->Start());
    Profile profile;
    profile.endpoint = server_->url() + "/delta-sharing";
    profile.bearer_token = "token";
    ASSERT_OK_AND_ASSIGN(client_, SharingClient::Make(profile));
    ASSERT_OK_AND_ASSIGN(table_, SharedTable::Open(client_, TableName{"s", "d", "t"}));
    ASSERT_OK_AND_ASSIGN(direct_, delta::DeltaTable::Open(table_root, std::map<std::string, std::string>{}));
  }

  std::string root_;
  std::atomic<int64_t> now_ms_{1'700'000'000'000};
  std::unique_ptr<SharingService> service_;
  std::unique_ptr<http::Server> server_;
  std::shared_ptr<SharingClient> client_;
  std::shared_ptr<SharedTable> table_;
  std::shared_ptr<delta::DeltaTable> direct_;
};

TEST_F(SharingServerTest, SnapshotsAndChangesEqualTheDeltaSourceReadingDirectly) {
  const std::string root = ExtractCorpus("cdf-table");
  ASSERT_FALSE(root.empty());
  Start(root);
  ASSERT_OK_AND_ASSIGN(int64_t latest, table_->LatestVersion());
  EXPECT_EQ(latest, direct_->latest_version());
  for (int64_t v = 0; v <= latest; ++v) {
    delta::SnapshotScanOptions o;
    o.version = v;
    ASSERT_OK_AND_ASSIGN(auto shared, table_->ScanSnapshot(o));
    ASSERT_OK_AND_ASSIGN(auto direct, direct_->ScanSnapshot(o));
    auto a = ReadAll(shared), b = ReadAll(direct);
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(a->Equals(*b)) << "version " << v << "\n" << a->ToString() << "\n" << b->ToString();
  }
  delta::ChangeFeedOptions c;
  c.start_version = 0;
  ASSERT_OK_AND_ASSIGN(auto shared, table_->ReadChanges(c));
  ASSERT_OK_AND_ASSIGN(auto direct, direct_->ReadChanges(c));
  auto a = ReadAll(shared), b = ReadAll(direct);
  ASSERT_TRUE(a && b);
  EXPECT_GT(a->num_rows(), 0);
  EXPECT_TRUE(a->Equals(*b)) << a->ToString() << "\n" << b->ToString();

  ASSERT_OK_AND_ASSIGN(auto shares, client_->ListShares());
  ASSERT_EQ(shares.size(), 1u);
  EXPECT_EQ(shares[0].name, "s");
  ASSERT_OK_AND_ASSIGN(auto tables, client_->ListAllTables("s"));
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].schema, "d");
}

TEST_F(SharingServerTest, AReadWhoseUrlsExpireMidwayRefreshesThem) {
  const std::string root = ExtractCorpus("cdf-table");
  ASSERT_FALSE(root.empty());
  Start(root, /*url_timeout_seconds=*/60);
  ASSERT_OK_AND_ASSIGN(auto shared, table_->ScanSnapshot({}));  // URLs issued now; files read later
  // A raw query's URL works now and not after the clock passes its expiry.
  ASSERT_OK_AND_ASSIGN(auto answer, client_->Query(TableName{"s", "d", "t"}, QueryRequest{}));
  ASSERT_FALSE(answer.files.empty());
  ASSERT_OK_AND_ASSIGN(auto http, http::Client::Make());
  ASSERT_OK_AND_ASSIGN(auto before, http->Send(http::Request::Get(answer.files[0].url)));
  EXPECT_EQ(before.status, 200);
  now_ms_ += 3'600'000;
  ASSERT_OK_AND_ASSIGN(auto after, http->Send(http::Request::Get(answer.files[0].url)));
  EXPECT_EQ(after.status, 403);
  // The reader meets 403 on its first file, asks again with its refresh token, and reads everything.
  auto a = ReadAll(shared);
  ASSERT_OK_AND_ASSIGN(auto direct, direct_->ScanSnapshot({}));
  auto b = ReadAll(direct);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(a->Equals(*b));
}

TEST_F(SharingServerTest, ErrorsComeBackWithTheirKinds) {
  const std::string root = ExtractCorpus("cdf-table-simple");
  ASSERT_FALSE(root.empty());
  Start(root);
  auto missing = SharedTable::Open(client_, TableName{"s", "d", "nope"});
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(KindOf((*missing)->LatestVersion().status()), ErrorKind::kNotFound);
  delta::ChangeFeedOptions c;
  c.start_version = 99;
  EXPECT_EQ(KindOf(table_->ReadChanges(c).status()), ErrorKind::kInvalidArgument);
  Profile wrong = client_->profile();
  wrong.bearer_token = "wrong";
  ASSERT_OK_AND_ASSIGN(auto other, SharingClient::Make(wrong));
  EXPECT_EQ(KindOf(other->ListShares().status()), ErrorKind::kUnauthenticated);
}

}  // namespace
}  // namespace lakesync::sharing
