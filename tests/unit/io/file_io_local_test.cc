// FileIO on the local filesystem. Expectations come from POSIX and the FileIO contract in
// file_io.h; the files are checked independently with std::filesystem and std::ifstream.
#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>
#include <arrow/util/future.h>
#include <arrow/util/thread_pool.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "lakesync/common/failpoint.h"
#include "lakesync/io/file_io.h"
#include "lakesync/io/file_syncs.h"
#include "lakesync/io/local_files_internal.h"

namespace lakesync::io {
namespace {

namespace fs = std::filesystem;

std::string ReadWithStd(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void WriteWithStd(const fs::path& path, const std::string& data) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << data;
}

class FileIOLocalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device device;
    root_ = fs::temp_directory_path() /
            ("lakesync_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(device()));
    fs::create_directories(root_);
    auto io = FileIO::Make();
    ASSERT_TRUE(io.ok()) << io.status().ToString();
    io_ = *io;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string Path(const std::string& relative) const { return (root_ / relative).string(); }
  std::string Uri(const std::string& relative) const { return "file://" + Path(relative); }

  fs::path root_;
  std::shared_ptr<FileIO> io_;
};

TEST_F(FileIOLocalTest, WriteAllThenReadAllRoundTripsBinaryData) {
  std::string data;
  for (int i = 0; i < 70000; ++i) data.push_back(static_cast<char>(i * 31));
  ASSERT_TRUE(io_->WriteAll(Uri("t/metadata/v1.metadata.json"), data).ok());
  EXPECT_EQ(ReadWithStd(Path("t/metadata/v1.metadata.json")), data);
  auto back = io_->ReadAll(Path("t/metadata/v1.metadata.json"));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, data);
}

TEST_F(FileIOLocalTest, ReadAllHandlesFilesLargerThanItsReadChunks) {
  std::string data(5 * 1024 * 1024 + 3, '\0');
  std::mt19937 rng(42);
  for (char& c : data) c = static_cast<char>(rng());
  WriteWithStd(Path("big.bin"), data);
  auto back = io_->ReadAll(Path("big.bin"));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->size(), data.size());
  EXPECT_TRUE(*back == data);
}

TEST_F(FileIOLocalTest, EveryLocalSpellingNamesTheSameFile) {
  WriteWithStd(Path("a/b.txt"), "hello");
  const std::string plain = Path("a/b.txt");
  for (const std::string& location :
       {plain, "file://" + plain, "file:" + plain, "file://localhost" + plain, Path("a/./x/../b.txt")}) {
    auto data = io_->ReadAll(location);
    ASSERT_TRUE(data.ok()) << location << ": " << data.status().ToString();
    EXPECT_EQ(*data, "hello") << location;
  }
}

TEST_F(FileIOLocalTest, RelativePathsResolveAgainstTheCurrentDirectory) {
  const fs::path saved = fs::current_path();
  fs::current_path(root_);
  Status st = io_->WriteAll("rel/x.txt", "relative");
  fs::current_path(saved);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(ReadWithStd(Path("rel/x.txt")), "relative");
}

TEST_F(FileIOLocalTest, WriteAllOverwritesAndLeavesNoTemporaryFiles) {
  ASSERT_TRUE(io_->WriteAll(Path("d/f.txt"), "first version, longer").ok());
  ASSERT_TRUE(io_->WriteAll(Path("d/f.txt"), "second").ok());
  EXPECT_EQ(ReadWithStd(Path("d/f.txt")), "second");
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(root_ / "d")) names.push_back(entry.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"f.txt"});
}

TEST_F(FileIOLocalTest, OpenOutputCreatesParentsAndStreams) {
  auto out = io_->OpenOutput(Uri("deep/er/file.bin"));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE((*out)->Write("abc", 3).ok());
  ASSERT_TRUE((*out)->Write("def", 3).ok());
  ASSERT_TRUE((*out)->Close().ok());
  EXPECT_EQ(ReadWithStd(Path("deep/er/file.bin")), "abcdef");

  auto in = io_->OpenInput(Uri("deep/er/file.bin"));
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  auto size = (*in)->GetSize();
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 6);
  auto middle = (*in)->ReadAt(2, 3);
  ASSERT_TRUE(middle.ok());
  EXPECT_EQ((*middle)->ToString(), "cde");

  auto sized = io_->OpenInput(Uri("deep/er/file.bin"), 6);
  ASSERT_TRUE(sized.ok()) << sized.status().ToString();
  auto tail = (*sized)->ReadAt(4, 2);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ((*tail)->ToString(), "ef");
}

