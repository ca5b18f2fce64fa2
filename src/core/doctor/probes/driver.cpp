// Probe 2: the kernel driver: module loaded, /proc/driver/nvidia/version, device nodes, and the
// kernel module agreeing with the user-space libraries.
#include "../../manifest/gpu_support.hpp"
#include "../../resolve/gpu_driver.hpp"
#include "../module_signature.hpp"
#include "../pci_chips.hpp"
#include "../text.hpp"
#include "probes.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace cudaenv::doctor::checks {

namespace {

/// The running kernel's release (`uname -r`), from /proc; empty when unknown.
std::string running_kernel(Host& h) {
    auto rel = h.files().read("/proc/sys/kernel/osrelease", 256);
    return rel ? rel->substr(0, rel->find('\n')) : std::string();
}

/// The nvidia module files for `kernel` (machine paths), in the folders modprobe finds them.
std::vector<std::string> module_files(Host& h, const std::string& kernel) {
    std::vector<std::string> out;
    if (kernel.empty()) {
        return out;
    }
    for (const char* sub : {"updates/dkms", "kernel/drivers/video", "extra", "updates", "misc"}) {
        std::string dir = "/lib/modules/" + kernel + "/" + sub;
        for (const auto& name : h.files().list(dir)) {
            if (name.rfind("nvidia.ko", 0) == 0) {
                out.push_back(dir + "/" + name);
            }
        }
    }
    return out;
}

/// The kernels DKMS built an nvidia module for (/var/lib/dkms/nvidia*/<version>/<kernel>/).
std::vector<std::string> dkms_kernels(Host& h) {
    std::set<std::string> out;
    for (const auto& mod : h.files().list("/var/lib/dkms")) {
        if (mod.rfind("nvidia", 0) != 0) {
            continue;
        }
        for (const auto& ver : h.files().list("/var/lib/dkms/" + mod)) {
            std::string dir = "/var/lib/dkms/" + mod + "/" + ver;
            for (const auto& k : h.files().list(dir)) {
                // kernels are folders named by release ("6.1.0-27-amd64"); build/ and source
                // are DKMS's own
                if (k != "build" && k != "source" && !k.empty() &&
                    std::isdigit(static_cast<unsigned char>(k[0])) &&
                    h.files().is_dir(dir + "/" + k)) {
                    out.insert(k);
                }
            }
        }
    }
    return {out.begin(), out.end()};
}

/// Secure Boot as the firmware says it (efivarfs: 4 attribute bytes, then 1 for on); none on a
/// machine without EFI variables to read.
std::optional<bool> secure_boot(Host& h) {
    for (const char* dir : {"/sys/firmware/efi/efivars", "/sys/firmware/efi/vars"}) {
        for (const auto& name : h.files().list(dir)) {
            if (name.rfind("SecureBoot-", 0) != 0) {
                continue;
            }
            std::string path = std::string(dir) + "/" + name;
            bool legacy = std::string_view(dir).ends_with("/vars");
            auto data = h.files().read(legacy ? path + "/data" : path, 64);
            std::size_t at = legacy ? 0 : 4;
            if (data && data->size() > at) {
                return (*data)[at] == 1;
            }
        }
    }
    return std::nullopt;
}

constexpr std::string_view k_efivars = "/sys/firmware/efi/efivars";
constexpr std::string_view k_shim_guid = "-605dab50-e046-4300-abb8-bb99cb02c3b4";
constexpr std::string_view k_db = "db-d719b2cb-3d3a-4596-a3bc-dad00e67656f";

/// The keys the machine enrolled for the kernel to trust: the X.509 certificates in shim's MOK
/// list (MokListRT, continued in MokListRT1, 2, ... when long; else shim's table in
/// /sys/firmware/efi/mok-variables) and the firmware's db. A variable that is there but cannot
/// be read (root only) is named in `unreadable`: then nothing is concluded from its absence.
struct Enrolled {
    std::vector<std::pair<std::string, KeyId>> keys; ///< ("MOK" or "db", the key)
    std::vector<std::string> unreadable;
    bool mok_read = false;
};

void add_keys(Host& h, Enrolled& e, const std::string& path, std::size_t attributes, bool mok) {
    auto data = h.files().read(path, 4u << 20);
    if (!data) {
        e.unreadable.push_back(path);
        return;
    }
    std::string_view lists = std::string_view(*data).substr(std::min(attributes, data->size()));
    for (const auto& der : efi_x509_certificates(lists)) {
        if (auto k = certificate_key(der)) {
            e.keys.emplace_back(mok ? "MOK" : "db", *k);
        }
    }
    e.mok_read = e.mok_read || mok;
}

Enrolled enrolled_keys(Host& h) {
    Enrolled e;
    std::string efivars(k_efivars);
    for (const auto& name : h.files().list(efivars)) {
        if (name.starts_with("MokListRT") && name.ends_with(k_shim_guid)) {
            add_keys(h, e, efivars + "/" + name, 4, true);
        }
    }
    if (!e.mok_read) {
        for (const auto& name : h.files().list("/sys/firmware/efi/mok-variables")) {
            if (name.starts_with("MokListRT")) {
                add_keys(h, e, "/sys/firmware/efi/mok-variables/" + name, 0, true);
            }
        }
    }
    if (std::string db = efivars + "/" + std::string(k_db); h.files().exists(db)) {
        add_keys(h, e, db, 4, false);
    }
    return e;
}

/// The signing key's certificate DKMS or Ubuntu's shim-signed made, when it is the module's
/// signer: what `mokutil --import` takes.
std::string signer_key_file(Host& h, const KeyId& signer) {
    for (const char* p : {"/var/lib/dkms/mok.pub", "/var/lib/shim-signed/mok/MOK.der"}) {
        auto der = h.files().read(p, 1u << 16);
        if (!der) {
            continue;
        }
        if (auto key = certificate_key(*der); key && same_key(signer, *key)) {
            return p;
        }
    }
    return {};
}

/// What Secure Boot makes of the nvidia module: `refused` when the kernel will not load it
/// (unsigned, or signed by a key neither MOK nor db holds), and what was read about its signer.
struct Signing {
    std::optional<Finding> refused;
    std::vector<std::string> details;
};

Finding unsigned_module(const std::string& module) {
    return fail("Secure Boot is on and the nvidia module " + module +
                    " is not signed: the kernel refuses to load it (modprobe: \"Key was "
                    "rejected by service\")",
                "sign the module with a Machine Owner Key and enroll it (DKMS signs with "
                "/var/lib/dkms/mok.key: sudo mokutil --import /var/lib/dkms/mok.pub, reboot, "
                "confirm in the MOK manager, then sudo dkms autoinstall), or turn Secure Boot "
                "off in the firmware",
                {"Secure Boot: on (EFI SecureBoot variable)", "module: " + module});
}

/// The signature a module file ends with, decoded where it is compressed.
Result<ModuleSignature> read_signature(Host& h, const std::string& module) {
    auto tail = module_tail(h.files().at(module));
    return tail ? parse_module_signature(*tail) : Result<ModuleSignature>(tail.error());
}

/// The signer of a module file: none when it cannot be read, is unsigned or not PKCS#7.
std::optional<KeyId> module_signer(Host& h, const std::string& module) {
    auto sig = read_signature(h, module);
    if (!sig || !sig->present || sig->id_type != 2) {
        return std::nullopt;
    }
    auto signer = pkcs7_signer(sig->signature);
    return signer ? std::optional<KeyId>(*signer) : std::nullopt;
}

/// The key the running kernel's own modules are signed with, which it trusts built in (neither
/// MOK nor db holds it; /proc/keys shows it to root only): the signer of a loaded in-tree module
/// (/proc/modules, its file from modules.dep). None when no such module can be read.
std::optional<KeyId> kernel_build_key(Host& h) {
    std::string kernel = running_kernel(h);
    auto dep = h.files().read("/lib/modules/" + kernel + "/modules.dep", 16u << 20);
    auto mods = h.files().read("/proc/modules", 1u << 20);
    if (kernel.empty() || !dep || !mods) {
        return std::nullopt;
    }
    std::set<std::string> loaded;
    for (std::string_view line : detail::lines_of(*mods)) {
        loaded.emplace(line.substr(0, line.find(' ')));
    }
    int tries = 0;
    for (const auto& line : detail::lines_of(*dep)) {
        std::string_view path = std::string_view(line).substr(0, line.find(':'));
        std::string name(path.substr(path.rfind('/') + 1));
        name = name.substr(0, name.find(".ko"));
        std::replace(name.begin(), name.end(), '-', '_');
        if (!path.starts_with("kernel/") || !loaded.contains(name)) {
            continue;
        }
        if (++tries > 3) {
            break;
        }
        if (auto key = module_signer(h, "/lib/modules/" + kernel + "/" + std::string(path))) {
            return key;
        }
    }
    return std::nullopt;
}

/// The module's signer against the enrolled keys (the signature already read).
Signing judge_signer(Host& h, const std::string& module, const KeyId& signer) {
    std::string who = (signer.name.empty() ? std::string("an unnamed key") : signer.name) +
                      " (key " + signer.label() + ")";
    auto enrolled = enrolled_keys(h);
    for (const auto& [where, key] : enrolled.keys) {
        if (same_key(signer, key)) {
            return {std::nullopt, {"module signed by " + who + ", enrolled in " + where}};
        }
    }
    if (auto own = kernel_build_key(h); own && same_key(signer, *own)) {
        return {std::nullopt,
                {"module signed by " + who +
                 ", the key the running kernel signs its own modules with (built in)"}};
    }
    if (!enrolled.unreadable.empty()) {
        return {std::nullopt,
                {"module signed by " + who + "; whether that key is enrolled needs " +
                 join(enrolled.unreadable) +
                 ", which only root can read: sudo cudaenv doctor --only driver"}};
    }
    std::vector<std::string> details{"module: " + module, "signer: " + who};
    for (const auto& [where, key] : enrolled.keys) {
        details.push_back("enrolled in " + where + ": " + key.name + " (" + key.label() + ")");
    }
    std::string file = signer_key_file(h, signer);
    return {fail("Secure Boot is on and the nvidia module is signed by " + who +
                     ", which is not enrolled in MOK or db: the kernel refuses it",
                 "sudo mokutil --import " +
                     (file.empty() ? std::string("<the signing key's public certificate, DER>")
                                   : file) +
                     " and confirm at the next boot, or sign the module with an enrolled key",
                 details),
            {}};
}

/// Reads the module's signature when Secure Boot is on; a module whose signature cannot be read
/// (a compression this build cannot decode, a malformed trailer) is not judged, and says why.
Signing module_signing(Host& h, const std::string& module) {
    if (secure_boot(h) != true) {
        return {};
    }
    auto sig = read_signature(h, module);
    if (!sig) {
        return {std::nullopt, {"module signature: cannot tell (" + sig.error().message + ")"}};
    }
    if (!sig->present) {
        return {unsigned_module(module), {}};
    }
    if (sig->id_type != 2) {
        return {std::nullopt,
                {"module signature: type " + std::to_string(sig->id_type) +
                 ", not PKCS#7: its signer is not read"}};
    }
    auto signer = pkcs7_signer(sig->signature);
    if (!signer) {
        return {std::nullopt, {"module signature: cannot tell (" + signer.error().message + ")"}};
    }
    return judge_signer(h, module, *signer);
}

bool nouveau_loaded(Host& h) {
    if (h.files().is_dir("/sys/module/nouveau")) {
        return true;
    }
    auto mods = h.files().read("/proc/modules");
    return mods && (mods->rfind("nouveau ", 0) == 0 || mods->find("\nnouveau ") != mods->npos);
}

std::string nouveau_fix() {
    return "blacklist nouveau: printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo "
           "tee /etc/modprobe.d/blacklist-nouveau.conf, then sudo update-initramfs -u (dracut -f "
           "on RHEL) and reboot";
}

/// Why an installed nvidia module does not load, when the machine shows it: nouveau holds the
/// GPU, DKMS built the module for other kernels only (a kernel upgrade), or Secure Boot refuses
/// the module (`signing`). None when the machine shows no such cause.
std::optional<Finding> module_blocked(Host& h,
                                      bool driver_installed,
                                      const std::vector<std::string>& files,
                                      const Signing& signing) {
    std::string kernel = running_kernel(h);
    if (nouveau_loaded(h) && (driver_installed || !files.empty())) {
        return fail("the nouveau driver is loaded and holds the GPU: the nvidia module cannot "
                    "bind it",
                    nouveau_fix(),
                    {"/proc/modules lists nouveau"});
    }
    if (files.empty()) {
        auto built = dkms_kernels(h);
        if (!built.empty() && !kernel.empty()) {
            return fail("the nvidia module is built for kernel " + join(built) +
                            " only, not the running kernel " + kernel +
                            ": DKMS did not rebuild it after the kernel upgrade",
                        "sudo apt install linux-headers-" + kernel +
                            " && sudo dkms autoinstall -k " + kernel + " (RHEL: kernel-devel-" +
                            kernel +
                            "), then sudo modprobe nvidia; or boot the kernel it was built for",
                        {"DKMS built: " + join(built), "running: " + kernel});
        }
        // NVIDIA's .run installer without DKMS builds for the kernel it ran on, once
        std::vector<std::string> others;
        for (const auto& k : h.files().list("/lib/modules")) {
            if (k != kernel && !module_files(h, k).empty()) {
                others.push_back(k);
            }
        }
        if (!others.empty() && !kernel.empty()) {
            return fail("the nvidia module is installed for kernel " + join(others) +
                            " only, not the running kernel " + kernel +
                            ": it was built once (NVIDIA's .run installer without DKMS) and the "
                            "kernel was upgraded since",
                        "rerun NVIDIA's installer for this kernel with DKMS (sudo sh "
                        "NVIDIA-Linux-*.run --dkms; it needs linux-headers-" +
                            kernel + "), or boot the kernel it was built for",
                        {"module found for: " + join(others), "running: " + kernel});
        }
        return std::nullopt;
    }
    return signing.refused;
}

struct Installed {
    Version version;
    std::string where; ///< the file or folder that says so
    int rank;          ///< which source speaks for the module that would bind the GPU
};

/// The NVIDIA driver installed on disk, whether or not its module is loaded: DKMS's tree (built
/// for the running kernel first), the user-space libraries' file names (libcuda.so.470.223.02),
/// the module sources in /usr/src (nvidia-470.223.02, Debian's nvidia-current-535.216.01).
std::vector<Installed> installed_drivers(Host& h) {
    std::vector<Installed> out;
    auto driver_version = [](std::string_view s) -> std::optional<Version> {
        auto v = Version::try_parse(s);
        return v && v->size() >= 2 && v->major() >= 100 ? v : std::nullopt;
    };
    std::string kernel = running_kernel(h);
    for (const auto& mod : h.files().list("/var/lib/dkms")) {
        if (mod.rfind("nvidia", 0) != 0) {
            continue;
        }
        for (const auto& ver : h.files().list("/var/lib/dkms/" + mod)) {
            if (auto v = driver_version(ver)) {
                std::string dir = "/var/lib/dkms/" + mod + "/" + ver;
                bool built = !kernel.empty() && h.files().is_dir(dir + "/" + kernel);
                out.push_back(
                    {*v, dir + (built ? " (built for " + kernel + ")" : ""), built ? 0 : 3});
            }
        }
    }
    std::vector<std::string> lib_dirs = h.loader().default_lib_dirs();
    // Debian's nvidia-driver keeps them in <multiarch>/nvidia/current, Fedora's in lib64/nvidia,
    // L4T in <multiarch>/nvidia (JetPack 6) or <multiarch>/tegra (JetPack 5, 7)
    std::string multiarch = "/usr/lib/" + h.files().triplet();
    for (const std::string& extra : {multiarch + "/nvidia/current",
                                     std::string("/usr/lib64/nvidia"),
                                     multiarch + "/nvidia",
                                     multiarch + "/tegra"}) {
        lib_dirs.push_back(extra);
    }
    std::set<std::string> seen;
    for (const auto& dir : lib_dirs) {
        if (!seen.insert(h.files().canonical(dir)).second) {
            continue; // merged /usr: one folder, two names
        }
        for (const auto& name : h.files().list(dir)) {
            for (std::string_view base : {"libcuda.so.", "libnvidia-ml.so."}) {
                if (name.starts_with(base)) {
                    if (auto v = driver_version(std::string_view(name).substr(base.size()))) {
                        out.push_back({*v, dir + "/" + name, 1});
                    }
                }
            }
        }
    }
    for (const auto& name : h.files().list("/usr/src")) {
        if (name.rfind("nvidia", 0) == 0 && name.find('-') != std::string::npos) {
            if (auto v = driver_version(name.substr(name.rfind('-') + 1))) {
                out.push_back({*v, "/usr/src/" + name, 2});
            }
        }
    }
    // best source first, the newest of a source first
    std::stable_sort(out.begin(), out.end(), [](const Installed& a, const Installed& b) {
        return a.rank != b.rank ? a.rank < b.rank : b.version < a.version;
    });
    return out;
}

/// The GPUs on the PCI bus that the driver `version` does not drive, by NVIDIA's lists (the GPU's
/// PCI id; the family rule where the id is not listed).
struct Unsupported {
    std::vector<std::string> old_gpus; ///< "GPU 0 (NVIDIA H200 (PCI 10de:2335)) needs ≥ 550.90.07"
    std::optional<Version> need;       ///< the highest minimum among them
    /// the driver to install: the highest of each GPU's minimum or, where NVIDIA's lists name
    /// the GPU from a later driver, that driver
    std::optional<Version> install;
    /// GPUs the driver's branch does not list, with the driver their listing starts at ("GPU 0
    /// (NVIDIA H200, PCI 10de:2335, sm_90) from 550.90.07"), and the highest such driver
    std::vector<std::string> listed;
    std::optional<Version> listed_from;
    std::vector<std::string> new_gpus;   ///< GPUs whose architecture ended on an older branch
    std::optional<unsigned> last_branch; ///< the lowest such last branch
    std::vector<std::string> basis;      ///< what the data says, per GPU
    std::vector<std::string> by_family;  ///< GPUs whose id the lists do not have

