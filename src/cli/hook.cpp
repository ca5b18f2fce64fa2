#include "hook.hpp"

#include "core/activate/environment.hpp"
#include "core/activate/selection.hpp"
#include "core/manifest/codec.hpp"

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

} // namespace

int run_hook(const std::string& shell_arg, Context& ctx) {
    std::string shell = shell_of(ctx, shell_arg);
    (void)ctx.load_config(); // at every prompt: a malformed config means the defaults here
    auto root = ctx.root();
    // Only a shell's or a project's choice; the machine's is what /usr/local/cuda and ldconfig
    // give.
    std::optional<std::string> want;
    auto sel = activate::select(root, {}, ctx.env, ctx.cwd);
    if (!sel && sel.error().code == ErrorCode::not_found) {
        if (auto fws = manifest::load_frameworks(
                ctx.manifests_path(), activate::selected_framework_name(ctx.env, ctx.cwd))) {
            sel = activate::select(root, *fws, ctx.env, ctx.cwd);
        }
    }
    if (sel && sel->version &&
        (sel->origin == activate::Selection::Origin::environment ||
         sel->origin == activate::Selection::Origin::file)) {
        want = root.version_dir(*sel->version).string();
    }
    // A selection that fails here (a .cuda-version naming what is not installed) is said once
    // per directory, on stderr, not at every prompt; CUDAENV_HOOK_WARNED remembers where.
    std::map<std::string, std::optional<std::string>> vars;
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
    auto applied = ctx.getenv("CUDAENV_HOOK_PREFIX");
    if ((applied && want && *applied == *want) || (!applied && !want)) {
        for (const auto& [k, v] : vars) {
            *ctx.out << set_var(shell, k, v);
        }
        return 0; // nothing to change: the common case, and the fast one
    }
    auto get = [&](const char* k) { return ctx.getenv(k).value_or(""); };
    std::string ld = get("LD_LIBRARY_PATH");
    if (applied) {
        ld = strip_entries(ld, {*applied + "/lib64", *applied + "/extras/CUPTI/lib64"});
        for (const char* k : {"CUDA_HOME", "CUDA_PATH"}) {
            auto saved = ctx.getenv(std::string("CUDAENV_HOOK_SAVED_") + k);
            vars[k] = saved && *saved != "\x01" ? std::optional<std::string>(*saved) : std::nullopt;
        }
        vars["CUDAENV_HOOK_SAVED_CUDA_HOME"] = std::nullopt;
        vars["CUDAENV_HOOK_SAVED_CUDA_PATH"] = std::nullopt;
        vars["CUDAENV_HOOK_PREFIX"] = std::nullopt;
    }
    if (want) {
        std::map<std::string, std::string> base = ctx.env;
        base["LD_LIBRARY_PATH"] = ld;
        auto env = activate::version_environment(*want, root.version_dirs(), base);
        for (const char* k : {"CUDA_HOME", "CUDA_PATH"}) {
            std::string key = std::string("CUDAENV_HOOK_SAVED_") + k;
            // what was there before the hook first touched it ("\x01": it was unset)
            std::string saved =
                applied ? ctx.getenv(key).value_or("\x01") : ctx.getenv(k).value_or("\x01");
            vars[key] = saved;
            vars[k] = env[k];
        }
        ld = env["LD_LIBRARY_PATH"];
        vars["CUDAENV_HOOK_PREFIX"] = *want;
    }
    vars["LD_LIBRARY_PATH"] = ld.empty() ? std::nullopt : std::optional<std::string>(ld);
    for (const auto& [k, v] : vars) {
        *ctx.out << set_var(shell, k, v);
    }
    return 0;
}

} // namespace cudaenv::cli
