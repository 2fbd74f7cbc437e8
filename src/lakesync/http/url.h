// URLs for the HTTP clients and servers: parsing an http(s) base URL into the parts cpp-httplib wants,
// and RFC 3986 percent-encoding of path segments and query values. Written here because the HTTP
// library keeps its own helpers private (httplib::detail) and these few rules are all we need.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "lakesync/common/status.h"

namespace lakesync::http {

struct Url {
  std::string scheme;  // "http" or "https"
  std::string host;    // without brackets for IPv6 literals
  int port = 0;        // the scheme's default when the URL has none
  std::string path;    // "" or starting with '/', without a trailing '/'
  std::string query;   // without the '?'

  // "scheme://host:port" (IPv6 hosts in brackets): what identifies a connection.
  std::string Origin() const;
};

// Parses an absolute http or https URL. Errors: kInvalidArgument naming the URL.
Result<Url> ParseUrl(std::string_view url);

// Percent-encodes everything but RFC 3986's unreserved characters (A-Z a-z 0-9 - . _ ~), so the
// result can stand for one path segment or one query value.
std::string PercentEncode(std::string_view text);

// Decodes %XX escapes (and '+' as a space when `plus_is_space`, for query strings).
// Errors: kInvalidArgument for a malformed escape.
Result<std::string> PercentDecode(std::string_view text, bool plus_is_space = false);

// "a=1&b=x%20y" from {{"a","1"},{"b","x y"}}, names and values encoded, in the map's order.
std::string EncodeQuery(const std::multimap<std::string, std::string>& params);

}  // namespace lakesync::http
