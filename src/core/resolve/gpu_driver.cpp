#include "gpu_driver.hpp"

#include "../manifest/gpu_support.hpp"

#include <algorithm>
#include <cctype>

namespace cudaenv {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    return s;
}

} // namespace

bool names_model(std::string_view gpu_name, std::string_view model) {
    std::string n = lower(std::string(gpu_name));
    std::string m = lower(std::string(model));
    for (std::string_view prefix : {"nvidia ", "geforce "}) {
        if (m.starts_with(prefix)) {
            m = m.substr(prefix.size());
        }
    }
    if (m.empty()) {
        return false;
    }
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
    for (auto at = n.find(m); at != std::string::npos; at = n.find(m, at + 1)) {
        bool starts = at == 0 || !word(n[at - 1]);
        bool ends = at + m.size() == n.size() || !word(n[at + m.size()]);
        if (starts && ends) {
            return true;
        }
    }
    return false;
}

const manifest::Gpu* family_row(const std::vector<manifest::Gpu>& family, std::string_view name) {
    const manifest::Gpu* best = nullptr;
    for (const auto& g : family) {
        if (names_model(name, g.name) && (!best || g.name.size() > best->name.size())) {
            best = &g;
        }
    }
    return best;
}

namespace {

std::string sm_text(unsigned cc) {
    return "sm_" + std::to_string(cc);
}

/// The architecture's last branch: a newer branch's module does not bind the GPU.
bool past_last_branch(const manifest::GpuSupport& support,
                      unsigned cc,
                      const Version& driver,
                      GpuDriverVerdict& v) {
    const auto* arch = cc ? support.architecture_of(cc) : nullptr;
    if (!arch || !arch->last_branch || driver.major() <= *arch->last_branch) {
        return false;
    }
    v.kind = GpuDriverVerdict::Kind::too_new;
    v.last_branch = arch->last_branch;
    v.why = arch->architecture + " (" + sm_text(cc) + ") ends with the R" +
            std::to_string(*arch->last_branch) + " driver branch (" + arch->last_toolkit +
            " is its last toolkit; NVIDIA's CUDA Toolkit, Driver and Architecture Matrix): "
            "driver " +
            driver.str() + " does not drive it";
    return true;
}

} // namespace

GpuDriverVerdict check_gpu_driver(const manifest::GpuSupport& support,
                                  const std::vector<manifest::Gpu>& family,
                                  const GpuId& gpu,
                                  const Version& driver) {
    GpuDriverVerdict v;
    std::string device = manifest::normalize_pci_id(gpu.device);
    std::string subsystem = lower(gpu.subsystem);
    v.gpu = (gpu.name.empty() ? "NVIDIA device" : gpu.name) +
            " (PCI 10de:" + (device.empty() ? gpu.device : device) +
            (subsystem.empty() ? "" : ", subsystem " + subsystem) + ")";
    const auto* l = device.empty() ? nullptr : support.find(device, subsystem, &v.exact);
    v.by_id = l != nullptr;
    // the GPU's model by NVIDIA's name for its PCI id where the lists have it, else the name
    // the machine gives, matched as whole words (a GA107M is not an A10)
    const auto* row = family_row(family, l ? l->name : gpu.name);
    if (!row && l) {
        row = family_row(family, gpu.name);
    }
    unsigned cc = gpu.compute_capability ? gpu.compute_capability
                  : row                  ? row->compute_capability
                                         : 0;
    std::string listed = l ? "NVIDIA's open-module lists name PCI 10de:" + device +
                                 (v.exact ? " subsystem " + subsystem : std::string()) + " (" +
                                 l->name + ")"
                           : "PCI 10de:" + (device.empty() ? gpu.device : device) +
                                 " is not in NVIDIA's open-module lists";
    // 1. the architecture's last branch (NVIDIA's CUDA Toolkit, Driver and Architecture Matrix):
    //    a fact about every GPU of it
    if (past_last_branch(support, cc, driver, v)) {
        v.why = listed + "; " + v.why;
        return v;
    }
    if (l && !l->listed_in_newest && driver.major() > l->first_per_branch.rbegin()->first) {
        // dropped from the newest driver's list and the driver is past every branch naming it
        v.kind = GpuDriverVerdict::Kind::too_new;
        v.last_branch = l->first_per_branch.rbegin()->first;
        v.why = listed + " for the last time in " + l->last_listed.str() +
                "; the newest driver the lists know drops it";
        return v;
    }
    // 2. the lists say when a GPU was first named, not the driver it needs (the open modules
    //    listed every GPU of 2022 from their first tag, the T4 only from 575): they answer yes,
    //    and otherwise keep the first naming driver (the branch's, or the next branch's) as an
    //    upper bound -- the driver to install when one is needed
    bool named = false;
    if (l) {
        auto it = l->first_per_branch.find(driver.major());
        const Version& first = l->first_per_branch.begin()->second;
        named = (l->off_mainline && Version::compare_numeric(driver, *l->off_mainline) == 0) ||
                (it != l->first_per_branch.end() &&
                 Version::compare_numeric(driver, it->second) >= 0) ||
                (driver.major() > l->first_per_branch.rbegin()->first &&
                 Version::compare_numeric(driver, first) >= 0);
        if (!named) {
            auto next = l->first_per_branch.lower_bound(driver.major());
            v.listed_from = next != l->first_per_branch.end() ? next->second : first;
        }
    }
    std::string from = v.listed_from ? " from " + v.listed_from->str() : std::string();
    std::string by_family = row && row->min_driver
                                ? "; by family (" + row->name + "): " + row->min_driver_basis
                                : std::string();
    // 3. the family rule: a driver older than the first CUDA of the GPU's SM cannot know it
    if (!named && row && row->min_driver &&
        Version::compare_numeric(driver, *row->min_driver) < 0) {
        v.kind = GpuDriverVerdict::Kind::too_old;
        v.need = row->min_driver;
        v.why = listed + from + by_family;
        return v;
    }
    if (named) {
        v.kind = GpuDriverVerdict::Kind::ok;
        v.why = listed + " in driver " + driver.str() + "'s branch";
    } else if (l) {
        v.kind = GpuDriverVerdict::Kind::unknown;
        v.why = listed + from + " (when a list first named it: not a minimum)" + by_family;
    } else {
        v.kind = by_family.empty() ? GpuDriverVerdict::Kind::unknown : GpuDriverVerdict::Kind::ok;
        v.why =
            listed + (by_family.empty() ? " and the family rule has no minimum for it" : by_family);
    }
    return v;
}

