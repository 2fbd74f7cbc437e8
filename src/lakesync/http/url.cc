#include "lakesync/http/url.h"

#include <charconv>

#include "lakesync/common/text.h"

namespace lakesync::http {
namespace {

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string Url::Origin() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return scheme + "://" + (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<Url> ParseUrl(std::string_view text) {
  auto fail = [&](std::string_view why) {
    return InvalidArgument("invalid URL '{}': {} (expected http://host[:port][/path] or https://...)", text, why);
  };
  Url url;
  const size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) return fail("no scheme");
  url.scheme = AsciiLower(text.substr(0, scheme_end));
  if (url.scheme != "http" && url.scheme != "https") return fail("the scheme must be http or https");
  std::string_view rest = text.substr(scheme_end + 3);
  const size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  rest = authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (authority.find('@') != std::string_view::npos) return fail("credentials in URLs are not accepted");
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return fail("unterminated IPv6 address");
    url.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return fail("garbage after the IPv6 address");
      port_text = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (url.host.empty()) return fail("no host");
  url.port = url.scheme == "https" ? 443 : 80;
  if (!port_text.empty()) {
    int port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port <= 0 || port > 65535) {
      return fail("bad port");
    }
    url.port = port;
  }
  const size_t fragment = rest.find('#');
  if (fragment != std::string_view::npos) rest = rest.substr(0, fragment);
  const size_t query = rest.find('?');
  if (query != std::string_view::npos) {
    url.query = std::string(rest.substr(query + 1));
    rest = rest.substr(0, query);
  }
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  url.path = std::string(rest);
  return url;
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (IsUnreserved(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

Result<std::string> PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) {
        return InvalidArgument("malformed percent-escape in '{}'", text);
      }
      const int hi = HexValue(text[i + 1]);
      const int lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return InvalidArgument("malformed percent-escape in '{}'", text);
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string EncodeQuery(const std::multimap<std::string, std::string>& params) {
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out.push_back('&');
    out += PercentEncode(name);
    out.push_back('=');
    out += PercentEncode(value);
  }
  return out;
}

}  // namespace lakesync::http