    std::string old_what() const { return join(old_gpus); }
};

std::string older_branch_fix(unsigned branch) {
    return "install the newest R" + std::to_string(branch) +
           " driver (NVIDIA's legacy driver for this architecture; e.g. sudo apt install "
           "nvidia-driver-" +
           std::to_string(branch) +
           " on Ubuntu), then reboot; newer CUDA toolkits stay usable "
           "through the toolkits that branch supports";
}

std::string newer_driver_fix(const Version& need) {
    return "install NVIDIA driver " + need.str() +
           " or newer (NVIDIA's CUDA repository: sudo apt install cuda-drivers; or NVIDIA's .run "
           "installer; a distribution's driver package only if its version is at least that), "
           "then reboot";
}

Unsupported
unsupported_by(Host& h, const Version& version, const std::set<std::string>& only = {}) {
    Unsupported out;
    const auto& pci = h.facts().pci_gpus();
    for (std::size_t i = 0; i < pci.size(); ++i) {
        if (!only.empty() && !only.contains(pci[i].address)) {
            continue;
        }
        GpuId id{pci[i].device_id, pci[i].subsystem, pci[i].name, 0};
        // the model pci.ids names for the id (whole words), else the chip family of the id
        const auto* model = gpu_model(h, pci[i].name);
        if (model) {
            id.compute_capability = model->compute_capability;
        } else if (auto chip = chip_of_device(pci[i].device_id)) {
            id.compute_capability = chip->compute_capability;
        }
        auto v =
            check_gpu_driver(h.manifests().gpu_support(), h.manifests().gpu_table(), id, version);
        const auto* listing = h.manifests().gpu_support().find(
            manifest::normalize_pci_id(pci[i].device_id), pci[i].subsystem);
        std::string dev =
            pci[i].device_id.rfind("0x", 0) == 0 ? pci[i].device_id.substr(2) : pci[i].device_id;
        std::string label = "GPU " + std::to_string(i) + " (" +
                            (listing ? listing->name
                             : model ? model->name
                                     : pci[i].name) +
                            ", PCI 10de:" + dev +
                            (v.exact ? " subsystem " + pci[i].subsystem : std::string()) +
                            (id.compute_capability ? ", " + sm(id.compute_capability) : "") + ")";
        if (!v.by_id) {
            out.by_family.push_back(label + ": " + v.why);
        }
        if (v.kind == GpuDriverVerdict::Kind::too_old && v.need) {
            out.old_gpus.push_back(label + " needs ≥ " + v.need->str());
            out.basis.push_back(v.why);
            if (!out.need || *out.need < *v.need) {
                out.need = v.need;
            }
            Version want = v.listed_from && *v.need < *v.listed_from ? *v.listed_from : *v.need;
            if (!out.install || *out.install < want) {
                out.install = want;
            }
        } else if (v.kind == GpuDriverVerdict::Kind::unknown && v.listed_from &&
                   Version::compare_numeric(version, *v.listed_from) < 0) {
            out.listed.push_back(label + " from " + v.listed_from->str());
            out.basis.push_back(v.why);
            if (!out.listed_from || *out.listed_from < *v.listed_from) {
                out.listed_from = v.listed_from;
            }
        } else if (v.kind == GpuDriverVerdict::Kind::too_new && v.last_branch) {
            out.new_gpus.push_back(label + " ends with R" + std::to_string(*v.last_branch));
            out.basis.push_back(v.why);
            if (!out.last_branch || *v.last_branch < *out.last_branch) {
                out.last_branch = v.last_branch;
            }
        }
    }
    return out;
}

/// What the kernel log says about why a GPU was not taken: NVRM's messages, each printk a record
/// of its own, joined into paragraphs ("The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1b80) /
/// installed in this system is not supported by the / NVIDIA 590.44.01 driver release.").
struct LogWord {
    enum class Kind {
        unsupported,
        legacy,
        needs_gsp,
        fell_off,
        init_failed,
        not_probed,
        bound_elsewhere
    } kind;
    std::string address; ///< "0000:01:00.0" where the message names it
    std::string release; ///< the driver release it names, or the legacy branch ("580.xx")
    std::string text;    ///< the paragraph, as the kernel printed it
};

std::vector<LogWord> kernel_log_words(Host& h) {
    std::vector<std::string> paragraphs;
    bool open = false;
    for (const auto& m : h.files().kernel_log().messages) {
        if (!m.starts_with("NVRM:")) {
            open = false;
            continue;
        }
        std::string piece = detail::trim(std::string_view(m).substr(5));
        // a paragraph ends where the next message starts one of its own
        bool starts = piece.starts_with("The NVIDIA ") || piece.starts_with("GPU ") ||
                      piece.starts_with("API mismatch") || piece.starts_with("Xid ") ||
                      piece.starts_with("loading ");
        if (!open || starts) {
            paragraphs.emplace_back();
        }
        if (!paragraphs.back().empty()) {
            paragraphs.back() += ' ';
        }
        paragraphs.back() += piece;
        open = true;
    }
    auto after = [](const std::string& p, std::string_view key) -> std::string {
        auto at = p.find(key);
        if (at == std::string::npos) {
            return {};
        }
        auto from = at + key.size();
        auto end = p.find_first_of(" ),:", from);
        return p.substr(from, end == std::string::npos ? std::string::npos : end - from);
    };
    std::vector<LogWord> out;
    // "The NVIDIA GPU 0000:01:00.0 (PCI ID: ...)", "GPU 0000:01:00.0: RmInitAdapter ..."
    auto address_after = [](const std::string& p, std::string_view key) -> std::string {
        auto at = p.find(key);
        if (at == std::string::npos) {
            return {};
        }
        std::string a;
        for (std::size_t i = at + key.size(); i < p.size(); ++i) {
            char c = static_cast<char>(std::tolower(static_cast<unsigned char>(p[i])));
            if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') {
                break;
            }
            a.push_back(c);
        }
        while (!a.empty() && (a.back() == ':' || a.back() == '.')) {
            a.pop_back();
        }
        return std::count(a.begin(), a.end(), ':') == 2 ? a : std::string();
    };
    for (const auto& p : paragraphs) {
        std::string address = address_after(p, "The NVIDIA GPU ");
        if (address.empty()) {
            address = address_after(p, "GPU ");
        }
        if (p.find("fallen off the bus") != std::string::npos) {
            out.push_back({LogWord::Kind::fell_off, address, {}, p});
        } else if (p.find("not supported by open nvidia.ko") != std::string::npos) {
            out.push_back({LogWord::Kind::needs_gsp, address, {}, p});
        } else if (p.find("is already bound to") != std::string::npos) {
            out.push_back(
                {LogWord::Kind::bound_elsewhere, address, after(p, "is already bound to "), p});
        } else if (p.find("supported through the NVIDIA") != std::string::npos) {
            out.push_back(
                {LogWord::Kind::legacy, address, after(p, "supported through the NVIDIA "), p});
        } else if (p.find("is not supported by the") != std::string::npos) {
            out.push_back(
                {LogWord::Kind::unsupported, address, after(p, "not supported by the NVIDIA "), p});
        } else if (p.find("RmInitAdapter failed") != std::string::npos ||
                   p.find("rm_init_adapter failed") != std::string::npos) {
            out.push_back({LogWord::Kind::init_failed, address, {}, p});
        } else if (p.find("probe routine was not called") != std::string::npos) {
            out.push_back({LogWord::Kind::not_probed, {}, {}, p});
        }
    }
    return out;
}

