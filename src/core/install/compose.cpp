#include "compose.hpp"

#include "../activate/compat.hpp"
#include "../archive/links.hpp"
#include "../archive/names.hpp"
#include "../fs.hpp"
#include "../store/records.hpp"
#include "../store/root.hpp"
#include "../sys/platform.hpp"
#include "../sys/process.hpp"

#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <set>

extern char** environ;

namespace cudaenv::install {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

Error layout_error(const std::string& what) {
    return Error(ErrorCode::integrity, what);
}

Error fs_err(const std::string& what, const fs::path& p, int err) {
    return Error(ErrorCode::filesystem, what + " '" + p.string() + "': " + errno_text(err));
}

bool is_library_name(const std::string& base) {
    if (base.rfind("lib", 0) != 0) {
        return false;
    }
    return base.find(".so") != std::string::npos ||
           (base.size() > 2 && base.compare(base.size() - 2, 2, ".a") == 0);
}

bool is_header_path(const std::string& path) {
    return path.size() > 2 && path.compare(path.size() - 2, 2, ".h") == 0 &&
           (path.rfind("include/", 0) == 0 || path.find("/include/") != std::string::npos);
}

std::string base_of(const std::string& p) {
    auto s = p.rfind('/');
    return s == std::string::npos ? p : p.substr(s + 1);
}

bool same_content(const fs::path& a, const fs::path& b) {
    auto x = read_text_file(a);
    auto y = read_text_file(b);
    return x && y && *x == *y;
}

struct Composer {
    fs::path root;
    std::map<std::string, std::string> origin; ///< dest path -> store file it came from
    std::uint64_t bytes = 0;
    std::size_t files = 0;
    std::map<std::string, std::string> folded; ///< collision_key -> the path that has it
    /// Only plan: nothing is written, every path is recorded here (version_tree()).
    std::map<std::string, VersionFile>* plan = nullptr;

    /// Refuses a path (or one of its folders) that another path of the version becomes on a
    /// case-insensitive or normalising filesystem. The extractor refuses such twins within one
    /// archive; two archives composed into one version (cuDNN's headers and libraries flattened
    /// beside CUDA's) are checked here.
    Status check_twins(const std::string& rel, const std::string& from) {
        if (plan) {
            return Ok{}; // checked when the version was composed
        }
        std::string prefix;
        std::size_t pos = 0;
        while (pos <= rel.size()) {
            auto end = rel.find('/', pos);
            prefix = rel.substr(0, end);
            auto [it, fresh] = folded.emplace(archive::collision_key(prefix), prefix);
            if (!fresh && it->second != prefix) {
                return Error(ErrorCode::unsafe_archive,
                             "'" + printable(prefix) + "' (from " + from + ") and '" +
                                 printable(it->second) +
                                 "' differ only by case or accents: the two are one file on a "
                                 "case-insensitive or normalising filesystem")
                    .with_hint("nothing was installed; the archives or the mirror serving them "
                               "are bad");
            }
            if (end == std::string::npos) {
                break;
            }
            pos = end + 1;
        }
        return Ok{};
    }

    Status mkdirs(const fs::path& rel) {
        if (plan) {
            fs::path at;
            for (const auto& part : rel) {
                at /= part;
                VersionFile d;
                d.type = store::FileRecord::Type::dir;
                plan->try_emplace(at.string(), std::move(d));
            }
            return Ok{};
        }
        std::error_code ec;
        fs::create_directories(root / rel, ec);
        if (ec) {
            return Error(ErrorCode::filesystem,
                         "cannot create '" + (root / rel).string() + "': " + ec.message());
        }
        return Ok{};
    }

