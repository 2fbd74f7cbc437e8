// The dashboard's static files (HTML, JavaScript, CSS, the vendored uPlot), embedded into the binary at
// build time (cmake/EmbedAssets.cmake writes the definition), so `lakesync ui` serves them with no
// dependency on the source tree and the pages work offline.
#pragma once

#include <string_view>
#include <vector>

namespace lakesync::ui {

struct EmbeddedAsset {
  std::string_view path;  // the URL path it is served at, e.g. "/assets/app.js"
  std::string_view body;
};

const std::vector<EmbeddedAsset>& EmbeddedAssets();

// The Content-Type for a path by its extension (text/html, application/javascript, text/css, ...).
std::string_view ContentTypeFor(std::string_view path);

}  // namespace lakesync::ui
