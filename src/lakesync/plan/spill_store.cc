#include "lakesync/plan/spill_store_internal.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/extension_type.h>
#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>
#include <arrow/ipc/writer.h>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "lakesync/plan/key_shards.h"
#include "lakesync/plan/key_view_internal.h"

namespace lakesync::plan::internal {
namespace {

namespace fs = std::filesystem;
namespace cp = arrow::compute;

// A column read back from IPC has its storage type when its extension type is not registered in
// this process; wrap it again so that spilled and in-memory parts have identical schemas.
Result<std::shared_ptr<arrow::Array>> Restore(std::shared_ptr<arrow::Array> array,
                                              const std::shared_ptr<arrow::DataType>& expected) {
  if (array->type()->Equals(*expected)) return array;
  if (expected->id() == arrow::Type::EXTENSION) {
    auto ext = std::static_pointer_cast<arrow::ExtensionType>(expected);
    if (array->type()->Equals(*ext->storage_type())) return ext->WrapArray(expected, array);
  }
  return Corrupt("spill file column has type {}, expected {}", array->type()->ToString(), expected->ToString());
}

}  // namespace

// Depth 0 is the key-shard hash itself (plan/key_shards.h), so that the first buckets group into key
// shards; deeper splits use seeds of their own.
uint64_t SpillSeed(int depth) {
  return depth == 0 ? kKeyShardSeed : 0x2545f4914f6cdd1dULL * static_cast<uint64_t>(depth + 1);
}

namespace {

constexpr const char* kOwnerFile = "owner";

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

}  // namespace

int RemoveAbandonedSpillDirectories(const std::string& parent, const std::string& prefix) {
  // A process killed with SIGKILL cannot run SpillDirectory's destructor. Its directory names its
  // owner (pid and host): one whose owner is gone on this host is removed by the next process that
  // spills there. A directory without an owner file (being created, or older than this rule) and
  // one whose owner is alive, or on another host sharing the directory, are left alone.
  std::error_code ec;
  const std::string host = HostName();
  int removed = 0;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix + "-", 0) != 0 || !it->is_directory(ec)) continue;
    std::ifstream owner(it->path() / kOwnerFile);
    long pid = 0;
    std::string owner_host;
    if (!(owner >> pid >> owner_host) || pid <= 0 || owner_host != host) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code remove_ec;
    if (fs::remove_all(it->path(), remove_ec) > 0 && !remove_ec) ++removed;
  }
  return removed;
}

Result<std::unique_ptr<SpillDirectory>> SpillDirectory::Create(const std::string& parent, const std::string& prefix) {
  std::error_code ec;
  fs::path base = parent.empty() ? fs::temp_directory_path(ec) : fs::path(parent);
  if (ec) return IOError("no temporary directory for spill files: {}", ec.message());
  fs::create_directories(base, ec);
  if (ec) return IOError("creating spill directory {}: {}", base.string(), ec.message());
  RemoveAbandonedSpillDirectories(base.string(), prefix);
  std::string pattern = (base / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return IOError("creating a spill directory in {}: {}", base.string(), std::generic_category().message(errno));
  }
  auto directory = std::unique_ptr<SpillDirectory>(new SpillDirectory(pattern));
  std::ofstream owner(fs::path(pattern) / kOwnerFile);
  owner << ::getpid() << ' ' << HostName() << '\n';
  if (!owner.flush()) return IOError("writing the owner of spill directory {}", pattern);
  return directory;
}

SpillDirectory::~SpillDirectory() {
  std::error_code ec;
  fs::remove_all(path_, ec);  // best effort: a destructor cannot report failure
}

std::string SpillDirectory::NewFilePath() { return fmt::format("{}/bucket-{:06d}.arrow", path_, next_file_++); }

struct BucketWriter::Sink {
  SpillBucket bucket;
  std::shared_ptr<arrow::io::FileOutputStream> stream;
  std::shared_ptr<arrow::ipc::RecordBatchWriter> writer;
};

