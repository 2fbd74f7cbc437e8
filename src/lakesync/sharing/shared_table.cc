#include "lakesync/sharing/shared_table.h"

#include <ctime>
#include <map>
#include <mutex>

#include "lakesync/delta/table_config.h"
#include "lakesync/http/url_file.h"
#include "lakesync/io/file_io.h"

namespace lakesync::sharing {
namespace {

std::string IsoMillis(int64_t ms) {
  const time_t seconds = static_cast<time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  const int64_t frac = ms - int64_t{seconds} * 1000;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}

// A parquet-format answer carries no Delta protocol: it describes a table a reader-version-1 client
// reads without any feature.
delta::Protocol ProtocolOf(const TableAnswer& answer) {
  if (answer.protocol.delta_protocol) return *answer.protocol.delta_protocol;
  delta::Protocol p;
  p.min_reader_version = 1;
  p.min_writer_version = 2;
  return p;
}

}  // namespace

// Which file (by id) each URL of an answer stands for, and the URL currently valid for each id.
struct SharedTable::UrlBook {
  std::mutex mutex;
  std::map<std::string, std::string> id_of;
  std::map<std::string, std::string> url_of;
  std::function<Result<TableAnswer>()> reissue;

  void Record(const TableAnswer& answer) {
    for (const auto& f : answer.files) {
      const std::string id = f.id.empty() ? f.url : f.id;
      id_of[f.url] = id;
      url_of[id] = f.url;
      if (f.action && f.action->deletion_vector && f.action->deletion_vector->storage_type == "p") {
        const std::string dv_id = "dv:" + id;
        id_of[f.action->deletion_vector->path_or_inline_dv] = dv_id;
        url_of[dv_id] = f.action->deletion_vector->path_or_inline_dv;
      }
    }
  }

  Result<std::string> Refresh(const std::string& url) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = id_of.find(url);
    if (it == id_of.end()) return MakeError(ErrorKind::kForbidden, "a file URL was refused and is not one this table issued");
    const std::string id = it->second;
    if (url_of[id] != url) return url_of[id];  // another reader refreshed it already
    ARROW_ASSIGN_OR_RAISE(auto answer, reissue());
    Record(answer);
    if (url_of[id] == url) {
      return MakeError(ErrorKind::kForbidden, "the server refused a file URL and gave no new one for the same file");
    }
    return url_of[id];
  }
};

SharedTable::SharedTable(std::shared_ptr<SharingClient> client, TableName name)
    : client_(std::move(client)), name_(std::move(name)) {}

Result<std::shared_ptr<SharedTable>> SharedTable::Open(const std::string& table_url) {
  ARROW_ASSIGN_OR_RAISE(auto url, TableUrl::Parse(table_url));
  ARROW_ASSIGN_OR_RAISE(auto profile, Profile::Load(url.profile));
  ARROW_ASSIGN_OR_RAISE(auto client, SharingClient::Make(std::move(profile)));
  return Open(std::move(client), TableName{url.share, url.schema, url.table});
}

Result<std::shared_ptr<SharedTable>> SharedTable::Open(std::shared_ptr<SharingClient> client, TableName name) {
  return std::shared_ptr<SharedTable>(new SharedTable(std::move(client), std::move(name)));
}

std::string SharedTable::Describe() const {
  return fmt::format("shared table {} at {}", name_.Name(), client_->profile().endpoint);
}

Result<int64_t> SharedTable::LatestVersion() { return client_->TableVersion(name_); }

Result<int64_t> SharedTable::VersionAtOrAfter(const std::string& timestamp) {
  return client_->TableVersion(name_, timestamp);
}

Result<std::shared_ptr<io::FileIO>> SharedTable::FileIOFor(const TableAnswer& answer,
                                                           std::function<Result<TableAnswer>()> reissue) {
  auto book = std::make_shared<UrlBook>();
  book->reissue = std::move(reissue);
  book->Record(answer);
  http::UrlFileOptions options;
  options.refresh = [book](const std::string& url) { return book->Refresh(url); };
  return io::FileIO::Make({}, http::MakeUrlFileSystem(client_->http(), std::move(options)));
}

