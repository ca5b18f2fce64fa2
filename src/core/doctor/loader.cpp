// The loader's view: ld.so.conf and its includes, the cache, default folders, which file a SONAME
// resolves to and what it shadows, and which package owns a file.
#include "loader.hpp"

#include "../text.hpp"
#include "answers.hpp"
#include "text.hpp"

#include <fnmatch.h>

#include <cctype>
#include <set>

namespace cudaenv::doctor {

namespace fs = std::filesystem;
using detail::join_machine;
using detail::lines_of;
using detail::trim;

Loader::Loader(const Files& files) : m_files(files) {}

const std::vector<ConfEntry>& Loader::conf_dirs() {
    if (m_conf) {
        return *m_conf;
    }
    std::vector<ConfEntry> out;
    std::set<std::string> seen_files;
    // ld.so.conf and what it includes, in order; globs expand sorted, as ldconfig does.
    auto parse = [&](auto& self, const std::string& file, int depth) -> void {
        if (depth > 8 || !seen_files.insert(file).second) {
            return;
        }
        auto text = m_files.read(file);
        if (!text) {
            return;
        }
        for (auto line : lines_of(*text)) {
            line = trim(line.substr(0, line.find('#')));
            if (line.empty() || line.rfind("hwcap ", 0) == 0) {
                continue;
            }
            if (line.rfind("include", 0) == 0 && line.size() > 7 &&
                std::isspace(static_cast<unsigned char>(line[7]))) {
                std::string pattern = trim(line.substr(8));
                if (!pattern.empty() && pattern[0] != '/') {
                    pattern = join_machine(fs::path(file).parent_path().string(), pattern);
                }
                auto slash = pattern.rfind('/');
                std::string dir = pattern.substr(0, slash == 0 ? 1 : slash);
                std::string glob = pattern.substr(slash + 1);
                for (const auto& name : m_files.list(dir)) {
                    if (::fnmatch(glob.c_str(), name.c_str(), 0) == 0) {
                        self(self, join_machine(dir, name), depth + 1);
                    }
                }
                continue;
            }
            // "dir" or "dir=TYPE"; several may share a line
            for (auto word : words(line, " \t,:")) {
                std::string dir(word.substr(0, word.find('=')));
                while (dir.size() > 1 && dir.back() == '/') {
                    dir.pop_back();
                }
                if (!dir.empty()) {
                    out.push_back({dir, file});
                }
            }
        }
    };
    parse(parse, "/etc/ld.so.conf", 0);
    return *(m_conf = std::move(out));
}

const std::vector<CacheEntry>& Loader::ld_cache() {
    if (m_ld_cache) {
        return *m_ld_cache;
    }
    std::vector<CacheEntry> out;
    sys::Ldconfig ldconfig = ld_cache_command();
    // what `ldconfig -p` prints is the cache file's content, read by that ldconfig
    std::optional<Answers::Runner> remembered;
    if (auto* answers = m_files.config().answers) {
        remembered.emplace(*answers,
                           m_files.processes(),
                           std::vector<std::filesystem::path>{m_files.at("/etc/ld.so.cache")});
        ldconfig.processes = &*remembered;
    }
    if (!m_files.exists("/etc/ld.so.cache")) {
        m_ld_cache_error = "there is no loader cache (/etc/ld.so.cache)";
    } else if (auto text = sys::print_ld_cache(ldconfig); !text) {
        m_ld_cache_error = text.error().message;
    } else {
        out = sys::parse_ld_cache(*text);
    }
    return *(m_ld_cache = std::move(out));
}

sys::Ldconfig Loader::ld_cache_command() const {
    sys::Ldconfig ldconfig;
    ldconfig.path = m_files.config().ldconfig;
    ldconfig.sysroot = m_files.sysroot();
    ldconfig.processes = &m_files.processes();
    return ldconfig;
}

void Loader::prefetch_ld_cache() {
    auto* answers = m_files.config().answers;
    if (m_ld_cache || !answers || !m_files.exists("/etc/ld.so.cache")) {
        return;
    }
    // the command ld_cache() runs, built by the same code, started now
    sys::Ldconfig ldconfig = ld_cache_command();
    Answers::Runner early(*answers,
                          m_files.processes(),
                          std::vector<std::filesystem::path>{m_files.at("/etc/ld.so.cache")},
                          true);
    ldconfig.processes = &early;
    (void)sys::print_ld_cache(ldconfig);
}

const std::string& Loader::ld_cache_error() {
    (void)ld_cache();
    return m_ld_cache_error;
}

std::vector<std::string> Loader::default_lib_dirs() const {
    // the machine's own triplet (an arm64 sysroot diagnosed from an x86 host is aarch64)
    std::string triplet = m_files.triplet();
    std::vector<std::string> out;
    if (!triplet.empty()) {
        out = {"/lib/" + triplet, "/usr/lib/" + triplet};
    }
    for (const char* dir : {"/lib64", "/usr/lib64", "/lib", "/usr/lib"}) {
        out.emplace_back(dir);
    }
    return out;
}

std::string Loader::package_owner(std::string_view machine_path) {
    std::string real = m_files.canonical(machine_path);
    if (auto it = m_owners.find(real); it != m_owners.end()) {
        return it->second;
    }
    // dpkg's lists name files as the package ships them (/lib/x86_64-linux-gnu/… on a merged-/usr
    // machine is /usr/lib/…): compare the real files of the lines that end in the same name.
    std::string name = fs::path(real).filename().string();
    std::string owner;
    for (const auto& list : m_files.list("/var/lib/dpkg/info")) {
        if (list.size() < 6 || list.compare(list.size() - 5, 5, ".list") != 0) {
            continue;
        }
        auto text = m_files.read("/var/lib/dpkg/info/" + list);
        if (!text) {
            continue;
        }
        std::string_view rest = *text;
        while (!rest.empty() && owner.empty()) {
            auto nl = rest.find('\n');
            std::string_view line = rest.substr(0, nl);
            rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
            if (line.size() > name.size() && line.ends_with(name) &&
                line[line.size() - name.size() - 1] == '/' && m_files.canonical(line) == real) {
                owner = list.substr(0, list.size() - 5);
                owner = owner.substr(0, owner.find(':')); // libcudnn8:amd64 -> libcudnn8
            }
        }
        if (!owner.empty()) {
            break;
        }
    }
    m_owners.emplace(real, owner);
    return owner;
}

LoaderPick Loader::pick(std::string_view soname) {
    LoaderPick p;
    p.soname = soname;
    std::vector<std::string> candidates; // every copy, in the loader's order
    std::set<std::string> real_seen;
    auto consider = [&](const std::string& dir, const char* via) {
        auto file = join_machine(dir, soname);
        if (!m_files.exists(file) || m_files.is_dir(file)) {
            return;
        }
        if (p.path.empty() && via) {
            p.path = file;
            p.via = via;
        }
        candidates.push_back(file);
    };
    for (const auto& dir : m_files.path_list("LD_LIBRARY_PATH")) {
        consider(dir, "LD_LIBRARY_PATH");
    }
    const auto& cache = ld_cache();
    // Real folders and files, never names: on a merged-/usr machine /lib/x86_64-linux-gnu and
    // /usr/lib/x86_64-linux-gnu are one folder, and ldconfig records only the first name.
    std::set<std::string> cached_dirs, cached_files;
    for (const auto& e : cache) {
        if (e.soname == soname) {
            if (p.path.empty() && m_files.exists(e.path)) {
                p.path = e.path;
                p.via = "ld.so.cache";
            }
            candidates.push_back(e.path);
            cached_dirs.insert(m_files.canonical(fs::path(e.path).parent_path().string()));
            cached_files.insert(m_files.canonical(e.path));
        }
    }
    for (const auto& c : conf_dirs()) {
        auto file = join_machine(c.dir, soname);
        if (m_files.exists(file) && !m_files.is_dir(file)) {
            candidates.push_back(file);
            if (!cached_dirs.count(m_files.canonical(c.dir)) &&
                !cached_files.count(m_files.canonical(file)) && ld_cache_error().empty()) {
                p.not_in_cache.push_back(file);
            }
        }
    }
    for (const auto& dir : default_lib_dirs()) {
        consider(dir, "default directories");
    }
    // Shadowed: other real files (the same file reached through several folders is one copy).
    std::string chosen = p.path.empty() ? std::string() : m_files.canonical(p.path);
    real_seen.insert(chosen);
    for (const auto& c : candidates) {
        auto real = m_files.canonical(c);
        if (real_seen.insert(real).second) {
            p.shadowed.push_back(c);
        }
    }
    return p;
}

} // namespace cudaenv::doctor
