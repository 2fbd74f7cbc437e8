#include "lakesync/io/file_io.h"

#include <arrow/buffer.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/filesystem/localfs.h>
#include <arrow/io/interfaces.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "lakesync/io/arrow_errors_internal.h"
#include "lakesync/io/local_files_internal.h"
#include "lakesync/io/object_stores_internal.h"

namespace lakesync::io {
namespace {

using internal::FromArrow;
using internal::IsArrowNotFound;

// A filesystem and what Arrow expects in front of a location's path on it (the bucket for S3
// and GCS, the container for some Azure spellings, nothing locally).
struct Mount {
  std::shared_ptr<arrow::fs::FileSystem> filesystem;
  std::string path_prefix;
};

// Filesystems are shared as widely as their configuration allows: one local filesystem, one GCS
// client for all buckets, but one S3 client per bucket because each bucket has its own region.
std::string MountKey(const ParsedLocation& parsed) {
  switch (parsed.kind) {
    case StorageKind::kLocal:
      return "file";
    case StorageKind::kS3:
      return "s3://" + parsed.authority;
    case StorageKind::kGcs:
      return "gs";
    case StorageKind::kAzure:
      return parsed.scheme + "://" + parsed.authority;
    case StorageKind::kHttp:
      return "http";
  }
  return parsed.scheme;
}

std::string ArrowPath(const ParsedLocation& parsed, const Mount& mount) {
  if (parsed.kind == StorageKind::kLocal) return parsed.path;
  std::string key = parsed.path;
  while (!key.empty() && key.back() == '/') key.pop_back();
  if (mount.path_prefix.empty()) return key;
  if (key.empty()) return mount.path_prefix;
  return mount.path_prefix + "/" + key;
}

// Reads from object stores are idempotent, so a read that failed with a transient error is retried
// here, a few times with doubling backoff: the SDKs retry most such errors themselves, but not all of
// them (a ranged GET answered with a 503 whose error body does not fit the caller's buffer surfaces
// as INTERNAL_FAILURE, a connection dropped mid-body as a stream error). Writes are not retried here:
// whether a failed write landed is the SDK's to know. Nor is an error the SDK says it already retried
// for its whole budget (internal::RetriedToTheSdkLimit): the budget the user set is the one that counts.
constexpr int kReadAttempts = 5;

inline Status StatusOfResult(const Status& st) { return st; }
template <typename T>
Status StatusOfResult(const Result<T>& r) {
  return r.status();
}

template <typename F>
auto RetryRead(const std::string& location, F&& read) -> decltype(read()) {
  auto delay = std::chrono::milliseconds(200);
  for (int attempt = 1;; ++attempt) {
    auto result = read();
    if (result.ok() || attempt >= kReadAttempts) return result;
    const Status& failure = StatusOfResult(result);
    if (KindOf(FromArrow(failure, "reading", location)) != ErrorKind::kUnavailable) return result;
    if (internal::RetriedToTheSdkLimit(failure)) return result;
    std::this_thread::sleep_for(delay);
    delay *= 2;
  }
}

class RetryingInputFile : public arrow::io::RandomAccessFile {
 public:
  RetryingInputFile(std::shared_ptr<arrow::io::RandomAccessFile> file, std::string location)
      : file_(std::move(file)), location_(std::move(location)) {}

