#include "doctor.hpp"

#include "host.hpp"
#include "probes/probes.hpp"

#include <algorithm>
#include <map>

namespace cudaenv::doctor {

std::string_view to_string(Status s) {
    switch (s) {
    case Status::ok:
        return "ok";
    case Status::skip:
        return "skip";
    case Status::warn:
        return "warn";
    case Status::fail:
        return "fail";
    }
    return "?";
}

Finding ok(std::string summary, std::vector<std::string> details) {
    return {Status::ok, std::move(summary), std::move(details), {}};
}

Finding warn(std::string summary, std::string fix, std::vector<std::string> details) {
    return {Status::warn, std::move(summary), std::move(details), std::move(fix)};
}

Finding fail(std::string summary, std::string fix, std::vector<std::string> details) {
    return {Status::fail, std::move(summary), std::move(details), std::move(fix)};
}

Finding skip(std::string summary, std::vector<std::string> details) {
    return {Status::skip, std::move(summary), std::move(details), {}};
}

Finding verdict(std::vector<Issue> issues, Finding all_clear) {
    if (issues.empty()) {
        return all_clear;
    }
    std::stable_sort(issues.begin(), issues.end(), [](const Issue& a, const Issue& b) {
        return static_cast<int>(a.status) > static_cast<int>(b.status);
    });
    Finding f;
    f.status = issues.front().status;
    f.summary = std::move(issues.front().summary);
    f.fix = std::move(issues.front().fix);
    f.details = std::move(all_clear.details);
    f.more.assign(std::make_move_iterator(issues.begin() + 1),
                  std::make_move_iterator(issues.end()));
    return f;
}

namespace {

constexpr std::string_view k_layers[] = {
    "GPU", "Driver", "Toolkit", "Libraries", "Environment", "Frameworks", "Advisories", "cudaenv"};

const Probe k_probes[] = {
    {"gpu", "GPU", "GPU present", {}, &checks::gpu},
    {"arch", "GPU", "GPU architecture", {"gpu", "toolkit"}, &checks::arch},
    {"pcie", "GPU", "PCIe link", {"gpu"}, &checks::pcie},
    {"thermal", "GPU", "Temperature and throttling", {"gpu", "driver"}, &checks::thermal},
    {"mig", "GPU", "MIG partitioning", {"gpu", "driver"}, &checks::mig},
    {"xid", "GPU", "Kernel log: Xid events", {"gpu"}, &checks::xid},
    {"health",
     "GPU",
     "GPU health (ECC, memory repair, persistence)",
     {"gpu", "driver"},
     &checks::health},
    {"grace",
     "GPU",
     "Grace superchip: GPU memory as NUMA nodes, kernel settings",
     {"gpu"},
     &checks::grace},
    {"driver", "Driver", "Kernel driver", {}, &checks::driver},
    {"libcuda", "Driver", "libcuda", {}, &checks::libcuda},
    {"fabric", "Driver", "NVSwitch fabric manager", {"driver"}, &checks::fabric},
    {"smoke", "Driver", "A kernel on every GPU (--deep)", {"libcuda"}, &checks::smoke},
    {"driver-cuda", "Driver", "Driver against CUDA", {"driver", "toolkit"}, &checks::driver_cuda},
    {"compat", "Driver", "Forward compatibility (cuda_compat)", {"toolkit"}, &checks::compat},
    {"toolkit", "Toolkit", "Selected toolkit", {}, &checks::toolkit},
    {"integrity", "Toolkit", "The selected version's files", {}, &checks::integrity},
    {"cuda-link", "Toolkit", "/usr/local/cuda", {}, &checks::cuda_link},
    {"compiler", "Toolkit", "Host compiler", {"toolkit"}, &checks::compiler},
    {"loader", "Libraries", "What loads", {}, &checks::loader},
    {"cudnn", "Libraries", "cuDNN", {"toolkit"}, &checks::cudnn},
    {"environment", "Environment", "Environment variables", {}, &checks::environment},
    {"container", "Environment", "Container", {}, &checks::container},
    {"container-compat",
     "Environment",
     "CUDA forward compatibility (containers)",
     {},
     &checks::container_compat},
    {"cdi", "Environment", "Container device specs (CDI)", {}, &checks::cdi},
    {"wsl", "Environment", "WSL2", {}, &checks::wsl},
    {"frameworks", "Frameworks", "TensorFlow, PyTorch and JAX", {}, &checks::frameworks},
    {"advisories",
     "Advisories",
     "Known problems: security bulletins, cuBLAS fixes",
     {},
     &checks::advisories},
    {"cudaenv", "cudaenv", "cudaenv itself", {}, &checks::self},
};

} // namespace

std::span<const Probe> probes() {
    return k_probes;
}

std::span<const std::string_view> layers() {
    return k_layers;
}

const Probe* find_probe(std::string_view id) {
    for (const auto& p : k_probes) {
        if (p.id == id) {
            return &p;
        }
    }
    return nullptr;
}

std::vector<Entry> run(Host& host, const std::vector<std::string>& only) {
    if (only.empty()) {
        // a full run: its remembered children start together, not one after the other
        checks::start_children(host);
    }
    std::map<std::string_view, Finding> done;
    auto run_one = [&](auto& self, const Probe& p) -> const Finding& {
        if (auto it = done.find(p.id); it != done.end()) {
            return it->second;
        }
        std::optional<Finding> skipped;
        for (auto need : p.needs) {
            const Probe* dep = find_probe(need);
            if (!dep) {
                continue;
            }
            const Finding& f = self(self, *dep);
            if (f.status == Status::fail || f.status == Status::skip) {
                skipped = skip("skipped: " + std::string(dep->id) + ": " + f.summary);
                break;
            }
        }
        Finding f;
        if (skipped) {
            f = std::move(*skipped);
        } else {
            try {
                f = p.run(host);
            } catch (const std::exception& e) {
                f = fail(std::string("the probe itself failed: ") + e.what(),
                         "report this at the cudaenv issue tracker with `cudaenv doctor -v`");
            }
        }
        return done.emplace(p.id, std::move(f)).first->second;
    };
    std::vector<Entry> out;
    for (const auto& p : k_probes) {
        if (!only.empty() && std::find(only.begin(), only.end(), p.id) == only.end()) {
            continue;
        }
        out.push_back({&p, run_one(run_one, p)});
    }
    return out;
}

Status worst(const std::vector<Entry>& entries) {
    Status s = Status::ok;
    for (const auto& e : entries) {
        s = std::max(s, e.finding.status);
    }
    return s;
}

} // namespace cudaenv::doctor
