// Converts the statuses that arrow::fs returns into lakesync statuses with an ErrorKind, so that
// callers can tell "missing" from "broken" without parsing messages.
#pragma once

#include <string_view>

#include "lakesync/common/status.h"

namespace lakesync::io::internal {

// True when an arrow::fs status says the file (or bucket) does not exist. Every Arrow filesystem
// we use marks that with an ENOENT errno detail (local, S3 and GCS alike).
bool IsArrowNotFound(const Status& status);

// Classifies an Arrow filesystem error and prefixes "<verb> <location>: ". Already-classified
// statuses (ones that carry our ErrorKind detail) keep their kind.
Status FromArrow(const Status& status, std::string_view verb, std::string_view location);

}  // namespace lakesync::io::internal
