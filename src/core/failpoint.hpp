// Failpoints for crash tests: CUDAENV_FAILPOINTS="download-half:kill,publish-before:kill,
// lock-acquired:sleep=5" makes the named point kill the process with SIGKILL or sleep N seconds.
// Set once from main; off (and free: one flag test) when the variable is unset.
#pragma once

#include <string_view>

namespace cudaenv::failpoint {

/// Parses the CUDAENV_FAILPOINTS value. Unknown actions are ignored.
void configure(std::string_view spec);

/// Runs the action configured for `name`, if any.
void hit(std::string_view name);

/// True when `name` is configured with the action `fail` ("curl-setopt-CURLOPT_RANGE:fail"): the
/// caller then acts as if the operation failed.
bool failing(std::string_view name);

} // namespace cudaenv::failpoint
