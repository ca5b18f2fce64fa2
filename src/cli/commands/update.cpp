// cudaenv update [--check] [--channel URL]: the newest signed manifests from the update channel
// (docs/channel.md). The operation is core/ops/update; this file parses and prints.
#include "core/ops/update.hpp"

#include "../context.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

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

const char* state_text(channel::UpdateOutcome::State s) {
    using State = channel::UpdateOutcome::State;
    return s == State::updated ? "updated" : s == State::available ? "available" : "up_to_date";
}

nlohmann::json update_json(const ops::UpdateReport& r, bool check) {
    const auto& out = r.outcome;
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& c : out.changes) {
        changes.push_back({{"kind", c.kind_text()}, {"subject", c.subject}, {"detail", c.detail}});
    }
    return {{"command", "update"},
            {"ok", true},
            {"state", state_text(out.state)},
            {"check", check},
            {"channel", r.channel},
            {"before",
             {{"serial", out.before.release.serial},
              {"created", out.before.release.created},
              {"origin", out.before.origin_text()},
              {"dir", out.before.dir.string()}}},
            {"offered",
             {{"serial", out.offered.serial},
              {"created", out.offered.created},
              {"expires", out.offered.expires},
              {"requires", out.offered.requires_version},
              {"key", out.key_id}}},
            {"changes", changes},
            {"root_version", out.root_version},
            {"roots_taken", out.roots_taken},
            {"floor", out.floor ? nlohmann::json(out.floor->serial) : nlohmann::json()},
            {"notes", out.notes},
            {"set", out.set_dir.empty() ? nlohmann::json() : nlohmann::json(out.set_dir.string())}};
}

void print_update(std::ostream& o, const ops::UpdateReport& r, bool check) {
    using State = channel::UpdateOutcome::State;
    const auto& out = r.outcome;
    if (!out.roots_taken.empty()) {
        o << (check ? "would take" : "took") << " the channel's root metadata version"
          << (out.roots_taken.size() > 1 ? "s " : " ") << out.roots_taken.front()
          << (out.roots_taken.size() > 1 ? "-" + std::to_string(out.roots_taken.back()) : "")
          << " (the keys that may sign it)\n";
    }
    if (out.state == State::up_to_date) {
        o << "the manifests are up to date (" << describe(out.before) << "); "
          << printable(r.channel) << " offers serial " << out.offered.serial << "\n";
        return;
    }
    o << (out.state == State::updated ? "updated the manifests: " : "would update the manifests: ")
      << describe(out.before) << " -> serial " << out.offered.serial << ", "
      << date_of(out.offered.created) << " (signed by key " << out.key_id << ", expires "
      << date_of(out.offered.expires) << ")\n";
    for (const auto& c : out.changes) {
        o << "  " << c.kind_text() << std::string(9 - std::string(c.kind_text()).size(), ' ')
          << printable(c.subject) << (c.detail.empty() ? "" : ": " + printable(c.detail)) << "\n";
    }
    if (out.changes.empty()) {
        o << "  (no release, verdict or pin changes)\n";
    }
    if (out.state == State::available) {
        o << "nothing written (--check); `cudaenv update` installs it\n";
    }
}

int run_update(const UpdateCli& o, Context& ctx) {
    if (!o.channel.empty()) {
        ctx.channel = o.channel;
    }
    auto r = ops::update_manifests(ctx, o.check, CUDAENV_VERSION_STRING);
    if (!r) {
        return report_error(ctx, r.error(), "update");
    }
    if (ctx.json) {
        emit_json(ctx, update_json(*r, o.check));
        return 0;
    }
    for (const auto& n : r->outcome.notes) {
        *ctx.err << "cudaenv: note: " << printable(n) << "\n";
    }
    print_update(*ctx.out, *r, o.check);
    return 0;
}

} // namespace

void setup_update(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<UpdateCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer(
        "Examples:\n"
        "  cudaenv update --check                 what a newer bundle would change; writes "
        "nothing\n"
        "  cudaenv update                         fetch, verify and switch to it\n"
        "  cudaenv update --channel http://mirror.internal/nvidia/cudaenv-channel\n"
        "The bundle must be signed by the keys the channel's root metadata names (or a\n"
        "site key in /etc/cudaenv/keys/); an older serial than the one in use or the\n"
        "machine's rollback floor, an expired bundle, a changed pin it does not declare or\n"
        "one that needs a newer cudaenv is refused, and the manifests in use stay as they\n"
        "are. Everything it fetches shares one deadline (CUDAENV_CHANNEL_TIMEOUT, 120 s).\n");
    sub->add_flag("--check", o->check, "say what would change; write nothing");
    sub->add_option("--channel", o->channel, "the channel's URL (default: see docs/channel.md)")
        ->option_text("URL");
    sub->callback([o, &ctx] { ctx.exit_code = run_update(*o, ctx); });
}

} // namespace cudaenv::cli
