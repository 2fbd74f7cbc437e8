// Hadoop configuration keys (Beam's `hadoop_config` / `config_properties`, which Java hands to the
// Hadoop filesystems) translated into the FileIO properties lakesync reads (object_stores_internal.h).
// Keys with a counterpart are mapped; keys naming Java implementation classes (fs.gs.impl, ...) are
// accepted without effect, since lakesync picks its own client by scheme; any other key is refused
// by name, so that a setting is never silently dropped.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::io {

struct HadoopConfigTranslation {
  std::map<std::string, std::string> properties;  // FileIO properties
  std::vector<std::string> ignored;                // implementation-class keys, accepted without effect
};

//   fs.s3a.endpoint → s3.endpoint            fs.s3a.access.key → s3.access-key-id
//   fs.s3a.secret.key → s3.secret-access-key fs.s3a.session.token → s3.session-token
//   fs.s3a.endpoint.region, fs.s3a.region → s3.region
//   fs.s3a.path.style.access → s3.path-style-access
//   fs.s3a.aws.credentials.provider = ...AnonymousAWSCredentialsProvider → s3.anonymous=true
//   fs.gs.project.id → gcs.project-id        fs.gs.storage.root.url → gcs.endpoint
//   fs.gs.auth.type = UNAUTHENTICATED → gcs.no-auth=true (APPLICATION_DEFAULT, COMPUTE_ENGINE: the default)
//   fs.azure.account.key.<account>.dfs.core.windows.net (or .blob.) → adls.account-name + adls.account-key
//   fs.*.impl, fs.AbstractFileSystem.*.impl → accepted, no effect
// Errors: InvalidArgument naming `where` and the key for any other key or an unusable value.
Result<HadoopConfigTranslation> TranslateHadoopConfig(const std::map<std::string, std::string>& config,
                                                      std::string_view where);

}  // namespace lakesync::io
