// The HTTP server every lakesync service runs on (REST catalog, Delta Sharing, metrics, UI): cpp-httplib
// (Debian's libcpp-httplib) with what each of them needs once — binding a "host:port" (port 0 picks a
// free one), a worker per open connection up to a bound, one structured log line per request, a
// /healthz endpoint, exceptions turned into 500s, and a graceful stop on SIGINT/SIGTERM.
//
// Handlers are registered on routes() with httplib's own API before Start(); they must not throw (an
// exception becomes a logged 500). A protocol layer writes its own error bodies (StatusCodeFor gives
// the code for an error kind).
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "lakesync/common/status.h"

namespace lakesync::http {

struct ServerOptions {
  // "host:port", "[v6]:port" or ":port" (loopback). Port 0 lets the OS choose; port() tells which.
  std::string listen = "127.0.0.1:0";
  std::string name = "http";  // the service's name in log lines ("rest-catalog", "sharing")
  // Requests are served on a pool of this many threads; a kept-alive connection holds one between
  // its requests, so this bounds the connections served at once (others wait in the listen queue).
  int worker_threads = 32;
  std::chrono::seconds keep_alive_timeout{5};
  std::chrono::seconds read_timeout{30};
  std::chrono::seconds write_timeout{60};
  size_t max_body_bytes = size_t{256} << 20;
  bool log_requests = true;  // one INFO line per request (method, path, status, duration)
};

// "host:port" into its parts; ":port" means 127.0.0.1. Errors: kInvalidArgument naming the address.
Result<std::pair<std::string, int>> ParseListenAddress(std::string_view listen);

class Server {
 public:
  static Result<std::unique_ptr<Server>> Make(ServerOptions options);
  ~Server();

  // Register handlers here before Start().
  httplib::Server& routes() { return server_; }

  // Binds the address and serves on a background thread. Errors: kUnavailable when the address
  // cannot be bound (in use, not local), naming it.
  Status Start();
  // The bound port (after Start) and the base URL clients use, e.g. "http://127.0.0.1:8181".
  int port() const { return port_; }
  std::string url() const;

  // Stops accepting connections, lets in-flight requests finish, and returns when the server thread
  // has ended. Safe to call more than once and from a signal-watching thread.
  void Stop();
  // Blocks until the server has stopped (after Stop() from another thread).
  void Wait();

 private:
  explicit Server(ServerOptions options) : options_(std::move(options)) {}
  void InstallCommonHandlers();

  ServerOptions options_;
  httplib::Server server_;
  std::string host_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> started_{false};
  std::mutex stop_mutex_;  // one Stop() joins the thread; others wait for it
  std::promise<void> done_;
  std::shared_future<void> done_future_ = done_.get_future().share();
};

// Serves until SIGINT or SIGTERM arrives, then stops the server gracefully and returns OK; a second
// signal while stopping exits the process at once (status 130). For the `serve` commands.
Status ServeUntilSignal(Server& server);

}  // namespace lakesync::http
