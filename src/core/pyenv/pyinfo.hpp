// Values read from the Python files that frameworks write at build time, without running Python:
// TensorFlow's tensorflow/python/platform/build_info.py and PyTorch's torch/version.py.
//
// Every layout real wheels have shipped is understood:
// - TF 1.13-2.2: module constants, `is_cuda_build = True`, `cuda_version_number = '10.1'`;
// - TF 2.3 on: `build_info = collections.OrderedDict([('cuda_version', '11.2'), ...])`,
//   and a plain dict literal `build_info = {'cuda_version': '11.2', ...}`;
// - torch: `cuda = '12.1'`, `cuda: Optional[str] = '12.1'`, or `None` for a CPU build.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cudaenv::pyenv {

/// The literal bound to `key`: as a module assignment (`key = V`, `key: T = V`), a dict entry
/// (`'key': V`) or a pair in a list of tuples (`('key', V)`). A quoted string comes back
/// without its quotes; True, False, None and numbers as written. The first binding wins.
std::optional<std::string> python_literal(std::string_view text, std::string_view key);

struct TfBuildInfo {
    bool cuda_build = false;          ///< is_cuda_build is True
    std::optional<std::string> cuda;  ///< "11.8" (cuda_version, or cuda_version_number)
    std::optional<std::string> cudnn; ///< "8" or "8.6" (cudnn_version[_number])
};

TfBuildInfo parse_tf_build_info(std::string_view text);

/// torch/version.py's `cuda`, unless it is None (a CPU build).
std::optional<std::string> parse_torch_cuda(std::string_view text);

} // namespace cudaenv::pyenv
