#include <cctype>
#include <charconv>
#include <cstdlib>

#include "lakesync/io/properties_internal.h"

namespace lakesync::io::internal {

EnvLookup SystemEnv() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
  };
}

std::optional<std::string> FirstOf(const Properties& properties,
                                   std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) {
    auto it = properties.find(std::string(key));
    if (it != properties.end() && !it->second.empty()) return it->second;
  }
  return std::nullopt;
}

Result<std::optional<bool>> BoolProperty(const Properties& properties, std::string_view key) {
  auto it = properties.find(std::string(key));
  if (it == properties.end() || it->second.empty()) return std::optional<bool>();
  std::string lower = it->second;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "true") return std::optional<bool>(true);
  if (lower == "false") return std::optional<bool>(false);
  return InvalidArgument("property {} must be true or false, got '{}'", key, it->second);
}

Result<std::optional<double>> NumberProperty(const Properties& properties, std::string_view key) {
  auto it = properties.find(std::string(key));
  if (it == properties.end() || it->second.empty()) return std::optional<double>();
  const std::string& text = it->second;
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return InvalidArgument("property {} must be a non-negative number, got '{}'", key, text);
  }
  return std::optional<double>(value);
}

Result<Endpoint> ParseEndpoint(std::string_view key, std::string_view value,
                               std::string_view default_scheme) {
  Endpoint endpoint;
  std::string_view rest = value;
  if (const size_t sep = rest.find("://"); sep != std::string_view::npos) {
    endpoint.scheme = std::string(rest.substr(0, sep));
    for (char& c : endpoint.scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    rest.remove_prefix(sep + 3);
  } else {
    endpoint.scheme = std::string(default_scheme);
  }
  if (endpoint.scheme != "http" && endpoint.scheme != "https") {
    return InvalidArgument("property {} = '{}': the scheme must be http or https", key, value);
  }
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.empty()) return InvalidArgument("property {} = '{}' names no host", key, value);
  if (rest.find('/') != std::string_view::npos) {
    return InvalidArgument("property {} = '{}': an endpoint is scheme://host[:port] without a path",
                           key, value);
  }
  endpoint.authority = std::string(rest);
  return endpoint;
}

}  // namespace lakesync::io::internal