    /// Hard-links the entry's file `f` to `rel`. A second file for the same place is an error
    /// when it differs.
    Status link_file(const StoreEntry& e, const store::FileRecord& f, const std::string& rel) {
        const std::string& from = e.name;
        fs::path src = e.dir / f.path;
        CUDAENV_TRY(check_twins(rel, from));
        CUDAENV_TRY(mkdirs(fs::path(rel).parent_path()));
        if (plan) {
            // the first one stays, as below (a second was the same content, or nothing composed)
            VersionFile v;
            v.entry = e.name;
            v.source = f.path;
            v.size = f.size;
            v.executable = f.executable;
            v.sha256 = f.sha256;
            plan->try_emplace(rel, std::move(v));
            return Ok{};
        }
        fs::path dest = root / rel;
        if (::link(src.c_str(), dest.c_str()) != 0) {
            int err = errno;
            if (err == EEXIST) {
                std::error_code ec;
                if (fs::equivalent(src, dest, ec) || same_content(src, dest)) {
                    return Ok{};
                }
                return layout_error("two archives put different files at '" + rel + "' (" +
                                    origin[rel] + " and " + from + ")");
            }
            return fs_err("cannot link", dest, err);
        }
        origin[rel] = from;
        bytes += f.size;
        ++files;
        return Ok{};
    }

    Status
    link_symlink(const std::string& target, const std::string& rel, const std::string& from) {
        CUDAENV_TRY(check_twins(rel, from));
        CUDAENV_TRY(mkdirs(fs::path(rel).parent_path()));
        if (plan) {
            VersionFile v;
            v.type = store::FileRecord::Type::symlink;
            v.entry = from;
            v.target = target;
            plan->try_emplace(rel, std::move(v));
            return Ok{};
        }
        fs::path dest = root / rel;
        if (::symlink(target.c_str(), dest.c_str()) != 0) {
            int err = errno;
            if (err == EEXIST) {
                std::error_code ec;
                if (fs::is_symlink(fs::symlink_status(dest, ec)) &&
                    fs::read_symlink(dest, ec) == target) {
                    return Ok{};
                }
                return layout_error("two archives put different entries at '" + rel + "' (" +
                                    origin[rel] + " and " + from + ")");
            }
            return fs_err("cannot create symlink", dest, err);
        }
        origin[rel] = from;
        return Ok{};
    }
};

Result<store::StoreRecord> record_of(const StoreEntry& e) {
    auto rec = store::read_store_record(e.dir);
    if (!rec) {
        return Error(ErrorCode::integrity,
                     "store entry '" + e.name +
                         "' has a damaged record: " + rec.error().full_message())
            .with_hint("cudaenv uninstall the versions that use it, then install again");
    }
    return rec;
}

/// A runfile component's path, laid out like a redistrib archive's: `targets/<triple>/lib` and
/// `targets/<triple>/include` become `lib64` and `include` (the links the runfile put there are
/// dropped), so a version is the same shape whichever way it came. Empty: not taken.
std::string runfile_path(const std::string& path, bool is_symlink, const std::string& triple) {
    auto slash = path.find('/');
    if (slash == std::string::npos) {
        return {}; // the component's own folder
    }
    std::string rest = path.substr(slash + 1);
    std::string target = "targets/" + triple;
    if (rest == "targets" || rest == target) {
        return {};
    }
    for (const auto& [from, to] : {std::pair<std::string, std::string>{target + "/lib", "lib64"},
                                   {target + "/include", "include"}}) {
        if (rest == from || rest.rfind(from + "/", 0) == 0) {
            return to + rest.substr(from.size());
        }
    }
    if (is_symlink && (rest == "lib64" || rest == "include" || rest == "lib")) {
        return {}; // the runfile's link into targets/<triple>
    }
    return rest;
}

Status add_cuda_component(Composer& c,
                          const StoreEntry& e,
                          const store::StoreRecord& rec,
                          const std::string& triple) {
    using Type = store::FileRecord::Type;
    for (const auto& f : rec.files) {
        std::string path = f.path;
        if (e.runfile) {
            path = runfile_path(path, f.type == Type::symlink, triple);
            if (path.empty()) {
                continue;
            }
        }
        auto slash = path.find('/');
        if (slash == std::string::npos && f.type != Type::dir) {
            continue; // LICENSE, README at the archive's top stay in the store
        }
        std::string first = path.substr(0, slash);
        std::string mapped = (first == "lib" ? std::string("lib64") : first) +
                             (slash == std::string::npos ? "" : path.substr(slash));
        switch (f.type) {
        case Type::dir:
            CUDAENV_TRY(c.check_twins(mapped, e.name));
            CUDAENV_TRY(c.mkdirs(mapped));
            break;
        case Type::file:
            CUDAENV_TRY(c.link_file(e, f, mapped));
            break;
        case Type::symlink:
            CUDAENV_TRY(c.link_symlink(f.target, mapped, e.name));
            break;
        }
    }
    return Ok{};
}

Status add_cudnn(Composer& c, const StoreEntry& e, const store::StoreRecord& rec) {
    std::vector<std::pair<std::string, std::string>> links; // lib64 name -> target basename
    using Type = store::FileRecord::Type;
    for (const auto& f : rec.files) {
        const std::string& path = f.path;
        std::string base = base_of(path);
        if (f.type == Type::dir) {
            continue;
        }
        if (is_library_name(base)) {
            if (f.type == Type::file) {
                CUDAENV_TRY(c.link_file(e, f, "lib64/" + base));
            } else {
                links.emplace_back(base, base_of(f.target));
            }
        } else if (is_header_path(path)) {
            if (f.type == Type::file) {
                CUDAENV_TRY(c.link_file(e, f, "include/" + base));
            } else {
                CUDAENV_TRY(c.link_symlink(base_of(f.target), "include/" + base, e.name));
            }
        }
    }
    for (const auto& [name, target] : links) {
        CUDAENV_TRY(c.link_symlink(target, "lib64/" + name, e.name));
    }
    for (const auto& [name, target] : links) {
        std::error_code ec;
        if (!c.plan && !fs::exists(c.root / "lib64" / name, ec)) {
            return layout_error("cuDNN link lib64/" + name + " -> " + target +
                                " points at nothing after flattening");
        }
    }
    return Ok{};
}

/// NVIDIA's nvcc.profile looks for headers and libraries in $(TOP)/targets/<triple>/include
/// and .../lib (the runfile toolkit's real folders). Redistrib archives have include/ and lib/
/// at the top, so without these two links the real nvcc finds no cuda_runtime.h.
Status add_target_dir(const fs::path& stage, const std::string& platform) {
    std::string triple = sys::cuda_target(platform);
    std::error_code ec;
    if (triple.empty() || !fs::is_directory(stage / "include", ec)) {
        return Ok{};
    }
    auto dir = stage / "targets" / triple;
    fs::create_directories(dir, ec);
    if (ec) {
        return Error(ErrorCode::filesystem,
                     "cannot create '" + dir.string() + "': " + ec.message());
    }
    // what an archive brought there itself is kept as it is
    auto absent = [&](const fs::path& p) { return !fs::exists(fs::symlink_status(p, ec)); };
    if (absent(dir / "include")) {
        fs::create_symlink("../../include", dir / "include", ec);
    }
    if (!ec && fs::is_directory(stage / "lib64") && absent(dir / "lib")) {
        fs::create_symlink("../../lib64", dir / "lib", ec);
    }
    if (ec) {
        return Error(ErrorCode::filesystem, "cannot link '" + dir.string() + "': " + ec.message());
    }
    return Ok{};
}

} // namespace

