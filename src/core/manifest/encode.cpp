// Each manifest kind as the JSON the codec reads back (codec.hpp).
#include "../fs.hpp"
#include "codec.hpp"
#include "codec_fields.hpp"
#include "nvidia_redist.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>

namespace cudaenv::manifest {

using nlohmann::json;
using ojson = nlohmann::ordered_json;
using namespace detail;

namespace {

ojson artifact_json(const Artifact& a) {
    ojson j = ojson::object();
    if (!a.path.empty()) {
        j["path"] = a.path;
    }
    if (!a.url.empty()) {
        j["url"] = a.url;
    }
    j["sha256"] = a.sha256;
    if (a.size) {
        j["size"] = *a.size;
    }
    return j;
}

ojson platforms_json(const std::map<std::string, Artifact, std::less<>>& m) {
    ojson j = ojson::object();
    for (const auto& [p, a] : m) {
        j[p] = artifact_json(a);
    }
    return j;
}

ojson header_json(const char* kind) {
    return ojson{{"schema", std::string(k_schema)}, {"kind", kind}};
}

} // namespace

ojson to_json(const CudaRelease& r) {
    ojson j = header_json("cuda");
    j["version"] = r.version.str();
    if (!r.release_date.empty()) {
        j["release_date"] = r.release_date;
    }
    j["source"] = source_name(r.source);
    if (r.redistrib) {
        j["redistrib"] = artifact_json(*r.redistrib);
    }
    if (r.source == CudaSource::runfile) {
        j["runfiles"] = platforms_json(r.runfiles);
    }
    if (r.nvcc_version) {
        j["nvcc_version"] = r.nvcc_version->str();
    }
    ojson d = ojson::object();
    if (r.driver_min) {
        d["min"] = r.driver_min->str();
        d["min_source"] = r.driver_min_source;
        if (!r.driver_min_basis.empty()) {
            d["min_basis"] = r.driver_min_basis;
        }
    }
    if (r.driver_compat_min) {
        d["compat_min"] = r.driver_compat_min->str();
    }
    if (!d.empty()) {
        j["driver"] = d;
    }
    if (r.sm) {
        j["sm"] = ojson{{"min", r.sm->min}, {"max", r.sm->max}, {"archs", r.sm->archs}};
    }
    ojson hc = ojson::object();
    if (r.gcc_max) {
        hc["gcc_max"] = r.gcc_max->str();
    }
    if (r.clang_max) {
        hc["clang_max"] = r.clang_max->str();
    }
    if (!hc.empty() && !r.host_compilers_source.empty()) {
        hc["source"] = r.host_compilers_source;
    }
    if (!hc.empty()) {
        j["host_compilers"] = hc;
    }
    if (r.source == CudaSource::redist) {
        ojson comps = ojson::object();
        for (const auto& c : r.components) {
            ojson cj = ojson::object();
            if (!c.description.empty()) {
                cj["name"] = c.description;
            }
            cj["version"] = c.version.str();
            cj["platforms"] = platforms_json(c.platforms);
            comps[c.name] = cj;
        }
        j["components"] = comps;
    }
    return j;
}

ojson to_json(const CudnnRelease& r) {
    ojson j = header_json("cudnn");
    j["version"] = r.version.str();
    j["major"] = r.major;
    if (!r.release_date.empty()) {
        j["release_date"] = r.release_date;
    }
    j["layout"] = r.layout == CudnnLayout::redist ? "redist" : "tarball";
    if (!r.redistrib.empty()) {
        ojson red = ojson::array();
        for (const auto& a : r.redistrib) {
            red.push_back(artifact_json(a));
        }
        j["redistrib"] = red;
    }
    ojson builds = ojson::array();
    for (const auto& b : r.builds) {
        ojson one{{"cuda", b.cuda}};
        if (b.cuda_min) {
            one["cuda_min"] = b.cuda_min->str();
        }
        if (b.cuda_max) {
            one["cuda_max"] = b.cuda_max->str();
        }
        one["platforms"] = platforms_json(b.platforms);
        if (!b.extras.empty()) {
            ojson ex = ojson::object();
            for (const auto& [name, plats] : b.extras) {
                ex[name] = platforms_json(plats);
            }
            one["extras"] = ex;
        }
        builds.push_back(std::move(one));
    }
    j["builds"] = builds;
    if (r.known_in_part) {
        const auto& part = *r.known_in_part;
        ojson kp{{"index", part.index}, {"source", part.source}};
        ojson ub = ojson::array();
        for (const auto& [label, platform] : part.builds) {
            ub.push_back(ojson{{"cuda", label}, {"platform", platform}});
        }
        kp["unknown_builds"] = ub;
        kp["unknown_components"] = part.components;
        j["known_in_part"] = kp;
    }
    return j;
}

namespace {

ojson sources_json(const std::map<std::string, Sourced>& sources) {
    ojson out = ojson::object();
    for (const auto& [key, s] : sources) {
        out[key] = ojson{{"text", s.text}, {"primary", s.primary}};
    }
    return out;
}

} // namespace

ojson to_json(const Framework& f) {
    ojson j = header_json("framework");
    j["name"] = f.name;
    j["aliases"] = f.aliases;
    j["packages"] = f.packages;
    j["compat"] = ojson{{"cuda", rule_name(f.cuda_rule)}, {"cudnn", rule_name(f.cudnn_rule)}};
    ojson rel = ojson::array();
    for (const auto& r : f.releases) {
        ojson row{{"series", r.series.str()}, {"tested", r.tested.str()}, {"cuda", r.cuda.str()}};
        if (r.cudnn.size() > 0) {
            row["cudnn"] = r.cudnn.str();
        }
        if (!r.package.empty()) {
            row["package"] = r.package;
        }
        if (!r.python.empty()) {
            row["python"] = r.python;
        }
        if (!r.compiler.empty()) {
            row["compiler"] = r.compiler;
        }
        if (!r.build_tools.empty()) {
            row["build_tools"] = r.build_tools;
        }
        if (!r.variants.empty()) {
            row["default_variant"] = r.default_variant;
            ojson vs = ojson::array();
            for (const auto& v : r.variants) {
                ojson vj{{"tag", v.tag}, {"cuda", v.cuda.str()}};
                if (v.cuda_floor) {
                    vj["cuda_floor"] = true;
                }
                if (v.cuda_install) {
                    vj["cuda_install"] = v.cuda_install->str();
                }
                if (v.cudnn) {
                    vj["cudnn"] = v.cudnn->str();
                }
                if (v.cudnn_below) {
                    vj["cudnn_below"] = v.cudnn_below->str();
                }
                if (!v.pins.empty()) {
                    ojson pins = ojson::object();
                    for (const auto& [name, req] : v.pins) {
                        pins[name] = req;
                    }
                    vj["pins"] = pins;
                }
                if (!v.sources.empty()) {
                    vj["sources"] = sources_json(v.sources);
                }
                vs.push_back(vj);
            }
            row["variants"] = vs;
        }
        if (!r.sources.empty()) {
            row["sources"] = sources_json(r.sources);
        }
        rel.push_back(row);
    }
    j["releases"] = rel;
    if (!f.rules.empty()) {
        ojson rules = ojson::array();
        for (const auto& r : f.rules) {
            rules.push_back(ojson{{"id", r.id}, {"text", r.text}, {"source", r.source}});
        }
        j["rules"] = rules;
    }
    return j;
}

nlohmann::ordered_json indexes_to_json(const std::vector<PinnedIndex>& indexes) {
    ojson j = header_json("indexes");
    for (const char* product : {"cuda", "cudnn"}) {
        ojson list = ojson::array();
        for (const auto& p : indexes) {
            if (p.product == product) {
                ojson e{{"version", p.version.str()}};
                ojson a = artifact_json(p.index);
                for (auto& [k, v] : a.items()) {
                    e[k] = v;
                }
                if (p.release) {
                    e["release"] = to_json(*p.release);
                }
                list.push_back(std::move(e));
            }
        }
        j[product] = list;
    }
    return j;
}

ojson gpus_to_json(const std::vector<Gpu>& gpus) {
    ojson j = header_json("gpus");
    ojson list = ojson::array();
    for (const auto& g : gpus) {
        ojson gj{{"name", g.name},
                 {"compute_capability",
                  std::to_string(g.compute_capability / 10) + "." +
                      std::to_string(g.compute_capability % 10)}};
        if (!g.architecture.empty()) {
            gj["architecture"] = g.architecture;
        }
        if (g.min_driver) {
            gj["min_driver"] = g.min_driver->str();
            gj["min_driver_basis"] = g.min_driver_basis;
        }
        list.push_back(gj);
    }
    j["gpus"] = list;
    return j;
}

ojson profiles_to_json(const std::vector<Profile>& profiles) {
    ojson j = header_json("profiles");
    ojson list = ojson::array();
    for (const auto& p : profiles) {
        ojson pj{{"name", p.name}, {"description", p.description}};
        if (p.all) {
            pj["all"] = true;
            pj["exclude"] = p.exclude;
        } else {
            pj["includes"] = p.includes;
            pj["components"] = p.components;
        }
        list.push_back(pj);
    }
    j["profiles"] = list;
    return j;
}

ojson to_json(const Rules& r) {
    ojson j = header_json("rules");
    ojson cudnn = ojson::object();
    for (const auto& [major, libs] : r.cudnn_sublibraries) {
        ojson spec{{"libraries", libs}};
        if (auto it = r.cudnn_version_header.find(major); it != r.cudnn_version_header.end()) {
            spec["version_header"] = it->second;
        }
        cudnn[std::to_string(major)] = spec;
    }
    j["cudnn"] = cudnn;
    return j;
}
} // namespace cudaenv::manifest
