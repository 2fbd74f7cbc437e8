#pragma once
// One UTF-8 check for the whole engine. Arrow's validator needs a one-time table set-up
// (arrow::util::InitializeUTF8) before its first use; this is the one place that does it, so no
// caller depends on some other Arrow component having done it first. EscapeInvalidUtf8 (status.h),
// the YAML/JSON reader and the CSV reader all check text here.

#include <string_view>

namespace lakesync {

// True when every byte of `text` belongs to a well-formed UTF-8 sequence (no overlong forms, no
// surrogates, nothing above U+10FFFF). The empty string is valid.
bool IsValidUtf8(std::string_view text);

}  // namespace lakesync
