#include "codec.hpp"

#include "../fs.hpp"
#include "nvidia_redist.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>

namespace cudaenv::manifest {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

bool is_safe_relative_path(std::string_view s) {
    if (s.empty() || s.front() == '/') {
        return false;
    }
    for (char c : s) {
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '.' || c == '_' || c == '+' || c == '~' || c == '-' || c == '/';
        if (!plain) {
            return false;
        }
    }
    std::size_t start = 0;
    while (start <= s.size()) {
        std::size_t end = s.find('/', start);
        if (end == std::string_view::npos) {
            end = s.size();
        }
        std::string_view seg = s.substr(start, end - start);
        if (seg.empty() || seg == "." || seg == "..") {
            return false;
        }
        start = end + 1;
    }
    return true;
}

Result<std::string> join_url(std::string_view base, std::string_view rel, std::string_view what) {
    if (!is_safe_relative_path(rel)) {
        std::string shown = printable(rel.substr(0, 200));
        return Error(ErrorCode::integrity,
                     std::string(what) + ": unsafe path '" + shown +
                         "' (only letters, digits and ._+~- between slashes; no '..' or "
                         "percent-encoding)")
            .with_hint("the manifest or index is bad; nothing was requested");
    }
    std::string url(base);
    while (!url.empty() && url.back() == '/') {
        url.pop_back();
    }
    return url + "/" + std::string(rel);
}

bool is_safe_https_url(std::string_view url) {
    if (url.rfind("https://", 0) != 0) {
        return false;
    }
    std::string lower;
    for (char c : url) {
        auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u >= 0x7f || c == '\\') {
            return false;
        }
        lower += static_cast<char>(std::tolower(u));
    }
    for (std::string_view bad : {"%2e", "%2f", "%5c", "%25", "/../", "/./", "//"}) {
        if (lower.find(bad, 8) != std::string::npos) {
            return false;
        }
    }
    return !(lower.ends_with("/..") || lower.ends_with("/."));
}

} // namespace cudaenv::manifest
