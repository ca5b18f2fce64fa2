// The update operation (update.hpp).
#include "update.hpp"

#include "core/ops/trust.hpp"
#include "core/sys/dynlib.hpp"

#include <algorithm>
#include <ctime>

namespace cudaenv::ops {

Result<UpdateReport>
update_manifests(Session& session, bool check, const std::string& cudaenv_version) {
    if (!session.manifests_dir.empty() || session.getenv("CUDAENV_MANIFESTS").value_or("") != "") {
        return Error(ErrorCode::usage,
                     "update changes the manifests a root uses; --manifests and "
                     "CUDAENV_MANIFESTS name a fixed set instead")
            .with_hint("run it without --manifests / CUDAENV_MANIFESTS");
    }
    CUDAENV_TRY(sys::load(sys::k_curl | sys::k_crypto));
    channel::UpdateRequest req;
    req.root = session.root();
    req.floor = session.manifests_floor();
    req.channel = session.channel_url();
    req.policy = session.download_policy();
    req.policy.allow_http = req.channel.rfind("http://", 0) == 0;
    if (std::any_of(req.channel.begin(), req.channel.end(), [](char c) {
            return c <= ' ' || c == '\x7f' || (c & 0x80);
        })) {
        return Error(ErrorCode::usage,
                     "the channel URL '" + printable(req.channel) +
                         "' has spaces, control or non-ASCII bytes")
            .with_hint("percent-encode them, as a URL does");
    }
    req.trust = CUDAENV_TRY(trust_state(session));
    req.now = std::time(nullptr);
    req.cudaenv_version = cudaenv_version;
    // one deadline for everything the update fetches: the root metadata and the bundle
    req.policy.start_deadline(session.channel_timeout(), "CUDAENV_CHANNEL_TIMEOUT");
    req.check = check;
    req.lock_timeout = session.lock_timeout();
    auto out = CUDAENV_TRY(channel::update(req));
    return UpdateReport{std::move(out), req.channel};
}

} // namespace cudaenv::ops
