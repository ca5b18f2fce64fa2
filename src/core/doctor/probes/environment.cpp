// Probe 9: the environment against the selection: LD_LIBRARY_PATH pointing at another CUDA or at
// a stubs folder, CUDA_HOME/CUDA_PATH elsewhere, the nvcc on PATH from another toolkit, and
// CUDA_VISIBLE_DEVICES hiding every GPU.
#include "probes.hpp"

namespace cudaenv::doctor::checks {

namespace {

bool has_prefix_file(Host& h, const std::string& dir, std::string_view prefix) {
    for (const auto& n : h.files().list(dir)) {
        if (n.rfind(prefix, 0) == 0) {
            return true;
        }
    }
    return false;
}

} // namespace

Finding environment(Host& h) {
    const auto& t = h.facts().toolkit();
    std::string prefix = t.prefix.empty() ? std::string() : h.files().canonical(t.prefix);
    std::vector<std::string> details;
    std::vector<Issue> issues; // every problem, each with its own fix
    auto add = [&](Status status, std::string what, std::string how) {
        issues.push_back({status, std::move(what), std::move(how)});
    };
    for (const auto& dir : h.files().path_list("LD_LIBRARY_PATH")) {
        std::string real = h.files().canonical(dir);
        if (dir.find("/stubs") != std::string::npos && has_prefix_file(h, dir, "libcuda.so")) {
            add(Status::fail,
                "LD_LIBRARY_PATH includes the link-time stubs folder " + dir +
                    ": its libcuda.so shadows the driver's and every CUDA call fails",
                "remove " + dir +
                    " from LD_LIBRARY_PATH (stubs are for linking: use -L, not the "
                    "loader path)");
            continue;
        }
        if (!prefix.empty() && has_prefix_file(h, dir, "libcudart.so") &&
            !under_or_at(real, prefix)) {
            add(Status::warn,
                "LD_LIBRARY_PATH puts " + dir + " (another CUDA) ahead of the selected " + prefix,
                "drop it from LD_LIBRARY_PATH, or let cudaenv set it: eval \"$(cudaenv env)\" "
                "(or the shell hook from cudaenv init)");
        }
    }
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
        auto v = h.files().env(var);
        if (!v || v->empty() || prefix.empty()) {
            continue;
        }
        details.push_back(std::string(var) + "=" + *v);
        if (h.files().canonical(*v) != prefix) {
            add(Status::warn,
                std::string(var) + "=" + *v + " disagrees with the selected " + prefix,
                "export " + std::string(var) + "=" + t.prefix +
                    " (or eval \"$(cudaenv env)\", which sets both)");
        }
    }
    if (auto nvcc = h.files().which("nvcc")) {
        std::string shims = h.files().machine_path(h.config().root.shims());
        details.push_back("nvcc on PATH: " + *nvcc);
        if (!under_or_at(*nvcc, shims) && !prefix.empty() &&
            !under_or_at(h.files().canonical(*nvcc), prefix)) {
            auto v = h.facts().toolkit_version(nvcc->substr(0, nvcc->rfind("/bin/nvcc")));
            add(Status::warn,
                "the nvcc on PATH is " + *nvcc + (v ? " (CUDA " + v->str() + ")" : "") +
                    ", not the selected toolkit's",
                "put cudaenv's shims first: eval \"$(cudaenv init - bash)\" (or remove that "
                "folder from PATH)");
        }
    }
    if (auto v = h.files().env("CUDA_VISIBLE_DEVICES")) {
        details.push_back("CUDA_VISIBLE_DEVICES=" + *v);
        if (*v == "-1" || v->empty()) {
            add(Status::warn,
                "CUDA_VISIBLE_DEVICES=" + (v->empty() ? std::string("\"\"") : *v) +
                    " hides every GPU: frameworks fall back to the CPU",
                "unset CUDA_VISIBLE_DEVICES (or list the GPUs: CUDA_VISIBLE_DEVICES=0,1)");
        }
    }
    return verdict(std::move(issues),
                   ok("LD_LIBRARY_PATH, CUDA_HOME, CUDA_PATH, PATH and CUDA_VISIBLE_DEVICES agree "
                      "with the selection",
                      details));
}

} // namespace cudaenv::doctor::checks