// A streamed local file (data, delete and deletion-vector files) is synced when its stream is closed:
// the commit that names it is synced too, so a power loss after the commit cannot leave it empty. The
// failpoint makes that fsync fail: Close must report it, naming the file, so the writer commits nothing.
TEST_F(FileIOLocalTest, ClosingAStreamedFileSyncsItAndReportsAFailedSync) {
  struct Disarm {
    ~Disarm() { (void)SetFailpoints(""); }
  } disarm;
  ASSERT_TRUE(SetFailpoints(std::string(kFailpointLocalSync) + "=1").ok());
  auto out = io_->OpenOutput(Uri("data/a.parquet"));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE((*out)->Write("abc", 3).ok());
  const Status failed = (*out)->Close();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("syncing"), std::string::npos) << failed.ToString();
  EXPECT_NE(failed.message().find(Uri("data/a.parquet")), std::string::npos) << failed.ToString();
  EXPECT_TRUE((*out)->closed());
  EXPECT_TRUE((*out)->Close().ok());  // closing again is a no-op, as for Arrow's own streams

  // The point fired once; the next file closes and syncs.
  auto next = io_->OpenOutput(Uri("data/b.parquet"));
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_TRUE((*next)->Write("def", 3).ok());
  ASSERT_TRUE((*next)->Close().ok());
  EXPECT_EQ(ReadWithStd(Path("data/b.parquet")), "def");
}

// With a FileSyncs group (how a table's data, delete and deletion-vector files are opened), Close only
// starts the sync on the IO executor; Wait reports the outcome: the first failure in the order the files
// were closed, naming that file, and then forgets it, so the next write of the same writer starts clean.
TEST_F(FileIOLocalTest, ADeferredSyncIsReportedByWaitNotByClose) {
  struct Disarm {
    ~Disarm() { (void)SetFailpoints(""); }
  } disarm;
  auto syncs = std::make_shared<FileSyncs>();
  ASSERT_TRUE(SetFailpoints(std::string(kFailpointLocalSync) + "=always").ok());
  for (const char* name : {"data/first.parquet", "data/second.parquet", "data/third.parquet"}) {
    auto out = io_->OpenOutput(Uri(name), syncs);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_TRUE((*out)->Write(name, 4).ok());
    const Status closed = (*out)->Close();
    EXPECT_TRUE(closed.ok()) << "the sync's failure belongs to Wait: " << closed.ToString();
    EXPECT_TRUE((*out)->closed());
  }
  const Status failed = syncs->Wait();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("syncing " + Uri("data/first.parquet")), std::string::npos) << failed.ToString();
  EXPECT_TRUE(syncs->Wait().ok()) << "a reported failure is forgotten";

  ASSERT_TRUE(SetFailpoints("").ok());
  auto next = io_->OpenOutput(Uri("data/fourth.parquet"), syncs);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_TRUE((*next)->Write("data", 4).ok());
  ASSERT_TRUE((*next)->Close().ok());
  EXPECT_TRUE(syncs->Wait().ok());
  EXPECT_EQ(ReadWithStd(Path("data/fourth.parquet")), "data");
  EXPECT_EQ(ReadWithStd(Path("data/first.parquet")), "data");  // written all the same; only the sync failed
}

// A failed commit attempt deletes the files it wrote, possibly before the IO executor ran their
// syncs: the sync of a file that is gone is not a failure a later attempt's Wait should see. Every IO
// thread is held busy so the sync runs only after the delete, whatever the timing.
TEST_F(FileIOLocalTest, ASyncThatFindsItsFileDeletedIsNotAFailure) {
  auto* executor = arrow::io::default_io_context().executor();
  arrow::Future<> release = arrow::Future<>::Make();
  std::vector<arrow::Future<>> blockers;
  for (int i = 0; i < executor->GetCapacity(); ++i) {
    auto blocker = executor->Submit([release] { return release.status(); });
    ASSERT_TRUE(blocker.ok()) << blocker.status().ToString();
    blockers.push_back(*blocker);
  }
  struct Release {
    arrow::Future<>& release;
    ~Release() {
      if (!release.is_finished()) release.MarkFinished();
    }
  } release_on_exit{release};
  auto syncs = std::make_shared<FileSyncs>();
  auto out = io_->OpenOutput(Uri("data/abandoned.parquet"), syncs);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE((*out)->Write("data", 4).ok());
  ASSERT_TRUE((*out)->Close().ok());
  ASSERT_TRUE(io_->Delete(Uri("data/abandoned.parquet")).ok());
  release.MarkFinished();
  for (auto& blocker : blockers) ASSERT_TRUE(blocker.status().ok());
  const Status waited = syncs->Wait();
  EXPECT_TRUE(waited.ok()) << waited.ToString();
}

