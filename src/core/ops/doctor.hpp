// The doctor operation: the probes `--only` names checked (a near miss gets "did you mean"),
// the machine read through a Host configured from the session, the probes run, their findings
// grouped by layer with each layer's status and headline, counted, judged (--strict), and the
// machine's facts for `cudaenv report` and fleet tooling. The front end draws it.
#pragma once

#include "core/doctor/doctor.hpp"
#include "core/doctor/host.hpp"
#include "core/ops/session.hpp"
#include "core/version.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::ops {

/// What the doctor (and `which` for a library) reads the machine through: CUDAENV_SYSROOT,
/// the environment, the roots, CUDAENV_LDCONFIG, CUDAENV_DOCTOR_TIMEOUT.
Result<doctor::HostConfig> host_config(Session& session);

struct DoctorRequest {
    std::vector<std::string> only; ///< probe ids; empty: all
    bool strict = false;           ///< warnings fail too
    bool facts = false;            ///< read the machine's facts (the JSON document has them)
    bool deep = false;             ///< launch a kernel on every GPU (the smoke probe)
};

struct DoctorLayer {
    std::string_view name;
    doctor::Status status = doctor::Status::skip; ///< the worst that ran; skip when none ran
    std::vector<const doctor::Entry*> entries;
    const doctor::Entry* headline = nullptr; ///< the worst finding's probe, else the first
};

/// The machine in a few facts: what the probes found, computed once and shared with them.
struct MachineFacts {
    std::vector<doctor::PciGpu> gpus;
    std::optional<Version> driver;
    std::string toolkit;        ///< the selected toolkit's prefix; empty: none
    std::string toolkit_origin; ///< how it was found
    std::optional<std::string> cudaenv_version;
    std::optional<Version> cuda;
    std::optional<Version> cudnn; ///< cudaenv's record, else the toolkit's header
};

/// An advisory the doctor found applying here (the advisories probe's, as data: `report DIR`
/// counts hosts per advisory from it).
struct DiagnosedAdvisory {
    std::string id;
    std::string severity;
    std::string subject; ///< "driver 535.183.01"
    std::string where;   ///< "this machine", "version 12.4"
    std::string fixed;   ///< the first fixed version; empty: none named
    std::string acknowledged;
};

struct Diagnosis {
    std::filesystem::path sysroot;
    std::vector<doctor::Entry> entries;
    std::vector<DoctorLayer> layers; ///< in display order, only those with a probe that ran
    std::size_t ok = 0, warn = 0, fail = 0, skip = 0;
    bool failed = false; ///< a failure, or with --strict a warning: exit 1
    std::optional<MachineFacts> facts;
    std::vector<DiagnosedAdvisory> advisories; ///< when the advisories probe ran

    Diagnosis() = default;
    Diagnosis(const Diagnosis&) = delete; // layers point into entries
    Diagnosis& operator=(const Diagnosis&) = delete;
    Diagnosis(Diagnosis&&) = default; // a vector's move keeps its elements where they are
    Diagnosis& operator=(Diagnosis&&) = default;
};

/// Runs the doctor. Errors: usage (an unknown probe id, a sysroot that is not a directory).
Result<Diagnosis> diagnose(Session& session, const DoctorRequest& request);

} // namespace cudaenv::ops
