// The HTTP client every lakesync protocol client uses (REST catalog, OAuth2 token endpoint, Delta
// Sharing, signed-URL downloads): cpp-httplib underneath, with what they all need once — kept-alive
// connections pooled per origin (safe to share between threads), timeouts, TLS settings, default
// headers, and the retry rule:
//
//   * a request that never left (the connection could not be made) is sent again, whatever it is;
//   * a request answered 429, 502, 503 or 504, or whose connection broke after it was sent, is sent
//     again only when it is idempotent (GET, HEAD, PUT, DELETE, or marked so), after a backoff that
//     doubles from `initial_backoff` up to `max_backoff` (or the answer's Retry-After, if shorter);
//   * a non-idempotent request that was sent and got no answer fails with kCommitStateUnknown: the
//     server may have applied it, and only the caller knows how to find out.
#pragma once

#include <httplib.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::http {

struct RetryPolicy {
  int max_attempts = 4;  // including the first; 1 turns retries off
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{5000};
};

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds read_timeout{60'000};
  std::chrono::milliseconds write_timeout{60'000};
  std::string ca_file;     // PEM bundle that verifies https servers; empty: the system's store
  bool verify_tls = true;  // false accepts any certificate (tests, self-signed servers)
  std::multimap<std::string, std::string> default_headers;  // sent with every request
  RetryPolicy retry;
};

struct Request {
  std::string method = "GET";
  std::string url;  // absolute http(s) URL, query included
  std::multimap<std::string, std::string> headers;
  std::string body;
  std::string content_type;  // for the body
  // Whether sending the request twice is harmless; unset: true for GET, HEAD, PUT and DELETE.
  std::optional<bool> idempotent;

  static Request Get(std::string url);
  static Request Post(std::string url, std::string body, std::string content_type = "application/json");
};

struct Response {
  int status = 0;
  httplib::Headers headers;  // case-insensitive names
  std::string body;
  // The first value of a header, or "" when absent.
  std::string Header(const std::string& name) const;
};

class Client {
 public:
  static Result<std::shared_ptr<Client>> Make(ClientOptions options = {});

  // Sends the request (with the retry rule above) and returns the answer whatever its status code;
  // fails only when no answer came: kUnavailable (could not connect, or retries ran out), kIO (TLS
  // verification or another transport failure), kCommitStateUnknown (see above), kInvalidArgument
  // for a malformed URL. Messages name the method and URL (without its query).
  Result<Response> Send(const Request& request);

  // Like Send, but hands the body of a 2xx answer to `sink` piece by piece instead of keeping it (the
  // returned Response has an empty body; other answers keep theirs for the error message). Retried
  // only while nothing has reached the sink. An error from `sink` stops the transfer and is returned.
  Result<Response> Download(const Request& request, const std::function<Status(std::string_view)>& sink);

  const ClientOptions& options() const { return options_; }

 private:
  explicit Client(ClientOptions options) : options_(std::move(options)) {}
  Result<std::unique_ptr<httplib::Client>> Acquire(const std::string& origin);
  void Release(const std::string& origin, std::unique_ptr<httplib::Client> client);
  Result<Response> SendWithRetries(const Request& request, const std::function<Status(std::string_view)>* sink);

  ClientOptions options_;
  std::mutex mutex_;
  std::map<std::string, std::vector<std::unique_ptr<httplib::Client>>> idle_;  // by origin
};

// The URL without its query string, for messages (queries can carry tokens or signatures).
std::string RedactedUrl(std::string_view url);

}  // namespace lakesync::http
