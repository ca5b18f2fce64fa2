// A fresh directory per test, removed afterwards (ccache's TestContext).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace cudaenv::test {

class TempDir {
  public:
    TempDir() {
        std::string tmpl =
            (std::filesystem::temp_directory_path() / "cudaenv-test-XXXXXX").string();
        if (!::mkdtemp(tmpl.data())) {
            std::abort();
        }
        m_path = tmpl;
        // as a plain mkdir would make it: a version under it must be loadable by other users
        std::filesystem::permissions(m_path, std::filesystem::perms(0755));
    }

    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }

    const std::filesystem::path& path() const { return m_path; }

    /// Writes `content` to path()/rel, creating parent directories.
    std::filesystem::path write(const std::string& rel, std::string_view content) const {
        auto p = m_path / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << content;
        return p;
    }

  private:
    std::filesystem::path m_path;
};

inline std::string read_all(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace cudaenv::test
