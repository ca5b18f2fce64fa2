#include "project.hpp"

#include "../fs.hpp"
#include "../install/install.hpp"
#include "../pyenv/pyenv.hpp"
#include "../resolve/resolve.hpp"
#include "../sha256.hpp"
#include "../store/records.hpp"
#include "../store/state.hpp"
#include "selection.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace cudaenv::activate {

namespace fs = std::filesystem;

std::optional<FrameworkPin> framework_pin(const manifest::Catalog& catalog,
                                          const std::optional<std::string>& version_file_text,
                                          const fs::path& project_dir,
                                          const std::map<std::string, std::string>& env) {
    if (version_file_text) {
        std::vector<std::string> names;
        for (const auto& f : catalog.frameworks) {
            names.push_back(f.name);
            names.insert(names.end(), f.aliases.begin(), f.aliases.end());
        }
        auto spec = parse_spec(*version_file_text, names);
        if (spec && spec->kind == Spec::Kind::framework) {
            if (const auto* fw = catalog.framework(spec->framework)) {
                return FrameworkPin{
                    fw->name, *spec->framework_version, k_version_file, spec->variant};
            }
        }
    }
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(project_dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string n = it->path().filename().string();
        bool req = n.rfind("requirements", 0) == 0 && it->path().extension() == ".txt";
        if (req || n == "pyproject.toml" || n == "Pipfile" || n == "environment.yml" ||
            n == "environment.yaml") {
            files.push_back(it->path());
        }
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        // a project's file, of any size: the pins are in its first MiB or nowhere cudaenv looks
        auto text = read_file_prefix(f, std::size_t{1} << 20);
        if (!text) {
            continue;
        }
        // the framework pinned first in the file
        std::optional<FrameworkPin> best;
        std::size_t best_line = 0;
        for (const auto& [name, dist] :
             {std::pair<const char*, const char*>{"tensorflow", "tensorflow"},
              {"pytorch", "torch"},
              {"jax", "jax"}}) {
            std::size_t line = 0;
            if (auto v = parse_requirement_pin(*text, dist, &line);
                v && catalog.framework(name) && (!best || line < best_line)) {
                best = FrameworkPin{name, *v, f.string() + ":" + std::to_string(line), ""};
                best_line = line;
            }
        }
        if (best) {
            return best;
        }
    }
    // installed in the active virtual or conda environment (not the system's python3: a
    // project is not pinned by what happens to be installed machine-wide)
    std::map<std::string, std::string> venv;
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
        if (auto it = env.find(var); it != env.end() && !it->second.empty()) {
            venv[var] = it->second;
        }
    }
    if (venv.empty()) {
        return std::nullopt;
    }
    pyenv::RealFiles rf(venv);
    if (auto e = pyenv::active_environment(rf)) {
        for (const auto& fw : pyenv::installed_frameworks(rf, *e)) {
            if (!fw.cpu_only && fw.version && catalog.framework(fw.name)) {
                return FrameworkPin{fw.name, *fw.version, fw.dist.dist_info, fw.variant};
            }
        }
    }
    return std::nullopt;
}

std::optional<Error> project_framework_conflict(const manifest::Catalog& catalog,
                                                const store::Root& root,
                                                const std::string& version,
                                                const std::optional<std::string>& spec,
                                                const fs::path& cwd,
                                                const std::map<std::string, std::string>& env) {
    auto pin = framework_pin(catalog, spec, cwd, env);
    if (!pin) {
        return std::nullopt;
    }
    const auto* fw = catalog.framework(pin->framework);
    const auto* row = fw ? fw->find(pin->version) : nullptr;
    auto record = store::read_version_record(root.version_dir(version));
    if (!row || !record) {
        return std::nullopt;
    }
    auto cuda = Version::try_parse(record->cuda);
    std::optional<Version> cudnn;
    if (!record->cudnn.empty()) {
        cudnn = Version::try_parse(record->cudnn);
    }
    if (!cuda) {
        return std::nullopt;
    }
    auto ok = row->variants.empty()
                  ? check_framework_compat(*fw, *row, *cuda, cudnn)
                  : check_variant_compat(*fw, *row, row->variant(pin->variant), *cuda, cudnn);
    if (ok) {
        return std::nullopt;
    }
    Error e = ok.error();
    e.message = version + " cannot serve this project: " + e.message + " (" + pin->framework + " " +
                pin->version.str() + " from " + pin->source + ")";
    return e;
}

namespace {

fs::path pins_dir(const store::Root& root) {
    return root.dir / "pins";
}

fs::path pin_record(const store::Root& root, const fs::path& dir) {
    return pins_dir(root) / (sha256_hex(dir.string()).substr(0, 24) + ".json");
}

} // namespace

