#include "fleet_report.hpp"

#include "../fs.hpp"
#include "../manifest/advisories.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <tuple>

namespace cudaenv::doctor {

using nlohmann::json;

namespace {

const char* type_name(const json& v) {
    return v.type_name();
}

/// The fields a row needs, each of the type the doctor writes; the first that is not, named.
struct Check {
    std::string problem;

    bool string_or_null(const json& obj, const char* key, const std::string& where) {
        auto it = obj.find(key);
        if (it != obj.end() && !it->is_string() && !it->is_null()) {
            problem = where + "." + key + " is " + type_name(*it) + ", not a string";
            return false;
        }
        return true;
    }
};

std::string text_or_dash(const json& obj, const char* key) {
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() && !it->get_ref<const std::string&>().empty()
               ? printable(it->get<std::string>())
               : "-";
}

std::string describe_gpus(const json& gpus) {
    if (gpus.empty()) {
        return "none";
    }
    std::vector<std::pair<std::string, int>> counts;
    for (const auto& g : gpus) {
        std::string name = text_or_dash(g, "name");
        auto it = std::find_if(
            counts.begin(), counts.end(), [&](const auto& c) { return c.first == name; });
        if (it == counts.end()) {
            counts.emplace_back(name, 1);
        } else {
            ++it->second;
        }
    }
    std::string out;
    for (const auto& [name, n] : counts) {
        out += (out.empty() ? "" : ", ") + (n > 1 ? std::to_string(n) + "x " : "") + name;
    }
    return out;
}

} // namespace

HostReport host_report(const std::string& host, const std::string& text) {
    HostReport row;
    row.host = printable(host);
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded()) {
        row.problem = "not JSON";
        return row;
    }
    if (!doc.is_object() || !doc.contains("command") || doc["command"] != "doctor") {
        row.problem = "not a `cudaenv doctor --json` document";
        return row;
    }
    Check c;
    auto probes = doc.find("probes");
    if (probes == doc.end() || !probes->is_array()) {
        row.problem = "probes is missing or not an array";
        return row;
    }
    if (auto facts = doc.find("facts"); facts != doc.end() && !facts->is_null()) {
        if (!facts->is_object()) {
            row.problem = std::string("facts is ") + type_name(*facts) + ", not an object";
            return row;
        }
        for (const char* key : {"driver", "cuda", "cudnn"}) {
            if (!c.string_or_null(*facts, key, "facts")) {
                row.problem = c.problem;
                return row;
            }
        }
        if (auto g = facts->find("gpus"); g != facts->end() && !g->is_null()) {
            if (!g->is_array()) {
                row.problem = std::string("facts.gpus is ") + type_name(*g) + ", not an array";
                return row;
            }
            for (std::size_t i = 0; i < g->size(); ++i) {
                const auto& one = (*g)[i];
                if (!one.is_object() ||
                    !c.string_or_null(one, "name", "facts.gpus[" + std::to_string(i) + "]")) {
                    row.problem = c.problem.empty()
                                      ? "facts.gpus[" + std::to_string(i) + "] is not an object"
                                      : c.problem;
                    return row;
                }
            }
            row.gpus = describe_gpus(*g);
        } else {
            row.gpus = "none";
        }
        row.driver = text_or_dash(*facts, "driver");
        row.cuda = text_or_dash(*facts, "cuda");
        row.cudnn = text_or_dash(*facts, "cudnn");
    }
    const json* worst = nullptr;
    for (std::size_t i = 0; i < probes->size(); ++i) {
        const auto& p = (*probes)[i];
        std::string where = "probes[" + std::to_string(i) + "]";
        if (!p.is_object()) {
            row.problem = where + " is " + type_name(p) + ", not an object";
            return row;
        }
        for (const char* key : {"id", "status", "finding", "fix"}) {
            if (!c.string_or_null(p, key, where)) {
                row.problem = c.problem;
                return row;
            }
        }
        std::string status = p.contains("status") && p["status"].is_string()
                                 ? p["status"].get<std::string>()
                                 : std::string();
        if (status != "ok" && status != "warn" && status != "fail" && status != "skip") {
            row.problem = where + ".status '" + printable(status.substr(0, 40)) +
                          "' is none of ok, warn, fail, skip";
            return row;
        }
        if (status == "fail") {
            ++row.failures;
            if (!worst || (*worst)["status"] != "fail") {
                worst = &p;
            }
        } else if (status == "warn") {
            ++row.warnings;
            if (!worst) {
                worst = &p;
            }
        }
    }
    if (auto adv = doc.find("advisories"); adv != doc.end() && !adv->is_null()) {
        // cudaenv before advisories wrote none: absent is fine, anything else is checked
        if (!adv->is_array()) {
            row.problem = std::string("advisories is ") + type_name(*adv) + ", not an array";
            return row;
        }
        for (std::size_t i = 0; i < adv->size(); ++i) {
            const auto& a = (*adv)[i];
            std::string where = "advisories[" + std::to_string(i) + "]";
            auto id = a.is_object() ? a.find("id") : a.end();
            if (!a.is_object() || id == a.end() || !id->is_string() ||
                !manifest::is_advisory_id(id->get_ref<const std::string&>())) {
                row.problem = where + " has no advisory id";
                return row;
            }
            for (const char* key : {"severity", "acknowledged"}) {
                if (!c.string_or_null(a, key, where)) {
                    row.problem = c.problem;
                    return row;
                }
            }
            if (a.contains("acknowledged") && a["acknowledged"].is_string()) {
                continue; // the host's own config accepts it
            }
            row.advisories[id->get<std::string>()] = text_or_dash(a, "severity");
        }
    }
    if (worst) {
        auto field = [&](const char* key) {
            auto it = worst->find(key);
            return it != worst->end() && it->is_string() ? json(printable(it->get<std::string>()))
                                                         : json();
        };
        row.worst = {{"id", field("id")},
                     {"status", field("status")},
                     {"finding", field("finding")},
                     {"fix", field("fix")}};
    }
    return row;
}

