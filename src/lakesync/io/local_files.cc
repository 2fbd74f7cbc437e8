#include <fcntl.h>
#include <stdio.h>  // renameat2 (glibc >= 2.28)
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "lakesync/common/failpoint.h"
#include "lakesync/io/local_files_internal.h"

namespace lakesync::io::internal {
namespace {

Status ErrnoError(int err, std::string_view what, std::string_view path) {
  const ErrorKind kind =
      (err == EACCES || err == EPERM || err == EROFS) ? ErrorKind::kForbidden : ErrorKind::kIO;
  return MakeError(kind, fmt::format("{} {}: {} (errno {})", what, path, std::strerror(err), err));
}

// Removes the temporary file on every path out of a write unless it was moved into place.
class TempFile {
 public:
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }

  // Creates "<dir>/.<name>.<random>.tmp", exclusively, so two writers never share one.
  Status Create(const std::filesystem::path& target, std::string_view location) {
    static std::atomic<uint64_t> counter{0};
    std::random_device device;
    for (int attempt = 0; attempt < 16; ++attempt) {
      const uint64_t token = (static_cast<uint64_t>(device()) << 32) ^ device() ^
                             (counter.fetch_add(1) << 16) ^ static_cast<uint64_t>(::getpid());
      std::string candidate = (target.parent_path() / fmt::format(".{}.{:016x}.tmp",
                                                                  target.filename().string(), token))
                                  .string();
      int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0) {
        fd_ = fd;
        path_ = std::move(candidate);
        return Status::OK();
      }
      if (errno != EEXIST) return ErrnoError(errno, "creating a temporary file for", location);
    }
    return IOError("creating a temporary file for {}: no free temporary name", location);
  }

  Status WriteAndSync(std::string_view data, std::string_view target) {
    const char* p = data.data();
    size_t left = data.size();
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoError(errno, "writing", target);
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    // The data must be durable before the name appears; otherwise a crash could leave a
    // committed name pointing at an empty file.
    if (::fsync(fd_) != 0) return ErrnoError(errno, "syncing", target);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return ErrnoError(errno, "closing", target);
    return Status::OK();
  }

  const std::string& path() const { return path_; }
  // The file now lives under its final name (or was consumed by rename): nothing to clean up.
  void Release() { path_.clear(); }

 private:
  int fd_ = -1;
  std::string path_;
};

Status EnsureParentDir(const std::filesystem::path& target, std::string_view location) {
  std::error_code ec;
  std::filesystem::create_directories(target.parent_path(), ec);
  if (ec) return ErrnoError(ec.value(), "creating the parent directory of", location);
  return Status::OK();
}

// Makes the new directory entry durable too. Failure here is not an error for the caller: the
// file is in place and complete, and some filesystems refuse fsync on directories.
void SyncDir(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

// fsync of a file already written and closed by someone else (Arrow's stream): Linux syncs an inode's
// dirty pages through any descriptor, a read-only one included. `gone_is_done`: a deferred sync
// (io/file_syncs.h) may run after its file was deleted, by a commit attempt that failed before it
// waited for its syncs and removed what it wrote; no commit can name that file, so there is nothing
// to make durable.
Status SyncWrittenFile(const std::string& path, std::string_view location, bool gone_is_done) {
  if (FailpointFires(kFailpointLocalSync)) return ErrnoError(EIO, "syncing", location);
  // Only a regular file has content on disk to make durable. A device or a pipe (`--output
  // /dev/null`, a FIFO) has none: fsync of /dev/null fails with EINVAL, and opening a FIFO to sync it
  // would wait for a writer that has already gone.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return Status::OK();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && gone_is_done) return Status::OK();
  if (fd < 0) return ErrnoError(errno, "opening to sync", location);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoError(err, "syncing", location);
  SyncDir(std::filesystem::path(path).parent_path());
  return Status::OK();
}

class SyncOnCloseStream : public arrow::io::OutputStream {
 public:
  SyncOnCloseStream(std::shared_ptr<arrow::io::OutputStream> inner, std::string path, std::string location,
                    std::shared_ptr<FileSyncs> deferred)
      : inner_(std::move(inner)),
        path_(std::move(path)),
        location_(std::move(location)),
        deferred_(std::move(deferred)) {}

  arrow::Status Close() override {
    if (inner_->closed()) return arrow::Status::OK();  // Close is idempotent; synced the first time
    ARROW_RETURN_NOT_OK(inner_->Close());
    if (!deferred_) return SyncWrittenFile(path_, location_, /*gone_is_done=*/false);
    deferred_->Start([path = path_, location = location_] { return SyncWrittenFile(path, location, true); });
    return arrow::Status::OK();
  }
  arrow::Status Abort() override { return inner_->Abort(); }
  bool closed() const override { return inner_->closed(); }
  arrow::Result<int64_t> Tell() const override { return inner_->Tell(); }
  arrow::Status Write(const void* data, int64_t nbytes) override { return inner_->Write(data, nbytes); }
  arrow::Status Write(const std::shared_ptr<arrow::Buffer>& data) override { return inner_->Write(data); }
  arrow::Status Flush() override { return inner_->Flush(); }

 private:
  std::shared_ptr<arrow::io::OutputStream> inner_;
  std::string path_;
  std::string location_;
  std::shared_ptr<FileSyncs> deferred_;  // null: sync in Close
};

bool MeansUnsupported(int err) {
  return err == EINVAL || err == ENOSYS || err == ENOTSUP || err == EOPNOTSUPP || err == EPERM ||
         err == EXDEV || err == EMLINK;
}

}  // namespace