/// NVML's bus id ("00000000:65:00.0") as sysfs names the device ("0000:65:00.0").
std::string pci_address(std::string bus_id) {
    for (char& c : bus_id) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    auto colon = bus_id.find(':');
    if (colon != std::string::npos && colon > 4) {
        bus_id.erase(0, colon - 4);
    }
    return bus_id;
}

/// The kernel driver bound to each NVIDIA GPU on the PCI bus, by address (sysfs' `driver` link:
/// nvidia, nouveau, nova_core, vfio-pci); absent where none is bound.
std::map<std::string, std::string> bound_drivers(Host& h) {
    std::map<std::string, std::string> out;
    for (const auto& g : h.facts().pci_gpus()) {
        if (auto target = h.files().read_link(g.sysfs + "/driver")) {
            out[g.address] = target->substr(target->rfind('/') + 1);
        }
    }
    return out;
}

/// A GPU held by a driver other than NVIDIA's: the fix, by who holds it.
std::optional<Finding> other_owner(const std::map<std::string, std::string>& bound) {
    for (const auto& [address, owner] : bound) {
        if (owner == "nvidia") {
            continue;
        }
        std::vector<std::string> details{address + " is bound to " + owner +
                                         " (/sys/bus/pci/devices/" + address + "/driver)"};
        if (owner == "nouveau") {
            return fail("the nouveau driver is loaded and holds the GPU " + address +
                            ": the nvidia module cannot bind it",
                        nouveau_fix(),
                        details);
        }
        if (lower(owner).starts_with("nova")) { // nova_core; its PCI driver calls itself NovaCore
            return fail("Linux's nova_core driver (" + owner + ") holds the GPU " + address +
                            ": the nvidia module cannot bind it",
                        "blacklist nova_core: printf 'blacklist nova_core\\nblacklist "
                        "nova_drm\\n' | sudo tee /etc/modprobe.d/blacklist-nova.conf, then sudo "
                        "update-initramfs -u (dracut -f on RHEL) and reboot; or boot with "
                        "module_blacklist=nova_core",
                        details);
        }
        if (owner.starts_with("vfio")) {
            return fail("the GPU " + address + " is bound to " + owner +
                            " for passthrough to a virtual machine: this host's nvidia driver "
                            "cannot use it",
                        "to use it here, remove its id from vfio-pci.ids (kernel command line "
                        "or /etc/modprobe.d) and reboot; to use it in the VM, run the doctor "
                        "there",
                        details);
        }
        return fail("the GPU " + address + " is held by the " + owner +
                        " driver: the nvidia module cannot bind it",
                    "unbind it (echo " + address + " | sudo tee /sys/bus/pci/drivers/" + owner +
                        "/unbind) and keep " + owner +
                        " from binding it at boot (blacklist it in /etc/modprobe.d), then "
                        "sudo modprobe nvidia",
                    details);
    }
    return std::nullopt;
}

