// cudaenv install [SPEC...] | __check-libs DIR FILE...: parses, calls ops::install, tells.
#include "core/ops/install.hpp"

#include "../context.hpp"
#include "../progress.hpp"
#include "../spec_options.hpp"
#include "common.hpp"
#include "core/sys/process.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <ostream>

namespace cudaenv::cli {

namespace {

nlohmann::json outcome_json(const install::Outcome& o) {
    nlohmann::json archives = nlohmann::json::array();
    for (const auto& a : o.archives) {
        archives.push_back({{"component", a.component},
                            {"version", a.version},
                            {"url", a.url},
                            {"size", a.size ? nlohmann::json(*a.size) : nlohmann::json()},
                            {"store", a.store_entry},
                            {"present", a.present},
                            {"recompressed", a.recompressed}});
    }
    nlohmann::json repaired = nlohmann::json::array();
    for (const auto& d : o.repaired) {
        repaired.push_back({{"path", d.path},
                            {"kind", install::to_string(d.kind)},
                            {"entry", d.entry},
                            {"problem", d.what},
                            {"in_store", d.in_store}});
    }
    nlohmann::json pins = nlohmann::json::array();
    for (const auto& p : o.pins_not_met) {
        pins.push_back({{"what", p.what},
                        {"pinned", p.pinned},
                        {"pin", p.pin.empty() ? nlohmann::json() : nlohmann::json(p.pin)},
                        {"used", p.used},
                        {"why", p.why}});
    }
    return {{"version", o.version},
            {"pins_not_met", pins},
            {"prefix", o.prefix.string()},
            {"changed", o.changed},
            {"downloaded_bytes", o.downloaded_bytes},
            {"archives", archives},
            {"repaired", repaired},
            {"still_damaged", o.still_damaged}};
}

/// An install told on a terminal or in a log: notes on stderr (not with --json), progress bars
/// (not with --json or --dry-run), one line per version on stdout (the plan with --dry-run).
class Teller : public ops::InstallObserver {
  public:
    Teller(Context& ctx, bool dry_run) : m_ctx(ctx), m_dry_run(dry_run) {}

    void note(const std::string& text) override {
        if (!m_ctx.json) {
            *m_ctx.err << "cudaenv: " << text << "\n";
        }
    }

    void warning(const std::string& text) override {
        *m_ctx.err << "cudaenv: warning: " << text << "\n";
    }

    void machine_warning(const std::string& text) override {
        if (!m_dry_run || !m_ctx.json) {
            warning(text);
        }
    }

    void starting(const Resolution&) override {
        m_progress.emplace(*m_ctx.err, m_ctx.stderr_tty, m_ctx.json || m_dry_run);
    }

    void event(const install::Event& e) override { m_progress->on_event(e); }

    void finished(const install::Outcome* out) override {
        m_progress->finish();
        if (out && !m_ctx.json) {
            print(*out);
        }
        if (out) {
            for (const auto& v : out->still_damaged) {
                warning(v +
                        " shares a store entry that was extracted again and still holds the "
                        "old files: cudaenv verify " +
                        v + " says what changed; cudaenv install --repair " + v + " repairs it");
            }
        }
    }

  private:
    void print(const install::Outcome& out) {
        auto& o = *m_ctx.out;
        if (m_dry_run) {
            o << (out.changed ? "would install " : "already installed: ") << out.version << "\n";
            for (const auto& a : out.archives) {
                o << "  " << (a.present ? "have " : "get  ") << a.component << " " << a.version
                  << "  " << (a.size ? human_size(*a.size) : std::string("?")) << "  " << a.url
                  << "\n";
            }
        } else if (out.changed && !out.repaired.empty()) {
            // what was found is said before the verdict: it may be an attack, not only damage
            for (const auto& d : out.repaired) {
                *m_ctx.err << "cudaenv: warning: " << out.version << ": " << printable(d.path)
                           << ": " << printable(d.what) << "\n";
            }
            o << "repaired " << out.version << " in " << out.prefix.string() << " ("
              << out.repaired.size() << " change" << (out.repaired.size() == 1 ? "" : "s")
              << " since it was installed)\n";
        } else if (out.changed) {
            o << "installed " << out.version << " in " << out.prefix.string() << "\n";
        } else {
            o << out.version << " is already installed\n";
        }
    }

