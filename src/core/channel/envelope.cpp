#include "envelope.hpp"

#include "../text.hpp"

#include <algorithm>
#include <array>

namespace cudaenv::channel {

namespace {

constexpr std::string_view k_signature_tag = "signature ";

std::string signed_message(const EnvelopeKind& kind, std::string_view payload) {
    std::string m(kind.format);
    m += '\n';
    m.append(payload);
    return m;
}

} // namespace

Error envelope_error(const EnvelopeKind& kind, std::string_view origin, const std::string& why) {
    return Error(ErrorCode::integrity,
                 std::string(kind.noun) + " '" + printable(origin) + "': " + why);
}

unsigned long format_number(std::string_view s, std::string_view prefix) {
    if (s.substr(0, prefix.size()) != prefix || s.size() == prefix.size() ||
        s.size() > prefix.size() + 6) {
        return 0;
    }
    unsigned long n = 0;
    for (char c : s.substr(prefix.size())) {
        if (c < '0' || c > '9') {
            return 0;
        }
        n = n * 10 + static_cast<unsigned long>(c - '0');
    }
    return n;
}

Result<Envelope>
split_envelope(std::string_view bytes, const EnvelopeKind& kind, std::string_view origin) {
    auto bad = [&](const std::string& why) { return envelope_error(kind, origin, why); };
    if (bytes.size() > kind.max_bytes) {
        return bad("larger than " + std::to_string(kind.max_bytes >> 20) + " MiB");
    }
    auto line_end = bytes.find('\n');
    std::string_view first = bytes.substr(0, line_end);
    if (first != kind.format) {
        auto ours = format_number(kind.format, kind.format_prefix);
        if (auto n = format_number(first, kind.format_prefix); n > ours) {
            return Error(ErrorCode::incompatible,
                         std::string(kind.noun) + " '" + printable(origin) + "' is in format " +
                             std::to_string(n) + "; this cudaenv reads format " +
                             std::to_string(ours))
                .with_hint(std::string(kind.newer_hint));
        }
        return bad("not a cudaenv " + std::string(kind.noun) + " (it does not start with '" +
                   std::string(kind.format) + "')");
    }
    Envelope env;
    std::size_t pos = line_end == std::string_view::npos ? bytes.size() : line_end + 1;
    while (true) {
        auto end = bytes.find('\n', pos);
        if (end == std::string_view::npos) {
            return bad("truncated: it ends inside its header");
        }
        std::string_view line = bytes.substr(pos, end - pos);
        pos = end + 1;
        if (line.empty()) {
            break;
        }
        if (line.substr(0, k_signature_tag.size()) != k_signature_tag) {
            return bad("a header line that is not a signature");
        }
        line.remove_prefix(k_signature_tag.size());
        auto space = line.find(' ');
        std::string_view id = line.substr(0, space);
        std::string_view hex = space == std::string_view::npos ? "" : line.substr(space + 1);
        SignatureBytes sig{};
        std::array<std::uint8_t, 8> id_bytes{};
        if (!parse_hex(id, id_bytes.data(), id_bytes.size()) ||
            !parse_hex(hex, sig.data(), sig.size())) {
            return bad("a malformed signature line");
        }
        if (env.signatures.size() == k_max_signatures) {
            return bad("more than " + std::to_string(k_max_signatures) + " signatures");
        }
        env.signatures.emplace_back(to_hex(id_bytes.data(), id_bytes.size()), sig);
    }
    if (env.signatures.empty()) {
        return bad("not signed");
    }
    env.payload = bytes.substr(pos);
    return env;
}

KeyRing KeyRing::of(std::vector<PublicKey> keys) {
    KeyRing r;
    r.keys = std::move(keys);
    r.from = "the given keys";
    return r;
}

Result<std::vector<PublicKey>> check_signatures(const Envelope& env,
                                                const EnvelopeKind& kind,
                                                const KeyRing& ring,
                                                std::string_view origin) {
    std::string message = signed_message(kind, env.payload);
    std::vector<PublicKey> role_ok, site_ok;
    std::vector<std::string> failed, revoked;
    auto add = [](std::vector<PublicKey>& v, const PublicKey& k) {
        if (std::none_of(v.begin(), v.end(), [&](const PublicKey& x) { return x.raw == k.raw; })) {
            v.push_back(k);
        }
    };
    for (const auto& [id, sig] : env.signatures) {
        for (const auto* group : {&ring.keys, &ring.site}) {
            for (const auto& key : *group) {
                if (key.id() != id) {
                    continue;
                }
                if (CUDAENV_TRY(verify(key, message, sig))) {
                    add(group == &ring.keys ? role_ok : site_ok, key);
                } else {
                    failed.push_back(id);
                }
            }
        }
        for (const auto& key : ring.revoked) {
            if (key.id() == id && std::find(revoked.begin(), revoked.end(), id) == revoked.end()) {
                revoked.push_back(id);
            }
        }
    }
    if (!failed.empty()) {
        return envelope_error(kind,
                              origin,
                              "the signature by key " + failed.front() + " does not verify: the " +
                                  std::string(kind.short_noun) +
                                  " was changed or cut short after it was signed");
    }
    if (!site_ok.empty() || (!role_ok.empty() && role_ok.size() >= ring.threshold)) {
        std::vector<PublicKey> out = role_ok;
        out.insert(out.end(), site_ok.begin(), site_ok.end());
        return out;
    }
    auto ids = [](const std::vector<PublicKey>& keys) {
        std::vector<std::string> v;
        for (const auto& k : keys) {
            v.push_back(k.id());
        }
        return v;
    };
    if (!role_ok.empty()) {
        return envelope_error(kind,
                              origin,
                              "signed by " + std::to_string(role_ok.size()) + " of the " +
                                  std::to_string(ring.threshold) + " keys " + ring.from +
                                  " requires (" + join(ids(role_ok)) + ")")
            .with_hint("whoever signs it must sign with more of the keys its root names");
    }
    if (!revoked.empty()) {
        return envelope_error(kind,
                              origin,
                              "signed by key " + join(revoked) +
                                  ", which this machine no longer trusts (revoked)")
            .with_hint("a key that leaked or was retired; it must be signed by a key the "
                       "current root metadata names (docs/channel.md)");
    }
    std::vector<std::string> named;
    for (const auto& s : env.signatures) {
        named.push_back(s.first);
    }
    auto trusted = ids(ring.keys);
    for (const auto& id : ids(ring.site)) {
        trusted.push_back(id);
    }
    return envelope_error(kind,
                          origin,
                          "signed by no key this machine trusts (signed by " + join(named) +
                              "; trusted: " + (trusted.empty() ? "none" : join(trusted)) + ")")
        .with_hint("a site's own signing key goes in /etc/cudaenv/keys/<name>.pub "
                   "(docs/channel.md)");
}

Result<std::string>
seal(const EnvelopeKind& kind, std::string_view payload, const std::vector<SecretKey>& keys) {
    if (keys.empty() || keys.size() > k_max_signatures) {
        return Error(ErrorCode::usage,
                     "a " + std::string(kind.short_noun) + " needs 1 to " +
                         std::to_string(k_max_signatures) + " signing keys");
    }
    std::string message = signed_message(kind, payload);
    std::string out(kind.format);
    out += '\n';
    for (const auto& key : keys) {
        auto pub = CUDAENV_TRY(public_key_of(key));
        auto sig = CUDAENV_TRY(sign(key, message));
        out +=
            std::string(k_signature_tag) + pub.id() + " " + to_hex(sig.data(), sig.size()) + "\n";
    }
    out += '\n';
    out.append(payload);
    return out;
}

} // namespace cudaenv::channel