std::string branch_end_of_life(const manifest::GpuSupport& support,
                               const Version& driver,
                               const std::string& today) {
    if (support.branches.empty()) {
        return {};
    }
    unsigned branch = driver.major();
    std::string month = today.substr(0, 7); // YYYY-MM
    for (const auto& b : support.branches) {
        if (b.branch == branch) {
            if (!b.end_of_life.empty() && b.end_of_life < month) {
                return "driver " + driver.str() + " is on the R" + std::to_string(branch) + " " +
                       (b.kind.empty() ? "branch" : b.kind) +
                       ", which reached its end of life in " + b.end_of_life;
            }
            return {};
        }
    }
    if (branch < support.branches.front().branch) {
        return "driver " + driver.str() + " is on the R" + std::to_string(branch) +
               " branch, older than every branch NVIDIA still supports (the oldest is R" +
               std::to_string(support.branches.front().branch) + ", until " +
               support.branches.front().end_of_life + ")";
    }
    return {};
}

std::vector<std::string> machine_fit(const manifest::CudaRelease& release,
                                     const manifest::GpuSupport& support,
                                     const std::vector<manifest::Gpu>& family,
                                     const std::vector<GpuId>& gpus,
                                     const std::optional<Version>& driver) {
    std::vector<std::string> out;
    if (!driver) {
        return out;
    }
    std::string cuda = "CUDA " + release.version.str();
    std::string full = release.driver_min_source.rfind("branch:", 0) == 0
                           ? release.driver_min_source.substr(7) + " or newer"
                       : release.driver_min ? release.driver_min->str()
                                            : "";
    if (release.driver_compat_min &&
        Version::compare_numeric(*driver, *release.driver_compat_min) < 0) {
        out.push_back("this machine's driver " + driver->str() + " is older than " + cuda +
                      "'s floor " + release.driver_compat_min->str() +
                      ": its programs will not run here (full support needs " + full + ")");
    } else if (release.driver_min && Version::compare_numeric(*driver, *release.driver_min) < 0) {
        out.push_back("this machine's driver " + driver->str() + " runs " + cuda +
                      " only through minor-version compatibility (full support needs " + full +
                      ")");
    }
    for (const auto& g : gpus) {
        auto v = check_gpu_driver(support, family, g, *driver);
        if (v.kind == GpuDriverVerdict::Kind::too_old && v.need) {
            out.push_back("this machine's driver " + driver->str() + " does not drive " + v.gpu +
                          ": it needs " + v.need->str() + " or newer (" + v.why + ")");
        } else if (v.kind == GpuDriverVerdict::Kind::too_new && v.last_branch) {
            out.push_back("this machine's driver " + driver->str() + " does not drive " + v.gpu +
                          ": " + v.why);
        } else if (v.kind == GpuDriverVerdict::Kind::unknown && v.listed_from) {
            // a listing is not a minimum: said as what it is, for `cudaenv doctor` to settle
            out.push_back("this machine's driver " + driver->str() + " may not drive " + v.gpu +
                          ": NVIDIA's lists name it from " + v.listed_from->str() +
                          " (if it does not, install that or newer; cudaenv doctor says)");
        }
    }
    return out;
}

} // namespace cudaenv
