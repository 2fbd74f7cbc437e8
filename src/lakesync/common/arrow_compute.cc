#include "lakesync/common/arrow_compute.h"

#include <arrow/compute/initialize.h>

namespace lakesync {

Status EnsureArrowCompute() {
  // A function-local static: registered by exactly one thread, the others wait for it.
  static const Status kRegistered = arrow::compute::Initialize();
  return kRegistered;
}

}  // namespace lakesync
