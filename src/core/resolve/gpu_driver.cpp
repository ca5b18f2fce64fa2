#include "gpu_driver.hpp"

#include "../manifest/gpu_support.hpp"

#include <algorithm>

namespace cudaenv {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    return s;
}

/// The family table's row whose name the GPU's name contains (the longest such name).
const manifest::Gpu* family_row(const std::vector<manifest::Gpu>& family, const GpuId& gpu) {
    std::string n = lower(gpu.name);
    const manifest::Gpu* best = nullptr;
    std::size_t best_len = 0;
    for (const auto& g : family) {
        std::string model = lower(g.name);
        for (std::string_view prefix : {"nvidia ", "geforce "}) {
            if (model.starts_with(prefix)) {
                model = model.substr(prefix.size());
            }
        }
        if (!model.empty() && model.size() > best_len && n.find(model) != std::string::npos) {
            best = &g;
            best_len = model.size();
        }
    }
    return best;
}

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
    if (l) {
        v.by_id = true;
        std::string listed = "NVIDIA's driver lists name PCI 10de:" + device +
                             (v.exact ? " subsystem " + subsystem : std::string()) + " (" +
                             l->name + ")";
        unsigned branch = driver.major();
        auto known = support.known_branches();
        unsigned first_branch = l->first_per_branch.begin()->first;
        unsigned last_branch = l->first_per_branch.rbegin()->first;
        // the first mainline driver: "this or newer" holds from it on (an off-mainline tag
        // that lists the GPU earlier drives it, but the mainline drivers after it may not)
        Version first = l->first_per_branch.begin()->second;
        std::string off = l->off_mainline ? " (and the off-mainline " + l->off_mainline->str() + ")"
                                          : std::string();
        if (l->off_mainline && Version::compare_numeric(driver, *l->off_mainline) == 0) {
            v.kind = GpuDriverVerdict::Kind::ok;
            v.why = listed + " from driver " + l->off_mainline->str();
            return v;
        }
        if (auto it = l->first_per_branch.find(branch); it != l->first_per_branch.end()) {
            if (Version::compare_numeric(driver, it->second) >= 0) {
                v.kind = GpuDriverVerdict::Kind::ok;
                v.why = listed + " on the R" + std::to_string(branch) + " branch from " +
                        it->second.str();
                return v;
            }
            v.kind = GpuDriverVerdict::Kind::too_old;
            v.need = it->second;
            v.why = listed + " on the R" + std::to_string(branch) + " branch from " +
                    it->second.str() + " on (first listed in " + first.str() + off + ")";
            return v;
        }
        if (branch < first_branch) {
            v.kind = GpuDriverVerdict::Kind::too_old;
            v.need = first;
            v.why = listed + " first in driver " + first.str() + " (R" +
                    std::to_string(first_branch) + ")" + off;
            return v;
        }
        if (branch > last_branch || !known.count(branch)) {
            // a branch the lists never name: newer than the data, or one without tags
            if (!l->listed_in_newest && branch > last_branch) {
                v.kind = GpuDriverVerdict::Kind::too_new;
                v.last_branch = last_branch;
                v.why = listed + " for the last time in " + l->last_listed.str() +
                        "; the newest driver the lists know drops it";
                return v;
            }
            if (past_last_branch(support, gpu.compute_capability, driver, v)) {
                return v;
            }
            v.kind = Version::compare_numeric(driver, first) >= 0 ? GpuDriverVerdict::Kind::ok
                                                                  : GpuDriverVerdict::Kind::too_old;
            if (v.kind == GpuDriverVerdict::Kind::too_old) {
                v.need = first;
            }
            v.why = listed + " from " + first.str() + " on; the lists do not know the R" +
                    std::to_string(branch) + " branch itself";
            return v;
        }
        // a branch the lists know, between the GPU's first and last, that does not name it
        v.kind = GpuDriverVerdict::Kind::too_old;
        auto next = l->first_per_branch.upper_bound(branch);
        v.need = next->second;
        v.why = listed + ", but not the R" + std::to_string(branch) +
                " branch: it is listed from " + next->second.str() + " (R" +
                std::to_string(next->first) + ")";
        return v;
    }
    // Not listed: the open kernel modules list Turing and newer; older GPUs, and ids newer than
    // the data, take the family rule.
    std::string unknown =
        device.empty() ? "the GPU's PCI id is unknown"
                       : "PCI 10de:" + device + " is not in NVIDIA's lists the manifests hold";
    unsigned cc = gpu.compute_capability;
    const auto* row = family_row(family, gpu);
    if (!cc && row) {
        cc = row->compute_capability;
    }
    if (past_last_branch(support, cc, driver, v)) {
        v.why = unknown + "; by family: " + v.why;
        return v;
    }
    if (row && row->min_driver) {
        bool old = Version::compare_numeric(driver, *row->min_driver) < 0;
        v.kind = old ? GpuDriverVerdict::Kind::too_old : GpuDriverVerdict::Kind::ok;
        if (old) {
            v.need = row->min_driver;
        }
        v.why = unknown + "; by family (" + row->name + "): " + row->min_driver_basis;
        return v;
    }
    v.kind = GpuDriverVerdict::Kind::unknown;
    v.why = unknown + " and the family rule has no minimum for it";
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
        }
    }
    return out;
}

} // namespace cudaenv
