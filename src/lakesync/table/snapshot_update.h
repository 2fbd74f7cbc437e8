// Committing a new snapshot: added data files, added delete files (position deletes, deletion vectors,
// equality deletes), removed data files and removed delete files, in one atomic commit.
//
// New files go into new manifests, which are written once and reused across retries (their entries
// inherit the snapshot id and sequence number from the manifest list). Manifests that hold removed
// files are rewritten with those entries marked DELETED. A commit that loses the race to another
// writer refreshes the table, rebuilds what depends on the table state (SetAttemptDeletes), runs the
// validations again on the new state and retries with backoff, within the table's budget
// (commit.retry.num-retries, commit.retry.total-timeout-ms). This is the one commit retry loop:
// callers (the sink, the job runner) never retry a commit conflict themselves.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/schema_update.h"
#include "lakesync/table/table.h"

namespace lakesync::table {

struct CommitResult {
  int64_t snapshot_id = 0;
  int64_t sequence_number = 0;
  std::string operation;
  std::map<std::string, std::string> summary;
  int attempts = 0;
  bool skipped = false;  // SkipIfEmpty and nothing to commit: no snapshot
};

// Delete files that depend on the table state a commit attempt is made on (positions resolved from
// keys against it): built again for every attempt.
struct AttemptDeletes {
  std::vector<iceberg::DataFile> added;
  std::set<std::pair<std::string, std::string>> removed;  // (path, referenced data file for DVs)
  // Files written for them: deleted when the attempt fails, unless its outcome is unknown.
  std::vector<std::string> written;

  void AddDeleteFile(iceberg::DataFile file) { added.push_back(std::move(file)); }
  void RemoveDeleteFile(std::string path, std::optional<std::string> referenced_data_file = std::nullopt) {
    removed.insert({std::move(path), referenced_data_file.value_or("")});
  }
};

// What a validation sees: the table state a retry is about to commit on.
struct CommitBase {
  const iceberg::TableMetadata& metadata;
  // Live data file paths of the current snapshot (computed on demand, cached per attempt).
  std::function<Result<const std::set<std::string>*>()> live_data_files;
};

class SnapshotUpdate {
 public:
  explicit SnapshotUpdate(std::shared_ptr<Table> table) : table_(std::move(table)) {}

  void AddDataFile(iceberg::DataFile file) { added_data_.push_back(std::move(file)); }
  // Adds a data file with an explicit, older data sequence number instead of the new snapshot's
  // (spec "Sequence Number Inheritance"): compaction gives rewritten rows the sequence number of the
  // snapshot it read them from, so that equality deletes committed after that snapshot still apply
  // to them and the ones it already applied do not (maintenance/compact.h).
  void AddDataFile(iceberg::DataFile file, int64_t data_sequence_number) {
    data_sequence_numbers_[file.file_path] = data_sequence_number;
    added_data_.push_back(std::move(file));
  }
  void AddDeleteFile(iceberg::DataFile file) { added_deletes_.push_back(std::move(file)); }
  // Removes a live data file (by path). Its deletion vector, if any, is removed with it.
  void RemoveDataFile(std::string path) { removed_data_.insert(std::move(path)); }
  // Removes a live delete file. Deletion vectors are named by their Puffin path and the data file
  // they reference, since many vectors share one Puffin file.
  void RemoveDeleteFile(std::string path, std::optional<std::string> referenced_data_file = std::nullopt) {
    removed_deletes_.insert({std::move(path), referenced_data_file.value_or("")});
  }
  // Extra snapshot summary entries (e.g. lakesync.source-position.<sink>).
  void SetSummaryProperty(std::string key, std::string value) { extra_summary_[std::move(key)] = std::move(value); }
  // A table property set in the same commit (atomically with the snapshot).
  void SetTableProperty(std::string key, std::string value) { table_properties_[std::move(key)] = std::move(value); }
  // Checked against every state the commit is attempted on (the first and each retry); an error
  // stops the commit. Use it for conflicts only this operation understands.
  void AddValidation(std::function<Status(const CommitBase&)> validation) {
    validations_.push_back(std::move(validation));
  }
  // Overrides the summary operation (default: append, delete or overwrite from the contents).
  void SetOperation(std::string operation) { operation_ = std::move(operation); }
  // Delete files built against the state each attempt commits on (the current table first, the
  // refreshed one after a conflict). With them a conflict the validations find is retried too, since
  // the rebuilt deletes follow the new state; without them such a conflict is final (kNotRetryable).
  void SetAttemptDeletes(std::function<Status(AttemptDeletes&)> build) { attempt_deletes_ = std::move(build); }
  // Makes `evolved` (computed from `base`, the table state the files were written for) the current
  // schema in the same commit as the snapshot: AddSchema + SetCurrentSchema + the snapshot, which
  // names the new schema. A retry on a state whose schema another writer changed in between fails
  // (kNotRetryable): the files were written for the schema this commit was to make current.
  void SetSchema(iceberg::EvolvedSchema evolved, const iceberg::TableMetadata& base) {
    schema_ = std::move(evolved);
    schema_base_id_ = base.current_schema_id;
    schema_base_last_column_id_ = base.last_column_id;
  }
  // Replaces the manifests of the state an attempt commits on with the ones `rewrite` writes
  // (rewrite-manifests: same files, fewer manifests). Called on every attempt with the base's
  // metadata and manifests; it returns the new snapshot's manifests, appends every file it wrote to
  // `written` (deleted if the attempt fails) and may add snapshot summary entries. Only for commits
  // that add and remove no file.
  using ManifestRewrite = std::function<Result<std::vector<iceberg::ManifestFile>>(
      const iceberg::TableMetadata& base, const std::vector<iceberg::ManifestFile>& manifests,
      std::vector<std::string>& written, std::map<std::string, std::string>& summary)>;
  void SetManifestRewrite(ManifestRewrite rewrite) { manifest_rewrite_ = std::move(rewrite); }
  // When an attempt has nothing to add or remove, return a `skipped` result instead of committing.
  void SkipIfEmpty() { skip_if_empty_ = true; }
  // Adds fixed delete changes (files written once, by the caller).
  void AddDeletes(const AttemptDeletes& deletes) {
    for (const auto& f : deletes.added) added_deletes_.push_back(f);
    removed_deletes_.insert(deletes.removed.begin(), deletes.removed.end());
  }

