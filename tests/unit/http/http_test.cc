// The shared HTTP plumbing: URL parsing, the error-kind/status table, and the server and client
// together on loopback (port 0), including the client's retry rule.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "status_test_util.h"
#include "lakesync/http/client.h"
#include "lakesync/http/server.h"
#include "lakesync/http/status_codes.h"
#include "lakesync/http/url.h"

namespace lakesync::http {
namespace {

TEST(UrlTest, ParsesSchemesHostsPortsPathsAndQueries) {
  ASSERT_OK_AND_ASSIGN(Url u, ParseUrl("https://example.com/iceberg/v1/?a=1#frag"));
  EXPECT_EQ(u.scheme, "https");
  EXPECT_EQ(u.host, "example.com");
  EXPECT_EQ(u.port, 443);
  EXPECT_EQ(u.path, "/iceberg/v1");
  EXPECT_EQ(u.query, "a=1");
  EXPECT_EQ(u.Origin(), "https://example.com:443");
  ASSERT_OK_AND_ASSIGN(Url v6, ParseUrl("http://[::1]:8181"));
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 8181);
  EXPECT_EQ(v6.path, "");
  EXPECT_EQ(v6.Origin(), "http://[::1]:8181");
  for (const char* bad : {"example.com", "ftp://x", "http://", "http://h:0", "http://h:99999", "http://u:p@h/",
                          "http://[::1"}) {
    auto r = ParseUrl(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(KindOf(r.status()), ErrorKind::kInvalidArgument) << bad;
    }
  }
}

TEST(UrlTest, PercentEncodingRoundTripsAnyBytes) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  const std::string encoded = PercentEncode(all);
  EXPECT_EQ(encoded.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%"),
            std::string::npos);
  ASSERT_OK_AND_ASSIGN(std::string decoded, PercentDecode(encoded));
  EXPECT_EQ(decoded, all);
  EXPECT_EQ(PercentEncode("a b/c\x1f"), "a%20b%2Fc%1F");
  ASSERT_OK_AND_ASSIGN(std::string plus, PercentDecode("a+b%2B", /*plus_is_space=*/true));
  EXPECT_EQ(plus, "a b+");
  EXPECT_FALSE(PercentDecode("%4").ok());
  EXPECT_FALSE(PercentDecode("%zz").ok());
  EXPECT_EQ(EncodeQuery({{"b", "x y"}, {"a", "1&2"}}), "a=1%262&b=x%20y");
}

TEST(StatusCodesTest, EveryKindRoundTripsToAKindOfTheSameClass) {
  for (ErrorKind kind : {ErrorKind::kNotFound, ErrorKind::kInvalidArgument, ErrorKind::kCommitConflict,
                         ErrorKind::kUnauthenticated, ErrorKind::kForbidden, ErrorKind::kUnavailable,
                         ErrorKind::kUnsupported}) {
    EXPECT_EQ(ErrorKindForStatusCode(StatusCodeFor(kind)), kind) << ErrorKindName(kind);
  }
  EXPECT_EQ(StatusCodeFor(ErrorKind::kAlreadyExists), 409);
  EXPECT_EQ(StatusCodeFor(ErrorKind::kCommitStateUnknown), 500);
  EXPECT_EQ(ErrorKindForStatusCode(500), ErrorKind::kUnknown);
  EXPECT_EQ(ErrorKindForStatusCode(429), ErrorKind::kUnavailable);
  EXPECT_TRUE(IsRetryableStatusCode(503));
  EXPECT_FALSE(IsRetryableStatusCode(500));
  EXPECT_FALSE(IsRetryableStatusCode(409));
}

TEST(ServerTest, ParsesListenAddresses) {
  ASSERT_OK_AND_ASSIGN(auto a, ParseListenAddress("127.0.0.1:8181"));
  EXPECT_EQ(a, std::make_pair(std::string("127.0.0.1"), 8181));
  ASSERT_OK_AND_ASSIGN(auto b, ParseListenAddress(":0"));
  EXPECT_EQ(b, std::make_pair(std::string("127.0.0.1"), 0));
  ASSERT_OK_AND_ASSIGN(auto c, ParseListenAddress("[::1]:9"));
  EXPECT_EQ(c.first, "::1");
  for (const char* bad : {"8181", "host:", "host:x", "host:70000", "[::1]9"}) {
    EXPECT_FALSE(ParseListenAddress(bad).ok()) << bad;
  }
}

