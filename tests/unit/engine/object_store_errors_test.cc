// The object-store error classification that drives job retries: a fake arrow::fs::FileSystem answers
// every request with the error an object store's SDK reports for HTTP 401, 403, 404, 429, 500, 503 and
// for timeouts (worded as Arrow's S3 and GCS layers word them), behind a real io::FileIO. Checked: the
// ErrorKind FileIO gives it, whether a read is retried (FileIO retries idempotent reads of transient
// errors), and whether the job runner treats it as transient (engine::IsTransient: run the job again)
// or final (fail the run now and say what to fix).
#include <gtest/gtest.h>

#include <arrow/filesystem/filesystem.h>
#include <arrow/util/io_util.h>

#include <atomic>
#include <cerrno>
#include <string>

#include "lakesync/engine/job_runner.h"
#include "lakesync/io/file_io.h"
#include "status_test_util.h"

namespace lakesync::engine {
namespace {

namespace fs = arrow::fs;

// Answers every operation with one error; counts how often it was asked.
class FailingFileSystem : public fs::FileSystem {
 public:
  explicit FailingFileSystem(arrow::Status answer) : answer_(std::move(answer)) {}

  std::string type_name() const override { return "failing"; }
  bool Equals(const fs::FileSystem& other) const override { return &other == this; }
  using fs::FileSystem::GetFileInfo;
  arrow::Result<fs::FileInfo> GetFileInfo(const std::string&) override { return Fail(); }
  arrow::Result<fs::FileInfoVector> GetFileInfo(const fs::FileSelector&) override { return Fail(); }
  arrow::Status CreateDir(const std::string&, bool) override { return Fail(); }
  arrow::Status DeleteDir(const std::string&) override { return Fail(); }
  arrow::Status DeleteDirContents(const std::string&, bool) override { return Fail(); }
  arrow::Status DeleteRootDirContents() override { return Fail(); }
  arrow::Status DeleteFile(const std::string&) override { return Fail(); }
  arrow::Status Move(const std::string&, const std::string&) override { return Fail(); }
  arrow::Status CopyFile(const std::string&, const std::string&) override { return Fail(); }
  arrow::Result<std::shared_ptr<arrow::io::InputStream>> OpenInputStream(const std::string&) override {
    return Fail();
  }
  arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInputFile(const std::string&) override {
    return Fail();
  }
  arrow::Result<std::shared_ptr<arrow::io::OutputStream>> OpenOutputStream(
      const std::string&, const std::shared_ptr<const arrow::KeyValueMetadata>&) override {
    return Fail();
  }
  arrow::Result<std::shared_ptr<arrow::io::OutputStream>> OpenAppendStream(
      const std::string&, const std::shared_ptr<const arrow::KeyValueMetadata>&) override {
    return Fail();
  }

  int calls() const { return calls_; }