/// Blackwell and newer GPUs are driven by NVIDIA's open kernel modules only: the proprietary
/// module loads and binds them, and their initialisation fails (NVIDIA's driver README, "Open
/// Linux Kernel Modules").
std::optional<Finding> blackwell_needs_open(Host& h, const std::set<std::string>& untaken) {
    auto text = h.files().read("/proc/driver/nvidia/version", 4096);
    if (!text || text->find("Open Kernel Module") != std::string::npos) {
        return std::nullopt;
    }
    for (const auto& g : h.facts().pci_gpus()) {
        unsigned cc = 0;
        if (const auto* model = gpu_model(h, g.name)) {
            cc = model->compute_capability;
        } else if (auto chip = chip_of_device(g.device_id)) {
            cc = chip->compute_capability;
        }
        if (untaken.contains(g.address) && cc >= 100) {
            std::string dev = g.device_id.rfind("0x", 0) == 0 ? g.device_id.substr(2) : g.device_id;
            return fail("the GPU " + g.address + " (PCI 10de:" + dev + ", " + sm(cc) +
                            ") is a Blackwell or newer GPU, which only NVIDIA's open kernel "
                            "module drives; the proprietary module is loaded",
                        "install the open kernel module of the same driver (Ubuntu: "
                        "nvidia-driver-<branch>-open; NVIDIA's .run installer: -m=kernel-open; "
                        "RHEL: the open-dkms stream), then reboot",
                        {"/proc/driver/nvidia/version: " +
                         detail::trim(text->substr(0, text->find('\n')))});
        }
    }
    return std::nullopt;
}

