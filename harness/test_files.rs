//! The CPU tests that read the repository's own files (its layout, docs, scripts and runs) find them here.

use std::path::{Path, PathBuf};

/// Every file under `folder`, its subfolders' included, in a stable order.
pub(crate) fn files_under(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}