  arrow::Status Close() override { return file_->Close(); }
  bool closed() const override { return file_->closed(); }
  arrow::Result<int64_t> Tell() const override { return file_->Tell(); }
  arrow::Status Seek(int64_t position) override { return file_->Seek(position); }
  arrow::Result<int64_t> GetSize() override {
    return RetryRead(location_, [&] { return file_->GetSize(); });
  }
  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override {
    ARROW_ASSIGN_OR_RAISE(int64_t position, file_->Tell());
    ARROW_ASSIGN_OR_RAISE(int64_t n, ReadAt(position, nbytes, out));
    ARROW_RETURN_NOT_OK(file_->Seek(position + n));
    return n;
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override {
    ARROW_ASSIGN_OR_RAISE(int64_t position, file_->Tell());
    ARROW_ASSIGN_OR_RAISE(auto buffer, ReadAt(position, nbytes));
    ARROW_RETURN_NOT_OK(file_->Seek(position + buffer->size()));
    return buffer;
  }
  arrow::Result<int64_t> ReadAt(int64_t position, int64_t nbytes, void* out) override {
    return RetryRead(location_, [&] { return file_->ReadAt(position, nbytes, out); });
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t nbytes) override {
    return RetryRead(location_, [&] { return file_->ReadAt(position, nbytes); });
  }

 private:
  std::shared_ptr<arrow::io::RandomAccessFile> file_;
  std::string location_;
};

std::shared_ptr<arrow::io::RandomAccessFile> WithReadRetries(std::shared_ptr<arrow::io::RandomAccessFile> file,
                                                             StorageKind kind, const std::string& location) {
  if (kind == StorageKind::kLocal) return file;
  return std::make_shared<RetryingInputFile>(std::move(file), location);
}

int64_t ToMillis(arrow::fs::TimePoint mtime) {
  if (mtime == arrow::fs::kNoTime) return -1;
  return std::chrono::duration_cast<std::chrono::milliseconds>(mtime.time_since_epoch()).count();
}

FileInfo ToFileInfo(const arrow::fs::FileInfo& info, std::string location) {
  FileInfo out;
  out.location = std::move(location);
  out.is_dir = info.IsDirectory();
  out.size = out.is_dir ? -1 : info.size();
  out.mtime_ms = ToMillis(info.mtime());
  return out;
}

// The part of `child` below `base` ("b/t/x/y" below "b/t" is "x/y").
std::string_view RelativeTo(std::string_view child, std::string_view base) {
  if (child.substr(0, base.size()) != base) return child;
  child.remove_prefix(base.size());
  while (!child.empty() && child.front() == '/') child.remove_prefix(1);
  return child;
}

bool IsObjectStore(StorageKind kind) { return kind != StorageKind::kLocal; }

// Arrow's filesystems return statuses, but the SDKs beneath them occasionally throw (the GCS
// client's JSON parser does on malformed listings). Exceptions must not cross this module's
// boundary, so every call into arrow::fs goes through here.
template <typename F>
auto CallArrow(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    return Status::IOError("the storage library failed unexpectedly: ", e.what());
  } catch (...) {
    return Status::IOError("the storage library failed unexpectedly with an unknown exception");
  }
}

}  // namespace

struct FileIO::Impl {
  std::map<std::string, std::string> properties;
  std::shared_ptr<arrow::fs::FileSystem> http;  // for http(s) locations; may be null
  internal::S3Config s3;
  internal::GcsConfig gcs;
  internal::AzureConfig azure;

  mutable std::mutex mutex;
  mutable std::map<std::string, Mount> mounts;

  Result<Mount> MakeMount(const ParsedLocation& parsed) const {
    Mount mount;
    switch (parsed.kind) {
      case StorageKind::kLocal:
        mount.filesystem = std::make_shared<arrow::fs::LocalFileSystem>();
        break;
      case StorageKind::kS3: {
        ARROW_ASSIGN_OR_RAISE(mount.filesystem, internal::MakeS3FileSystem(s3, parsed.authority));
        mount.path_prefix = parsed.authority;
        break;
      }
      case StorageKind::kGcs: {
        ARROW_ASSIGN_OR_RAISE(mount.filesystem, internal::MakeGcsFileSystem(gcs));
        mount.path_prefix = parsed.authority;
        break;
      }
      case StorageKind::kAzure: {
        ARROW_ASSIGN_OR_RAISE(mount.filesystem,
                              internal::MakeAzureFileSystem(azure, parsed.scheme, parsed.authority,
                                                            &mount.path_prefix));
        break;
      }
      case StorageKind::kHttp:
        return Unsupported("http(s) locations are read only through a FileIO made with an HTTP filesystem");
    }
    return mount;
  }

  // The mount for a parsed location. Because S3 and GCS key one mount per bucket (or less), the
  // bucket is part of the path for them, which ArrowPath adds.
  Result<Mount> GetMount(const ParsedLocation& parsed) const {
    const std::string key = MountKey(parsed);
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = mounts.find(key); it != mounts.end()) return it->second;
    // Made under the lock: two threads must not both initialize an SDK client for one bucket.
    ARROW_ASSIGN_OR_RAISE(Mount mount, CallArrow([&] { return MakeMount(parsed); }));
    mounts.emplace(key, mount);
    return mount;
  }
};

