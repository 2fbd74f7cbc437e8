// fileio_probe: drives lakesync::io::FileIO from the command line so that tests in other
// languages (tests/interop/test_object_stores.py) can exercise it against real servers.
//
//   fileio_probe [--prop key=value]... [--recursive] [--hold-at-exit] <op> <location> [data]
//
// ops: write, writenew (data from the argument, or stdin when it is "-"), read (raw bytes to
// stdout), readrange <location> <offset> <length> (OpenInput + ReadAt, raw bytes), exists ("true"/"false"), stat and list (one "location<TAB>size<TAB>mtime_ms<TAB>file|dir"
// line per entry), delete, deletedir, normalize (the canonical location). Successful writes and
// deletes print "ok". Errors print "error<TAB><kind><TAB><message>" to stderr and exit with 1;
// usage errors exit with 2. --hold-at-exit keeps the FileIO alive in a static until the process
// exits, to prove that exiting with live object-store clients is clean.
#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>

#include <cstdio>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lakesync/io/file_io.h"

namespace {

std::shared_ptr<lakesync::io::FileIO> g_held_at_exit;

int Usage(const std::string& why) {
  std::cerr << "fileio_probe: " << why << "\n"
            << "usage: fileio_probe [--prop key=value]... [--recursive] [--hold-at-exit] <op> <location> [data]\n"
            << "ops: write writenew read readrange exists stat list delete deletedir normalize\n";
  return 2;
}

int Fail(const lakesync::Status& status) {
  std::cerr << "error\t" << lakesync::ErrorKindName(lakesync::KindOf(status)) << "\t"
            << status.message() << "\n";
  return 1;
}

void PrintInfo(const lakesync::io::FileInfo& info) {
  std::cout << info.location << "\t" << info.size << "\t" << info.mtime_ms << "\t"
            << (info.is_dir ? "dir" : "file") << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> properties;
  bool recursive = false;
  bool hold_at_exit = false;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--prop") {
      if (i + 1 >= argc) return Usage("--prop needs key=value");
      const std::string kv = argv[++i];
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) return Usage("--prop needs key=value, got " + kv);
      properties[kv.substr(0, eq)] = kv.substr(eq + 1);
    } else if (arg == "--recursive") {
      recursive = true;
    } else if (arg == "--hold-at-exit") {
      hold_at_exit = true;
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() < 2) return Usage("need an op and a location");
  const std::string& op = positional[0];
  const std::string& location = positional[1];

  if (op == "normalize") {
    auto normalized = lakesync::io::NormalizeLocation(location);
    if (!normalized.ok()) return Fail(normalized.status());
    std::cout << *normalized << "\n";
    return 0;
  }

  auto made = lakesync::io::FileIO::Make(properties);
  if (!made.ok()) return Fail(made.status());
  std::shared_ptr<lakesync::io::FileIO> io = *made;
  if (hold_at_exit) g_held_at_exit = io;

  if (op == "write" || op == "writenew") {
    if (positional.size() < 3) return Usage(op + " needs data (or - for stdin)");
    std::string data = positional[2];
    if (data == "-") {
      data.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    }
    lakesync::Status st = op == "write" ? io->WriteAll(location, data) : io->WriteNew(location, data);
    if (!st.ok()) return Fail(st);
    std::cout << "ok\n";
  } else if (op == "read") {
    auto data = io->ReadAll(location);
    if (!data.ok()) return Fail(data.status());
    std::fwrite(data->data(), 1, data->size(), stdout);
  } else if (op == "readrange") {
    if (positional.size() < 4) return Usage("readrange needs an offset and a length");
    const int64_t offset = std::stoll(positional[2]);
    const int64_t length = std::stoll(positional[3]);
    auto file = io->OpenInput(location);
    if (!file.ok()) return Fail(file.status());
    auto buffer = (*file)->ReadAt(offset, length);
    if (!buffer.ok()) return Fail(buffer.status());
    std::fwrite((*buffer)->data(), 1, static_cast<size_t>((*buffer)->size()), stdout);
  } else if (op == "exists") {
    auto exists = io->Exists(location);
    if (!exists.ok()) return Fail(exists.status());
    std::cout << (*exists ? "true" : "false") << "\n";
  } else if (op == "stat") {
    auto info = io->Stat(location);
    if (!info.ok()) return Fail(info.status());
    PrintInfo(*info);
  } else if (op == "list") {
    auto entries = io->List(location, recursive);
    if (!entries.ok()) return Fail(entries.status());
    for (const auto& entry : *entries) PrintInfo(entry);
  } else if (op == "delete" || op == "deletedir") {
    lakesync::Status st = op == "delete" ? io->Delete(location) : io->DeleteDir(location);
    if (!st.ok()) return Fail(st);
    std::cout << "ok\n";
  } else {
    return Usage("unknown op " + op);
  }
  return 0;
}