std::optional<Version> parse_cudnn_header(std::string_view text) {
    std::map<std::string, std::uint32_t> found;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        std::size_t i = line.find_first_not_of(" \t");
        if (i == std::string_view::npos || line.substr(i, 7) != "#define") {
            continue;
        }
        line.remove_prefix(i + 7);
        std::size_t a = line.find_first_not_of(" \t");
        if (a == std::string_view::npos) {
            continue;
        }
        std::size_t b = line.find_first_of(" \t", a);
        if (b == std::string_view::npos) {
            continue;
        }
        std::string name(line.substr(a, b - a));
        if (name != "CUDNN_MAJOR" && name != "CUDNN_MINOR" && name != "CUDNN_PATCHLEVEL") {
            continue;
        }
        std::size_t c = line.find_first_not_of(" \t", b);
        if (c == std::string_view::npos || line[c] < '0' || line[c] > '9') {
            continue;
        }
        std::uint32_t v = 0;
        while (c < line.size() && line[c] >= '0' && line[c] <= '9' && v < 100000) {
            v = v * 10 + static_cast<std::uint32_t>(line[c] - '0');
            ++c;
        }
        found[name] = v;
    }
    if (found.size() != 3) {
        return std::nullopt;
    }
    return Version::try_parse(std::to_string(found["CUDNN_MAJOR"]) + "." +
                              std::to_string(found["CUDNN_MINOR"]) + "." +
                              std::to_string(found["CUDNN_PATCHLEVEL"]));
}