ClientOptions FastRetries() {
  ClientOptions options;
  options.retry.initial_backoff = std::chrono::milliseconds(1);
  options.retry.max_backoff = std::chrono::milliseconds(2);
  options.connect_timeout = std::chrono::milliseconds(2000);
  return options;
}

class LoopbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.log_requests = false;
    ASSERT_OK_AND_ASSIGN(server_, Server::Make(options));
  }
  void Start() {
    ASSERT_OK(server_->Start());
    ASSERT_GT(server_->port(), 0);
  }
  std::unique_ptr<Server> server_;
};

TEST_F(LoopbackTest, ServesHealthzAndRoutesAndReportsExceptionsAs500) {
  server_->routes().Get("/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(req.get_header_value("X-Test") + "|" + req.get_param_value("q"), "text/plain");
  });
  server_->routes().Get("/boom", [](const httplib::Request&, httplib::Response&) {
    throw std::runtime_error("handler failed");
  });
  Start();
  ASSERT_OK_AND_ASSIGN(auto client, Client::Make(FastRetries()));
  ASSERT_OK_AND_ASSIGN(Response health, client->Send(Request::Get(server_->url() + "/healthz")));
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, R"({"status":"ok"})");
  Request echo = Request::Get(server_->url() + "/echo?q=" + PercentEncode("a b&c"));
  echo.headers.emplace("X-Test", "hello");
  ASSERT_OK_AND_ASSIGN(Response answer, client->Send(echo));
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "hello|a b&c");
  EXPECT_EQ(answer.Header("content-type"), "text/plain");  // names are case-insensitive
  ASSERT_OK_AND_ASSIGN(Response boom, client->Send(Request::Get(server_->url() + "/boom")));
  EXPECT_EQ(boom.status, 500);
  EXPECT_NE(boom.body.find("handler failed"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(Response missing, client->Send(Request::Get(server_->url() + "/nope")));
  EXPECT_EQ(missing.status, 404);
}

TEST_F(LoopbackTest, RetriesIdempotentRequestsOnOverloadButNotPosts) {
  std::atomic<int> calls{0};
  auto flaky = [&](const httplib::Request&, httplib::Response& res) {
    if (calls.fetch_add(1) < 2) {
      res.status = 503;
      res.set_header("Retry-After", "0");
      return;
    }
    res.set_content("done", "text/plain");
  };
  server_->routes().Get("/flaky", flaky);
  server_->routes().Post("/flaky", flaky);
  Start();
  ASSERT_OK_AND_ASSIGN(auto client, Client::Make(FastRetries()));
  ASSERT_OK_AND_ASSIGN(Response get, client->Send(Request::Get(server_->url() + "/flaky")));
  EXPECT_EQ(get.status, 200);
  EXPECT_EQ(calls.load(), 3);

  calls = 0;
  ASSERT_OK_AND_ASSIGN(Response post, client->Send(Request::Post(server_->url() + "/flaky", "{}")));
  EXPECT_EQ(post.status, 503);  // a POST is not sent twice unless marked idempotent
  EXPECT_EQ(calls.load(), 1);

  calls = 0;
  Request marked_post = Request::Post(server_->url() + "/flaky", "{}");
  marked_post.idempotent = true;
  ASSERT_OK_AND_ASSIGN(Response marked, client->Send(marked_post));
  EXPECT_EQ(marked.status, 200);
  EXPECT_EQ(calls.load(), 3);

  calls = -100;  // always 503: retries run out and the last answer comes back
  ClientOptions two = FastRetries();
  two.retry.max_attempts = 2;
  ASSERT_OK_AND_ASSIGN(auto limited, Client::Make(two));
  ASSERT_OK_AND_ASSIGN(Response exhausted, limited->Send(Request::Get(server_->url() + "/flaky")));
  EXPECT_EQ(exhausted.status, 503);
  EXPECT_EQ(calls.load(), -98);
}

TEST_F(LoopbackTest, APostThatGetsNoAnswerIsCommitStateUnknownAndAGetIsRetried) {
  // The handler holds each request until the test lets it go, so the client's read timeout (not the
  // handler's speed) decides that no answer came.
  std::mutex mutex;
  std::condition_variable released_cv;
  bool released = false;
  std::atomic<int> calls{0};
  auto hold = [&](const httplib::Request&, httplib::Response& res) {
    calls.fetch_add(1);
    std::unique_lock<std::mutex> lock(mutex);
    released_cv.wait(lock, [&] { return released; });
    res.set_content("late", "text/plain");
  };
  server_->routes().Post("/hold", hold);
  server_->routes().Get("/hold", hold);
  Start();
  ClientOptions options = FastRetries();
  options.read_timeout = std::chrono::milliseconds(200);
  options.retry.max_attempts = 2;
  ASSERT_OK_AND_ASSIGN(auto client, Client::Make(options));
  auto post = client->Send(Request::Post(server_->url() + "/hold?token=secret", "x", "text/plain"));
  ASSERT_FALSE(post.ok());
  EXPECT_EQ(KindOf(post.status()), ErrorKind::kCommitStateUnknown) << post.status().ToString();
  EXPECT_EQ(post.status().message().find("secret"), std::string::npos);  // queries stay out of messages
  EXPECT_EQ(calls.load(), 1);
  auto get = client->Send(Request::Get(server_->url() + "/hold"));
  ASSERT_FALSE(get.ok());
  EXPECT_EQ(KindOf(get.status()), ErrorKind::kUnavailable) << get.status().ToString();
  EXPECT_EQ(calls.load(), 3);
  {
    std::lock_guard<std::mutex> lock(mutex);
    released = true;
  }
  released_cv.notify_all();
  server_->Stop();
}

TEST_F(LoopbackTest, DownloadsStreamTheBodyAndStopOnASinkError) {
  const std::string big(1 << 20, 'x');
  server_->routes().Get("/big", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(big, "application/octet-stream");
  });
  server_->routes().Get("/denied", [](const httplib::Request&, httplib::Response& res) {
    res.status = 403;
    res.set_content("no", "text/plain");
  });
  Start();
  ASSERT_OK_AND_ASSIGN(auto client, Client::Make(FastRetries()));
  size_t received = 0;
  int pieces = 0;
  ASSERT_OK_AND_ASSIGN(Response r, client->Download(Request::Get(server_->url() + "/big"), [&](std::string_view piece) {
    received += piece.size();
    ++pieces;
    return Status::OK();
  }));
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.body.empty());
  EXPECT_EQ(received, big.size());
  EXPECT_GT(pieces, 1);
  auto stopped = client->Download(Request::Get(server_->url() + "/big"),
                                  [](std::string_view) { return Status::IOError("disk full"); });
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().message(), "disk full");
  bool called = false;
  ASSERT_OK_AND_ASSIGN(Response denied, client->Download(Request::Get(server_->url() + "/denied"), [&](std::string_view) {
    called = true;
    return Status::OK();
  }));
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(denied.body, "no");
  EXPECT_FALSE(called);
}

