// The one table between lakesync's error kinds and HTTP status codes, used by every server (REST
// catalog, Delta Sharing, UI) to answer and by every client to classify an answer. Protocol layers
// add their own error bodies; the codes come from here.
#pragma once

#include <string_view>

#include "lakesync/common/status.h"

namespace lakesync::http {

// 400 invalid argument, 401 unauthenticated, 403 forbidden, 404 not found, 409 already exists /
// commit conflict / namespace not empty, 501 unsupported, 503 unavailable, 500 otherwise (corrupt
// data, I/O and unknown errors are server faults the client cannot fix). kCommitStateUnknown maps to
// 500 too: the REST spec's "the commit may or may not have happened" answer (clients treat any 5xx on
// a commit as unknown).
int StatusCodeFor(ErrorKind kind);

// The kind a client should act on for a non-2xx answer: 409 is a conflict (reload and retry), 429,
// 502, 503 and 504 are unavailable (retry later), other 5xx are unknown server errors.
ErrorKind ErrorKindForStatusCode(int status_code);

// Whether a request that got this answer may simply be sent again (rate limits and overloads).
bool IsRetryableStatusCode(int status_code);

std::string_view ReasonPhrase(int status_code);

}  // namespace lakesync::http
