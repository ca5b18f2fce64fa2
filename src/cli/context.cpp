#include "context.hpp"

#include <nlohmann/json.hpp>

#include <ext/stdio_sync_filebuf.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ostream>

namespace cudaenv::cli {

namespace {

// What std::cout and std::cerr are (sync_with_stdio's default: every write goes straight to the
// C stdout/stderr, which exit() flushes), without <iostream>: a translation unit that includes it
// builds all eight standard streams and the locale at startup, in the shim at every tool call.
std::ostream& standard_out() {
    static __gnu_cxx::stdio_sync_filebuf<char> buf(stdout);
    static std::ostream stream(&buf);
    return stream;
}

std::ostream& standard_err() {
    static __gnu_cxx::stdio_sync_filebuf<char> buf(stderr);
    static std::ostream stream(&buf);
    stream.setf(std::ios_base::unitbuf);
    return stream;
}

} // namespace

void capture_process(Context& ctx, char** environ_) {
    for (char** e = environ_; *e; ++e) {
        std::string kv = *e;
        auto eq = kv.find('=');
        if (eq != std::string::npos) {
            ctx.env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
        }
    }
    ctx.stderr_tty = ::isatty(2) == 1 && ctx.env.find("NO_COLOR") == ctx.env.end();
    ctx.stdout_color = ::isatty(1) == 1 && ctx.env.find("NO_COLOR") == ctx.env.end() &&
                       ctx.env.count("TERM") && ctx.env.at("TERM") != "dumb";
    std::error_code ec;
    ctx.exe_path = std::filesystem::read_symlink("/proc/self/exe", ec);
    ctx.cwd = std::filesystem::current_path(ec);
    ctx.out = LazyStream(&standard_out);
    ctx.err = LazyStream(&standard_err);
}

std::string started_as(const Context& ctx, const char* argv0) {
    if (auto forced = ctx.getenv("CUDAENV_FORCE_ARG0")) {
        return *forced;
    }
    return std::filesystem::path(argv0).filename().string();
}

int report_error(Context& ctx, const Error& error, const std::string& command) {
    *ctx.err << "cudaenv: error: " << error.full_message() << "\n";
    for (const auto& h : error.hints) {
        *ctx.err << "help: " << h << "\n";
    }
    int code = exit_code(error.code);
    if (ctx.json) {
        emit_json(ctx,
                  nlohmann::json{{"command", command},
                                 {"ok", false},
                                 {"error",
                                  {{"code", to_string(error.code)},
                                   {"exit_code", code},
                                   {"message", error.full_message()},
                                   {"hints", error.hints}}}});
    }
    return code;
}

void emit_json(Context& ctx, nlohmann::json doc) {
    doc["schema_version"] = 1;
    *ctx.out << doc.dump(2) << "\n";
}

std::string human_size(std::uint64_t bytes) {
    static constexpr const char* k_units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    std::size_t u = 0;
    while (v >= 1024.0 && u + 1 < std::size(k_units)) {
        v /= 1024.0;
        ++u;
    }
    char buf[32];
    if (u == 0) {
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    } else {
        std::snprintf(buf, sizeof buf, "%.1f %s", v, k_units[u]);
    }
    return buf;
}

} // namespace cudaenv::cli