Result<PinWrite>
write_project_pin(const store::Root& root, const fs::path& dir, const std::string& spec) {
    PinWrite out;
    out.file = dir / k_version_file;
    std::string content = spec + "\n";
    auto existing = read_version_file(out.file);
    out.changed = !(existing && *existing == content);
    if (out.changed) {
        CUDAENV_TRY(write_file_atomic(out.file, content));
    }
    // The record only helps gc; a root that cannot take it (read-only, not made yet) is no error.
    (void)make_dirs(pins_dir(root));
    (void)write_file_atomic(pin_record(root, dir), store::encode(store::PinRecord{dir.string()}));
    return out;
}

Result<bool> remove_project_pin(const store::Root& root, const fs::path& dir) {
    fs::path file = dir / k_version_file;
    std::error_code ec;
    fs::remove(pin_record(root, dir), ec);
    if (::unlink(file.c_str()) != 0) {
        if (errno == ENOENT) {
            return false;
        }
        return Error(ErrorCode::filesystem,
                     "cannot remove '" + file.string() + "': " + errno_text(errno));
    }
    return true;
}

std::vector<RecordedPin> recorded_pins(const store::Root& root, std::vector<fs::path>* stale) {
    std::vector<RecordedPin> out;
    std::error_code ec;
    for (fs::directory_iterator it(pins_dir(root), ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() != ".json") {
            continue;
        }
        auto text = read_text_file(it->path());
        auto rec = text ? store::decode_pin_record(*text, it->path().string())
                        : Result<store::PinRecord>(std::move(text).error());
        if (!rec) {
            // a later cudaenv's record is its own; a damaged one is gc's to remove
            bool newer = text && text->find("\"cudaenv.pin/") != std::string::npos;
            if (stale && !newer) {
                stale->push_back(it->path());
            }
            continue;
        }
        fs::path dir = rec->dir;
        auto file = read_version_file(dir / k_version_file);
        auto written = file ? parse_version_file(*file, (dir / k_version_file).string())
                            : Result<std::string>(file.error());
        if (!written) {
            // gone or unreadable: the pin is stale; there but not a version file (too large,
            // damaged): the project's to fix, and its pin stays
            if (stale && !file && file.error().code != ErrorCode::usage) {
                stale->push_back(it->path());
            }
            continue;
        }
        out.push_back({dir, *written, it->path()});
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.dir < b.dir; });
    return out;
}

Result<std::map<std::string, std::string>>
needed_versions(const store::Root& root,
                const std::vector<manifest::Framework>& frameworks,
                const std::map<std::string, std::string>& env,
                const fs::path& cwd) {
    std::map<std::string, std::string> needed;
    auto need = [&](const std::string& v, const std::string& why) {
        needed.emplace(v, why); // the first reason found is kept
    };
    auto state = CUDAENV_TRY(store::load_state(root));
    if (state.global) {
        need(*state.global, "the global version");
    }
    if (state.pending && *state.pending != "system") {
        need(*state.pending, "a `global` switch that did not finish");
    }
    if (state.previous && state.previous->global != "system") {
        need(state.previous->global, "what `cudaenv rollback` returns to");
    }
    for (const auto& pin : recorded_pins(root)) {
        if (auto v = match_installed(root, frameworks, pin.written)) {
            need(*v, "pinned by " + (pin.dir / k_version_file).string());
        }
    }
    if (auto sel = select(root, frameworks, env, cwd); sel && sel->version) {
        need(*sel->version, "selected here (" + sel->origin_text() + ")");
    }
    return needed;
}

Result<std::optional<ProjectRequest>>
project_request(const manifest::Catalog& catalog,
                const fs::path& cwd,
                const std::map<std::string, std::string>& env) {
    if (auto file = find_version_file(cwd)) {
        auto text = CUDAENV_TRY(read_version_file(*file));
        auto written = CUDAENV_TRY(parse_version_file(text, file->string()));
        return std::optional<ProjectRequest>(ProjectRequest{written, file->string()});
    }
    if (auto pin = framework_pin(catalog, std::nullopt, cwd, env)) {
        const auto* fw = catalog.framework(pin->framework);
        std::string name = fw && !fw->aliases.empty() ? fw->aliases[0] : pin->framework;
        std::string series =
            std::to_string(pin->version.major()) + "." + std::to_string(pin->version.minor());
        return std::optional<ProjectRequest>(ProjectRequest{name + "-" + series, pin->source});
    }
    return std::optional<ProjectRequest>();
}

