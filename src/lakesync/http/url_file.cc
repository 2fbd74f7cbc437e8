#include "lakesync/http/url_file.h"

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>
#include <arrow/io/memory.h>

#include <charconv>
#include <cstring>
#include <mutex>

#include "lakesync/http/status_codes.h"

namespace lakesync::http {
namespace {

// The state one URL's readers share: the URL (replaced by a refresh) and, for small files, the bytes.
class UrlSource {
 public:
  UrlSource(std::shared_ptr<Client> client, const UrlFileOptions& options, std::string url, int64_t size)
      : client_(std::move(client)), options_(options), url_(std::move(url)), size_(size) {}

  Result<int64_t> Size() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (size_ >= 0) return size_;
    Request head;
    head.method = "HEAD";
    ARROW_ASSIGN_OR_RAISE(auto res, SendLocked(head));
    const std::string length = res.Header("Content-Length");
    int64_t n = -1;
    auto [end, ec] = std::from_chars(length.data(), length.data() + length.size(), n);
    if (ec != std::errc() || end != length.data() + length.size() || n < 0) {
      return IOError("HEAD {} gave no Content-Length", RedactedUrl(url_));
    }
    size_ = n;
    return size_;
  }

  Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t nbytes) {
    ARROW_ASSIGN_OR_RAISE(int64_t size, Size());
    if (position < 0 || nbytes < 0) return InvalidArgument("negative read of {}", RedactedUrl(url_));
    if (position >= size || nbytes == 0) return std::make_shared<arrow::Buffer>(nullptr, 0);
    nbytes = std::min(nbytes, size - position);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!whole_ && size <= options_.whole_file_below) {
      ARROW_ASSIGN_OR_RAISE(auto res, SendLocked(Request::Get("")));
      if (static_cast<int64_t>(res.body.size()) != size) {
        return IOError("GET {} returned {} bytes, expected {}", RedactedUrl(url_), res.body.size(), size);
      }
      whole_ = arrow::Buffer::FromString(std::move(res.body));
    }
    if (whole_) return arrow::SliceBuffer(whole_, position, nbytes);
    Request get = Request::Get("");
    get.headers.emplace("Range", "bytes=" + std::to_string(position) + "-" + std::to_string(position + nbytes - 1));
    ARROW_ASSIGN_OR_RAISE(auto res, SendLocked(get));
    if (res.status == 200 && static_cast<int64_t>(res.body.size()) == size) {
      // A server that ignores Range sends the whole file: keep it rather than asking again.
      whole_ = arrow::Buffer::FromString(std::move(res.body));
      return arrow::SliceBuffer(whole_, position, nbytes);
    }
    if (static_cast<int64_t>(res.body.size()) != nbytes) {
      return IOError("GET {} bytes {}-{} returned {} bytes", RedactedUrl(url_), position, position + nbytes - 1,
                     res.body.size());
    }
    return arrow::Buffer::FromString(std::move(res.body));
  }

  const std::string& url() const { return url_; }

 private:
  // Sends `request` to the current URL; on 403 asks for a fresh URL once and sends it again.
  Result<Response> SendLocked(Request request) {
    for (int attempt = 0;; ++attempt) {
      request.url = url_;
      ARROW_ASSIGN_OR_RAISE(auto res, client_->Send(request));
      if (res.status >= 200 && res.status < 300) return res;
      if (res.status == 403 && attempt == 0 && options_.refresh) {
        ARROW_ASSIGN_OR_RAISE(url_, options_.refresh(url_));
        continue;
      }
      const ErrorKind kind = ErrorKindForStatusCode(res.status);
      std::string body = res.body.substr(0, 300);
      return MakeError(kind == ErrorKind::kUnknown ? ErrorKind::kIO : kind,
                       fmt::format("{} {} answered {}{}{}", request.method, RedactedUrl(url_), res.status,
                                   body.empty() ? "" : ": ", body));
    }
  }

  std::shared_ptr<Client> client_;
  UrlFileOptions options_;  // a copy: files may outlive their filesystem
  std::mutex mutex_;
  std::string url_;
  int64_t size_;
  std::shared_ptr<arrow::Buffer> whole_;
};

class UrlFile : public arrow::io::RandomAccessFile {
 public:
  explicit UrlFile(std::shared_ptr<UrlSource> source) : source_(std::move(source)) {}

