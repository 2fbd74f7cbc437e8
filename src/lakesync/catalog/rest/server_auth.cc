#include "lakesync/catalog/rest/server_auth.h"

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "lakesync/common/yaml_json.h"

namespace lakesync::catalog::rest {
namespace {

using Json = nlohmann::json;

bool IsPrefixOf(const Namespace& prefix, const Namespace& ns) {
  return prefix.size() <= ns.size() && std::equal(prefix.begin(), prefix.end(), ns.begin());
}

Result<Grant> GrantFromJson(const Json& entry, std::string_view where) {
  Grant grant;
  if (auto it = entry.find("access"); it != entry.end()) {
    const std::string access = it->is_string() ? it->get<std::string>() : "";
    if (access == "read-write") {
      grant.read_write = true;
    } else if (access != "read-only") {
      return InvalidArgument("{}: access must be read-only or read-write, got {}", where, it->dump());
    }
  }
  if (auto it = entry.find("namespaces"); it != entry.end() && !it->is_null()) {
    if (!it->is_array()) return InvalidArgument("{}: namespaces must be a list like [shop, sales.eu]", where);
    for (const auto& ns : *it) {
      if (!ns.is_string()) return InvalidArgument("{}: namespaces must be a list of strings", where);
      LS_ASSIGN_OR_RAISE_CTX(auto parsed, ParseNamespace(ns.get<std::string>()), "{}", where);
      grant.namespaces.push_back(std::move(parsed));
    }
  }
  return grant;
}

Status CheckKeys(const Json& entry, std::initializer_list<std::string_view> allowed, std::string_view where) {
  if (!entry.is_object()) return InvalidArgument("{}: expected a map", where);
  for (const auto& [k, v] : entry.items()) {
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      return InvalidArgument("{}: unknown key '{}' (allowed: {})", where, k, fmt::join(allowed, ", "));
    }
  }
  return Status::OK();
}

std::string RandomToken() {
  std::random_device rd;  // the kernel's CSPRNG on Linux
  std::string out;
  for (int i = 0; i < 8; ++i) out += fmt::format("{:08x}", rd());
  return out;
}

}  // namespace

bool Grant::Covers(const Namespace& ns) const {
  if (namespaces.empty()) return true;
  for (const auto& scope : namespaces) {
    if (IsPrefixOf(scope, ns)) return true;
  }
  return false;
}

bool Grant::Sees(const Namespace& ns) const {
  if (Covers(ns)) return true;
  for (const auto& scope : namespaces) {
    if (IsPrefixOf(ns, scope)) return true;
  }
  return false;
}

