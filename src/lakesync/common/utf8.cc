#include "lakesync/common/utf8.h"

#include <arrow/util/utf8.h>

#include <cstdint>

namespace lakesync {

bool IsValidUtf8(std::string_view text) {
  // Thread-safe once: a function-local static is initialised exactly once.
  static const bool initialized = (arrow::util::InitializeUTF8(), true);
  (void)initialized;
  return arrow::util::ValidateUTF8(reinterpret_cast<const uint8_t*>(text.data()),
                                   static_cast<int64_t>(text.size()));
}

}  // namespace lakesync
