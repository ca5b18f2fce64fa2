// Probe 8: what actually loads. For libcudart, libcudnn, libcublas and libcuda, the file the
// loader would pick (LD_LIBRARY_PATH, then the ld.so cache, then the default folders) and every
// copy it shadows; ld.so.conf.d entries for folders that are gone; other packages' conf files
// (000_cuda.conf, 988_cuda-12.conf) naming another toolkit; two CUDA majors' runtimes at once.
#include "../../activate/machine.hpp"
#include "probes.hpp"

#include <algorithm>
#include <set>

namespace cudaenv::doctor::checks {

namespace {

bool under(const std::string& path, const std::string& dir) {
    return !dir.empty() && path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
           path[dir.size()] == '/';
}

/// libcudnn.so.N in a folder: N, if there is one.
std::optional<unsigned> cudnn_major_in(Host& h, const std::string& dir) {
    for (const auto& name : h.files().list(dir)) {
        if (name.rfind("libcudnn.so.", 0) == 0) {
            if (auto v = Version::try_parse(name.substr(12))) {
                return v->major();
            }
        }
    }
    return std::nullopt;
}

} // namespace

Finding loader(Host& h) {
    const auto& t = h.facts().toolkit();
    std::string prefix = t.prefix.empty() ? std::string() : h.files().canonical(t.prefix);
    std::string libdir = prefix.empty() ? std::string() : h.files().canonical(lib_dir(h, prefix));
    std::vector<std::string> details;

    // (rank, what, fix): the headline is the first problem of the lowest rank; rank 0 is a wrong
    // copy that programs really load, which explains more than a stale cache does
    struct Problem {
        int rank;
        std::string what, fix;
    };

    std::vector<Problem> problems;
    auto problem = [&](std::string what, std::string how, int rank = 1) {
        problems.push_back({rank, std::move(what), std::move(how)});
    };
    if (!h.loader().ld_cache_error().empty()) {
        problem("the loader cache cannot be read: " + h.loader().ld_cache_error(), "sudo ldconfig");
    }

    // the libraries, by SONAME
    std::vector<std::pair<std::string, bool>> sonames; // soname, belongs to the toolkit
    if (t.cuda) {
        unsigned major = t.cuda->major();
        sonames.emplace_back(cudart_soname(*t.cuda), true);
        std::optional<unsigned> cudnn =
            t.cudnn ? std::optional(t.cudnn->major()) : cudnn_major_in(h, libdir);
        if (cudnn) {
            sonames.emplace_back("libcudnn.so." + std::to_string(*cudnn), true);
        }
        sonames.emplace_back("libcublas.so." + std::to_string(major), true);
    }
    sonames.emplace_back("libcuda.so.1", false);
    std::vector<std::string> good;
    for (const auto& [soname, ours] : sonames) {
        auto p = h.loader().pick(soname);
        if (!p.not_in_cache.empty()) {
            problem("the loader cache is out of date: " + p.not_in_cache.front() +
                        " is in a configured folder but not in the cache",
                    "sudo ldconfig");
        }
        if (p.path.empty()) {
            details.push_back(soname + ": not found");
            if (ours && soname.rfind("libcublas", 0) != 0 && p.not_in_cache.empty()) {
                problem(soname + " is not found by the loader: programs outside `cudaenv exec` "
                                 "cannot load it",
                        t.cudaenv_version ? "cudaenv global " + *t.cudaenv_version +
                                                " (lists its lib64 in /etc/ld.so.conf.d), or run "
                                                "through cudaenv exec"
                                          : "add " + libdir +
                                                " to /etc/ld.so.conf.d and run "
                                                "sudo ldconfig");
            }
            continue;
        }
        std::string real = h.files().canonical(p.path);
        std::string line = soname + " -> " + p.path + " (" + p.via + ")";
        if (real != p.path) {
            line += " = " + real;
        }
        details.push_back(line);
        for (const auto& s : p.shadowed) {
            details.push_back("  shadows " + s);
        }
        if (ours && !libdir.empty()) {
            if (under(real, libdir) || under(real, prefix)) {
                good.push_back(soname);
            } else {
                std::string theirs = library_version(h, soname, p.path);
                std::string mine = soname.rfind("libcudart.", 0) == 0
                                       ? t.cuda->str()
                                       : library_version(h, soname, libdir + "/" + soname);
                problem("programs load " + library_label(soname) +
                            (theirs.empty() ? "" : " " + theirs) + " from " + p.path + " (" +
                            p.via + "), not the selected" + (mine.empty() ? "" : " " + mine) +
                            " in " + libdir,
                        wrong_copy_fix(h, p),
                        0);
            }
        }
    }

    // the configuration itself
    std::string ours_conf = "/etc/ld.so.conf.d/" + std::string(activate::k_ld_conf_name);
    std::set<std::string> reported;
    for (const auto& c : h.loader().conf_dirs()) {
        if (!h.files().is_dir(c.dir)) {
            // folders a distribution lists whether or not they exist are not findings
            if (!gpu_related(c)) {
                details.push_back(c.file + " lists " + c.dir + " (absent)");
            } else if (reported.insert(c.file + c.dir).second) {
                problem(c.file + " lists " + c.dir + ", which no longer exists (a removed toolkit)",
                        c.file == ours_conf ? "cudaenv global <an installed version>"
                                            : "sudo rm " + c.file + " && sudo ldconfig");
            }
            continue;
        }
        if (c.file == ours_conf || prefix.empty()) {
            continue;
        }
        std::string real = h.files().canonical(c.dir);
        bool cuda_dir =
            lower(c.dir).find("cuda") != std::string::npos ||
            h.files().exists(c.dir + "/" + cudart_soname(*Version::try_parse("11.0"))) ||
            h.files().exists(c.dir + "/libcudart.so.12") ||
            h.files().exists(c.dir + "/libcudart.so.13");
        if (cuda_dir && !under(real, prefix) && real != prefix &&
            reported.insert(c.file + c.dir).second) {
            problem(c.file + " lists " + c.dir + ", another CUDA than the selected " + prefix +
                        ": which one wins is not guaranteed",
                    "sudo rm " + c.file +
                        " && sudo ldconfig (cudaenv global manages the "
                        "machine's entry)");
        }
    }

    // two CUDA majors' runtimes in the cache
    std::set<std::string> runtimes;
    for (const auto& e : h.loader().ld_cache()) {
        if (e.soname.rfind("libcudart.so.", 0) == 0) {
            runtimes.insert(e.soname + " (" + e.path + ")");
        }
    }
    if (runtimes.size() > 1) {
        problem("two CUDA majors' runtimes on the loader path: " +
                    join(std::vector<std::string>(runtimes.begin(), runtimes.end())),
                "keep one CUDA in /etc/ld.so.conf.d (cudaenv global) and reach the other with "
                "cudaenv use / cudaenv exec");
    }

    // every problem, the wrong copies programs really load first (rank 0), then the rest
    std::stable_sort(problems.begin(), problems.end(), [](const Problem& a, const Problem& b) {
        return a.rank < b.rank;
    });
    std::vector<Issue> issues;
    for (auto& p : problems) {
        issues.push_back({Status::warn, std::move(p.what), std::move(p.fix)});
    }
    if (!issues.empty()) {
        return verdict(std::move(issues), ok("", details));
    }
    if (good.empty()) {
        return ok("no CUDA toolkit selected; libcuda as above", details);
    }
    return ok(join(good) + " load from " + libdir, details);
}

} // namespace cudaenv::doctor::checks
