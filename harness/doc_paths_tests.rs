//! Every repository path the README and the docs name is in a clone (issue 39: "no path that a clone lacks").
//! Checked on the text, so a renamed script or a retired run folder cannot leave a reader at a dead end.

use std::path::Path;

/// The folders at the root a cited path starts with.
const ROOTS: [&str; 10] = [
    "results",
    "docs",
    "tools",
    "kernels",
    "pins",
    "hypotheses",
    "ablations",
    "harness",
    "microbench",
    "calibration",
];

/// Paths named on purpose that a clone does not hold, each with why.
const NOT_IN_A_CLONE: [(&str, &str); 4] = [
    (
        "hypotheses/raster_prefill.toml",
        "the README's example: the reader writes it",
    ),
    ("results/baselines/", "written by GEMM_ABLATE_SAVE_BASELINE"),
    ("results/profiles/", "written by `profile`"),
    (
        "tools/device-slim.sh",
        "removed; named where the docs say so or a run's command used it",
    ),
];

/// The texts a reader follows: the README, docs/, the hypotheses' register and each external kernel's README.
fn texts(root: &Path) -> Vec<std::path::PathBuf> {
    let mut files = vec![root.join("README.md"), root.join("ablations/HYPOTHESES.md")];
    for folder in ["docs", "kernels/ext"] {
        let under = crate::test_files::files_under(&root.join(folder));
        files.extend(
            under
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "md")),
        );
    }
    files
}

/// The repository paths a text names: runs of path characters that start with a root folder and a slash, not
/// inside a longer path, and not a pattern (followed by `*`, `<`, `{` or `$`, or with an upper-case placeholder
/// segment such as NAME or FOLDER).
fn cited_paths(text: &str) -> Vec<&str> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./@-".contains(c);
    let mut paths = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| is_path_char(c)) {
        let after = &rest[start..];
        let len = after
            .find(|c: char| !is_path_char(c))
            .unwrap_or(after.len());
        let (token, next) = after.split_at(len);
        rest = next;
        let pattern = next.starts_with(['*', '<', '{', '$']);
        let token = token.trim_end_matches(['.', ',', ':', ';']);
        let rooted = ROOTS
            .iter()
            .any(|root| token.starts_with(&format!("{root}/")));
        let placeholder = token.split('/').any(|segment| {
            let stem = segment.split('.').next().unwrap_or("");
            !stem.is_empty() && stem.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        });
        if rooted && !pattern && !placeholder {
            paths.push(token);
        }
    }
    paths
}

/// Whether a clone holds what `path` names: the file or folder; a run's `NAME.json` kept as `NAME.json.xz` (the
/// results loader reads either); a run folder kept packed beside where it was, or retired to git history with the
/// command that brings it back (results/h200/ARCHIVED.md).
fn in_a_clone(root: &Path, path: &str, archived: &str) -> bool {
    if root.join(path).exists() || root.join(format!("{path}.xz")).exists() {
        return true;
    }
    let segments: Vec<&str> = path.split('/').collect();
    if let ["results", gpu, folder, ..] = segments[..] {
        let packed = root.join(format!("results/{gpu}/{folder}.tar.xz"));
        if packed.exists() || archived.contains(&format!("`{folder}`")) {
            return true;
        }
    }
    NOT_IN_A_CLONE
        .iter()
        .any(|(named, _)| path.starts_with(named))
}

#[test]
fn every_path_the_docs_name_is_in_a_clone() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let archived = std::fs::read_to_string(root.join("results/h200/ARCHIVED.md")).unwrap();
    let mut missing = Vec::new();
    let mut seen = 0;
    for file in texts(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        let file = file.strip_prefix(root).unwrap_or(&file);
        for path in cited_paths(&text) {
            seen += 1;
            if !in_a_clone(root, path, &archived) {
                missing.push(format!("{}: {path}", file.display()));
            }
        }
        // The project's own working notes sit beside the repository, not in it. The hypotheses' register keeps
        // its sources as they were written.
        if !file.ends_with("HYPOTHESES.md") && text.contains("../shared/") {
            missing.push(format!("{}: ../shared/", file.display()));
        }
    }
    // The scan finds the docs' citations at all (hundreds of them), or it checks nothing.
    assert!(seen > 100, "only {seen} paths found: the scan is broken");
    assert!(missing.is_empty(), "named but not in a clone: {missing:#?}");
}

#[test]
fn a_cited_path_is_told_from_a_pattern_and_a_longer_path() {
    let text = "run `tools/pins.py --check`, see docs/statistics.md. Or results/h200/FOLDER.tar.xz, \
                results/slurm-$JOB/x.json, ../shared/notes/x.md, results/h200/e9f627a/suite/, tools/sweeps/NAME.txt";
    assert_eq!(
        cited_paths(text),
        [
            "tools/pins.py",
            "docs/statistics.md",
            "results/h200/e9f627a/suite/"
        ]
    );
}
