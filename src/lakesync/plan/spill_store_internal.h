// Spill files for the change collapser: buckets of prepared change batches, partitioned by the hash
// of the key columns so that all changes of a key land in the same bucket. Plain Arrow IPC files in
// a private directory that is removed with the store. The external sorter (external_sort.h) spills its
// sorted runs through the same directory, writer (one bucket) and reader.
#pragma once

#include <arrow/type_fwd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::plan::internal {

struct SpillBucket {
  std::string path;
  int64_t bytes = 0;  // file size
  int64_t rows = 0;
  int depth = 0;      // how many partitionings produced it (0: the first)
  int32_t index = 0;  // its bucket number among the `count` of the partitioning that produced it
};

// Removes the `<prefix>-*` directories below `parent` left by a process of this host that is gone
// (killed with SIGKILL, so its SpillDirectory never ran its destructor); returns how many. Best
// effort: errors are ignored, and directories of live processes or other hosts are kept.
int RemoveAbandonedSpillDirectories(const std::string& parent, const std::string& prefix);

class SpillDirectory {
 public:
  // Creates a fresh directory `<prefix>-XXXXXX` below `parent` (the system temporary directory when
  // empty), with an `owner` file (pid and host), after removing the abandoned ones
  // (RemoveAbandonedSpillDirectories). Errors: IOError naming the directory.
  static Result<std::unique_ptr<SpillDirectory>> Create(const std::string& parent,
                                                        const std::string& prefix = "lakesync-collapse");
  ~SpillDirectory();  // removes the directory and its files
  SpillDirectory(const SpillDirectory&) = delete;
  SpillDirectory& operator=(const SpillDirectory&) = delete;

  std::string NewFilePath();  // safe from several threads (key shards re-split in parallel)
  const std::string& path() const { return path_; }

 private:
  explicit SpillDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::atomic<int64_t> next_file_{0};
};

// Writes batches into `count` bucket files by key hash. Files are created on first use.
class BucketWriter {
 public:
  // `key_positions`: the key columns' positions in `schema`; `seed` chooses the hash function.
  BucketWriter(SpillDirectory* directory, std::shared_ptr<arrow::Schema> schema, std::vector<int> key_positions,
               int count, uint64_t seed, int depth);
  ~BucketWriter();

  // Errors: IOError writing a spill file.
  Status Write(const std::shared_ptr<arrow::RecordBatch>& batch);
  // Closes every file; returns the non-empty buckets. Errors: IOError.
  Result<std::vector<SpillBucket>> Close();
  int64_t bytes_written() const { return bytes_written_; }  // so far, all files

 private:
  struct Sink;
  Status WriteTo(int bucket, const std::shared_ptr<arrow::RecordBatch>& batch);
  Status Track(Sink& sink);  // brings bucket.bytes and bytes_written_ up to the file's size

  SpillDirectory* directory_;
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<int> key_positions_;
  int count_;
  uint64_t seed_;
  int depth_;
  std::vector<std::unique_ptr<Sink>> sinks_;
  int64_t bytes_written_ = 0;
};

// The hash seed for partitioning at `depth`; each depth splits independently of the one before.
uint64_t SpillSeed(int depth);

// Reads a bucket file one batch at a time, in the order written, with `schema` as its schema (the
// external sorter's merge holds one batch of each run at a time).
class SpillFileReader {
 public:
  // Errors: IOError/Corrupt naming the file.
  static Result<std::unique_ptr<SpillFileReader>> Open(const SpillBucket& bucket, std::shared_ptr<arrow::Schema> schema);
  ~SpillFileReader();
  // The next batch, or nullptr after the last one (the file is closed then).
  Result<std::shared_ptr<arrow::RecordBatch>> Next();

 private:
  struct State;
  explicit SpillFileReader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Calls `fn` for each batch of a bucket file, in the order written, with `schema` as its schema.
// Errors: IOError/Corrupt naming the file.
Status ForEachSpilledBatch(const SpillBucket& bucket, const std::shared_ptr<arrow::Schema>& schema,
                           const std::function<Status(std::shared_ptr<arrow::RecordBatch>)>& fn);

// The whole bucket as one batch.
Result<std::shared_ptr<arrow::RecordBatch>> ReadBucket(const SpillBucket& bucket,
                                                       const std::shared_ptr<arrow::Schema>& schema);

}  // namespace lakesync::plan::internal
