#include <arrow/filesystem/azurefs.h>

#include "lakesync/io/object_stores_internal.h"

namespace lakesync::io::internal {

Result<AzureConfig> AzureConfig::FromProperties(const Properties& properties) {
  AzureConfig config;
  config.account_name =
      FirstOf(properties, {"adls.account-name", "adls.auth.shared-key.account.name"}).value_or("");
  config.account_key =
      FirstOf(properties, {"adls.account-key", "adls.auth.shared-key.account.key"}).value_or("");
  config.sas_token = FirstOf(properties, {"adls.sas-token"}).value_or("");
  config.tenant_id = FirstOf(properties, {"adls.tenant-id"}).value_or("");
  config.client_id = FirstOf(properties, {"adls.client-id"}).value_or("");
  config.client_secret = FirstOf(properties, {"adls.client-secret"}).value_or("");
  ARROW_ASSIGN_OR_RAISE(std::optional<bool> anonymous, BoolProperty(properties, "adls.anon"));
  config.anonymous = anonymous.value_or(false);
  config.blob_storage_authority = FirstOf(properties, {"adls.blob-storage-authority"}).value_or("");
  config.dfs_storage_authority = FirstOf(properties, {"adls.dfs-storage-authority"}).value_or("");
  config.blob_storage_scheme = FirstOf(properties, {"adls.blob-storage-scheme"}).value_or("");
  config.dfs_storage_scheme = FirstOf(properties, {"adls.dfs-storage-scheme"}).value_or("");
  if ((!config.tenant_id.empty() || !config.client_secret.empty()) &&
      (config.tenant_id.empty() || config.client_id.empty() || config.client_secret.empty())) {
    return InvalidArgument(
        "adls.tenant-id, adls.client-id and adls.client-secret must be given together for a "
        "service principal");
  }
  return config;
}

Result<std::shared_ptr<arrow::fs::FileSystem>> MakeAzureFileSystem(const AzureConfig& config,
                                                                   const std::string& scheme,
                                                                   const std::string& authority,
                                                                   std::string* path_prefix) {
  std::string prefix;
  auto from_uri = arrow::fs::AzureOptions::FromUri(scheme + "://" + authority, &prefix);
  arrow::fs::AzureOptions options;
  if (from_uri.ok()) {
    options = std::move(from_uri).ValueUnsafe();
  } else if (config.account_name.empty()) {
    return from_uri.status();
  } else {
    // "abfs://container/path" with the account given as a property.
    prefix = authority;
  }
  // An explicit account wins over one guessed from a short authority ("container" alone).
  if (!config.account_name.empty() && options.account_name.empty()) {
    options.account_name = config.account_name;
  }
  if (!config.blob_storage_authority.empty()) options.blob_storage_authority = config.blob_storage_authority;
  if (!config.dfs_storage_authority.empty()) options.dfs_storage_authority = config.dfs_storage_authority;
  if (!config.blob_storage_scheme.empty()) options.blob_storage_scheme = config.blob_storage_scheme;
  if (!config.dfs_storage_scheme.empty()) options.dfs_storage_scheme = config.dfs_storage_scheme;
  if (config.anonymous) {
    ARROW_RETURN_NOT_OK(options.ConfigureAnonymousCredential());
  } else if (!config.account_key.empty()) {
    ARROW_RETURN_NOT_OK(options.ConfigureAccountKeyCredential(config.account_key));
  } else if (!config.sas_token.empty()) {
    ARROW_RETURN_NOT_OK(options.ConfigureSASCredential(config.sas_token));
  } else if (!config.tenant_id.empty()) {
    ARROW_RETURN_NOT_OK(options.ConfigureClientSecretCredential(config.tenant_id, config.client_id,
                                                                config.client_secret));
  } else if (!config.client_id.empty()) {
    ARROW_RETURN_NOT_OK(options.ConfigureManagedIdentityCredential(config.client_id));
  }
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  *path_prefix = prefix;
  ARROW_ASSIGN_OR_RAISE(auto fs, arrow::fs::AzureFileSystem::Make(options));
  return std::static_pointer_cast<arrow::fs::FileSystem>(fs);
}

}  // namespace lakesync::io::internal
