// The children a full doctor run asks, started at once (probes.hpp start_children): each is asked
// here as the probe that needs it would ask it (the same commands, the same inputs), so that the
// probe's run() finds it under way instead of starting it after the one before. What a probe would
// not ask is not started; where the choice depends on more than the files and the environment
// (-ccbin in NVCC_*_FLAGS), the probe asks itself, as before.
#include "probes.hpp"

namespace cudaenv::doctor::checks {

void start_children(Host& h) {
    if (!h.config().answers) {
        return;
    }
    // the loader cache first: libcudnn found through the loader waits for it
    h.loader().prefetch_ld_cache();
    const auto& t = h.facts().toolkit();
    if (!t.selection_error.empty() || t.prefix.empty()) {
        return;
    }
    std::string real = h.files().canonical(t.prefix);
    if (!h.files().is_dir(real)) {
        return;
    }
    std::string base = real == "/" ? "" : real;
    // toolkit: nvcc --version (facts' toolkit_version asks the same when there is no version file)
    if (h.files().exists(base + "/bin/nvcc")) {
        h.files().prefetch({base + "/bin/nvcc", "--version"});
    }
    // environment: an nvcc on PATH from another toolkit, asked for its version when that toolkit
    // has no version file (facts' toolkit_version)
    if (auto nvcc = h.files().which("nvcc")) {
        std::string shims = h.files().machine_path(h.config().root.shims());
        auto at = nvcc->rfind("/bin/nvcc");
        std::string other = at == std::string::npos ? std::string() : nvcc->substr(0, at);
        if (!other.empty() && !under_or_at(*nvcc, shims) &&
            !under_or_at(h.files().canonical(*nvcc), real) &&
            !h.files().exists(other + "/version.json") &&
            !h.files().exists(other + "/version.txt") && h.files().exists(other + "/bin/nvcc")) {
            h.files().prefetch({other + "/bin/nvcc", "--version"});
        }
    }
    // compiler: gcc and clang on PATH, unless the user chose one (the probe then asks itself)
    const auto* rel = h.facts().toolkit_release();
    bool chosen = h.files().env("NVCC_APPEND_FLAGS") || h.files().env("NVCC_PREPEND_FLAGS") ||
                  h.files().env("NVCC_CCBIN");
    if (rel && (rel->gcc_max || rel->clang_max) && !chosen) {
        auto gcc = h.files().which("gcc");
        auto clang = h.files().which("clang");
        bool gcc_is_clang = gcc && gcc->find("clang") != std::string::npos;
        // a clang whose layout says its version is not asked at all
        if (gcc && (!gcc_is_clang || !clang_version_from_layout(h.files(), *gcc))) {
            h.files().prefetch(compiler_version_command(*gcc, !gcc_is_clang));
        }
        if (clang && !(gcc && gcc_is_clang) && !clang_version_from_layout(h.files(), *clang)) {
            h.files().prefetch(compiler_version_command(*clang, false));
        }
    }
    // toolkit: its libcudart, the file the toolkit probe asks (the SONAME link, else the full one)
    std::string lib = lib_dir(h, real);
    std::string soname_file, full_file, cudnn_file;
    for (const auto& name : h.files().list(lib)) {
        if (name.rfind("libcudart.so.", 0) == 0) {
            if (auto v = Version::try_parse(name.substr(13))) {
                if (v->size() >= 3) {
                    full_file = name;
                } else if (soname_file.empty() || v->size() == 1) {
                    soname_file = name;
                }
            }
        } else if (name.rfind("libcudnn.so.", 0) == 0 && cudnn_file.empty()) {
            if (auto v = Version::try_parse(name.substr(12)); v && v->size() == 1) {
                cudnn_file = name;
            }
        }
    }
    if (!soname_file.empty() || !full_file.empty()) {
        h.facts().prefetch_query("cudart",
                                 lib + "/" + (soname_file.empty() ? full_file : soname_file));
    }
    // cudnn: the toolkit's libcudnn, and the copy the loader picks when that is another file (the
    // probe judges both); when the toolkit has none, the loader's. Last: the loader waits for
    // `ldconfig -p`, while the children above run.
    if (!cudnn_file.empty()) {
        std::string ours = lib + "/" + cudnn_file;
        h.facts().prefetch_query("cudnn", ours);
        if (auto p = h.loader().pick(cudnn_file);
            !p.path.empty() && h.files().canonical(p.path) != h.files().canonical(ours)) {
            h.facts().prefetch_query("cudnn", p.path); // the copy programs load, judged too
        }
    } else {
        for (unsigned major : {9u, 8u, 7u}) {
            auto p = h.loader().pick("libcudnn.so." + std::to_string(major));
            if (!p.path.empty()) {
                h.facts().prefetch_query("cudnn", p.path);
                break;
            }
        }
    }
}

} // namespace cudaenv::doctor::checks