// Output streamed to a device (`lakesync changes --output /dev/null`) closes cleanly: only regular
// files are synced (fsync of /dev/null fails with EINVAL).
TEST_F(FileIOLocalTest, StreamingToADeviceClosesWithoutSyncingIt) {
  auto out = io_->OpenOutput("/dev/null");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE((*out)->Write("abc", 3).ok());
  const Status closed = (*out)->Close();
  EXPECT_TRUE(closed.ok()) << closed.ToString();
}

TEST_F(FileIOLocalTest, MissingFilesAreNotFoundAndNamed) {
  const std::string missing = Uri("no/such/file.json");
  auto read = io_->ReadAll(missing);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(KindOf(read.status()), ErrorKind::kNotFound) << read.status().ToString();
  EXPECT_NE(read.status().message().find(missing), std::string::npos) << read.status().message();

  auto open = io_->OpenInput(missing);
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(KindOf(open.status()), ErrorKind::kNotFound);
  EXPECT_NE(open.status().message().find(missing), std::string::npos);

  auto stat = io_->Stat(missing);
  ASSERT_FALSE(stat.ok());
  EXPECT_EQ(KindOf(stat.status()), ErrorKind::kNotFound);
  EXPECT_NE(stat.status().message().find(missing), std::string::npos);

  auto exists = io_->Exists(missing);
  ASSERT_TRUE(exists.ok());
  EXPECT_FALSE(*exists);
}

TEST_F(FileIOLocalTest, BrokenIsNotMissing) {
  // A directory where a file is expected exists but cannot be read as one.
  fs::create_directories(Path("dir_not_file"));
  auto read = io_->ReadAll(Path("dir_not_file"));
  ASSERT_FALSE(read.ok());
  EXPECT_NE(KindOf(read.status()), ErrorKind::kNotFound) << read.status().ToString();
  EXPECT_NE(read.status().message().find(Path("dir_not_file")), std::string::npos);
}

TEST_F(FileIOLocalTest, UnreadableFileIsForbiddenUnlessRoot) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files regardless of their mode";
  WriteWithStd(Path("secret"), "x");
  fs::permissions(Path("secret"), fs::perms::none);
  auto read = io_->ReadAll(Path("secret"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(KindOf(read.status()), ErrorKind::kForbidden) << read.status().ToString();
}

TEST_F(FileIOLocalTest, WriteNewCreatesOnceAndNeverOverwrites) {
  const std::string location = Uri("t/metadata/v1.metadata.json");
  ASSERT_TRUE(io_->WriteNew(location, "winner").ok());
  Status again = io_->WriteNew(location, "loser");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(KindOf(again), ErrorKind::kAlreadyExists) << again.ToString();
  EXPECT_NE(again.message().find(location), std::string::npos);
  EXPECT_EQ(ReadWithStd(Path("t/metadata/v1.metadata.json")), "winner");
  // Neither attempt leaves its temporary file behind.
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(root_ / "t/metadata")) names.push_back(entry.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"v1.metadata.json"});
}

TEST_F(FileIOLocalTest, WriteNewDoesNotReplaceAFileWrittenByOthers) {
  WriteWithStd(Path("existing"), "theirs");
  Status st = io_->WriteNew(Path("existing"), "ours");
  EXPECT_EQ(KindOf(st), ErrorKind::kAlreadyExists);
  EXPECT_EQ(ReadWithStd(Path("existing")), "theirs");
}

TEST_F(FileIOLocalTest, WriteNewRaceHasExactlyOneWinner) {
  constexpr int kRounds = 200;
  constexpr int kThreads = 2;
  for (int round = 0; round < kRounds; ++round) {
    const std::string location = Path("race/v" + std::to_string(round) + ".metadata.json");
    std::atomic<int> ready{0};
    std::vector<Status> results(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < kThreads) {
        }
        results[t] = io_->WriteNew(location, "writer-" + std::to_string(t));
      });
    }
    for (auto& thread : threads) thread.join();
    int winners = 0;
    int winner = -1;
    for (int t = 0; t < kThreads; ++t) {
      if (results[t].ok()) {
        ++winners;
        winner = t;
      } else {
        EXPECT_EQ(KindOf(results[t]), ErrorKind::kAlreadyExists) << results[t].ToString();
      }
    }
    ASSERT_EQ(winners, 1) << "round " << round;
    EXPECT_EQ(ReadWithStd(location), "writer-" + std::to_string(winner));
  }
}