/// What the kernel log says about one GPU that the driver did not take, as a finding.
std::optional<Finding> logged_reason(Host& h,
                                     const std::vector<LogWord>& words,
                                     const std::string& address,
                                     const std::string& driver) {
    for (const auto& w : words) {
        if (!w.address.empty() && !address.empty() && w.address != address) {
            continue;
        }
        std::vector<std::string> details{"kernel log: NVRM: " + w.text};
        switch (w.kind) {
        case LogWord::Kind::legacy: {
            std::string branch = w.release.substr(0, w.release.find('.'));
            return fail("the kernel log says the GPU " + w.address + " is supported through the " +
                            "NVIDIA " + w.release + " legacy drivers: driver " +
                            (driver.empty() ? std::string("installed") : driver) + " ignores it",
                        older_branch_fix(static_cast<unsigned>(std::stoul("0" + branch))),
                        details);
        }
        case LogWord::Kind::unsupported: {
            auto release = Version::try_parse(w.release);
            auto bad = release ? unsupported_by(h, *release, {w.address}) : Unsupported{};
            std::string fix = bad.last_branch ? older_branch_fix(*bad.last_branch)
                              : bad.need      ? newer_driver_fix(*bad.install)
                                              : "install a driver that lists the GPU (NVIDIA's "
                                                "driver search, or the README's Appendix A of "
                                                "a newer release), then reboot";
            for (const auto& b : bad.basis) {
                details.push_back("lists: " + b);
            }
            return fail("the kernel log says the GPU " + w.address +
                            " is not supported by the NVIDIA " + w.release + " driver release",
                        fix,
                        details);
        }
        case LogWord::Kind::fell_off:
            return fail("the kernel log says the GPU " + w.address +
                            " has fallen off the bus: it stopped answering on PCIe",
                        "reboot (a cold boot, power off); if it returns, check the slot, risers "
                        "and power cables and the GPU's temperature; NVIDIA's Xid 79 guidance",
                        details);
        case LogWord::Kind::init_failed:
            for (const auto& other : words) {
                // every RmInitAdapter line of this GPU: the one with the code says most
                if (&other != &w && other.kind == LogWord::Kind::init_failed &&
                    other.address == w.address) {
                    details.push_back("kernel log: NVRM: " + other.text);
                }
            }
            return fail("the driver could not initialise the GPU " + w.address +
                            " (RmInitAdapter failed): a hardware, firmware or power fault, not "
                            "a driver version",
                        "turn on Above 4G Decoding and Resizable BAR in the firmware where it is "
                        "off (new GPUs need it), reseat or power-cycle the GPU (cold boot), check "
                        "its power cables and "
                        "the slot; with the open module on an older GPU try the proprietary "
                        "one; if it persists, run NVIDIA's field diagnostics or RMA it",
                        details);
        case LogWord::Kind::needs_gsp:
            return fail("the kernel log says the GPU " + w.address +
                            " cannot be driven by NVIDIA's open kernel module: it has no GPU "
                            "System Processor (GSP), which the open module needs (GPUs before "
                            "Turing)",
                        "install the proprietary kernel module of the same driver (Ubuntu: "
                        "nvidia-driver-<branch> rather than nvidia-driver-<branch>-open; "
                        "NVIDIA's .run installer: -m=kernel; Fedora/RHEL: the proprietary "
                        "akmod/dkms stream); from R590 on, these GPUs need the R580 legacy "
                        "branch",
                        details);
        case LogWord::Kind::bound_elsewhere: {
            std::string owner = w.release.empty() ? "another driver" : w.release;
            if (!owner.empty() && owner.back() == '.') {
                owner.pop_back();
            }
            if (auto o = other_owner({{w.address, owner}})) {
                o->details.insert(o->details.begin(), details.begin(), details.end());
                return o;
            }
            break;
        }
        case LogWord::Kind::not_probed:
            return fail("the kernel log says another driver owned the GPU when the nvidia "
                        "module loaded (\"probe routine was not called\")",
                        nouveau_fix(),
                        details);
        }
    }
    return std::nullopt;
}

