#include "compat.hpp"

#include "../fs.hpp"
#include "../text.hpp"

#include <unistd.h>

#include <algorithm>

namespace cudaenv::activate {

namespace fs = std::filesystem;

std::string encode_compat_file(const CompatFile& f) {
    std::string out = "# cudaenv forward compatibility (docs/compat.md): written by install "
                      "--compat; read by exec, env, shims and modulefiles\n";
    out += "needs " + f.needs.str() + "\n";
    out += "compat " + f.compat.str() + "\n";
    out += "gpus";
    for (const auto& g : f.gpus) {
        out += " " + g;
    }
    return out + "\n";
}

namespace {

/// "2330" or "2330/10de:16c1", lower-case hex.
bool is_gpu_word(std::string_view w) {
    auto hex = [](std::string_view s) {
        return s.size() == 4 && std::all_of(s.begin(), s.end(), [](char c) {
                   return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
               });
    };
    if (w.size() == 4) {
        return hex(w);
    }
    return w.size() == 14 && hex(w.substr(0, 4)) && w[4] == '/' && hex(w.substr(5, 4)) &&
           w[9] == ':' && hex(w.substr(10, 4));
}

} // namespace

std::optional<CompatFile> parse_compat_file(std::string_view text) {
    CompatFile f;
    std::optional<Version> needs, compat;
    bool gpus = false;
    for (std::size_t pos = 0; pos < text.size();) {
        auto nl = text.find('\n', pos);
        auto w = words(text.substr(pos, nl == std::string_view::npos ? nl : nl - pos));
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        if (w.empty() || w[0].front() == '#') {
            continue;
        }
        if ((w[0] == "needs" || w[0] == "compat") && w.size() == 2) {
            (w[0] == "needs" ? needs : compat) = Version::try_parse(std::string(w[1]));
        } else if (w[0] == "gpus") {
            gpus = true;
            for (std::size_t i = 1; i < w.size(); ++i) {
                if (!is_gpu_word(w[i])) {
                    return std::nullopt;
                }
                f.gpus.emplace_back(w[i]);
            }
        } else {
            return std::nullopt;
        }
    }
    if (!needs || !compat || !gpus) {
        return std::nullopt;
    }
    f.needs = *needs;
    f.compat = *compat;
    return f;
}

bool forward_compat_listed(const std::vector<std::string>& gpus,
                           std::string_view device,
                           std::string_view subsystem) {
    return std::any_of(gpus.begin(), gpus.end(), [&](const std::string& g) {
        return std::string_view(g).substr(0, 4) == device &&
               (g.size() == 4 || std::string_view(g).substr(5) == subsystem);
    });
}

namespace {

constexpr std::size_t k_max_compat_file = 64 * 1024;

CompatState decide(const fs::path& prefix,
                   const std::optional<std::string>& text,
                   const sys::MachineGpus& machine) {
    CompatState s;
    s.dir = prefix / "compat";
    if (!text) {
        s.why = "the version has no forward-compatibility libraries (install --compat adds them)";
        return s;
    }
    s.file = parse_compat_file(*text);
    if (!s.file) {
        s.kind = CompatState::Kind::damaged;
        s.why = "'" + (prefix / k_compat_file).string() + "' is damaged: compat/ is not used";
        return s;
    }
    const CompatFile& f = *s.file;
    s.driver = machine.driver;
    if (!machine.driver) {
        s.kind = CompatState::Kind::no_driver;
        s.why = "no NVIDIA driver is loaded: compat/ is not used";
    } else if (!(*machine.driver < f.needs) || !(*machine.driver < f.compat)) {
        s.kind = CompatState::Kind::driver_suffices;
        s.why = "driver " + machine.driver->str() + " runs it (it needs " + f.needs.str() +
                "): compat/ is not used";
    } else if (machine.gpus.empty()) {
        s.kind = CompatState::Kind::no_gpu;
        s.why = "no NVIDIA GPU is on the PCI bus: compat/ is not used";
    } else {
        for (const auto& g : machine.gpus) {
            if (!forward_compat_listed(f.gpus, g.device, g.subsystem)) {
                s.kind = CompatState::Kind::gpu_unsupported;
                s.gpu = "10de:" + g.device;
                s.why = "GPU " + s.gpu + " (" + g.address +
                        ") is not a data-center GPU: NVIDIA's forward compatibility does not "
                        "support it (CUDA fails with error 804 through compat/), so compat/ is "
                        "not used; driver " +
                        machine.driver->str() + " is older than the " + f.needs.str() +
                        " this release needs";
                return s;
            }
        }
        s.kind = CompatState::Kind::used;
        s.why = "driver " + machine.driver->str() + " is older than the " + f.needs.str() +
                " this release needs: the forward-compatibility libraries (driver " +
                f.compat.str() + ") in compat/ are used";
    }
    return s;
}

} // namespace

bool has_compat_libraries(const fs::path& prefix) {
    return ::access((prefix.native() + "/" + k_compat_file).c_str(), F_OK) == 0;
}

CompatState compat_state(const fs::path& prefix, const sys::MachineGpus& machine) {
    return decide(prefix, read_file_prefix(prefix / k_compat_file, k_max_compat_file), machine);
}

std::optional<fs::path> compat_orin_dir(const fs::path& prefix, const sys::HostMachine& host) {
    if (host.kind != sys::HostKind::jetson || !host.jetson || host.jetson->soc != "orin") {
        return std::nullopt;
    }
    std::error_code ec;
    fs::path dir = prefix / k_compat_orin_dir;
    return fs::is_directory(dir, ec) ? std::optional<fs::path>(dir) : std::nullopt;
}

std::optional<fs::path> compat_orin_dir(const fs::path& prefix, const fs::path& sysroot) {
    std::error_code ec;
    if (!fs::is_directory(prefix / k_compat_orin_dir, ec)) { // one stat for every other version
        return std::nullopt;
    }
    return compat_orin_dir(prefix, sys::read_host_machine(sysroot));
}

CompatState compat_state(const fs::path& prefix, const fs::path& sysroot) {
    auto text = read_file_prefix(prefix / k_compat_file, k_max_compat_file);
    return decide(prefix, text, text ? sys::read_machine_gpus(sysroot) : sys::MachineGpus{});
}

} // namespace cudaenv::activate
