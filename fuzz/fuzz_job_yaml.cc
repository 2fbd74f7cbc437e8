// Job files (engine): YAML (or JSON) text parsed and validated as a `lakesync run` job.
#include <cstdint>
#include <string_view>

#include "lakesync/common/yaml_json.h"
#include "lakesync/engine/job_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto document = lakesync::ParseYamlOrJson(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  if (!document.ok()) return 0;
  (void)lakesync::engine::ParseJobConfig(*document, "fuzz.yaml");
  return 0;
}
