#include "project.hpp"

#include "../fs.hpp"
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
    auto ok = check_framework_compat(*fw, *row, *cuda, cudnn);
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
    auto existing = read_text_file(out.file);
    out.changed = !(existing && *existing == content);
    if (out.changed) {
        CUDAENV_TRY(write_file_atomic(out.file, content));
    }
    // The record only helps gc; a root that cannot take it (read-only, not made yet) is no error.
    (void)make_dirs(pins_dir(root));
    nlohmann::json j{{"schema", 1}, {"dir", dir.string()}};
    (void)write_file_atomic(pin_record(root, dir), j.dump() + "\n");
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
        auto j = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
        if (!j.is_object() || !j.contains("dir") || !j["dir"].is_string()) {
            if (stale) {
                stale->push_back(it->path());
            }
            continue;
        }
        fs::path dir = j["dir"].get<std::string>();
        auto file = read_text_file(dir / k_version_file);
        auto written = file ? parse_version_file(*file, (dir / k_version_file).string())
                            : Result<std::string>(Error(ErrorCode::not_found, "gone"));
        if (!written) {
            if (stale && !file) {
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
        auto text = CUDAENV_TRY(read_text_file(*file));
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

} // namespace cudaenv::activate
