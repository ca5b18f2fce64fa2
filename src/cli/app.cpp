#include "app.hpp"

#include "commands/registry.hpp"
#include "core/suggest.hpp"

#include <CLI/CLI.hpp>

#include <ostream>

namespace cudaenv::cli {

namespace {

constexpr const char* k_footer = R"(Examples:
  cudaenv resolve tf-2.13            what TensorFlow 2.13 needs: CUDA 11.8.0 + cuDNN 8.6.0.163
  cudaenv resolve 12.4+cudnn-9.1     an explicit CUDA + cuDNN pair
  cudaenv list --available           every release the manifests offer

SPEC: tf-2.13 | tensorflow-2.13 | 11.8 | 11.8.0 | cuda-11.8 | cudnn-8.6 (with --cuda) | 11.8+cudnn-8.6
Exit codes: 0 ok, 1 failure, 2 usage, 3 network, 4 integrity/manifest, 5 unsafe archive,
  6 filesystem, 7 state conflict, 8 incompatible, 9 not found, 70 internal, 75 lock timeout
)";

/// Where the command word is in argv (global options before it are skipped); argc if none.
int command_index(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--manifests" || a == "--mirror") {
            ++i; // skip its value
            continue;
        }
        if (a.empty() || a[0] == '-') {
            continue;
        }
        return i;
    }
    return argc;
}

/// Our own "did you mean" for a mistyped command, before CLI11 reports it generically.
std::optional<Error> unknown_command(int argc, char** argv) {
    if (int i = command_index(argc, argv); i < argc) {
        std::string a = argv[i];
        std::vector<std::string> names;
        for (const auto& c : commands()) {
            if (a == c.name) {
                return std::nullopt;
            }
            if (!c.hidden) {
                names.push_back(c.name);
            }
        }
        if (a == "versions") {
            return std::nullopt;
        }
        auto err = Error(ErrorCode::usage, "unknown command '" + a + "'");
        if (auto m = closest_match(a, names)) {
            err = std::move(err).with_hint("did you mean '" + *m + "'?");
        }
        return std::move(err).with_hint("cudaenv --help lists the commands");
    }
    return std::nullopt;
}

/// `cudaenv [GLOBAL...] exec [--] CMD ARGS...`: CMD and its arguments are the tool's, verbatim
/// (a `--` after CMD, or CMD's own `--version`, must reach CMD). They are cut off here, before
/// CLI11 sees them, so CLI11 parses only the global options and the word `exec`. A first
/// argument of -h/--help (before any `--`) is cudaenv's help for exec.
int split_exec(Context& ctx, int argc, char** argv) {
    int i = command_index(argc, argv);
    if (i >= argc || std::string(argv[i]) != "exec" || i + 1 >= argc) {
        return argc;
    }
    std::string first = argv[i + 1];
    if (first == "-h" || first == "--help") {
        return argc;
    }
    int start = first == "--" ? i + 2 : i + 1;
    ctx.exec_command.assign(argv + start, argv + argc);
    return i + 1;
}

} // namespace

int run(Context& ctx, int argc, char** argv) {
    CLI::App app{"cudaenv: install and switch NVIDIA CUDA and cuDNN versions", "cudaenv"};
    app.footer(k_footer);
    app.require_subcommand(1);
    app.add_flag("--json", ctx.json, "print one JSON document on stdout");
    app.add_flag("--no-color", ctx.no_color, "no colour");
    app.add_option(
        "--manifests", ctx.manifests_dir, "use the manifests in DIR (CUDAENV_MANIFESTS)");
    app.set_version_flag("--version", "cudaenv " CUDAENV_VERSION_STRING);
    for (const auto& c : commands()) {
        c.setup(app, c, ctx);
    }
    for (auto* sub : app.get_subcommands({})) {
        sub->fallthrough();
    }
    if (auto err = unknown_command(argc, argv)) {
        return report_error(ctx, *err, "");
    }
    if (auto env = ctx.check_environment(); !env) {
        return report_error(ctx, env.error(), "");
    }
    if (auto cfg = ctx.load_config(); !cfg) {
        return report_error(ctx, cfg.error(), "");
    }
    int parsed = split_exec(ctx, argc, argv);
    try {
        app.parse(parsed, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e, *ctx.out, *ctx.err);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e, *ctx.out, *ctx.err);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e, *ctx.out, *ctx.err);
    } catch (const CLI::ParseError& e) {
        std::string msg = e.what();
        auto err = Error(ErrorCode::usage, msg.empty() ? "invalid command line" : msg);
        return report_error(ctx, std::move(err).with_hint("cudaenv --help"), "");
    }
    return ctx.exit_code;
}

} // namespace cudaenv::cli
