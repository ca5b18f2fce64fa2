#include "bundle.hpp"

#include "core/channel/diff.hpp"
#include "core/channel/sets.hpp"
#include "core/channel/update.hpp"
#include "core/fs.hpp"
#include "core/manifest/codec.hpp"
#include "core/manifest/gpu_support.hpp"
#include "core/ops/trust.hpp"
#include "core/sys/dynlib.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <ctime>

namespace cudaenv::ops {

namespace {

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

} // namespace

Result<channel::PublicKey> keygen(const std::string& out, const std::string& comment) {
    CUDAENV_TRY(sys::load(sys::k_crypto));
    if (out.empty()) {
        return Error(ErrorCode::usage,
                     "keygen needs --out PREFIX (writes PREFIX.secret and PREFIX.pub)");
    }
    auto secret = CUDAENV_TRY(channel::generate_secret_key(comment));
    auto pub = CUDAENV_TRY(channel::public_key_of(secret));
    CUDAENV_TRY(write_new_file(out + ".secret", channel::format_secret_key(secret), 0600));
    CUDAENV_TRY(write_new_file(out + ".pub", channel::format_public_key(pub), 0644));
    return pub;
}

Result<MadeBundle> make_bundle(Session& session, const MakeBundle& o) {
    CUDAENV_TRY(sys::load(sys::k_crypto));
    if (o.out.empty() || o.keys.empty()) {
        return Error(ErrorCode::usage, "make needs --key SECRET (one or more) and --out FILE");
    }
    std::filesystem::path from =
        o.from.empty() ? session.manifests_floor() : std::filesystem::path(o.from);
    auto release = CUDAENV_TRY(channel::read_release(from));
    std::vector<channel::SecretKey> keys;
    for (const auto& k : o.keys) {
        auto text = CUDAENV_TRY(read_text_file(k));
        keys.push_back(CUDAENV_TRY(channel::parse_secret_key(text, k)));
    }
    // what is signed must load: the same checks every cudaenv makes before using it
    auto files = CUDAENV_TRY(manifest::read_manifest_dir(from));
    auto catalog = CUDAENV_TRY(manifest::parse_catalog(files, from.string()));
    if (!o.previous.empty()) {
        // every pin the previous release's set holds that this one changes must be declared,
        // as hosts will check: refused here, before it is signed
        auto before = CUDAENV_TRY(manifest::load_catalog(o.previous));
        channel::KnownPins known;
        channel::add_pins(known, channel::pins_of(before));
        std::vector<channel::Repin> repins;
        if (auto it = files.find(channel::k_repins_file); it != files.end()) {
            repins = CUDAENV_TRY(channel::parse_repins(it->second, channel::k_repins_file));
        }
        auto changes = channel::pin_changes(known, catalog);
        if (auto bad = channel::undeclared(changes, repins); !bad.empty()) {
            return Error(ErrorCode::usage,
                         "refusing to sign: " + bad.front().now.where + " (" +
                             bad.front().now.subject + ") changes from " + bad.front().was +
                             " to " + bad.front().now.sha256 + " and repins.json does not say so" +
                             (bad.size() > 1 ? " (and " + std::to_string(bad.size() - 1) + " more)"
                                             : std::string()))
                .with_hint("declare each in repins.json (docs/channel.md, \"What a channel may "
                           "change: pins\"), or regenerate the manifests");
        }
    }
    CUDAENV_TRY(manifest::load_gpu_support(from));
    MadeBundle made;
    channel::BundleInfo& info = made.info;
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
    made.files = files.size();
    made.bytes = bytes.size();
    made.signatures = keys.size();
    return made;
}

Result<channel::RootMetadata> make_root(const MakeRoot& o) {
    CUDAENV_TRY(sys::load(sys::k_crypto));
    if (o.out.empty() || o.sign.empty() || o.root_keys.empty() || o.bundle_keys.empty()) {
        return Error(ErrorCode::usage,
                     "root needs --root-key, --bundle-key (public key files), --sign (secret "
                     "key files) and --out FILE");
    }
    auto publics =
        [](const std::vector<std::string>& files) -> Result<std::vector<channel::PublicKey>> {
        std::vector<channel::PublicKey> out;
        for (const auto& f : files) {
            auto text = CUDAENV_TRY(read_text_file(f));
            out.push_back(CUDAENV_TRY(channel::parse_public_key(text, f)));
        }
        return out;
    };
    channel::RootMetadata r;
    r.version = o.version;
    r.root.keys = CUDAENV_TRY(publics(o.root_keys));
    r.root.threshold = o.root_threshold;
    r.bundle.keys = CUDAENV_TRY(publics(o.bundle_keys));
    r.bundle.threshold = o.bundle_threshold;
    std::time_t created = std::time(nullptr);
    if (!o.created.empty()) {
        auto t = channel::parse_utc(o.created);
        if (!t) {
            return Error(ErrorCode::usage, "--created is not a UTC time (2026-12-07T00:00:00Z)");
        }
        created = *t;
    }
    r.created = channel::format_utc(created);
    r.expires = channel::format_utc(created + static_cast<std::time_t>(o.valid_days) * 86400);
    std::vector<channel::SecretKey> keys;
    for (const auto& k : o.sign) {
        auto text = CUDAENV_TRY(read_text_file(k));
        keys.push_back(CUDAENV_TRY(channel::parse_secret_key(text, k)));
    }
    auto bytes = CUDAENV_TRY(channel::make_root(r, keys));
    CUDAENV_TRY(write_file_atomic(o.out, bytes, 0644));
    r.bytes = bytes;
    return r;
}

Result<channel::Bundle> verify_bundle(Session& session,
                                      const std::string& file,
                                      const std::vector<std::string>& keys,
                                      const std::string& cudaenv_version) {
    CUDAENV_TRY(sys::load(sys::k_crypto));
    if (file.empty()) {
        return Error(ErrorCode::usage, "verify needs FILE");
    }
    channel::Trust trust;
    trust.ring = CUDAENV_TRY(trust_state(session)).ring();
    for (const auto& k : keys) {
        auto text = CUDAENV_TRY(read_text_file(k));
        trust.ring.site.push_back(CUDAENV_TRY(channel::parse_public_key(text, k)));
    }
    trust.now = std::time(nullptr);
    trust.cudaenv_version = cudaenv_version;
    return channel::verify_bundle_file(file, trust);
}

} // namespace cudaenv::ops
