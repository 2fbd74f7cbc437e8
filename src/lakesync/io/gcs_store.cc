#include <arrow/filesystem/gcsfs.h>

#include <charconv>
#include <chrono>

#include "lakesync/io/object_stores_internal.h"

namespace lakesync::io::internal {

Result<GcsConfig> GcsConfig::FromProperties(const Properties& properties, const EnvLookup& env) {
  GcsConfig config;
  std::string endpoint_key = "gcs.endpoint";
  std::optional<std::string> endpoint = FirstOf(properties, {"gcs.endpoint"});
  if (!endpoint && (endpoint = FirstOf(properties, {"gcs.service.host"}))) endpoint_key = "gcs.service.host";
  if (!endpoint && (endpoint = env("STORAGE_EMULATOR_HOST"))) {
    endpoint_key = "environment variable STORAGE_EMULATOR_HOST";
  }
  if (endpoint) {
    // Emulators are reached over plain HTTP; Google's own clients read a scheme-less
    // STORAGE_EMULATOR_HOST the same way.
    ARROW_ASSIGN_OR_RAISE(Endpoint parsed, ParseEndpoint(endpoint_key, *endpoint, "http"));
    config.endpoint_override = parsed.authority;
    config.scheme = parsed.scheme;
  }

  ARROW_ASSIGN_OR_RAISE(std::optional<bool> no_auth, BoolProperty(properties, "gcs.no-auth"));
  auto token = FirstOf(properties, {"gcs.oauth2.token"});
  if (no_auth.value_or(false)) {
    config.credentials = Credentials::kAnonymous;
  } else if (token) {
    config.credentials = Credentials::kAccessToken;
    config.access_token = *token;
    if (auto expires = FirstOf(properties, {"gcs.oauth2.token-expires-at"})) {
      int64_t ms = 0;
      auto [end, ec] = std::from_chars(expires->data(), expires->data() + expires->size(), ms);
      if (ec != std::errc() || end != expires->data() + expires->size()) {
        return InvalidArgument(
            "property gcs.oauth2.token-expires-at must be milliseconds since the epoch, got '{}'",
            *expires);
      }
      config.token_expires_at_ms = ms;
    }
  } else if (!config.endpoint_override.empty() && !(no_auth.has_value() && !*no_auth)) {
    // Emulators accept unauthenticated requests, and looking for real credentials would send
    // requests to Google's metadata server.
    config.credentials = Credentials::kAnonymous;
  } else {
    config.credentials = Credentials::kDefault;
  }
  config.project_id = FirstOf(properties, {"gcs.project-id"}).value_or("");
  ARROW_ASSIGN_OR_RAISE(config.retry_limit_seconds,
                        NumberProperty(properties, "gcs.retry-limit-seconds"));
  return config;
}

Result<std::shared_ptr<arrow::fs::FileSystem>> MakeGcsFileSystem(const GcsConfig& config) {
  arrow::fs::GcsOptions options;
  switch (config.credentials) {
    case GcsConfig::Credentials::kAnonymous:
      options = arrow::fs::GcsOptions::Anonymous();
      break;
    case GcsConfig::Credentials::kAccessToken: {
      // A token without a stated expiry is used until the service rejects it; a day ahead keeps
      // the SDK from treating it as stale.
      arrow::fs::TimePoint expiry =
          config.token_expires_at_ms
              ? arrow::fs::TimePoint(std::chrono::milliseconds(*config.token_expires_at_ms))
              : std::chrono::time_point_cast<arrow::fs::TimePoint::duration>(
                    std::chrono::system_clock::now() + std::chrono::hours(24));
      options = arrow::fs::GcsOptions::FromAccessToken(config.access_token, expiry);
      break;
    }
    case GcsConfig::Credentials::kDefault:
      options = arrow::fs::GcsOptions::Defaults();
      break;
  }
  if (!config.endpoint_override.empty()) {
    options.endpoint_override = config.endpoint_override;
    options.scheme = config.scheme;
  }
  if (!config.project_id.empty()) options.project_id = config.project_id;
  options.retry_limit_seconds = config.retry_limit_seconds.value_or(kDefaultGcsRetryLimitSeconds);
  ARROW_ASSIGN_OR_RAISE(auto fs, arrow::fs::GcsFileSystem::Make(options));
  return std::static_pointer_cast<arrow::fs::FileSystem>(fs);
}

}  // namespace lakesync::io::internal
