#include "selection.hpp"

#include "../fs.hpp"
#include "../install/install.hpp"
#include "../manifest/codec.hpp"
#include "../spec.hpp"

#include <algorithm>
#include <tuple>

namespace cudaenv::activate {

namespace fs = std::filesystem;

std::string Selection::origin_text() const {
    switch (origin) {
    case Origin::environment:
        return "CUDAENV_VERSION";
    case Origin::file:
        return source.string();
    case Origin::global:
        return source.string() + " (global)";
    case Origin::system:
        return "system";
    }
    return "system";
}

std::optional<fs::path> find_version_file(const fs::path& dir) {
    std::error_code ec;
    for (fs::path d = dir; !d.empty(); d = d.parent_path()) {
        fs::path f = d / k_version_file;
        if (fs::is_regular_file(f, ec)) {
            return f;
        }
        if (d == d.root_path()) {
            break;
        }
    }
    return std::nullopt;
}

namespace {

std::string trim(std::string s) {
    auto not_space = [](unsigned char c) { return !std::isspace(c); };
    s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
    s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
    return s;
}

/// The first non-empty, non-comment line of a version file.
std::string first_word(const std::string& text) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto end = text.find('\n', pos);
        std::string line =
            trim(text.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
        if (!line.empty() && line[0] != '#') {
            return line.substr(0, line.find_first_of(" \t"));
        }
        if (end == std::string::npos) {
            break;
        }
        pos = end + 1;
    }
    return {};
}

/// A version name or SPEC as written: letters, digits and "._+-=@:~" only, never "." or "..".
/// A NUL once cut the name short so that versions/ itself was "selected"; control bytes were
/// echoed raw to the terminal.
/// No version or SPEC is longer (the longest real one, "tensorflow-2.13+cudnn-8.9.7.29", is 30).
constexpr std::size_t k_max_written = 128;

bool plain_version_text(std::string_view s) {
    if (s.empty() || s == "." || s == "..") {
        return false;
    }
    if (s.size() > k_max_written) {
        return false; // and never echoed whole: every message about it quotes 120 bytes at most
    }
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
               std::string_view("._+-=@:~").find(c) != std::string_view::npos;
    });
}

Error bad_version_text(std::string_view written, const std::string& where) {
    return Error(ErrorCode::usage,
                 where + " names '" + printable(written.substr(0, 120)) +
                     (written.size() > 120 ? "...'" : "'") +
                     ", which is no version or SPEC (too long, control bytes or characters no "
                     "version has)")
        .with_hint("cudaenv use SPEC rewrites it, or delete it");
}

} // namespace

Result<std::string> read_version_file(const fs::path& file) {
    auto text = read_file_prefix(file, k_max_version_file + 1);
    if (!text) {
        return read_text_file(file); // cannot be opened: the error names why
    }
    if (text->size() > k_max_version_file) {
        return Error(ErrorCode::usage,
                     "'" + file.string() + "' is larger than " +
                         std::to_string(k_max_version_file / 1024) +
                         " KiB: no .cuda-version cudaenv reads is")
            .with_hint("a .cuda-version holds a SPEC and optional `sm =` / `driver =` lines; "
                       "cudaenv use SPEC rewrites it, or delete it");
    }
    return std::move(*text);
}

Result<std::string> parse_version_file(std::string_view text, const std::string& where) {
    std::string written = first_word(std::string(text));
    if (written.empty()) {
        return Error(ErrorCode::usage, where + " names no version")
            .with_hint("cudaenv use SPEC rewrites it, or delete it");
    }
    if (!plain_version_text(written)) {
        return bad_version_text(written, where);
    }
    return written;
}

