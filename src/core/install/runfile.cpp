#include "runfile.hpp"

#include "../archive/makeself.hpp"

#include <algorithm>
#include <cstring>
#include <set>

namespace cudaenv::install {

namespace fs = std::filesystem;

archive::MemberMap runfile_members(const RunfileSelection& sel) {
    return [sel](std::string_view name) -> std::optional<std::string> {
        constexpr std::string_view builds = "builds/";
        if (name.substr(0, builds.size()) != builds) {
            return std::nullopt;
        }
        name.remove_prefix(builds.size());
        auto slash = name.find('/');
        if (slash == std::string_view::npos || slash + 1 >= name.size()) {
            return std::nullopt; // builds/<x> itself: a folder made when its files come
        }
        std::string component(name.substr(0, slash));
        auto has = [&](const std::vector<std::string>& v) {
            return std::find(v.begin(), v.end(), component) != v.end();
        };
        bool wanted = sel.all ? !has(sel.exclude) : has(sel.components);
        // the bundled driver is never a component, whatever a profile says
        if (!wanted || component.rfind("NVIDIA-Linux", 0) == 0) {
            return std::nullopt;
        }
        return std::string(name);
    };
}

namespace {

/// How a CUDA 10.x toolkit tree's paths belong to the redistrib-era components that profiles
/// name: a library by its name in a library folder, a tool in bin/, or a whole folder.
struct Rule {
    enum class Kind { library, tool, folder };
    const char* component;
    Kind kind;
    const char* what;
};

using K = Rule::Kind;
constexpr Rule k_cuda10_rules[] = {
    {"cuda_cudart", K::library, "libcudart"},
    {"cuda_cudart", K::library, "libcudadevrt"},
    {"cuda_culibos", K::library, "libculibos"},
    {"cuda_nvcc", K::tool, "nvcc"},
    {"cuda_nvcc", K::tool, "nvcc.profile"},
    {"cuda_nvcc", K::tool, "ptxas"},
    {"cuda_nvcc", K::tool, "nvlink"},
    {"cuda_nvcc", K::tool, "fatbinary"},
    {"cuda_nvcc", K::tool, "cudafe++"},
    {"cuda_nvcc", K::tool, "bin2c"},
    {"cuda_nvcc", K::tool, "crt"},
    {"cuda_nvcc", K::folder, "nvvm"},
    {"cuda_cupti", K::folder, "extras/CUPTI"},
    {"cuda_nvrtc", K::library, "libnvrtc"},
    {"cuda_nvtx", K::library, "libnvToolsExt"},
    {"libcublas", K::library, "libcublas"},
    {"libcufft", K::library, "libcufft"},
    {"libcurand", K::library, "libcurand"},
    {"libcusolver", K::library, "libcusolver"},
    {"libcusparse", K::library, "libcusparse"},
    {"cuda_cuobjdump", K::tool, "cuobjdump"},
    {"cuda_cuxxfilt", K::tool, "cu++filt"},
    {"cuda_cuxxfilt", K::library, "libcufilt"},
    {"cuda_gdb", K::tool, "cuda-gdb"},
    {"cuda_gdb", K::tool, "cuda-gdbserver"},
    {"cuda_nvdisasm", K::tool, "nvdisasm"},
    {"cuda_nvprune", K::tool, "nvprune"},
    {"cuda_opencl", K::library, "libOpenCL"},
    {"cuda_nvml_dev", K::folder, "nvml"},
    {"cuda_nvml_dev", K::library, "libnvidia-ml"},
    {"cuda_sanitizer_api", K::folder, "Sanitizer"},
    {"cuda_sanitizer_api", K::tool, "cuda-memcheck"},
    {"libnpp", K::library, "libnpp"},
    {"libnvjpeg", K::library, "libnvjpeg"},
};

bool under(std::string_view path, std::string_view folder) {
    return path == folder ||
           (path.size() > folder.size() && path.substr(0, folder.size()) == folder &&
            path[folder.size()] == '/');
}

/// lib64/X, lib64/stubs/X, targets/<triple>/lib/X, targets/<triple>/lib/stubs/X -> X
std::optional<std::string_view> library_name(std::string_view path) {
    std::string_view rest;
    if (path.substr(0, 6) == "lib64/") {
        rest = path.substr(6);
    } else if (path.substr(0, 8) == "targets/") {
        auto slash = path.find('/', 8);
        if (slash == std::string_view::npos || path.substr(slash, 5) != "/lib/") {
            return std::nullopt;
        }
        rest = path.substr(slash + 5);
    } else {
        return std::nullopt;
    }
    if (rest.substr(0, 6) == "stubs/") {
        rest.remove_prefix(6);
    }
    if (rest.empty() || rest.find('/') != std::string_view::npos) {
        return std::nullopt;
    }
    return rest;
}

/// targets/<triple>/include and below
bool target_include(std::string_view path) {
    if (path.substr(0, 8) != "targets/") {
        return false;
    }
    auto slash = path.find('/', 8);
    return slash != std::string_view::npos && under(path.substr(slash + 1), "include");
}

bool wanted_component(const RunfileSelection& sel, std::string_view component) {
    auto has = [&](const std::vector<std::string>& v) {
        return std::find(v.begin(), v.end(), component) != v.end();
    };
    return sel.all ? !has(sel.exclude) : has(sel.components);
}

} // namespace

archive::MemberMap toolkit_tree_members(const RunfileSelection& sel) {
    return [sel](std::string_view path) -> std::optional<std::string> {
        std::string out = "cuda_toolkit/" + std::string(path);
        if (path.find('/') == std::string_view::npos && path.size() > 3 &&
            path.substr(path.size() - 3) == ".pl") {
            return std::nullopt; // the installer's own scripts
        }
        if (under(path, "lib")) {
            return std::nullopt; // 32-bit libraries (before 10.1): they would land in lib64
        }
        if (sel.all || under(path, "include") || path == "version.txt" || target_include(path)) {
            return out; // headers are small and shared by many components
        }
        auto lib = library_name(path);
        for (const auto& r : k_cuda10_rules) {
            bool match = false;
            switch (r.kind) {
            case K::library:
                // a prefix: libcublasLt is cuBLAS's, libcufftw cuFFT's, libnppc NPP's
                match = lib && lib->substr(0, std::strlen(r.what)) == r.what;
                break;
            case K::tool:
                match = under(path, std::string("bin/") + r.what);
                break;
            case K::folder:
                match = under(path, r.what);
                break;
            }
            if (match && wanted_component(sel, r.component)) {
                return out;
            }
        }
        return std::nullopt;
    };
}

Result<archive::Extracted> extract_runfile(const fs::path& path,
                                           const std::string& name,
                                           const fs::path& dest,
                                           const Version& cuda,
                                           const RunfileSelection& sel,
                                           const archive::Limits& limits) {
    auto header = CUDAENV_TRY(archive::read_runfile_header(path, {}, name));
    // makeself's own checksums, checked as the payload streams to the extractor
    archive::PayloadChecksums sums(header);
    archive::Slice payload{header.payload_offset,
                           header.payload_size,
                           name,
                           [&sums](const void* data, std::size_t n) { sums.update(data, n); }};
    // What the payload holds, for the message when it holds nothing the profile asks for:
    // builds/<folder>/ (11.x), the toolkit tree's top folders (10.x).
    std::set<std::string> held;
    auto note = [&held](std::string_view member, std::string_view below) {
        if (member.substr(0, below.size()) == below) {
            member.remove_prefix(below.size());
            auto slash = member.find('/');
            if (slash != std::string_view::npos && slash > 0 && held.size() < 64) {
                held.emplace(member.substr(0, slash));
            }
        }
    };
    auto components = [&note, map = runfile_members(sel)](std::string_view member) {
        note(member, "builds/");
        return map(member);
    };
    // 10.1 and 10.2: the toolkit tree is builds/cuda-toolkit/
    auto toolkit_folder = [&note, tree = toolkit_tree_members(sel)](std::string_view member) {
        constexpr std::string_view folder = "builds/cuda-toolkit/";
        note(member, folder);
        return member.substr(0, folder.size()) == folder ? tree(member.substr(folder.size()))
                                                         : std::nullopt;
    };
    auto tree_top = [&note, tree = toolkit_tree_members(sel)](std::string_view member) {
        note(member, "");
        return tree(member);
    };
    bool cuda10_1 = cuda.major() == 10 && cuda.minor() >= 1;
    auto x =
        cuda.major() >= 11 || cuda10_1
            ? CUDAENV_TRY(archive::extract_selected(path,
                                                    payload,
                                                    dest,
                                                    header.compression,
                                                    cuda10_1 ? archive::MemberMap(toolkit_folder)
                                                             : archive::MemberMap(components),
                                                    limits))
            : CUDAENV_TRY(archive::extract_nested(
                  path,
                  payload,
                  dest,
                  header.compression,
                  [](std::string_view member) {
                      return member.substr(0, 20) == "run_files/cuda-linux" && member.size() > 24 &&
                             member.substr(member.size() - 4) == ".run";
                  },
                  tree_top,
                  limits));
    CUDAENV_TRY(sums.verify(name));
    bool any = std::any_of(x.entries.begin(), x.entries.end(), [](const archive::Entry& e) {
        return e.type != archive::Entry::Type::directory;
    });
    if (!any) {
        std::string asked = sel.all ? "every component" : "";
        for (const auto& c : sel.components) {
            asked += (asked.empty() ? "" : ", ") + c;
        }
        std::string holds;
        for (const auto& h : held) {
            holds += (holds.empty() ? "" : ", ") + printable(h);
        }
        std::string where = cuda.major() >= 11 ? "builds/"
                            : cuda10_1         ? "builds/cuda-toolkit/"
                                               : "its nested installer";
        return Error(ErrorCode::unsafe_archive,
                     "the runfile '" + name + "' holds none of what profile '" + sel.profile +
                         "' takes from a CUDA " + cuda.str() + " installer (" + asked + "); " +
                         where + (holds.empty() ? " holds nothing" : " holds only: " + holds))
            .with_hint("nothing was installed; the file or the mirror serving it is bad");
    }
    return x;
}

} // namespace cudaenv::install
