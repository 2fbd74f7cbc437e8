// The list of FileIO properties, kept next to the object-store configurations that read them
// (object_stores_internal.h); a key read there and missing here would be refused by catalogs.
#include <algorithm>

#include "lakesync/io/file_io.h"

namespace lakesync::io {

const std::vector<std::string>& FileIOPropertyKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {
        // S3 (s3_store.cc), with pyiceberg's client.* aliases
        "s3.endpoint", "s3.access-key-id", "s3.secret-access-key", "s3.session-token", "s3.region",
        "s3.path-style-access", "s3.force-virtual-addressing", "s3.anonymous", "s3.role-arn",
        "s3.role-session-name", "s3.connect-timeout", "s3.request-timeout", "client.region",
        "client.access-key-id", "client.secret-access-key", "client.session-token", "client.role-arn",
        "client.role-session-name",
        // GCS (gcs_store.cc)
        "gcs.endpoint", "gcs.service.host", "gcs.oauth2.token", "gcs.oauth2.token-expires-at", "gcs.no-auth",
        "gcs.project-id", "gcs.retry-limit-seconds",
        // Azure (azure_store.cc), with Java's shared-key spellings
        "adls.account-name", "adls.account-key", "adls.auth.shared-key.account.name",
        "adls.auth.shared-key.account.key", "adls.sas-token", "adls.tenant-id", "adls.client-id",
        "adls.client-secret", "adls.anon", "adls.blob-storage-authority", "adls.dfs-storage-authority",
        "adls.blob-storage-scheme", "adls.dfs-storage-scheme",
    };
    std::sort(k.begin(), k.end());
    return k;
  }();
  return keys;
}

}  // namespace lakesync::io