Status WriteNewLocalFile(const std::string& path, std::string_view data, std::string_view location,
                         NoReplaceMethod method) {
  const std::filesystem::path target(path);
  ARROW_RETURN_NOT_OK(EnsureParentDir(target, location));
  TempFile temp;
  ARROW_RETURN_NOT_OK(temp.Create(target, location));
  ARROW_RETURN_NOT_OK(temp.WriteAndSync(data, location));

  int rename_err = ENOSYS;
  if (method == NoReplaceMethod::kAuto) {
    if (::renameat2(AT_FDCWD, temp.path().c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) {
      temp.Release();
      SyncDir(target.parent_path());
      return Status::OK();
    }
    rename_err = errno;
    if (rename_err == EEXIST) return AlreadyExists("creating {}: the file already exists", location);
    if (!MeansUnsupported(rename_err)) return ErrnoError(rename_err, "creating", location);
  }

  // Filesystems without RENAME_NOREPLACE (NFS, some FUSE mounts) still refuse to link() over an
  // existing name, which gives the same guarantee; the temporary name is then removed.
  if (::link(temp.path().c_str(), path.c_str()) == 0) {
    SyncDir(target.parent_path());
    return Status::OK();  // TempFile's destructor unlinks the temporary name.
  }
  const int link_err = errno;
  if (link_err == EEXIST) return AlreadyExists("creating {}: the file already exists", location);
  if (MeansUnsupported(link_err) && link_err != EPERM) {
    return Unsupported(
        "creating {} without overwriting: the filesystem supports neither renameat2(RENAME_NOREPLACE) "
        "({}) nor hard links ({})",
        location, std::strerror(rename_err), std::strerror(link_err));
  }
  return ErrnoError(link_err, "creating", location);
}

Status ReplaceLocalFile(const std::string& path, std::string_view data, std::string_view location) {
  const std::filesystem::path target(path);
  ARROW_RETURN_NOT_OK(EnsureParentDir(target, location));
  TempFile temp;
  ARROW_RETURN_NOT_OK(temp.Create(target, location));
  ARROW_RETURN_NOT_OK(temp.WriteAndSync(data, location));
  if (::rename(temp.path().c_str(), path.c_str()) != 0) return ErrnoError(errno, "replacing", location);
  temp.Release();
  SyncDir(target.parent_path());
  return Status::OK();
}

std::shared_ptr<arrow::io::OutputStream> SyncOnClose(std::shared_ptr<arrow::io::OutputStream> stream,
                                                     std::string path, std::string location,
                                                     std::shared_ptr<FileSyncs> deferred) {
  return std::make_shared<SyncOnCloseStream>(std::move(stream), std::move(path), std::move(location),
                                             std::move(deferred));
}

}  // namespace lakesync::io::internal
