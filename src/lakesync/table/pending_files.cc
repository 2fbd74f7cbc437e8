#include "lakesync/table/pending_files.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "lakesync/catalog/metadata_files.h"
#include "lakesync/common/logging.h"
#include "lakesync/iceberg/manifest/manifest_list.h"
#include "lakesync/iceberg/manifest/manifest_reader.h"
#include "lakesync/iceberg/model/table_metadata.h"
#include "lakesync/table/row_deletes.h"
#include "lakesync/table/snapshot_update.h"

namespace lakesync::table {
namespace {

using json = nlohmann::json;

constexpr char kDirectory[] = "lakesync-pending";

std::string HostName() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

// Changes at every boot: with the host name it tells whether a pid still means the same process.
std::string BootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

// Records of attempts still running in this process (a job runs many applies one after another and
// may run several tables at once): they are never abandoned, whatever the pid check says.
std::mutex& ActiveMutex() {
  static std::mutex m;
  return m;
}
std::set<std::string>& Active() {
  static std::set<std::string> active;
  return active;
}

struct Record {
  std::string location;
  std::string host, boot_id;
  int64_t pid = 0;
  int64_t started_ms = 0;
  std::vector<std::string> files;
  std::string token;
  std::vector<std::string> directories;
};

// The one rule of "named by token" (top of pending_files.h), for the writer and for the cleanup:
// the location lies directly in one of the directories (spelled as they are, trailing '/' aside) and
// its name holds the token.
bool NamedByToken(const std::string& location, const std::string& token, const std::vector<std::string>& directories) {
  if (token.empty()) return false;
  const size_t slash = location.rfind('/');
  if (slash == std::string::npos || location.find(token, slash + 1) == std::string::npos) return false;
  const std::string_view parent(location.data(), slash);
  for (const auto& d : directories) {
    if (parent == d) return true;
  }
  return false;
}

Result<Record> ParseRecord(const std::string& location, const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Corrupt("pending-files record {} is not a JSON object", location);
  Record r;
  r.location = location;
  try {
    r.host = j.value("host", "");
    r.boot_id = j.value("boot-id", "");
    r.pid = j.value("pid", int64_t{0});
    r.started_ms = j.value("started-ms", int64_t{0});
    for (const auto& f : j.value("files", json::array())) r.files.push_back(f.get<std::string>());
    r.token = j.value("token", "");
    for (const auto& d : j.value("directories", json::array())) r.directories.push_back(d.get<std::string>());
  } catch (const std::exception& e) {
    return Corrupt("pending-files record {} is malformed: {}", location, e.what());
  }
  return r;
}

bool AttemptIsOver(const Record& r, const CleanupOptions& options, int64_t now_ms) {
  {
    std::lock_guard lock(ActiveMutex());
    if (Active().count(r.location)) return false;
  }
  if (r.host == HostName() && !r.host.empty()) {
    if (r.boot_id != BootId()) return true;  // rebooted since: nothing from then still runs
    if (r.pid == static_cast<int64_t>(getpid())) return true;  // ours, and not active (see above)
    // kill(pid, 0) probes without signalling; EPERM means the process exists (another user's).
    if (r.pid > 0 && kill(static_cast<pid_t>(r.pid), 0) != 0 && errno == ESRCH) return true;
    return false;
  }
  return now_ms - r.started_ms > options.grace_ms;
}

// The files the table references among `candidates`: the manifest lists of its snapshots, the
// manifests those lists name, and the files those manifests added — only for snapshots whose
// manifest list is a candidate (the attempt committed them) — plus everything live in the current
// snapshot (in case the committing snapshot expired since while later ones still carry its files).
Result<std::set<std::string>> ReferencedAmong(const io::FileIO& io, const iceberg::TableMetadata& metadata,
                                              const std::string& metadata_location,
                                              const std::set<std::string>& candidates) {
  std::set<std::string> referenced;
  auto note_snapshot = [&](const iceberg::Snapshot& snapshot, bool only_added) -> Status {
    referenced.insert(snapshot.manifest_list);
    LS_ASSIGN_OR_RAISE_CTX(std::string bytes, io.ReadAll(snapshot.manifest_list),
                           "reading the manifest list of snapshot {}", snapshot.snapshot_id);
    ARROW_ASSIGN_OR_RAISE(auto list, iceberg::ReadManifestList(bytes, snapshot.manifest_list));
    for (const auto& manifest : list.manifests) {
      referenced.insert(manifest.manifest_path);
      if (only_added && !candidates.count(manifest.manifest_path)) continue;
      LS_ASSIGN_OR_RAISE_CTX(std::string manifest_bytes, io.ReadAll(manifest.manifest_path), "reading manifest");
      ARROW_ASSIGN_OR_RAISE(auto entries, iceberg::ReadManifest(manifest_bytes, manifest, &metadata));
      for (const auto& e : entries) {
        if (e.status != iceberg::ManifestEntryStatus::kDeleted) referenced.insert(e.data_file->file_path);
      }
    }
    return Status::OK();
  };
  for (const auto& snapshot : metadata.snapshots) {
    if (candidates.count(snapshot->manifest_list)) ARROW_RETURN_NOT_OK(note_snapshot(*snapshot, true));
  }
  // Metadata files: the current one and those its log still names.
  referenced.insert(metadata_location);
  for (const auto& entry : metadata.metadata_log) referenced.insert(entry.metadata_file);
  if (auto current = metadata.CurrentSnapshot()) ARROW_RETURN_NOT_OK(note_snapshot(*current, false));
  std::set<std::string> out;
  for (const auto& c : candidates) {
    if (referenced.count(c)) out.insert(c);
  }
  return out;
}

}  // namespace

std::string PendingFilesDirectory(const iceberg::TableMetadata& metadata) {
  return io::JoinLocation(catalog::MetadataDirectory(metadata), kDirectory);
}

PendingFiles::PendingFiles(std::shared_ptr<io::FileIO> io, std::string location)
    : io_(std::move(io)), location_(std::move(location)) {
  std::lock_guard lock(ActiveMutex());
  Active().insert(location_);
}

PendingFiles::~PendingFiles() {
  std::lock_guard lock(ActiveMutex());
  Active().erase(location_);
}

Result<std::shared_ptr<PendingFiles>> PendingFiles::Start(std::shared_ptr<io::FileIO> io,
                                                          const iceberg::TableMetadata& metadata) {
  std::string location =
      io::JoinLocation(PendingFilesDirectory(metadata), fmt::format("{}.json", iceberg::NewUuid()));
  std::shared_ptr<PendingFiles> pending(new PendingFiles(std::move(io), std::move(location)));
  pending->started_ms_ = iceberg::NowMs();
  pending->token_ = iceberg::NewUuid();
  // JoinLocation(d, "") drops trailing slashes: the spelling of the parent of JoinLocation(d, name).
  for (const auto& d : {catalog::MetadataDirectory(metadata), DataLocation(metadata)}) {
    pending->directories_.push_back(io::JoinLocation(d, ""));
  }
  std::lock_guard lock(pending->mutex_);
  ARROW_RETURN_NOT_OK(pending->WriteLocked());
  return pending;
}

Status PendingFiles::WriteLocked() {
  json j = {{"host", HostName()},
            {"boot-id", BootId()},
            {"pid", static_cast<int64_t>(getpid())},
            {"started-ms", started_ms_},
            {"token", token_},
            {"directories", directories_},
            {"files", files_}};
  LS_RETURN_NOT_OK_CTX(io_->WriteAll(location_, j.dump()), "recording pending files in {}", location_);
  return Status::OK();
}

Status PendingFiles::Record(const std::string& location) {
  if (Covers(location)) return Status::OK();
  std::lock_guard lock(mutex_);
  if (finished_) return Status::OK();
  files_.push_back(location);
  return WriteLocked();
}

std::string PendingFiles::NewStem() { return fmt::format("{}-{}", token_, next_stem_.fetch_add(1)); }

bool PendingFiles::Covers(const std::string& location) const {
  return NamedByToken(location, token_, directories_);
}

Status PendingFiles::Finish() {
  std::lock_guard lock(mutex_);
  if (finished_) return Status::OK();
  finished_ = true;
  return io_->Delete(location_);
}

std::vector<std::string> PendingFiles::files() const {
  std::lock_guard lock(mutex_);
  return files_;
}

Result<AbandonedFilesCleanup> CleanAbandonedFiles(const io::FileIO& io, const iceberg::TableMetadata& metadata,
                                                  const std::string& metadata_location, CleanupOptions options) {
  AbandonedFilesCleanup out;
  const std::string dir = PendingFilesDirectory(metadata);
  ARROW_ASSIGN_OR_RAISE(auto listing, io.List(dir));
  const int64_t now = iceberg::NowMs();
  for (const auto& info : listing) {
    if (info.is_dir || info.location.size() < 5 || info.location.substr(info.location.size() - 5) != ".json") {
      continue;
    }
    auto text = io.ReadAll(info.location);
    if (!text.ok()) {
      if (KindOf(text.status()) == ErrorKind::kNotFound) continue;  // finished meanwhile
      return text.status();
    }
    auto record = ParseRecord(info.location, *text);
    if (!record.ok()) {
      // A record torn by a crash while it was rewritten (object stores replace whole objects, local
      // files are renamed into place, so this means outside damage): it names nothing usable.
      LS_LOG_WARN("{}", record.status().message());
      continue;
    }
    if (!AttemptIsOver(*record, options, now)) {
      ++out.records_left;
      continue;
    }
    std::set<std::string> candidates(record->files.begin(), record->files.end());
    bool listed = true;
    for (const auto& dir : record->directories) {
      if (record->token.empty()) break;
      auto entries = io.List(dir);
      if (!entries.ok()) {
        // Its token files cannot be found now: keep the record for the next run.
        LS_LOG_WARN("could not list {} for the files of abandoned write attempt {}: {}", dir, record->location,
                    entries.status().message());
        listed = false;
        continue;
      }
      for (const auto& e : *entries) {
        if (!e.is_dir && NamedByToken(e.location, record->token, record->directories)) candidates.insert(e.location);
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto referenced, ReferencedAmong(io, metadata, metadata_location, candidates));
    bool all_gone = listed;
    for (const auto& f : candidates) {
      if (referenced.count(f)) {
        ++out.files_kept;
        continue;
      }
      auto st = io.Delete(f);
      if (st.ok()) {
        ++out.files_deleted;
      } else {
        all_gone = false;
        LS_LOG_WARN("could not delete {} left by an abandoned write attempt: {}", f, st.message());
      }
    }
    ++out.records;
    if (all_gone) {
      auto st = io.Delete(record->location);
      if (!st.ok()) LS_LOG_WARN("could not delete pending-files record {}: {}", record->location, st.message());
    }
  }
  if (out.files_deleted > 0) {
    LS_LOG_INFO("deleted {} files of {} abandoned write attempt(s) on {}", out.files_deleted, out.records,
                metadata.location);
  }
  return out;
}

Status BeginWriteAttempt(Table& table) {
  auto cleaned = CleanAbandonedFiles(*table.io(), *table.metadata(), table.metadata_location());
  if (!cleaned.ok()) {
    LS_LOG_WARN("could not clean abandoned write attempts on {}: {}", table.name(), cleaned.status().message());
  }
  LS_ASSIGN_OR_RAISE_CTX(auto pending, PendingFiles::Start(table.io(), *table.metadata()), "writing to {}",
                         table.name());
  table.set_pending_files(std::move(pending));
  return Status::OK();
}

void EndWriteAttempt(Table& table, const Status& outcome) {
  auto pending = table.pending_files();
  table.set_pending_files(nullptr);
  if (!pending || KindOf(outcome) == ErrorKind::kCommitStateUnknown) return;
  auto st = pending->Finish();
  if (!st.ok()) LS_LOG_WARN("could not delete pending-files record {}: {}", pending->location(), st.message());
}

}  // namespace lakesync::table
