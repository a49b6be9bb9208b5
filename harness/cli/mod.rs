//! The command line's commands, by where they run: on a GPU (on_gpu.rs), or anywhere (offline.rs; source.rs for
//! the kernels' source).

pub mod offline;
pub mod on_gpu;
pub mod source;

use harness::DType;
use std::process::ExitCode;

/// Writes a command's text to standard output; a reader that stopped early (`| head`) ends it quietly.
pub fn emit(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Why `command` takes no `auto`: it picks a kernel only for a shape.
pub fn auto_needs_a_shape(command: &str) -> String {
    format!("`auto` picks a kernel per shape: `gemm-ablate auto SHAPE` prints the spec it picks, which {command} takes")
}

/// Bad input: the message on standard error and exit status 2, before anything is built or launched.
pub fn refuse(message: &str) -> ExitCode {
    eprintln!("{message}");
    ExitCode::from(2)
}

/// The dtype among a command's words (fp16 unless one is given) and the other words; an error naming the command
/// where more than one dtype is given.
pub fn dtype_and_words<'a>(
    command: &str,
    words: &'a [String],
) -> Result<(DType, Vec<&'a String>), String> {
    // A word that starts like a dtype but is none (`e4m3-col`) is a mistyped dtype, not a rung.
    if let Some(w) = words.iter().find(|w| {
        let lower = w.to_ascii_lowercase();
        DType::parse(w).is_none()
            && ["e4m3", "fp8", "float8", "fp16", "bf16"]
                .iter()
                .any(|head| lower.starts_with(head))
    }) {
        return Err(DType::from_name(w).map_or_else(|e| e.to_string(), |_| String::new()));
    }
    let dtypes: Vec<DType> = words.iter().filter_map(|w| DType::parse(w)).collect();
    if dtypes.len() > 1 {
        return Err(format!(
            "{command} takes one dtype, got {}: run it once per dtype",
            dtypes
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(" and ")
        ));
    }
    let rest = words.iter().filter(|w| DType::parse(w).is_none()).collect();
    Ok((dtypes.first().copied().unwrap_or(DType::F16), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn one_dtype_among_the_words_and_a_mistyped_one_named() {
        let w = words(&["square4096", "cublas", "10:tile_k=128", "e4m3-row"]);
        let (dtype, rest) = dtype_and_words("compare", &w).unwrap();
        assert_eq!(dtype, DType::E4M3(harness::Scales::Row));
        assert_eq!(rest.len(), 3);
        assert_eq!(
            dtype_and_words("build", &words(&["4"])).unwrap().0,
            DType::F16
        );
        let two = dtype_and_words("build", &words(&["4", "bf16", "fp16"])).unwrap_err();
        assert!(two.contains("one dtype"), "{two}");
        // Not taken for a rung: the message lists the dtypes.
        let typo = dtype_and_words(
            "compare",
            &words(&["square4096", "cublas", "10", "e4m3-col"]),
        )
        .unwrap_err();
        assert!(
            typo.contains("unsupported dtype `e4m3-col`") && typo.contains("e4m3-block"),
            "{typo}"
        );
    }
}
