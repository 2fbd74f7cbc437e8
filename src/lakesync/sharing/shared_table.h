// A table read over Delta Sharing, with the same API shape as delta::DeltaTable: snapshots (latest,
// by version or timestamp) and the change data feed, as Arrow streams in the very same form the
// Delta source gives (logical column names, deletion vectors applied, _change_type/_commit_version/
// _commit_timestamp), because the rows are made by the same code: the server's answer becomes a
// Delta snapshot or change plan and goes through delta::ReadSnapshotFiles / delta::ReadChangePlan,
// with the files read over their signed URLs (http::MakeUrlFileSystem).
//
// Signed URLs expire. A read that outlives them gets 403; the table then asks its server for fresh
// URLs for the same files (with the refresh token for latest snapshots, by re-asking the same pinned
// question otherwise), matches them by file id, and retries.
#pragma once

#include <arrow/record_batch.h>

#include <memory>
#include <string>
#include <vector>

#include "lakesync/delta/delta_table.h"
#include "lakesync/delta/schema.h"
#include "lakesync/sharing/client.h"

namespace lakesync::sharing {

class SharedTable {
 public:
  // "PROFILE#share.schema.table". Errors: InvalidArgument for a malformed URL or profile, NotFound for
  // a missing profile file.
  static Result<std::shared_ptr<SharedTable>> Open(const std::string& table_url);
  static Result<std::shared_ptr<SharedTable>> Open(std::shared_ptr<SharingClient> client, TableName name);

  std::string Describe() const;
  const TableName& name() const { return name_; }

  Result<int64_t> LatestVersion();
  // The first version committed at or after `timestamp` (ISO-8601 or epoch milliseconds).
  Result<int64_t> VersionAtOrAfter(const std::string& timestamp);

  // select and limit as in delta::SnapshotScanOptions; as_of_timestamp_ms is sent as an ISO-8601 time.
  Result<std::shared_ptr<arrow::RecordBatchReader>> ScanSnapshot(const delta::SnapshotScanOptions& options);

  // The change data feed of the range; options as delta::ChangeFeedOptions (require_change_data_feed
  // and keep_all_file_actions are the server's business and ignored).
  Result<std::shared_ptr<arrow::RecordBatchReader>> ReadChanges(const delta::ChangeFeedOptions& options);

  // The table's schema at `from`, then each version in (from, through] whose metaData changes it
  // (schemas only: a metaData that changes properties alone is left out), from the server's
  // startingVersion query, which lists the range's metaData lines with their versions. /changes answers
  // only ranges within one schema, so a change feed is read in parts split at these versions.
  // Errors: Corrupt for a later metaData line without its version.
  struct SchemaAtVersion {
    int64_t version = 0;
    delta::TableSchema schema;
  };
  Result<std::vector<SchemaAtVersion>> SchemaHistory(int64_t from, int64_t through);

  // The commit timestamp the server gives for `version` (the timestamp of its file lines).
  // Errors: NotFound when the version has no files to say it.
  Result<int64_t> CommitTimestamp(int64_t version);

  struct UrlBook;

 private:
  SharedTable(std::shared_ptr<SharingClient> client, TableName name);
  // A FileIO that reads the answer's URLs, refreshing them through `reissue` when they expire.
  Result<std::shared_ptr<io::FileIO>> FileIOFor(const TableAnswer& answer,
                                                std::function<Result<TableAnswer>()> reissue);

  std::shared_ptr<SharingClient> client_;
  TableName name_;
};

}  // namespace lakesync::sharing
