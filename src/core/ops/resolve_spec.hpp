// SPEC -> Resolution, as the commands that take a SPEC need it. `resolve` describes without
// fetching; the commands that download (install, mirror) resolve with the manifests, plus the
// index a release is pinned by (fetched and checked against its pin), plus, when allowed,
// NVIDIA's index for a release newer than the manifests (--allow-unpinned).
#pragma once

#include "core/manifest/model.hpp"
#include "core/ops/machine.hpp"
#include "core/ops/session.hpp"
#include "core/resolve/resolve.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cudaenv::ops {

struct ResolvedSpec {
    /// The catalog `res` points into when an index extended the manifests; else null (then
    /// `res` points into the catalog given to resolve_with_indexes).
    std::unique_ptr<manifest::Catalog> extended;
    Resolution res;
};

/// Hears what the user must be told though nothing failed (an index trusted without a pin), as
/// it happens: also when a later step fails.
using Warn = std::function<void(const std::string&)>;

/// The options every command that takes a SPEC shares, as the user gave them: --cuda,
/// --cudnn, --profile, --platform.
struct SpecOptions {
    std::string cuda;
    std::string cudnn;
    std::string profile = "runtime";
    std::string platform;
    bool compat = false; ///< --compat: NVIDIA's forward-compatibility libraries too
    /// --patch cublas[=LABEL] | none: a cuBLAS patch release's libcublas (ResolveOptions::patch)
    std::string patch;
};

/// Checks them and turns them into ResolveOptions (usage errors name the option). The platform
/// is --platform's, else the session's for each release resolved (Session::platform_for:
/// CUDAENV_PLATFORM, the config's `platform`, else the host's choice): the options hold a
/// reference to `session`, which must outlive them.
Result<ResolveOptions> to_resolve_options(const SpecOptions& o, const Session& session);

/// Framework names and aliases the manifests know, for SPEC parsing's "did you mean".
std::vector<std::string> framework_names(const manifest::Catalog& catalog);

/// The catalog a command that resolves works from: the manifests in use plus the NVIDIA
/// indexes this root trusted before (--allow-unpinned), read once.
Result<manifest::Catalog> trusted_catalog(Session& session);

/// `resolve`: what a SPEC resolves to (a half known by its pinned index alone resolves to what
/// is known before the index is fetched: core/resolve describe()), checked against this
/// machine's GPUs and driver. Nothing is fetched.
struct SpecDescription {
    /// The catalog `described` points into (the manifests with the trusted indexes added).
    std::unique_ptr<const manifest::Catalog> catalog;
    Described described;
    MachineCheck machine;
};

Result<SpecDescription>
describe_spec(Session& session, const std::string& spec_text, const SpecOptions& options);

Result<ResolvedSpec> resolve_with_indexes(Session& session,
                                          const manifest::Catalog& catalog,
                                          const std::vector<std::string>& framework_names,
                                          const std::string& spec_text,
                                          const ResolveOptions& options,
                                          bool allow_unpinned,
                                          const std::string& command,
                                          const Warn& warn);

} // namespace cudaenv::ops
