#include "lakesync/common/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace lakesync {

void ConfigureLogging(std::string_view level) {
  auto logger = spdlog::stderr_color_mt("lakesync");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(std::string(level)));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
}

}  // namespace lakesync
