#include "lakesync/sharing/server_config.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lakesync/common/text.h"
#include "lakesync/common/yaml_json.h"
#include "lakesync/delta/delta_table.h"

namespace lakesync::sharing {
namespace {

using Json = nlohmann::json;

Status CheckKeys(const Json& obj, const std::vector<std::string>& known,
                 const std::map<std::string, std::string>& refused, const std::string& where) {
  if (!obj.is_object()) return InvalidArgument("{} must be a map", where);
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (auto r = refused.find(it.key()); r != refused.end()) {
      return InvalidArgument("{}.{} is not supported by lakesync: {}", where, it.key(), r->second);
    }
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return InvalidArgument("{}: unknown key '{}' (known: {})", where, it.key(), list);
    }
  }
  return Status::OK();
}

Result<std::string> Str(const Json& obj, const char* key, const std::string& where, bool required) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return InvalidArgument("{}.{} is required", where, key);
    return std::string();
  }
  if (!it->is_string() || it->get<std::string>().empty()) {
    return InvalidArgument("{}.{} must be a non-empty string", where, key);
  }
  return it->get<std::string>();
}

Result<std::optional<int64_t>> Int(const Json& obj, const char* key, const std::string& where, int64_t min) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<int64_t>();
  if (!it->is_number_integer() || it->get<int64_t>() < min) {
    return InvalidArgument("{}.{} must be a whole number of at least {}, not {}", where, key, min, it->dump());
  }
  return std::optional<int64_t>(it->get<int64_t>());
}

Result<std::optional<bool>> Bool(const Json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<bool>();
  if (!it->is_boolean()) return InvalidArgument("{}.{} must be true or false, not {}", where, key, it->dump());
  return std::optional<bool>(it->get<bool>());
}

// PROTOCOL.md "Names": at most 255 characters, no space, '/', control characters; schemas and
// tables also no '.'.
Status CheckName(const std::string& name, bool dotless, const std::string& where) {
  if (name.size() > 255) return InvalidArgument("{}: name '{}' is longer than 255 characters", where, name);
  for (unsigned char c : name) {
    if (c == ' ' || c == '/' || c < 0x20 || c == 0x7f || (dotless && c == '.')) {
      return InvalidArgument("{}: name '{}' contains a character names may not hold (space, '/', control{})", where,
                             name, dotless ? ", '.'" : "");
    }
  }
  return Status::OK();
}

template <typename T>
Result<const Json*> List(const Json& obj, const char* key, const std::string& where, bool required) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return InvalidArgument("{}.{} is required", where, key);
    return static_cast<const Json*>(nullptr);
  }
  if (!it->is_array()) return InvalidArgument("{}.{} must be a list", where, key);
  return &*it;
}

}  // namespace

std::string Sha256Hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

