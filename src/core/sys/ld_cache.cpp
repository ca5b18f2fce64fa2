#include "ld_cache.hpp"

#include <unistd.h>

namespace cudaenv::sys {

namespace fs = std::filesystem;

std::vector<LdCacheEntry> parse_ld_cache(std::string_view text) {
    std::vector<LdCacheEntry> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto end = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, end == std::string_view::npos ? text.npos : end - pos);
        pos = end == std::string_view::npos ? text.size() : end + 1;
        auto arrow = line.find(" => ");
        auto open = line.find(" (");
        if (arrow == std::string_view::npos || open == std::string_view::npos || open > arrow) {
            continue;
        }
        auto close = line.find(')', open);
        auto start = line.find_first_not_of(" \t");
        if (close == std::string_view::npos || close > arrow || start >= open) {
            continue;
        }
        LdCacheEntry e{std::string(line.substr(start, open - start)),
                       std::string(line.substr(open + 2, close - open - 2)),
                       std::string(line.substr(arrow + 4))};
        // this machine's word size only (x86-64, AArch64), not the 32-bit compat entries
        if (e.path.starts_with("/") && e.flags.find("64") != std::string::npos) {
            out.push_back(std::move(e));
        }
    }
    return out;
}

namespace {

fs::path ldconfig_path(const Ldconfig& l) {
    if (!l.path.empty()) {
        return l.path;
    }
    for (const char* p : {"/sbin/ldconfig", "/usr/sbin/ldconfig"}) {
        if (::access(p, X_OK) == 0) {
            return p;
        }
    }
    return "/sbin/ldconfig";
}

} // namespace

Result<ProcessResult> run_ldconfig(const Ldconfig& l, const std::vector<std::string>& extra) {
    std::vector<std::string> args{ldconfig_path(l).string()};
    if (!(l.sysroot == "/" || l.sysroot.empty())) {
        args.push_back("-r");
        args.push_back(l.sysroot.string());
    }
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessOptions opts;
    opts.timeout = l.timeout;
    const auto& processes = l.processes ? *l.processes : real_processes();
    auto r = CUDAENV_TRY(processes.run(args, opts));
    if (r.timed_out) {
        return Error(ErrorCode::filesystem,
                     "'" + args[0] + "' did not finish within " +
                         std::to_string(l.timeout.count()) + " s (CUDAENV_LDCONFIG_TIMEOUT)");
    }
    return r;
}

Result<std::string> print_ld_cache(const Ldconfig& l) {
    auto ran = CUDAENV_TRY(run_ldconfig(l, {"-p"}));
    if (ran.status != 0) {
        auto line = ran.err.substr(0, ran.err.find('\n'));
        return Error(ErrorCode::filesystem,
                     "ldconfig -p failed (exit " + std::to_string(ran.status) + ")" +
                         (line.empty() ? "" : ": " + line));
    }
    return std::move(ran.out);
}

} // namespace cudaenv::sys