TEST(ClientTest, ARefusedConnectionIsUnavailableAfterTheRetries) {
  int port = 0;
  {
    ServerOptions options;
    options.log_requests = false;
    ASSERT_OK_AND_ASSIGN(auto server, Server::Make(options));
    ASSERT_OK(server->Start());
    port = server->port();
  }  // stopped: nothing listens there now
  ClientOptions options = FastRetries();
  options.retry.max_attempts = 3;
  ASSERT_OK_AND_ASSIGN(auto client, Client::Make(options));
  // Never sent, so even a POST is retried; it ends as unavailable, not as an unknown outcome.
  auto r = client->Send(Request::Post("http://127.0.0.1:" + std::to_string(port) + "/x", ""));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(KindOf(r.status()), ErrorKind::kUnavailable) << r.status().ToString();
  EXPECT_NE(r.status().message().find("3 attempt"), std::string::npos) << r.status().message();
}

TEST(ServerTest, ABusyPortIsAClearError) {
  ServerOptions options;
  options.log_requests = false;
  ASSERT_OK_AND_ASSIGN(auto first, Server::Make(options));
  ASSERT_OK(first->Start());
  options.listen = "127.0.0.1:" + std::to_string(first->port());
  ASSERT_OK_AND_ASSIGN(auto second, Server::Make(options));
  Status st = second->Start();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(KindOf(st), ErrorKind::kUnavailable);
  EXPECT_NE(st.message().find(options.listen), std::string::npos);
}

}  // namespace
}  // namespace lakesync::http
