// cudaenv __bundle keygen|make|root|verify (hidden; maintainers only, docs/channel.md): keys,
// signed manifests bundles made from a manifests directory, and the root metadata naming which
// keys may sign them, for the update channel.
#include "core/ops/bundle.hpp"

#include "../context.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>

#include <ostream>

namespace cudaenv::cli {

namespace {

struct BundleCli {
    std::string out;
    std::string comment;
    std::vector<std::string> keys;
    std::string from;
    std::uint64_t serial = 0;
    unsigned valid_days = 90;
    std::string requires_version;
    std::string file;
    std::string previous;
    ops::MakeRoot root;
};

Status keygen(const BundleCli& o, Context& ctx) {
    auto pub = CUDAENV_TRY(ops::keygen(o.out, o.comment));
    *ctx.out << "key " << pub.id() << ": " << o.out << ".secret (keep it offline), " << o.out
             << ".pub (ship it, or put it in /etc/cudaenv/keys/)\n";
    return Ok{};
}

Status make(const BundleCli& o, Context& ctx) {
    auto made = CUDAENV_TRY(ops::make_bundle(
        ctx, {o.out, o.keys, o.from, o.serial, o.valid_days, o.requires_version, o.previous}));
    *ctx.out << "wrote " << o.out << ": serial " << made.info.serial << ", " << made.files
             << " files, " << made.bytes << " bytes, expires " << made.info.expires
             << ", signed by " << made.signatures << " key" << (made.signatures == 1 ? "" : "s")
             << "\n";
    return Ok{};
}

Status root(const BundleCli& o, Context& ctx) {
    auto r = CUDAENV_TRY(ops::make_root(o.root));
    *ctx.out << "wrote " << o.root.out << ": root metadata version " << r.version << ", root keys "
             << r.root.threshold << " of " << r.root.keys.size() << ", bundle keys "
             << r.bundle.threshold << " of " << r.bundle.keys.size() << ", expires " << r.expires
             << "; publish it as <channel>/root/" << r.version << ".root\n";
    return Ok{};
}

Status verify(const BundleCli& o, Context& ctx) {
    auto b = CUDAENV_TRY(ops::verify_bundle(ctx, o.file, o.keys, CUDAENV_VERSION_STRING));
    *ctx.out << o.file << ": serial " << b.info.serial << ", created " << b.info.created
             << ", expires " << b.info.expires << ", requires cudaenv " << b.info.requires_version
             << ", " << b.files.size() << " files, signed by key " << b.key_id << "\n";
    return Ok{};
}

} // namespace

void setup_bundle(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<BundleCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->group(""); // hidden from --help
    sub->require_subcommand(1);
    auto* kg = sub->add_subcommand("keygen", "make a signing key pair");
    kg->add_option("--out", o->out, "PREFIX: writes PREFIX.secret (0600) and PREFIX.pub");
    kg->add_option("--comment", o->comment, "who holds the key");
    kg->callback([o, &ctx] {
        auto s = keygen(*o, ctx);
        ctx.exit_code = s ? 0 : report_error(ctx, s.error(), "__bundle");
    });
    auto* mk = sub->add_subcommand("make", "sign a bundle of a manifests directory");
    mk->add_option("--key", o->keys, "a secret key file (repeat to sign with several)");
    mk->add_option("--from", o->from, "the manifests directory (default: the shipped one)");
    mk->add_option("--out", o->out, "the bundle file to write");
    mk->add_option("--serial", o->serial, "default: the directory's release.json");
    mk->add_option("--valid-days", o->valid_days, "days until it expires")->capture_default_str();
    mk->add_option("--requires", o->requires_version, "the oldest cudaenv that may use it");
    mk->add_option("--previous",
                   o->previous,
                   "the previous release's manifests: refuse to sign a changed pin that "
                   "repins.json does not declare");
    mk->callback([o, &ctx] {
        auto s = make(*o, ctx);
        ctx.exit_code = s ? 0 : report_error(ctx, s.error(), "__bundle");
    });
    auto* rt = sub->add_subcommand("root", "make root metadata: which keys may sign the channel");
    rt->add_option("--version", o->root.version, "its version (one above the last)")->required();
    rt->add_option("--root-key", o->root.root_keys, "a public key file of the root role (repeat)");
    rt->add_option("--root-threshold", o->root.root_threshold, "how many root keys must sign")
        ->capture_default_str();
    rt->add_option("--bundle-key", o->root.bundle_keys, "a public key file that signs bundles");
    rt->add_option("--bundle-threshold", o->root.bundle_threshold, "how many must sign a bundle")
        ->capture_default_str();
    rt->add_option("--sign", o->root.sign, "a secret key file to sign with (repeat)");
    rt->add_option("--valid-days", o->root.valid_days, "days until it expires")
        ->capture_default_str();
    rt->add_option("--created", o->root.created, "when it was made (default: now)");
    rt->add_option("--out", o->root.out, "the file to write");
    rt->callback([o, &ctx] {
        auto s = root(*o, ctx);
        ctx.exit_code = s ? 0 : report_error(ctx, s.error(), "__bundle");
    });
    auto* vf = sub->add_subcommand("verify", "check a bundle as `cudaenv update` would");
    vf->add_option("file", o->file, "the bundle")->required();
    vf->add_option("--key", o->keys, "a public key file to trust as well");
    vf->callback([o, &ctx] {
        auto s = verify(*o, ctx);
        ctx.exit_code = s ? 0 : report_error(ctx, s.error(), "__bundle");
    });
}

} // namespace cudaenv::cli
