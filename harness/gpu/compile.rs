//! NVRTC to cubin, cached in memory and on disk, with ptxas's resource report kept beside each cubin. The target is
//! the GPU this process opened (`set_target`): sm_90a on Hopper, the GPU's own sm_XY elsewhere; sm_90a where no GPU
//! was opened (`build` and the compile trials on a machine without one).

use crate::error::{Error, Result};
use crate::gpu::arch::Arch;
use crate::gpu::probe;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// What this process compiles for, once a GPU is opened.
static TARGET: OnceLock<Arch> = OnceLock::new();

/// Compiles for the GPU of compute capability `cc` from now on (the first call holds: a process opens one GPU).
pub fn set_target(cc: (i32, i32)) {
    let _ = TARGET.set(Arch::target_for(cc));
}

/// What NVRTC compiles for in this process: the opened GPU's target, else Hopper's (the suite's reference GPU).
pub fn target() -> Arch {
    TARGET.get().copied().unwrap_or(Arch::HOPPER)
}

/// The version of what `parse_ptxas_log` keeps, part of the cache key (2: ptxas's "Performance Loss" information
/// lines kept with the warnings).
const REPORT_FORMAT: &str = "ptxas-report-2";

/// What ptxas said about one kernel function.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionReport {
    pub function: String,
    pub registers: u32,
    pub stack_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceReport {
    pub functions: Vec<FunctionReport>,
    /// The compiler's warnings: the source's (NVRTC's front end, `warning #550-D: ...`) and ptxas's (an ignored
    /// setmaxnreg, serialized wgmma).
    pub warnings: Vec<String>,
}

