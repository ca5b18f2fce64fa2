// `cudaenv env --for uv|pip|conda|pixi`: the variables Python installers read, so that the wheels
// and packages they pick follow the selected CUDA -- uv's UV_TORCH_BACKEND, PyTorch's variant
// index for pip, conda's and pixi's CONDA_OVERRIDE_CUDA (the __cuda virtual package) -- and the
// GPU architectures to build for (CMake's CUDAARCHS, PyTorch's TORCH_CUDA_ARCH_LIST), from the
// GPUs present or, on a machine without one (CI), the target .cuda-version names.
#pragma once

#include "../error.hpp"
#include "../manifest/model.hpp"
#include "project.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudaenv::activate {

/// What the machine is built for: compute capabilities (86 for 8.6) and its driver.
struct Target {
    std::vector<unsigned> sms; ///< sorted, unique
    std::string sms_from;      ///< "the GPUs present (0000:65:00.0 GH100)", ".cuda-version"
    std::optional<Version> driver;
    std::string driver_from;
};

/// The target lines of a .cuda-version, after its version (docs/spec.md):
///   sm = 8.0, 9.0        (or "80 90"; compute capabilities)
///   driver = 550.54.15   (the oldest driver the target machines run)
/// Other lines are not the target's. A malformed target line is a usage error naming `where`.
Result<Target> parse_target(std::string_view version_file_text, const std::string& where);

struct Bridge {
    std::vector<std::pair<std::string, std::string>> vars; ///< in print order
    std::vector<std::string> notes;                        ///< for stderr: how each was chosen
};

/// The variables for `tool` ("uv", "pip", "conda", "pixi") given the selected CUDA, the
/// project's framework (a PyTorch pin picks its release's build; none: the newest release the
/// manifests know) and the target. usage for an unknown tool.
Result<Bridge> bridge_for(std::string_view tool,
                          const Version& cuda,
                          const manifest::Catalog& catalog,
                          const std::optional<FrameworkPin>& pin,
                          const Target& target);

} // namespace cudaenv::activate
