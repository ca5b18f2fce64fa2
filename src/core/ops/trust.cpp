// What this run trusts (trust.hpp).
#include "trust.hpp"

#include <unistd.h>

#include <memory>
#include <optional>

namespace cudaenv::ops {

channel::Anchors trust_anchors(const Session& session) {
    return channel::anchors_for(
        session.euid.value_or(::geteuid()) == 0, session.sysroot(), session.root().dir);
}

Result<channel::TrustState> trust_state(const Session& session) {
    return channel::load_trust(trust_anchors(session));
}

void judge_sets_by_trust(Session& session) {
    auto cache = std::make_shared<std::optional<Result<channel::TrustState>>>();
    session.set_check = [&session, cache](const channel::ManifestsInUse& set) -> std::string {
        if (!*cache) {
            cache->emplace(trust_state(session));
        }
        const auto& trust = **cache;
        if (!trust) {
            return "the keys this machine trusts cannot be read (" + trust.error().message + ")";
        }
        return set.release.signed_by.empty()
                   ? trust->distrust_claimed(channel::claimed_signers(set.dir))
                   : trust->distrust(set.release.signed_by);
    };
}

} // namespace cudaenv::ops