impl ResourceReport {
    pub fn function(&self, name: &str) -> Option<&FunctionReport> {
        self.functions.iter().find(|f| f.function == name)
    }
    pub fn spills(&self) -> u32 {
        self.functions
            .iter()
            .map(|f| f.spill_store_bytes + f.spill_load_bytes + f.stack_bytes)
            .sum()
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Compiled {
    pub variant: String,
    #[serde(skip)]
    pub cubin: Vec<u8>,
    pub report: ResourceReport,
    pub nvrtc_version: String,
    /// The kernels the module's PTX declares, with their parameters' sizes (None where the list cannot be read);
    /// empty for a module that was not compiled here.
    #[serde(default)]
    pub entries: Vec<(String, Option<Vec<usize>>)>,
}

/// Parses ptxas's `-v` report from the NVRTC log.
pub fn parse_ptxas_log(log: &str) -> ResourceReport {
    let mut report = ResourceReport::default();
    let mut current: Option<FunctionReport> = None;
    let number_before = |line: &str, word: &str| -> Option<u32> {
        let idx = line.find(word)?;
        line[..idx]
            .split(|c: char| !c.is_ascii_digit())
            .rfind(|s| !s.is_empty())?
            .parse()
            .ok()
    };
    for line in log.lines() {
        if let Some(rest) = line.split("Function properties for ").nth(1) {
            if let Some(f) = current.take() {
                report.functions.push(f);
            }
            current = Some(FunctionReport {
                function: rest.trim().to_string(),
                ..Default::default()
            });
        } else if let Some(f) = current.as_mut() {
            if line.contains("stack frame") {
                f.stack_bytes = number_before(line, "bytes stack frame").unwrap_or(0);
                f.spill_store_bytes = number_before(line, "bytes spill stores").unwrap_or(0);
                f.spill_load_bytes = number_before(line, "bytes spill loads").unwrap_or(0);
            } else if line.contains("Used") && line.contains("registers") {
                f.registers = number_before(line, "registers").unwrap_or(0);
            }
        }
        // ptxas reports serialized wgmma as information, not as a warning ("ptxas info : (C7515) Potential
        // Performance Loss: wgmma.mma_async instructions are serialized ..."): kept with the warnings, where the
        // compile checks look for it.
        // NVRTC's closing "Remark: The warnings can be suppressed ..." is about the warnings, not one of them.
        let lower = line.to_ascii_lowercase();
        if !lower.starts_with("remark")
            && (lower.contains("warning") || lower.contains("performance loss"))
        {
            report.warnings.push(line.trim().to_string());
        }
    }
    if let Some(f) = current.take() {
        report.functions.push(f);
    }
    report
}

fn nvrtc_version() -> Result<String> {
    let (mut major, mut minor) = (0, 0);
    let rc = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    if rc != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(Error::Other(format!("nvrtcVersion failed: {rc:?}")));
    }
    Ok(format!("{major}.{minor}"))
}

/// NVRTC's version, or None where the library cannot be loaded.
pub fn nvrtc_version_string() -> Option<String> {
    probe::nvrtc_available()
        .then(nvrtc_version)
        .and_then(|r| r.ok())
}

fn options(target: Arch) -> Vec<String> {
    vec![
        format!("--gpu-architecture={}", target.name()),
        "--std=c++17".into(),
        "--ptxas-options=-v".into(),
    ]
}

/// Where compiled variants are kept between processes (each GPU trial runs in its own process).
pub fn cache_dir() -> PathBuf {
    std::env::var_os("GEMM_ABLATE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("gemm-ablate-kernels"))
}

fn memory_cache() -> &'static Mutex<HashMap<String, Arc<Compiled>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Compiled>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Compiles `source` (self-contained: defines, primitives and kernel) to a cubin, or returns the cached one.
pub fn compile(variant: &str, source: &str) -> Result<Arc<Compiled>> {
    compile_with(variant, source, &[], &[])
}

/// `compile` with more NVRTC options (an external kernel's `-D` switches and `-I` folders); `key_extra` joins the
/// cache key (what the included folders hold, so an edited header is compiled again).
pub fn compile_with(
    variant: &str,
    source: &str,
    extra_options: &[String],
    key_extra: &[u8],
) -> Result<Arc<Compiled>> {
    compile_for(target(), variant, source, extra_options, key_extra)
}

/// `compile_with` for the architecture `target`, whatever GPU this process opened.
pub fn compile_for(
    target: Arch,
    variant: &str,
    source: &str,
    extra_options: &[String],
    key_extra: &[u8],
) -> Result<Arc<Compiled>> {
    probe::require(&[probe::NVRTC])?;
    let version = nvrtc_version()?;
    let mut hasher = Sha256::new();
    hasher.update(source.as_bytes());
    // A cached report was parsed by the parser of its day: a new parser must not read old reports.
    hasher.update(REPORT_FORMAT.as_bytes());
    for o in options(target) {
        hasher.update(o.as_bytes());
    }
    // Separated, so that two lists of options never hash alike; nothing is added without them (the ladder's
    // cache keys stay as they were).
    for o in extra_options {
        hasher.update([0]);
        hasher.update(o.as_bytes());
    }
    hasher.update(key_extra);
    hasher.update(version.as_bytes());
    let key: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();

    if let Some(hit) = memory_cache().lock().unwrap().get(&key) {
        return Ok(hit.clone());
    }
    let dir = cache_dir();
    let (cubin_path, meta_path) = (
        dir.join(format!("{key}.cubin")),
        dir.join(format!("{key}.json")),
    );
    if let (Ok(cubin), Ok(meta)) = (
        std::fs::read(&cubin_path),
        std::fs::read_to_string(&meta_path),
    ) {
        if let Ok(mut compiled) = serde_json::from_str::<Compiled>(&meta) {
            compiled.cubin = cubin;
            compiled.variant = variant.to_string();
            let compiled = Arc::new(compiled);
            memory_cache().lock().unwrap().insert(key, compiled.clone());
            return Ok(compiled);
        }
    }

    let compiled = Arc::new(compile_uncached(
        variant,
        source,
        options(target)
            .into_iter()
            .chain(extra_options.iter().cloned()),
        version,
    )?);
    // The disk cache is an optimisation: a failure to write it is not an error.
    if std::fs::create_dir_all(&dir).is_ok() {
        let tmp = dir.join(format!("{key}.{}.tmp", std::process::id()));
        if std::fs::write(&tmp, &compiled.cubin).is_ok() {
            let _ = std::fs::rename(&tmp, &cubin_path);
        }
        if let Ok(meta) = serde_json::to_string(&*compiled) {
            let _ = std::fs::write(&tmp, meta).and_then(|_| std::fs::rename(&tmp, &meta_path));
        }
    }
    memory_cache().lock().unwrap().insert(key, compiled.clone());
    Ok(compiled)
}

fn compile_uncached(
    variant: &str,
    source: &str,
    all_options: impl Iterator<Item = String>,
    version: String,
) -> Result<Compiled> {
    use cudarc::nvrtc::{result, sys};
    let fail = |log: String| Error::Compile {
        variant: variant.to_string(),
        log,
    };
    let src = CString::new(source).map_err(|_| fail("source contains a NUL byte".into()))?;
    let name = CString::new(format!("{variant}.cu")).unwrap();
    let prog = result::create_program(&src, Some(&name)).map_err(|e| fail(format!("{e:?}")))?;
    let all_options: Vec<String> = all_options.collect();
    let outcome = unsafe { result::compile_program(prog, &all_options) };
    let log = unsafe { result::get_program_log(prog) }
        .map(|chars| {
            let bytes: Vec<u8> = chars
                .iter()
                .map(|&c| c as u8)
                .take_while(|&b| b != 0)
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        })
        .unwrap_or_default();
    if outcome.is_err() {
        unsafe {
            let _ = result::destroy_program(prog);
        }
        return Err(fail(log));
    }
    // The PTX is read only for its entries' parameter lists (an external kernel's manifest is checked against
    // them); a PTX that cannot be had leaves them unknown.
    let ptx = unsafe {
        let mut size = 0usize;
        if sys::nvrtcGetPTXSize(prog, &mut size) == sys::nvrtcResult::NVRTC_SUCCESS && size > 1 {
            let mut buf = vec![0u8; size];
            if sys::nvrtcGetPTX(prog, buf.as_mut_ptr() as *mut _) == sys::nvrtcResult::NVRTC_SUCCESS
            {
                String::from_utf8_lossy(&buf[..size - 1]).into_owned()
            } else {
                String::new()
            }
        } else {
            String::new()
        }
    };
    let mut size = 0usize;
    let cubin = unsafe {
        let rc = sys::nvrtcGetCUBINSize(prog, &mut size);
        let mut buf = vec![0u8; size];
        let rc2 = sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut _);
        let _ = result::destroy_program(prog);
        if rc != sys::nvrtcResult::NVRTC_SUCCESS
            || rc2 != sys::nvrtcResult::NVRTC_SUCCESS
            || size == 0
        {
            return Err(fail(format!("no cubin produced ({rc:?}, {rc2:?})\n{log}")));
        }
        buf
    };
    Ok(Compiled {
        variant: variant.to_string(),
        cubin,
        report: parse_ptxas_log(&log),
        nvrtc_version: version,
        entries: ptx_entries(&ptx),
    })
}

/// The kernels a PTX module declares (`.entry NAME(`, possibly after `.visible`).
pub fn ptx_entries(ptx: &str) -> Vec<(String, Option<Vec<usize>>)> {
    ptx.split(".entry")
        .skip(1)
        .filter_map(|rest| {
            let rest = rest.trim_start();
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.'))
                .collect();
            if name.is_empty() {
                return None;
            }
            let sizes = rest[name.len()..]
                .trim_start()
                .strip_prefix('(')
                .and_then(|list| {
                    (list[..list.find(')')?].split(','))
                        .filter(|p| !p.trim().is_empty())
                        .map(ptx_param_size)
                        .collect::<Option<Vec<_>>>()
                });
            Some((name, sizes))
        })
        .collect()
}

/// The bytes of one PTX parameter declaration (`.param .u64 .ptr .align 16 p`, `.param .align 8 .b8 p[16]`), or
/// None where it cannot be read.
fn ptx_param_size(decl: &str) -> Option<usize> {
    let words: Vec<&str> = decl.split_whitespace().collect();
    let element: usize = words.iter().find_map(|w| match *w {
        ".u8" | ".s8" | ".b8" => Some(1),
        ".u16" | ".s16" | ".b16" | ".f16" => Some(2),
        ".u32" | ".s32" | ".b32" | ".f32" => Some(4),
        ".u64" | ".s64" | ".b64" | ".f64" => Some(8),
        _ => None,
    })?;
    let count = match words.last()?.split_once('[') {
        Some((_, n)) => n.strip_suffix(']')?.parse::<usize>().ok()?,
        None => 1,
    };
    element.checked_mul(count)
}

#[cfg(test)]
mod tests {
    use super::parse_ptxas_log;

    #[test]
    fn serialized_wgmma_is_kept_with_the_warnings() {
        let log = "ptxas info    : Compiling entry function 'gemm_kernel' for 'sm_90a'\n\
                   ptxas info    : Function properties for gemm_kernel\n\
                   \x20   0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
                   ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized \
                   due to non wgmma instructions defining accumulator registers in the function 'gemm_kernel'\n\
                   ptxas info    : Used 168 registers\n";
        let report = parse_ptxas_log(log);
        assert_eq!(report.functions.len(), 1);
        assert_eq!(report.functions[0].registers, 168);
        assert_eq!(report.warnings.len(), 1);
        assert!(report.warnings[0].contains("(C7515)"));
        // ... where the compile check refuses the kernel.
        assert!(crate::suite::check_resources(&report).is_err());
        let clean = parse_ptxas_log(
            "ptxas info    : Function properties for k\nptxas info    : Used 40 registers\n",
        );
        assert!(clean.warnings.is_empty());
        assert!(crate::suite::check_resources(&clean).is_ok());
    }
}
