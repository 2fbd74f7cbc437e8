#include "lakesync/common/status.h"

#include "lakesync/common/utf8.h"

#include <arrow/status.h>

#include <fmt/format.h>

namespace lakesync {
namespace {

constexpr char kDetailTypeId[] = "lakesync::ErrorKindDetail";

class ErrorKindDetail : public arrow::StatusDetail {
 public:
  explicit ErrorKindDetail(ErrorKind kind, uint32_t flags = 0) : kind_(kind), flags_(flags) {}
  const char* type_id() const override { return kDetailTypeId; }
  std::string ToString() const override { return std::string(ErrorKindName(kind_)); }
  ErrorKind kind() const { return kind_; }
  uint32_t flags() const { return flags_; }

 private:
  ErrorKind kind_;
  uint32_t flags_;
};

const ErrorKindDetail* DetailOf(const Status& status) {
  auto detail = status.detail();
  if (detail && std::string_view(detail->type_id()) == kDetailTypeId) {
    return static_cast<const ErrorKindDetail*>(detail.get());
  }
  return nullptr;
}

arrow::StatusCode CodeFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNotFound:
      return arrow::StatusCode::KeyError;
    case ErrorKind::kAlreadyExists:
      return arrow::StatusCode::AlreadyExists;
    case ErrorKind::kInvalidArgument:
      return arrow::StatusCode::Invalid;
    case ErrorKind::kIO:
    case ErrorKind::kUnavailable:
      return arrow::StatusCode::IOError;
    case ErrorKind::kUnsupported:
      return arrow::StatusCode::NotImplemented;
    case ErrorKind::kCorrupt:
      return arrow::StatusCode::SerializationError;
    default:
      return arrow::StatusCode::UnknownError;
  }
}

}  // namespace

std::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUnknown: return "unknown";
    case ErrorKind::kNotFound: return "not found";
    case ErrorKind::kAlreadyExists: return "already exists";
    case ErrorKind::kInvalidArgument: return "invalid argument";
    case ErrorKind::kCommitConflict: return "commit conflict";
    case ErrorKind::kCommitStateUnknown: return "commit state unknown";
    case ErrorKind::kIO: return "I/O error";
    case ErrorKind::kCorrupt: return "corrupt data";
    case ErrorKind::kUnsupported: return "unsupported";
    case ErrorKind::kUnauthenticated: return "unauthenticated";
    case ErrorKind::kForbidden: return "forbidden";
    case ErrorKind::kUnavailable: return "unavailable";
    case ErrorKind::kNamespaceNotEmpty: return "namespace not empty";
  }
  return "unknown";
}

Status MakeError(ErrorKind kind, std::string message) {
  return Status(CodeFor(kind), std::move(message), std::make_shared<ErrorKindDetail>(kind));
}

ErrorKind KindOf(const Status& status) {
  if (status.ok()) return ErrorKind::kUnknown;
  if (auto detail = status.detail(); detail && std::string_view(detail->type_id()) == kDetailTypeId) {
    return static_cast<const ErrorKindDetail&>(*detail).kind();
  }
  switch (status.code()) {
    case arrow::StatusCode::KeyError: return ErrorKind::kNotFound;
    case arrow::StatusCode::AlreadyExists: return ErrorKind::kAlreadyExists;
    case arrow::StatusCode::Invalid:
    case arrow::StatusCode::TypeError:
    case arrow::StatusCode::IndexError: return ErrorKind::kInvalidArgument;
    case arrow::StatusCode::IOError: return ErrorKind::kIO;
    case arrow::StatusCode::NotImplemented: return ErrorKind::kUnsupported;
    case arrow::StatusCode::SerializationError: return ErrorKind::kCorrupt;
    default: return ErrorKind::kUnknown;
  }
}

Status WithContext(const Status& status, std::string_view context) {
  if (status.ok()) return status;
  return Status(status.code(), std::string(context) + ": " + status.message(), status.detail());
}

Status WithFlag(const Status& status, ErrorFlag flag) {
  if (status.ok()) return status;
  const ErrorKindDetail* detail = DetailOf(status);
  const uint32_t flags = (detail ? detail->flags() : 0) | static_cast<uint32_t>(flag);
  return Status(status.code(), status.message(), std::make_shared<ErrorKindDetail>(KindOf(status), flags));
}

bool HasFlag(const Status& status, ErrorFlag flag) {
  const ErrorKindDetail* detail = DetailOf(status);
  return detail != nullptr && (detail->flags() & static_cast<uint32_t>(flag)) != 0;
}

bool IsRetryable(const Status& status) {
  const ErrorKind kind = KindOf(status);
  return (kind == ErrorKind::kCommitConflict || kind == ErrorKind::kUnavailable) &&
         !HasFlag(status, ErrorFlag::kNotRetryable);
}

std::string EscapeInvalidUtf8(std::string_view text) {
  if (IsValidUtf8(text)) return std::string(text);
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  std::string out;
  out.reserve(text.size() + 16);
  size_t i = 0;
  while (i < text.size()) {
    // The sequence length its lead byte announces (0: not a lead byte), then the whole sequence checked.
    const uint8_t lead = bytes[i];
    const size_t length = lead < 0x80            ? 1
                          : (lead >> 5) == 0x06  ? 2
                          : (lead >> 4) == 0x0E  ? 3
                          : (lead >> 3) == 0x1E  ? 4
                                                 : 0;
    if (length != 0 && i + length <= text.size() && IsValidUtf8(text.substr(i, length))) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += fmt::format("\\x{:02x}", lead);
      ++i;
    }
  }
  return out;
}

}  // namespace lakesync