  Status Close() override {
    closed_ = true;
    return Status::OK();
  }
  bool closed() const override { return closed_; }
  Result<int64_t> Tell() const override { return position_; }
  Status Seek(int64_t position) override {
    position_ = position;
    return Status::OK();
  }
  Result<int64_t> GetSize() override { return source_->Size(); }
  Result<int64_t> Read(int64_t nbytes, void* out) override {
    ARROW_ASSIGN_OR_RAISE(auto n, ReadAt(position_, nbytes, out));
    position_ += n;
    return n;
  }
  Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override {
    ARROW_ASSIGN_OR_RAISE(auto buffer, ReadAt(position_, nbytes));
    position_ += buffer->size();
    return buffer;
  }
  Result<int64_t> ReadAt(int64_t position, int64_t nbytes, void* out) override {
    ARROW_ASSIGN_OR_RAISE(auto buffer, ReadAt(position, nbytes));
    std::memcpy(out, buffer->data(), static_cast<size_t>(buffer->size()));
    return buffer->size();
  }
  Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t nbytes) override {
    return source_->ReadAt(position, nbytes);
  }

 private:
  std::shared_ptr<UrlSource> source_;
  int64_t position_ = 0;
  bool closed_ = false;
};

class UrlFileSystem : public arrow::fs::FileSystem {
 public:
  UrlFileSystem(std::shared_ptr<Client> client, UrlFileOptions options)
      : client_(std::move(client)), options_(std::move(options)) {}

  std::string type_name() const override { return "lakesync-url"; }
  bool Equals(const arrow::fs::FileSystem& other) const override { return &other == this; }

  Result<arrow::fs::FileInfo> GetFileInfo(const std::string& path) override {
    UrlSource source(client_, options_, path, -1);
    auto size = source.Size();
    if (!size.ok()) {
      if (KindOf(size.status()) == ErrorKind::kNotFound) return arrow::fs::FileInfo(path, arrow::fs::FileType::NotFound);
      return size.status();
    }
    arrow::fs::FileInfo info(path, arrow::fs::FileType::File);
    info.set_size(*size);
    return info;
  }
  Result<arrow::fs::FileInfoVector> GetFileInfo(const arrow::fs::FileSelector&) override { return ReadOnly("list"); }
  Status CreateDir(const std::string&, bool) override { return ReadOnly("create directories"); }
  Status DeleteDir(const std::string&) override { return ReadOnly("delete"); }
  Status DeleteDirContents(const std::string&, bool) override { return ReadOnly("delete"); }
  Status DeleteRootDirContents() override { return ReadOnly("delete"); }
  Status DeleteFile(const std::string&) override { return ReadOnly("delete"); }
  Status Move(const std::string&, const std::string&) override { return ReadOnly("move"); }
  Status CopyFile(const std::string&, const std::string&) override { return ReadOnly("copy"); }
  Result<std::shared_ptr<arrow::io::InputStream>> OpenInputStream(const std::string& path) override {
    ARROW_ASSIGN_OR_RAISE(auto file, OpenInputFile(path));
    return file;
  }
  Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInputFile(const std::string& path) override {
    return std::make_shared<UrlFile>(std::make_shared<UrlSource>(client_, options_, path, -1));
  }
  Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInputFile(const arrow::fs::FileInfo& info) override {
    return std::make_shared<UrlFile>(std::make_shared<UrlSource>(client_, options_, info.path(), info.size()));
  }
  Result<std::shared_ptr<arrow::io::OutputStream>> OpenOutputStream(
      const std::string&, const std::shared_ptr<const arrow::KeyValueMetadata>&) override {
    return ReadOnly("write");
  }
  Result<std::shared_ptr<arrow::io::OutputStream>> OpenAppendStream(
      const std::string&, const std::shared_ptr<const arrow::KeyValueMetadata>&) override {
    return ReadOnly("write");
  }

 private:
  static Status ReadOnly(const char* what) {
    return Unsupported("files at http(s) URLs are read-only: cannot {} them", what);
  }

  std::shared_ptr<Client> client_;
  UrlFileOptions options_;
};

}  // namespace

std::shared_ptr<arrow::fs::FileSystem> MakeUrlFileSystem(std::shared_ptr<Client> client, UrlFileOptions options) {
  return std::make_shared<UrlFileSystem>(std::move(client), std::move(options));
}

}  // namespace lakesync::http
