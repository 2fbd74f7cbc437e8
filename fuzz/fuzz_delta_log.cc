// Delta log commit files (JSON lines of actions): every line parsed into actions.
#include <cstdint>
#include <string_view>

#include "lakesync/delta/log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lakesync::delta::LogFile file;
  file.version = 3;
  file.location = "/fuzz/_delta_log/00000000000000000003.json";
  (void)lakesync::delta::ParseJsonActions(std::string_view(reinterpret_cast<const char*>(data), size), file,
                                          "commit");
  return 0;
}
