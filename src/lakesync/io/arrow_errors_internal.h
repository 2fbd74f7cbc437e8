// Converts the statuses that arrow::fs returns into lakesync statuses with an ErrorKind, so that
// callers can tell "missing" from "broken" without parsing messages.
#pragma once

#include <string_view>

#include "lakesync/common/status.h"

namespace lakesync::io::internal {

// True when an arrow::fs status says the file (or bucket) does not exist. Every Arrow filesystem
// we use marks that with an ENOENT errno detail (local, S3 and GCS alike).
bool IsArrowNotFound(const Status& status);

// True when the object store's SDK reports that it already retried this error for its whole budget:
// google-cloud-cpp says "Retry policy exhausted" (after gcs.retry-limit-seconds), and a connection the
// AWS SDK could not make at all (curl: host not resolved, or could not connect) was retried by Arrow's
// S3 retry strategy for its 6 s. FileIO's own in-place read retries skip these: on top of the SDK's
// they made an unreachable endpoint take five budgets plus 3 s (S3: 33 s; GCS at its 60 s limit: 5 min)
// to fail instead of the one the error message names.
bool RetriedToTheSdkLimit(const Status& status);

// Classifies an Arrow filesystem error and prefixes "<verb> <location>: ". Already-classified
// statuses (ones that carry our ErrorKind detail) keep their kind.
Status FromArrow(const Status& status, std::string_view verb, std::string_view location);

}  // namespace lakesync::io::internal
