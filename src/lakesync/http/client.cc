#include "lakesync/http/client.h"

#include <algorithm>
#include <charconv>
#include <thread>

#include <nlohmann/json.hpp>

#include "lakesync/common/logging.h"
#include "lakesync/http/status_codes.h"
#include "lakesync/http/url.h"

namespace lakesync::http {
namespace {

bool DefaultIdempotent(const std::string& method) {
  return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE";
}

// Errors raised before any byte of the request reached the server: sending again is always safe.
bool NeverSent(httplib::Error error) {
  return error == httplib::Error::Connection || error == httplib::Error::ConnectionTimeout ||
         error == httplib::Error::BindIPAddress || error == httplib::Error::SSLConnection;
}

// Retry-After in seconds (the HTTP-date form is not used by the services we talk to).
std::optional<std::chrono::milliseconds> RetryAfter(const httplib::Headers& headers) {
  auto it = headers.find("Retry-After");
  if (it == headers.end()) return std::nullopt;
  int seconds = 0;
  const std::string& v = it->second;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seconds);
  if (ec != std::errc() || seconds < 0) return std::nullopt;
  return std::chrono::milliseconds(int64_t{seconds} * 1000);
}

}  // namespace

Request Request::Get(std::string url) {
  Request request;
  request.url = std::move(url);
  return request;
}

Request Request::Post(std::string url, std::string body, std::string content_type) {
  Request request;
  request.method = "POST";
  request.url = std::move(url);
  request.body = std::move(body);
  request.content_type = std::move(content_type);
  return request;
}

std::string Response::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

std::string RedactedUrl(std::string_view url) {
  const size_t query = url.find('?');
  return std::string(url.substr(0, query));
}

Result<std::shared_ptr<Client>> Client::Make(ClientOptions options) {
  if (options.retry.max_attempts < 1) return InvalidArgument("retry.max_attempts must be at least 1");
  return std::shared_ptr<Client>(new Client(std::move(options)));
}

Result<std::unique_ptr<httplib::Client>> Client::Acquire(const std::string& origin) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& idle = idle_[origin];
    if (!idle.empty()) {
      auto client = std::move(idle.back());
      idle.pop_back();
      return client;
    }
  }
  auto client = std::make_unique<httplib::Client>(origin);
  if (!client->is_valid()) return InvalidArgument("cannot make an HTTP client for {}", origin);
  client->set_connection_timeout(options_.connect_timeout);
  client->set_read_timeout(options_.read_timeout);
  client->set_write_timeout(options_.write_timeout);
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);
  client->set_follow_location(false);  // a redirect could carry our Authorization header elsewhere
  if (origin.rfind("https://", 0) == 0) {
    client->enable_server_certificate_verification(options_.verify_tls);
    if (!options_.ca_file.empty()) client->set_ca_cert_path(options_.ca_file);
  }
  return client;
}

void Client::Release(const std::string& origin, std::unique_ptr<httplib::Client> client) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& idle = idle_[origin];
  constexpr size_t kMaxIdlePerOrigin = 16;
  if (idle.size() < kMaxIdlePerOrigin) idle.push_back(std::move(client));
}

Result<Response> Client::Send(const Request& request) { return SendWithRetries(request, nullptr); }

Result<Response> Client::Download(const Request& request, const std::function<Status(std::string_view)>& sink) {
  return SendWithRetries(request, &sink);
}

Result<Response> Client::SendWithRetries(const Request& request,
                                         const std::function<Status(std::string_view)>* sink) {
  ARROW_ASSIGN_OR_RAISE(Url url, ParseUrl(request.url));
  const std::string origin = url.Origin();
  const std::string what = request.method + " " + RedactedUrl(request.url);
  const bool idempotent = request.idempotent.value_or(DefaultIdempotent(request.method));

  httplib::Request req;
  req.method = request.method;
  req.path = (url.path.empty() ? "/" : url.path) + (url.query.empty() ? "" : "?" + url.query);
  for (const auto& [name, value] : options_.default_headers) {
    if (request.headers.find(name) == request.headers.end()) req.headers.emplace(name, value);
  }
  for (const auto& [name, value] : request.headers) req.headers.emplace(name, value);
  if (!request.body.empty() || !request.content_type.empty()) {
    req.body = request.body;
    req.headers.emplace("Content-Type", request.content_type.empty() ? "application/octet-stream" : request.content_type);
  }

  auto backoff = options_.retry.initial_backoff;
  for (int attempt = 1;; ++attempt) {
    const bool last = attempt >= options_.retry.max_attempts;
    ARROW_ASSIGN_OR_RAISE(auto client, Acquire(origin));
    Response response;
    bool delivered_body = false;  // some of the body reached the sink: no retry from here on
    Status sink_status;
    httplib::Request attempt_req = req;
    if (sink) {
      attempt_req.response_handler = [&](const httplib::Response& head) {
        response.status = head.status;
        return true;
      };
      attempt_req.content_receiver = [&](const char* data, size_t length, uint64_t, uint64_t) {
        if (response.status < 200 || response.status >= 300) {
          response.body.append(data, length);  // an error answer: keep it for the message
          return true;
        }
        delivered_body = true;
        sink_status = (*sink)(std::string_view(data, length));
        return sink_status.ok();
      };
    }
    httplib::Response res;
    httplib::Error error = httplib::Error::Success;
    const bool ok = client->send(attempt_req, res, error);
    if (!sink_status.ok()) return sink_status;  // the connection is dropped with the client
    if (ok) {
      response.status = res.status;
      response.headers = std::move(res.headers);
      if (!sink) response.body = std::move(res.body);
      Release(origin, std::move(client));
      if (IsRetryableStatusCode(response.status) && idempotent && !delivered_body && !last) {
        auto wait = std::min(backoff, options_.retry.max_backoff);
        if (auto after = RetryAfter(response.headers)) wait = std::min(*after, options_.retry.max_backoff);
        LogEvent(spdlog::level::debug, "HTTP retry",
                 {{"request", what}, {"status", response.status}, {"attempt", attempt}});
        std::this_thread::sleep_for(wait);
        backoff *= 2;
        continue;
      }
      return response;
    }
    // No answer. The client (and its connection) is dropped.
    const std::string reason = httplib::to_string(error);
    if (error == httplib::Error::SSLServerVerification || error == httplib::Error::SSLLoadingCerts) {
      return IOError("{}: TLS failure ({}); check the CA file or the server's certificate", what, reason);
    }
    const bool retry_safe = NeverSent(error) || (idempotent && !delivered_body);
    if (retry_safe && !last) {
      LogEvent(spdlog::level::debug, "HTTP retry", {{"request", what}, {"error", reason}, {"attempt", attempt}});
      std::this_thread::sleep_for(std::min(backoff, options_.retry.max_backoff));
      backoff *= 2;
      continue;
    }
    if (NeverSent(error)) {
      return Unavailable("{}: cannot connect to {} ({}) after {} attempt(s)", what, origin, reason, attempt);
    }
    if (!idempotent) {
      return CommitStateUnknown("{}: no answer from {} ({}); the request may or may not have been applied", what,
                                origin, reason);
    }
    return Unavailable("{}: no answer from {} ({}) after {} attempt(s)", what, origin, reason, attempt);
  }
}

}  // namespace lakesync::http