/// An installed driver too old or too new for a GPU on the bus: the module cannot bind it and
/// modprobe says "No such device", so modprobe is not the fix.
std::optional<Finding> installed_unsupported(Host& h, const std::vector<Installed>& installed) {
    if (installed.empty()) {
        return std::nullopt;
    }
    auto bad = unsupported_by(h, installed.front().version);
    if (!bad.need && !bad.last_branch) {
        return std::nullopt;
    }
    std::vector<std::string> details;
    for (const auto& i : installed) {
        details.push_back("installed: " + i.version.str() + " (" + i.where + ")");
    }
    for (const auto& b : bad.basis) {
        details.push_back("lists: " + b);
    }
    std::string what = bad.need ? "too old for the GPU: " + bad.old_what()
                                : "too new for the GPU: " + join(bad.new_gpus);
    return fail("driver " + installed.front().version.str() + " is installed but " + what +
                    "; the module cannot bind the device, so `modprobe nvidia` fails with \"No "
                    "such device\"",
                bad.need ? newer_driver_fix(*bad.install) : older_branch_fix(*bad.last_branch),
                details);
}

/// The module is not loaded: why, where the machine shows it.
Finding not_loaded(Host& h) {
    // evidence first: who holds the GPU (sysfs), what the kernel said when the module tried
    if (auto owner = other_owner(bound_drivers(h))) {
        return *owner;
    }
    auto installed =
        h.facts().container().empty() ? installed_drivers(h) : std::vector<Installed>{};
    auto words = kernel_log_words(h);
    for (const auto& g : h.facts().pci_gpus()) {
        if (auto why = logged_reason(
                h, words, g.address, installed.empty() ? "" : installed.front().version.str())) {
            return *why;
        }
    }
    if (auto bad = installed_unsupported(h, installed)) {
        return *bad;
    }
    auto files = module_files(h, running_kernel(h));
    Signing signing = files.empty() ? Signing{} : module_signing(h, files.front());
    if (auto blocked = module_blocked(h, !installed.empty(), files, signing)) {
        return *blocked;
    }
    if (!files.empty()) {
        auto sb = secure_boot(h);
        std::vector<std::string> details{
            "module: " + files.front(),
            std::string("Secure Boot: ") +
                (!sb   ? "unknown (no EFI variables)"
                 : *sb ? "on (the module's key must be enrolled: mokutil --list-enrolled)"
                       : "off")};
        details.insert(details.end(), signing.details.begin(), signing.details.end());
        return fail("the NVIDIA kernel module is installed but not loaded",
                    "sudo modprobe nvidia && sudo modprobe nvidia-uvm (if it fails, check "
                    "`dmesg | grep -i nvidia`; Secure Boot may block an unsigned module)",
                    details);
    }
    if (!h.facts().container().empty()) {
        return fail("no NVIDIA kernel driver visible in this " + h.facts().container() +
                        " container",
                    "start the container with the GPUs (docker run --gpus all …, with the "
                    "NVIDIA Container Toolkit on the host): the host's driver is passed in; "
                    "never install a driver inside the image");
    }
    return fail("no NVIDIA kernel driver: the nvidia module is not loaded",
                "install the driver (Debian/Ubuntu: sudo apt install nvidia-driver; or "
                "NVIDIA's .run installer), then reboot; \"Module nvidia not found\" from "
                "modprobe means the install is broken: reinstall it");
}