 private:
  arrow::Status Fail() {
    ++calls_;
    return answer_;
  }
  arrow::Status answer_;
  std::atomic<int> calls_{0};
};

struct Case {
  const char* what;
  arrow::Status answer;
  ErrorKind kind;
  bool transient;  // the job runner runs the job again
  // The SDK says it retried this for its whole budget: FileIO does not retry the read again.
  bool retried_by_sdk = false;
};

// The SDK wording: Arrow's S3 layer says "AWS Error <NAME> during <Op> operation: <message>" (NAME is
// UNKNOWN (HTTP status N) when the SDK has no name for the answer); its GCS layer embeds
// "google::cloud::Status(<CODE>: <message>)"; a missing object is an IOError with an ENOENT detail.
std::vector<Case> Cases() {
  auto s3 = [](const std::string& name, const std::string& op, const std::string& message) {
    return arrow::Status::IOError("When reading information for key 'wh/t/f.parquet' in bucket 'lake': AWS Error ",
                                  name, " during ", op, " operation: ", message);
  };
  auto gcs = [](const std::string& code, const std::string& message) {
    return arrow::Status::IOError("google::cloud::Status(", code, ": ", message, ")");
  };
  return {
      {"401 named (S3)", s3("INVALID_ACCESS_KEY_ID", "GetObject", "The AWS Access Key Id you provided does not exist"),
       ErrorKind::kUnauthenticated, false},
      {"401 unnamed (S3)", s3("UNKNOWN (HTTP status 401)", "HeadObject", "No response body."),
       ErrorKind::kUnauthenticated, false},
      {"401 (GCS)", gcs("UNAUTHENTICATED", "Permanent error in GetObjectMetadata: invalid credentials"),
       ErrorKind::kUnauthenticated, false},
      {"403 named (S3)", s3("ACCESS_DENIED", "GetObject", "Access Denied"), ErrorKind::kForbidden, false},
      {"403 unnamed (S3)", s3("UNKNOWN (HTTP status 403)", "HeadObject", "No response body."), ErrorKind::kForbidden,
       false},
      {"403 (GCS)", gcs("PERMISSION_DENIED", "Permanent error in ReadObject: caller lacks storage.objects.get"),
       ErrorKind::kForbidden, false},
      {"404", arrow::internal::IOErrorFromErrno(ENOENT, "Path does not exist 'lake/wh/t/f.parquet'"),
       ErrorKind::kNotFound, false},
      {"429 named (S3)", s3("SLOW_DOWN", "PutObject", "Please reduce your request rate."), ErrorKind::kUnavailable,
       true},
      {"429 unnamed (S3)", s3("UNKNOWN (HTTP status 429)", "GetObject", "Too Many Requests"),
       ErrorKind::kUnavailable, true},
      {"429 (GCS)", gcs("RESOURCE_EXHAUSTED", "Retry policy exhausted in ReadObject: rate limit"),
       ErrorKind::kUnavailable, true, true},
      {"500 named (S3)", s3("INTERNAL_FAILURE", "GetObject", "We encountered an internal error."),
       ErrorKind::kUnavailable, true},
      {"500 unnamed (S3)", s3("UNKNOWN (HTTP status 500)", "GetObject", "No response body."),
       ErrorKind::kUnavailable, true},
      {"503 named (S3)", s3("SERVICE_UNAVAILABLE", "GetObject", "Service Unavailable"), ErrorKind::kUnavailable,
       true},
      {"503 unnamed (S3)", s3("UNKNOWN (HTTP status 503)", "HeadObject", "No response body."),
       ErrorKind::kUnavailable, true},
      {"503 (GCS)", gcs("UNAVAILABLE", "Retry policy exhausted in GetObjectMetadata: backend error"),
       ErrorKind::kUnavailable, true, true},
      {"timeout (S3 connection)",
       s3("NETWORK_CONNECTION", "GetObject", "curlCode: 28, Timeout was reached"), ErrorKind::kUnavailable, true},
      {"timeout (S3 request)", s3("REQUEST_TIMEOUT", "PutObject", "Your socket connection to the server was not read"),
       ErrorKind::kUnavailable, true},
      {"timeout (GCS)", gcs("DEADLINE_EXCEEDED", "Retry policy exhausted in ReadObject: deadline exceeded"),
       ErrorKind::kUnavailable, true, true},
      // No connection at all: Arrow's S3 retry strategy retried it for 6 s (curl 7: refused; 6: no such
      // host). A connection lost mid-answer (curl 56) is retried in place.
      {"refused (S3)",
       s3("NETWORK_CONNECTION", "HeadObject",
          "curlCode: 7, Could not connect to server; Details: Failed to connect to 127.0.0.1 port 9 after 0 ms"),
       ErrorKind::kUnavailable, true, true},
      {"unknown host (S3)",
       s3("NETWORK_CONNECTION", "HeadObject", "curlCode: 6, Could not resolve hostname; Details: store.invalid"),
       ErrorKind::kUnavailable, true, true},
      {"dropped mid-answer (S3)",
       s3("NETWORK_CONNECTION", "GetObject", "curlCode: 56, Failure when receiving data from the peer"),
       ErrorKind::kUnavailable, true},
      // A GCS 503 the SDK did not call exhausted (a stream error it does not retry): retried in place.
      {"503 not retried (GCS)", gcs("UNAVAILABLE", "PerformWork() - CURL error [56]=Failure when receiving data"),
       ErrorKind::kUnavailable, true},
      // An error the classification does not recognise: kIO, which the job runner retries (it may be
      // a passing fault) but FileIO does not retry in place.
      {"unrecognised", arrow::Status::IOError("something else went wrong"), ErrorKind::kIO, true},
  };
}

constexpr char kLocation[] = "https://store.invalid/lake/wh/t/f.parquet";

TEST(ObjectStoreErrorsTest, EachAnswerHasItsKindAndItsRetryDecision) {
  for (const auto& c : Cases()) {
    SCOPED_TRACE(c.what);
    auto store = std::make_shared<FailingFileSystem>(c.answer);
    auto io = io::FileIO::Make({}, store);
    ASSERT_TRUE(io.ok()) << io.status().ToString();
    // Writes, existence checks and deletes (never retried in place).
    const Status write = (*io)->WriteAll(kLocation, "x");
    EXPECT_NE(write.message().find(kLocation), std::string::npos) << write.message();
    EXPECT_EQ(store->calls(), 1) << "a write is not retried in place (the SDK owns that)";
    EXPECT_EQ(KindOf(write), c.kind) << write.ToString();
    EXPECT_EQ(IsTransient(write), c.transient);
    if (c.kind != ErrorKind::kNotFound) {  // a missing object is not an error for these two
      auto exists = (*io)->Exists(kLocation);
      ASSERT_FALSE(exists.ok());
      EXPECT_EQ(KindOf(exists.status()), c.kind) << exists.status().ToString();
      const Status deleted = (*io)->Delete(kLocation);
      EXPECT_EQ(KindOf(deleted), c.kind) << deleted.ToString();
    }
  }
}

// Reads are idempotent: FileIO retries a transient answer in place (kReadAttempts = 5, with backoff
// from 200 ms, so one case of each class suffices here) unless the SDK already retried it for its
// whole budget, and gives a final answer at once.
TEST(ObjectStoreErrorsTest, ReadsRetryTransientAnswersOnly) {
  for (const auto& c : Cases()) {
    const std::string what = c.what;
    if (what != "503 named (S3)" && what != "timeout (GCS)" && what != "403 named (S3)" && what != "404" &&
        what != "unrecognised" && what != "refused (S3)" && what != "dropped mid-answer (S3)" &&
        what != "503 not retried (GCS)") {
      continue;
    }
    SCOPED_TRACE(what);
    auto store = std::make_shared<FailingFileSystem>(c.answer);
    ASSERT_OK_AND_ASSIGN(auto io, io::FileIO::Make({}, store));
    auto read = io->ReadAll(kLocation);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(KindOf(read.status()), c.kind) << read.status().ToString();
    EXPECT_EQ(IsTransient(read.status()), c.transient);
    EXPECT_EQ(store->calls(), c.kind == ErrorKind::kUnavailable && !c.retried_by_sdk ? 5 : 1)
        << read.status().ToString();
  }
}

}  // namespace
}  // namespace lakesync::engine
