// state.json, the root's record of the machine-wide choice and the journal of `global`
// (reliability.md F11), as a typed record with one codec. It is read and written only under the
// root's lock by the commands that change it (global, rollback), so two concurrent switches
// journal what the machine really was; a file that cannot be read is an error with a hint, never
// an empty state that would forget the global choice.
#pragma once

#include "../error.hpp"
#include "root.hpp"

#include <optional>
#include <string>

namespace cudaenv::store {

inline constexpr const char* k_state_schema = "cudaenv.state/1";

/// What the machine looked like before a switch: enough for rollback to put it back.
struct Snapshot {
    std::string global = "system"; ///< the global choice then
    std::string link_kind =
        "absent"; ///< absent, ours, foreign_link, alternatives, directory, other
    std::string link_target;
    std::optional<std::string> conf;     ///< our ld.so.conf.d file's content; none: absent
    std::optional<std::string> moved_to; ///< a real directory at the link, moved aside here
};

struct State {
    std::optional<std::string> global;  ///< none: system
    std::optional<std::string> pending; ///< a switch that started and did not finish
    std::optional<Snapshot> previous;   ///< before the last switch (rollback's target)
};

/// Reads state.json: none is an empty state; unreadable, not JSON, a field of the wrong type or
/// another schema is an integrity error (exit 4) naming the file, with a hint.
Result<State> load_state(const Root& root);

/// Writes state.json atomically (a temporary file renamed over it).
Status save_state(const Root& root, const State& state);

} // namespace cudaenv::store