/// The kernel module and the user-space libraries are different versions: NVML answers
/// "Driver/library version mismatch" (error 18) and every CUDA program fails. Which side is newer
/// says what happened: newer libraries are an upgrade whose module is not loaded yet (reboot);
/// a newer module is libraries left behind or brought in (a container image, a second install).
std::optional<Issue> mismatch(Host& h) {
    const auto& d = h.facts().driver();
    if (!d.module_version) {
        return std::nullopt;
    }
    std::string libs = d.nvml_version.value_or(d.library_version.value_or(""));
    std::string from = d.nvml_version ? "NVML" : d.library_file;
    auto mod = Version::try_parse(*d.module_version);
    auto lib = Version::try_parse(libs);
    bool nvml_says = d.nvml_init_code == 18;
    if (!mod || !lib || (Version::compare_numeric(*mod, *lib) == 0 && !nvml_says)) {
        return std::nullopt;
    }
    std::string what = "driver/library version mismatch: kernel module " + mod->str() +
                       ", user-space libraries " + lib->str() + " (" + from + ")" +
                       (nvml_says ? "; NVML refuses to start (error 18)" : "");
    auto cmp = Version::compare_numeric(*lib, *mod);
    if (cmp > 0) {
        return Issue{Status::fail,
                     what + ": the libraries are newer -- the driver was upgraded and the old "
                            "module is still loaded",
                     "reboot (or unload and reload the module: sudo rmmod nvidia_uvm nvidia_drm "
                     "nvidia_modeset nvidia && sudo modprobe nvidia nvidia-uvm)"};
    }
    if (cmp < 0) {
        return Issue{Status::fail,
                     what + ": the kernel module is newer -- these libraries are an older "
                            "install's, left behind or brought in (a container image, a second "
                            "driver package)",
                     "install the user-space libraries of driver " + mod->str() +
                         " (Ubuntu: sudo apt install libnvidia-compute-" +
                         std::to_string(mod->major()) + " nvidia-utils-" +
                         std::to_string(mod->major()) +
                         "; in a container, do not install driver packages in the image) and "
                         "remove the older copy; a reboot does not fix this"};
    }
    return Issue{Status::fail,
                 what,
                 "reboot; if it persists, reinstall the driver so its module and libraries "
                 "are one version"};
}

/// "Jetson Orin", "Jetson Thor"; "Jetson" when the SoC is not one cudaenv names.
std::string jetson_name(const sys::Jetson& j) {
    if (j.soc.empty()) {
        return "Jetson";
    }
    std::string soc = j.soc;
    soc[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(soc[0])));
    return "Jetson " + soc;
}

/// A Jetson's driver is part of L4T (Jetson Linux): no driver package, no DKMS, no kernel module
/// to match (Orin's nvgpu is built with L4T and has no /proc/driver/nvidia; Thor's OpenRM
/// nvidia.ko ships with L4T too), its user-space half (libcuda.so.1 -> libcuda.so.1.1) in
/// <multiarch>/nvidia (JetPack 6) or <multiarch>/tegra, listed by nvidia-tegra.conf. What is
/// checked: the L4T release and JetPack, and that the loader finds L4T's libcuda.
Finding jetson_driver(Host& h) {
    const auto& m = h.files().machine();
    sys::Jetson j = m.jetson.value_or(sys::Jetson{});
    std::string name = jetson_name(j);
    std::string release = j.l4t.empty() ? std::string("L4T (release unknown)") : "L4T " + j.l4t;
    std::string jetpack = j.jetpack.empty() ? std::string() : " (JetPack " + j.jetpack + ")";
    std::vector<std::string> details;
    if (auto text = h.files().read("/etc/nv_tegra_release", 512)) {
        details.push_back("/etc/nv_tegra_release: " + text->substr(0, text->find('\n')));
    }
    if (!j.compatible.empty()) {
        details.push_back("device tree: " + j.compatible);
    }
    const auto& d = h.facts().driver();
    if (auto text = h.files().read("/proc/driver/nvidia/version", 4096)) {
        details.push_back("kernel module: " + text->substr(0, text->find('\n')));
    } else if (h.files().is_dir("/sys/module/nvgpu")) {
        details.push_back("kernel driver: nvgpu, built with L4T (no /proc/driver/nvidia)");
    } else {
        details.push_back("no /proc/driver/nvidia: " +
                          h.files().jetson_cannot("nvgpu, Orin's GPU driver, is part of L4T "
                                                  "and reports no version of its own"));
    }
    if (d.nvml_version) {
        details.push_back("NVML (" + d.nvml_path + "): driver " + *d.nvml_version);
    } else {
        details.push_back("NVML: " +
                          h.files().jetson_cannot(d.nvml_path.empty()
                                                      ? "this L4T ships no libnvidia-ml.so.1"
                                                      : "NVML does not answer: " + d.nvml_error));
    }
    std::vector<Issue> issues;
    if (j.l4t.empty()) {
        issues.push_back(
            {Status::warn,
             name + " without /etc/nv_tegra_release: the L4T release, and so the JetPack and "
                    "the CUDA it runs, are unknown",
             "reinstall L4T's core package (sudo apt install --reinstall nvidia-l4t-core), "
             "which writes /etc/nv_tegra_release"});
    }
    auto pick = h.loader().pick("libcuda.so.1");
    if (pick.path.empty()) {
        issues.push_back({Status::fail,
                          name + ", " + release + jetpack +
                              ": L4T's CUDA driver libcuda.so.1 is not known to the loader",
                          "reinstall it (sudo apt install --reinstall nvidia-l4t-cuda); "
                          "/etc/ld.so.conf.d/nvidia-tegra.conf must list /usr/lib/" +
                              h.files().triplet() + "/nvidia (JetPack 6) or /usr/lib/" +
                              h.files().triplet() + "/tegra; then sudo ldconfig"});
    } else {
        details.push_back("libcuda.so.1 -> " + pick.path + " (" + pick.via + ")");
    }
    return verdict(std::move(issues),
                   ok(name + ", " + release + jetpack + ": the GPU driver is part of L4T" +
                          (pick.path.empty() ? std::string() : "; libcuda.so.1 " + pick.path),
                      details));
}

} // namespace