    Context& m_ctx;
    bool m_dry_run;
    std::optional<ProgressReporter> m_progress;
};

int run_install(const ops::InstallRequest& o, Context& ctx) {
    Teller teller(ctx, o.dry_run);
    ctx.platform = o.spec_options.platform; // forced_platform() sees --platform
    auto report = ops::install(ctx, o, teller);
    if (!report) {
        return report_error(ctx, report.error(), "install");
    }
    if (report->pin) {
        print_match(ctx, *report->match, *report->pin, "install");
        return 0;
    }
    if (ctx.json) {
        nlohmann::json versions = nlohmann::json::array();
        for (const auto& out : report->outcomes) {
            versions.push_back(outcome_json(out));
        }
        emit_json(ctx,
                  {{"command", "install"},
                   {"ok", true},
                   {"changed", report->changed},
                   {"dry_run", o.dry_run},
                   {"versions", versions},
                   // this process only (VmHWM); the dlopen verification child is not included
                   {"stats", {{"peak_rss_kib", sys::peak_rss_kib()}}}});
    }
    return 0;
}

struct CheckLibsCli {
    std::string dir;
    std::vector<std::string> files;
};

} // namespace

void setup_install(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<ops::InstallRequest>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer(
        "Examples:\n"
        "  cudaenv install                          what this project's .cuda-version asks for\n"
        "  cudaenv install tf-2.13                  CUDA 11.8 + cuDNN 8.6, verified, in lib64\n"
        "  cudaenv install 12.4+cudnn-9.1 --profile devel\n"
        "  cudaenv install tf-2.15 --dry-run        show the plan, write nothing\n"
        "  cudaenv install --repair 11.8.0+cudnn8.6.0.163   what `cudaenv verify` found changed\n"
        "  cudaenv install torch-2.5+cu121          a PyTorch build's CUDA and cuDNN\n"
        "  cudaenv install --match                  what this Python environment's torch/jax "
        "needs\n"
        "  cudaenv install cuda-13.4.0 --allow-unpinned   a release newer than the manifests\n"
        "  cudaenv install 10.1+cudnn-7.6.4 --archive cudnn-10.1-linux-x64-v7.6.4.38.tgz\n");
    sub->add_option("spec",
                    o->specs,
                    "what to install (see `cudaenv resolve`); default: what the project's "
                    ".cuda-version or TensorFlow pin asks for");
    add_spec_options(*sub, o->spec_options);
    sub->add_option("-j,--jobs", o->jobs, "parallel downloads")->capture_default_str();
    sub->add_flag("--dry-run", o->dry_run, "show the plan; download and write nothing");
    sub->add_flag("--repair",
                  o->repair,
                  "re-hash an installed version (cudaenv verify) and repair what changed: its "
                  "store entries extracted again, the version composed again");
    sub->add_flag("--match",
                  o->match,
                  "install the CUDA that matches the torch, jax or tensorflow in the active "
                  "Python environment, and pin this project to it");
    sub->add_flag("--allow-unpinned",
                  o->allow_unpinned,
                  "trust NVIDIA's index for a release the manifests do not pin");
    sub->add_option("--archive",
                    o->archives,
                    "a file you downloaded yourself (a cuDNN NVIDIA serves only behind a login): "
                    "used for the archive whose pinned sha256 it has")
        ->check(CLI::ExistingFile);
    sub->callback([o, &ctx] { ctx.exit_code = run_install(*o, ctx); });
}

void setup_check_libs(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<CheckLibsCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->group("");
    sub->add_option("dir", o->dir)->required();
    sub->add_option("files", o->files);
    sub->callback([o, &ctx] {
        for (const auto& f : install::check_libraries_here(o->dir, o->files)) {
            *ctx.out << f << "\n";
        }
        ctx.exit_code = 0;
    });
}

} // namespace cudaenv::cli