FileIO::FileIO(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FileIO::~FileIO() = default;

Result<std::shared_ptr<FileIO>> FileIO::Make(std::map<std::string, std::string> properties) {
  auto impl = std::make_unique<Impl>();
  const internal::EnvLookup env = internal::SystemEnv();
  LS_ASSIGN_OR_RAISE_CTX(impl->s3, internal::S3Config::FromProperties(properties, env),
                         "configuring S3 file access");
  LS_ASSIGN_OR_RAISE_CTX(impl->gcs, internal::GcsConfig::FromProperties(properties, env),
                         "configuring GCS file access");
  LS_ASSIGN_OR_RAISE_CTX(impl->azure, internal::AzureConfig::FromProperties(properties),
                         "configuring Azure file access");
  impl->properties = std::move(properties);
  return std::shared_ptr<FileIO>(new FileIO(std::move(impl)));
}

Result<std::shared_ptr<FileIO>> FileIO::Make(std::map<std::string, std::string> properties,
                                             std::shared_ptr<arrow::fs::FileSystem> http_filesystem) {
  ARROW_ASSIGN_OR_RAISE(auto io, Make(std::move(properties)));
  io->impl_->http = std::move(http_filesystem);
  return io;
}

namespace {
bool StartsWithHttp(std::string_view location) {
  auto lower_starts = [&](std::string_view prefix) {
    if (location.size() < prefix.size()) return false;
    for (size_t i = 0; i < prefix.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(location[i])) != prefix[i]) return false;
    }
    return true;
  };
  return lower_starts("http://") || lower_starts("https://");
}
}  // namespace

const std::map<std::string, std::string>& FileIO::properties() const { return impl_->properties; }

Result<FileIO::Resolved> FileIO::Resolve(const std::string& location) const {
  if (impl_->http && StartsWithHttp(location)) {
    // The whole URL is the path: its query carries the signature.
    return Resolved{impl_->http, location, StorageKind::kHttp};
  }
  ARROW_ASSIGN_OR_RAISE(ParsedLocation parsed, ParseLocation(location));
  LS_ASSIGN_OR_RAISE_CTX(Mount mount, impl_->GetMount(parsed), "accessing {}", location);
  Resolved resolved;
  resolved.path = ArrowPath(parsed, mount);
  resolved.filesystem = std::move(mount.filesystem);
  resolved.kind = parsed.kind;
  return resolved;
}

Result<std::shared_ptr<arrow::io::RandomAccessFile>> FileIO::OpenInput(
    const std::string& location) const {
  ARROW_ASSIGN_OR_RAISE(Resolved r, Resolve(location));
  auto file = RetryRead(location, [&] { return CallArrow([&] { return r.filesystem->OpenInputFile(r.path); }); });
  if (!file.ok()) return FromArrow(file.status(), "opening", location);
  return WithReadRetries(std::move(file).ValueUnsafe(), r.kind, location);
}

Result<std::shared_ptr<arrow::io::RandomAccessFile>> FileIO::OpenInput(const std::string& location,
                                                                       int64_t size) const {
  ARROW_ASSIGN_OR_RAISE(Resolved r, Resolve(location));
  arrow::fs::FileInfo info(r.path, arrow::fs::FileType::File);
  info.set_size(size);
  auto file = CallArrow([&] { return r.filesystem->OpenInputFile(info); });
  if (!file.ok()) return FromArrow(file.status(), "opening", location);
  return WithReadRetries(std::move(file).ValueUnsafe(), r.kind, location);
}

Result<std::shared_ptr<arrow::io::OutputStream>> FileIO::OpenOutput(
    const std::string& location, std::shared_ptr<FileSyncs> deferred_syncs) const {
  ARROW_ASSIGN_OR_RAISE(Resolved r, Resolve(location));
  if (r.kind == StorageKind::kLocal) {
    const std::string parent = std::filesystem::path(r.path).parent_path().string();
    if (!parent.empty()) {
      Status st =
          CallArrow([&] { return r.filesystem->CreateDir(parent, /*recursive=*/true); });
      if (!st.ok()) return FromArrow(st, "creating the parent directory of", location);
    }
  }
  auto stream = CallArrow([&] { return r.filesystem->OpenOutputStream(r.path); });
  if (!stream.ok()) return FromArrow(stream.status(), "creating", location);
  // An object store's object is durable once its upload completes; a local file only once synced.
  if (r.kind == StorageKind::kLocal) {
    return internal::SyncOnClose(std::move(stream).ValueUnsafe(), r.path, location, std::move(deferred_syncs));
  }
  return std::move(stream).ValueUnsafe();
}

