#include "lakesync/engine/run_state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lakesync/iceberg/model/literal.h"
#include "lakesync/io/file_io.h"
#include "lakesync/io/location.h"

namespace lakesync::engine {
namespace {

std::string NowUtc() {
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  return iceberg::FormatTimestamp(micros - micros % 1000, false, false) + "Z";
}

}  // namespace

std::string RunState::DefaultDirectory() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? v : "";
  };
  if (auto d = env("LAKESYNC_STATE_DIR"); !d.empty()) return d;
  if (auto d = env("XDG_STATE_HOME"); !d.empty()) return (std::filesystem::path(d) / "lakesync").string();
  if (auto home = env("HOME"); !home.empty()) {
    return (std::filesystem::path(home) / ".local" / "state" / "lakesync").string();
  }
  return "";
}

std::string RunState::KeyFor(const std::string& sink_id, const std::string& target_table) {
  std::string key = sink_id + "@" + target_table;
  for (char& c : key) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' && c != '@') c = '_';
  }
  return key.substr(0, 200);
}

RunState::RunState(std::string json_path, std::string lock_path)
    : json_path_(std::move(json_path)), lock_path_(std::move(lock_path)) {}

RunState::~RunState() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing releases the lock
}

Result<std::unique_ptr<RunState>> RunState::Open(const std::string& directory, const std::string& key) {
  if (directory.empty()) return InvalidArgument("no folder for run state: set LAKESYNC_STATE_DIR or HOME");
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) return IOError("creating the run-state folder {}: {}", directory, ec.message());
  const auto base = std::filesystem::path(directory) / key;
  return std::unique_ptr<RunState>(new RunState(base.string() + ".json", base.string() + ".lock"));
}

Status RunState::MarkRunning() {
  if (lock_fd_ >= 0) return Status::OK();
  lock_fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return IOError("opening {}: {}", lock_path_, std::strerror(errno));
  while (::flock(lock_fd_, LOCK_SH) != 0) {
    if (errno != EINTR) return IOError("locking {}: {}", lock_path_, std::strerror(errno));
  }
  return Status::OK();
}

Result<bool> RunState::InProgress() const {
  const int fd = ::open(lock_path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;  // no run has ever started here
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  const int err = errno;
  ::close(fd);
  if (!free && err != EWOULDBLOCK) return IOError("testing the lock {}: {}", lock_path_, std::strerror(err));
  return !free;
}

Result<nlohmann::json> RunState::Load() const {
  std::ifstream in(json_path_, std::ios::binary);
  if (!in) return nlohmann::json::object();
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  // A file cut short by a crash mid-write cannot happen (Update), but a hand-edited one can: treat
  // it as no history rather than failing status.
  if (parsed.is_discarded() || !parsed.is_object()) return nlohmann::json::object();
  return parsed;
}

// Replaced through FileIO::WriteAll, the one rule for replacing a file: a synced temporary file
// renamed over the old one, then its folder synced, so a crash or power loss leaves the old state or
// the new one.
Status RunState::Update(const char* key, nlohmann::json value) {
  ARROW_ASSIGN_OR_RAISE(auto state, Load());
  state[key] = std::move(value);
  ARROW_ASSIGN_OR_RAISE(auto file_io, io::FileIO::Make());
  ARROW_ASSIGN_OR_RAISE(auto location, io::NormalizeLocation(json_path_));
  return file_io->WriteAll(location, state.dump(2) + "\n");
}

Status RunState::RecordRun(const nlohmann::json& summary) {
  nlohmann::json run = summary;
  run["finished_at"] = NowUtc();
  return Update("last_run", std::move(run));
}

Status RunState::RecordError(const std::string& message, const std::string& kind) {
  return Update("last_error", {{"at", NowUtc()}, {"message", message}, {"kind", kind}});
}

}  // namespace lakesync::engine
