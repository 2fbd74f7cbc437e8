#include "lakesync/io/hadoop_config.h"

#include <algorithm>
#include <cctype>

namespace lakesync::io {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

}  // namespace

Result<HadoopConfigTranslation> TranslateHadoopConfig(const std::map<std::string, std::string>& config,
                                                      std::string_view where) {
  static const std::map<std::string, std::string> kDirect = {
      {"fs.s3a.endpoint", "s3.endpoint"},
      {"fs.s3a.access.key", "s3.access-key-id"},
      {"fs.s3a.secret.key", "s3.secret-access-key"},
      {"fs.s3a.session.token", "s3.session-token"},
      {"fs.s3a.endpoint.region", "s3.region"},
      {"fs.s3a.region", "s3.region"},
      {"fs.s3a.path.style.access", "s3.path-style-access"},
      {"fs.gs.project.id", "gcs.project-id"},
      {"fs.gs.storage.root.url", "gcs.endpoint"},
  };
  HadoopConfigTranslation out;
  auto set = [&](const std::string& key, const std::string& property, const std::string& value) -> Status {
    auto [it, inserted] = out.properties.emplace(property, value);
    if (!inserted && it->second != value) {
      return InvalidArgument("{}: {} sets {} to '{}', but another key already set it to '{}'", where, key, property,
                             value, it->second);
    }
    return Status::OK();
  };
  for (const auto& [key, value] : config) {
    if (auto it = kDirect.find(key); it != kDirect.end()) {
      ARROW_RETURN_NOT_OK(set(key, it->second, value));
    } else if (StartsWith(key, "fs.") && EndsWith(key, ".impl")) {
      out.ignored.push_back(key);
    } else if (key == "fs.s3a.aws.credentials.provider") {
      if (value.find("AnonymousAWSCredentialsProvider") == std::string::npos) {
        return InvalidArgument("{}: {} = '{}': only the anonymous provider has a lakesync counterpart "
                               "(s3.anonymous); give keys with fs.s3a.access.key/secret.key or the AWS_* variables",
                               where, key, value);
      }
      ARROW_RETURN_NOT_OK(set(key, "s3.anonymous", "true"));
    } else if (key == "fs.gs.auth.type") {
      const std::string type = Upper(value);
      if (type == "UNAUTHENTICATED") {
        ARROW_RETURN_NOT_OK(set(key, "gcs.no-auth", "true"));
      } else if (type != "APPLICATION_DEFAULT" && type != "COMPUTE_ENGINE") {
        return InvalidArgument("{}: {} = '{}' has no lakesync counterpart (UNAUTHENTICATED, APPLICATION_DEFAULT and "
                               "COMPUTE_ENGINE do; a token goes in gcs.oauth2.token)",
                               where, key, value);
      }
    } else if (StartsWith(key, "fs.azure.account.key.")) {
      // fs.azure.account.key.<account>.dfs.core.windows.net
      const std::string host = key.substr(std::string_view("fs.azure.account.key.").size());
      const auto dot = host.find('.');
      if (dot == std::string::npos || dot == 0) {
        return InvalidArgument("{}: {}: expected fs.azure.account.key.<account>.dfs.core.windows.net", where, key);
      }
      ARROW_RETURN_NOT_OK(set(key, "adls.account-name", host.substr(0, dot)));
      ARROW_RETURN_NOT_OK(set(key, "adls.account-key", value));
    } else {
      return InvalidArgument(
          "{}: Hadoop key '{}' has no lakesync counterpart; the keys translated are fs.s3a.endpoint, "
          "fs.s3a.access.key, fs.s3a.secret.key, fs.s3a.session.token, fs.s3a.endpoint.region, "
          "fs.s3a.path.style.access, fs.s3a.aws.credentials.provider (anonymous), fs.gs.project.id, "
          "fs.gs.storage.root.url, fs.gs.auth.type, fs.azure.account.key.<account>.*, and fs.*.impl (no effect); "
          "or give FileIO properties (s3.*, gcs.*, adls.*) in storage_properties",
          where, key);
    }
  }
  return out;
}

}  // namespace lakesync::io