namespace {

Result<std::string> ReadAllOnce(const FileIO::Resolved& r, const std::string& location) {
  // One sequential stream rather than OpenInput + ReadAt: a single GET on object stores, and Arrow's
  // GCS random-access file holds a second download open meanwhile, which single-threaded GCS
  // emulators cannot serve for objects larger than a socket buffer.
  auto stream = CallArrow([&] { return r.filesystem->OpenInputStream(r.path); });
  if (!stream.ok()) return FromArrow(stream.status(), "opening", location);
  std::string out;
  int64_t done = 0;
  int64_t chunk = 1 << 20;
  while (true) {
    out.resize(static_cast<size_t>(done + chunk));
    auto n = CallArrow([&] { return (*stream)->Read(chunk, out.data() + done); });
    if (!n.ok()) return FromArrow(n.status(), "reading", location);
    if (*n == 0) break;
    done += *n;
    if (done >= chunk) chunk = std::min<int64_t>(done, int64_t{64} << 20);  // grow geometrically
  }
  out.resize(static_cast<size_t>(done));
  Status st = CallArrow([&] { return (*stream)->Close(); });
  if (!st.ok()) return FromArrow(st, "closing", location);
  return out;
}

}  // namespace

Result<std::string> FileIO::ReadAll(const std::string& location) const {
  ARROW_ASSIGN_OR_RAISE(Resolved resolved, Resolve(location));
  if (resolved.kind == StorageKind::kLocal) return ReadAllOnce(resolved, location);
  return RetryRead(location, [&] { return ReadAllOnce(resolved, location); });
}


Status FileIO::WriteAll(const std::string& location, std::string_view data) const {
  ARROW_ASSIGN_OR_RAISE(Resolved r, Resolve(location));
  if (r.kind == StorageKind::kLocal) {
    return internal::ReplaceLocalFile(r.path, data, location);
  }
  auto stream = CallArrow([&] { return r.filesystem->OpenOutputStream(r.path); });
  if (!stream.ok()) return FromArrow(stream.status(), "creating", location);
  Status st = CallArrow(
      [&] { return (*stream)->Write(data.data(), static_cast<int64_t>(data.size())); });
  if (!st.ok()) {
    // Abort drops a half-done multipart upload instead of publishing a truncated object.
    (void)CallArrow([&] { return (*stream)->Abort(); });
    return FromArrow(st, "writing", location);
  }
  st = CallArrow([&] { return (*stream)->Close(); });
  if (!st.ok()) return FromArrow(st, "writing", location);
  return Status::OK();
}

Status FileIO::WriteNew(const std::string& location, std::string_view data) const {
  ARROW_ASSIGN_OR_RAISE(Resolved r, Resolve(location));
  if (r.kind == StorageKind::kLocal) return internal::WriteNewLocalFile(r.path, data, location);
  // Best effort only, as the header says: the check and the write are two requests.
  ARROW_ASSIGN_OR_RAISE(bool exists, Exists(location));
  if (exists) return AlreadyExists("creating {}: the file already exists", location);
  return WriteAll(location, data);
}

Result<bool> FileIO::Exists(const std::string& location) const {
  ARROW_ASSIGN_OR_RAISE(Resolved r, Resolve(location));
  auto info = CallArrow([&] { return r.filesystem->GetFileInfo(r.path); });
  if (!info.ok()) {
    if (IsArrowNotFound(info.status())) return false;
    return FromArrow(info.status(), "checking", location);
  }
  return info->type() != arrow::fs::FileType::NotFound;
}

Result<FileInfo> FileIO::Stat(const std::string& location) const {
  ARROW_ASSIGN_OR_RAISE(Resolved r, Resolve(location));
  auto info = CallArrow([&] { return r.filesystem->GetFileInfo(r.path); });
  if (!info.ok()) return FromArrow(info.status(), "reading the status of", location);
  if (info->type() == arrow::fs::FileType::NotFound) {
    return NotFound("reading the status of {}: no such file or directory", location);
  }
  return ToFileInfo(*info, location);
}

