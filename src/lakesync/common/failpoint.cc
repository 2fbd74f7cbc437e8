#include "lakesync/common/failpoint.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace lakesync {

void Failpoint(std::string_view name) {
  const char* wanted = std::getenv("LAKESYNC_FAILPOINT");
  if (wanted == nullptr || name != wanted) return;
  std::fprintf(stderr, "lakesync: failpoint %s reached: killing the process\n", std::string(name).c_str());
  std::fflush(stderr);
  std::raise(SIGKILL);
}

}  // namespace lakesync