TEST_F(FileIOLocalTest, WriteNewRaceAmongManyThreads) {
  constexpr int kThreads = 8;
  const std::string location = Path("many/v1.metadata.json");
  std::atomic<int> ready{0};
  std::atomic<int> winners{0};
  std::atomic<int> already_exists{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) {
      }
      Status st = io_->WriteNew(location, std::string(1000 + t, static_cast<char>('a' + t)));
      if (st.ok()) winners.fetch_add(1);
      if (KindOf(st) == ErrorKind::kAlreadyExists) already_exists.fetch_add(1);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(winners.load(), 1);
  EXPECT_EQ(already_exists.load(), kThreads - 1);
  const std::string content = ReadWithStd(location);
  ASSERT_GE(content.size(), 1000u);
  // The content is one writer's whole payload, never a mix.
  EXPECT_EQ(content, std::string(content.size(), content[0]));
  EXPECT_EQ(content.size(), 1000u + static_cast<size_t>(content[0] - 'a'));
}

TEST_F(FileIOLocalTest, StatReportsSizeTimeAndKind) {
  const auto before = std::chrono::system_clock::now() - std::chrono::seconds(5);
  WriteWithStd(Path("s/file.bin"), std::string(1234, 'x'));
  auto info = io_->Stat(Uri("s/file.bin"));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->location, Uri("s/file.bin"));
  EXPECT_EQ(info->size, 1234);
  EXPECT_FALSE(info->is_dir);
  struct stat st {};
  ASSERT_EQ(::stat(Path("s/file.bin").c_str(), &st), 0);
  EXPECT_EQ(info->mtime_ms, static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000);
  EXPECT_GE(info->mtime_ms,
            std::chrono::duration_cast<std::chrono::milliseconds>(before.time_since_epoch()).count());

  auto dir = io_->Stat(Path("s"));
  ASSERT_TRUE(dir.ok());
  EXPECT_TRUE(dir->is_dir);
  EXPECT_EQ(dir->size, -1);
}

TEST_F(FileIOLocalTest, ListIsSortedAndKeepsTheCallersSpelling) {
  WriteWithStd(Path("l/b.txt"), "bb");
  WriteWithStd(Path("l/a.txt"), "a");
  WriteWithStd(Path("l/sub/c.txt"), "ccc");

  auto flat = io_->List("file:" + Path("l"));
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  ASSERT_EQ(flat->size(), 3u);
  EXPECT_EQ((*flat)[0].location, "file:" + Path("l/a.txt"));
  EXPECT_EQ((*flat)[0].size, 1);
  EXPECT_FALSE((*flat)[0].is_dir);
  EXPECT_EQ((*flat)[1].location, "file:" + Path("l/b.txt"));
  EXPECT_EQ((*flat)[1].size, 2);
  EXPECT_EQ((*flat)[2].location, "file:" + Path("l/sub"));
  EXPECT_TRUE((*flat)[2].is_dir);

  auto deep = io_->List(Path("l") + "/", /*recursive=*/true);
  ASSERT_TRUE(deep.ok()) << deep.status().ToString();
  std::vector<std::string> locations;
  for (const auto& entry : *deep) locations.push_back(entry.location);
  EXPECT_EQ(locations, (std::vector<std::string>{Path("l/a.txt"), Path("l/b.txt"), Path("l/sub"),
                                                  Path("l/sub/c.txt")}));
  EXPECT_EQ(deep->back().size, 3);
}

TEST_F(FileIOLocalTest, ListOfMissingDirectoryIsEmptyAndOfAFileIsAnError) {
  auto missing = io_->List(Path("nothing/here"), true);
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_TRUE(missing->empty());

  WriteWithStd(Path("plain"), "x");
  auto file = io_->List(Path("plain"));
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find(Path("plain")), std::string::npos);
}

