//! The folders are layers (gpu, kernel, measure, trial, report, lowest first): a module may import from its own
//! layer and the ones before it, never from a later one. Checked on the source, so the layout cannot decay.

const LAYERS: [&str; 5] = ["gpu", "kernel", "measure", "trial", "report"];

#[test]
fn layers_import_only_downward() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("harness");
    let mut upward = Vec::new();
    for (rank, layer) in LAYERS.iter().enumerate() {
        for entry in std::fs::read_dir(root.join(layer)).unwrap() {
            let path = entry.unwrap().path();
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
