#include "hook.hpp"

#include "core/activate/environment.hpp"
#include "core/activate/selection.hpp"

#include <algorithm>
#include <map>
#include <ostream>

namespace cudaenv::cli {

namespace {

/// Removes `prefix`-owned entries (those the hook added) from a ':' list.
std::string strip_entries(const std::string& list, const std::vector<std::string>& ours) {
    std::string out;
    for (const auto& item : activate::split_path_list(list)) {
        if (std::find(ours.begin(), ours.end(), item) == ours.end()) {
            out += (out.empty() ? "" : ":") + item;
        }
    }
    return out;
}

/// What the hook sets (a value) or unsets (none), by name.
using Vars = std::map<std::string, std::optional<std::string>>;

/// The selection here, and the prefix of the version the shell or the project chooses (the
/// machine's is what /usr/local/cuda and ldconfig give), if they choose one.
struct Choice {
    Result<activate::Selection> sel;
    std::optional<std::string> want;
};

Choice hook_choice(Context& ctx, const store::Root& root) {
    auto sel = activate::select_lazily(
        root, [&ctx] { return ctx.manifests_path(); }, ctx.env, ctx.cwd);
    if (sel && sel->version &&
        (sel->origin == activate::Selection::Origin::environment ||
         sel->origin == activate::Selection::Origin::file)) {
        auto want = root.version_dir(*sel->version).string();
        return {std::move(sel), std::move(want)};
    }
    return {std::move(sel), std::nullopt};
}

/// A selection that fails here (a .cuda-version naming what is not installed) is said once per
/// directory, on stderr, not at every prompt; CUDAENV_HOOK_WARNED remembers where.
void warn_once(Context& ctx, const Result<activate::Selection>& sel, Vars& vars) {
    auto warned = ctx.getenv("CUDAENV_HOOK_WARNED");
    if (!sel) {
        auto file = activate::find_version_file(ctx.cwd);
        std::string key = file ? file->string() : ctx.cwd.string();
        if (!warned || *warned != key) {
            *ctx.err << "cudaenv: " << sel.error().full_message() << "\n";
            for (const auto& h : sel.error().hints) {
                *ctx.err << "help: " << h << "\n";
            }
            vars["CUDAENV_HOOK_WARNED"] = key;
        }
    } else if (warned) {
        vars["CUDAENV_HOOK_WARNED"] = std::nullopt;
    }
}

/// What the hook applied before (`applied`) taken back: its library folders out of
/// LD_LIBRARY_PATH (returned), CUDA_HOME and CUDA_PATH as they were before it.
std::string take_back(Context& ctx, const std::string& applied, std::string ld, Vars& vars) {
    ld = strip_entries(ld,
                       {applied + "/compat", applied + "/lib64", applied + "/extras/CUPTI/lib64"});
    for (const char* k : {"CUDA_HOME", "CUDA_PATH"}) {
        auto saved = ctx.getenv(std::string("CUDAENV_HOOK_SAVED_") + k);
        vars[k] = saved && *saved != "\x01" ? std::optional<std::string>(*saved) : std::nullopt;
    }
    vars["CUDAENV_HOOK_SAVED_CUDA_HOME"] = std::nullopt;
    vars["CUDAENV_HOOK_SAVED_CUDA_PATH"] = std::nullopt;
    vars["CUDAENV_HOOK_PREFIX"] = std::nullopt;
    return ld;
}

/// The version at `want` applied over `ld`: its environment, with CUDA_HOME and CUDA_PATH saved
/// as they were before the hook first touched them ("\x01": unset). Returns the new
/// LD_LIBRARY_PATH.
std::string apply(Context& ctx,
                  const store::Root& root,
                  const std::string& want,
                  bool reapplied,
                  const std::string& ld,
                  Vars& vars) {
    std::map<std::string, std::string> base = ctx.env;
    base["LD_LIBRARY_PATH"] = ld;
    auto env = activate::version_environment(want, root.version_dirs(), base, ctx.sysroot());
    for (const char* k : {"CUDA_HOME", "CUDA_PATH"}) {
        std::string key = std::string("CUDAENV_HOOK_SAVED_") + k;
        std::string saved =
            reapplied ? ctx.getenv(key).value_or("\x01") : ctx.getenv(k).value_or("\x01");
        vars[key] = saved;
        vars[k] = env[k];
    }
    vars["CUDAENV_HOOK_PREFIX"] = want;
    return env["LD_LIBRARY_PATH"];
}

} // namespace

int run_hook(const std::string& shell_arg, Context& ctx) {
    std::string shell = shell_of(ctx, shell_arg);
    (void)ctx.load_config(); // at every prompt: a malformed config means the defaults here
    auto root = ctx.root();
    auto [sel, want] = hook_choice(ctx, root);
    Vars vars;
    warn_once(ctx, sel, vars);
    auto applied = ctx.getenv("CUDAENV_HOOK_PREFIX");
    if (applied == want) {
        for (const auto& [k, v] : vars) {
            *ctx.out << set_var(shell, k, v);
        }
        return 0; // nothing to change: the common case, and the fast one
    }
    std::string ld = ctx.getenv("LD_LIBRARY_PATH").value_or("");
    if (applied) {
        ld = take_back(ctx, *applied, std::move(ld), vars);
    }
    if (want) {
        ld = apply(ctx, root, *want, applied.has_value(), ld, vars);
    }
    vars["LD_LIBRARY_PATH"] = ld.empty() ? std::nullopt : std::optional<std::string>(ld);
    for (const auto& [k, v] : vars) {
        *ctx.out << set_var(shell, k, v);
    }
    return 0;
}

} // namespace cudaenv::cli
