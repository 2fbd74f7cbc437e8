#include <arrow/util/io_util.h>

#include <cerrno>
#include <string>

#include "lakesync/io/arrow_errors_internal.h"
#include "lakesync/io/object_stores_internal.h"

namespace lakesync::io::internal {
namespace {

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

bool HasOurKind(const Status& status) {
  return status.detail() && std::string_view(status.detail()->type_id()) == "lakesync::ErrorKindDetail";
}

// The object-store SDKs report the service's verdict only in the message: Arrow's S3 layer writes
// "AWS Error <NAME> during <Operation> operation" (or "... UNKNOWN (HTTP status 403) ...") and its
// GCS layer embeds "google::cloud::Status(<CODE>: ...)". Those names are stable API of the SDKs,
// so matching them is how a caller learns "retry later" or "check your credentials".
ErrorKind KindFromObjectStoreMessage(std::string_view message) {
  static constexpr std::string_view kUnavailableMarkers[] = {
      "NETWORK_CONNECTION", "SERVICE_UNAVAILABLE", "SLOW_DOWN",  "THROTTLING",
      // 429 without an SDK name (a store's own throttling answer) is as transient as SLOW_DOWN.
      "REQUEST_TIMEOUT",    "INTERNAL_FAILURE",    "HTTP status 429", "HTTP status 500", "HTTP status 502",
      "HTTP status 503",    "HTTP status 504",     "UNAVAILABLE:", "DEADLINE_EXCEEDED:",
      "RESOURCE_EXHAUSTED:"};
  static constexpr std::string_view kUnauthenticatedMarkers[] = {
      "INVALID_ACCESS_KEY_ID", "SIGNATURE_DOES_NOT_MATCH", "EXPIRED_TOKEN",
      "MISSING_AUTHENTICATION_TOKEN", "HTTP status 401", "UNAUTHENTICATED:"};
  static constexpr std::string_view kForbiddenMarkers[] = {"ACCESS_DENIED", "HTTP status 403",
                                                           "PERMISSION_DENIED:"};
  for (std::string_view marker : kUnauthenticatedMarkers) {
    if (Contains(message, marker)) return ErrorKind::kUnauthenticated;
  }
  for (std::string_view marker : kForbiddenMarkers) {
    if (Contains(message, marker)) return ErrorKind::kForbidden;
  }
  for (std::string_view marker : kUnavailableMarkers) {
    if (Contains(message, marker)) return ErrorKind::kUnavailable;
  }
  return ErrorKind::kIO;
}

ErrorKind Classify(const Status& status) {
  switch (arrow::internal::ErrnoFromStatus(status)) {
    case ENOENT:
      return ErrorKind::kNotFound;
    case EEXIST:
      return ErrorKind::kAlreadyExists;
    case EACCES:
    case EPERM:
    case EROFS:
      return ErrorKind::kForbidden;
    default:
      break;
  }
  switch (status.code()) {
    case arrow::StatusCode::NotImplemented:
      return ErrorKind::kUnsupported;
    case arrow::StatusCode::Invalid:
      return ErrorKind::kInvalidArgument;
    case arrow::StatusCode::AlreadyExists:
      return ErrorKind::kAlreadyExists;
    default:
      return KindFromObjectStoreMessage(status.message());
  }
}

}  // namespace

bool IsArrowNotFound(const Status& status) {
  if (status.ok()) return false;
  if (HasOurKind(status)) return KindOf(status) == ErrorKind::kNotFound;
  return arrow::internal::ErrnoFromStatus(status) == ENOENT;
}

bool RetriedToTheSdkLimit(const Status& status) {
  if (status.ok()) return false;
  const std::string_view message = status.message();
  // google-cloud-cpp's words when its retry policy gives up (limited by gcs.retry-limit-seconds).
  if (Contains(message, "Retry policy exhausted")) return true;
  // The AWS SDK's curl errors CURLE_COULDNT_RESOLVE_HOST (6) and CURLE_COULDNT_CONNECT (7): no
  // connection was made, which its retry strategy (every error the SDK marks retryable) retried. A
  // connection dropped mid-answer (curl 18, 52, 56) is not among them: FileIO still retries those.
  return Contains(message, "NETWORK_CONNECTION") &&
         (Contains(message, "curlCode: 6,") || Contains(message, "curlCode: 7,"));
}

Status FromArrow(const Status& status, std::string_view verb, std::string_view location) {
  if (status.ok()) return status;
  const std::string context = fmt::format("{} {}", verb, location);
  if (HasOurKind(status)) return WithContext(status, context);
  // The errno detail ("[errno 13] Permission denied") is often the most useful part of a local
  // error, and our own detail replaces Arrow's, so it moves into the message.
  std::string message = fmt::format("{}: {}", context, status.message());
  if (status.detail()) message += fmt::format(" ({})", status.detail()->ToString());
  const ErrorKind kind = Classify(status);
  if (kind == ErrorKind::kUnavailable) {
    // The SDK has already retried for its whole budget: say so, and which settings bound it.
    if (location.substr(0, 5) == "gs://") {
      message += fmt::format("; no usable answer from Google Cloud Storage within the retry limit "
                             "(gcs.retry-limit-seconds, {:.0f} s unless set): check the network, gcs.endpoint "
                             "and the credentials",
                             kDefaultGcsRetryLimitSeconds);
    } else if (location.substr(0, 2) == "s3") {
      message += "; no usable answer from S3 after the SDK's retries (s3.connect-timeout, s3.request-timeout): "
                 "check the network, s3.endpoint and the credentials";
    }
  }
  return MakeError(kind, std::move(message));
}

}  // namespace lakesync::io::internal
