#include "failpoint.hpp"

#include <signal.h>
#include <unistd.h>

#include <map>
#include <string>

namespace cudaenv::failpoint {

namespace {

// Written once by configure() before any thread starts; read-only afterwards.
std::map<std::string, std::string, std::less<>>& table() {
    static std::map<std::string, std::string, std::less<>> t;
    return t;
}

} // namespace

void configure(std::string_view spec) {
    auto& t = table();
    t.clear();
    while (!spec.empty()) {
        auto comma = spec.find(',');
        std::string_view item = spec.substr(0, comma);
        spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
        auto colon = item.find(':');
        if (colon == std::string_view::npos) {
            continue;
        }
        t[std::string(item.substr(0, colon))] = std::string(item.substr(colon + 1));
    }
}

void hit(std::string_view name) {
    const auto& t = table();
    if (t.empty()) {
        return;
    }
    auto it = t.find(name);
    if (it == t.end()) {
        return;
    }
    const std::string& action = it->second;
    if (action == "kill") {
        ::kill(::getpid(), SIGKILL);
    } else if (action.rfind("sleep=", 0) == 0) {
        ::sleep(static_cast<unsigned>(std::stoul(action.substr(6))));
    }
}

bool failing(std::string_view name) {
    const auto& t = table();
    if (t.empty()) {
        return false;
    }
    auto it = t.find(name);
    return it != t.end() && it->second == "fail";
}

} // namespace cudaenv::failpoint
