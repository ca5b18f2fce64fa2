// What this run trusts (channel/trust.hpp): its anchors -- the machine's own for root, whatever
// CUDAENV_SYSROOT says -- and the trust state read from them; and the check that keeps a set
// whose signers are no longer trusted from being used by any command that reads manifests.
#pragma once

#include "core/channel/trust.hpp"
#include "core/error.hpp"
#include "core/ops/session.hpp"

namespace cudaenv::ops {

/// For euid 0: /etc/cudaenv/keys, /etc/cudaenv/channel.root and /var/lib/cudaenv/trust of the
/// machine itself. Otherwise under the sysroot, with the state in the root's trust/ folder.
channel::Anchors trust_anchors(const Session& session);

/// The trust state (channel::load_trust) from trust_anchors.
Result<channel::TrustState> trust_state(const Session& session);

/// For a root process: why it must not take manifests from `dir` -- the folder, or its cuda/,
/// cudnn/ or frameworks/, is owned by another user or writable by group or others, so anyone
/// could have written the pins in it (a set planted under a CUDAENV_SYSROOT, a folder given to
/// `sudo -E`). Empty when it may, and always for other users, whose manifests are their own.
std::string not_roots_to_trust(const Session& session, const std::filesystem::path& dir);

/// For a root process: the manifests it was given (--manifests, CUDAENV_MANIFESTS) or shipped
/// (the config's `manifests`) are root's (not_roots_to_trust). Errors: usage (exit 2), naming
/// the folder and the fix.
Status check_manifests_owner(const Session& session);

/// Makes `session` judge channel sets by their signers before using one (read lazily, once:
/// only when a channel set is a candidate), and for root by who owns them (not_roots_to_trust).
/// A trust state that cannot be read passes every channel set over -- fail closed -- and says
/// why.
void judge_sets_by_trust(Session& session);

} // namespace cudaenv::ops
