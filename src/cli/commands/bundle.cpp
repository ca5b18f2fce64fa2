// cudaenv __bundle keygen|make|verify (hidden; maintainers only, docs/channel.md): keys, and
// signed manifests bundles made from a manifests directory, for the update channel.
#include "core/channel/bundle.hpp"

#include "../context.hpp"
#include "core/channel/keys.hpp"
#include "core/channel/sets.hpp"
#include "core/channel/update.hpp"
#include "core/fs.hpp"
#include "core/manifest/codec.hpp"
#include "core/manifest/gpu_support.hpp"
#include "core/sys/dynlib.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <ctime>
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
};

/// A new file that must not exist (a key is never overwritten), written whole.
Status write_new_file(const std::string& path, const std::string& text, unsigned mode) {
    Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!fd.valid()) {
        return Error(errno == EEXIST ? ErrorCode::conflict : ErrorCode::filesystem,
                     "cannot create '" + path + "': " + errno_text(errno))
            .with_hint("a key file is never overwritten; choose another --out");
    }
    if (::fchmod(fd.get(), mode) != 0 ||
        ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
        ::fsync(fd.get()) != 0) {
        int err = errno;
        ::unlink(path.c_str());
        return Error(ErrorCode::filesystem, "cannot write '" + path + "': " + errno_text(err));
    }
    return Ok{};
}

Status keygen(const BundleCli& o, Context& ctx) {
    if (o.out.empty()) {
        return Error(ErrorCode::usage,
                     "keygen needs --out PREFIX (writes PREFIX.secret and PREFIX.pub)");
    }
    auto secret = CUDAENV_TRY(channel::generate_secret_key(o.comment));
    auto pub = CUDAENV_TRY(channel::public_key_of(secret));
    CUDAENV_TRY(write_new_file(o.out + ".secret", channel::format_secret_key(secret), 0600));
    CUDAENV_TRY(write_new_file(o.out + ".pub", channel::format_public_key(pub), 0644));
    *ctx.out << "key " << pub.id() << ": " << o.out << ".secret (keep it offline), " << o.out
             << ".pub (ship it, or put it in /etc/cudaenv/keys/)\n";
    return Ok{};
}

Status make(const BundleCli& o, Context& ctx) {
    if (o.out.empty() || o.keys.empty()) {
        return Error(ErrorCode::usage, "make needs --key SECRET (one or more) and --out FILE");
    }
    std::filesystem::path from =
        o.from.empty() ? ctx.manifests_floor() : std::filesystem::path(o.from);
    auto release = CUDAENV_TRY(channel::read_release(from));
    std::vector<channel::SecretKey> keys;
    for (const auto& k : o.keys) {
        auto text = CUDAENV_TRY(read_text_file(k));
        keys.push_back(CUDAENV_TRY(channel::parse_secret_key(text, k)));
    }
    // what is signed must load: the same checks every cudaenv makes before using it
    auto files = CUDAENV_TRY(manifest::read_manifest_dir(from));
    CUDAENV_TRY(manifest::parse_catalog(files, from.string()));
    CUDAENV_TRY(manifest::load_gpu_support(from));
    channel::BundleInfo info;
    info.serial = o.serial ? o.serial : release.serial;
    if (info.serial == 0) {
        return Error(ErrorCode::usage,
                     "'" + (from / channel::k_release_file).string() +
                         "' gives no serial; bump it there (or pass --serial)");
    }
    std::time_t now = std::time(nullptr);
    info.created = channel::format_utc(now);
    info.expires = channel::format_utc(now + static_cast<std::time_t>(o.valid_days) * 86400);
    info.requires_version = !o.requires_version.empty()         ? o.requires_version
                            : !release.requires_version.empty() ? release.requires_version
                                                                : "0.1.0";
    auto bytes = CUDAENV_TRY(channel::make_bundle(files, info, keys));
    CUDAENV_TRY(write_file_atomic(o.out, bytes, 0644));
    *ctx.out << "wrote " << o.out << ": serial " << info.serial << ", " << files.size()
             << " files, " << bytes.size() << " bytes, expires " << info.expires << ", signed by "
             << keys.size() << " key" << (keys.size() == 1 ? "" : "s") << "\n";
    return Ok{};
}

Status verify(const BundleCli& o, Context& ctx) {
    if (o.file.empty()) {
        return Error(ErrorCode::usage, "verify needs FILE");
    }
    channel::Trust trust;
    trust.keys = CUDAENV_TRY(channel::trusted_keys(ctx.sysroot()));
    for (const auto& k : o.keys) {
        auto text = CUDAENV_TRY(read_text_file(k));
        trust.keys.push_back(CUDAENV_TRY(channel::parse_public_key(text, k)));
    }
    trust.now = std::time(nullptr);
    trust.cudaenv_version = CUDAENV_VERSION_STRING;
    auto b = CUDAENV_TRY(channel::verify_bundle_file(o.file, trust));
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
        auto s = sys::load(sys::k_crypto);
        if (s) {
            s = keygen(*o, ctx);
        }
        ctx.exit_code = s ? 0 : report_error(ctx, s.error(), "__bundle");
    });
    auto* mk = sub->add_subcommand("make", "sign a bundle of a manifests directory");
    mk->add_option("--key", o->keys, "a secret key file (repeat to sign with several)");
    mk->add_option("--from", o->from, "the manifests directory (default: the shipped one)");
    mk->add_option("--out", o->out, "the bundle file to write");
    mk->add_option("--serial", o->serial, "default: the directory's release.json");
    mk->add_option("--valid-days", o->valid_days, "days until it expires")->capture_default_str();
    mk->add_option("--requires", o->requires_version, "the oldest cudaenv that may use it");
    mk->callback([o, &ctx] {
        auto s = sys::load(sys::k_crypto);
        if (s) {
            s = make(*o, ctx);
        }
        ctx.exit_code = s ? 0 : report_error(ctx, s.error(), "__bundle");
    });
    auto* vf = sub->add_subcommand("verify", "check a bundle as `cudaenv update` would");
    vf->add_option("file", o->file, "the bundle")->required();
    vf->add_option("--key", o->keys, "a public key file to trust as well");
    vf->callback([o, &ctx] {
        auto s = sys::load(sys::k_crypto);
        if (s) {
            s = verify(*o, ctx);
        }
        ctx.exit_code = s ? 0 : report_error(ctx, s.error(), "__bundle");
    });
}

} // namespace cudaenv::cli