Result<FleetReport> read_fleet_reports(const std::filesystem::path& dir) {
    Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dfd.valid()) {
        return Error(ErrorCode::filesystem,
                     "cannot read '" + dir.string() + "': " + errno_text(errno));
    }
    Fd listing(::dup(dfd.get()));
    DIR* d = listing.valid() ? ::fdopendir(listing.get()) : nullptr;
    if (!d) {
        return Error(ErrorCode::filesystem,
                     "cannot list '" + dir.string() + "': " + errno_text(errno));
    }
    listing.release(); // the DIR owns it now: closedir closes it
    std::vector<std::string> names;
    FleetReport out;
    while (auto* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) {
            if (names.size() >= k_max_reports) {
                out.truncated = true;
                break;
            }
            names.push_back(name);
        }
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
        std::string host = name.substr(0, name.size() - 5);
        // never a link, never anything but a regular file (a FIFO would block the read)
        Fd fd(::openat(dfd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));

        struct stat st {};

        HostReport row;
        if (!fd.valid()) {
            row.host = printable(host);
            row.problem = errno == ELOOP ? "is a symbolic link: not followed"
                                         : "cannot be opened: " + errno_text(errno);
        } else if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
            row.host = printable(host);
            row.problem = "is not a regular file";
        } else if (static_cast<std::size_t>(st.st_size) > k_max_report_bytes) {
            row.host = printable(host);
            row.problem = "is " + std::to_string(st.st_size) + " bytes, over the " +
                          std::to_string(k_max_report_bytes >> 20) + " MiB a report may have";
        } else {
            std::string text;
            char buf[65536];
            bool too_big = false;
            while (true) {
                ssize_t n = ::read(fd.get(), buf, sizeof buf);
                if (n < 0 && errno == EINTR) {
                    continue;
                }
                if (n <= 0) {
                    break;
                }
                text.append(buf, static_cast<std::size_t>(n));
                if (text.size() > k_max_report_bytes) {
                    too_big = true; // it grew while being read
                    break;
                }
            }
            if (too_big) {
                row.host = printable(host);
                row.problem = "grew past the size a report may have while it was read";
            } else {
                row = host_report(host, text);
            }
        }
        if (!row.problem.empty()) {
            row.problem = printable(name) + " " + row.problem;
        }
        out.hosts.push_back(std::move(row));
    }
    if (out.hosts.empty()) {
        return Error(ErrorCode::not_found, "no doctor reports (*.json) in '" + dir.string() + "'")
            .with_hint("the fleet role fetches one per host into cudaenv_report_dir; or: cudaenv "
                       "doctor --json > DIR/$(hostname).json");
    }
    std::sort(out.hosts.begin(), out.hosts.end(), [](const HostReport& a, const HostReport& b) {
        auto key = [](const HostReport& r) {
            return std::make_tuple(
                r.problem.empty(), -static_cast<long>(r.failures), -static_cast<long>(r.warnings));
        };
        return key(a) != key(b) ? key(a) < key(b) : a.host < b.host;
    });
    std::map<std::string, FleetReport::AdvisoryCount> counts;
    for (const auto& r : out.hosts) {
        for (const auto& [id, severity] : r.advisories) {
            auto& c = counts[id];
            c.id = id;
            c.severity = severity;
            ++c.hosts;
        }
    }
    for (auto& [id, c] : counts) {
        out.advisories.push_back(std::move(c));
    }
    std::stable_sort(out.advisories.begin(),
                     out.advisories.end(),
                     [](const auto& a, const auto& b) { return a.hosts > b.hosts; });
    for (const auto& r : out.hosts) {
        out.failing += (!r.problem.empty() || r.failures > 0) ? 1u : 0u;
        out.warning += (r.problem.empty() && r.failures == 0 && r.warnings > 0) ? 1u : 0u;
    }
    return out;
}

} // namespace cudaenv::doctor
