// Errors are values: every fallible function returns lakesync::Status or lakesync::Result<T>, which are
// Arrow's types. The small set of kinds callers act on (retry, map to an HTTP code, exit code) travels
// in a StatusDetail, so it survives Arrow code in between and context added on the way up.
#pragma once

#include <arrow/result.h>
#include <arrow/status.h>

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace lakesync {

using Status = arrow::Status;
template <typename T>
using Result = arrow::Result<T>;

enum class ErrorKind {
  kUnknown,
  kNotFound,            // table, namespace, file, snapshot, key
  kAlreadyExists,
  kInvalidArgument,     // bad user input: flags, config keys, filters, schemas
  kCommitConflict,      // retryable: a requirement failed because someone else committed
  kCommitStateUnknown,  // never retry blindly and never delete the files written
  kIO,
  kCorrupt,             // a file or metadata document is not what its format says
  kUnsupported,         // valid input we do not handle (yet)
  kUnauthenticated,
  kForbidden,
  kUnavailable,         // retryable: a service is down or overloaded
  kNamespaceNotEmpty,
};

std::string_view ErrorKindName(ErrorKind kind);

// Facts about an error that callers decide on, carried in the status detail next to its kind (never
// in the message text, which context rewrites on the way up).
enum class ErrorFlag : uint32_t {
  // Retrying the same operation cannot succeed: e.g. a commit conflict that the table's new state
  // explains (a file this commit removes was removed concurrently).
  kNotRetryable = 1u << 0,
  // The work was already done by someone else: e.g. a sink commit whose source position another
  // writer committed first (exactly-once: the caller skips instead of failing).
  kAlreadyApplied = 1u << 1,
};

// `status` with `flag` set (kind and message unchanged). OK stays OK.
Status WithFlag(const Status& status, ErrorFlag flag);
bool HasFlag(const Status& status, ErrorFlag flag);

// The kind of an error status: from our detail if present, otherwise derived from Arrow's code.
ErrorKind KindOf(const Status& status);

Status MakeError(ErrorKind kind, std::string message);

template <typename... Args>
Status NotFound(fmt::format_string<Args...> f, Args&&... args) {
  return MakeError(ErrorKind::kNotFound, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status AlreadyExists(fmt::format_string<Args...> f, Args&&... args) {
  return MakeError(ErrorKind::kAlreadyExists, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status InvalidArgument(fmt::format_string<Args...> f, Args&&... args) {
  return MakeError(ErrorKind::kInvalidArgument, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status CommitConflict(fmt::format_string<Args...> f, Args&&... args) {
  return MakeError(ErrorKind::kCommitConflict, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status CommitStateUnknown(fmt::format_string<Args...> f, Args&&... args) {
  return MakeError(ErrorKind::kCommitStateUnknown, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status IOError(fmt::format_string<Args...> f, Args&&... args) {
  return MakeError(ErrorKind::kIO, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status Corrupt(fmt::format_string<Args...> f, Args&&... args) {
  return MakeError(ErrorKind::kCorrupt, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status Unsupported(fmt::format_string<Args...> f, Args&&... args) {
  return MakeError(ErrorKind::kUnsupported, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status Unavailable(fmt::format_string<Args...> f, Args&&... args) {
  return MakeError(ErrorKind::kUnavailable, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status NamespaceNotEmpty(fmt::format_string<Args...> f, Args&&... args) {
  return MakeError(ErrorKind::kNamespaceNotEmpty, fmt::format(f, std::forward<Args>(args)...));
}

// Prefixes context ("reading s3://b/t/metadata/v3.metadata.json: ") and keeps the kind.
Status WithContext(const Status& status, std::string_view context);

// A commit conflict or an unavailable service, unless marked kNotRetryable.
bool IsRetryable(const Status& status);

// `text` with every byte that is not part of a valid UTF-8 sequence written as \xNN. Messages quote
// damaged input (a bit flip inside a file path in a manifest); terminals, Python's str and JSON
// logs all need UTF-8, so every place a message leaves the process shows it through this.
std::string EscapeInvalidUtf8(std::string_view text);

}  // namespace lakesync

// Propagate an error with context added: LS_RETURN_NOT_OK_CTX(expr, "reading {}", path)
#define LS_RETURN_NOT_OK_CTX(expr, ...)                                              \
  do {                                                                               \
    ::lakesync::Status _ls_st = (expr);                                              \
    if (!_ls_st.ok()) return ::lakesync::WithContext(_ls_st, fmt::format(__VA_ARGS__)); \
  } while (0)

#define LS_CONCAT_INNER(a, b) a##b
#define LS_CONCAT(a, b) LS_CONCAT_INNER(a, b)
#define LS_ASSIGN_OR_RAISE_CTX_IMPL(res, lhs, rexpr, ...)                                   \
  auto res = (rexpr);                                                                        \
  if (!res.ok()) return ::lakesync::WithContext(res.status(), fmt::format(__VA_ARGS__));     \
  lhs = std::move(res).ValueUnsafe();

// LS_ASSIGN_OR_RAISE_CTX(auto x, Read(path), "reading {}", path)
#define LS_ASSIGN_OR_RAISE_CTX(lhs, rexpr, ...) \
  LS_ASSIGN_OR_RAISE_CTX_IMPL(LS_CONCAT(_ls_res_, __COUNTER__), lhs, rexpr, __VA_ARGS__)
