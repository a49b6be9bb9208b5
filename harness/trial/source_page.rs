//! Nsight Compute's source page (`ncu --import R --page source --csv --print-source sass`): every SASS
//! instruction of each profiled kernel with its warp-stall samples. Summarized per kernel, it says where the warps
//! spend their time: on the MMA wait, on a barrier, or on the loop's own arithmetic (what found H64: our consumers'
//! samples sat on rebuilding wgmma descriptors, cuBLAS's on waiting for its MMAs).

use crate::error::{Error, Result};

/// One SASS instruction: its text, how often warps executed it, and its stall samples by reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    pub address: String,
    pub sass: String,
    pub executed: u64,
    pub samples: u64,
    /// (reason, samples), the reasons ncu names `stall_*` without the prefix, largest first, zeros dropped.
    pub stalls: Vec<(String, u64)>,
}

/// One kernel's source page.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelSource {
    pub kernel: String,
    pub instructions: Vec<Instruction>,
}

impl KernelSource {
    pub fn executed(&self) -> u64 {
        self.instructions.iter().map(|i| i.executed).sum()
    }

    pub fn samples(&self) -> u64 {
        self.instructions.iter().map(|i| i.samples).sum()
    }

    /// Samples on the instructions whose SASS starts with `opcode` (e.g. "HGMMA", "WARPGROUP.DEPBAR").
    pub fn samples_on(&self, opcode: &str) -> u64 {
        self.instructions
            .iter()
            .filter(|i| {
                opcode_of(&i.sass) == opcode
                    || opcode_of(&i.sass).starts_with(&format!("{opcode}."))
            })
            .map(|i| i.samples)
            .sum()
    }
}

/// The opcode of a SASS line, past any predicate (`@P0`, `@!UP3`).
fn opcode_of(sass: &str) -> &str {
    let mut words = sass.split_whitespace();
    let first = words.next().unwrap_or("");
    if first.starts_with('@') {
        words.next().unwrap_or("")
    } else {
        first
    }
}

/// Reads the CSV: for each kernel a `"Kernel Name","NAME",` line, a header, then one row per instruction.
pub fn parse(text: &str) -> Result<Vec<KernelSource>> {
    let mut kernels: Vec<KernelSource> = Vec::new();
    let mut header: Vec<String> = Vec::new();
    let mut columns: Option<Columns> = None;
    for line in text.lines().filter(|l| l.starts_with('"')) {
        let row = split_csv_line(line);
        match row.first().map(String::as_str) {
            Some("Kernel Name") => kernels.push(KernelSource {
                kernel: row.get(1).cloned().unwrap_or_default(),
                instructions: Vec::new(),
            }),
            Some("Address") => {
                // A header missing a column is an error only once an instruction row needs it.
                columns = Columns::of(&row).ok();
                header = row;
            }
            Some(_) => {
                let kernel = kernels.last_mut().ok_or_else(|| {
                    Error::Other(
                        "ncu's source page: an instruction row before any Kernel Name line".into(),
                    )
                })?;
                let columns = match &columns {
                    Some(c) => c,
                    None => {
                        return Err(Columns::of(&header)
                            .err()
                            .unwrap_or_else(|| missing("Address")))
                    }
                };
                kernel.instructions.push(columns.instruction(&row));
            }
            None => {}
        }
    }
    if kernels.is_empty() {
        return Err(Error::Other(
            "ncu's source page names no kernel (was the report taken with the SourceCounters section, --full?)".into(),
        ));
    }
    Ok(kernels)
}

fn missing(name: &str) -> Error {
    Error::Other(format!("ncu's source page has no `{name}` column"))
}

/// Where a header puts the fields an instruction row is read for, found once a kernel.
struct Columns {
    address: usize,
    source: usize,
    executed: usize,
    samples: usize,
    /// (reason, column) of every `stall_*` column but the not-issued ones.
    stalls: Vec<(String, usize)>,
}

impl Columns {
    fn of(header: &[String]) -> Result<Columns> {
        let col = |name: &str| {
            header
                .iter()
                .position(|h| h == name)
                .ok_or_else(|| missing(name))
        };
        Ok(Columns {
            address: col("Address")?,
            source: col("Source")?,
            executed: col("Instructions Executed")?,
            samples: col("Warp Stall Sampling (All Samples)")?,
            stalls: header
                .iter()
                .enumerate()
                .filter_map(|(i, h)| {
                    let reason = h.strip_prefix("stall_")?;
                    (!reason.contains("(Not Issued)")).then(|| (reason.to_string(), i))
                })
                .collect(),
        })
    }