Finding driver(Host& h) {
    if (h.facts().in_wsl()) {
        return skip("WSL2: the Windows driver serves the GPU (see the wsl probe)");
    }
    if (h.files().machine().kind == sys::HostKind::jetson) {
        return jetson_driver(h);
    }
    const auto& d = h.facts().driver();
    if (!d.module_loaded) {
        return not_loaded(h);
    }
    std::vector<std::string> details;
    std::string version = d.module_version.value_or(d.nvml_version.value_or("unknown"));
    details.push_back("kernel module: " +
                      d.module_version.value_or("(no /proc/driver/nvidia/version)"));
    if (d.nvml_version) {
        details.push_back("user-space (NVML " + d.nvml_path + "): " + *d.nvml_version);
    } else if (!d.nvml_error.empty()) {
        details.push_back("NVML: " + d.nvml_error);
    }
    if (d.library_version) {
        details.push_back("user-space libraries: " + *d.library_version + " (" + d.library_file +
                          ")");
    }
    // From here on every problem is reported, each with its fix (a version mismatch and missing
    // device nodes are two things to do).
    std::vector<Issue> issues;
    if (auto m = mismatch(h)) {
        issues.push_back(std::move(*m));
    }
    if (!d.nvml_path.empty() && !d.nvml_ok && !d.nvml_error.empty()) {
        details.push_back("NVML could not report: " + d.nvml_error);
    }
    // Evidence first: a GPU the driver bound and NVML enumerates is driven by it, whatever a
    // table says. Only a GPU it did not take is judged, by what the machine says of it -- the
    // driver holding it, the kernel log -- and the tables only where those are silent.
    std::set<std::string> enumerated;
    for (const auto& g : d.gpus) {
        enumerated.insert(pci_address(g.bus_id));
    }
    auto bound = bound_drivers(h);
    auto words = kernel_log_words(h);
    std::set<std::string> untaken;
    for (const auto& g : h.facts().pci_gpus()) {
        auto b = bound.find(g.address);
        // bound is not taken: the module binds the device before it initialises it, and the
        // kernel log says when that failed
        bool failed = std::any_of(
            words.begin(), words.end(), [&](const LogWord& w) { return w.address == g.address; });
        bool taken = d.nvml_ok ? enumerated.contains(g.address)
                               : (b == bound.end() || b->second == "nvidia") && !failed;
        if (!taken) {
            untaken.insert(g.address);
        }
    }
    if (!untaken.empty()) {
        details.push_back("not taken by the driver: " + join({untaken.begin(), untaken.end()}));
        std::map<std::string, std::string> others;
        for (const auto& a : untaken) {
            if (auto b = bound.find(a); b != bound.end() && b->second != "nvidia") {
                others.insert(*b);
            }
        }
        // the module's flavour is a cause of its own, beside any other
        if (auto open = blackwell_needs_open(h, untaken)) {
            details.insert(details.end(), open->details.begin(), open->details.end());
            issues.push_back({open->status, open->summary, open->fix});
        }
        std::optional<Finding> why = other_owner(others);
        for (auto it = untaken.begin(); !why && it != untaken.end(); ++it) {
            why = logged_reason(h, words, *it, version);
        }
        if (why) {
            details.insert(details.end(), why->details.begin(), why->details.end());
            issues.push_back({why->status, why->summary, why->fix});
        } else {
            auto bad = d.version() ? unsupported_by(h, *d.version(), untaken) : Unsupported{};
            for (const auto& b : bad.basis) {
                details.push_back("lists: " + b);
            }
            std::string seen =
                "driver " + version + " did not take " + std::to_string(untaken.size()) +
                " of the " + std::to_string(h.facts().pci_gpus().size()) +
                " NVIDIA GPUs on the PCI bus (" + join({untaken.begin(), untaken.end()}) + ")";
            if (bad.need) {
                issues.push_back({Status::fail,
                                  seen + ": it is older than " + bad.old_what(),
                                  newer_driver_fix(*bad.install)});
            } else if (bad.last_branch) {
                issues.push_back(
                    {Status::fail,
                     seen + ": it is newer than the last branch of " + join(bad.new_gpus),
                     older_branch_fix(*bad.last_branch)});
            } else if (bad.listed_from) {
                // the kernel log is silent: NVIDIA's lists bound the driver that takes it
                issues.push_back({Status::fail,
                                  seen + ": NVIDIA's lists name " + join(bad.listed) +
                                      ", and the kernel log does not say otherwise",
                                  newer_driver_fix(*bad.listed_from)});
            } else {
                issues.push_back(
                    {Status::fail,
                     seen + "; the kernel log does not say why",
                     "read `sudo dmesg | grep -i -e nvrm -e nvidia` for the GPU's address: the "
                     "driver names a GPU it does not support there, and a GPU that failed to "
                     "start says RmInitAdapter"});
            }
        }
    }
    if (d.version()) {
        if (auto eol = branch_end_of_life(
                h.manifests().gpu_support(), *d.version(), h.manifests().today());
            !eol.empty()) {
            details.push_back("branches: " + h.manifests().gpu_support().branches_source);
            issues.push_back({Status::warn,
                              eol + ": no more security or bug fixes",
                              "move to a supported branch: a Long Term Support Branch the GPU "
                              "is listed for (NVIDIA's Data Center Drivers docs name them and "
                              "their end of life)"});
        }
    }
    std::vector<std::string> missing;
    if (!h.files().exists("/dev/nvidiactl")) {
        missing.push_back("/dev/nvidiactl");
    }
    if (!h.files().exists("/dev/nvidia-uvm")) {
        missing.push_back("/dev/nvidia-uvm");
    }
    std::size_t gpus = h.facts().pci_gpus().size();
    for (std::size_t i = 0; i < std::max<std::size_t>(gpus, 1); ++i) {
        std::string node = "/dev/nvidia" + std::to_string(i);
        if (!h.files().exists(node)) {
            missing.push_back(node);
        }
    }
    if (!missing.empty()) {
        bool uvm_only = missing.size() == 1 && missing[0] == "/dev/nvidia-uvm";
        std::string fix = !h.facts().container().empty()
                              ? "start the container with GPU access: `docker run --gpus all …`"
                          : uvm_only
                              ? "sudo modprobe nvidia-uvm && sudo nvidia-modprobe -u -c=0"
                              : "sudo nvidia-modprobe -c=0 -u (or reboot so udev creates them)";
        issues.push_back(
            {Status::fail,
             "driver " + version + " loaded, but device nodes are missing: " + join(missing),
             fix});
    }
    return verdict(std::move(issues),
                   ok("driver " + version + " loaded; /dev/nvidiactl, /dev/nvidia-uvm and " +
                          std::to_string(std::max<std::size_t>(gpus, 1)) + " device node" +
                          (gpus > 1 ? "s" : "") + " present",
                      details));
}

} // namespace cudaenv::doctor::checks
