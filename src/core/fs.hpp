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

/// 16 hex digits from the kernel's random source: temporary names nobody can predict (and so
/// plant something at beforehand).
std::string random_hex();

/// A temporary name cudaenv made for `base` in its folder: "." + base + ".tmp-" + 16 hex digits.
std::string temp_name(std::string_view base);

/// True for exactly the names temp_name(base) makes: a sweep removes only those.
bool is_temp_name(std::string_view name, std::string_view base);

/// After a kill -9: removes the regular files in `dir` named temp_name(base) and owned by this
/// user (never a link, a folder or another user's file). Best effort.
void sweep_temp_files(const std::filesystem::path& dir, std::string_view base);

} // namespace cudaenv
