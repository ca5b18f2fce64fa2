// NVIDIA's CUDA runfile installers, read as data (issue 15): which members of the payload a
// profile needs, in each generation of the installer's internal layout. The runfile is never
// executed, its bundled driver never unpacked.
//
// CUDA 11.0-11.4.1: the payload has one folder per component, `builds/<component>/` (the names
// of the redistrib archives: cuda_cudart, libcublas, ...), each laid out like the installed
// toolkit (`targets/<triple>/{lib,include}` with `lib64` and `include` linking there); beside
// them the driver's own runfile, the installer and the EULA, none of which is taken.
// CUDA 10.1 and 10.2: one folder, `builds/cuda-toolkit/`, holds the installed toolkit's tree.
// CUDA 10.0 nests a second makeself archive, `run_files/cuda-linux.<version>-<build>.run`, whose
// payload is the toolkit tree itself (bin/, nvvm/, extras/CUPTI/, include/, and the libraries
// in lib64/ or targets/<triple>/lib/); it is read from the outer stream without being written,
// and its paths are assigned to the components profiles name by library, tool and folder name.
#pragma once

#include "../archive/extract.hpp"
#include "../error.hpp"
#include "../resolve/resolve.hpp"
#include "../version.hpp"

#include <filesystem>

namespace cudaenv::install {

/// The member map for a CUDA 11.x runfile: `builds/<component>/<path>` -> `<component>/<path>`
/// for each component `sel` asks for; nothing else.
archive::MemberMap runfile_members(const RunfileSelection& sel);

/// The member map for a CUDA 10.x toolkit tree (its top-level lib/, 32-bit libraries, never): what
/// `sel`'s components are made of there, under one folder, `cuda_toolkit/`; headers always (they
/// are small and shared); the installer's own scripts never.
archive::MemberMap toolkit_tree_members(const RunfileSelection& sel);

/// Extracts from the runfile at `path` (its bytes already verified against the pinned hash)
/// what `sel` asks for, into `dest`: one folder per component. Reads the makeself header as
/// data, then streams only the payload's bytes through the safe extractor. Errors: the header's
/// (makeself.hpp); unsafe_archive for a generation cudaenv cannot read or a payload holding none
/// of the asked components.
/// `name` is the runfile's own name (a download's path is only its hash), for errors.
Result<archive::Extracted> extract_runfile(const std::filesystem::path& path,
                                           const std::string& name,
                                           const std::filesystem::path& dest,
                                           const Version& cuda,
                                           const RunfileSelection& sel,
                                           const archive::Limits& limits);

} // namespace cudaenv::install
