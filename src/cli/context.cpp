#include "context.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <ostream>

namespace cudaenv::cli {

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
    ctx.out = &std::cout;
    ctx.err = &std::cerr;
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
