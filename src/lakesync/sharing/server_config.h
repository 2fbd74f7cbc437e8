// shares.yaml: what `lakesync share serve` shares and with whom. The reference server's layout, so its
// users can bring their file, plus lakesync's per-recipient tokens:
//
//   version: 1
//   shares:
//   - name: share1
//     schemas:
//     - name: schema1
//       tables:
//       - name: table1
//         location: s3://bucket/path/table1      # any FileIO location: path, file://, s3, gs, abfs
//         id: 00000000-0000-0000-0000-000000000000   # optional; default: the Delta table's metaData.id
//         historyShared: true                    # version/timestamp/startingVersion queries and /changes
//         startVersion: 0                        # optional: the earliest version that may be read
//   authorization:
//     bearerToken: <token>                       # one token for every share
//   recipients:                                  # lakesync: per-recipient tokens
//   - name: alice
//     token_sha256: <hex sha-256 of the token>   # or token: <the token itself>
//     shares: [share1]
//     expires: 2027-01-01T00:00:00Z              # optional
//   host: 127.0.0.1                              # --listen overrides host and port
//   port: 8080
//   endpoint: /delta-sharing
//   preSignedUrlTimeoutSeconds: 3600
//   queryTablePageSizeLimit: 10000
//   queryTablePageTokenTtlMs: 259200000
//   refreshTokenTtlMs: 3600000
//   evaluateJsonPredicateHints: true
//   storage_properties: {s3.endpoint: ...}       # lakesync: FileIO properties for object stores
//   url_signing_key: <secret>                    # lakesync: default a random key per process
//
// Unknown keys are errors, and so are reference keys lakesync does not honour (ssl, ...), by name.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/common/status.h"

namespace lakesync::sharing {

struct SharedTableConfig {
  std::string name;
  std::string location;
  std::optional<std::string> id;
  bool history_shared = false;
  int64_t start_version = 0;
};

struct SharedSchemaConfig {
  std::string name;
  std::vector<SharedTableConfig> tables;
};

struct ShareConfig {
  std::string name;
  std::vector<SharedSchemaConfig> schemas;
};

struct RecipientConfig {
  std::string name;
  std::string token_sha256;     // lower-case hex
  std::set<std::string> shares;  // lower-cased share names
  std::optional<int64_t> expires_ms;
};

struct ServerConfig {
  std::vector<ShareConfig> shares;
  std::optional<std::string> bearer_token;
  std::vector<RecipientConfig> recipients;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string endpoint = "/delta-sharing";
  int64_t url_timeout_seconds = 3600;
  int64_t page_size_limit = 10000;
  int64_t page_token_ttl_ms = 259'200'000;
  int64_t refresh_token_ttl_ms = 3'600'000;
  bool evaluate_json_predicate_hints = true;
  std::map<std::string, std::string> storage_properties;
  std::string url_signing_key;  // empty: random per process

  // Errors: InvalidArgument naming the key (and `where`, the file) for unknown keys, wrong types,
  // invalid or duplicate names, recipients naming shares that do not exist, or no way to authenticate.
  static Result<ServerConfig> FromJson(const nlohmann::json& document, const std::string& where);
  static Result<ServerConfig> Load(const std::string& path);
};

// Lower-case hex SHA-256 of `text` (recipient tokens are stored this way).
std::string Sha256Hex(std::string_view text);

}  // namespace lakesync::sharing
