#include "spec_options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <tuple>

namespace cudaenv::cli {

void add_spec_options(CLI::App& sub, SpecOptions& o) {
    sub.add_option("--cuda", o.cuda, "CUDA version (checked against the framework)");
    sub.add_option("--cudnn", o.cudnn, "cuDNN version");
    sub.add_option("--profile", o.profile, "component set: runtime, devel or full")
        ->capture_default_str();
    sub.add_option("--platform", o.platform, "linux-x86_64 or linux-sbsa (default: this machine)");
}

Result<ResolveOptions> to_resolve_options(const SpecOptions& o) {
    ResolveOptions ro;
    ro.profile = o.profile;
    ro.platform = o.platform.empty() ? host_platform() : o.platform;
    for (auto [text, out, what] :
         {std::tuple{&o.cuda, &ro.cuda, "--cuda"}, std::tuple{&o.cudnn, &ro.cudnn, "--cudnn"}}) {
        if (text->empty()) {
            continue;
        }
        auto v = Version::parse(*text);
        if (!v) {
            return Error(ErrorCode::usage, std::string(what) + ": " + v.error().message);
        }
        *out = *v;
    }
    if (std::find(std::begin(manifest::k_platforms),
                  std::end(manifest::k_platforms),
                  ro.platform) == std::end(manifest::k_platforms)) {
        return Error(ErrorCode::usage, "unknown platform '" + ro.platform + "'")
            .with_hint("platforms: linux-x86_64, linux-sbsa");
    }
    return ro;
}

std::vector<std::string> framework_names(const manifest::Catalog& catalog) {
    std::vector<std::string> names;
    for (const auto& f : catalog.frameworks) {
        names.push_back(f.name);
        names.insert(names.end(), f.aliases.begin(), f.aliases.end());
    }
    return names;
}

} // namespace cudaenv::cli
