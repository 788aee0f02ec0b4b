// The web studio's files (web/*.html, *.js, *.css), compiled into the binary by
// cmake/embed_files.cmake so that `potop serve` needs no files and no network.
#pragma once
#include <span>
#include <string_view>

namespace potop::serve {

struct WebAsset {
  std::string_view name;  // file name under web/, e.g. "index.html"
  std::string_view data;
};

std::span<const WebAsset> web_assets();

}  // namespace potop::serve
