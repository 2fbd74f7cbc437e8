#include "lakesync/http/status_codes.h"

namespace lakesync::http {

int StatusCodeFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return 400;
    case ErrorKind::kUnauthenticated: return 401;
    case ErrorKind::kForbidden: return 403;
    case ErrorKind::kNotFound: return 404;
    case ErrorKind::kAlreadyExists:
    case ErrorKind::kCommitConflict:
    case ErrorKind::kNamespaceNotEmpty: return 409;
    case ErrorKind::kUnsupported: return 501;
    case ErrorKind::kUnavailable: return 503;
    case ErrorKind::kCommitStateUnknown:
    case ErrorKind::kIO:
    case ErrorKind::kCorrupt:
    case ErrorKind::kUnknown: return 500;
  }
  return 500;
}

ErrorKind ErrorKindForStatusCode(int status_code) {
  switch (status_code) {
    case 400:
    case 405:
    case 406:
    case 411:
    case 413:
    case 414:
    case 415:
    case 416:
    case 422: return ErrorKind::kInvalidArgument;
    case 401:
    case 419: return ErrorKind::kUnauthenticated;  // 419: the REST spec's "authentication timeout"
    case 403: return ErrorKind::kForbidden;
    case 404:
    case 410: return ErrorKind::kNotFound;
    case 409:
    case 412: return ErrorKind::kCommitConflict;
    case 501: return ErrorKind::kUnsupported;
    case 429:
    case 502:
    case 503:
    case 504: return ErrorKind::kUnavailable;
    default: break;
  }
  if (status_code >= 500) return ErrorKind::kUnknown;
  if (status_code >= 400) return ErrorKind::kInvalidArgument;
  return ErrorKind::kUnknown;
}

bool IsRetryableStatusCode(int status_code) {
  return status_code == 429 || status_code == 502 || status_code == 503 || status_code == 504;
}

std::string_view ReasonPhrase(int status_code) {
  switch (status_code) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 409: return "Conflict";
    case 412: return "Precondition Failed";
    case 416: return "Range Not Satisfiable";
    case 419: return "Authentication Timeout";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

}  // namespace lakesync::http