Result<ServerConfig> ServerConfig::FromJson(const Json& doc, const std::string& where) {
  ServerConfig c;
  ARROW_RETURN_NOT_OK(CheckKeys(
      doc,
      {"version", "shares", "authorization", "recipients", "host", "port", "endpoint", "preSignedUrlTimeoutSeconds",
       "evaluatePredicateHints", "evaluateJsonPredicateHints", "queryTablePageSizeLimit", "queryTablePageTokenTtlMs",
       "refreshTokenTtlMs", "storage_properties", "url_signing_key"},
      {{"ssl", "lakesync serves plain HTTP; put a TLS-terminating proxy in front of it"},
       {"deltaTableCacheSize", "lakesync re-lists the log on every request and caches snapshots by version"},
       {"stalenessAcceptable", "answers are never stale"},
       {"requestTimeoutSeconds", "not configurable"},
       {"evaluateJsonPredicateHintsV2", "one evaluator serves jsonPredicateHints"}},
      where));
  ARROW_ASSIGN_OR_RAISE(auto version, Int(doc, "version", where, 1));
  if (!version || *version != 1) return InvalidArgument("{}: version must be 1", where);

  std::set<std::string> share_names;
  ARROW_ASSIGN_OR_RAISE(const Json* shares, List<Json>(doc, "shares", where, true));
  for (size_t i = 0; i < shares->size(); ++i) {
    const Json& s = (*shares)[i];
    const std::string sw = fmt::format("{}: shares[{}]", where, i);
    ARROW_RETURN_NOT_OK(CheckKeys(s, {"name", "schemas"}, {}, sw));
    ShareConfig share;
    ARROW_ASSIGN_OR_RAISE(share.name, Str(s, "name", sw, true));
    ARROW_RETURN_NOT_OK(CheckName(share.name, false, sw));
    if (!share_names.insert(AsciiLower(share.name)).second) return InvalidArgument("{}: share '{}' appears twice", sw, share.name);
    ARROW_ASSIGN_OR_RAISE(const Json* schemas, List<Json>(s, "schemas", sw, false));
    std::set<std::string> schema_names;
    for (size_t j = 0; schemas && j < schemas->size(); ++j) {
      const Json& sc = (*schemas)[j];
      const std::string scw = fmt::format("{}.schemas[{}]", sw, j);
      ARROW_RETURN_NOT_OK(CheckKeys(sc, {"name", "tables"}, {}, scw));
      SharedSchemaConfig schema;
      ARROW_ASSIGN_OR_RAISE(schema.name, Str(sc, "name", scw, true));
      ARROW_RETURN_NOT_OK(CheckName(schema.name, true, scw));
      if (!schema_names.insert(AsciiLower(schema.name)).second) {
        return InvalidArgument("{}: schema '{}' appears twice", scw, schema.name);
      }
      ARROW_ASSIGN_OR_RAISE(const Json* tables, List<Json>(sc, "tables", scw, false));
      std::set<std::string> table_names;
      for (size_t k = 0; tables && k < tables->size(); ++k) {
        const Json& t = (*tables)[k];
        const std::string tw = fmt::format("{}.tables[{}]", scw, k);
        ARROW_RETURN_NOT_OK(CheckKeys(t, {"name", "location", "id", "historyShared", "startVersion"},
                                      {{"cdfEnabled", "the change feed follows historyShared"}}, tw));
        SharedTableConfig table;
        ARROW_ASSIGN_OR_RAISE(table.name, Str(t, "name", tw, true));
        ARROW_RETURN_NOT_OK(CheckName(table.name, true, tw));
        if (!table_names.insert(AsciiLower(table.name)).second) {
          return InvalidArgument("{}: table '{}' appears twice", tw, table.name);
        }
        ARROW_ASSIGN_OR_RAISE(table.location, Str(t, "location", tw, true));
        ARROW_ASSIGN_OR_RAISE(auto id, Str(t, "id", tw, false));
        if (!id.empty()) table.id = id;
        ARROW_ASSIGN_OR_RAISE(auto history, Bool(t, "historyShared", tw));
        table.history_shared = history.value_or(false);
        ARROW_ASSIGN_OR_RAISE(auto start, Int(t, "startVersion", tw, 0));
        table.start_version = start.value_or(0);
        schema.tables.push_back(std::move(table));
      }
      share.schemas.push_back(std::move(schema));
    }
    c.shares.push_back(std::move(share));
  }

  if (auto it = doc.find("authorization"); it != doc.end() && !it->is_null()) {
    const std::string aw = where + ": authorization";
    ARROW_RETURN_NOT_OK(CheckKeys(*it, {"bearerToken"}, {}, aw));
    ARROW_ASSIGN_OR_RAISE(auto token, Str(*it, "bearerToken", aw, true));
    c.bearer_token = token;
  }
  ARROW_ASSIGN_OR_RAISE(const Json* recipients, List<Json>(doc, "recipients", where, false));
  std::set<std::string> recipient_names;
  for (size_t i = 0; recipients && i < recipients->size(); ++i) {
    const Json& r = (*recipients)[i];
    const std::string rw = fmt::format("{}: recipients[{}]", where, i);
    ARROW_RETURN_NOT_OK(CheckKeys(r, {"name", "token", "token_sha256", "shares", "expires"}, {}, rw));
    RecipientConfig rc;
    ARROW_ASSIGN_OR_RAISE(rc.name, Str(r, "name", rw, true));
    if (!recipient_names.insert(rc.name).second) return InvalidArgument("{}: recipient '{}' appears twice", rw, rc.name);
    ARROW_ASSIGN_OR_RAISE(auto token, Str(r, "token", rw, false));
    ARROW_ASSIGN_OR_RAISE(auto hash, Str(r, "token_sha256", rw, false));
    if (token.empty() == hash.empty()) return InvalidArgument("{}: give exactly one of token and token_sha256", rw);
    if (!hash.empty()) {
      hash = AsciiLower(hash);
      if (hash.size() != 64 || hash.find_first_not_of("0123456789abcdef") != std::string::npos) {
        return InvalidArgument("{}.token_sha256 must be 64 hexadecimal digits (sha256sum of the token)", rw);
      }
      rc.token_sha256 = hash;
    } else {
      rc.token_sha256 = Sha256Hex(token);
    }
    ARROW_ASSIGN_OR_RAISE(const Json* granted, List<Json>(r, "shares", rw, true));
    for (const auto& g : *granted) {
      if (!g.is_string()) return InvalidArgument("{}.shares must list share names", rw);
      const std::string name = AsciiLower(g.get<std::string>());
      if (!share_names.count(name)) {
        return InvalidArgument("{}.shares names share '{}', which shares.yaml does not define", rw, g.get<std::string>());
      }
      rc.shares.insert(name);
    }
    ARROW_ASSIGN_OR_RAISE(auto expires, Str(r, "expires", rw, false));
    if (!expires.empty()) {
      LS_ASSIGN_OR_RAISE_CTX(rc.expires_ms, delta::ParseTimestampMillis(expires), "{}.expires", rw);
    }
    c.recipients.push_back(std::move(rc));
  }
  if (!c.bearer_token && c.recipients.empty()) {
    return InvalidArgument("{}: no way to authenticate recipients: add authorization.bearerToken or recipients", where);
  }

  ARROW_ASSIGN_OR_RAISE(auto host, Str(doc, "host", where, false));
  if (!host.empty()) c.host = host;
  ARROW_ASSIGN_OR_RAISE(auto port, Int(doc, "port", where, 0));
  if (port) {
    if (*port > 65535) return InvalidArgument("{}: port {} is not a TCP port", where, *port);
    c.port = static_cast<int>(*port);
  }
  ARROW_ASSIGN_OR_RAISE(auto endpoint, Str(doc, "endpoint", where, false));
  if (!endpoint.empty()) {
    if (endpoint.front() != '/') endpoint = "/" + endpoint;
    while (endpoint.size() > 1 && endpoint.back() == '/') endpoint.pop_back();
    c.endpoint = endpoint == "/" ? "" : endpoint;
  }
  ARROW_ASSIGN_OR_RAISE(auto timeout, Int(doc, "preSignedUrlTimeoutSeconds", where, 1));
  if (timeout) c.url_timeout_seconds = *timeout;
  ARROW_ASSIGN_OR_RAISE(auto page_limit, Int(doc, "queryTablePageSizeLimit", where, 1));
  if (page_limit) c.page_size_limit = *page_limit;
  ARROW_ASSIGN_OR_RAISE(auto page_ttl, Int(doc, "queryTablePageTokenTtlMs", where, 1));
  if (page_ttl) c.page_token_ttl_ms = *page_ttl;
  ARROW_ASSIGN_OR_RAISE(auto refresh_ttl, Int(doc, "refreshTokenTtlMs", where, 1));
  if (refresh_ttl) c.refresh_token_ttl_ms = *refresh_ttl;
  ARROW_ASSIGN_OR_RAISE(auto sql_hints, Bool(doc, "evaluatePredicateHints", where));
  if (sql_hints.value_or(false)) {
    return InvalidArgument("{}: evaluatePredicateHints: true is not supported: lakesync does not evaluate the "
                           "deprecated SQL predicateHints (it evaluates jsonPredicateHints)", where);
  }
  ARROW_ASSIGN_OR_RAISE(auto json_hints, Bool(doc, "evaluateJsonPredicateHints", where));
  c.evaluate_json_predicate_hints = json_hints.value_or(true);
  if (auto it = doc.find("storage_properties"); it != doc.end() && !it->is_null()) {
    if (!it->is_object()) return InvalidArgument("{}: storage_properties must be a map", where);
    for (auto p = it->begin(); p != it->end(); ++p) {
      c.storage_properties[p.key()] = p.value().is_string() ? p.value().get<std::string>() : p.value().dump();
    }
  }
  ARROW_ASSIGN_OR_RAISE(c.url_signing_key, Str(doc, "url_signing_key", where, false));
  return c;
}

Result<ServerConfig> ServerConfig::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("sharing configuration {} cannot be read", path);
  std::stringstream text;
  text << in.rdbuf();
  ARROW_ASSIGN_OR_RAISE(auto doc, ParseYamlOrJson(text.str(), path));
  ARROW_ASSIGN_OR_RAISE(auto config, FromJson(doc, path));
  // Relative table paths are relative to the file that names them, not to where the server starts.
  const std::filesystem::path dir = std::filesystem::absolute(path).parent_path();
  for (auto& share : config.shares) {
    for (auto& schema : share.schemas) {
      for (auto& table : schema.tables) {
        if (table.location.find(':') == std::string::npos && table.location.front() != '/') {
          table.location = (dir / table.location).lexically_normal().string();
        }
      }
    }
  }
  return config;
}

}  // namespace lakesync::sharing
