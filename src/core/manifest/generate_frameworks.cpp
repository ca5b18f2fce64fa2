#include "generate_frameworks.hpp"

#include "../fs.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace cudaenv::manifest {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

Error framework_error(const std::string& what) {
    return Error(ErrorCode::integrity, "generating framework manifests: " + what);
}

std::string text_of(const json& obj, const char* key) {
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

/// The dotted number at the start of `s` ("12.1.105 ; ..." -> 12.1.105).
std::optional<Version> leading(std::string_view s) {
    std::size_t end = 0;
    while (end < s.size() && (std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '.')) {
        ++end;
    }
    auto head = s.substr(0, end);
    while (!head.empty() && head.back() == '.') {
        head.remove_suffix(1);
    }
    return Version::try_parse(head);
}

Version major_only(unsigned major) {
    return *Version::try_parse(std::to_string(major));
}

Result<json> read_json(const fs::path& file) {
    auto text = CUDAENV_TRY(read_text_file(file));
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        return framework_error("'" + file.string() + "' is not a JSON object");
    }
    return doc;
}

void count(GenerateReport::FrameworkCount& c, const Sourced& s) {
    ++c.values;
    c.primary += s.primary ? 1 : 0;
}

// ---- PyTorch ----------------------------------------------------------------------------------

/// Which variant a snapshot key names: "pins" (the snapshot's one set), "11.8" (its set for that
/// CUDA) or "requires_dist" (a METADATA quote) -> the variant tag.
Status apply_snapshot(const json& snapshot, const json& curation, FrameworkRelease& rel) {
    std::string why = text_of(curation, "why");
    std::string source = text_of(snapshot, "source");
    bool primary = starts_with(source, "PRIMARY");
    std::set<std::string> omit, only;
    for (const auto& n : curation.value("omit", json::array())) {
        omit.insert(n.get<std::string>());
    }
    for (const auto& n : curation.value("only", json::array())) {
        only.insert(n.get<std::string>());
    }
    for (const auto& [key, tag_json] : curation.at("variants").items()) {
        std::string tag = tag_json.get<std::string>();
        auto it = std::find_if(
            rel.variants.begin(), rel.variants.end(), [&](const auto& v) { return v.tag == tag; });
        if (it == rel.variants.end()) {
            return framework_error("pin snapshot '" + text_of(curation, "snapshot") + "' names " +
                                   tag + ", which torch " + rel.series.str() +
                                   " has no wheels for");
        }
        std::map<std::string, std::string> pins;
        if (key == "requires_dist") {
            for (const auto& line : snapshot.at("requires_dist")) {
                std::string req = line.get<std::string>();
                req = req.substr(0, req.find(';'));
                auto op = req.find_first_of("=<>~!");
                if (op == std::string::npos) {
                    continue;
                }
                std::string name = req.substr(0, op);
                if (starts_with(name, "nvidia-") || starts_with(name, "cuda-toolkit")) {
                    pins[name] = req.substr(op);
                }
            }
        } else {
            const json& set = key == "pins" ? snapshot.at("pins") : snapshot.at("pins").at(key);
            for (const auto& [name, req] : set.items()) {
                if (req.is_string() && starts_with(req.get<std::string>(), "==")) {
                    pins[name] = req.get<std::string>();
                }
            }
        }
        for (auto p = pins.begin(); p != pins.end();) {
            bool drop = omit.count(p->first) || (!only.empty() && !only.count(p->first));
            p = drop ? pins.erase(p) : std::next(p);
        }
        if (pins.empty()) {
            return framework_error("pin snapshot '" + text_of(curation, "snapshot") +
                                   "' gives no pins");
        }
        // a snapshot whose cuDNN disagrees with the release matrix belongs to another release
        for (const auto& [name, req] : pins) {
            if (starts_with(name, "nvidia-cudnn-") && it->cudnn) {
                auto pinned = Version::try_parse(req.substr(2));
                if (!pinned || *pinned != *it->cudnn) {
                    return framework_error("pin snapshot '" + text_of(curation, "snapshot") +
                                           "' pins " + name + req + " but torch " +
                                           rel.series.str() + " " + tag +
                                           " was released with cuDNN " + it->cudnn->str());
                }
            }
        }
        it->pins = std::move(pins);
        it->sources["pins"] = Sourced{source + " -- " + why, primary};
        if (!it->cudnn) {
            for (const auto& [name, req] : it->pins) {
                if (starts_with(name, "nvidia-cudnn-")) {
                    it->cudnn = Version::try_parse(req.substr(2));
                    it->sources["cudnn"] = it->sources["pins"];
                }
            }
        }
    }
    return Ok{};
}

