// http::MakeUrlFileSystem: files at http URLs read through arrow::fs (sizes by HEAD, bytes by ranged
// GETs, small files in one GET), a 403 cured by the refresh callback, and errors by kind.
#include <gtest/gtest.h>

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>

#include <atomic>

#include "status_test_util.h"
#include "lakesync/http/client.h"
#include "lakesync/http/server.h"
#include "lakesync/http/url_file.h"

namespace lakesync::http {
namespace {

class UrlFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 5000; ++i) content_.push_back(static_cast<char>('a' + i % 26));
    ServerOptions options;
    options.log_requests = false;
    ASSERT_OK_AND_ASSIGN(server_, Server::Make(options));
    server_->routes().Get("/f", [this](const httplib::Request& req, httplib::Response& res) {
      ++requests_;
      if (req.get_param_value("sig") != valid_sig_) {
        res.status = 403;
        return;
      }
      if (req.has_header("Range")) ++ranged_;
      const std::string* body = &content_;
      res.set_content_provider(body->size(), "application/octet-stream",
                               [body](size_t offset, size_t length, httplib::DataSink& sink) {
                                 sink.write(body->data() + offset, length);
                                 return true;
                               });
    });
    ASSERT_OK(server_->Start());
    ASSERT_OK_AND_ASSIGN(client_, Client::Make());
  }

  std::string Url(const std::string& sig) const { return server_->url() + "/f?sig=" + sig; }

  std::string content_;
  std::string valid_sig_ = "one";
  std::atomic<int> requests_{0}, ranged_{0};
  std::unique_ptr<Server> server_;
  std::shared_ptr<Client> client_;
};

TEST_F(UrlFileTest, ReadsRangesAndSizes) {
  UrlFileOptions options;
  options.whole_file_below = 0;  // every read is a ranged GET
  auto fs = MakeUrlFileSystem(client_, options);
  ASSERT_OK_AND_ASSIGN(auto info, fs->GetFileInfo(Url("one")));
  EXPECT_EQ(info.size(), 5000);
  ASSERT_OK_AND_ASSIGN(auto file, fs->OpenInputFile(Url("one")));
  ASSERT_OK_AND_ASSIGN(int64_t size, file->GetSize());
  EXPECT_EQ(size, 5000);
  ASSERT_OK_AND_ASSIGN(auto middle, file->ReadAt(1000, 30));
  EXPECT_EQ(middle->ToString(), content_.substr(1000, 30));
  ASSERT_OK_AND_ASSIGN(auto tail, file->ReadAt(4990, 100));  // short read at the end
  EXPECT_EQ(tail->ToString(), content_.substr(4990));
  EXPECT_EQ(ranged_.load(), 2);
  EXPECT_EQ(KindOf(fs->DeleteFile(Url("one"))), ErrorKind::kUnsupported);
}

TEST_F(UrlFileTest, SmallFilesAreFetchedOnce) {
  auto fs = MakeUrlFileSystem(client_);
  arrow::fs::FileInfo info(Url("one"), arrow::fs::FileType::File);
  info.set_size(5000);
  ASSERT_OK_AND_ASSIGN(auto file, fs->OpenInputFile(info));
  for (int64_t at : {4992, 0, 2500}) {
    ASSERT_OK_AND_ASSIGN(auto piece, file->ReadAt(at, 8));
    EXPECT_EQ(piece->ToString(), content_.substr(at, 8));
  }
  EXPECT_EQ(requests_.load(), 1);
}

TEST_F(UrlFileTest, ForbiddenUrlsAreRefreshedOnce) {
  std::atomic<int> refreshes{0};
  UrlFileOptions options;
  options.refresh = [&](const std::string& url) -> Result<std::string> {
    ++refreshes;
    EXPECT_EQ(url, Url("expired"));
    return Url("one");
  };
  auto fs = MakeUrlFileSystem(client_, options);
  ASSERT_OK_AND_ASSIGN(auto file, fs->OpenInputFile(Url("expired")));
  ASSERT_OK_AND_ASSIGN(auto piece, file->ReadAt(0, 4));
  EXPECT_EQ(piece->ToString(), content_.substr(0, 4));
  EXPECT_EQ(refreshes.load(), 1);
  // Without a refresh, or when the refreshed URL is refused too, the read fails as Forbidden.
  auto plain = MakeUrlFileSystem(client_);
  ASSERT_OK_AND_ASSIGN(auto refused, plain->OpenInputFile(Url("expired")));
  EXPECT_EQ(KindOf(refused->ReadAt(0, 4).status()), ErrorKind::kForbidden);
  options.refresh = [&](const std::string&) -> Result<std::string> { return Url("still-bad"); };
  auto stubborn = MakeUrlFileSystem(client_, options);
  ASSERT_OK_AND_ASSIGN(auto again, stubborn->OpenInputFile(Url("expired")));
  auto failed = again->ReadAt(0, 4);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(KindOf(failed.status()), ErrorKind::kForbidden);
  EXPECT_EQ(failed.status().message().find("sig="), std::string::npos);  // signatures stay out of messages
}

TEST_F(UrlFileTest, MissingFilesAreNotFound) {
  auto fs = MakeUrlFileSystem(client_);
  ASSERT_OK_AND_ASSIGN(auto info, fs->GetFileInfo(server_->url() + "/nope"));
  EXPECT_EQ(info.type(), arrow::fs::FileType::NotFound);
}

}  // namespace
}  // namespace lakesync::http
