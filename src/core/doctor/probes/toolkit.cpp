// Probe 7: the selected toolkit is whole: its version file, the nvcc banner, the full-version
// libcudart file and cudaRuntimeGetVersion from the library itself all name the same CUDA.
#include "probes.hpp"

#include <map>

namespace cudaenv::doctor::checks {

namespace {

std::string mm(const Version& v) {
    return v.truncated(std::min<std::size_t>(2, v.size())).str();
}

/// CUDART_VERSION from the toolkit's cuda_runtime_api.h (11080 -> 11.8), the version the
/// runtime was built as, readable without a driver.
std::optional<Version> header_version(Host& h, const std::string& base) {
    // the define sits near the top (line ~140 of a ~570 KB file): read 64 KiB, not the file
    auto text = h.files().read(base + "/include/cuda_runtime_api.h", 64u << 10);
    if (!text) {
        return std::nullopt;
    }
    for (std::size_t at = text->find("#define CUDART_VERSION"); at != std::string::npos;
         at = text->find("#define CUDART_VERSION", at + 1)) {
        std::size_t i = at + 22;
        if (i < text->size() && text->at(i) != ' ' && text->at(i) != '\t') {
            continue; // CUDART_VERSION_SOMETHING
        }
        i = text->find_first_not_of(" \t", i);
        long long v = 0;
        std::size_t digits = 0;
        while (i != std::string::npos && i < text->size() && digits < 7 && text->at(i) >= '0' &&
               text->at(i) <= '9') {
            v = v * 10 + (text->at(i++) - '0');
            ++digits;
        }
        if (v >= 1000) {
            return Version::try_parse(cuda_from_int(v));
        }
    }
    return std::nullopt;
}

} // namespace

Finding toolkit(Host& h) {
    const auto& t = h.facts().toolkit();
    if (!t.selection_error.empty()) {
        return fail(t.selection_error,
                    "install it (cudaenv install <version>), or change the selection "
                    "(cudaenv shell --unset, or edit the .cuda-version)");
    }
    if (t.prefix.empty()) {
        // not a fault: PyTorch's, JAX's and TensorFlow's wheels bring their own CUDA libraries;
        // a toolkit is for compiling (the cloud images of the field corpus have none)
        return skip("no CUDA toolkit (nothing selected with cudaenv, no /usr/local/cuda, no "
                    "CUDA_HOME): none is needed to run frameworks' pip wheels; to compile, "
                    "cudaenv install 12.4 && cudaenv global 12.4");
    }
    std::string real = h.files().canonical(t.prefix);
    if (!h.files().is_dir(real)) {
        return fail("the selected toolkit " + t.prefix + " does not exist",
                    t.cudaenv_version ? "cudaenv install " + *t.cudaenv_version
                                      : "reinstall the toolkit, or select another");
    }
    std::vector<std::string> details{"selected by " + t.origin, "prefix: " + real};
    std::map<std::string, std::string> says; // source -> major.minor
    std::vector<std::string> order;
    auto note = [&](const std::string& source, const Version& v) {
        says[source] = mm(v);
        order.push_back(source);
        details.push_back(source + ": " + v.str());
    };
    if (t.cudaenv_version && t.cuda) {
        note("cudaenv's record", *t.cuda);
    }
    if (t.cublas && !t.cublas_patch.empty()) {
        details.push_back("cuBLAS: " + t.cublas->str() + ", patched: NVIDIA's cuBLAS patch " +
                          t.cublas_patch + " in place of the release's own (installed with " +
                          "--patch cublas; back: cudaenv install " + *t.cudaenv_version +
                          " --patch none)");
    }
    std::string base = real == "/" ? "" : real;
    for (const char* file : {"version.json", "version.txt"}) {
        if (h.files().exists(base + "/" + file)) {
            if (auto v = h.facts().toolkit_version(real)) {
                note(file, *v);
            }
            break;
        }
    }
    auto nvcc = base + "/bin/nvcc";
    std::string nvcc_note;
    if (h.files().exists(nvcc)) {
        auto ran = h.files().run({nvcc, "--version"});
        if (ran && ran->status == 0) {
            if (auto v = parse_nvcc_banner(ran->out)) {
                note("nvcc --version", *v);
            } else {
                nvcc_note = "nvcc printed no version banner";
            }
        } else {
            nvcc_note =
                "nvcc --version failed" +
                (ran ? " (exit " + std::to_string(ran->status) + ")" : ": " + ran.error().message);
        }
    } else {
        details.push_back("no bin/nvcc (a runtime-only install)");
    }
    std::string lib = lib_dir(h, real);
    std::string soname_file;
    std::string full_file;
    for (const auto& name : h.files().list(lib)) {
        if (name.rfind("libcudart.so.", 0) != 0) {
            continue;
        }
        auto v = Version::try_parse(name.substr(13));
        if (!v) {
            continue;
        }
        if (v->size() >= 3) {
            full_file = name;
            note("libcudart file", *v);
        } else if (soname_file.empty() || v->size() == 1) {
            soname_file = name; // libcudart.so.12 or libcudart.so.11.0
        }
    }
    if (soname_file.empty() && full_file.empty()) {
        return fail("the toolkit at " + real + " has no libcudart in " + lib,
                    t.cudaenv_version ? "cudaenv uninstall " + *t.cudaenv_version +
                                            " && cudaenv install " + *t.cudaenv_version
                                      : "reinstall the CUDA runtime (cuda_cudart)",
                    details);
    }
    std::string probe_file = lib + "/" + (soname_file.empty() ? full_file : soname_file);
    if (!h.files().exists(h.files().canonical(probe_file))) {
        return fail(probe_file + " is a dangling link (its full-version file is gone)",
                    t.cudaenv_version ? "cudaenv uninstall " + *t.cudaenv_version +
                                            " && cudaenv install " + *t.cudaenv_version
                                      : "reinstall the CUDA runtime (cuda_cudart)",
                    details);
    }
    if (full_file.empty()) {
        details.push_back("no full-version libcudart file (" + soname_file +
                          " is the library itself, as in NVIDIA's pip wheels)");
    }
    if (auto header = header_version(h, base)) {
        note("cuda_runtime_api.h", *header);
    }
    const auto& a = h.facts().query("cudart", probe_file);
    if (!a.loaded) {
        return fail(probe_file +
                        " does not load: " + (a.error.empty() ? "the query child failed" : a.error),
                    t.cudaenv_version ? "cudaenv uninstall " + *t.cudaenv_version +
                                            " && cudaenv install " + *t.cudaenv_version
                                      : "reinstall the CUDA runtime (cuda_cudart)",
                    details);
    }
    // A CUDA 11 runtime asks the driver first: without one it returns 35
    // (cudaErrorInsufficientDriver) and leaves the value unset; CUDA 12.x/13 answer anyway.
    // Then the files decide the version, and the missing driver stays the driver probes' finding.
    auto rc = a.number("rc");
    auto answered = a.number("version");
    const char* key = "cudaRuntimeGetVersion";
    if (!rc || *rc != 0 || !answered || *answered <= 0) {
        std::string why = rc && *rc != 0 ? "returned " + std::to_string(*rc) +
                                               (*rc == 35 ? " (cudaErrorInsufficientDriver)" : "")
                                         : "answered no version";
        if (order.empty()) {
            return fail(probe_file + " " + why +
                            " to cudaRuntimeGetVersion, and no file of the toolkit names its "
                            "version",
                        t.cudaenv_version ? "cudaenv uninstall " + *t.cudaenv_version +
                                                " && cudaenv install " + *t.cudaenv_version
                                          : "reinstall the CUDA runtime (cuda_cudart)",
                        details);
        }
        details.push_back("cudaRuntimeGetVersion " + why +
                          (rc && *rc == 35 ? ": it needs a driver to answer; "
                                             "the files name the version"
                                           : "; the files name the version"));
        key = nullptr;
    } else {
        note(key, *Version::try_parse(cuda_from_int(*answered)));
    }
    // The reference every other source is compared with: the runtime's answer, else the
    // full-version library file, else the first file that named a version.
    std::string ref_source =
        key ? key : (says.count("libcudart file") ? "libcudart file" : order[0]);
    auto runtime = *Version::try_parse(says[ref_source]);
    std::vector<std::string> disagree;
    for (const auto& s : order) {
        if (says[s] != says[ref_source]) {
            disagree.push_back(s + " says " + says[s]);
        }
    }
    if (!disagree.empty()) {
        return fail("the toolkit at " + real + " disagrees with itself: " +
                        (key ? std::string("the runtime library is ") + mm(runtime)
                             : ref_source + " says " + mm(runtime)) +
                        " but " + join(disagree),
                    t.cudaenv_version ? "cudaenv uninstall " + *t.cudaenv_version +
                                            " && cudaenv install " + *t.cudaenv_version
                                      : "reinstall the toolkit so that every part comes from one "
                                        "release",
                    details);
    }
    if (!nvcc_note.empty()) {
        return warn("CUDA " + mm(runtime) + " at " + real + ", but " + nvcc_note,
                    "reinstall cuda_nvcc",
                    details);
    }
    std::string agree;
    for (const auto& s : order) {
        if (s != ref_source) {
            agree += ", " + s;
        }
    }
    return ok("CUDA " + mm(runtime) + " at " + real + " (" + t.origin + "); " + ref_source + agree +
                  " agree",
              details);
}

} // namespace cudaenv::doctor::checks
