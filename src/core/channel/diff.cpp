#include "diff.hpp"

#include "../manifest/announced.hpp"
#include "../text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace cudaenv::channel {

namespace {

std::string opt(const std::optional<Version>& v) {
    return v ? v->str() : "none";
}

std::string sm_text(const std::optional<manifest::SmRange>& sm) {
    return sm ? "sm_" + std::to_string(sm->min) + "-sm_" + std::to_string(sm->max) : "unknown";
}

std::string cudnn_builds(const manifest::CudnnRelease& r) {
    std::string s;
    for (const auto& b : r.builds) {
        s += (s.empty() ? "" : ", ") + b.cuda;
    }
    return s;
}

/// Added and removed by key; `changed` says what differs between two present ones ("" if
/// nothing that matters).
template <typename T, typename Key, typename Added, typename Changed>
void diff_by(const std::vector<T>& before,
             const std::vector<T>& after,
             Key key,
             Added added,
             Changed changed,
             std::vector<SetChange>& out) {
    std::map<std::string, const T*> old;
    for (const auto& b : before) {
        old.emplace(key(b), &b);
    }
    std::set<std::string> seen;
    for (const auto& a : after) {
        std::string k = key(a);
        seen.insert(k);
        auto it = old.find(k);
        if (it == old.end()) {
            out.push_back({SetChange::Kind::added, k, added(a)});
        } else if (auto d = changed(*it->second, a); !d.empty()) {
            out.push_back({SetChange::Kind::changed, k, d});
        }
    }
    for (const auto& b : before) {
        if (!seen.count(key(b))) {
            out.push_back({SetChange::Kind::removed, key(b), ""});
        }
    }
}

std::string first_drivers(const manifest::GpuListing& g) {
    std::string s;
    for (const auto& [branch, v] : g.first_per_branch) {
        s += (s.empty() ? "" : ", ") + v.str();
    }
    if (g.off_mainline) {
        s += (s.empty() ? "" : ", ") + g.off_mainline->str();
    }
    return s;
}

} // namespace

const char* SetChange::kind_text() const {
    switch (kind) {
    case Kind::added:
        return "new";
    case Kind::removed:
        return "removed";
    case Kind::changed:
        return "changed";
    case Kind::repinned:
        return "repinned";
    }
    return "changed";
}

