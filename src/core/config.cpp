#include "config.hpp"

#include "fs.hpp"
#include "manifest/advisories.hpp"
#include "manifest/model.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace cudaenv {

namespace fs = std::filesystem;

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return s;
}

bool has_control(std::string_view s) {
    for (char ch : s) {
        auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7f) {
            return true;
        }
    }
    return false;
}

} // namespace

Result<SystemConfig> parse_system_config(std::string_view text, const fs::path& file) {
    SystemConfig cfg;
    cfg.file = file;
    cfg.present = true;
    std::size_t lineno = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto end = text.find('\n', pos);
        std::string_view raw =
            text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
        pos = end == std::string_view::npos ? text.size() : end + 1;
        ++lineno;
        auto where = file.string() + ":" + std::to_string(lineno) + ": ";
        auto bad = [&](const std::string& what) {
            return Error(ErrorCode::usage, printable(where + what))
                .with_hint("fix or remove the line (docs/packaging.md lists the settings)");
        };
        if (auto hash = raw.find('#'); hash != std::string_view::npos) {
            raw = raw.substr(0, hash);
        }
        auto line = trim(raw);
        if (line.empty()) {
            continue;
        }
        auto eq = line.find('=');
        if (eq == std::string_view::npos) {
            return bad("expected 'key = value', got '" + std::string(line) + "'");
        }
        std::string key(trim(line.substr(0, eq)));
        std::string value(trim(line.substr(eq + 1)));
        if (has_control(value)) {
            return bad("the value of '" + key + "' holds a control character");
        }
        if (value.empty()) {
            return bad("'" + key + "' has no value");
        }
        if (key == "root" || key == "manifests") {
            if (value.front() != '/') {
                return bad("'" + key + "' must be an absolute path, got '" + value + "'");
            }
            (key == "root" ? cfg.root : cfg.manifests) = value;
        } else if (key == "mirror" || key == "channel") {
            if (value.rfind("https://", 0) != 0 && value.rfind("http://", 0) != 0) {
                return bad("'" + key + "' must be an http:// or https:// URL, got '" + value + "'");
            }
            (key == "mirror" ? cfg.mirror : cfg.channel) = value;
        } else if (key == "platform") {
            if (!manifest::is_platform(value)) {
                return bad("'platform' must be " + manifest::platform_list() + ", got '" + value +
                           "'");
            }
            cfg.platform = value;
        } else if (key == "acknowledge") {
            // acknowledge = NVIDIA-5614 the R535 fleet is replaced in January
            auto space = value.find_first_of(" \t");
            std::string id = value.substr(0, space);
            std::string reason =
                space == std::string::npos ? std::string() : std::string(trim(value.substr(space)));
            if (!manifest::is_advisory_id(id)) {
                return bad("'acknowledge' needs an advisory id (NVIDIA-5614), got '" + id + "'");
            }
            if (reason.empty()) {
                return bad("'acknowledge = " + id +
                           "' needs the reason after the id (it is shown wherever the advisory "
                           "would be)");
            }
            cfg.acknowledged.push_back({id, reason, lineno});
        } else {
            return bad("unknown setting '" + key +
                       "' (known: root, mirror, channel, manifests, platform, acknowledge)");
        }
    }
    return cfg;
}

Result<SystemConfig> load_system_config(const fs::path& sysroot) {
    fs::path file = sysroot / k_system_config;
    // open(2), not an ifstream: a filebuf builds the locale, in the shim at every tool call
    Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        SystemConfig none;
        none.file = file;
        if (errno != ENOENT && errno != ENOTDIR) {
            return Error(ErrorCode::filesystem,
                         "cannot read '" + file.string() + "': " + errno_text(errno));
        }
        return none;
    }
    auto text = read_text_fd(fd.get(), file);
    // as the ifstream read it: a file that cannot be read (a directory) holds no settings
    return parse_system_config(text ? *text : std::string(), file);
}

fs::path under_sysroot(const fs::path& sysroot, std::string_view inside) {
    while (!inside.empty() && inside.front() == '/') {
        inside.remove_prefix(1);
    }
    return sysroot / inside;
}

} // namespace cudaenv
