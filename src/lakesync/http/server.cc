#include "lakesync/http/server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "lakesync/common/logging.h"
#include "lakesync/http/status_codes.h"

namespace lakesync::http {
namespace {

// When the request on this worker thread started: set before routing, read by the logger, which
// httplib calls on the same thread after the response is written.
thread_local std::chrono::steady_clock::time_point request_started;

}  // namespace

Result<std::pair<std::string, int>> ParseListenAddress(std::string_view listen) {
  auto fail = [&] {
    return InvalidArgument("invalid listen address '{}': expected HOST:PORT, [IPv6]:PORT or :PORT", listen);
  };
  std::string host;
  std::string_view port_text;
  if (!listen.empty() && listen.front() == '[') {
    const size_t close = listen.find("]:");
    if (close == std::string_view::npos) return fail();
    host = std::string(listen.substr(1, close - 1));
    port_text = listen.substr(close + 2);
  } else {
    const size_t colon = listen.rfind(':');
    if (colon == std::string_view::npos) return fail();
    host = std::string(listen.substr(0, colon));
    port_text = listen.substr(colon + 1);
  }
  if (host.empty()) host = "127.0.0.1";
  int port = -1;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 ||
      port > 65535) {
    return fail();
  }
  return std::make_pair(host, port);
}

Result<std::unique_ptr<Server>> Server::Make(ServerOptions options) {
  ARROW_ASSIGN_OR_RAISE(auto address, ParseListenAddress(options.listen));
  if (options.worker_threads < 1) return InvalidArgument("worker_threads must be at least 1");
  std::unique_ptr<Server> server(new Server(std::move(options)));
  server->host_ = address.first;
  server->port_ = address.second;
  server->InstallCommonHandlers();
  return server;
}

Server::~Server() { Stop(); }

void Server::InstallCommonHandlers() {
  const int workers = options_.worker_threads;
  server_.new_task_queue = [workers] { return new httplib::ThreadPool(static_cast<size_t>(workers)); };
  server_.set_keep_alive_timeout(options_.keep_alive_timeout.count());
  server_.set_read_timeout(options_.read_timeout.count());
  server_.set_write_timeout(options_.write_timeout.count());
  server_.set_payload_max_length(options_.max_body_bytes);
  server_.set_tcp_nodelay(true);  // small JSON answers must not wait for Nagle
  // httplib's default also sets SO_REUSEPORT, which lets a second server bind the same port and
  // silently take half the connections: keep only SO_REUSEADDR (quick restarts).
  server_.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });

  server_.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    request_started = std::chrono::steady_clock::now();
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server_.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"ok"})", "application/json");
  });
  const std::string name = options_.name;
  server_.set_exception_handler([name](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    LS_LOG_ERROR("{}: {} {} failed: {}", name, req.method, req.path, what);
    res.status = 500;
    res.set_content(nlohmann::json{{"error", {{"message", "internal error: " + what}, {"code", 500}}}}.dump(),
                    "application/json");
  });
  if (options_.log_requests) {
    server_.set_logger([name](const httplib::Request& req, const httplib::Response& res) {
      const auto elapsed = std::chrono::steady_clock::now() - request_started;
      const double ms = std::chrono::duration<double, std::milli>(elapsed).count();
      LogEvent(res.status >= 500 ? spdlog::level::warn : spdlog::level::info, name + " request",
               {{"method", req.method},
                {"path", req.path},
                {"status", res.status},
                {"duration_ms", std::round(ms * 1000) / 1000},
                {"bytes", res.body.size()},
                {"remote", req.remote_addr}});
    });
  }
}

Status Server::Start() {
  if (port_ == 0) {
    const int bound = server_.bind_to_any_port(host_);
    if (bound <= 0) return Unavailable("cannot listen on {}: no free port could be bound", options_.listen);
    port_ = bound;
  } else if (!server_.bind_to_port(host_, port_)) {
    return Unavailable("cannot listen on {}: the address is in use or not local", options_.listen);
  }
  thread_ = std::thread([this] {
    server_.listen_after_bind();
    done_.set_value();
  });
  started_ = true;
  // httplib's stop() does nothing until the server thread has marked itself running, so a Stop()
  // right after Start() would be lost: wait for the mark (or for the thread to have given up).
  while (!server_.is_running() &&
         done_future_.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready) {
  }
  if (!server_.is_running()) return Unavailable("cannot serve on {}: the listening socket failed", url());
  LogEvent(spdlog::level::info, options_.name + " listening", {{"url", url()}});
  return Status::OK();
}

std::string Server::url() const {
  const bool ipv6 = host_.find(':') != std::string::npos;
  return "http://" + (ipv6 ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_);
}

void Server::Stop() {
  std::lock_guard<std::mutex> lock(stop_mutex_);
  server_.stop();
  if (thread_.joinable()) thread_.join();
}

void Server::Wait() {
  if (started_) done_future_.wait();
}

namespace {

// The write end of a pipe the signal handler writes to; ServeUntilSignal reads the other end. A
// pipe because only async-signal-safe calls are allowed in a handler.
int signal_pipe_write = -1;
std::atomic<int> signals_seen{0};

extern "C" void OnStopSignal(int) {
  if (signals_seen.fetch_add(1) >= 1) _exit(130);  // second signal: stop now
  const char byte = 1;
  [[maybe_unused]] auto n = write(signal_pipe_write, &byte, 1);
}

}  // namespace

Status ServeUntilSignal(Server& server) {
  int fds[2];
  if (pipe(fds) != 0) return IOError("cannot create a pipe for signal handling");
  signal_pipe_write = fds[1];
  signals_seen = 0;
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  struct sigaction old_int {}, old_term {};
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  char byte = 0;
  while (read(fds[0], &byte, 1) < 0 && errno == EINTR) {
  }
  LS_LOG_INFO("stopping: finishing requests in flight (a second signal stops at once)");
  server.Stop();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  close(fds[0]);
  close(fds[1]);
  return Status::OK();
}

}  // namespace lakesync::http