Result<Framework> pytorch(const json& doc, const json& curation, GenerateReport& report) {
    Framework fw;
    fw.name = "pytorch";
    fw.aliases = {"torch"};
    fw.packages = {"torch"};
    auto& counts = report.frameworks["pytorch"];
    std::map<std::string, json> defaults;
    for (const auto& d : curation.value("pypi_default", json::array())) {
        defaults[text_of(d, "series")] = d;
    }
    for (const auto& r : doc.at("releases")) {
        FrameworkRelease rel;
        auto series = Version::try_parse(text_of(r, "version"));
        if (!series || series->size() != 2) {
            return framework_error("pytorch release '" + text_of(r, "version") + "' is not X.Y");
        }
        rel.series = *series;
        rel.tested = *Version::try_parse(series->str() + ".0");
        rel.package = "torch";
        std::string variants_src = text_of(r, "cuda_variants_source");
        Sourced vsrc{variants_src, starts_with(variants_src, "pytorch/test-infra")};
        // cuDNN per CUDA from the release's compatibility matrix (stable and experimental)
        const json& md = r.value("release_md_matrix", json::object());
        std::string md_src = text_of(md, "src");
        Sourced msrc{md_src, starts_with(md_src, "pytorch/pytorch RELEASE.md @")};
        rel.python = text_of(md, "python");
        auto cudnn_of = parse_release_matrix(text_of(md, "stable"));
        for (const auto& [k, v] : parse_release_matrix(text_of(md, "experimental"))) {
            cudnn_of.emplace(k, v);
        }
        for (const auto& c : r.at("cuda_wheel_variants_release")) {
            FrameworkVariant v;
            auto cuda = Version::try_parse(c.get<std::string>());
            if (!cuda || cuda->size() != 2) {
                return framework_error("torch " + rel.series.str() + " variant CUDA '" +
                                       c.get<std::string>() + "' is not X.Y");
            }
            v.cuda = *cuda;
            v.tag = FrameworkVariant::torch_tag(*cuda);
            v.sources["cuda"] = vsrc;
            count(counts, vsrc);
            if (auto it = cudnn_of.find(cuda->str()); it != cudnn_of.end()) {
                v.cudnn = Version::try_parse(it->second);
                v.sources["cudnn"] = msrc;
                count(counts, msrc);
            }
            rel.variants.push_back(std::move(v));
            ++counts.variants;
        }
        if (rel.variants.empty()) {
            return framework_error("torch " + rel.series.str() + " has no CUDA variants");
        }
        std::string def = text_of(r, "pypi_default_cuda");
        std::string def_src = text_of(r, "pypi_default_source");
        Sourced dsrc{def_src, starts_with(def_src, "pytorch/test-infra")};
        if (def.empty()) {
            auto it = defaults.find(rel.series.str());
            if (it == defaults.end()) {
                return framework_error(
                    "torch " + rel.series.str() +
                    " has no PyPI default CUDA (add it to cudaenv-frameworks.json)");
            }
            def = text_of(it->second, "cuda");
            dsrc = Sourced{"cudaenv-frameworks.json: " + text_of(it->second, "source"),
                           it->second.value("primary", false)};
        }
        auto dv = Version::try_parse(def);
        if (!dv) {
            return framework_error("torch " + rel.series.str() + " default CUDA '" + def + "'");
        }
        rel.default_variant = FrameworkVariant::torch_tag(*dv);
        const auto* d = rel.default_one();
        if (!d) {
            return framework_error("torch " + rel.series.str() + "'s PyPI default CUDA " + def +
                                   " is not one of its variants");
        }
        rel.sources["default"] = dsrc;
        count(counts, dsrc);
        rel.sources["variants"] = vsrc;
        rel.cuda = d->cuda;
        if (!d->cudnn) {
            return framework_error("torch " + rel.series.str() + "'s default variant has no cuDNN");
        }
        rel.cudnn = d->cudnn->truncated(2);
        fw.releases.push_back(std::move(rel));
        ++counts.rows;
    }
    const json& snapshots = doc.at("pin_snapshots");
    for (const auto& c : curation.value("pin_snapshots", json::array())) {
        std::string key = text_of(c, "snapshot");
        if (!snapshots.contains(key)) {
            return framework_error("no pin snapshot '" + key + "' in frameworks/pytorch.json");
        }
        auto series = Version::try_parse(text_of(c, "series"));
        auto rel = std::find_if(fw.releases.begin(), fw.releases.end(), [&](const auto& r) {
            return series && r.series == *series;
        });
        if (rel == fw.releases.end()) {
            return framework_error("pin snapshot '" + key + "' names an unknown torch release");
        }
        CUDAENV_TRY(apply_snapshot(snapshots.at(key), c, *rel));
    }
    for (const auto& rel : fw.releases) {
        for (const auto& v : rel.variants) {
            if (auto it = v.sources.find("pins"); it != v.sources.end()) {
                count(counts, it->second);
            }
        }
    }
    std::sort(fw.releases.begin(), fw.releases.end(), [](const auto& a, const auto& b) {
        return a.series > b.series;
    });
    return fw;
}

