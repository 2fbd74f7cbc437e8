// Small readers for the string properties a FileIO is made from (Iceberg catalog properties) and
// for the environment variables that back them up.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "lakesync/common/status.h"

namespace lakesync::io::internal {

using Properties = std::map<std::string, std::string>;

// Reads an environment variable; an unset or empty variable reads as nullopt. Tests pass their
// own lookup so that they do not depend on (or change) the process environment.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
EnvLookup SystemEnv();

// The value of the first of `keys` that is present with a non-empty value.
std::optional<std::string> FirstOf(const Properties& properties,
                                   std::initializer_list<std::string_view> keys);

// "true"/"false" (any case) or nullopt when absent.
// Errors: InvalidArgument naming the key for any other value.
Result<std::optional<bool>> BoolProperty(const Properties& properties, std::string_view key);

// A non-negative decimal number, or nullopt when absent.
// Errors: InvalidArgument naming the key for anything else.
Result<std::optional<double>> NumberProperty(const Properties& properties, std::string_view key);

// A service endpoint split the way Arrow's options want it: "http://127.0.0.1:9000" becomes
// scheme "http" and authority "127.0.0.1:9000". Without a scheme, `default_scheme` is used.
struct Endpoint {
  std::string scheme;
  std::string authority;
};
// Errors: InvalidArgument naming `key` for an empty host, a scheme other than http/https, or a
// path after the host.
Result<Endpoint> ParseEndpoint(std::string_view key, std::string_view value,
                               std::string_view default_scheme);

}  // namespace lakesync::io::internal
