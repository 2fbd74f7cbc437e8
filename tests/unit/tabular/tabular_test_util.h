// Helpers for the tabular reader tests: a scratch directory, files written with std::ofstream, and
// reading a whole file through OpenReader.
#pragma once

#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>
#include <arrow/table.h>
#include <arrow/type.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "lakesync/formats/tabular/tabular.h"
#include "lakesync/io/file_io.h"

namespace lakesync::tabular::testing {

class ScratchDir {
 public:
  ScratchDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("lakesync_tabular_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }

  std::string Write(const std::string& name, const std::string& content) const {
    const auto file = path_ / name;
    std::ofstream out(file, std::ios::binary);
    out << content;
    return file.string();
  }
  std::string Path(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

inline std::shared_ptr<io::FileIO> LocalIO() {
  static std::shared_ptr<io::FileIO> io = io::FileIO::Make().ValueOrDie();
  return io;
}

// Every batch of the file, as one table; the error of OpenReader or of any ReadNext otherwise.
inline Result<std::shared_ptr<arrow::Table>> ReadAll(const std::string& path, Format format,
                                                     std::shared_ptr<arrow::Schema> target, int64_t batch_rows = 1024) {
  ReadOptions options;
  options.target_schema = target;
  options.batch_rows = batch_rows;
  ARROW_ASSIGN_OR_RAISE(auto reader, OpenReader(*LocalIO(), path, format, options));
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ARROW_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) break;
    EXPECT_LE(batch->num_rows(), batch_rows);
    EXPECT_TRUE(batch->schema()->Equals(*reader->schema(), /*check_metadata=*/true));
    ARROW_RETURN_NOT_OK(batch->ValidateFull());
    batches.push_back(batch);
  }
  return arrow::Table::FromRecordBatches(reader->schema(), batches);
}

// The message of a failed read, with a test failure when the read succeeded or the kind is not
// InvalidArgument.
inline std::string ReadError(const std::string& path, Format format, std::shared_ptr<arrow::Schema> target,
                             int64_t batch_rows = 1024) {
  auto table = ReadAll(path, format, target, batch_rows);
  if (table.ok()) {
    ADD_FAILURE() << "reading " << path << " succeeded";
    return "";
  }
  EXPECT_EQ(KindOf(table.status()), ErrorKind::kInvalidArgument) << table.status().ToString();
  return table.status().message();
}

inline ::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\n  " << text << "\ndoes not contain\n  " << part;
}

}  // namespace lakesync::tabular::testing

#define EXPECT_CONTAINS(text, part) EXPECT_TRUE(::lakesync::tabular::testing::Contains((text), (part)))
