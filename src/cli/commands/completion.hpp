// Completion code and the shell facts init, shell and completions share.
#pragma once

#include "../context.hpp"

#include <string>

namespace cudaenv::cli {

/// Completion code for a shell; `exe` is how to call cudaenv ("cudaenv" for the files in
/// completions/, the quoted absolute path in init's output).
std::string completion_code(const std::string& shell, const std::string& exe);

/// bash, zsh or fish, from $SHELL (bash when it is none of them).
std::string login_shell(const Context& ctx);

/// How to enable shell integration for the user's $SHELL (a hint line).
std::string enable_hint(const Context& ctx);

} // namespace cudaenv::cli
