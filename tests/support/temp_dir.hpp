// A fresh directory per test, removed afterwards (ccache's TestContext).
#pragma once

#include "core/fs.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>

namespace cudaenv::test {

/// cudaenv's own TempDir under the system's temporary folder, opened to all (0755) as a plain
/// mkdir would make it: a version under it must be loadable by other users.
class TempDir {
  public:
    TempDir() : m_dir(make()) {}

    const std::filesystem::path& path() const { return m_dir.path(); }

    /// Writes `content` to path()/rel, creating parent directories.
    std::filesystem::path write(const std::string& rel, std::string_view content) const {
        auto p = path() / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << content;
        return p;
    }

  private:
    static cudaenv::TempDir make() {
        auto made = cudaenv::TempDir::make(std::filesystem::temp_directory_path(), "cudaenv-test");
        if (!made) {
            std::abort();
        }
        std::filesystem::permissions(made->path(), std::filesystem::perms(0755));
        return std::move(made).value();
    }

    cudaenv::TempDir m_dir;
};

inline std::string read_all(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace cudaenv::test