// ---- JAX ----------------------------------------------------------------------------------------

/// The templated lines of a plugin_setup.py (0.7.0) for one CUDA major: `{cuda_version}` is the
/// major; `{cuda_whl_sfx}` is "-cu12" for 12 and unknown for others (those lines are skipped).
std::map<std::string, std::string> expand_template(const json& raw_lines, unsigned major) {
    std::map<std::string, std::string> out;
    for (const auto& l : raw_lines) {
        std::string line = l.get<std::string>();
        auto q = line.find('"');
        auto q2 = line.find('"', q == std::string::npos ? 0 : q + 1);
        if (q == std::string::npos || q == 0 || q2 == std::string::npos || line[q - 1] != 'f') {
            continue;
        }
        std::string req = line.substr(q + 1, q2 - q - 1);
        bool sfx = req.find("{cuda_whl_sfx}") != std::string::npos;
        if (sfx && major != 12) {
            continue;
        }
        for (auto [pat, val] : {std::pair<std::string, std::string>{"{cuda_whl_sfx}", "-cu12"},
                                {"{cuda_version}", std::to_string(major)}}) {
            for (auto at = req.find(pat); at != std::string::npos; at = req.find(pat)) {
                req.replace(at, pat.size(), val);
            }
        }
        auto op = req.find_first_of("=<>~!");
        out[req.substr(0, op)] = op == std::string::npos ? "" : req.substr(op);
    }
    return out;
}

/// "nvidia-cudnn-cu12" for major 12 finds "nvidia-cudnn-cu12"; CUDA 13's unsuffixed names
/// ("nvidia-cuda-runtime") too.
const std::string*
pin_for(const std::map<std::string, std::string>& pins, const std::string& base, unsigned major) {
    for (const auto& name : {base + "-cu" + std::to_string(major), base}) {
        if (auto it = pins.find(name); it != pins.end()) {
            return &it->second;
        }
    }
    return nullptr;
}

