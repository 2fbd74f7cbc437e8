#include "lakesync/sharing/signer.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/rand.h>

namespace lakesync::sharing {
namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string Hex(const unsigned char* data, size_t len) {
  std::string out;
  out.reserve(len * 2);
  for (size_t i = 0; i < len; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 15]);
  }
  return out;
}

int Unhex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

Signer::Signer(std::string key) : key_(std::move(key)) {
  if (key_.empty()) {
    key_.resize(32);
    RAND_bytes(reinterpret_cast<unsigned char*>(key_.data()), static_cast<int>(key_.size()));
  }
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  keyed_ = EVP_MAC_CTX_new(mac);
  EVP_MAC_free(mac);  // the context keeps its own reference
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0), OSSL_PARAM_construct_end()};
  EVP_MAC_init(keyed_, reinterpret_cast<const unsigned char*>(key_.data()), key_.size(), params);
}

Signer::~Signer() { EVP_MAC_CTX_free(keyed_); }

std::string Signer::Sign(std::string_view payload) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  size_t len = 0;
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_dup(keyed_);
  EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(payload.data()), payload.size());
  EVP_MAC_final(ctx, mac, &len, sizeof(mac));
  EVP_MAC_CTX_free(ctx);
  return Hex(mac, len);
}

bool Signer::Verify(std::string_view payload, std::string_view signature) const {
  const std::string expected = Sign(payload);
  if (signature.size() != expected.size()) return false;
  return CRYPTO_memcmp(expected.data(), signature.data(), expected.size()) == 0;
}

std::string Signer::Seal(const nlohmann::json& claims) const {
  const std::string text = claims.dump();
  std::string body = Hex(reinterpret_cast<const unsigned char*>(text.data()), text.size());
  return body + "." + Sign(body);
}

Result<nlohmann::json> Signer::Open(std::string_view token, std::string_view what) const {
  const size_t dot = token.find('.');
  if (dot == std::string_view::npos || !Verify(token.substr(0, dot), token.substr(dot + 1)) || dot % 2 != 0) {
    return InvalidArgument("{} is not valid (not issued by this server, or altered)", what);
  }
  std::string text;
  for (size_t i = 0; i < dot; i += 2) {
    const int hi = Unhex(token[i]), lo = Unhex(token[i + 1]);
    if (hi < 0 || lo < 0) return InvalidArgument("{} is not valid", what);
    text.push_back(static_cast<char>(hi * 16 + lo));
  }
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return InvalidArgument("{} is not valid", what);
  return json;
}

std::string Md5Hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, EVP_md5(), nullptr);
  return Hex(digest, len);
}

}  // namespace lakesync::sharing