Result<ServerAuthConfig> ParseServerAuth(std::string_view text, std::string_view source) {
  ARROW_ASSIGN_OR_RAISE(Json doc, ParseYamlOrJson(text, source));
  ARROW_RETURN_NOT_OK(CheckKeys(doc, {"tokens", "clients", "token_lifetime_seconds"}, source));
  ServerAuthConfig config;
  if (auto it = doc.find("tokens"); it != doc.end() && !it->is_null()) {
    if (!it->is_array()) return InvalidArgument("{}: tokens must be a list", source);
    for (size_t i = 0; i < it->size(); ++i) {
      const auto& entry = (*it)[i];
      const std::string where = fmt::format("{}: tokens[{}]", source, i);
      ARROW_RETURN_NOT_OK(CheckKeys(entry, {"token", "access", "namespaces"}, where));
      if (!entry.contains("token") || !entry["token"].is_string() || entry["token"].get<std::string>().empty()) {
        return InvalidArgument("{}: token must be a non-empty string", where);
      }
      ARROW_ASSIGN_OR_RAISE(auto grant, GrantFromJson(entry, where));
      if (!config.tokens.emplace(entry["token"].get<std::string>(), grant).second) {
        return InvalidArgument("{}: the same token is listed twice", where);
      }
    }
  }
  if (auto it = doc.find("clients"); it != doc.end() && !it->is_null()) {
    if (!it->is_array()) return InvalidArgument("{}: clients must be a list", source);
    for (size_t i = 0; i < it->size(); ++i) {
      const auto& entry = (*it)[i];
      const std::string where = fmt::format("{}: clients[{}]", source, i);
      ARROW_RETURN_NOT_OK(CheckKeys(entry, {"client_id", "client_secret", "access", "namespaces"}, where));
      for (const char* key : {"client_id", "client_secret"}) {
        if (!entry.contains(key) || !entry[key].is_string() || entry[key].get<std::string>().empty()) {
          return InvalidArgument("{}: {} must be a non-empty string", where, key);
        }
      }
      ARROW_ASSIGN_OR_RAISE(auto grant, GrantFromJson(entry, where));
      ServerAuthConfig::Client client{entry["client_secret"].get<std::string>(), grant};
      if (!config.clients.emplace(entry["client_id"].get<std::string>(), client).second) {
        return InvalidArgument("{}: client_id listed twice", where);
      }
    }
  }
  if (auto it = doc.find("token_lifetime_seconds"); it != doc.end()) {
    if (!it->is_number_integer() || it->get<int64_t>() <= 0) {
      return InvalidArgument("{}: token_lifetime_seconds must be a positive integer", source);
    }
    config.token_lifetime = std::chrono::seconds(it->get<int64_t>());
  }
  return config;
}

Result<ServerAuthConfig> LoadServerAuthFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound("auth file {} does not exist", path);
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) return IOError("reading auth file {}", path);
  return ParseServerAuth(text.str(), path);
}

Result<Grant> ServerAuth::Authenticate(const std::string& authorization) {
  if (!config_) return Grant{true, {}};
  if (authorization.empty()) return MakeError(ErrorKind::kUnauthenticated, "authentication required: send a bearer token");
  constexpr std::string_view kBearer = "bearer ";
  if (authorization.size() <= kBearer.size() ||
      !std::equal(kBearer.begin(), kBearer.end(), authorization.begin(),
                  [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
    return MakeError(ErrorKind::kUnauthenticated, "authentication required: only bearer tokens are accepted");
  }
  const std::string token = authorization.substr(kBearer.size());
  if (auto it = config_->tokens.find(token); it != config_->tokens.end()) return it->second;
  std::lock_guard lock(mutex_);
  auto it = issued_.find(token);
  if (it == issued_.end()) return MakeError(ErrorKind::kUnauthenticated, "the bearer token is not valid");
  if (std::chrono::steady_clock::now() >= it->second.expires) {
    issued_.erase(it);
    return MakeError(ErrorKind::kUnauthenticated, "the bearer token has expired");
  }
  return it->second.grant;
}

Result<std::pair<std::string, int64_t>> ServerAuth::IssueToken(const std::string& grant_type,
                                                                const std::string& client_id,
                                                                const std::string& client_secret) {
  if (!config_) return Unsupported("this server has no authentication: no token is needed");
  if (grant_type != "client_credentials") {
    return InvalidArgument("grant_type '{}' is not supported (only client_credentials)", grant_type);
  }
  auto it = config_->clients.find(client_id);
  if (it == config_->clients.end() || it->second.secret != client_secret) {
    return MakeError(ErrorKind::kUnauthenticated, "unknown client or wrong secret");
  }
  const auto now = std::chrono::steady_clock::now();
  std::string token = RandomToken();
  std::lock_guard lock(mutex_);
  // Expired tokens go here, so the map stays bounded by the tokens alive.
  for (auto i = issued_.begin(); i != issued_.end();) {
    i = now >= i->second.expires ? issued_.erase(i) : std::next(i);
  }
  issued_[token] = Issued{it->second.grant, now + config_->token_lifetime};
  return std::make_pair(token, static_cast<int64_t>(config_->token_lifetime.count()));
}

}  // namespace lakesync::catalog::rest
