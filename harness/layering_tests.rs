//! The folders are layers (gpu, kernel, measure, families, trial, report, lowest first): a module may import from its own
//! layer and the ones before it, never from a later one. Checked on the source, so the layout cannot decay.

const LAYERS: [&str; 6] = ["gpu", "kernel", "measure", "families", "trial", "report"];

#[test]
fn layers_import_only_downward() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("harness");
    let mut upward = Vec::new();
    for (rank, layer) in LAYERS.iter().enumerate() {
        // A layer's files, its subfolders' included (a family is a folder in families/).
        for path in crate::test_files::files_under(&root.join(layer)) {
            let text = std::fs::read_to_string(&path).unwrap();
            // Test modules may reach anywhere.
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            for later in &LAYERS[rank + 1..] {
                if code.contains(&format!("crate::{later}::")) {
                    upward.push(format!("{} imports from {later}", path.display()));
                }
            }
            for glue in ["crate::suite", "crate::replay"] {
                if code.contains(glue) {
                    upward.push(format!("{} imports the glue {glue}", path.display()));
                }
            }
        }
    }
    assert!(upward.is_empty(), "{upward:#?}");
}

/// The library's modules, one a file (`gpu::device` for harness/gpu/device.rs, `settings` for harness/settings.rs),
/// with the code outside their test modules; the binaries' and test targets' roots, and the command line's own
/// modules (harness/cli/), are not modules of it.
fn modules() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("harness");
    let not_modules = ["lib.rs", "main.rs", "cli_tests.rs"];
    let mut found = Vec::new();
    for path in crate::test_files::files_under(&root) {
        if path.starts_with(root.join("cli")) {
            continue;
        }
        let relative = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        if !relative.ends_with(".rs") || not_modules.contains(&relative.as_str()) {
            continue;
        }
        let name = relative
            .trim_end_matches(".rs")
            .trim_end_matches("/mod")
            .replace('/', "::");
        let text = std::fs::read_to_string(&path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
        found.push((name, code));
    }
    found
}

/// The modules each module names (`crate::a::b::...` resolves to `a::b` where that is a module, else `a`).
fn imports(modules: &[(String, String)]) -> Vec<Vec<usize>> {
    let index = |name: &str| modules.iter().position(|(m, _)| m == name);
    modules
        .iter()
        .enumerate()
        .map(|(me, (_, code))| {
            let mut out: Vec<usize> = Vec::new();
            for (at, _) in code.match_indices("crate::") {
                let path: String = code[at + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let mut parts = path.split("::").filter(|p| !p.is_empty());
                let first = parts.next().unwrap_or("");
                let two = parts.next().map(|second| format!("{first}::{second}"));
                let target = two.and_then(|t| index(&t)).or_else(|| index(first));
                if let Some(t) = target.filter(|t| *t != me && !out.contains(t)) {
                    out.push(t);
                }
            }
            out
        })
        .collect()
}

/// No two files import each other, directly or round a loop (issue 39: four such loops once tied 12 files
/// together through one validator). Every file of the library is seen, the ones outside the layer folders too.
#[test]
fn no_file_imports_itself_round_a_loop() {
    let modules = modules();
    assert!(modules.iter().any(|(m, _)| m == "settings"));
    assert!(modules.iter().any(|(m, _)| m == "gpu::device"));
    let edges = imports(&modules);
    // A module is on a loop when it can reach itself: a depth-first walk from each.
    let mut loops = Vec::new();
    for start in 0..modules.len() {
        let mut seen = vec![false; modules.len()];
        let mut stack = edges[start].clone();
        while let Some(m) = stack.pop() {
            if m == start {
                loops.push(modules[start].0.clone());
                break;
            }
            if !std::mem::replace(&mut seen[m], true) {
                stack.extend(&edges[m]);
            }
        }
    }
    assert!(loops.is_empty(), "modules on an import loop: {loops:?}");
}