Result<std::shared_ptr<arrow::RecordBatchReader>> SharedTable::ScanSnapshot(const delta::SnapshotScanOptions& options) {
  if (options.version && options.as_of_timestamp_ms) return InvalidArgument("give a version or a timestamp, not both");
  QueryRequest q;
  q.version = options.version;
  if (options.as_of_timestamp_ms) q.timestamp = IsoMillis(*options.as_of_timestamp_ms);
  const bool latest = !q.version && !q.timestamp;
  q.include_refresh_token = latest;
  if (options.limit) q.limit_hint = *options.limit;
  ARROW_ASSIGN_OR_RAISE(auto answer, client_->Query(name_, q));
  // Fresh URLs for the same files: the refresh token pins a latest snapshot's version; otherwise the
  // same version is asked for again.
  QueryRequest again;
  if (latest && answer.end && answer.end->refresh_token) {
    again.refresh_token = answer.end->refresh_token;
  } else {
    again.version = answer.version;
  }
  auto client = client_;
  auto name = name_;
  ARROW_ASSIGN_OR_RAISE(auto io, FileIOFor(answer, [client, name, again] { return client->Query(name, again); }));
  std::vector<delta::FileAction> files;
  files.reserve(answer.files.size());
  for (const auto& f : answer.files) files.push_back(ToFileAction(f));
  delta::SnapshotScanOptions read;
  read.select = options.select;
  read.limit = options.limit;
  LS_ASSIGN_OR_RAISE_CTX(auto reader,
                         delta::ReadSnapshotFiles(io, client_->profile().endpoint, ProtocolOf(answer),
                                                  answer.metadata.metadata, files, read, answer.version),
                         "{}", Describe());
  return reader;
}

Result<std::shared_ptr<arrow::RecordBatchReader>> SharedTable::ReadChanges(const delta::ChangeFeedOptions& options) {
  if (options.start_version.has_value() == options.start_timestamp_ms.has_value()) {
    return InvalidArgument("give exactly one of a start version and a start timestamp");
  }
  ChangesRequest c;
  c.starting_version = options.start_version;
  if (options.start_timestamp_ms) c.starting_timestamp = IsoMillis(*options.start_timestamp_ms);
  c.ending_version = options.end_version;
  if (options.end_timestamp_ms) c.ending_timestamp = IsoMillis(*options.end_timestamp_ms);
  ARROW_ASSIGN_OR_RAISE(auto answer, client_->Changes(name_, c));
  // Re-asking pins the range the first answer covered, so the same files come back.
  ChangesRequest again;
  again.starting_version = answer.version;
  int64_t last = answer.version - 1;
  for (const auto& f : answer.files) last = std::max(last, f.version.value_or(answer.version));
  if (last >= answer.version) again.ending_version = last;
  auto client = client_;
  auto name = name_;
  ARROW_ASSIGN_OR_RAISE(auto io, FileIOFor(answer, [client, name, again] { return client->Changes(name, again); }));

  delta::ChangePlan plan;
  plan.table_root = client_->profile().endpoint;
  plan.start_version = answer.version;
  plan.end_version = last;
  plan.protocol = ProtocolOf(answer);
  plan.metadata = answer.metadata.metadata;
  std::map<int64_t, delta::CommitChanges> commits;
  for (const auto& f : answer.files) {
    if (!f.version || !f.timestamp) {
      return Corrupt("{}: a change file line lacks its version or timestamp", Describe());
    }
    auto& commit = commits[*f.version];
    commit.version = *f.version;
    commit.timestamp_ms = *f.timestamp;
    commit.files.push_back(ToFileAction(f));
  }
  for (auto& [v, commit] : commits) plan.commits.push_back(std::move(commit));
  delta::ChangeReadOptions read;
  read.metadata_columns = options.metadata_columns;
  read.check_files_first = false;  // the files are fetched once, while reading
  LS_ASSIGN_OR_RAISE_CTX(auto reader, delta::ReadChangePlan(io, plan, read), "{}", Describe());
  return reader;
}

Result<std::vector<SharedTable::SchemaAtVersion>> SharedTable::SchemaHistory(int64_t from, int64_t through) {
  QueryRequest q;
  q.starting_version = from;
  q.ending_version = through;
  ARROW_ASSIGN_OR_RAISE(auto answer, client_->Query(name_, q));
  const delta::Protocol protocol = ProtocolOf(answer);
  std::vector<SchemaAtVersion> out;
  LS_ASSIGN_OR_RAISE_CTX(auto first, delta::SchemaOf(protocol, answer.metadata.metadata), "{} at version {}",
                         Describe(), from);
  out.push_back({from, std::move(first)});
  for (const auto& line : answer.historical_metadata) {
    if (!line.version) {
      return Corrupt("{}: a metaData line of versions {}..{} lacks its version", Describe(), from, through);
    }
    if (*line.version <= from || *line.version > through) continue;
    LS_ASSIGN_OR_RAISE_CTX(auto schema, delta::SchemaOf(protocol, line.metadata), "{} at version {}", Describe(),
                           *line.version);
    if (schema.fingerprint == out.back().schema.fingerprint) continue;
    out.push_back({*line.version, std::move(schema)});
  }
  return out;
}

Result<int64_t> SharedTable::CommitTimestamp(int64_t version) {
  ChangesRequest c;
  c.starting_version = version;
  c.ending_version = version;
  ARROW_ASSIGN_OR_RAISE(auto answer, client_->Changes(name_, c));
  for (const auto& f : answer.files) {
    if (f.timestamp) return *f.timestamp;
  }
  return NotFound("{}: version {} has no change files that carry its commit timestamp", Describe(), version);
}

}  // namespace lakesync::sharing
