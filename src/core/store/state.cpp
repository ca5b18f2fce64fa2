#include "state.hpp"

#include "../fs.hpp"

namespace cudaenv::store {

namespace {

Error corrupt(Error e) {
    return std::move(e).with_hint(
        "it records the global version and the last switch: fix it by hand, or move it aside "
        "(the global choice is then forgotten; /usr/local/cuda stays as it is)");
}

} // namespace

Result<State> load_state(const Root& root) {
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(root.state_file(), ec))) {
        return State{};
    }
    std::string origin = "'" + root.state_file().string() + "'";
    auto text = read_text_file(root.state_file());
    if (!text) {
        return corrupt(
            Error(ErrorCode::integrity, origin + " cannot be read: " + text.error().message));
    }
    auto s = decode_state(*text, origin);
    if (!s) {
        return corrupt(std::move(s).error());
    }
    return s;
}

Status save_state(const Root& root, const State& s) {
    return write_file_atomic(root.state_file(), encode(s));
}

} // namespace cudaenv::store
