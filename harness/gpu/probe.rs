//! Finds the CUDA libraries before cudarc touches them: cudarc's dynamic loading panics when a library is
//! missing, and a machine without CUDA deserves a sentence, not a panic.

use crate::error::{Error, Result};

/// The libraries the harness needs, by cudarc's short name.
pub const DRIVER: &str = "cuda";
pub const NVRTC: &str = "nvrtc";
pub const CUBLAS: &str = "cublas";
pub const CUBLASLT: &str = "cublasLt";

/// True if one of the names cudarc would try for `lib` can be loaded here.
pub fn library_present(lib: &str) -> bool {
    cudarc::get_lib_name_candidates(lib)
        .iter()
        .any(|name| unsafe { libloading::Library::new(name) }.is_ok())
}

/// Ok if every named library loads, else an error listing the missing ones.
pub fn require(libs: &[&str]) -> Result<()> {
    let missing: Vec<&str> = libs
        .iter()
        .copied()
        .filter(|l| !library_present(l))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        let why = if missing.contains(&"cuda") {
            "no NVIDIA driver on this machine's loader path (a machine without a GPU has none; where the driver \
             is installed in an unusual folder, add that folder to LD_LIBRARY_PATH)"
        } else {
            "the CUDA 13 libraries are not on the loader path: add their folder to LD_LIBRARY_PATH"
        };
        Err(Error::NoGpu(format!(
            "cannot load lib{}: {why}",
            missing.join(", lib")
        )))
    }
}

/// NVRTC is all that compiling needs: tests that only compile kernels run wherever it is present.
pub fn nvrtc_available() -> bool {
    library_present(NVRTC)
}
