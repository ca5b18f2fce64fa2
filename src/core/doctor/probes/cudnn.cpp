// Probe 10: cuDNN is three things that must agree: the header's version macros, the library's own
// cudnnGetVersion() (asked in a child process), and every sublibrary of its major next to
// libcudnn; and the CUDA major it was built for must be the toolkit's.
#include "../../install/compose.hpp"
#include "probes.hpp"

namespace cudaenv::doctor::checks {

namespace {

struct Found {
    std::string dir;
    std::string file; ///< libcudnn.so.N
    unsigned major = 0;
    std::string how;
};

std::optional<Found> find_in(Host& h, const std::string& dir, const std::string& how) {
    for (const auto& name : h.files().list(dir)) {
        if (name.rfind("libcudnn.so.", 0) == 0) {
            if (auto v = Version::try_parse(name.substr(12)); v && v->size() == 1) {
                return Found{dir, name, v->major(), how};
            }
        }
    }
    return std::nullopt;
}

} // namespace

Finding cudnn(Host& h) {
    const auto& t = h.facts().toolkit();
    std::string prefix = t.prefix.empty() ? std::string() : h.files().canonical(t.prefix);
    std::string libdir = prefix.empty() ? std::string() : lib_dir(h, prefix);
    std::optional<Found> found = libdir.empty() ? std::nullopt : find_in(h, libdir, "the toolkit");
    if (!found) {
        for (unsigned major : {9u, 8u, 7u}) {
            auto p = h.loader().pick("libcudnn.so." + std::to_string(major));
            if (!p.path.empty()) {
                found = Found{p.path.substr(0, p.path.rfind('/')),
                              "libcudnn.so." + std::to_string(major),
                              major,
                              "the loader (" + p.via + ")"};
                break;
            }
        }
    }
    std::string reinstall = t.cudaenv_version ? "cudaenv uninstall " + *t.cudaenv_version +
                                                    " && cudaenv install " + *t.cudaenv_version
                                              : "reinstall cuDNN from one release (headers and "
                                                "libraries together)";
    if (!found) {
        if (t.cudnn) {
            return fail("cudaenv's record names cuDNN " + t.cudnn->str() + " but " + libdir +
                            " has no libcudnn",
                        reinstall);
        }
        return skip("no cuDNN with the selected toolkit or on the loader path (frameworks that "
                    "need it: cudaenv install <cuda>+cudnn-<version>)");
    }
    std::vector<std::string> details{"libcudnn: " + found->dir + "/" + found->file + " (found by " +
                                     found->how + ")"};
    // Programs load what the loader picks, not what the toolkit holds: judge that copy.
    if (found->how == "the toolkit") {
        std::string ours = found->dir + "/" + found->file;
        auto p = h.loader().pick(found->file);
        if (!p.path.empty() && h.files().canonical(p.path) != h.files().canonical(ours)) {
            std::string theirs = library_version(h, found->file, p.path);
            std::string mine = library_version(h, found->file, ours);
            details.push_back("the loader picks " + p.path + " (" + p.via + ")" +
                              (theirs.empty() ? "" : ": cuDNN " + theirs));
            if (theirs != mine) {
                return fail("programs load cuDNN " + (theirs.empty() ? "(unknown)" : theirs) +
                                " from " + p.path + ", not the selected " + mine + " in " +
                                found->dir,
                            wrong_copy_fix(h, p),
                            details);
            }
            found = Found{p.path.substr(0, p.path.rfind('/')),
                          found->file,
                          found->major,
                          "the loader (" + p.via + "), the same version as the toolkit's"};
            details.push_back("judging that copy: " + found->dir + "/" + found->file);
        }
    }
    // the header
    std::optional<Version> header;
    std::string header_file;
    std::vector<std::string> include_dirs;
    if (!prefix.empty()) {
        include_dirs.push_back((prefix == "/" ? "" : prefix) + "/include");
    }
    include_dirs.push_back("/usr/include");
    // NVIDIA's cudnn debs put the headers in the multiarch folder (alternatives link them up)
    include_dirs.push_back("/usr/include/" + h.files().triplet());
    for (const auto& dir : include_dirs) {
        for (const char* name : {"cudnn_version.h", "cudnn.h"}) {
            if (auto text = h.files().read(dir + "/" + name)) {
                if (auto v = install::parse_cudnn_header(*text)) {
                    header = v;
                    header_file = dir + "/" + name;
                    break;
                }
            }
        }
        if (header) {
            break;
        }
    }
    details.push_back(header ? "header " + header_file + ": " + header->str()
                             : "no cudnn_version.h or cudnn.h with version macros");
    // Everything below is checked, and every problem reported (the worst first): a header that
    // disagrees with its library and a missing sublibrary are two fixes, not one.
    std::vector<Issue> issues;
    const auto& a = h.facts().query("cudnn", found->dir + "/" + found->file);
    std::optional<Version> lib_version;
    if (!a.loaded || !a.number("version")) {
        issues.push_back({Status::fail,
                          found->dir + "/" + found->file +
                              " does not load or answer cudnnGetVersion: " +
                              (a.error.empty() ? "no answer" : a.error),
                          reinstall});
    } else {
        lib_version = Version::try_parse(cudnn_from_int(*a.number("version")));
        details.push_back("cudnnGetVersion(): " + std::to_string(*a.number("version")) + " = " +
                          lib_version->str());
    }
    std::string what = lib_version ? "cuDNN " + lib_version->str() : "cuDNN";
    if (lib_version && header &&
        Version::compare_numeric(header->truncated(3), *lib_version) != 0) {
        issues.push_back({Status::fail,
                          "cuDNN header " + header->str() + " (" + header_file + ") but library " +
                              lib_version->str() +
                              ": CUDNN_STATUS_VERSION_MISMATCH, or \"Loaded runtime CuDNN "
                              "library … but source was compiled with …\"",
                          reinstall});
    }
    if (lib_version && t.cudnn && !t.cudnn->truncated(3).is_prefix_of(*lib_version) &&
        Version::compare_numeric(t.cudnn->truncated(3), *lib_version) != 0) {
        issues.push_back({Status::fail,
                          "cudaenv's record names cuDNN " + t.cudnn->str() +
                              " but the library is " + lib_version->str(),
                          reinstall});
    }
    // every sublibrary of its major, next to libcudnn
    std::vector<std::string> missing;
    std::size_t expected = 0;
    if (const auto* r = h.manifests().rules()) {
        if (auto it = r->cudnn_sublibraries.find(found->major); it != r->cudnn_sublibraries.end()) {
            expected = it->second.size();
            for (const auto& lib : it->second) {
                std::string file = found->dir + "/" + lib + ".so." + std::to_string(found->major);
                if (!h.files().exists(h.files().canonical(file))) {
                    missing.push_back(lib + ".so." + std::to_string(found->major));
                }
            }
        }
    }
    if (!missing.empty()) {
        issues.push_back({Status::fail,
                          what + " in " + found->dir + " lacks " + join(missing) +
                              " (a missing sublibrary surfaces as something else, e.g. \"No "
                              "OpKernel was registered to support Op CudnnRNNV3\")",
                          reinstall});
    }
    // the CUDA it was built for
    std::string built_for;
    if (auto cudart = a.number("cudart_version"); lib_version && cudart && *cudart > 0) {
        unsigned major = static_cast<unsigned>(*cudart / 1000);
        built_for = ", built for CUDA " + std::to_string(major);
        details.push_back("cudnnGetCudartVersion(): " + std::to_string(*cudart));
        if (t.cuda && t.cuda->major() != major) {
            issues.push_back({Status::fail,
                              what + " was built for CUDA " + std::to_string(major) +
                                  " but the toolkit is CUDA " + t.cuda->truncated(2).str(),
                              "install the cuDNN build for CUDA " +
                                  std::to_string(t.cuda->major()) + " (cudaenv install " +
                                  t.cuda->truncated(2).str() + "+cudnn-" +
                                  lib_version->truncated(2).str() + ")"});
        }
    }
    return verdict(
        std::move(issues),
        ok(what + " in " + found->dir + ": header and library agree" +
               (expected ? ", all " + std::to_string(expected) + " libraries present" : "") +
               built_for,
           details));
}

} // namespace cudaenv::doctor::checks