/// cuda_compat's files stay in compat/, cuda_compat_orin's (a Jetson Orin's user-mode driver
/// for CUDA 13, NVIDIA's cuda-X.Y/compat_orin) in compat_orin/: a libcuda in lib64 would reach
/// the machine-wide loader path through `global`, where a compat libcuda breaks every newer
/// driver (error 803).
Status check_compat_layout(const StoreEntry& e, const store::StoreRecord& rec) {
    std::string folder = e.component == "cuda_compat_orin" ? "compat_orin/" : "compat/";
    for (const auto& f : rec.files) {
        if (f.path.find('/') != std::string::npos && f.path.rfind(folder, 0) != 0) {
            return layout_error(e.component + " " + e.version + " puts '" + f.path + "' outside " +
                                folder);
        }
    }
    return Ok{};
}

/// <version>/.cudaenv-compat: what exec, env, shims and modulefiles decide from at every call.
Status write_compat_file(const fs::path& stage, const Resolution& res, const StoreEntry& e) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(stage / "compat" / "libcuda.so.1", ec))) {
        return layout_error("cuda_compat " + e.version + " has no compat/libcuda.so.1");
    }
    auto compat = Version::parse(e.version);
    if (!compat) {
        return layout_error("cuda_compat's version '" + e.version + "' is not a driver version");
    }
    activate::CompatFile f{
        res.cuda->driver_min.value_or(*compat), *compat, res.forward_compat_gpus};
    return write_file_atomic(stage / activate::k_compat_file, activate::encode_compat_file(f));
}

