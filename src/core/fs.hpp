// Small file helpers for cudaenv's own files (not the system under the sysroot).
#pragma once

#include "error.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace cudaenv {

/// Reads a whole file. ErrorCode::filesystem names the path and the errno text.
Result<std::string> read_text_file(const std::filesystem::path& path);

/// Writes `content` to `path` so that readers see the old file or the new one, never a part:
/// a temporary file in the same directory, fsync, rename over `path`, fsync of the directory.
/// The new file gets `mode` regardless of the umask.
Status write_file_atomic(const std::filesystem::path& path,
                         std::string_view content,
                         unsigned mode = 0644);

/// "errno text" for the current errno, as "No such file or directory".
std::string errno_text(int err);

} // namespace cudaenv