TEST_F(FileIOLocalTest, DeleteRemovesFilesAndToleratesMissingOnes) {
  WriteWithStd(Path("del/x"), "x");
  ASSERT_TRUE(io_->Delete(Uri("del/x")).ok());
  EXPECT_FALSE(fs::exists(Path("del/x")));
  EXPECT_TRUE(io_->Delete(Uri("del/x")).ok());
  EXPECT_TRUE(io_->Delete(Uri("never/was")).ok());

  Status dir = io_->Delete(Path("del"));
  EXPECT_FALSE(dir.ok()) << "Delete must not remove a directory";
  EXPECT_NE(dir.message().find(Path("del")), std::string::npos);
  EXPECT_TRUE(fs::exists(Path("del")));
}

TEST_F(FileIOLocalTest, DeleteDirIsRecursiveAndIdempotent) {
  WriteWithStd(Path("tree/a/b/c.txt"), "c");
  WriteWithStd(Path("tree/d.txt"), "d");
  WriteWithStd(Path("keep.txt"), "k");
  ASSERT_TRUE(io_->DeleteDir(Uri("tree")).ok());
  EXPECT_FALSE(fs::exists(Path("tree")));
  EXPECT_TRUE(fs::exists(Path("keep.txt")));
  EXPECT_TRUE(io_->DeleteDir(Uri("tree")).ok());

  auto exists = io_->Exists(Path("tree"));
  ASSERT_TRUE(exists.ok());
  EXPECT_FALSE(*exists);
}

TEST_F(FileIOLocalTest, DeleteDirRefusesRoots) {
  for (const char* root : {"/", "file:///", "file:/", "s3://bucket", "s3://bucket/", "gs://bucket"}) {
    Status st = io_->DeleteDir(root);
    EXPECT_EQ(KindOf(st), ErrorKind::kInvalidArgument) << root << ": " << st.ToString();
  }
}

TEST_F(FileIOLocalTest, ExistsSeesFilesAndDirectories) {
  WriteWithStd(Path("e/f"), "");
  for (const std::string& location : {Path("e"), Path("e/f"), Uri("e/f")}) {
    auto exists = io_->Exists(location);
    ASSERT_TRUE(exists.ok()) << exists.status().ToString();
    EXPECT_TRUE(*exists) << location;
  }
  auto empty = io_->ReadAll(Path("e/f"));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
}

TEST_F(FileIOLocalTest, UnsupportedSchemeIsReportedWithTheLocation) {
  auto read = io_->ReadAll("hdfs://namenode/t/x");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(KindOf(read.status()), ErrorKind::kUnsupported);
  EXPECT_NE(read.status().message().find("hdfs://namenode/t/x"), std::string::npos);
}

}  // namespace
}  // namespace lakesync::io

namespace lakesync::io::internal {
namespace {

using ::lakesync::io::ReadWithStd;

// The link() fallback serves filesystems without RENAME_NOREPLACE; it is forced here so that it is
// covered on any filesystem the tests run on.
TEST(WriteNewLocalFileLinkOnly, CreatesOnceAndRacesHaveOneWinner) {
  std::random_device device;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("lakesync_io_link_" + std::to_string(device()));
  const std::string path = (dir / "sub" / "v1.json").string();
  ASSERT_TRUE(WriteNewLocalFile(path, "first", path, NoReplaceMethod::kLinkOnly).ok());
  Status again = WriteNewLocalFile(path, "second", path, NoReplaceMethod::kLinkOnly);
  EXPECT_EQ(KindOf(again), ErrorKind::kAlreadyExists) << again.ToString();
  EXPECT_EQ(ReadWithStd(path), "first");

  for (int round = 0; round < 100; ++round) {
    const std::string target = (dir / ("r" + std::to_string(round))).string();
    std::atomic<int> ready{0};
    Status results[2];
    std::thread threads[2];
    for (int t = 0; t < 2; ++t) {
      threads[t] = std::thread([&, t] {
        ready.fetch_add(1);
        while (ready.load() < 2) {
        }
        results[t] = WriteNewLocalFile(target, "w" + std::to_string(t), target, NoReplaceMethod::kLinkOnly);
      });
    }
    for (auto& thread : threads) thread.join();
    ASSERT_NE(results[0].ok(), results[1].ok()) << "round " << round;
    const int winner = results[0].ok() ? 0 : 1;
    EXPECT_EQ(KindOf(results[1 - winner]), ErrorKind::kAlreadyExists);
    EXPECT_EQ(ReadWithStd(target), "w" + std::to_string(winner));
  }
  // Only the targets remain: every temporary name was unlinked.
  size_t entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().rfind(".", 0), std::string::npos) << entry.path();
    ++entries;
  }
  EXPECT_EQ(entries, 101u);  // "sub" and r0..r99
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lakesync::io::internal