Status compose_version(const fs::path& stage,
                       const Resolution& res,
                       const std::vector<StoreEntry>& entries,
                       const LibraryChecker& check_libraries) {
    Composer c{stage, {}, 0, 0, {}, nullptr};
    std::vector<store::VersionComponent> components;
    json version_json{{"cuda", {{"name", "CUDA SDK"}, {"version", res.cuda->version.str()}}}};
    for (const auto& e : entries) {
        auto rec = CUDAENV_TRY(record_of(e));
        if (e.component == "cuda_compat" || e.component == "cuda_compat_orin") {
            CUDAENV_TRY(check_compat_layout(e, rec));
        }
        if (e.cudnn) {
            CUDAENV_TRY(add_cudnn(c, e, rec));
        } else {
            CUDAENV_TRY(add_cuda_component(c, e, rec, sys::cuda_target(res.platform)));
            if (e.runfile) {
                for (const auto& f : rec.files) {
                    if (f.type == store::FileRecord::Type::dir &&
                        f.path.find('/') == std::string::npos) {
                        version_json[f.path] = {{"name", f.path + " (from the runfile)"},
                                                {"version", e.version}};
                    }
                }
            } else {
                const auto* comp = res.cuda->component(e.component);
                version_json[e.component] = {{"name", comp ? comp->description : e.component},
                                             {"version", e.version}};
            }
        }
        components.push_back({e.component, e.version, e.sha256, e.name, e.patch});
    }
    std::error_code ec;
    if (fs::is_directory(stage / "lib64", ec) &&
        !fs::exists(fs::symlink_status(stage / "lib", ec))) {
        fs::create_symlink("lib64", stage / "lib", ec);
    }
    CUDAENV_TRY(add_target_dir(stage, res.platform));
    // Links of one archive may go through links of another: every path of the version must
    // resolve inside it, as the kernel resolves it.
    if (auto bad = archive::find_bad_link(stage)) {
        return Error(ErrorCode::unsafe_archive,
                     "unsafe archives: in the composed version, '" + bad->path + "' " +
                         bad->reason())
            .with_hint("nothing was installed; the archives or the mirror serving them are bad");
    }

    // Verify before anything is visible.
    if (const auto* cudart = res.cuda->component("cuda_cudart");
        cudart && std::any_of(entries.begin(), entries.end(), [](const StoreEntry& e) {
            return e.component == "cuda_cudart";
        })) {
        auto full = stage / "lib64" / ("libcudart.so." + cudart->version.str());
        if (!fs::exists(full, ec)) {
            return layout_error("cuda_cudart " + cudart->version.str() + " has no " +
                                full.filename().string() + " (the full-version runtime library)");
        }
    }
    // A runfile's release names no cudart version: its soname is the check (libcudart.so.10.1
    // before CUDA 11, libcudart.so.11.0 after).
    if (std::any_of(
            entries.begin(), entries.end(), [](const StoreEntry& e) { return e.runfile; }) &&
        version_json.contains("cuda_cudart")) {
        const Version& v = res.cuda->version;
        std::string soname = "libcudart.so." + std::to_string(v.major()) + "." +
                             std::to_string(v.major() < 11 ? v.minor() : 0);
        if (!fs::exists(stage / "lib64" / soname, ec)) {
            return layout_error("the CUDA " + v.str() + " runfile's cuda_cudart has no " + soname);
        }
    }
    if (res.cudnn) {
        version_json["cudnn"] = {{"name", "NVIDIA cuDNN"}, {"version", res.cudnn->version.str()}};
        unsigned major = res.cudnn->major;
        std::string header = major >= 8 ? "cudnn_version.h" : "cudnn.h";
        auto text = read_text_file(stage / "include" / header);
        if (!text) {
            return layout_error("the cuDNN archive has no include/" + header);
        }
        auto hv = parse_cudnn_header(*text);
        if (!hv) {
            return layout_error("include/" + header +
                                " does not define CUDNN_MAJOR, CUDNN_MINOR "
                                "and CUDNN_PATCHLEVEL");
        }
        if (Version::compare_numeric(*hv, res.cudnn->version.truncated(3)) != 0) {
            return layout_error("cuDNN header version " + hv->str() + " (include/" + header +
                                ") differs from the manifest's " + res.cudnn->version.str());
        }
        std::vector<std::string> missing;
        const auto& libs = res.cudnn_sublibraries;
        for (const auto& lib : libs) {
            if (!fs::exists(stage / "lib64" / (lib + ".so." + std::to_string(major)), ec)) {
                missing.push_back(lib + ".so." + std::to_string(major));
            }
        }
        if (!missing.empty()) {
            std::string list;
            for (const auto& m : missing) {
                list += (list.empty() ? "" : ", ") + m;
            }
            return layout_error("cuDNN " + res.cudnn->version.str() + " lacks " + list +
                                " in lib64 after flattening");
        }
    }
    if (check_libraries && fs::is_directory(stage / "lib64", ec)) {
        std::vector<std::string> libs;
        for (const auto& e : fs::directory_iterator(stage / "lib64", ec)) {
            std::string n = e.path().filename().string();
            if (e.is_regular_file() && !e.is_symlink() && n.find(".so") != std::string::npos) {
                libs.push_back(n);
            }
        }
        std::sort(libs.begin(), libs.end());
        auto failures = CUDAENV_TRY(check_libraries(stage / "lib64", libs));
        if (!failures.empty()) {
            return layout_error("a library does not load: " + failures[0] +
                                (failures.size() > 1
                                     ? " (and " + std::to_string(failures.size() - 1) + " more)"
                                     : ""));
        }
    }

    for (const auto& e : entries) {
        if (e.component == "cuda_compat") {
            CUDAENV_TRY(write_compat_file(stage, res, e));
        }
    }
    CUDAENV_TRY(write_file_atomic(stage / "version.json", version_json.dump(4) + "\n"));
    store::VersionRecord rec{res.version_name(),
                             res.cuda->version.str(),
                             res.cudnn ? res.cudnn->version.str() : "",
                             res.cudnn_build ? res.cudnn_build->cuda : "",
                             res.profile,
                             res.platform,
                             c.files,
                             c.bytes,
                             std::move(components)};
    CUDAENV_TRY(store::write_version_record(stage, rec));
    // read-only: the files are the store's objects (hard links), cudaenv's own files are not
    // to be edited either (docs/store.md)
    CUDAENV_TRY(store::make_read_only(stage));
    // the files are hard links to store entries, already on disk: the folders, links and records
    // are what is new
    return store::sync_tree(stage);
}

