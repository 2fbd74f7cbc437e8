// Who may do what on `lakesync catalog serve`: static bearer tokens from a file and the OAuth2
// client-credentials token endpoint, each with read-only or read-write access and an optional
// namespace scope. Without an auth file every request is allowed (the loopback default), whatever
// Authorization header it carries (some clients send "Bearer None" to servers without auth).
//
// The file (YAML or JSON):
//
//   tokens:                        # static bearer tokens
//     - token: reader-secret
//       access: read-only          # read-only | read-write (default read-only)
//       namespaces: [shop]         # optional: these namespaces and those below them; default all
//   clients:                       # OAuth2 client credentials (POST /v1/oauth/tokens)
//     - client_id: etl
//       client_secret: etl-secret
//       access: read-write
//   token_lifetime_seconds: 3600   # lifetime of tokens the endpoint issues (default 3600)
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/catalog/catalog.h"
#include "lakesync/common/status.h"

namespace lakesync::catalog::rest {

struct Grant {
  bool read_write = false;
  std::vector<Namespace> namespaces;  // empty: every namespace

  // Whether the grant covers `ns` (equal to or below a scoped namespace).
  bool Covers(const Namespace& ns) const;
  // Whether `ns` should be listed to this grant: covered, or an ancestor of a scoped namespace.
  bool Sees(const Namespace& ns) const;
};

struct ServerAuthConfig {
  std::map<std::string, Grant> tokens;
  struct Client {
    std::string secret;
    Grant grant;
  };
  std::map<std::string, Client> clients;  // by client_id
  std::chrono::seconds token_lifetime{3600};
};

// Errors: kInvalidArgument naming the file and key for unknown keys, missing secrets, bad access
// values or malformed namespaces; kNotFound/kIO for an unreadable file.
Result<ServerAuthConfig> ParseServerAuth(std::string_view text, std::string_view source);
Result<ServerAuthConfig> LoadServerAuthFile(const std::string& path);

class ServerAuth {
 public:
  // nullopt: no authentication (everything allowed).
  explicit ServerAuth(std::optional<ServerAuthConfig> config) : config_(std::move(config)) {}

  bool enabled() const { return config_.has_value(); }

  // The grant of an Authorization header value. Errors: kUnauthenticated when auth is on and the
  // header is missing, not a bearer token, unknown or expired. With auth off, a full grant.
  Result<Grant> Authenticate(const std::string& authorization);

  // The OAuth2 client-credentials grant: a new token for a known client and secret.
  // Errors: kUnauthenticated for unknown clients or wrong secrets; kInvalidArgument for another
  // grant type; kUnsupported when auth is off (there is nothing to issue).
  Result<std::pair<std::string, int64_t>> IssueToken(const std::string& grant_type, const std::string& client_id,
                                                      const std::string& client_secret);

 private:
  std::optional<ServerAuthConfig> config_;
  std::mutex mutex_;
  struct Issued {
    Grant grant;
    std::chrono::steady_clock::time_point expires;
  };
  std::map<std::string, Issued> issued_;
};

}  // namespace lakesync::catalog::rest
