// Probe 2: the kernel driver: module loaded, /proc/driver/nvidia/version, device nodes, and the
// kernel module agreeing with the user-space libraries.
#include "../../resolve/gpu_driver.hpp"
#include "../module_signature.hpp"
#include "../pci_chips.hpp"
#include "../text.hpp"
#include "probes.hpp"

#include <algorithm>
#include <cctype>
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
    for (const char* extra : {"/usr/lib/x86_64-linux-gnu/nvidia/current", "/usr/lib64/nvidia"}) {
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
    std::vector<std::string> new_gpus;   ///< GPUs whose architecture ended on an older branch
    std::optional<unsigned> last_branch; ///< the lowest such last branch
    std::vector<std::string> basis;      ///< what the data says, per GPU
    std::vector<std::string> by_family;  ///< GPUs whose id the lists do not have

    std::string old_what() const { return join(old_gpus); }
};

Unsupported unsupported_by(Host& h, const Version& version) {
    Unsupported out;
    const auto& pci = h.facts().pci_gpus();
    for (std::size_t i = 0; i < pci.size(); ++i) {
        GpuId id{pci[i].device_id, pci[i].subsystem, pci[i].name, 0};
        if (const auto* model = gpu_model(h, pci[i].name)) {
            id.compute_capability = model->compute_capability;
        } else if (auto chip = chip_of_device(pci[i].device_id)) {
            id.compute_capability = chip->compute_capability;
        }
        auto v =
            check_gpu_driver(h.manifests().gpu_support(), h.manifests().gpu_table(), id, version);
        const auto* model = gpu_model(h, pci[i].name);
        std::string dev =
            pci[i].device_id.rfind("0x", 0) == 0 ? pci[i].device_id.substr(2) : pci[i].device_id;
        std::string label = "GPU " + std::to_string(i) + " (" +
                            (model ? model->name : pci[i].name) + ", PCI 10de:" + dev +
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
                bad.need ? newer_driver_fix(*bad.need) : older_branch_fix(*bad.last_branch),
                details);
}

/// The module is not loaded: why, where the machine shows it.
Finding not_loaded(Host& h) {
    auto installed =
        h.facts().container().empty() ? installed_drivers(h) : std::vector<Installed>{};
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

} // namespace

Finding driver(Host& h) {
    if (h.facts().in_wsl()) {
        return skip("WSL2: the Windows driver serves the GPU (see the wsl probe)");
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
    // From here on every problem is reported, each with its fix (a version mismatch and missing
    // device nodes are two things to do).
    std::vector<Issue> issues;
    if (d.module_version && d.nvml_version && *d.module_version != *d.nvml_version) {
        issues.push_back({Status::fail,
                          "driver/library version mismatch: kernel module " + *d.module_version +
                              ", user-space libraries " + *d.nvml_version,
                          "reboot (or unload and reload the module: sudo rmmod nvidia_uvm "
                          "nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia nvidia-uvm)"});
    }
    if (!d.nvml_path.empty() && !d.nvml_ok && !d.nvml_error.empty()) {
        details.push_back("NVML could not report: " + d.nvml_error);
    }
    auto bad = d.version() ? unsupported_by(h, *d.version()) : Unsupported{};
    for (const auto& b : bad.basis) {
        details.push_back("lists: " + b);
    }
    for (const auto& f : bad.by_family) {
        details.push_back("by family: " + f);
    }
    bool sees_all = d.nvml_ok && d.gpus.size() >= h.facts().pci_gpus().size();
    if (bad.need && sees_all) {
        // it binds them after all (an off-list build, or the lists lag): unsupported, not broken
        issues.push_back({Status::warn,
                          "driver " + version + " is older than NVIDIA's lists allow for " +
                              bad.old_what() +
                              "; it drives the GPU here, but NVIDIA does not "
                              "support the pair",
                          newer_driver_fix(*bad.need)});
    }
    if (bad.need && !d.nvml_ok) {
        issues.push_back(
            {Status::fail,
             "driver " + version + " is too old for " + bad.old_what() + " (NVIDIA's driver lists)",
             newer_driver_fix(*bad.need)});
    }
    if (bad.last_branch) {
        issues.push_back({sees_all ? Status::warn : Status::fail,
                          "driver " + version + " is newer than the last branch of " +
                              join(bad.new_gpus) + ": NVIDIA's newer branches do not drive it",
                          older_branch_fix(*bad.last_branch)});
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
    if (d.nvml_ok && d.gpus.size() < h.facts().pci_gpus().size()) {
        if (bad.need) {
            issues.push_back({Status::fail,
                              "driver " + version + " sees " + std::to_string(d.gpus.size()) +
                                  " of the " + std::to_string(h.facts().pci_gpus().size()) +
                                  " NVIDIA GPUs on the PCI bus: it is too old for " +
                                  bad.old_what(),
                              newer_driver_fix(*bad.need)});
        } else if (bad.last_branch) {
            // said above
        } else {
            issues.push_back(
                {Status::fail,
                 "driver " + version + " sees " + std::to_string(d.gpus.size()) + " of the " +
                     std::to_string(h.facts().pci_gpus().size()) +
                     " NVIDIA GPUs on the PCI bus: a driver older than the GPU does not "
                     "recognise it",
                 "install a driver that supports this GPU (NVIDIA's driver search names the "
                 "minimum), then reboot; `dmesg | grep -i nvrm` shows what it rejected"});
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