Result<std::string> match_installed(const store::Root& root,
                                    const std::vector<manifest::Framework>& frameworks,
                                    const std::string& written) {
    if (!plain_version_text(written)) {
        return bad_version_text(written, "the selection");
    }
    std::error_code ec;
    if (!written.empty() && written.find('/') == std::string::npos &&
        fs::exists(root.version_dir(written) / store::k_version_record, ec)) {
        return written; // the fast path shims take
    }
    auto not_installed = Error(ErrorCode::not_found, "version '" + written + "' is not installed")
                             .with_hint("cudaenv install " + written);
    if (auto other = store::other_platform_error(root, written)) {
        not_installed = std::move(*other); // installed, for another platform than this host's
    }
    std::vector<std::string> names;
    for (const auto& f : frameworks) {
        names.push_back(f.name);
        names.insert(names.end(), f.aliases.begin(), f.aliases.end());
    }
    auto spec = parse_spec(written, names);
    if (!spec) {
        return spec.error(); // no SPEC and no installed name: a usage error, saying why
    }
    std::optional<Version> cuda = spec->cuda;
    std::optional<Version> cudnn = spec->cudnn;
    if (spec->kind == Spec::Kind::framework) {
        const manifest::Framework* fw = nullptr;
        for (const auto& f : frameworks) {
            if (f.name == spec->framework ||
                std::find(f.aliases.begin(), f.aliases.end(), spec->framework) != f.aliases.end()) {
                fw = &f;
            }
        }
        const auto* row = fw ? fw->find(*spec->framework_version) : nullptr;
        if (!row) {
            return not_installed;
        }
        cuda = row->cuda;
        cudnn = row->cudnn;
        if (!row->variants.empty()) {
            // PyTorch's and JAX's builds: the one named (+cu121), else the default
            const auto* var =
                spec->variant.empty() ? row->default_one() : row->variant(spec->variant);
            if (!var) {
                return not_installed;
            }
            cuda = var->cuda_floor ? var->cuda_install.value_or(var->cuda.truncated(1)) : var->cuda;
            // the cuDNN's major only: resolve may have taken a newer one of the series or major
            // than the wheels pin (one the manifests carry), which the framework's rule accepts
            cudnn.reset();
            if (var->cudnn) {
                cudnn = var->cudnn->truncated(1);
            }
        }
    }
    if (!cuda) {
        return not_installed; // a cuDNN alone names no version
    }
    // Highest (prefer a bare CUDA when no cuDNN was asked for, CUDA version, cuDNN version).
    std::optional<std::string> best;
    std::tuple<bool, Version, Version> best_key;
    for (const auto& v : install::list_installed(root)) {
        if (!v.shadowed_by.empty()) {
            continue; // another root's copy of a name: the name means the winner
        }
        auto vc = Version::try_parse(v.cuda);
        auto vd = Version::try_parse(v.cudnn);
        if (!vc || !cuda->is_prefix_of(*vc)) {
            continue;
        }
        if (cudnn && (!vd || !cudnn->is_prefix_of(*vd))) {
            continue;
        }
        std::tuple<bool, Version, Version> key{!cudnn && !vd, *vc, vd.value_or(Version())};
        if (!best || key > best_key) {
            best = v.name;
            best_key = key;
        }
    }
    if (best) {
        return *best;
    }
    // Installed for another platform only (a shared root of x86_64 and Arm hosts): say which.
    for (const auto& p : store::placed_versions(root)) {
        if (p.this_host) {
            continue;
        }
        auto plus = p.name.find("+cudnn");
        auto vc = Version::try_parse(p.name.substr(0, plus));
        auto vd = plus == std::string::npos ? std::optional<Version>()
                                            : Version::try_parse(p.name.substr(plus + 6));
        if (vc && cuda->is_prefix_of(*vc) && (!cudnn || (vd && cudnn->is_prefix_of(*vd)))) {
            auto other = store::other_platform_error(root, p.name);
            if (other) {
                auto rest = other->message.find(" is installed for ");
                other->message =
                    "'" + written + "' matches '" + p.name + "'," + other->message.substr(rest + 3);
                return std::move(*other);
            }
        }
    }
    return not_installed;
}

std::string selected_framework_name(const std::map<std::string, std::string>& env,
                                    const fs::path& cwd) {
    std::string written;
    if (auto it = env.find("CUDAENV_VERSION"); it != env.end() && !trim(it->second).empty()) {
        written = trim(it->second);
    } else if (auto file = find_version_file(cwd)) {
        if (auto text = read_version_file(*file)) {
            if (auto w = parse_version_file(*text, file->string())) {
                written = *w;
            }
        }
    }
    auto spec = written.empty() ? Result<Spec>(Error(ErrorCode::usage, "")) : parse_spec(written);
    return spec && spec->kind == Spec::Kind::framework ? spec->framework : std::string();
}