Result<std::map<std::string, VersionFile>>
version_tree(const std::vector<StoreEntry>& entries,
             const std::vector<store::StoreRecord>& records,
             const std::string& platform) {
    std::map<std::string, VersionFile> tree;
    Composer c{{}, {}, 0, 0, {}, &tree};
    std::string triple = sys::cuda_target(platform);
    for (std::size_t i = 0; i < entries.size() && i < records.size(); ++i) {
        if (entries[i].cudnn) {
            CUDAENV_TRY(add_cudnn(c, entries[i], records[i]));
        } else {
            CUDAENV_TRY(add_cuda_component(c, entries[i], records[i], triple));
        }
    }
    // what compose_version adds of its own: lib -> lib64, nvcc's targets/<triple> links
    auto own_link = [&](const std::string& rel, const std::string& target) {
        VersionFile v;
        v.type = store::FileRecord::Type::symlink;
        v.target = target;
        tree.try_emplace(rel, std::move(v));
    };
    if (tree.count("lib64")) {
        own_link("lib", "lib64");
    }
    if (!triple.empty() && tree.count("include")) {
        CUDAENV_TRY(c.mkdirs("targets/" + triple));
        own_link("targets/" + triple + "/include", "../../include");
        if (tree.count("lib64")) {
            own_link("targets/" + triple + "/lib", "../../lib64");
        }
    }
    return tree;
}

std::vector<std::string> check_libraries_here(const fs::path& dir,
                                              const std::vector<std::string>& files) {
    std::vector<std::string> failures;
    for (const auto& f : files) {
        void* h = ::dlopen((dir / f).c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char* why = ::dlerror();
            std::string w = why ? why : "unknown error";
            // Libraries that need the driver's libcuda cannot load on a GPU-less machine; that
            // is the driver's absence, not a broken install (doctor reports the driver).
            if (w.find("libcuda.so.1") != std::string::npos) {
                continue;
            }
            failures.push_back(f + ": " + w);
            continue;
        }
        ::dlclose(h);
    }
    return failures;
}

Result<std::vector<std::string>> check_libraries_in_child(const fs::path& exe,
                                                          const fs::path& dir,
                                                          const std::vector<std::string>& files) {
    if (files.empty()) {
        return std::vector<std::string>{};
    }
    std::vector<std::string> args{exe.string(), "__check-libs", dir.string()};
    args.insert(args.end(), files.begin(), files.end());
    sys::ProcessOptions o;
    o.env.emplace();
    for (char** e = environ; *e; ++e) {
        if (std::string_view(*e).rfind("LD_LIBRARY_PATH=", 0) != 0) {
            o.env->emplace_back(*e);
        }
    }
    o.env->push_back("LD_LIBRARY_PATH=" + dir.string());
    auto ran = sys::run_process(args, o);
    if (!ran) {
        return Error(ErrorCode::internal, "cannot run the library check: " + ran.error().message);
    }
    std::vector<std::string> failures;
    std::size_t pos = 0;
    const auto& out = ran->out;
    while (pos < out.size()) {
        auto end = out.find('\n', pos);
        if (end == std::string::npos) {
            end = out.size();
        }
        if (end > pos) {
            failures.push_back(out.substr(pos, end - pos));
        }
        pos = end + 1;
    }
    if (ran->timed_out) {
        failures.push_back("the library check did not finish within 120 s");
    } else if (ran->status > 128) {
        failures.push_back("the library check crashed (signal " +
                           std::to_string(ran->status - 128) + ")");
    } else if (ran->status != 0) {
        failures.push_back("the library check '" + exe.string() + " __check-libs' exited with " +
                           std::to_string(ran->status));
    }
    return failures;
}

} // namespace cudaenv::install
