// The loss curve of a training run as an SVG image, from its metrics.jsonl.
#pragma once
#include <filesystem>
#include <string>

namespace potop {

// Training loss per step (thin line) and the evaluated train and validation losses (thick
// lines with points), with labelled axes. Throws potop::Error naming the file when it is
// missing, holds a line that is not JSON, or has no loss records.
std::string loss_curve_svg(const std::filesystem::path& metrics_jsonl);

}  // namespace potop
