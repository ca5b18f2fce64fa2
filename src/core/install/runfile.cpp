#include "runfile.hpp"

#include "../archive/makeself.hpp"

#include <algorithm>

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

Result<archive::Extracted> extract_runfile(const fs::path& path,
                                           const std::string& name,
                                           const fs::path& dest,
                                           const Version& cuda,
                                           const RunfileSelection& sel,
                                           const archive::Limits& limits) {
    auto header = CUDAENV_TRY(archive::read_runfile_header(path, {}, name));
    if (cuda.major() < 11) {
        return Error(ErrorCode::unsafe_archive,
                     "the CUDA " + cuda.str() +
                         " runfile nests its toolkit in a second installer "
                         "(run_files/cuda-linux*.run), which this cudaenv cannot read yet")
            .with_hint("CUDA 11.0 and later install from their runfiles");
    }
    auto x = CUDAENV_TRY(archive::extract_selected(path,
                                                   {header.payload_offset, header.payload_size},
                                                   dest,
                                                   header.compression,
                                                   runfile_members(sel),
                                                   limits));
    bool any = std::any_of(x.entries.begin(), x.entries.end(), [](const archive::Entry& e) {
        return e.type != archive::Entry::Type::directory;
    });
    if (!any) {
        return Error(ErrorCode::unsafe_archive,
                     "the runfile '" + name +
                         "' holds none of the components asked for (no builds/" +
                         (sel.components.empty() ? std::string("<component>")
                                                 : sel.components.front()) +
                         "/ folder): not a CUDA " + cuda.str() + " installer")
            .with_hint("nothing was installed; the file or the mirror serving it is bad");
    }
    return x;
}

} // namespace cudaenv::install