Result<Framework> jax(const json& doc, const json& curation, GenerateReport& report) {
    Framework fw;
    fw.name = "jax";
    fw.aliases = {"jaxlib"};
    fw.packages = {"jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda13-plugin"};
    auto& counts = report.frameworks["jax"];
    Sourced default_src{text_of(curation.value("default_extra", json::object()), "text"),
                        curation.value("default_extra", json::object()).value("primary", false)};
    for (const auto& r : doc.at("releases")) {
        FrameworkRelease rel;
        auto version = Version::try_parse(text_of(r, "version"));
        if (!version) {
            return framework_error("jax release '" + text_of(r, "version") + "'");
        }
        rel.series = *version;
        rel.tested = *version;
        rel.package = "jax";
        std::string at =
            "jax-ml/jax @ " + text_of(r, "tag") + " (" + text_of(r, "commit").substr(0, 12) + ")";
        // the CUDA majors it has wheels for: its extras and its pin sets
        std::set<unsigned> majors;
        for (const auto& e : r.value("cuda_extras_in_setup_py", json::array())) {
            std::string name = e.get<std::string>();
            if (name.size() >= 6 && starts_with(name, "cuda") && std::isdigit(name[4])) {
                majors.insert(static_cast<unsigned>(std::stoul(name.substr(4, 2))));
            }
        }
        const json& defaults = r.value("jaxlib_default_cudnn_vars_setup_py", json::object());
        std::optional<unsigned> default_major;
        if (defaults.is_object() && defaults.contains("_default_cuda_version")) {
            default_major = static_cast<unsigned>(
                std::stoul(defaults["_default_cuda_version"].get<std::string>()));
            majors.insert(*default_major);
        }
        const json& by_major = r.value("nvidia_pins_by_cuda_major", json::object());
        // HERMETIC_CUDA_VERSION / HERMETIC_CUDNN_VERSION pairs, in order, by CUDA major
        std::map<unsigned, std::pair<Version, std::optional<Version>>> hermetic;
        std::optional<unsigned> last;
        for (const auto& l : r.value("hermetic_build_versions_bazelrc", json::array())) {
            std::string line = l.is_string() ? l.get<std::string>() : "";
            auto eq = line.find("=\"");
            auto v = eq == std::string::npos ? std::nullopt : leading(line.substr(eq + 2));
            if (!v) {
                continue;
            }
            if (line.find("HERMETIC_CUDA_VERSION") != std::string::npos) {
                last = v->major();
                hermetic.try_emplace(*last, *v, std::nullopt);
            } else if (line.find("HERMETIC_CUDNN_VERSION") != std::string::npos && last &&
                       !hermetic[*last].second) {
                hermetic[*last].second = *v;
            }
        }
        for (unsigned major : majors) {
            FrameworkVariant v;
            v.tag = "cuda" + std::to_string(major);
            v.cuda_floor = true;
            std::map<std::string, std::string> pins;
            std::string key = "cu" + std::to_string(major);
            if (by_major.contains(key)) {
                for (const auto& [name, req] : by_major[key].items()) {
                    std::string s = req.get<std::string>();
                    pins[name] = s == "(unconstrained)" ? "" : s;
                }
            }
            // 0.7.0 writes its sets as one f-string template for both majors
            for (const auto& [name, req] :
                 expand_template(r.value("nvidia_pin_lines_raw", json::array()), major)) {
                pins.emplace(name, req);
            }
            std::string pins_src = at + " " + text_of(r, "nvidia_pins_source_file");
            Sourced psrc{pins_src, true};
            // CUDA: the newer of the runtime's and nvcc's floors, else the major alone
            v.cuda = major_only(major);
            for (const char* base : {"nvidia-cuda-runtime", "nvidia-cuda-nvcc"}) {
                if (const auto* req = pin_for(pins, base, major)) {
                    auto b = requirement_bounds(*req);
                    if (b.at_least && b.at_least->major() == major && b.at_least->size() >= 2 &&
                        (v.cuda.size() < 2 ||
                         Version::compare_numeric(b.at_least->truncated(2), v.cuda) > 0)) {
                        v.cuda = b.at_least->truncated(2);
                    }
                }
            }
            v.sources["cuda"] = v.cuda.size() >= 2
                                    ? psrc
                                    : Sourced{at + ": names CUDA " + std::to_string(major) +
                                                  " but no minimum minor",
                                              true};
            count(counts, v.sources["cuda"]);
            if (auto h = hermetic.find(major);
                h != hermetic.end() &&
                (v.cuda.size() < 2 ||
                 Version::compare_numeric(h->second.first.truncated(2), v.cuda) >= 0)) {
                v.cuda_install = h->second.first.truncated(2);
                v.sources["cuda_install"] =
                    Sourced{at + " .bazelrc HERMETIC_CUDA_VERSION (what its CI built with)", true};
            }
            // cuDNN: the nvidia-cudnn floor and cap, else jaxlib's default build's
            if (const auto* req = pin_for(pins, "nvidia-cudnn", major)) {
                auto b = requirement_bounds(*req);
                if (b.at_least) {
                    v.cudnn = *b.at_least;
                    v.cudnn_below = b.below ? *b.below : major_only(b.at_least->major() + 1);
                    v.sources["cudnn"] = psrc;
                }
            }
            std::string var = "_default_cuda" + std::to_string(major) + "_cudnn_version";
            if (!v.cudnn && defaults.is_object() && defaults.contains(var)) {
                std::string digits = defaults[var].get<std::string>(); // "86" -> 8.6
                if (digits.size() >= 2 &&
                    (v.cudnn = Version::try_parse(digits.substr(0, 1) + "." + digits.substr(1)))) {
                    v.cudnn_below = major_only(v.cudnn->major() + 1);
                    v.sources["cudnn"] = Sourced{at + " setup.py " + var +
                                                     " (the cuDNN jaxlib's wheel was built "
                                                     "with; XLA requires at least it)",
                                                 true};
                }
            }
            if (v.cudnn) {
                count(counts, v.sources["cudnn"]);
            }
            v.pins = std::move(pins);
            if (!v.pins.empty()) {
                v.sources["pins"] = psrc;
                count(counts, psrc);
            }
            rel.variants.push_back(std::move(v));
            ++counts.variants;
        }
        if (rel.variants.empty()) {
            return framework_error("jax " + rel.series.str() + " has no CUDA variant");
        }
        // `jax[cuda]`: jaxlib's default CUDA where setup.py names one; else CUDA 11 while CUDA 11
        // wheels exist (0.4.7-0.4.25, jaxlib's default build), else CUDA 12
        unsigned def = default_major.value_or(majors.count(11) ? 11u : 12u);
        if (!majors.count(def)) {
            def = *majors.begin();
        }
        rel.default_variant = "cuda" + std::to_string(def);
        rel.sources["default"] = default_src;
        count(counts, default_src);
        const auto* d = rel.default_one();
        rel.cuda = d->cuda_install.value_or(d->cuda);
        rel.cudnn = d->cudnn ? d->cudnn->truncated(2) : Version(); // none known
        fw.releases.push_back(std::move(rel));
        ++counts.rows;
    }
    std::sort(fw.releases.begin(), fw.releases.end(), [](const auto& a, const auto& b) {
        return a.series > b.series;
    });
    return fw;
}