  bool empty() const {
    return added_data_.empty() && added_deletes_.empty() && removed_data_.empty() && removed_deletes_.empty();
  }

  // Writes manifests and the manifest list and commits, retrying conflicts (see above). On failure
  // every file this commit wrote is deleted (the attempt deletes' files included), except when the
  // outcome is unknown (kCommitStateUnknown), where nothing is deleted. The data and delete files
  // added with AddDataFile/AddDeleteFile belong to the caller. Errors keep their kind and flags: a
  // validation's kAlreadyApplied reaches the caller as it was returned.
  Result<CommitResult> Commit();

 private:
  struct Attempt;
  Result<CommitResult> TryCommit(Attempt& attempt, int attempt_number);
  Status WriteManifests(const std::vector<const iceberg::DataFile*>& data,
                        const std::vector<const iceberg::DataFile*>& deletes, int first_index,
                        std::vector<iceberg::ManifestFile>& manifests, std::vector<std::string>& written);

  std::shared_ptr<Table> table_;
  std::vector<iceberg::DataFile> added_data_;
  std::map<std::string, int64_t> data_sequence_numbers_;  // added data files with an explicit one
  std::vector<iceberg::DataFile> added_deletes_;
  std::set<std::string> removed_data_;
  std::set<std::pair<std::string, std::string>> removed_deletes_;
  std::map<std::string, std::string> extra_summary_;
  std::map<std::string, std::string> table_properties_;
  std::vector<std::function<Status(const CommitBase&)>> validations_;
  std::optional<std::string> operation_;
  std::function<Status(AttemptDeletes&)> attempt_deletes_;
  ManifestRewrite manifest_rewrite_;
  bool skip_if_empty_ = false;
  std::optional<iceberg::EvolvedSchema> schema_;
  int32_t schema_base_id_ = 0;
  int32_t schema_base_last_column_id_ = 0;
  // Manifests holding the added files, written once.
  std::vector<iceberg::ManifestFile> new_manifests_;
  std::vector<std::string> written_files_;  // everything this update wrote, for cleanup
};

// Reads a snapshot's manifest list and every manifest of the given content (or all when nullopt),
// returning the live entries (ADDED and EXISTING). `metadata` supplies partition specs.
struct LiveEntries {
  std::vector<iceberg::ManifestFile> manifests;
  std::vector<iceberg::ManifestEntry> data;
  std::vector<iceberg::ManifestEntry> deletes;
};
Result<LiveEntries> ReadLiveEntries(const io::FileIO& io, const iceberg::TableMetadata& metadata,
                                    const iceberg::Snapshot& snapshot, bool include_data = true,
                                    bool include_deletes = true);

}  // namespace lakesync::table