BucketWriter::BucketWriter(SpillDirectory* directory, std::shared_ptr<arrow::Schema> schema,
                           std::vector<int> key_positions, int count, uint64_t seed, int depth)
    : directory_(directory),
      schema_(std::move(schema)),
      key_positions_(std::move(key_positions)),
      count_(count),
      seed_(seed),
      depth_(depth),
      sinks_(static_cast<size_t>(count)) {}

BucketWriter::~BucketWriter() {
  for (auto& sink : sinks_) {
    if (sink && sink->stream && !sink->stream->closed()) (void)sink->stream->Close();
  }
}

Status BucketWriter::WriteTo(int bucket, const std::shared_ptr<arrow::RecordBatch>& batch) {
  auto& sink = sinks_[bucket];
  if (!sink) {
    sink = std::make_unique<Sink>();
    sink->bucket.path = directory_->NewFilePath();
    sink->bucket.depth = depth_;
    sink->bucket.index = bucket;
    LS_ASSIGN_OR_RAISE_CTX(sink->stream, arrow::io::FileOutputStream::Open(sink->bucket.path),
                           "opening spill file {}", sink->bucket.path);
    LS_ASSIGN_OR_RAISE_CTX(sink->writer, arrow::ipc::MakeFileWriter(sink->stream, schema_),
                           "starting spill file {}", sink->bucket.path);
  }
  LS_RETURN_NOT_OK_CTX(sink->writer->WriteRecordBatch(*batch), "writing spill file {}", sink->bucket.path);
  sink->bucket.rows += batch->num_rows();
  return Track(*sink);
}

Status BucketWriter::Track(Sink& sink) {
  LS_ASSIGN_OR_RAISE_CTX(const int64_t size, sink.stream->Tell(), "writing spill file {}", sink.bucket.path);
  bytes_written_ += size - sink.bucket.bytes;
  sink.bucket.bytes = size;
  return Status::OK();
}

Status BucketWriter::Write(const std::shared_ptr<arrow::RecordBatch>& batch) {
  const int64_t n = batch->num_rows();
  if (n == 0) return Status::OK();
  if (count_ == 1) return WriteTo(0, batch);
  std::vector<std::shared_ptr<arrow::Array>> keys;
  for (int position : key_positions_) keys.push_back(StorageArray(batch->column(position)));  // as KeyShards
  ARROW_ASSIGN_OR_RAISE(auto view, iceberg::KeyColumns::Make(keys));
  const std::vector<uint64_t> hashes = view.HashRows(seed_);

  // A stable counting sort by bucket keeps each key's changes in input order within its bucket.
  std::vector<int32_t> bucket_of(n);
  std::vector<int64_t> starts(count_ + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    bucket_of[i] = ShardOfHash(hashes[i], count_);
    ++starts[bucket_of[i] + 1];
  }
  for (int b = 0; b < count_; ++b) starts[b + 1] += starts[b];
  std::vector<int64_t> order(n);
  std::vector<int64_t> cursor(starts.begin(), starts.end() - 1);
  for (int64_t i = 0; i < n; ++i) order[cursor[bucket_of[i]]++] = i;

  auto indices = std::make_shared<arrow::Int64Array>(n, arrow::Buffer::FromVector(std::move(order)));
  ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(batch, indices));
  const auto sorted = taken.record_batch();
  for (int b = 0; b < count_; ++b) {
    const int64_t length = starts[b + 1] - starts[b];
    if (length > 0) ARROW_RETURN_NOT_OK(WriteTo(b, sorted->Slice(starts[b], length)));
  }
  return Status::OK();
}

Result<std::vector<SpillBucket>> BucketWriter::Close() {
  std::vector<SpillBucket> buckets;
  for (auto& sink : sinks_) {
    if (!sink) continue;
    LS_RETURN_NOT_OK_CTX(sink->writer->Close(), "finishing spill file {}", sink->bucket.path);
    ARROW_RETURN_NOT_OK(Track(*sink));
    LS_RETURN_NOT_OK_CTX(sink->stream->Close(), "closing spill file {}", sink->bucket.path);
    buckets.push_back(sink->bucket);
    sink.reset();
  }
  return buckets;
}