Status add_rules(const json& curation, Framework& fw) {
    for (const auto& r : curation.value("rules", json::object()).value(fw.name, json::array())) {
        FrameworkRule rule{text_of(r, "id"), text_of(r, "text"), text_of(r, "source")};
        if (rule.id.empty() || rule.text.empty() || rule.source.empty()) {
            return framework_error("rule '" + r.dump() + "' is incomplete");
        }
        fw.rules.push_back(std::move(rule));
    }
    if (fw.rules.empty()) {
        return framework_error(fw.name + " has no verdict rules in cudaenv-frameworks.json");
    }
    return Ok{};
}

} // namespace

std::map<std::string, std::string> parse_release_matrix(std::string_view text) {
    std::map<std::string, std::string> out;
    std::vector<std::string> pending;
    for (std::size_t i = 0; i < text.size();) {
        if (text.substr(i, 6) == "CUDNN ") {
            if (auto v = leading(text.substr(i + 6))) {
                for (const auto& c : pending) {
                    out.emplace(c, v->str());
                }
                pending.clear();
            }
            i += 6;
        } else if (text.substr(i, 5) == "CUDA ") {
            if (auto v = leading(text.substr(i + 5)); v && v->size() >= 2) {
                pending.push_back(v->truncated(2).str());
            }
            i += 5;
        } else {
            ++i;
        }
    }
    return out;
}

Bounds requirement_bounds(std::string_view req) {
    Bounds b;
    std::size_t pos = 0;
    while (pos < req.size()) {
        auto comma = req.find(',', pos);
        auto part = req.substr(pos, comma == std::string_view::npos ? req.npos : comma - pos);
        pos = comma == std::string_view::npos ? req.size() : comma + 1;
        while (!part.empty() && part.front() == ' ') {
            part.remove_prefix(1);
        }
        if (starts_with(part, "==")) {
            b.at_least = leading(part.substr(2));
            b.exact = b.at_least.has_value();
        } else if (starts_with(part, ">=")) {
            b.at_least = leading(part.substr(2));
        } else if (starts_with(part, "<") && !starts_with(part, "<=")) {
            b.below = leading(part.substr(1));
        }
    }
    return b;
}

Result<std::vector<Framework>> python_frameworks(const fs::path& ref, GenerateReport& report) {
    std::error_code ec;
    if (!fs::exists(ref / "frameworks", ec)) {
        return std::vector<Framework>{};
    }
    auto curation = CUDAENV_TRY(read_json(ref / "cudaenv-frameworks.json"));
    std::vector<Framework> out;
    try {
        auto torch_doc = CUDAENV_TRY(read_json(ref / "frameworks/pytorch.json"));
        auto torch =
            CUDAENV_TRY(pytorch(torch_doc, curation.value("pytorch", json::object()), report));
        CUDAENV_TRY(add_rules(curation, torch));
        out.push_back(std::move(torch));
        auto jax_doc = CUDAENV_TRY(read_json(ref / "frameworks/jax.json"));
        auto j = CUDAENV_TRY(jax(jax_doc, curation.value("jax", json::object()), report));
        CUDAENV_TRY(add_rules(curation, j));
        out.push_back(std::move(j));
    } catch (const std::exception& e) { // json's type errors, a std::stoul on a non-number
        return framework_error(std::string("a framework table is not shaped as expected: ") +
                               e.what());
    }
    return out;
}

} // namespace cudaenv::manifest
