// Probe 17: the host compiler nvcc will call (NVCC_CCBIN, else gcc on PATH; clang too) against the
// newest the selected CUDA accepts.
#include "probes.hpp"

namespace cudaenv::doctor::checks {

namespace {

std::optional<Version> compiler_version(Host& h, const std::string& exe, bool gcc) {
    auto ran =
        gcc ? h.run({exe, "-dumpfullversion", "-dumpversion"}) : h.run({exe, "-dumpversion"});
    if (!ran || ran->status != 0) {
        return std::nullopt;
    }
    std::string out = ran->out.substr(0, ran->out.find_first_of("\r\n"));
    return Version::try_parse(out);
}

} // namespace

Finding compiler(Host& h) {
    const auto& t = h.toolkit();
    if (t.prefix.empty()) {
        return skip("no CUDA toolkit selected");
    }
    const auto* rel = h.cuda_release();
    if (!rel || (!rel->gcc_max && !rel->clang_max)) {
        return skip("the manifests know no host-compiler limits for this CUDA");
    }
    std::string cuda = "CUDA " + rel->version.truncated(2).str();
    std::vector<std::string> details, problems;
    std::string fix;
    std::optional<std::string> gcc;
    if (auto ccbin = h.env("NVCC_CCBIN"); ccbin && !ccbin->empty()) {
        gcc = ccbin->find('/') == std::string::npos ? h.which(*ccbin) : std::optional(*ccbin);
        details.push_back("NVCC_CCBIN=" + *ccbin);
    } else {
        gcc = h.which("gcc");
    }
    auto clang = h.which("clang");
    bool gcc_is_clang = gcc && gcc->find("clang") != std::string::npos;
    if (!gcc && !clang) {
        return skip("no host compiler on PATH (only needed to build CUDA code)", details);
    }
    std::vector<std::string> seen;
    auto check = [&](const std::string& exe, bool is_gcc, const std::optional<Version>& max) {
        auto v = compiler_version(h, exe, is_gcc);
        std::string what =
            std::string(is_gcc ? "gcc " : "clang ") + (v ? v->str() : "(unknown version)");
        details.push_back(exe + ": " + what +
                          (max ? "; " + cuda + " accepts up to " + max->str() : ""));
        seen.push_back(what);
        if (v && max && v->major() > max->major()) {
            problems.push_back(what + " is newer than " + cuda + " accepts (<= " + max->str() +
                               ")");
            std::string want =
                std::string(is_gcc ? "g++-" : "clang++-") + std::to_string(max->major());
            if (fix.empty()) {
                fix = "install " + want + " and make nvcc use it: export NVCC_CCBIN=/usr/bin/" +
                      want + " (or nvcc -ccbin " + want + "), or select a newer CUDA";
            }
        }
    };
    if (gcc) {
        check(*gcc, !gcc_is_clang, gcc_is_clang ? rel->clang_max : rel->gcc_max);
    }
    if (clang && !(gcc && gcc_is_clang)) {
        check(*clang, false, rel->clang_max);
    }
    if (!problems.empty()) {
        // nvcc uses gcc unless told otherwise: a too-new clang alone is only a note
        bool gcc_bad = gcc && problems.front().rfind(gcc_is_clang ? "clang" : "gcc", 0) == 0;
        if (gcc_bad) {
            return warn(
                problems.front() + ": nvcc stops with \"unsupported GNU version\"", fix, details);
        }
        details.push_back(problems.front());
    }
    return ok(join(seen) + " within what " + cuda + "'s nvcc accepts", details);
}

} // namespace cudaenv::doctor::checks