std::vector<SetChange> diff_sets(const manifest::Catalog& before,
                                 const manifest::GpuSupport& before_gpus,
                                 const manifest::Catalog& after,
                                 const manifest::GpuSupport& after_gpus) {
    std::vector<SetChange> out;
    diff_by(
        before.cuda,
        after.cuda,
        [](const auto& r) { return "CUDA " + r.version.str(); },
        [](const auto& r) {
            return "released " + r.release_date + ", driver " + opt(r.driver_min) + " or newer";
        },
        [](const manifest::CudaRelease& b, const manifest::CudaRelease& a) {
            std::vector<std::string> d;
            if (opt(b.driver_min) != opt(a.driver_min)) {
                d.push_back("driver " + opt(a.driver_min) + " or newer (was " + opt(b.driver_min) +
                            ")");
            }
            if (sm_text(b.sm) != sm_text(a.sm)) {
                d.push_back("GPUs " + sm_text(a.sm) + " (was " + sm_text(b.sm) + ")");
            }
            if (opt(b.gcc_max) != opt(a.gcc_max)) {
                d.push_back("gcc up to " + opt(a.gcc_max) + " (was " + opt(b.gcc_max) + ")");
            }
            return join(d, "; ");
        },
        out);
    diff_by(
        before.cudnn,
        after.cudnn,
        [](const auto& r) { return "cuDNN " + r.version.str(); },
        [](const auto& r) {
            return "released " + r.release_date + ", for CUDA " + cudnn_builds(r);
        },
        [](const manifest::CudnnRelease& b, const manifest::CudnnRelease& a) {
            std::vector<std::string> d;
            if (cudnn_builds(b) != cudnn_builds(a)) {
                d.push_back("for CUDA " + cudnn_builds(a) + " (was " + cudnn_builds(b) + ")");
            }
            return join(d, "; ");
        },
        out);

    struct Row {
        std::string name;
        const manifest::FrameworkRelease* r;
    };

    auto rows = [](const manifest::Catalog& c) {
        std::vector<Row> v;
        for (const auto& f : c.frameworks) {
            for (const auto& r : f.releases) {
                v.push_back({f.name + " " + r.series.str(), &r});
            }
        }
        return v;
    };
    auto pair = [](const manifest::FrameworkRelease& r) {
        return "CUDA " + r.cuda.str() + " + cuDNN " + r.cudnn.str();
    };
    diff_by(
        rows(before),
        rows(after),
        [](const Row& r) { return r.name; },
        [&](const Row& r) { return pair(*r.r); },
        [&](const Row& b, const Row& a) {
            return pair(*b.r) == pair(*a.r) ? std::string()
                                            : pair(*a.r) + " (was " + pair(*b.r) + ")";
        },
        out);
    auto gpu_key = [](const manifest::GpuListing& g) {
        return "GPU " + g.device + (g.subsystem.empty() ? "" : " " + g.subsystem) + " (" + g.name +
               ")";
    };
    diff_by(
        before_gpus.listings,
        after_gpus.listings,
        gpu_key,
        [](const manifest::GpuListing& g) { return "first driver " + first_drivers(g); },
        [](const manifest::GpuListing& b, const manifest::GpuListing& a) {
            return first_drivers(b) == first_drivers(a)
                       ? std::string()
                       : "first driver " + first_drivers(a) + " (was " + first_drivers(b) + ")";
        },
        out);
    // cuBLAS patch releases (cublas.json): a new one reaches `install --patch cublas` with the
    // set, no new binary
    auto replaces = [](const manifest::CublasPatch& p) {
        return "for CUDA " + p.replaces.str() + (p.replaces_inferred ? " (inferred)" : "");
    };
    diff_by(
        before.cublas_patches,
        after.cublas_patches,
        [](const manifest::CublasPatch& p) { return "cuBLAS patch " + p.label; },
        [&](const manifest::CublasPatch& p) {
            return "libcublas " + p.version.str() + ", released " + p.release_date + ", " +
                   replaces(p);
        },
        [&](const manifest::CublasPatch& b, const manifest::CublasPatch& a) {
            std::vector<std::string> d;
            if (replaces(b) != replaces(a)) {
                d.push_back(replaces(a) + " (was " + replaces(b) + ")");
            }
            if (b.fixes != a.fixes) {
                d.push_back("fixes: " + (a.fixes.empty() ? std::string("not known") : a.fixes));
            }
            return join(d, "; ");
        },
        out);
    // releases NVIDIA published whose index is not known (announced.json): a set that carries the
    // release itself drops the announcement and adds the release above
    diff_by(
        before.announced,
        after.announced,
        [](const manifest::AnnouncedRelease& a) {
            return "CUDA " + a.version.str() + " (announced, not installable)";
        },
        [](const manifest::AnnouncedRelease& a) { return manifest::announced_summary(a); },
        [](const manifest::AnnouncedRelease& b, const manifest::AnnouncedRelease& a) {
            return manifest::announced_summary(b) == manifest::announced_summary(a)
                       ? std::string()
                       : manifest::announced_summary(a);
        },
        out);
    // NVIDIA's per-driver indexes (driver-indexes.json): where --compat takes cuda_compat from 13.4
    auto compat_text = [](const manifest::DriverIndex& d) {
        std::string platforms;
        for (const auto& [p, a] : d.compat) {
            platforms += (platforms.empty() ? "" : ", ") + p;
        }
        return "cuda_compat for CUDA " + d.compat_cuda.str() + " (" + platforms + ")";
    };
    diff_by(
        before.driver_indexes,
        after.driver_indexes,
        [](const manifest::DriverIndex& d) { return "driver index " + d.driver.str(); },
        compat_text,
        [&](const manifest::DriverIndex& b, const manifest::DriverIndex& a) {
            return compat_text(b) == compat_text(a) ? std::string() : compat_text(a);
        },
        out);
    return out;
}

