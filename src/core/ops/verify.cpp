// The verify operation (verify.hpp).
#include "verify.hpp"

#include "core/activate/selection.hpp"
#include "core/store/root.hpp"
#include "core/text.hpp"

#include <algorithm>

namespace cudaenv::ops {

bool VerifyReport::intact() const {
    return std::all_of(versions.begin(), versions.end(), [](const VerifiedVersion& v) {
        return v.check.intact();
    });
}

Result<VerifyReport> verify(Session& session, const VerifyRequest& request) {
    auto root = session.root();
    std::vector<std::string> names;
    if (request.specs.empty()) {
        names = store::installed_versions(root);
    } else {
        const auto* cat = CUDAENV_TRY(session.frameworks_catalog());
        for (const auto& spec : request.specs) {
            auto v = activate::match_installed(root, cat->frameworks, spec);
            if (!v) {
                auto err = v.error();
                std::string all = join(store::installed_versions(root));
                if (!all.empty()) {
                    err.hints = {"installed: " + all};
                }
                return err;
            }
            if (std::find(names.begin(), names.end(), *v) == names.end()) {
                names.push_back(*v);
            }
        }
        std::sort(names.begin(), names.end());
    }
    VerifyReport report;
    install::HashCache hashes; // an object several versions share is read once
    for (const auto& name : names) {
        auto check = CUDAENV_TRY(install::check_version(
            root, name, install::Depth::content, std::max(1u, request.jobs), &hashes));
        report.bytes_hashed += check.bytes_hashed;
        VerifiedVersion v{std::move(check), {}};
        if (!v.check.intact() || !v.check.unhashed.empty()) {
            v.fix = install::repair_command(v.check, &session.host());
        }
        report.versions.push_back(std::move(v));
    }
    return report;
}

} // namespace cudaenv::ops
