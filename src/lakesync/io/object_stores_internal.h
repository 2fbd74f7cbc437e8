// Typed configuration of the object stores FileIO can reach, parsed once from the catalog
// properties (and environment fallbacks) when a FileIO is made, and the factories that turn it
// into arrow::fs filesystems on first use.
#pragma once

#include <arrow/filesystem/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "lakesync/common/status.h"
#include "lakesync/io/properties_internal.h"

namespace lakesync::io::internal {

// ---- S3 (s3://, s3a://, s3n://) ----
//
// Properties (Iceberg's names; pyiceberg's "client.*" aliases are accepted too):
//   s3.endpoint            http(s)://host:port of an S3-compatible service; env AWS_ENDPOINT_URL_S3,
//                          AWS_ENDPOINT_URL
//   s3.access-key-id, s3.secret-access-key, s3.session-token
//                          static credentials; env AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
//                          AWS_SESSION_TOKEN
//   s3.region              env AWS_REGION, AWS_DEFAULT_REGION; else resolved from the bucket on
//                          AWS itself, or "us-east-1" with a custom endpoint
//   s3.path-style-access   default true with a custom endpoint (what MinIO and moto need); false
//                          forces virtual-host addressing. AWS itself always gets virtual hosts.
//   s3.anonymous           true: unsigned requests; false: the AWS SDK's default credential chain
//   s3.role-arn, s3.role-session-name   assume a role through STS
//   s3.connect-timeout, s3.request-timeout   seconds
//
// Credentials, first match wins: s3.anonymous=true; static keys from properties; s3.role-arn;
// static keys from the environment; the SDK's default chain when s3.anonymous=false or the
// environment names a profile, web identity or container credentials; otherwise anonymous, so that
// nothing probes the EC2 metadata service unasked.
struct S3Config {
  enum class Credentials { kAnonymous, kExplicit, kAssumeRole, kDefaultChain };
  std::string endpoint_override;  // host:port, empty for AWS
  std::string scheme = "https";
  std::string region;  // empty: resolve from the bucket
  bool force_virtual_addressing = false;
  Credentials credentials = Credentials::kAnonymous;
  std::string access_key;
  std::string secret_key;
  std::string session_token;
  std::string role_arn;
  std::string role_session_name;
  double connect_timeout = -1;
  double request_timeout = -1;

  // Errors: InvalidArgument naming the property for malformed values or a key id without secret.
  static Result<S3Config> FromProperties(const Properties& properties, const EnvLookup& env);
};

// Makes the filesystem for one bucket (the region can differ per bucket). Initializes the AWS SDK
// on first use and arranges for it to be shut down when the process exits.
Result<std::shared_ptr<arrow::fs::FileSystem>> MakeS3FileSystem(const S3Config& config,
                                                                const std::string& bucket);

// ---- Google Cloud Storage (gs://) ----
//
// Properties:
//   gcs.endpoint, gcs.service.host   http(s)://host:port of an emulator; env STORAGE_EMULATOR_HOST
//   gcs.oauth2.token                 an access token; gcs.oauth2.token-expires-at (ms since epoch)
//   gcs.no-auth                      true: anonymous requests (the default with an emulator
//                                    endpoint and no token)
//   gcs.project-id                   only needed to create buckets
//   gcs.retry-limit-seconds          how long the SDK retries transient errors: lakesync's default
//                                    is kDefaultGcsRetryLimitSeconds (the SDK's own, 15 minutes,
//                                    made a gs:// path without network look like a hang); jobs
//                                    retry further with their own backoff
// Without token, endpoint or gcs.no-auth, Google's Application Default Credentials are used.
inline constexpr double kDefaultGcsRetryLimitSeconds = 60;

struct GcsConfig {
  enum class Credentials { kDefault, kAnonymous, kAccessToken };
  std::string endpoint_override;  // host:port, empty for Google
  std::string scheme;             // empty: the SDK's default (https)
  Credentials credentials = Credentials::kDefault;
  std::string access_token;
  std::optional<int64_t> token_expires_at_ms;
  std::string project_id;
  std::optional<double> retry_limit_seconds;

  static Result<GcsConfig> FromProperties(const Properties& properties, const EnvLookup& env);
};

Result<std::shared_ptr<arrow::fs::FileSystem>> MakeGcsFileSystem(const GcsConfig& config);

// ---- Azure Data Lake Storage / Blob Storage (abfs://, abfss://) ----
//
// Properties (pyiceberg's names; Java's adls.auth.shared-key.account.{name,key} too):
//   adls.account-name, adls.account-key, adls.sas-token,
//   adls.tenant-id + adls.client-id + adls.client-secret (service principal),
//   adls.client-id alone (managed identity), adls.anon (true: anonymous),
//   adls.blob-storage-authority, adls.dfs-storage-authority, adls.blob-storage-scheme,
//   adls.dfs-storage-scheme (for Azurite and other emulators)
// Otherwise the Azure SDK's default credential chain (AZURE_* environment variables) is used.
struct AzureConfig {
  std::string account_name;
  std::string account_key;
  std::string sas_token;
  std::string tenant_id;
  std::string client_id;
  std::string client_secret;
  bool anonymous = false;
  std::string blob_storage_authority;
  std::string dfs_storage_authority;
  std::string blob_storage_scheme;
  std::string dfs_storage_scheme;

  // Errors: InvalidArgument when only part of a service principal is given.
  static Result<AzureConfig> FromProperties(const Properties& properties);
};

// Makes the filesystem for "<scheme>://<authority>". `path_prefix` receives what Arrow expects in
// front of the location's path (the container, when the authority names it as container@account).
Result<std::shared_ptr<arrow::fs::FileSystem>> MakeAzureFileSystem(const AzureConfig& config,
                                                                   const std::string& scheme,
                                                                   const std::string& authority,
                                                                   std::string* path_prefix);

}  // namespace lakesync::io::internal