std::vector<Pin> pins_of(const manifest::Catalog& c) {
    std::vector<Pin> out;
    auto add = [&](const manifest::Artifact& a, std::string what, std::string subject) {
        if (!a.sha256.empty() && a.downloadable()) {
            out.push_back(
                {a.path.empty() ? a.url : a.path, std::move(what), a.sha256, std::move(subject)});
        }
    };
    // an index file is named by NVIDIA after the version: redistrib_13.1.0.json
    auto index_version = [](const std::string& path) {
        auto slash = path.rfind('/');
        std::string name = path.substr(slash == std::string::npos ? 0 : slash + 1);
        if (name.rfind("redistrib_", 0) == 0 && name.size() > 15) {
            return name.substr(10, name.size() - 15);
        }
        return name;
    };
    for (const auto& r : c.cuda) {
        std::string v = r.version.str();
        if (r.redistrib) {
            add(*r.redistrib,
                "cuda-index " + index_version(r.redistrib->path),
                "CUDA " + v + " index");
        }
        for (const auto& comp : r.components) {
            for (const auto& [platform, a] : comp.platforms) {
                add(a,
                    "cuda " + v + " " + comp.name + " " + platform,
                    "CUDA " + v + " " + comp.name + " " + platform);
            }
        }
        for (const auto& [platform, a] : r.runfiles) {
            add(a, "cuda " + v + " runfile " + platform, "CUDA " + v + " runfile " + platform);
        }
    }
    for (const auto& r : c.cudnn) {
        std::string v = r.version.str();
        for (const auto& a : r.redistrib) {
            add(a, "cudnn-index " + index_version(a.path), "cuDNN " + v + " index");
        }
        for (const auto& b : r.builds) {
            for (const auto& [platform, a] : b.platforms) {
                add(a,
                    "cudnn " + v + " cudnn cuda" + b.cuda + " " + platform,
                    "cuDNN " + v + " for CUDA " + b.cuda + " " + platform);
            }
            for (const auto& [extra, platforms] : b.extras) {
                for (const auto& [platform, a] : platforms) {
                    add(a,
                        "cudnn " + v + " " + extra + " cuda" + b.cuda + " " + platform,
                        "cuDNN " + v + " " + extra + " for CUDA " + b.cuda + " " + platform);
                }
            }
        }
    }
    for (const auto& p : c.cublas_patches) {
        for (const auto& [platform, a] : p.platforms) {
            add(a,
                "cublas " + p.version.str() + " libcublas " + platform,
                "cuBLAS patch " + p.label + " libcublas " + platform);
        }
    }
    for (const auto& d : c.driver_indexes) {
        for (const auto& [platform, a] : d.compat) {
            add(a,
                "nvidia-driver " + d.driver.str() + " cuda_compat " + platform,
                "driver " + d.driver.str() + " cuda_compat " + platform);
        }
    }
    for (const auto& p : c.pinned_indexes) {
        add(p.index,
            p.product + "-index " + p.version.str(),
            std::string(p.product == "cuda" ? "CUDA " : "cuDNN ") + p.version.str() +
                " index (known by its index)");
    }
    return out;
}

void add_pins(KnownPins& known, const std::vector<Pin>& pins) {
    for (const auto& p : pins) {
        known[p.where] = p.sha256;
        known[p.what] = p.sha256;
    }
}

std::vector<PinChange> pin_changes(const KnownPins& known, const manifest::Catalog& after) {
    std::vector<PinChange> out;
    std::set<std::string> said;
    for (const auto& p : pins_of(after)) {
        for (const auto* key : {&p.where, &p.what}) {
            auto it = known.find(*key);
            if (it != known.end() && it->second != p.sha256 && said.insert(p.where).second) {
                out.push_back({p, it->second, {}});
                break;
            }
        }
    }
    return out;
}

