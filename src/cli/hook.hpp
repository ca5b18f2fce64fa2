// The shell hook and the shell-code helpers shared by init, shell and the hook. Kept apart from
// the command table so that the small cudaenv-shim executable can serve the hook.
#pragma once

#include "context.hpp"

#include <optional>
#include <string>

namespace cudaenv::cli {

inline std::string q(const std::string& v) {
    std::string out = "'";
    for (char c : v) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

inline std::string shell_of(const Context& ctx, const std::string& given) {
    if (!given.empty()) {
        return given;
    }
    return ctx.getenv("CUDAENV_SHELL").value_or("bash");
}

inline std::string
set_var(const std::string& shell, const std::string& k, const std::optional<std::string>& v) {
    if (shell == "fish") {
        return v ? "set -gx " + k + " " + q(*v) + ";\n" : "set -e " + k + ";\n";
    }
    return v ? "export " + k + "=" + q(*v) + ";\n" : "unset " + k + ";\n";
}

/// Prints the shell code that brings CUDA_HOME, CUDA_PATH and LD_LIBRARY_PATH in step with the
/// directory's version (CUDAENV_VERSION or .cuda-version), undoing only what it added before.
/// Prints nothing when nothing changes.
int run_hook(const std::string& shell, Context& ctx);

} // namespace cudaenv::cli