struct SpillFileReader::State {
  SpillBucket bucket;
  std::shared_ptr<arrow::Schema> schema;
  std::shared_ptr<arrow::io::ReadableFile> file;
  std::shared_ptr<arrow::ipc::RecordBatchFileReader> reader;
  int next = 0;
};

SpillFileReader::SpillFileReader(std::unique_ptr<State> state) : state_(std::move(state)) {}

SpillFileReader::~SpillFileReader() {
  if (state_->file && !state_->file->closed()) (void)state_->file->Close();
}

Result<std::unique_ptr<SpillFileReader>> SpillFileReader::Open(const SpillBucket& bucket,
                                                               std::shared_ptr<arrow::Schema> schema) {
  auto state = std::make_unique<State>();
  state->bucket = bucket;
  state->schema = std::move(schema);
  LS_ASSIGN_OR_RAISE_CTX(state->file, arrow::io::ReadableFile::Open(bucket.path), "opening spill file {}", bucket.path);
  LS_ASSIGN_OR_RAISE_CTX(state->reader, arrow::ipc::RecordBatchFileReader::Open(state->file), "reading spill file {}",
                         bucket.path);
  if (state->reader->schema()->num_fields() != state->schema->num_fields()) {
    return Corrupt("spill file {} has {} columns, expected {}", bucket.path, state->reader->schema()->num_fields(),
                   state->schema->num_fields());
  }
  return std::unique_ptr<SpillFileReader>(new SpillFileReader(std::move(state)));
}

Result<std::shared_ptr<arrow::RecordBatch>> SpillFileReader::Next() {
  State& s = *state_;
  if (s.next >= s.reader->num_record_batches()) {
    if (!s.file->closed()) LS_RETURN_NOT_OK_CTX(s.file->Close(), "closing spill file {}", s.bucket.path);
    return nullptr;
  }
  LS_ASSIGN_OR_RAISE_CTX(auto batch, s.reader->ReadRecordBatch(s.next++), "reading spill file {}", s.bucket.path);
  arrow::ArrayVector columns;
  for (int c = 0; c < s.schema->num_fields(); ++c) {
    LS_ASSIGN_OR_RAISE_CTX(auto column, Restore(batch->column(c), s.schema->field(c)->type()), "reading spill file {}",
                           s.bucket.path);
    columns.push_back(std::move(column));
  }
  return arrow::RecordBatch::Make(s.schema, batch->num_rows(), std::move(columns));
}

Status ForEachSpilledBatch(const SpillBucket& bucket, const std::shared_ptr<arrow::Schema>& schema,
                           const std::function<Status(std::shared_ptr<arrow::RecordBatch>)>& fn) {
  ARROW_ASSIGN_OR_RAISE(auto reader, SpillFileReader::Open(bucket, schema));
  while (true) {
    ARROW_ASSIGN_OR_RAISE(auto batch, reader->Next());
    if (!batch) return Status::OK();
    ARROW_RETURN_NOT_OK(fn(std::move(batch)));
  }
}

Result<std::shared_ptr<arrow::RecordBatch>> ReadBucket(const SpillBucket& bucket,
                                                       const std::shared_ptr<arrow::Schema>& schema) {
  arrow::RecordBatchVector batches;
  ARROW_RETURN_NOT_OK(ForEachSpilledBatch(bucket, schema, [&](std::shared_ptr<arrow::RecordBatch> batch) {
    batches.push_back(std::move(batch));
    return Status::OK();
  }));
  if (batches.empty()) return arrow::RecordBatch::MakeEmpty(schema);
  if (batches.size() == 1) return batches.front();
  LS_ASSIGN_OR_RAISE_CTX(auto combined, arrow::ConcatenateRecordBatches(batches), "combining spill file {}",
                         bucket.path);
  return combined;
}

}  // namespace lakesync::plan::internal
