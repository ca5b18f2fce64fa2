// SPEC: what a user asks for (docs/spec.md has the grammar with examples).
//
//   tf-2.13 | tensorflow-2.13 | tensorflow==2.13.1     a framework release's tested pair
//   torch-2.5 | torch-2.5+cu121 | jax-0.4.30            PyTorch's PyPI variant or a named one; JAX
//   11.8 | 11.8.0 | cuda-11.8                          newest matching CUDA release
//   cudnn-8.6 | cudnn-8.9.7.29                          a cuDNN (needs a CUDA: --cuda)
//   11.8+cudnn-8.6 | cuda-11.8.0+cudnn8.6.0.163         an explicit CUDA + cuDNN pair
//
// Parsing is pure text; whether a framework name or a version exists is decided by resolve.
#pragma once

#include "error.hpp"
#include "version.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv {

struct Spec {
    enum class Kind { framework, cuda, cudnn, pair };

    Kind kind = Kind::cuda;
    std::string text;      ///< as written
    std::string framework; ///< as written ("tf", "tensorflow"); framework kind only
    std::optional<Version> framework_version;
    std::string variant; ///< "cu121", "cuda12": a framework's named CUDA build; framework kind only
    std::optional<Version> cuda;
    std::optional<Version> cudnn;
};

/// Parses a SPEC. `framework_names` (names and aliases the manifests know) only feed the
/// "did you mean" hint of a misspelt prefix; any name is accepted as a framework.
/// Errors are ErrorCode::usage with one line and a hint.
Result<Spec> parse_spec(std::string_view text,
                        const std::vector<std::string>& framework_names = {});

} // namespace cudaenv