Result<std::vector<Repin>> parse_repins(std::string_view text, std::string_view origin) {
    auto bad = [&](const std::string& why) {
        return Error(ErrorCode::integrity, "'" + printable(origin) + "': " + why);
    };
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (!doc.is_object() || doc.value("schema", "") != "cudaenv.manifest/1" ||
        doc.value("kind", "") != "repins") {
        return bad("not a repins manifest (schema cudaenv.manifest/1, kind repins)");
    }
    auto list = doc.find("repins");
    if (list == doc.end() || !list->is_array()) {
        return bad("'repins' is missing or not a list");
    }
    std::vector<Repin> out;
    for (const auto& e : *list) {
        Repin r;
        for (auto [key, field] : {std::pair{"path", &r.path},
                                  {"was", &r.was},
                                  {"now", &r.now},
                                  {"date", &r.date},
                                  {"reason", &r.reason}}) {
            auto it = e.is_object() ? e.find(key) : e.end();
            if (!e.is_object() || it == e.end() || !it->is_string() || it->empty()) {
                return bad(std::string("an entry's '") + key + "' is missing or not text");
            }
            *field = it->get<std::string>();
        }
        if (r.was.size() != 64 || r.now.size() != 64 || r.was == r.now) {
            return bad("the entry for '" + printable(r.path) +
                       "' does not change one sha256 into another");
        }
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<PinChange> undeclared(std::vector<PinChange>& changes,
                                  const std::vector<Repin>& repins) {
    std::vector<PinChange> out;
    for (auto& c : changes) {
        std::string at = c.was;
        std::vector<std::string> chain;
        // each step follows a declaration from the hash reached so far; a cycle cannot run
        // longer than the list
        for (std::size_t step = 0; at != c.now.sha256 && step <= repins.size(); ++step) {
            auto it = std::find_if(repins.begin(), repins.end(), [&](const Repin& r) {
                return r.path == c.now.where && r.was == at;
            });
            if (it == repins.end()) {
                break;
            }
            chain.push_back(it->date + ": " + it->reason);
            at = it->now;
        }
        if (at == c.now.sha256) {
            c.declared = std::move(chain);
        } else {
            out.push_back(c);
        }
    }
    return out;
}

namespace {

std::string ranges_text(const manifest::Advisory& a) {
    std::string out;
    for (const auto& r : a.affects) {
        std::string line(manifest::to_string(r.product));
        if (r.branch) {
            line += " " + std::to_string(*r.branch);
        }
        if (r.introduced) {
            line += " from " + r.introduced->str();
        }
        line += r.fixed           ? " below " + r.fixed->str()
                : r.last_affected ? " to " + r.last_affected->str()
                                  : std::string();
        out += (out.empty() ? "" : ", ") + line;
    }
    return out;
}

} // namespace

std::vector<SetChange> diff_advisories(const manifest::Advisories& before,
                                       const manifest::Advisories& after) {
    std::vector<SetChange> out;
    diff_by(
        before.advisories,
        after.advisories,
        [](const manifest::Advisory& a) { return "advisory " + a.id; },
        [](const manifest::Advisory& a) {
            return std::string(manifest::to_string(a.severity)) + ": " + a.title + " (" +
                   ranges_text(a) + ")";
        },
        [](const manifest::Advisory& b, const manifest::Advisory& a) {
            std::vector<std::string> d;
            if (b.severity != a.severity) {
                d.push_back(std::string(manifest::to_string(a.severity)) + " (was " +
                            std::string(manifest::to_string(b.severity)) + ")");
            }
            if (auto was = ranges_text(b), now = ranges_text(a); was != now) {
                d.push_back(now + " (was " + was + ")");
            }
            if (b.partial != a.partial) {
                d.push_back(a.partial.empty() ? std::string("now complete") : "known in part");
            }
            return join(d, "; ");
        },
        out);
    return out;
}

} // namespace cudaenv::channel