Result<Selection> select(const store::Root& root,
                         const std::vector<manifest::Framework>& frameworks,
                         const std::map<std::string, std::string>& env,
                         const fs::path& cwd) {
    Selection s;
    if (auto it = env.find("CUDAENV_VERSION"); it != env.end() && !trim(it->second).empty()) {
        s.origin = Selection::Origin::environment;
        s.written = trim(it->second);
        if (!plain_version_text(s.written)) {
            return bad_version_text(s.written, "CUDAENV_VERSION");
        }
    } else if (auto file = find_version_file(cwd)) {
        auto text = CUDAENV_TRY(read_version_file(*file));
        s.written = CUDAENV_TRY(parse_version_file(text, "'" + file->string() + "'"));
        s.origin = Selection::Origin::file;
        s.source = *file;
    } else if (auto global = CUDAENV_TRY(store::effective_global(root)); global.version) {
        s.origin = Selection::Origin::global;
        s.written = *global.version;
        s.source = global.owner.state_file();
    } else {
        return s; // system
    }
    if (s.written == "system") {
        return s;
    }
    auto v = match_installed(root, frameworks, s.written);
    if (!v) {
        Error e = v.error();
        e.message += " (set by " + s.origin_text() + ")";
        return e;
    }
    s.version = *v;
    return s;
}

Result<Selection> select_lazily(const store::Root& root,
                                const std::function<fs::path()>& manifests,
                                const std::map<std::string, std::string>& env,
                                const fs::path& cwd) {
    auto sel = select(root, {}, env, cwd);
    if (!sel && sel.error().code == ErrorCode::not_found) {
        if (auto fws = manifest::load_frameworks(manifests(), selected_framework_name(env, cwd))) {
            sel = select(root, *fws, env, cwd);
        }
    }
    return sel;
}

std::optional<Version> parse_tensorflow_pin(std::string_view text, std::size_t* line_out) {
    return parse_requirement_pin(text, "tensorflow", line_out);
}

std::optional<Version>
parse_requirement_pin(std::string_view text, std::string_view name, std::size_t* line_out) {
    std::size_t line_no = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        auto end = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, end == std::string_view::npos ? text.npos : end - pos);
        pos = end == std::string_view::npos ? text.size() + 1 : end + 1;
        ++line_no;
        line = line.substr(0, line.find('#'));
        for (std::size_t at = line.find(name); at != std::string_view::npos;
             at = line.find(name, at + 1)) {
            if (at > 0) {
                char before = line[at - 1];
                if (std::isalnum(static_cast<unsigned char>(before)) || before == '_' ||
                    before == '.') {
                    continue;
                }
            }
            std::size_t i = at + name.size();
            if (name == "tensorflow") {
                for (std::string_view suffix : {"-gpu", "_gpu"}) {
                    if (line.substr(i, suffix.size()) == suffix) {
                        i += suffix.size();
                    }
                }
            }
            if (i < line.size() && line[i] == '[') {
                auto close = line.find(']', i);
                if (close == std::string_view::npos) {
                    continue;
                }
                i = close + 1;
            }
            if (i < line.size() &&
                (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '-')) {
                continue; // tensorflow-cpu, tensorflow-hub, tensorflow_datasets...
            }
            auto skip = [&](std::string_view chars) {
                while (i < line.size() && chars.find(line[i]) != std::string_view::npos) {
                    ++i;
                }
            };
            skip(" \t\"':");
            if (line.substr(i, 2) == "==" || line.substr(i, 2) == "~=") {
                i += 2;
            } else if (i < line.size() && line[i] == '=') {
                ++i; // conda "tensorflow=2.13", or Pipfile/TOML "tensorflow = \"==2.13\""
                skip(" \t\"'");
                if (line.substr(i, 2) == "==" || line.substr(i, 2) == "~=") {
                    i += 2;
                }
            } else {
                continue; // >=, <, no version: not a pin
            }
            skip(" \t\"'");
            std::size_t start = i;
            while (i < line.size() &&
                   (std::isdigit(static_cast<unsigned char>(line[i])) || line[i] == '.')) {
                ++i;
            }
            std::string_view ver = line.substr(start, i - start);
            while (!ver.empty() && ver.back() == '.') {
                ver.remove_suffix(1);
            }
            if (auto v = Version::try_parse(ver); v && v->size() >= 2) {
                if (line_out) {
                    *line_out = line_no;
                }
                return v;
            }
        }
    }
    return std::nullopt;
}

} // namespace cudaenv::activate
