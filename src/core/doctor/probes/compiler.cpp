// Probe 17: the host compiler nvcc will call against the newest the selected CUDA accepts. nvcc
// takes it from -ccbin in NVCC_APPEND_FLAGS / NVCC_PREPEND_FLAGS, else from NVCC_CCBIN -- but
// only an nvcc that reads NVCC_CCBIN (CUDA 11.x's does not: the variable is not in the binary),
// else gcc on PATH. The fix offered is one this nvcc obeys.
#include "probes.hpp"

namespace cudaenv::doctor::checks {

namespace {

std::optional<Version> compiler_version(Host& h, const std::string& exe, bool gcc) {
    if (!gcc) {
        if (auto v = clang_version_from_layout(h.files(), exe)) {
            return v;
        }
    }
    auto ran = h.files().run(compiler_version_command(exe, gcc));
    if (!ran || ran->status != 0) {
        return std::nullopt;
    }
    std::string out = ran->out.substr(0, ran->out.find_first_of("\r\n"));
    return Version::try_parse(out);
}

/// The value of -ccbin / --compiler-bindir in an NVCC_*_FLAGS value (the last one wins).
std::optional<std::string> ccbin_in_flags(const std::string& flags) {
    std::vector<std::string> words;
    std::string w;
    char quote = 0;
    for (char c : flags) {
        if (quote) {
            if (c == quote) {
                quote = 0;
            } else {
                w += c;
            }
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == ' ' || c == '\t') {
            if (!w.empty()) {
                words.push_back(w);
            }
            w.clear();
        } else {
            w += c;
        }
    }
    if (!w.empty()) {
        words.push_back(w);
    }
    std::optional<std::string> found;
    for (std::size_t i = 0; i < words.size(); ++i) {
        for (const std::string opt : {"-ccbin", "--compiler-bindir"}) {
            if (words[i] == opt && i + 1 < words.size()) {
                found = words[i + 1];
            } else if (words[i].rfind(opt + "=", 0) == 0) {
                found = words[i].substr(opt.size() + 1);
            }
        }
    }
    return found;
}

} // namespace

std::optional<Version> clang_version_from_layout(const Files& files, const std::string& exe) {
    std::string real = files.canonical(exe);
    auto slash = real.rfind('/');
    if (slash == std::string::npos || slash == 0 || real.compare(slash + 1, 5, "clang") != 0) {
        return std::nullopt;
    }
    auto up = real.rfind('/', slash - 1);
    if (up == std::string::npos) {
        return std::nullopt;
    }
    std::string resources = real.substr(0, up) + "/lib/clang";
    auto names = files.list(resources);
    if (names.size() != 1 || !files.is_dir(resources + "/" + names[0])) {
        return std::nullopt;
    }
    auto v = Version::try_parse(names[0]);
    if (!v || v->size() != 3) {
        return std::nullopt;
    }
    return v;
}

std::vector<std::string> compiler_version_command(const std::string& exe, bool gcc) {
    if (gcc) {
        return {exe, "-dumpfullversion", "-dumpversion"};
    }
    return {exe, "-dumpversion"};
}

Finding compiler(Host& h) {
    const auto& t = h.facts().toolkit();
    if (t.prefix.empty()) {
        return skip("no CUDA toolkit selected");
    }
    const auto* rel = h.facts().toolkit_release();
    if (!rel || (!rel->gcc_max && !rel->clang_max)) {
        return skip("the manifests know no host-compiler limits for this CUDA");
    }
    std::string cuda = "CUDA " + rel->version.truncated(2).str();
    std::vector<std::string> details, problems;
    std::string fix;
    std::string nvcc = (t.prefix == "/" ? "" : t.prefix) + "/bin/nvcc";
    // nvcc 12.x and later read NVCC_CCBIN; 11.x ignores it. The binary says which it is.
    // Asked only when it matters (NVCC_CCBIN set, or a fix to offer): nvcc is ~30 MB.
    std::optional<bool> reads_ccbin;
    auto reads_ccbin_env = [&] {
        if (!reads_ccbin) {
            reads_ccbin = h.files().exists(nvcc) && h.files().file_contains(nvcc, "NVCC_CCBIN");
        }
        return *reads_ccbin;
    };
    std::optional<std::string> gcc;
    std::optional<std::string> chosen; // what the user set, and where
    for (const char* var : {"NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS"}) {
        if (auto flags = h.files().env(var); flags && !chosen) {
            if (auto v = ccbin_in_flags(*flags)) {
                chosen = *v;
                details.push_back(std::string(var) + " gives -ccbin " + *v);
            }
        }
    }
    if (auto ccbin = h.files().env("NVCC_CCBIN"); ccbin && !ccbin->empty()) {
        if (chosen) {
            details.push_back("NVCC_CCBIN=" + *ccbin + " (the -ccbin flag wins over it)");
        } else if (reads_ccbin_env()) {
            chosen = *ccbin;
            details.push_back("NVCC_CCBIN=" + *ccbin);
        } else {
            details.push_back("NVCC_CCBIN=" + *ccbin + " is ignored: " + cuda +
                              "'s nvcc does not read NVCC_CCBIN");
        }
    }
    if (chosen) {
        // -ccbin names a compiler or the folder that holds one
        std::string c = *chosen;
        if (c.find('/') == std::string::npos) {
            gcc = h.files().which(c);
        } else if (h.files().is_dir(c)) {
            gcc = c + "/gcc";
        } else {
            gcc = c;
        }
    } else {
        gcc = h.files().which("gcc");
    }
    auto clang = h.files().which("clang");
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
                std::string how = reads_ccbin_env()
                                      ? "export NVCC_CCBIN=/usr/bin/" + want
                                      : "export NVCC_PREPEND_FLAGS='-ccbin /usr/bin/" + want + "'";
                fix = "install " + want + " and make nvcc use it: " + how + " (or nvcc -ccbin " +
                      want + "), or select a newer CUDA";
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