    fn instruction(&self, row: &[String]) -> Instruction {
        let number = |i: usize| {
            row.get(i)
                .and_then(|v| v.replace(',', "").parse::<u64>().ok())
                .unwrap_or(0)
        };
        let mut stalls: Vec<(String, u64)> = self
            .stalls
            .iter()
            .map(|(reason, i)| (reason.clone(), number(*i)))
            .filter(|(_, n)| *n > 0)
            .collect();
        stalls.sort_by_key(|s| std::cmp::Reverse(s.1));
        Instruction {
            address: row.get(self.address).cloned().unwrap_or_default(),
            sass: row
                .get(self.source)
                .map(|s| s.trim().to_string())
                .unwrap_or_default(),
            executed: number(self.executed),
            samples: number(self.samples),
            stalls,
        }
    }
}

/// A few lines a kernel: instructions executed, stall samples, the share on MMA issue and MMA waits, and the
/// `top` instructions by samples with their leading reasons.
pub fn summary(kernels: &[KernelSource], top: usize) -> String {
    let mut out = String::new();
    for k in kernels {
        let samples = k.samples().max(1);
        let share = |n: u64| 100.0 * n as f64 / samples as f64;
        out.push_str(&format!(
            "{}: {} instructions executed, {} stall samples; on wgmma issue (HGMMA) {:.1}%, on the wait for wgmmas (WARPGROUP.DEPBAR) {:.1}%\n",
            k.kernel,
            k.executed(),
            k.samples(),
            share(k.samples_on("HGMMA")),
            share(k.samples_on("WARPGROUP.DEPBAR")),
        ));
        let mut by_samples: Vec<&Instruction> =
            k.instructions.iter().filter(|i| i.samples > 0).collect();
        by_samples.sort_by_key(|i| std::cmp::Reverse(i.samples));
        for i in by_samples.into_iter().take(top) {
            let reasons: Vec<String> = i
                .stalls
                .iter()
                .take(2)
                .map(|(r, n)| format!("{r} {n}"))
                .collect();
            out.push_str(&format!(
                "  {:>5.1}%  {:<58} executed {:>9}  {}\n",
                share(i.samples),
                i.sass.chars().take(58).collect::<String>(),
                i.executed,
                reasons.join(", ")
            ));
        }
    }
    out
}

/// Splits one CSV line whose fields are all quoted ("a","b,c","d ""e""").
pub fn split_csv_line(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    fields.push(field);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An excerpt of the source page taken at c204b16 (`auto` at 200x8192x8192 and cuBLAS's kernel,
    /// results/h200/c204b16/profiles/): each kernel's most-sampled rows, the columns ncu wrote.
    const EXCERPT: &str = include_str!("../testdata/source-page-excerpt.csv");

    #[test]
    fn reads_both_kernels_of_a_real_source_page() {
        let kernels = parse(EXCERPT).unwrap();
        assert_eq!(kernels.len(), 2);
        assert_eq!(kernels[0].kernel, "gemm_kernel");
        assert!(kernels[1].kernel.starts_with("nvjet_sm90_hsh_128x104"));
        // Our consumers' first wgmma of a k-block, and cuBLAS's wait for its wgmmas (results/h200/c204b16).
        let ours = kernels[0]
            .instructions
            .iter()
            .find(|i| {
                i.sass
                    .starts_with("HGMMA.64x104x16.F32 R24, gdesc[UR20], R24, UP0")
            })
            .unwrap();
        assert_eq!((ours.executed, ours.samples), (131072, 433));
        let theirs = &kernels[1];
        assert_eq!(theirs.samples_on("WARPGROUP.DEPBAR"), 502 + 87);
        let wait = theirs
            .instructions
            .iter()
            .find(|i| i.samples == 502)
            .unwrap();
        assert_eq!(
            wait.stalls.first().map(|(r, n)| (r.as_str(), *n)),
            Some(("barrier", 499))
        );
    }

    #[test]
    fn predicates_do_not_hide_the_opcode() {
        assert_eq!(opcode_of("@P1   CCTL.IVALL"), "CCTL.IVALL");
        assert_eq!(
            opcode_of("HGMMA.64x104x16.F32 R24, gdesc[UR20], R24"),
            "HGMMA.64x104x16.F32"
        );
    }

    #[test]
    fn the_summary_names_each_kernel_and_its_top_instructions() {
        let text = summary(&parse(EXCERPT).unwrap(), 3);
        assert!(text.contains("gemm_kernel: "));
        assert!(text.contains("UCGABAR_WAIT"));
        assert!(text.contains("NANOSLEEP.SYNCS"));
        assert_eq!(text.lines().count(), 2 * (1 + 3));
    }

    #[test]
    fn a_page_without_kernels_is_a_clear_error() {
        let e = parse("\"Address\",\"Source\"\n").unwrap_err().to_string();
        assert!(e.contains("names no kernel"), "{e}");
    }
}
