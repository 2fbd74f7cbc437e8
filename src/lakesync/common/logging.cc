#include "lakesync/common/logging.h"

#include <nlohmann/json.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include "lakesync/common/status.h"

namespace lakesync {
namespace {

// LogEvent appends its fields to the payload after this separator (a control character no message
// contains), so the formatters below can place them; spdlog has no structured fields of its own.
constexpr char kFieldsSeparator = '\x1e';

std::pair<std::string_view, std::string_view> SplitPayload(const spdlog::details::log_msg& msg) {
  std::string_view payload(msg.payload.data(), msg.payload.size());
  const size_t at = payload.find(kFieldsSeparator);
  if (at == std::string_view::npos) return {payload, {}};
  return {payload.substr(0, at), payload.substr(at + 1)};
}

// Messages quote damaged input at times: bytes that are not UTF-8 are shown as \xNN, in both formats.
std::string JsonString(std::string_view text) { return nlohmann::json(EscapeInvalidUtf8(text)).dump(); }

// %* in the json pattern: the message as a JSON string (quoted and escaped), followed by the event's
// fields as further members of the same object.
class JsonMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    auto [message, fields] = SplitPayload(msg);
    const std::string text = JsonString(message);
    dest.append(text.data(), text.data() + text.size());
    // `fields` is a serialised JSON object: its members go in without the braces.
    if (fields.size() > 2) {
      dest.push_back(',');
      dest.append(fields.data() + 1, fields.data() + fields.size() - 1);
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonMessageFlag>(); }
};

// %* in the text pattern: the message, then " key=value" per field (strings quoted when they hold
// spaces or quotes, so a line splits back into its fields).
class TextMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    auto [raw_message, fields] = SplitPayload(msg);
    const std::string message = EscapeInvalidUtf8(raw_message);
    dest.append(message.data(), message.data() + message.size());
    if (fields.empty()) return;
    const auto object = nlohmann::json::parse(fields, nullptr, /*allow_exceptions=*/false);
    if (!object.is_object()) return;
    for (const auto& [key, value] : object.items()) {
      std::string rendered;
      if (value.is_string()) {
        rendered = value.get<std::string>();
        if (rendered.empty() || rendered.find_first_of(" \"=") != std::string::npos) rendered = JsonString(rendered);
      } else {
        rendered = value.dump();
      }
      dest.push_back(' ');
      dest.append(key.data(), key.data() + key.size());
      dest.push_back('=');
      dest.append(rendered.data(), rendered.data() + rendered.size());
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<TextMessageFlag>(); }
};

}  // namespace

void ConfigureLogging(std::string_view level, std::string_view format) {
  auto logger = spdlog::get("lakesync");
  if (!logger) logger = spdlog::stderr_color_mt("lakesync");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(std::string(level)));
  if (format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonMessageFlag>('*').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","logger":"%n","message":%*})");
    spdlog::set_formatter(std::move(formatter));
  } else {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<TextMessageFlag>('*').set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %*");
    spdlog::set_formatter(std::move(formatter));
  }
}

void LogEvent(spdlog::level::level_enum level, std::string_view message, const nlohmann::json& fields) {
  if (!spdlog::should_log(level)) return;
  std::string payload(message);
  if (fields.is_object() && !fields.empty()) {
    payload.push_back(kFieldsSeparator);
    payload += fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  spdlog::log(level, "{}", payload);
}

}  // namespace lakesync