Result<std::vector<FileInfo>> FileIO::List(const std::string& dir_location, bool recursive) const {
  ARROW_ASSIGN_OR_RAISE(Resolved r, Resolve(dir_location));
  arrow::fs::FileSelector selector;
  selector.base_dir = r.path;
  selector.allow_not_found = true;
  // Arrow's GCS filesystem reports a subdirectory only when a directory marker object exists,
  // which tables written by other tools do not have. So GCS is always listed recursively and the
  // directories are derived from the keys, as S3 and local listings report them.
  const bool derive_dirs = r.kind == StorageKind::kGcs;
  selector.recursive = recursive || derive_dirs;
  auto infos = CallArrow([&] { return r.filesystem->GetFileInfo(selector); });
  // Arrow's local listing fails (instead of finding it missing) for a directory that another thread or
  // process creates between its opendir and its check that the directory exists: concurrent table
  // creations race there. Listing again sees the new directory.
  for (int again = 0; !infos.ok() && infos.status().IsIOError() && r.kind == StorageKind::kLocal && again < 3; ++again) {
    infos = CallArrow([&] { return r.filesystem->GetFileInfo(selector); });
  }
  if (!infos.ok()) return FromArrow(infos.status(), "listing", dir_location);

  std::vector<FileInfo> out;
  std::set<std::string> derived_dirs;
  out.reserve(infos->size());
  for (const arrow::fs::FileInfo& info : *infos) {
    std::string_view relative = RelativeTo(info.path(), r.path);
    if (relative.empty()) continue;
    if (derive_dirs) {
      for (size_t slash = relative.find('/'); slash != std::string_view::npos;
           slash = relative.find('/', slash + 1)) {
        derived_dirs.insert(std::string(relative.substr(0, slash)));
        if (!recursive) break;
      }
      if (!recursive && relative.find('/') != std::string_view::npos) continue;
      if (info.IsDirectory()) {
        derived_dirs.insert(std::string(relative));
        continue;
      }
    }
    out.push_back(ToFileInfo(info, JoinLocation(dir_location, relative)));
  }
  for (const std::string& dir : derived_dirs) {
    FileInfo entry;
    entry.location = JoinLocation(dir_location, dir);
    entry.is_dir = true;
    out.push_back(std::move(entry));
  }
  std::sort(out.begin(), out.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.location < b.location; });
  return out;
}

Status FileIO::Delete(const std::string& location) const {
  ARROW_ASSIGN_OR_RAISE(Resolved r, Resolve(location));
  Status st = CallArrow([&] { return r.filesystem->DeleteFile(r.path); });
  if (st.ok() || IsArrowNotFound(st)) return Status::OK();
  // Not every store marks "missing" the same way; a second look tells a failed delete from one
  // that had nothing to do.
  auto info = CallArrow([&] { return r.filesystem->GetFileInfo(r.path); });
  if (info.ok() && info->type() == arrow::fs::FileType::NotFound) return Status::OK();
  return FromArrow(st, "deleting", location);
}

Status FileIO::DeleteDir(const std::string& location) const {
  ARROW_ASSIGN_OR_RAISE(ParsedLocation parsed, ParseLocation(location));
  std::string_view key = parsed.path;
  while (!key.empty() && key.back() == '/') key.remove_suffix(1);
  if (key.empty() || key == "/") {
    return InvalidArgument(
        "deleting directory {}: refusing to delete a filesystem root or a whole bucket", location);
  }
  ARROW_ASSIGN_OR_RAISE(Resolved r, Resolve(location));
  if (IsObjectStore(r.kind)) {
    // Object stores have no directories, only keys under a prefix (and sometimes a marker
    // object): remove the keys first, then whatever marker is left.
    Status st = CallArrow(
        [&] { return r.filesystem->DeleteDirContents(r.path, /*missing_dir_ok=*/true); });
    if (!st.ok() && !IsArrowNotFound(st)) return FromArrow(st, "deleting directory", location);
  }
  Status st = CallArrow([&] { return r.filesystem->DeleteDir(r.path); });
  if (st.ok() || IsArrowNotFound(st)) return Status::OK();
  auto info = CallArrow([&] { return r.filesystem->GetFileInfo(r.path); });
  if (info.ok() && info->type() == arrow::fs::FileType::NotFound) return Status::OK();
  return FromArrow(st, "deleting directory", location);
}

}  // namespace lakesync::io
