// The Delta Sharing server (`lakesync share serve`): every endpoint of the protocol over the tables
// shares.yaml names, computed with the delta module (snapshots, file lists, change feeds), and the
// files themselves behind URLs this server signs and serves (HMAC over path and expiry, HTTP range
// requests, read through FileIO from any store). See docs/sharing.md.
//
// Registered on an http::Server, so logging, /healthz, the worker pool and graceful stops are the
// HTTP module's. Errors are the protocol's JSON {"errorCode", "message"} with 4xx codes for everything
// a client can fix (the Python client retries 5xx for about 100 s).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "lakesync/http/server.h"
#include "lakesync/sharing/server_config.h"

namespace lakesync::sharing {

struct SharingServiceOptions {
  // The base of the signed file URLs, e.g. "https://sharing.example.com" behind a proxy. Empty: the
  // scheme and Host header of each request (what its client used to reach this server).
  std::string public_url;
  // The clock (milliseconds since the epoch) for URL and token expiry; tests move it.
  std::function<int64_t()> now_ms;
};

class SharingService {
 public:
  // Errors: InvalidArgument for bad storage_properties.
  static Result<std::unique_ptr<SharingService>> Make(ServerConfig config, SharingServiceOptions options = {});
  ~SharingService();

  // Adds the protocol's routes under config.endpoint, and the signed-file route, to `server`.
  void Register(http::Server& server);

  const ServerConfig& config() const;

  struct Impl;

 private:
  explicit SharingService(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lakesync::sharing
