// Where commands write rows: standard output or a file, in any tabular format (scan, changes).
#include <arrow/io/file.h>
#include <arrow/record_batch.h>
#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli.h"
#include "lakesync/formats/parquet/parquet_properties.h"
#include "lakesync/formats/tabular/write_behind.h"
#include "lakesync/io/file_io.h"
#include "lakesync/io/location.h"

namespace lakesync::cli {
namespace {

// DescriptorOutput's stream (cli.h).
class DescriptorStream : public arrow::io::OutputStream {
 public:
  DescriptorStream(int fd, std::string name, bool owned) : fd_(fd), name_(std::move(name)), owned_(owned) {}
  ~DescriptorStream() override {
    if (!closed_ && owned_) ::close(fd_);
  }
  Status Close() override {
    if (closed_) return Status::OK();
    closed_ = true;
    if (owned_ && ::close(fd_) != 0) return IOError("closing {}: {}", name_, std::strerror(errno));
    return Status::OK();
  }
  bool closed() const override { return closed_; }
  Result<int64_t> Tell() const override { return position_; }
  Status Write(const void* data, int64_t nbytes) override {
    const auto* p = static_cast<const char*>(data);
    while (nbytes > 0) {
      const ssize_t n = ::write(fd_, p, static_cast<size_t>(nbytes));
      if (n < 0) {
        if (errno == EINTR) continue;
        return IOError("writing to {}: {}", name_, std::strerror(errno));
      }
      p += n;
      nbytes -= n;
      position_ += n;
    }
    return Status::OK();
  }

 private:
  int fd_;
  std::string name_;
  bool owned_;
  int64_t position_ = 0;
  bool closed_ = false;
};

// The local path of an --output that exists and is a pipe, a device or a socket (not a file to create
// or replace); empty otherwise (object stores included).
std::string SpecialLocalFile(const std::string& output) {
  auto parsed = io::ParseLocation(output);
  struct stat st;
  if (!parsed.ok() || parsed->kind != io::StorageKind::kLocal || ::stat(parsed->path.c_str(), &st) != 0) return "";
  return S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode) ? parsed->path : "";
}

// The writer's options from the flags (--compression checked against the known codecs).
Result<tabular::RecordWriterOptions> WriterOptions(const OutputArgs& args) {
  tabular::RecordWriterOptions options;
  if (!args.compression.empty()) {
    ARROW_ASSIGN_OR_RAISE(options.parquet_codec, parquet_io::ParseParquetCodec(args.compression, "--compression"));
  }
  return options;
}

class LimitReader : public arrow::RecordBatchReader {
 public:
  LimitReader(std::shared_ptr<arrow::RecordBatchReader> inner, int64_t limit)
      : inner_(std::move(inner)), left_(limit) {}
  std::shared_ptr<arrow::Schema> schema() const override { return inner_->schema(); }
  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    *out = nullptr;
    if (left_ <= 0) return Status::OK();
    ARROW_RETURN_NOT_OK(inner_->ReadNext(out));
    if (!*out) return Status::OK();
    if ((*out)->num_rows() > left_) *out = (*out)->Slice(0, left_);
    left_ -= (*out)->num_rows();
    return Status::OK();
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> inner_;
  int64_t left_;
};

}  // namespace

std::shared_ptr<arrow::io::OutputStream> DescriptorOutput(int fd, std::string name, bool owned) {
  return std::make_shared<DescriptorStream>(fd, std::move(name), owned);
}

Result<std::shared_ptr<arrow::io::OutputStream>> OpenDescriptorOutput(const std::string& path,
                                                                      const std::string& output, int flags) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | flags, 0644);
  if (fd < 0) return IOError("opening --output {}: {}", output, std::strerror(errno));
  return DescriptorOutput(fd, output, true);
}

std::shared_ptr<arrow::RecordBatchReader> LimitRows(std::shared_ptr<arrow::RecordBatchReader> reader, int64_t limit) {
  return std::make_shared<LimitReader>(std::move(reader), limit);
}

Result<tabular::Format> OutputFormat(const OutputArgs& args) {
  ARROW_ASSIGN_OR_RAISE(auto format, tabular::ParseFormat(args.format));
  if (format == tabular::Format::kParquet && args.output.empty() && isatty(STDOUT_FILENO)) {
    return InvalidArgument("--format parquet writes binary data: give --output FILE or redirect stdout");
  }
  if (!args.compression.empty()) {
    if (format != tabular::Format::kParquet) {
      return InvalidArgument("--compression applies to --format parquet, not {}", args.format);
    }
    ARROW_RETURN_NOT_OK(WriterOptions(args).status());
  }
  return format;
}

void AddOutputOptions(CLI::App& cmd, OutputArgs& args, std::string_view format_default) {
  cmd.add_option("--format", args.format,
                 fmt::format("{}, jsonl (one JSON object per row: timestamps ISO-8601 UTC, decimals as strings, "
                             "binary as base64), csv or parquet",
                             format_default))
      ->check(CLI::IsMember({"table", "jsonl", "csv", "parquet"}));
  cmd.add_option("--compression", args.compression,
                 "--format parquet's codec: zstd (default), snappy, gzip, lz4, brotli or uncompressed");
  cmd.add_option("--output,-o", args.output, "write to this file (or named pipe, or device) instead of standard output");
}

Result<int64_t> WriteRows(const OutputArgs& args, arrow::RecordBatchReader& reader, const io::FileIO* file_io) {
  ARROW_ASSIGN_OR_RAISE(auto format, OutputFormat(args));
  ARROW_ASSIGN_OR_RAISE(auto options, WriterOptions(args));
  std::shared_ptr<arrow::io::OutputStream> out;
  std::shared_ptr<io::FileIO> local_io;
  if (args.output.empty()) {
    out = DescriptorOutput(STDOUT_FILENO, "standard output", false);
  } else if (const std::string special = SpecialLocalFile(args.output); !special.empty()) {
    ARROW_ASSIGN_OR_RAISE(out, OpenDescriptorOutput(special, args.output, 0));
  } else {
    if (file_io == nullptr) {
      ARROW_ASSIGN_OR_RAISE(local_io, io::FileIO::Make());
      file_io = local_io.get();
    }
    ARROW_ASSIGN_OR_RAISE(auto location, io::NormalizeLocation(args.output));
    ARROW_ASSIGN_OR_RAISE(out, file_io->OpenOutput(location));
  }
  ARROW_ASSIGN_OR_RAISE(auto direct, tabular::MakeRecordWriter(format, reader.schema(), out, options));
  // Rows are encoded and written while the reader makes the next ones (write_behind.h), with at most
  // this much of them in flight.
  constexpr int64_t kWriteBehindBytes = 64LL << 20;
  auto writer = tabular::WriteBehind(std::move(direct), kWriteBehindBytes);
  int64_t rows = 0;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ARROW_RETURN_NOT_OK(reader.ReadNext(&batch));
    if (!batch) break;
    rows += batch->num_rows();
    ARROW_RETURN_NOT_OK(writer->Write(*batch));
  }
  ARROW_RETURN_NOT_OK(writer->Close());
  if (!args.output.empty()) ARROW_RETURN_NOT_OK(out->Close());
  return rows;
}

}  // namespace lakesync::cli
