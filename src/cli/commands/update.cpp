// cudaenv update [--check] [--channel URL]: the newest signed manifests from the update channel
// (docs/channel.md). The operation is core/channel/update; this file parses and prints.
#include "core/channel/update.hpp"

#include "../context.hpp"
#include "core/channel/keys.hpp"
#include "core/sys/dynlib.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <ctime>
#include <ostream>

namespace cudaenv::cli {

namespace {

struct UpdateCli {
    bool check = false;
    std::string channel;
};

std::string date_of(const std::string& utc) {
    return utc.substr(0, 10);
}

std::string describe(const channel::ManifestsInUse& m) {
    std::string s = "serial " + std::to_string(m.release.serial);
    if (!m.release.created.empty()) {
        s += ", " + date_of(m.release.created);
    }
    return s + ", " + m.origin_text();
}

int run_update(const UpdateCli& o, Context& ctx) {
    if (!o.channel.empty()) {
        ctx.channel = o.channel;
    }
    if (!ctx.manifests_dir.empty() || ctx.getenv("CUDAENV_MANIFESTS").value_or("") != "") {
        return report_error(ctx,
                            Error(ErrorCode::usage,
                                  "update changes the manifests a root uses; --manifests and "
                                  "CUDAENV_MANIFESTS name a fixed set instead")
                                .with_hint("run it without --manifests / CUDAENV_MANIFESTS"),
                            "update");
    }
    if (auto libs = sys::load(sys::k_curl | sys::k_crypto); !libs) {
        return report_error(ctx, libs.error(), "update");
    }
    channel::UpdateRequest req;
    req.root = ctx.root();
    req.floor = ctx.manifests_floor();
    req.channel = ctx.channel_url();
    req.policy = ctx.download_policy();
    req.policy.allow_http = req.channel.rfind("http://", 0) == 0;
    if (std::any_of(req.channel.begin(), req.channel.end(), [](char c) {
            return c <= ' ' || c == '\x7f' || (c & 0x80);
        })) {
        return report_error(ctx,
                            Error(ErrorCode::usage,
                                  "the channel URL '" + printable(req.channel) +
                                      "' has spaces, control or non-ASCII bytes")
                                .with_hint("percent-encode them, as a URL does"),
                            "update");
    }
    auto keys = channel::trusted_keys(ctx.sysroot());
    if (!keys) {
        return report_error(ctx, keys.error(), "update");
    }
    req.trust.keys = std::move(*keys);
    req.trust.now = std::time(nullptr);
    req.trust.cudaenv_version = CUDAENV_VERSION_STRING;
    req.check = o.check;
    req.lock_timeout = ctx.lock_timeout();
    auto out = channel::update(req);
    if (!out) {
        return report_error(ctx, out.error(), "update");
    }
    if (!ctx.json) {
        for (const auto& n : out->notes) {
            *ctx.err << "cudaenv: note: " << printable(n) << "\n";
        }
    }
    using State = channel::UpdateOutcome::State;
    const char* state = out->state == State::updated     ? "updated"
                        : out->state == State::available ? "available"
                                                         : "up_to_date";
    if (ctx.json) {
        nlohmann::json changes = nlohmann::json::array();
        for (const auto& c : out->changes) {
            changes.push_back(
                {{"kind", c.kind_text()}, {"subject", c.subject}, {"detail", c.detail}});
        }
        emit_json(
            ctx,
            {{"command", "update"},
             {"ok", true},
             {"state", state},
             {"check", o.check},
             {"channel", req.channel},
             {"before",
              {{"serial", out->before.release.serial},
               {"created", out->before.release.created},
               {"origin", out->before.origin_text()},
               {"dir", out->before.dir.string()}}},
             {"offered",
              {{"serial", out->offered.serial},
               {"created", out->offered.created},
               {"expires", out->offered.expires},
               {"requires", out->offered.requires_version},
               {"key", out->key_id}}},
             {"changes", changes},
             {"notes", out->notes},
             {"set",
              out->set_dir.empty() ? nlohmann::json() : nlohmann::json(out->set_dir.string())}});
        return 0;
    }
    if (out->state == State::up_to_date) {
        *ctx.out << "the manifests are up to date (" << describe(out->before) << "); "
                 << printable(req.channel) << " offers serial " << out->offered.serial << "\n";
        return 0;
    }
    *ctx.out << (out->state == State::updated ? "updated the manifests: "
                                              : "would update the manifests: ")
             << describe(out->before) << " -> serial " << out->offered.serial << ", "
             << date_of(out->offered.created) << " (signed by key " << out->key_id << ", expires "
             << date_of(out->offered.expires) << ")\n";
    for (const auto& c : out->changes) {
        *ctx.out << "  " << c.kind_text() << std::string(9 - std::string(c.kind_text()).size(), ' ')
                 << printable(c.subject) << (c.detail.empty() ? "" : ": " + printable(c.detail))
                 << "\n";
    }
    if (out->changes.empty()) {
        *ctx.out << "  (no release or verdict changes)\n";
    }
    if (out->state == State::available) {
        *ctx.out << "nothing written (--check); `cudaenv update` installs it\n";
    }
    return 0;
}

} // namespace

void setup_update(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<UpdateCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Examples:\n"
                "  cudaenv update --check                 what a newer bundle would change; writes "
                "nothing\n"
                "  cudaenv update                         fetch, verify and switch to it\n"
                "  cudaenv update --channel http://mirror.internal/nvidia/cudaenv-channel\n"
                "The bundle must be signed by a key cudaenv ships or one in /etc/cudaenv/keys/;\n"
                "an older serial than the one in use, an expired bundle or one that needs a newer\n"
                "cudaenv is refused, and the manifests in use stay as they are.\n");
    sub->add_flag("--check", o->check, "say what would change; write nothing");
    sub->add_option("--channel", o->channel, "the channel's URL (default: see docs/channel.md)")
        ->option_text("URL");
    sub->callback([o, &ctx] { ctx.exit_code = run_update(*o, ctx); });
}

} // namespace cudaenv::cli
