// Logging facade: one place decides the sink and format (spdlog underneath). A library returns errors;
// the application logs them once at its boundary. INFO one line per commit or phase, DEBUG per file.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <spdlog/spdlog.h>

#include <string_view>

namespace lakesync {

// Configures the process-wide logger: level name ("debug", "info", "warn", "error", "off") and
// format: "text" (time, level, message) or "json" (one object per line: time in UTC, level, logger,
// message), for log collectors. Logs go to stderr so that stdout stays clean for data (scan
// output, JSON summaries).
void ConfigureLogging(std::string_view level, std::string_view format = "text");

// One log line with structured fields (a JSON object of scalars): in the json format they become
// members of the line's object next to "message"; in the text format they follow the message as
// key=value pairs. For lines a collector filters on (HTTP requests, commits, job runs).
void LogEvent(spdlog::level::level_enum level, std::string_view message, const nlohmann::json& fields);

}  // namespace lakesync

// Not SPDLOG_DEBUG: that macro is compiled out below SPDLOG_ACTIVE_LEVEL (info by default), so
// `--log-level debug` printed none of these lines.
#define LS_LOG_DEBUG(...) spdlog::debug(__VA_ARGS__)
#define LS_LOG_INFO(...) spdlog::info(__VA_ARGS__)
#define LS_LOG_WARN(...) spdlog::warn(__VA_ARGS__)
#define LS_LOG_ERROR(...) spdlog::error(__VA_ARGS__)
