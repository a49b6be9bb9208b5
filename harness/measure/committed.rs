//! The committed data files the code reads at run time (`pins/`: pinned values, cuBLAS's paths, the priors),
//! found beside the working directory, else beside the sources, so that a binary finds them whether it runs in
//! the checkout or elsewhere.

use std::path::PathBuf;

/// Where the committed file `relative` (such as `pins/h200.json`) is read from.
pub fn path(relative: &str) -> PathBuf {
    let here = PathBuf::from(relative);
    if here.is_file() {
        here
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
    }
}

/// The committed file's text, or why it cannot be read.
pub fn read(relative: &str) -> Result<String, String> {
    let path = path(relative);
    std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}
