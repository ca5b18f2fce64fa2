// state.json, the root's record of the machine-wide choice and the journal of `global`
// (docs/reliability.md F11), as a typed record (records.hpp has its codec). It is read and written
// only under the root's lock by the commands that change it (global, rollback), so two concurrent
// switches journal what the machine really was; a file that cannot be read is an error with a hint,
// never an empty state that would forget the global choice.
#pragma once

#include "../error.hpp"
#include "records.hpp"
#include "root.hpp"

#include <optional>
#include <string>

namespace cudaenv::store {

/// Reads state.json: none is an empty state; unreadable, not JSON, a field of the wrong type or
/// another schema is an integrity error (exit 4) naming the file, with a hint.
Result<State> load_state(const Root& root);

/// Writes state.json atomically (a temporary file renamed over it).
Status save_state(const Root& root, const State& state);

} // namespace cudaenv::store
