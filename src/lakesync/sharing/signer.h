// What the sharing server signs with its secret (HMAC-SHA256, OpenSSL): file URLs (a path and an
// expiry) and the opaque tokens it hands out (page tokens, refresh tokens), so that a recipient can
// neither forge nor alter them. Verification compares in constant time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>
#include <openssl/types.h>

#include "lakesync/common/status.h"

namespace lakesync::sharing {

class Signer {
 public:
  // An empty key draws a random 32-byte key (URLs and tokens then die with the process).
  explicit Signer(std::string key);
  ~Signer();
  Signer(const Signer&) = delete;
  Signer& operator=(const Signer&) = delete;

  // Lower-case hex HMAC-SHA256 of `payload`.
  std::string Sign(std::string_view payload) const;
  bool Verify(std::string_view payload, std::string_view signature) const;

  // An opaque token carrying `claims`: hex of the JSON, '.', its signature.
  std::string Seal(const nlohmann::json& claims) const;
  // The claims of a token this signer sealed. Errors: InvalidArgument ("<what> is not valid") for
  // anything else.
  Result<nlohmann::json> Open(std::string_view token, std::string_view what) const;

 private:
  std::string key_;
  // HMAC keyed once; each signature works on a copy (signing 10,000 file URLs per answer is the
  // server's hot path, and keying costs as much as hashing a short payload).
  EVP_MAC_CTX* keyed_ = nullptr;
};

// Lower-case hex digests of `text` (file ids: MD5 for the parquet scheme, SHA-256 for the delta one).
std::string Md5Hex(std::string_view text);

}  // namespace lakesync::sharing
