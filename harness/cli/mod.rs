//! The command line's commands, by where they run: on a GPU, or anywhere.

pub mod offline;
pub mod on_gpu;

use harness::DType;

/// The dtype among a command's words (fp16 unless one is given) and the other words; an error naming the command
/// where more than one dtype is given.
pub fn dtype_and_words<'a>(
    command: &str,
    words: &'a [String],
) -> Result<(DType, Vec<&'a String>), String> {
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
