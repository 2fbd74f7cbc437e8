#include <arrow/filesystem/s3fs.h>

#include <cstdlib>
#include <mutex>

#include "lakesync/io/object_stores_internal.h"

namespace lakesync::io::internal {
namespace {

std::mutex& S3LifecycleMutex() {
  static std::mutex mutex;
  return mutex;
}

void FinalizeS3AtExit() {
  // Arrow documents that an initialized AWS SDK must be shut down before exit, or static
  // destructors inside the SDK crash. Filesystems still alive at that point (a FileIO held in a
  // static) fail their further calls cleanly instead.
  std::lock_guard<std::mutex> lock(S3LifecycleMutex());
  Status st = arrow::fs::EnsureS3Finalized();
  (void)st;
}

// Arrow requires InitializeS3/FinalizeS3 calls to be serialized by the application.
Status EnsureS3Ready() {
  std::lock_guard<std::mutex> lock(S3LifecycleMutex());
  if (arrow::fs::IsS3Finalized()) {
    return Unavailable("the S3 client library was already shut down (the process is exiting)");
  }
  return arrow::fs::EnsureS3Initialized();
}

// Registered only after the first filesystem was made: Arrow keeps its registry of S3 clients in
// a function-local static created then, and atexit handlers run in reverse order of registration
// with such statics' destructors. Registering earlier would run our shutdown after that registry
// is destroyed, which aborts the process at exit.
void RegisterS3ShutdownAtExit() {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(FinalizeS3AtExit); });
}

}  // namespace

Result<S3Config> S3Config::FromProperties(const Properties& properties, const EnvLookup& env) {
  S3Config config;
  std::optional<std::string> endpoint = FirstOf(properties, {"s3.endpoint"});
  std::string endpoint_key = "s3.endpoint";
  if (!endpoint) {
    for (const char* name : {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"}) {
      if ((endpoint = env(name))) {
        endpoint_key = std::string("environment variable ") + name;
        break;
      }
    }
  }
  if (endpoint) {
    ARROW_ASSIGN_OR_RAISE(Endpoint parsed, ParseEndpoint(endpoint_key, *endpoint, "https"));
    config.endpoint_override = parsed.authority;
    config.scheme = parsed.scheme;
  }

  if (auto region = FirstOf(properties, {"s3.region", "client.region"})) {
    config.region = *region;
  } else if (auto env_region = env("AWS_REGION")) {
    config.region = *env_region;
  } else if (auto env_default_region = env("AWS_DEFAULT_REGION")) {
    config.region = *env_default_region;
  } else if (!config.endpoint_override.empty()) {
    // S3-compatible services ignore the region but the SDK signs with one; AWS's default keeps
    // the SDK from looking for one in the EC2 metadata service.
    config.region = "us-east-1";
  }

  ARROW_ASSIGN_OR_RAISE(std::optional<bool> path_style, BoolProperty(properties, "s3.path-style-access"));
  ARROW_ASSIGN_OR_RAISE(std::optional<bool> force_virtual,
                        BoolProperty(properties, "s3.force-virtual-addressing"));
  // Arrow uses path-style requests whenever an endpoint is overridden, unless told otherwise.
  config.force_virtual_addressing = force_virtual.value_or(false) || (path_style && !*path_style);

  ARROW_ASSIGN_OR_RAISE(std::optional<double> connect_timeout,
                        NumberProperty(properties, "s3.connect-timeout"));
  ARROW_ASSIGN_OR_RAISE(std::optional<double> request_timeout,
                        NumberProperty(properties, "s3.request-timeout"));
  config.connect_timeout = connect_timeout.value_or(-1);
  config.request_timeout = request_timeout.value_or(-1);

  ARROW_ASSIGN_OR_RAISE(std::optional<bool> anonymous, BoolProperty(properties, "s3.anonymous"));
  auto key_id = FirstOf(properties, {"s3.access-key-id", "client.access-key-id"});
  auto secret = FirstOf(properties, {"s3.secret-access-key", "client.secret-access-key"});
  auto token = FirstOf(properties, {"s3.session-token", "client.session-token"});
  auto role_arn = FirstOf(properties, {"s3.role-arn", "client.role-arn"});
  if (key_id.has_value() != secret.has_value()) {
    return InvalidArgument(
        "s3.access-key-id and s3.secret-access-key must be given together (only {} is set)",
        key_id ? "s3.access-key-id" : "s3.secret-access-key");
  }
  const bool env_names_default_chain = env("AWS_PROFILE") || env("AWS_WEB_IDENTITY_TOKEN_FILE") ||
                                       env("AWS_CONTAINER_CREDENTIALS_FULL_URI") ||
                                       env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  if (anonymous.value_or(false)) {
    config.credentials = Credentials::kAnonymous;
  } else if (key_id) {
    config.credentials = Credentials::kExplicit;
    config.access_key = *key_id;
    config.secret_key = *secret;
    config.session_token = token.value_or("");
  } else if (role_arn) {
    config.credentials = Credentials::kAssumeRole;
    config.role_arn = *role_arn;
    config.role_session_name =
        FirstOf(properties, {"s3.role-session-name", "client.role-session-name"}).value_or("");
  } else if (auto env_key = env("AWS_ACCESS_KEY_ID"); env_key && env("AWS_SECRET_ACCESS_KEY")) {
    config.credentials = Credentials::kExplicit;
    config.access_key = *env_key;
    config.secret_key = *env("AWS_SECRET_ACCESS_KEY");
    config.session_token = env("AWS_SESSION_TOKEN").value_or("");
  } else if ((anonymous.has_value() && !*anonymous) || env_names_default_chain) {
    config.credentials = Credentials::kDefaultChain;
  } else {
    config.credentials = Credentials::kAnonymous;
  }
  return config;
}

Result<std::shared_ptr<arrow::fs::FileSystem>> MakeS3FileSystem(const S3Config& config,
                                                                const std::string& bucket) {
  ARROW_RETURN_NOT_OK(EnsureS3Ready());
  arrow::fs::S3Options options;
  switch (config.credentials) {
    case S3Config::Credentials::kAnonymous:
      options.ConfigureAnonymousCredentials();
      break;
    case S3Config::Credentials::kExplicit:
      options.ConfigureAccessKey(config.access_key, config.secret_key, config.session_token);
      break;
    case S3Config::Credentials::kAssumeRole:
      options.ConfigureAssumeRoleCredentials(config.role_arn, config.role_session_name);
      break;
    case S3Config::Credentials::kDefaultChain:
      options.ConfigureDefaultCredentials();
      break;
  }
  options.endpoint_override = config.endpoint_override;
  options.scheme = config.scheme;
  options.force_virtual_addressing = config.force_virtual_addressing;
  options.connect_timeout = config.connect_timeout;
  options.request_timeout = config.request_timeout;
  // Tables live in buckets that exist; a typo in a location must not create or drop one.
  options.allow_bucket_creation = false;
  options.allow_bucket_deletion = false;
  options.region = config.region;
  if (options.region.empty()) {
    // Only reached for AWS itself: a bucket answers in its own region, so ask it.
    auto resolved = arrow::fs::ResolveS3BucketRegion(bucket);
    options.region = resolved.ok() ? *resolved : "us-east-1";
  }
  ARROW_ASSIGN_OR_RAISE(auto fs, arrow::fs::S3FileSystem::Make(options));
  RegisterS3ShutdownAtExit();
  return std::static_pointer_cast<arrow::fs::FileSystem>(fs);
}

}  // namespace lakesync::io::internal