Result<EnvironmentMatch> match_environment(const manifest::Catalog& catalog,
                                           const store::Root& root,
                                           const std::map<std::string, std::string>& env) {
    pyenv::RealFiles files(env);
    auto pe = pyenv::active_environment(files);
    if (!pe) {
        return Error(ErrorCode::not_found,
                     "no active Python environment (no VIRTUAL_ENV, CONDA_PREFIX or python3 on "
                     "PATH with a site-packages)")
            .with_hint("activate the environment first, or name what to use: cudaenv use 12.4");
    }
    auto fws = pyenv::installed_frameworks(files, *pe);
    std::stable_sort(fws.begin(), fws.end(), [](const auto& a, const auto& b) {
        auto rank = [](const std::string& n) { return n == "pytorch" ? 0 : n == "jax" ? 1 : 2; };
        return rank(a.name) < rank(b.name);
    });
    const pyenv::Framework* fw = nullptr;
    std::vector<std::string> passed;
    for (const auto& f : fws) {
        std::string label = f.dist.name + " " + f.dist.version;
        if (f.cpu_only || !f.cuda) {
            passed.push_back(label + " (a CPU build)");
        } else if (!fw) {
            fw = &f;
        } else {
            passed.push_back(label + " (built for CUDA " + f.cuda->str() + ")");
        }
    }
    std::string where = pe->sites.empty() ? pe->prefix : pe->sites.front();
    if (!fw) {
        return Error(ErrorCode::not_found,
                     "no CUDA build of TensorFlow, PyTorch or JAX in " + where + " (" +
                         pe->found_by + ")" +
                         (passed.empty() ? std::string() : ": " + passed.front()))
            .with_hint("install one with CUDA, or name what to use: cudaenv use 12.4");
    }
    EnvironmentMatch m;
    m.framework = fw->name;
    m.found = (fw->name == "pytorch" ? "torch" : fw->dist.name) + " " + fw->dist.version + " in " +
              fw->dist.site;
    m.found_by = pe->found_by;
    m.cuda = *fw->cuda;
    m.cuda_from = fw->cuda_from;
    for (const auto& p : passed) {
        m.why.push_back("passed over " + p);
    }
    // what install --match installs: the framework's own row and build when the manifests know
    // them, else the CUDA itself
    const auto* mf = catalog.framework(fw->name);
    const auto* row = mf && fw->version ? mf->find(*fw->version) : nullptr;
    bool exact_cuda = m.cuda.size() >= 2;
    if (row && !row->variants.empty() && row->variant(fw->variant) &&
        !(fw->name == "jax" && exact_cuda)) {
        m.spec = fw->name + "-" + row->series.str() + "+" + fw->variant;
    } else if (row && row->variants.empty() && exact_cuda && row->cuda.major() == m.cuda.major() &&
               row->cuda.minor() == m.cuda.minor()) {
        m.spec = fw->name + "-" + row->series.str();
    } else {
        m.spec = m.cuda.str();
    }
    // the installed version whose nvcc has the same major.minor, else the newest of the major
    std::optional<install::InstalledVersion> exact, same_major;
    for (const auto& v : install::list_installed(root)) {
        auto c = Version::try_parse(v.cuda);
        if (!v.shadowed_by.empty() || !c || c->major() != m.cuda.major()) {
            continue;
        }
        auto newer = [&](const std::optional<install::InstalledVersion>& best) {
            return !best || Version::compare_numeric(*c, *Version::try_parse(best->cuda)) > 0 ||
                   (Version::compare_numeric(*c, *Version::try_parse(best->cuda)) == 0 &&
                    v.cudnn.empty() < best->cudnn.empty());
        };
        if (exact_cuda && c->size() >= 2 && c->minor() == m.cuda.minor()) {
            if (newer(exact)) {
                exact = v;
            }
        } else if (newer(same_major)) {
            same_major = v;
        }
    }
    std::string built = m.found + " was built for CUDA " + m.cuda.str() + " (" + m.cuda_from + ")";
    if (exact) {
        m.installed = exact->name;
        m.why.push_back(built + "; " + exact->name + "'s nvcc is CUDA " + exact->cuda +
                        ", the same major.minor");
    } else if (same_major) {
        // JAX requires at least the CUDA of its wheels; PyTorch takes any minor of its major
        bool floor_ok =
            fw->name != "jax" || !exact_cuda ||
            Version::compare_numeric(*Version::try_parse(same_major->cuda), m.cuda) >= 0;
        if (floor_ok) {
            m.installed = same_major->name;
            m.why.push_back(built + "; no installed CUDA " + m.cuda.str() + ", so " +
                            same_major->name + " (CUDA " + same_major->cuda +
                            ", the same major: minor-version compatibility" +
                            (fw->name == "pytorch" ? "; torch's extension build warns" : "") + ")");
        }
    }
    if (!m.installed) {
        m.why.push_back(built + "; no installed version has CUDA " + m.cuda.str() +
                        ": cudaenv install --match installs " + m.spec);
    }
    return m;
}

} // namespace cudaenv::activate
