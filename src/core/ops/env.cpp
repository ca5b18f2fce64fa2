#include "env.hpp"

#include "core/activate/project.hpp"
#include "core/doctor/pci_chips.hpp"
#include "core/fs.hpp"
#include "core/ops/select.hpp"
#include "core/store/records.hpp"
#include "core/sys/gpus.hpp"
#include "core/text.hpp"

#include <algorithm>

namespace cudaenv::ops {

Result<activate::Target> target_here(Session& session) {
    activate::Target t;
    if (auto file = activate::find_version_file(session.cwd)) {
        auto text = CUDAENV_TRY(activate::read_version_file(*file));
        t = CUDAENV_TRY(activate::parse_target(text, file->string()));
    }
    auto machine = sys::read_machine_gpus(session.sysroot());
    if (t.sms.empty()) {
        std::vector<std::string> chips;
        for (const auto& g : machine.gpus) {
            if (auto chip = doctor::chip_of_device(g.device)) {
                t.sms.push_back(chip->compute_capability);
                chips.push_back(g.address + " " + std::string(chip->chip));
            }
        }
        std::sort(t.sms.begin(), t.sms.end());
        t.sms.erase(std::unique(t.sms.begin(), t.sms.end()), t.sms.end());
        t.sms_from = "the GPUs present (" + join(chips) + ")";
    }
    if (!t.driver && machine.driver) {
        t.driver = machine.driver;
        t.driver_from = "the loaded driver";
    }
    return t;
}

Result<BridgeOutcome>
bridge_env(Session& session, const std::string& tool, const std::string& spec) {
    auto p = CUDAENV_TRY(prefix_of(session, spec));
    auto record = store::read_version_record(p);
    auto cuda = record ? Version::try_parse(record->cuda) : std::nullopt;
    if (!cuda) {
        return Error(ErrorCode::not_found,
                     "env --for " + tool + ": " + p.string() + " has no cudaenv version record")
            .with_hint("select a version cudaenv installed: cudaenv use 12.4");
    }
    const auto* cat = CUDAENV_TRY(session.catalog()); // the CUDA releases too: driver minimums
    auto target = CUDAENV_TRY(target_here(session));
    std::optional<std::string> file_text;
    auto project = session.cwd;
    if (auto file = activate::find_version_file(session.cwd)) {
        if (auto text = activate::read_version_file(*file); text) {
            if (auto written = activate::parse_version_file(*text, file->string())) {
                file_text = *written;
            }
        }
        project = file->parent_path();
    }
    auto pin = activate::framework_pin(*cat, file_text, project, session.env);
    auto bridge = CUDAENV_TRY(activate::bridge_for(tool, *cuda, *cat, pin, target));
    return BridgeOutcome{*cuda, std::move(bridge)};
}

} // namespace cudaenv::ops
