// What this run trusts (trust.hpp).
#include "trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
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

std::string not_roots_to_trust(const Session& session, const std::filesystem::path& dir) {
    if (session.euid.value_or(::geteuid()) != 0) {
        return "";
    }
    for (const char* sub : {"", "cuda", "cudnn", "frameworks"}) {
        std::filesystem::path d = *sub ? dir / sub : dir;

        struct stat st {};

        if (::lstat(d.c_str(), &st) != 0) {
            if (*sub && errno == ENOENT) {
                continue;
            }
            return "'" + d.string() + "' cannot be read: " + errno_text(errno);
        }
        if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 || !S_ISDIR(st.st_mode)) {
            char mode[16];
            std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
            return "'" + d.string() + "' is " +
                   (!S_ISDIR(st.st_mode) ? std::string("not a folder")
                    : st.st_uid != 0     ? "owned by uid " + std::to_string(st.st_uid)
                                         : std::string("writable by others (mode ") + mode + ")") +
                   ": a root process takes manifests only from folders root alone can write";
        }
    }
    return "";
}

Status check_manifests_owner(const Session& session) {
    if (session.euid.value_or(::geteuid()) != 0) {
        return Ok{};
    }
    std::string given = session.manifests_dir;
    if (given.empty()) {
        given = session.getenv("CUDAENV_MANIFESTS").value_or("");
    }
    std::filesystem::path dir =
        given.empty() ? session.manifests_floor() : std::filesystem::path(given);
    std::error_code ec;
    if (dir.empty() || !std::filesystem::exists(dir, ec)) {
        return Ok{}; // said where it is used
    }
    if (auto why = not_roots_to_trust(session, dir); !why.empty()) {
        return Error(ErrorCode::usage, "refusing the manifests: " + why)
            .with_hint("`sudo chown -R root: DIR && sudo chmod -R go-w DIR`, or run cudaenv as "
                       "the user who owns them");
    }
    return Ok{};
}

void judge_sets_by_trust(Session& session) {
    auto cache = std::make_shared<std::optional<Result<channel::TrustState>>>();
    session.set_check = [&session, cache](const channel::ManifestsInUse& set) -> std::string {
        if (!*cache) {
            cache->emplace(trust_state(session));
        }
        if (auto why = not_roots_to_trust(session, set.dir); !why.empty()) {
            return why;
        }
        const auto& trust = **cache;
        if (!trust) {
            return "the keys this machine trusts cannot be read (" + trust.error().message + ")";
        }
        return trust->distrust_set(set.release, set.dir);
    };
}

} // namespace cudaenv::ops
