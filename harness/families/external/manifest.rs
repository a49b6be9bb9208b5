//! External kernels: a GEMM written anywhere (CUDA C++, PTX, a cubin from nvcc, Triton or the CuTe DSL), described
//! by a TOML manifest and named by the spec `ext:NAME[:SWITCH=VALUE,...]`. The manifest says how to build the
//! module, which entry point to launch, how its parameters map onto the problem, and its launch geometry as
//! expressions of the shape and the switches. Everything here is checked on the CPU, before any launch: a
//! manifest that cannot describe a launch is an error naming the file and the field. The expressions are
//! expr.rs; docs/external-kernels.md is the user's guide.

use crate::error::{Error, Result};
use crate::families::external::expr::Expr;
use crate::gpu::compile::{self, ptx_entries, Compiled, FunctionReport, ResourceReport};
use crate::gpu::cubin::cubin_kernels;
use crate::kernel::config::Swizzle;
use crate::kernel::problem::{DType, Shape};
use crate::kernel::tma::{self, TmaParams};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

// ---------------------------------------------------------------------------------------------------------------
// The manifest as written (TOML), then as checked.
// ---------------------------------------------------------------------------------------------------------------

/// A number or an expression: `grid = ["cdiv(N, BN)", "cdiv(M, BM)", 1]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum Number {
    Int(i64),
    Text(String),
}

impl Number {
    fn text(&self) -> String {
        match self {
            Number::Int(i) => i.to_string(),
            Number::Text(s) => s.clone(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    #[serde(default)]
    description: Option<String>,
    module: RawModule,
    entry: String,
    params: Vec<String>,
    grid: Vec<Number>,
    block: Vec<Number>,
    #[serde(default)]
    cluster: Option<Vec<Number>>,
    #[serde(default)]
    shared_memory: Option<Number>,
    dtypes: Vec<String>,
    layout: String,
    arch: String,
    #[serde(default)]
    requires: Vec<String>,
    #[serde(default)]
    switches: BTreeMap<String, RawSwitch>,
    #[serde(default)]
    peer: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModule {
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    ptx: Option<String>,
    #[serde(default)]
    cubin: Option<String>,
    #[serde(default)]
    sha256: Option<String>,
    #[serde(default)]
    include: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSwitch {
    default: Number,
    #[serde(default)]
    values: Option<Vec<Number>>,
}

/// The one operand layout the suite's problems have: A is M x K and B is N x K, both row-major, and C = A B^T is
/// M x N row-major (harness/measure/reference.rs calls cuBLAS that way).
pub const LAYOUT: &str = "row_major_abt";

/// The names every expression may read, besides the switches.
pub const PROBLEM_NAMES: [&str; 6] = ["M", "N", "K", "lda", "ldb", "ldc"];

/// Parameters a manifest may list at most (the launch copies them onto the stack, no allocation).
pub const MAX_PARAMS: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarType {
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl ScalarType {
    fn parse(s: &str) -> Option<ScalarType> {
        Some(match s {
            "i32" => ScalarType::I32,
            "u32" => ScalarType::U32,
            "i64" => ScalarType::I64,
            "u64" => ScalarType::U64,
            "f32" => ScalarType::F32,
            "f64" => ScalarType::F64,
            _ => return None,
        })
    }
    pub fn size(self) -> usize {
        match self {
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            _ => 8,
        }
    }
    /// The value's bytes (little-endian, in the low bytes of a 64-bit slot), or why it does not fit.
    fn encode(self, v: i64) -> std::result::Result<u64, String> {
        let fits = |ok: bool, ty: &str| {
            if ok {
                Ok(())
            } else {
                Err(format!("{v} does not fit {ty}"))
            }
        };
        Ok(match self {
            ScalarType::I32 => {
                fits(i32::try_from(v).is_ok(), "i32")?;
                (v as i32) as u32 as u64
            }
            ScalarType::U32 => {
                fits(u32::try_from(v).is_ok(), "u32")?;
                v as u64
            }
            ScalarType::I64 => v as u64,
            ScalarType::U64 => {
                fits(v >= 0, "u64")?;
                v as u64
            }
            ScalarType::F32 => (v as f32).to_bits() as u64,
            ScalarType::F64 => (v as f64).to_bits(),
        })
    }
}

/// The operand a tensor map covers: A (M x K) or B (N x K), both K-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapOperand {
    A,
    B,
}

/// One kernel parameter, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    A,
    B,
    C,
    /// FP8 only: the device address of A's or B's fp32 scales, in the problem's scheme (docs/fp8.md: one for a
    /// tensor, one a row, or DeepSeek-V3's 1x128 scales of A M-major and 128x128 of B row-major).
    Scales(MapOperand),
    Null,
    /// A zeroed workspace of this many bytes.
    Scratch(Expr),
    Scalar(ScalarType, Expr),
    /// `tma(A|B, ROWS, COLS, SWIZZLE)`: a CUtensorMap over the operand, passed by value (128 bytes, aligned to 64):
    /// 2-D, dims {K, rows}, row stride K * 2 bytes, box {COLS, ROWS}, element strides 1, no interleave, the
    /// swizzle, 256B L2 promotion, no OOB fill (zeros past the edges): harness/kernel/tma.rs `operand` and `encode`.
    Tma {
        operand: MapOperand,
        rows: Expr,
        cols: Expr,
        swizzle: Swizzle,
    },
}

/// The bytes a tensor map parameter takes (CUtensorMap, `.param .align 64 .b8 [128]` in PTX).
pub const TMA_PARAM_BYTES: usize = 128;

impl Param {
    pub fn size(&self) -> usize {
        match self {
            Param::Scalar(t, _) => t.size(),
            Param::Tma { .. } => TMA_PARAM_BYTES,
            _ => 8,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Module {
    /// CUDA C++ compiled by NVRTC, switches as `-D` defines, include folders as `-I`.
    Source {
        file: PathBuf,
        include: Vec<PathBuf>,
    },
    /// PTX, compiled by the driver when the module is loaded.
    Ptx(PathBuf),
    /// A prebuilt cubin or fatbin, with the SHA-256 it must have.
    Cubin { file: PathBuf, sha256: String },
}

pub use crate::gpu::arch::Arch;

/// What NVRTC compiles a source for: the GPU's target where that runs what the manifest's `arch` asks for (an
/// `sm_80` kernel on Hopper is compiled for sm_90a, like the suite's own), else the `arch` itself (an `sm_100a`
/// kernel is compiled for sm_100a, also on a machine without a GPU; a GPU it cannot run on refuses it at load).
pub fn source_target(arch: Arch, target: Arch) -> Arch {
    if !arch.specific && arch.runs_on((target.major, target.minor)) {
        target
    } else {
        arch
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Switch {
    pub name: String,
    pub default: String,
    /// None: any whole number.
    pub values: Option<Vec<String>>,
}

/// A checked manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    pub path: PathBuf,
    pub description: Option<String>,
    pub module: Module,
    pub entry: String,
    pub params: Vec<Param>,
    pub grid: [Expr; 3],
    pub block: [Expr; 3],
    pub cluster: Option<[Expr; 3]>,
    pub shared_memory: Expr,
    pub dtypes: Vec<DType>,
    pub arch: Arch,
    pub requires: Vec<(String, Expr)>,
    pub switches: Vec<Switch>,
    /// A peer: the main job shows it beside cuBLAS and `auto` on the standard shapes it takes.
    pub peer: bool,
}

/// A switch value goes onto NVRTC's command line as `-DNAME=VALUE`: only plain words are allowed.
fn plain_word(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

fn identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A manifest being read: where it is (errors name it; relative paths start from its folder) and the switches
/// read so far (the expressions may name them).
struct Reading<'a> {
    path: &'a Path,
    dir: PathBuf,
    switches: Vec<Switch>,
}

impl Reading<'_> {
    fn at(&self, field: &str, msg: String) -> Error {
        Error::Config(format!("{}: {field}: {msg}", self.path.display()))
    }

    fn switch(&self, name: &str, sw: &RawSwitch) -> Result<Switch> {
        let field = format!("switches.{name}");
        if !identifier(name) || PROBLEM_NAMES.contains(&name) {
            return Err(self.at(
                &field,
                format!(
                    "a switch is named like a C identifier and not one of {}",
                    PROBLEM_NAMES.join(", ")
                ),
            ));
        }
        let values = (sw.values.as_ref()).map(|v| v.iter().map(Number::text).collect::<Vec<_>>());
        let default = sw.default.text();
        if let Some(v) = (values.iter().flatten().chain([&default])).find(|v| !plain_word(v)) {
            return Err(self.at(
                &field,
                format!("`{v}` is not a plain value (letters, digits, _ . -)"),
            ));
        }
        match &values {
            Some(vs) if vs.is_empty() => {
                return Err(self.at(&format!("{field}.values"), "empty list".into()))
            }
            Some(vs) if !vs.contains(&default) => {
                return Err(self.at(
                    &format!("{field}.default"),
                    format!("`{default}` is not one of its values {vs:?}"),
                ))
            }
            None if default.parse::<i64>().is_err() => {
                return Err(self.at(
                    &format!("{field}.default"),
                    format!("`{default}` is not a whole number (list `values` for words)"),
                ))
            }
            _ => {}
        }
        Ok(Switch {
            name: name.to_string(),
            default,
            values,
        })
    }

    /// An expression that parses and reads only the problem's names and the switches.
    fn expr(&self, field: &str, text: &str) -> Result<Expr> {
        let e = Expr::parse(text).map_err(|m| self.at(field, format!("`{text}`: {m}")))?;
        let known =
            |n: &str| PROBLEM_NAMES.contains(&n) || self.switches.iter().any(|s| s.name == n);
        if let Some(unknown) = e.names().into_iter().find(|n| !known(n)) {
            return Err(self.at(
                field,
                format!(
                    "`{text}`: unknown name `{unknown}` (known: {}{})",
                    PROBLEM_NAMES.join(", "),
                    (self.switches.iter())
                        .map(|s| format!(", {}", s.name))
                        .collect::<String>()
                ),
            ));
        }
        Ok(e)
    }

    /// x, y and z (1 where left out).
    fn three(&self, field: &str, items: &[Number]) -> Result<[Expr; 3]> {
        if items.is_empty() || items.len() > 3 {
            return Err(self.at(
                field,
                format!("1 to 3 dimensions (x, y, z), got {}", items.len()),
            ));
        }
        let mut out = [Expr::Num(1), Expr::Num(1), Expr::Num(1)];
        for (i, item) in items.iter().enumerate() {
            out[i] = self.expr(&format!("{field}[{i}]"), &item.text())?;
        }
        Ok(out)
    }

    fn file(&self, field: &str, relative: &str) -> Result<PathBuf> {
        let p = self.dir.join(relative);
        if !p.is_file() {
            return Err(self.at(field, format!("no file {}", p.display())));
        }
        Ok(p)
    }

    fn module(&self, m: &RawModule) -> Result<Module> {
        if m.source.is_none() && !m.include.is_empty() {
            return Err(self.at(
                "module.include",
                "only a source module has include folders".into(),
            ));
        }
        match (&m.source, &m.ptx, &m.cubin) {
            (Some(source), None, None) => {
                if m.sha256.is_some() {
                    return Err(self.at("module.sha256", "only a cubin carries a checksum".into()));
                }
                let mut include = Vec::new();
                for (i, folder) in m.include.iter().enumerate() {
                    let p = self.dir.join(folder);
                    if !p.is_dir() {
                        return Err(self.at(
                            &format!("module.include[{i}]"),
                            format!("no folder {}", p.display()),
                        ));
                    }
                    include.push(p);
                }
                Ok(Module::Source {
                    file: self.file("module.source", source)?,
                    include,
                })
            }
            (None, Some(ptx), None) => Ok(Module::Ptx(self.file("module.ptx", ptx)?)),
            (None, None, Some(cubin)) => {
                let file = self.file("module.cubin", cubin)?;
                let Some(want) = &m.sha256 else {
                    return Err(self.at(
                        "module.sha256",
                        "a cubin needs its SHA-256 (sha256sum FILE)".into(),
                    ));
                };
                let bytes = std::fs::read(&file).map_err(|e| {
                    self.at(
                        "module.cubin",
                        format!("cannot read {}: {e}", file.display()),
                    )
                })?;
                let got = sha256_hex(&bytes);
                if !got.eq_ignore_ascii_case(want.trim()) {
                    return Err(self.at(
                        "module.sha256",
                        format!(
                            "{} has SHA-256 {got}, the manifest says {}: rebuild it or update the checksum",
                            file.display(),
                            want.trim()
                        ),
                    ));
                }
                Ok(Module::Cubin { file, sha256: got })
            }
            _ => Err(self.at(
                "module",
                "name exactly one of `source` (CUDA C++), `ptx` or `cubin`".into(),
            )),
        }
    }

    fn param(&self, field: &str, p: &str) -> Result<Param> {
        Ok(match p {
            "A" => Param::A,
            "B" => Param::B,
            "C" => Param::C,
            "a_scales" => Param::Scales(MapOperand::A),
            "b_scales" => Param::Scales(MapOperand::B),
            "null" => Param::Null,
            _ => {
                if let Some(bytes) = p.strip_prefix("scratch(").and_then(|r| r.strip_suffix(')')) {
                    Param::Scratch(self.expr(field, bytes)?)
                } else if let Some(args) = p.strip_prefix("tma(").and_then(|r| r.strip_suffix(')'))
                {
                    self.tma(field, p, args)?
                } else if let Some((ty, e)) = p.split_once(':') {
                    let ty = ScalarType::parse(ty.trim()).ok_or_else(|| {
                        self.at(
                            field,
                            format!(
                                "`{p}`: unknown scalar type `{ty}` (i32, u32, i64, u64, f32, f64)"
                            ),
                        )
                    })?;
                    Param::Scalar(ty, self.expr(field, e)?)
                } else {
                    return Err(self.at(
                        field,
                        format!(
                            "unknown parameter kind `{p}`: A, B, C, a_scales, b_scales (FP8), null, scratch(BYTES), \
                             tma(A|B, ROWS, COLS, SWIZZLE) or TYPE:EXPR (i32:M)"
                        ),
                    ));
                }
            }
        })
    }
}

impl Reading<'_> {
    /// `tma(A|B, ROWS, COLS, SWIZZLE)`: the operand, the box (ROWS rows of COLS elements along K, expressions) and
    /// the swizzle (32B, 64B or 128B; a box row is at most one swizzle span).
    fn tma(&self, field: &str, p: &str, args: &str) -> Result<Param> {
        let parts: Vec<&str> = args.split(',').map(str::trim).collect();
        let [operand, rows, cols, swizzle] = parts[..] else {
            return Err(self.at(
                field,
                format!(
                    "`{p}`: tma takes 4 arguments, tma(A|B, ROWS, COLS, SWIZZLE), got {}",
                    parts.len()
                ),
            ));
        };
        let operand = match operand {
            "A" => MapOperand::A,
            "B" => MapOperand::B,
            _ => {
                return Err(self.at(
                    field,
                    format!(
                        "`{p}`: a tensor map covers A or B (K-major operands), not `{operand}`; C is written \
                         through its pointer"
                    ),
                ))
            }
        };
        let swizzle = match swizzle {
            "32B" => Swizzle::B32,
            "64B" => Swizzle::B64,
            "128B" => Swizzle::B128,
            _ => {
                return Err(self.at(
                    field,
                    format!("`{p}`: swizzle `{swizzle}`: 32B, 64B or 128B"),
                ))
            }
        };
        Ok(Param::Tma {
            operand,
            rows: self.expr(field, rows)?,
            cols: self.expr(field, cols)?,
            swizzle,
        })
    }
}

impl Manifest {
    /// Reads and checks the manifest at `path`: every field, the module's files (and a cubin's checksum).
    pub fn load(path: &Path) -> Result<Manifest> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("{}: cannot read it: {e}", path.display())))?;
        Manifest::from_text(path, &text)
    }

    /// Checks a manifest's text; `path` names it in errors and anchors its relative paths.
    pub fn from_text(path: &Path, text: &str) -> Result<Manifest> {
        let raw: RawManifest = toml::from_str(text).map_err(|e| {
            Error::Config(format!(
                "{}: {}",
                path.display(),
                e.to_string().trim_end().replace('\n', "\n  ")
            ))
        })?;
        let mut r = Reading {
            path,
            dir: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            switches: Vec::new(),
        };
        // Switches first: the expressions may read them.
        for (name, sw) in &raw.switches {
            let switch = r.switch(name, sw)?;
            r.switches.push(switch);
        }
        let module = r.module(&raw.module)?;
        if !identifier(&raw.entry) {
            return Err(r.at("entry", format!("`{}` is not a function name", raw.entry)));
        }
        if raw.params.len() > MAX_PARAMS {
            return Err(r.at(
                "params",
                format!("{} parameters; at most {MAX_PARAMS}", raw.params.len()),
            ));
        }
        let params = (raw.params.iter().enumerate())
            .map(|(i, p)| r.param(&format!("params[{i}]"), p.trim()))
            .collect::<Result<Vec<_>>>()?;
        let mut dtypes = Vec::new();
        for (i, d) in raw.dtypes.iter().enumerate() {
            let dtype = DType::parse(d).ok_or_else(|| {
                r.at(
                    &format!("dtypes[{i}]"),
                    format!("`{d}`: fp16, bf16, e4m3, e4m3-row or e4m3-block"),
                )
            })?;
            dtypes.push(dtype);
        }
        if dtypes.is_empty() {
            return Err(r.at(
                "dtypes",
                "name at least one of fp16, bf16, e4m3, e4m3-row, e4m3-block".into(),
            ));
        }
        if raw.layout != LAYOUT {
            return Err(r.at(
                "layout",
                format!(
                    "`{}`: the suite's operands are `{LAYOUT}` (A is M x K and B is N x K, row-major; C = A B^T, \
                     M x N row-major)",
                    raw.layout
                ),
            ));
        }
        let arch = Arch::parse(&raw.arch).ok_or_else(|| {
            r.at(
                "arch",
                format!("`{}`: write it as sm_80, sm_90a ...", raw.arch),
            )
        })?;
        let requires = (raw.requires.iter().enumerate())
            .map(|(i, text)| Ok((text.clone(), r.expr(&format!("requires[{i}]"), text)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Manifest {
            path: path.to_path_buf(),
            description: raw.description,
            module,
            entry: raw.entry,
            params,
            grid: r.three("grid", &raw.grid)?,
            block: r.three("block", &raw.block)?,
            cluster: (raw.cluster.as_deref())
                .map(|c| r.three("cluster", c))
                .transpose()?,
            shared_memory: match &raw.shared_memory {
                Some(n) => r.expr("shared_memory", &n.text())?,
                None => Expr::Num(0),
            },
            dtypes,
            arch,
            requires,
            switches: r.switches,
            peer: raw.peer,
        })
    }

    /// The entry point is one of the module's kernels, and where its parameter list is known, it has the
    /// manifest's count and sizes: caught on the CPU, before the driver would refuse it (or worse, not).
    fn check_entry(&self, file: &Path, entries: &[(String, Option<Vec<usize>>)]) -> Result<()> {
        let Some((_, sizes)) = entries.iter().find(|(name, _)| *name == self.entry) else {
            let names: Vec<&str> = entries.iter().map(|(name, _)| name.as_str()).collect();
            return Err(self.err(
                "entry",
                format!(
                    "`{}` is not a kernel of {} (it has {}; a C++ kernel needs extern \"C\" or its mangled name)",
                    self.entry,
                    file.display(),
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            ));
        };
        match sizes {
            Some(sizes) if *sizes != self.param_sizes() => Err(self.err(
                "params",
                format!(
                    "the manifest lists {} parameters of {:?} bytes; `{}` in {} takes {} of {sizes:?} bytes",
                    self.params.len(),
                    self.param_sizes(),
                    self.entry,
                    file.display(),
                    sizes.len()
                ),
            )),
            _ => Ok(()),
        }
    }

    fn err(&self, field: &str, msg: String) -> Error {
        Error::Config(format!("{}: {field}: {msg}", self.path.display()))
    }

    /// Every switch's value: the defaults, with `chosen` on top; an unknown switch or a value outside its set is
    /// an error naming both.
    pub fn switch_values(&self, chosen: &[(String, String)]) -> Result<BTreeMap<String, String>> {
        let mut values: BTreeMap<String, String> = self
            .switches
            .iter()
            .map(|s| (s.name.clone(), s.default.clone()))
            .collect();
        for (name, value) in chosen {
            let Some(sw) = self.switches.iter().find(|s| &s.name == name) else {
                return Err(self.err(
                    "switches",
                    format!(
                        "no switch `{name}` (it has {})",
                        if self.switches.is_empty() {
                            "none".to_string()
                        } else {
                            self.switches
                                .iter()
                                .map(|s| s.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    ),
                ));
            };
            let allowed = match &sw.values {
                Some(vs) => vs.contains(value),
                None => value.parse::<i64>().is_ok(),
            };
            if !allowed {
                return Err(self.err(
                    &format!("switches.{name}"),
                    match &sw.values {
                        Some(vs) => format!("`{value}` is not one of {}", vs.join(", ")),
                        None => format!("`{value}` is not a whole number"),
                    },
                ));
            }
            values.insert(name.clone(), value.clone());
        }
        Ok(values)
    }

    /// The launch for one problem: dtype and `requires` checked, then grid, block, cluster, shared memory and
    /// parameters evaluated and checked against CUDA's limits. `ldc` is C's row stride (the correctness check's
    /// guarded output has a wider one than the timed output's N).
    pub fn plan(
        &self,
        switches: &BTreeMap<String, String>,
        shape: &Shape,
        dtype: DType,
        ldc: usize,
    ) -> Result<LaunchPlan> {
        if !self.dtypes.contains(&dtype) {
            return Err(self.err(
                "dtypes",
                format!(
                    "{} is not supported (it takes {})",
                    dtype.name(),
                    self.dtypes
                        .iter()
                        .map(|d| d.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let problem = [
            ("M", shape.m),
            ("N", shape.n),
            ("K", shape.k),
            ("lda", shape.k),
            ("ldb", shape.k),
            ("ldc", ldc),
        ];
        let vars = |name: &str| -> Option<i64> {
            problem
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| *v as i64)
                .or_else(|| switches.get(name).and_then(|v| v.parse().ok()))
        };
        let eval = |field: &str, e: &Expr| -> Result<i64> {
            // A switch that holds a word is a define only: name it rather than call it unknown.
            if let Some(word) = e
                .names()
                .into_iter()
                .find(|n| switches.get(n).is_some_and(|v| v.parse::<i64>().is_err()))
            {
                return Err(self.err(
                    field,
                    format!("switch {word}={} is not a number", switches[&word]),
                ));
            }
            e.eval(&vars).map_err(|m| {
                self.err(
                    field,
                    format!("{m} (shape {}x{}x{})", shape.m, shape.n, shape.k),
                )
            })
        };
        for (i, (text, e)) in self.requires.iter().enumerate() {
            if eval(&format!("requires[{i}]"), e)? == 0 {
                return Err(self.err(
                    &format!("requires[{i}]"),
                    format!("shape {} fails `{text}`", shape_words(shape)),
                ));
            }
        }
        let dims = |field: &str, es: &[Expr; 3], limits: [i64; 3]| -> Result<[u32; 3]> {
            let mut out = [1u32; 3];
            for (i, e) in es.iter().enumerate() {
                let v = eval(&format!("{field}[{i}]"), e)?;
                if v < 1 {
                    return Err(self.err(
                        &format!("{field}[{i}]"),
                        format!(
                            "{v}: an empty {field} (shape {}x{}x{})",
                            shape.m, shape.n, shape.k
                        ),
                    ));
                }
                if v > limits[i] {
                    return Err(self.err(
                        &format!("{field}[{i}]"),
                        format!("{v} is over CUDA's limit of {}", limits[i]),
                    ));
                }
                out[i] = v as u32;
            }
            Ok(out)
        };
        let grid = dims("grid", &self.grid, [i32::MAX as i64, 65535, 65535])?;
        let block = dims("block", &self.block, [1024, 1024, 64])?;
        let threads: u32 = block.iter().product();
        if threads > 1024 {
            return Err(self.err(
                "block",
                format!("{threads} threads in a block; CUDA allows 1024"),
            ));
        }
        let cluster = match &self.cluster {
            Some(c) => {
                let c = dims("cluster", c, [16, 16, 16])?;
                if c.iter().product::<u32>() > 16 {
                    return Err(self.err("cluster", format!("{c:?}: at most 16 blocks")));
                }
                for i in 0..3 {
                    if grid[i] % c[i] != 0 {
                        return Err(self.err(
                            &format!("cluster[{i}]"),
                            format!("{} does not divide grid[{i}] = {}", c[i], grid[i]),
                        ));
                    }
                }
                c
            }
            None => [1, 1, 1],
        };
        let smem = eval("shared_memory", &self.shared_memory)?;
        let smem = u32::try_from(smem).map_err(|_| {
            self.err(
                "shared_memory",
                format!("{smem} bytes: from 0 to {} bytes", u32::MAX),
            )
        })?;
        let mut params = Vec::new();
        for (i, p) in self.params.iter().enumerate() {
            let field = format!("params[{i}]");
            params.push(match p {
                Param::A => PlannedParam::A,
                Param::B => PlannedParam::B,
                Param::C => PlannedParam::C,
                Param::Scales(operand) => {
                    if !dtype.is_fp8() {
                        return Err(self.err(
                            &field,
                            format!(
                                "{} scales are FP8's: {} has none",
                                match operand {
                                    MapOperand::A => "A's",
                                    MapOperand::B => "B's",
                                },
                                dtype.name()
                            ),
                        ));
                    }
                    PlannedParam::Scales(*operand)
                }
                Param::Null => PlannedParam::Value(0),
                Param::Scratch(e) => {
                    let bytes = eval(&field, e)?;
                    if !(0..=(1i64 << 40)).contains(&bytes) {
                        return Err(self.err(&field, format!("scratch of {bytes} bytes")));
                    }
                    PlannedParam::Scratch(bytes as u64)
                }
                Param::Scalar(ty, e) => {
                    let v = eval(&field, e)?;
                    PlannedParam::Value(ty.encode(v).map_err(|m| self.err(&field, m))?)
                }
                Param::Tma {
                    operand,
                    rows,
                    cols,
                    swizzle,
                } => {
                    let (box_rows, box_cols) = (eval(&field, rows)?, eval(&field, cols)?);
                    let elem = dtype.operand_bytes() as i64;
                    let span = i64::from(swizzle.bytes()) / elem;
                    if !(1..=256).contains(&box_rows) || !(1..=span).contains(&box_cols) {
                        return Err(self.err(
                            &field,
                            format!(
                                "a box of {box_rows} rows by {box_cols} columns: rows 1 to 256, columns 1 to {span} \
                                 (one {}B swizzle span of {}-bit elements)",
                                swizzle.bytes(),
                                8 * elem
                            ),
                        ));
                    }
                    let rows_of = match operand {
                        MapOperand::A => shape.m,
                        MapOperand::B => shape.n,
                    };
                    let map = tma::operand_of(
                        rows_of,
                        shape.k,
                        box_rows as u32,
                        box_cols as u32,
                        *swizzle,
                        elem as u32,
                    )
                    .map_err(|e| {
                            self.err(
                                &field,
                                format!("{e} (shape {}x{}x{})", shape.m, shape.n, shape.k),
                            )
                        })?;
                    PlannedParam::Tma {
                        operand: *operand,
                        map,
                    }
                }
            });
        }
        Ok(LaunchPlan {
            grid,
            block,
            cluster,
            shared_memory: smem,
            params,
        })
    }

    /// The size in bytes of each parameter, as the entry point must declare them.
    pub fn param_sizes(&self) -> Vec<usize> {
        self.params.iter().map(Param::size).collect()
    }
}

/// A shape as errors name it: `odd (100x256x64)`, or only the sizes when they are its name.
fn shape_words(shape: &Shape) -> String {
    let sizes = format!("{}x{}x{}", shape.m, shape.n, shape.k);
    if shape.name == sizes {
        sizes
    } else {
        format!("{} ({sizes})", shape.name)
    }
}

/// One parameter with its value known (the operand pointers are the operand set's, filled at launch).
#[derive(Clone, Debug, PartialEq)]
pub enum PlannedParam {
    A,
    B,
    C,
    /// The address of A's or B's FP8 scales.
    Scales(MapOperand),
    Scratch(u64),
    /// The value's bytes in the low bytes of a 64-bit slot.
    Value(u64),
    /// A tensor map over the operand set's A or B, encoded when the variant is bound (tma::encode).
    Tma {
        operand: MapOperand,
        map: TmaParams,
    },
}

/// A launch with every expression evaluated: computed once when a variant is bound, never per launch.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchPlan {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub cluster: [u32; 3],
    pub shared_memory: u32,
    pub params: Vec<PlannedParam>,
}

// ---------------------------------------------------------------------------------------------------------------
// The spec `ext:NAME[:SWITCH=VALUE,...]`.
// ---------------------------------------------------------------------------------------------------------------

/// Where `ext:NAME` looks for `NAME/kernel.toml`, in order: the working directory's `kernels/ext`, then the
/// repository's.
pub fn search_folders() -> Vec<PathBuf> {
    vec![
        PathBuf::from("kernels/ext"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/ext"),
    ]
}

/// The external kernels `ext:NAME` finds, by name, each with its manifest or why it cannot be read; a name found in
/// two search folders is the first's.
pub fn found() -> Vec<(String, Result<Manifest>)> {
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for folder in search_folders() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join("kernel.toml").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            if seen.contains(&name) {
                continue;
            }
            seen.push(name.clone());
            let manifest = Manifest::load(&folder.join(&name).join("kernel.toml"));
            out.push((name, manifest));
        }
    }
    out
}

/// The peers (manifests with `peer = true`) the main job shows beside cuBLAS and `auto`, as `ext:NAME` specs.
pub fn peers() -> Vec<String> {
    (found().into_iter())
        .filter(|(_, m)| m.as_ref().is_ok_and(|m| m.peer))
        .map(|(name, _)| format!("ext:{name}"))
        .collect()
}

/// The external kernels `ext:NAME` finds (`list` prints this): each with its description, switches, dtypes and
/// architecture, or why its manifest cannot be read.
pub fn listing() -> String {
    let mut out = String::new();
    for (name, manifest) in found() {
        out += &match manifest {
            Ok(m) => format!(
                "  ext:{name:<18} {}{}; {}; {}{}\n",
                m.description.as_deref().unwrap_or("(no description)"),
                if m.peer {
                    " (a peer: in the main job)"
                } else {
                    ""
                },
                (m.dtypes.iter())
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(", "),
                m.arch.name(),
                (m.switches.iter())
                    .map(|s| match &s.values {
                        Some(vs) => format!("; {}={} ({})", s.name, s.default, vs.join("|")),
                        None => format!("; {}={} (any whole number)", s.name, s.default),
                    })
                    .collect::<String>()
            ),
            Err(e) => format!("  ext:{name:<18} cannot be used: {e}\n"),
        };
    }
    if out.is_empty() {
        return String::new();
    }
    format!(
        "\nKernels brought in by a manifest (ext:NAME[:SWITCH=VALUE,...], docs/external-kernels.md):\n{out}"
    )
}

/// An external kernel as a spec names it: its manifest's path and the switches set on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExternalSpec {
    /// The manifest, as an absolute path (a trial's child process resolves it the same way).
    pub manifest: PathBuf,
    pub switches: Vec<(String, String)>,
}

impl ExternalSpec {
    /// The spec's kernel, when it starts with `ext:`; the manifest is read and the switches checked against it.
    pub fn parse(spec: &str) -> Option<Result<ExternalSpec>> {
        let head = spec.get(..4)?;
        if !head.eq_ignore_ascii_case("ext:") {
            return None;
        }
        Some(ExternalSpec::parse_rest(spec, &spec[4..]))
    }

    fn parse_rest(spec: &str, rest: &str) -> Result<ExternalSpec> {
        let (name, changes) = match rest.split_once(':') {
            Some((name, list)) => (name, crate::kernel::spec::changes_in(spec, list)?),
            None => (rest, Vec::new()),
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(Error::Config(format!(
                "`{spec}`: name a manifest: ext:NAME (kernels/ext/NAME/kernel.toml) or ext:PATH.toml"
            )));
        }
        let manifest = if name.ends_with(".toml") || name.contains('/') {
            let p = PathBuf::from(name);
            if !p.is_file() {
                return Err(Error::Config(format!("`{spec}`: no manifest {name}")));
            }
            p
        } else {
            let tried: Vec<PathBuf> = search_folders()
                .into_iter()
                .map(|d| d.join(name).join("kernel.toml"))
                .collect();
            match tried.iter().find(|p| p.is_file()) {
                Some(p) => p.clone(),
                None => {
                    return Err(Error::Config(format!(
                        "`{spec}`: no manifest {}",
                        tried
                            .iter()
                            .map(|p| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(" nor ")
                    )))
                }
            }
        };
        let manifest = std::fs::canonicalize(&manifest).unwrap_or(manifest);
        let switches = changes
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let spec = ExternalSpec { manifest, switches };
        spec.load()?;
        Ok(spec)
    }

    /// The manifest, and every switch's value.
    pub fn load(&self) -> Result<(Manifest, BTreeMap<String, String>)> {
        let m = Manifest::load(&self.manifest)?;
        let values = m.switch_values(&self.switches)?;
        Ok((m, values))
    }

    /// Checks the kernel can run this problem (its dtype and `requires`, a launch that CUDA accepts), on the CPU.
    pub fn validate(&self, shape: &Shape, dtype: DType) -> Result<()> {
        let (m, values) = self.load()?;
        m.plan(&values, shape, dtype, shape.n).map(|_| ())
    }

    /// Builds the module for `dtype`: NVRTC for a source (for `source_target`) (switches as defines, and `GEMM_ABLATE_FP16` or
    /// `GEMM_ABLATE_BF16` defined to 1, so one source can serve both), the file itself for PTX or a cubin.
    pub fn build(&self, label: &str, dtype: DType) -> Result<Built> {
        let (manifest, switches) = self.load()?;
        let compiled = match &manifest.module {
            Module::Source { file, include } => {
                let source = std::fs::read_to_string(file).map_err(|e| {
                    manifest.err(
                        "module.source",
                        format!("cannot read {}: {e}", file.display()),
                    )
                })?;
                let mut options: Vec<String> =
                    switches.iter().map(|(k, v)| format!("-D{k}={v}")).collect();
                options.extend(dtype_defines(dtype));
                options.extend(include.iter().map(|d| format!("-I{}", d.display())));
                // The cache key holds what the includes hold, so an edited header is recompiled.
                let mut headers = Vec::new();
                for dir in include {
                    folder_contents(dir, &mut headers, 0);
                }
                let target = source_target(manifest.arch, compile::target());
                let compiled = compile::compile_for(target, label, &source, &options, &headers)?;
                // The kernels the PTX declares (or, from a cache older than that list, those ptxas compiled).
                let entries = if compiled.entries.is_empty() {
                    (compiled.report.functions.iter())
                        .map(|f| (f.function.clone(), None))
                        .collect()
                } else {
                    compiled.entries.clone()
                };
                manifest.check_entry(file, &entries)?;
                compiled
            }
            Module::Ptx(file) => {
                let mut bytes = std::fs::read(file).map_err(|e| {
                    manifest.err("module.ptx", format!("cannot read {}: {e}", file.display()))
                })?;
                manifest.check_entry(file, &ptx_entries(&String::from_utf8_lossy(&bytes)))?;
                bytes.push(0); // the driver reads PTX as a C string
                Arc::new(Compiled {
                    variant: label.to_string(),
                    cubin: bytes,
                    report: ResourceReport::default(),
                    nvrtc_version: String::new(),
                    entries: Vec::new(),
                })
            }
            Module::Cubin { file, sha256 } => {
                let bytes = std::fs::read(file).map_err(|e| {
                    manifest.err(
                        "module.cubin",
                        format!("cannot read {}: {e}", file.display()),
                    )
                })?;
                // Checked again here: the file may have changed since the manifest was read.
                let got = sha256_hex(&bytes);
                if &got != sha256 {
                    return Err(manifest.err(
                        "module.sha256",
                        format!(
                            "{} has SHA-256 {got}, the manifest says {sha256}",
                            file.display()
                        ),
                    ));
                }
                // A cubin (not a fatbin) lists its kernels, their parameters' sizes and registers: the entry
                // point is checked as a PTX module's is, and `build` reports the registers.
                let kernels = cubin_kernels(&bytes);
                let mut report = ResourceReport::default();
                if let Some(kernels) = &kernels {
                    let entries: Vec<(String, Option<Vec<usize>>)> = (kernels.iter())
                        .map(|k| (k.name.clone(), k.params.clone()))
                        .collect();
                    manifest.check_entry(file, &entries)?;
                    report.functions = (kernels.iter())
                        .map(|k| FunctionReport {
                            function: k.name.clone(),
                            registers: k.registers.unwrap_or(0),
                            stack_bytes: k.frame_bytes.unwrap_or(0),
                            ..Default::default()
                        })
                        .collect();
                }
                Arc::new(Compiled {
                    variant: label.to_string(),
                    cubin: bytes,
                    report,
                    nvrtc_version: String::new(),
                    entries: Vec::new(),
                })
            }
        };
        Ok(Built {
            manifest,
            switches,
            compiled,
        })
    }

    /// What `show` prints: the manifest's launch with the switches resolved, then the source (where there is one).
    pub fn shown(&self, label: &str, dtype: DType) -> Result<String> {
        let (m, values) = self.load()?;
        let mut out = format!("// {label}: {}\n", m.path.display());
        if let Some(d) = &m.description {
            out += &format!("// {d}\n");
        }
        out += &format!(
            "// entry {}, {} parameters, arch {}\n",
            m.entry,
            m.params.len(),
            m.arch.name()
        );
        for (k, v) in &values {
            out += &format!("#define {k} {v}\n");
        }
        if matches!(m.module, Module::Source { .. }) {
            // The dtype's defines as the build passes them (`-DNAME=VALUE`), written as #defines.
            for d in dtype_defines(dtype) {
                let (name, value) = d
                    .trim_start_matches("-D")
                    .split_once('=')
                    .unwrap_or((d.as_str(), ""));
                out += &format!("#define {name} {value}\n");
            }
        }
        if let Module::Source { file, .. } = &m.module {
            out += &std::fs::read_to_string(file).map_err(|e| {
                m.err(
                    "module.source",
                    format!("cannot read {}: {e}", file.display()),
                )
            })?;
        }
        Ok(out)
    }
}

/// Every file's path and bytes under `dir` (sorted, a few levels deep), for a cache key.
fn folder_contents(dir: &Path, out: &mut Vec<u8>, depth: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() && depth < 4 {
            folder_contents(&p, out, depth + 1);
        } else if let Ok(bytes) = std::fs::read(&p) {
            out.extend(p.display().to_string().as_bytes());
            out.extend(bytes);
        }
    }
}

/// A built module with the manifest and switches it was built from.
pub struct Built {
    pub manifest: Manifest,
    pub switches: BTreeMap<String, String>,
    pub compiled: Arc<Compiled>,
}

/// The defines a source module is compiled with for `dtype`: `GEMM_ABLATE_FP16`, `GEMM_ABLATE_BF16` or, for FP8,
/// `GEMM_ABLATE_E4M3`, `GEMM_ABLATE_SCALES` (0: per tensor, 1: per row, 2: 1x128 and 128x128 blocks) and
/// `GEMM_ABLATE_OUT_BF16` or `GEMM_ABLATE_OUT_FP16` (the output's type).
pub fn dtype_defines(dtype: DType) -> Vec<String> {
    match dtype.scales() {
        None => vec![format!(
            "-DGEMM_ABLATE_{}=1",
            dtype.name().to_ascii_uppercase()
        )],
        Some(scales) => vec![
            "-DGEMM_ABLATE_E4M3=1".to_string(),
            format!("-DGEMM_ABLATE_SCALES={}", scales.define()),
            format!(
                "-DGEMM_ABLATE_OUT_{}=1",
                dtype.output().name().to_ascii_uppercase()
            ),
        ],
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::measure::oc::Rng;

    /// A fresh folder under the temporary directory, for this process and `tag`.
    pub(crate) fn scratch_folder(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("gemm-ablate-test-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    pub(crate) const GOOD: &str = r#"
module = { source = "k.cu" }
entry = "k"
params = ["A", "B", "C", "i32:M", "i32:N", "i32:K", "i32:ldc", "null", "scratch(M * 4)", "f32:1"]
grid = ["cdiv(N, BN)", "cdiv(M, BM)"]
block = [128]
shared_memory = "BM * 64"
dtypes = ["fp16"]
layout = "row_major_abt"
arch = "sm_80"
requires = ["M % BM == 0", "K % 32 == 0"]

[switches]
BM = { default = 128, values = [64, 128] }
BN = { default = 128 }
"#;

    /// A folder holding `k.cu` and the manifest `text`; the manifest's path.
    fn manifest_file(tag: &str, text: &str) -> PathBuf {
        let dir = scratch_folder(tag);
        std::fs::write(dir.join("k.cu"), "extern \"C\" __global__ void k() {}\n").unwrap();
        let path = dir.join("kernel.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Why `spec` does not build for fp16, where it must not (`why` says what should stop it).
    fn build_error(spec: &ExternalSpec, why: &str) -> String {
        spec.build("entry", DType::F16)
            .err()
            .expect(why)
            .to_string()
    }

    /// Why the manifest `text` cannot plan a launch on a 256x256x64 fp16 problem with its default switches.
    fn plan_error(tag: &str, text: &str) -> String {
        let m = Manifest::load(&manifest_file(tag, text)).unwrap();
        m.plan(
            &m.switch_values(&[]).unwrap(),
            &Shape::new("s", 256, 256, 64),
            DType::F16,
            256,
        )
        .unwrap_err()
        .to_string()
    }

    #[test]
    fn a_good_manifest_plans_its_launch_once() {
        let path = manifest_file("good", GOOD);
        let m = Manifest::load(&path).unwrap();
        assert_eq!(m.params.len(), 10);
        assert_eq!(m.param_sizes(), vec![8, 8, 8, 4, 4, 4, 4, 8, 8, 4]);
        let values = m
            .switch_values(&[("BM".into(), "64".into()), ("BN".into(), "96".into())])
            .unwrap();
        let shape = Shape::new("t", 256, 1000, 64);
        let plan = m.plan(&values, &shape, DType::F16, 1000).unwrap();
        assert_eq!(plan.grid, [11, 4, 1]);
        assert_eq!(plan.block, [128, 1, 1]);
        assert_eq!(plan.cluster, [1, 1, 1]);
        assert_eq!(plan.shared_memory, 64 * 64);
        assert_eq!(plan.params[3], PlannedParam::Value(256));
        assert_eq!(plan.params[6], PlannedParam::Value(1000));
        assert_eq!(plan.params[7], PlannedParam::Value(0));
        assert_eq!(plan.params[8], PlannedParam::Scratch(1024));
        assert_eq!(plan.params[9], PlannedParam::Value(1.0f32.to_bits() as u64));
        // The check's wider C stride reaches only the parameters that read it.
        let wide = m.plan(&values, &shape, DType::F16, 1256).unwrap();
        assert_eq!(wide.params[6], PlannedParam::Value(1256));
        assert_eq!(wide.grid, plan.grid);
    }

    /// FP8 (issue 40): a manifest may take e4m3 in any scheme, pass the problem's scale buffers (`a_scales`,
    /// `b_scales`) and map its operands as bytes (a 128B span holds 128 of them); a source learns the dtype and
    /// scheme from its defines; a 16-bit problem has no scales to pass.
    #[test]
    fn an_fp8_manifest_passes_the_scales_and_maps_its_operands_as_bytes() {
        let fp8 = GOOD
            .replace(
                r#"params = ["A", "B", "C", "i32:M", "i32:N", "i32:K", "i32:ldc", "null", "scratch(M * 4)", "f32:1"]"#,
                r#"params = ["A", "B", "C", "a_scales", "b_scales", "tma(A, 128, 128, 128B)", "i32:M"]"#,
            )
            .replace(r#"dtypes = ["fp16"]"#, r#"dtypes = ["e4m3", "e4m3-block", "fp16"]"#);
        let m = Manifest::load(&manifest_file("fp8", &fp8)).unwrap();
        let values = m.switch_values(&[]).unwrap();
        let shape = Shape::new("s", 256, 256, 512);
        let block = DType::E4M3(crate::kernel::problem::Scales::Block);
        let plan = m.plan(&values, &shape, block, 256).unwrap();
        assert_eq!(plan.params[3], PlannedParam::Scales(MapOperand::A));
        assert_eq!(plan.params[4], PlannedParam::Scales(MapOperand::B));
        let PlannedParam::Tma { map, .. } = &plan.params[5] else {
            panic!("a tensor map");
        };
        assert_eq!(map.box_dims, vec![128, 128]);
        assert_eq!(map.strides, vec![512]);
        // Not taken: a scheme the manifest does not list, scales of a 16-bit problem, a box wider than the span.
        let row = DType::E4M3(crate::kernel::problem::Scales::Row);
        assert!(m
            .plan(&values, &shape, row, 256)
            .unwrap_err()
            .to_string()
            .contains("e4m3-row is not supported"));
        let sixteen = m
            .plan(&values, &shape, DType::F16, 256)
            .unwrap_err()
            .to_string();
        assert!(
            sixteen.contains("params[3]") && sixteen.contains("FP8"),
            "{sixteen}"
        );
        let wide = Manifest::load(&manifest_file(
            "fp8-wide",
            &fp8.replace("tma(A, 128, 128, 128B)", "tma(A, 128, 129, 128B)"),
        ))
        .unwrap();
        let e = wide
            .plan(&values, &shape, DType::FP8, 256)
            .unwrap_err()
            .to_string();
        assert!(e.contains("columns 1 to 128") && e.contains("8-bit"), "{e}");
        assert_eq!(
            dtype_defines(block),
            vec![
                "-DGEMM_ABLATE_E4M3=1".to_string(),
                "-DGEMM_ABLATE_SCALES=2".to_string(),
                "-DGEMM_ABLATE_OUT_BF16=1".to_string()
            ]
        );
        assert_eq!(
            dtype_defines(DType::BF16),
            vec!["-DGEMM_ABLATE_BF16=1".to_string()]
        );
    }

    /// The error loading `GOOD` with `from` replaced by `to` (which must change it).
    fn broken(tag: &str, from: &str, to: &str) -> String {
        assert!(GOOD.contains(from), "{from}");
        let path = manifest_file(tag, &GOOD.replacen(from, to, 1));
        let e = Manifest::load(&path).unwrap_err().to_string();
        assert!(e.contains(&path.display().to_string()), "{e}");
        e
    }

    #[test]
    fn every_bad_field_is_named_with_its_file() {
        for (tag, from, to, says) in [
            (
                "kind",
                "\"null\"",
                "\"pointer\"",
                "params[7]: unknown parameter kind `pointer`",
            ),
            (
                "type",
                "\"f32:1\"",
                "\"f16:1\"",
                "params[9]: `f16:1`: unknown scalar type",
            ),
            (
                "expr",
                "cdiv(N, BN)",
                "cdiv(N, BN",
                "grid[0]: `cdiv(N, BN`: expected `)`",
            ),
            (
                "name",
                "cdiv(M, BM)",
                "cdiv(M, TILE)",
                "grid[1]: `cdiv(M, TILE)`: unknown name `TILE`",
            ),
            (
                "dims",
                "block = [128]",
                "block = []",
                "block: 1 to 3 dimensions",
            ),
            ("dtype", "[\"fp16\"]", "[\"fp4\"]", "dtypes[0]: `fp4`"),
            (
                "layout",
                "row_major_abt",
                "column_major",
                "layout: `column_major`",
            ),
            ("arch", "sm_80", "hopper", "arch: `hopper`"),
            ("requires", "K % 32 == 0", "K %% 32", "requires[1]"),
            (
                "field",
                "entry = \"k\"",
                "entry = \"k\"\ngird = [1]",
                "unknown field `gird`",
            ),
            ("missing", "entry = \"k\"", "", "missing field `entry`"),
            (
                "entry",
                "entry = \"k\"",
                "entry = \"k k\"",
                "entry: `k k` is not a function name",
            ),
            (
                "two",
                "{ source = \"k.cu\" }",
                "{ source = \"k.cu\", ptx = \"k.ptx\" }",
                "module: name exactly one",
            ),
            ("file", "k.cu", "gone.cu", "module.source: no file"),
            (
                "include",
                "{ source = \"k.cu\" }",
                "{ source = \"k.cu\", include = [\"inc\"] }",
                "module.include[0]: no folder",
            ),
            (
                "default",
                "default = 128, values",
                "default = 32, values",
                "switches.BM.default: `32` is not one of",
            ),
            (
                "word",
                "BN = { default = 128 }",
                "BN = { default = \"wide\" }",
                "switches.BN.default: `wide` is not a whole number",
            ),
            (
                "inject",
                "BN = { default = 128 }",
                "BN = { default = \"1 -DX\", values = [\"1 -DX\"] }",
                "not a plain value",
            ),
            (
                "problem",
                "BN = { default = 128 }",
                "K = { default = 128 }",
                "switches.K",
            ),
            (
                "cubin",
                "{ source = \"k.cu\" }",
                "{ cubin = \"k.cu\" }",
                "module.sha256: a cubin needs its SHA-256",
            ),
        ] {
            let e = broken(tag, from, to);
            assert!(e.contains(says), "{tag}: {e}");
        }
    }

    #[test]
    fn a_cubin_whose_checksum_differs_is_refused_naming_both() {
        let dir = scratch_folder("cubin");
        std::fs::write(dir.join("k.cubin"), b"not really a cubin").unwrap();
        let real = sha256_hex(b"not really a cubin");
        let stale = "ab".repeat(32);
        let text = GOOD.replace(
            "{ source = \"k.cu\" }",
            &format!("{{ cubin = \"k.cubin\", sha256 = \"{stale}\" }}"),
        );
        let path = dir.join("kernel.toml");
        std::fs::write(&path, &text).unwrap();
        let e = Manifest::load(&path).unwrap_err().to_string();
        assert!(
            e.contains(&real) && e.contains(&stale) && e.contains("module.sha256"),
            "{e}"
        );
        std::fs::write(&path, text.replace(&stale, &real.to_uppercase())).unwrap();
        let m = Manifest::load(&path).unwrap();
        assert!(matches!(m.module, Module::Cubin { ref sha256, .. } if *sha256 == real));
    }

    #[test]
    fn switches_and_shapes_are_checked_before_any_launch() {
        let path = manifest_file("plan", GOOD);
        let m = Manifest::load(&path).unwrap();
        let e = m
            .switch_values(&[("BK".into(), "64".into())])
            .unwrap_err()
            .to_string();
        assert!(e.contains("no switch `BK` (it has BM, BN)"), "{e}");
        let e = m
            .switch_values(&[("BM".into(), "96".into())])
            .unwrap_err()
            .to_string();
        assert!(e.contains("switches.BM: `96` is not one of 64, 128"), "{e}");
        let e = m
            .switch_values(&[("BN".into(), "x".into())])
            .unwrap_err()
            .to_string();
        assert!(e.contains("switches.BN: `x` is not a whole number"), "{e}");
        let values = m.switch_values(&[]).unwrap();
        let plan = |shape: &Shape, dtype| m.plan(&values, shape, dtype, shape.n);
        let e = plan(&Shape::new("s", 256, 256, 64), DType::BF16)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("dtypes: bf16 is not supported (it takes fp16)"),
            "{e}"
        );
        let e = plan(&Shape::new("odd", 100, 256, 64), DType::F16)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("requires[0]: shape odd (100x256x64) fails `M % BM == 0`"),
            "{e}"
        );
        // An empty grid: N = 0 is not a shape the suite makes, but a grid expression can still reach 0.
        let e = plan_error("empty", &GOOD.replace("cdiv(N, BN)", "N / 4096"));
        assert!(e.contains("grid[0]: 0: an empty grid"), "{e}");
        for (from, to, says) in [
            ("block = [128]", "block = [64, 32]", "2048 threads"),
            (
                "block = [128]",
                "block = [128]\ncluster = [3]",
                "cluster[0]: 3 does not divide grid[0] = 2",
            ),
            (
                "\"i32:M\"",
                "\"i32:M * 10000000\"",
                "params[3]: 2560000000 does not fit i32",
            ),
            ("scratch(M * 4)", "scratch(0 - M)", "scratch of -256 bytes"),
            (
                "shared_memory = \"BM * 64\"",
                "shared_memory = \"0 - 1\"",
                "shared_memory: -1 bytes",
            ),
        ] {
            let e = plan_error("limits", &GOOD.replace(from, to));
            assert!(e.contains(says), "{to}: {e}");
        }
        // A switch holding a word is a define only; an expression that reads it says so.
        let e = plan_error(
            "words",
            &GOOD.replace(
                "BN = { default = 128 }",
                "BN = { default = \"x\", values = [\"x\"] }",
            ),
        );
        assert!(e.contains("grid[0]: switch BN=x is not a number"), "{e}");
    }

    #[test]
    fn ext_specs_name_a_manifest_and_its_switches() {
        let path = manifest_file("spec", GOOD);
        let text = format!("ext:{}:BM=64, BN = 256", path.display());
        let spec = ExternalSpec::parse(&text).unwrap().unwrap();
        assert_eq!(
            spec.switches,
            vec![("BM".into(), "64".into()), ("BN".into(), "256".into())]
        );
        assert!(spec.manifest.is_absolute());
        assert!(ExternalSpec::parse("rung10").is_none());
        assert!(ExternalSpec::parse("extra").is_none());
        assert!(ExternalSpec::parse("EXT:mma_tile").unwrap().is_ok());
        for (bad, says) in [
            ("ext:".to_string(), "name a manifest"),
            ("ext:nonesuch".to_string(), "no manifest"),
            (
                "ext:/no/such/kernel.toml".to_string(),
                "no manifest /no/such/kernel.toml",
            ),
            (format!("ext:{}:BM", path.display()), "is not key=value"),
            (format!("ext:{}:BM=32", path.display()), "switches.BM: `32`"),
        ] {
            let e = ExternalSpec::parse(&bad).unwrap().unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        // Wherever a spec works: the kernels outside the ladder include it, labelled by the spec.
        let v = crate::trial::job::VariantSpec::outside_ladder("ext:mma_tile:BM=64")
            .unwrap()
            .unwrap();
        assert_eq!(v.name(), "ext:mma_tile:BM=64");
        assert!(v
            .validate(&crate::kernel::problem::shape("square4096"))
            .is_ok());
        let e = v
            .validate(&Shape::new("odd", 100, 4096, 4096))
            .unwrap_err()
            .to_string();
        assert!(e.contains("requires[0]"), "{e}");
        let shown = v
            .kernel()
            .unwrap()
            .unwrap()
            .shown(&v.name(), DType::F16, false)
            .unwrap();
        assert!(shown.contains("#define BM 64") && shown.contains("mma_tile_gemm"));
        // `show` writes a dtype's defines as the build passes them: FP8's are three, none named after the dtype.
        let row = v
            .kernel()
            .unwrap()
            .unwrap()
            .shown(
                &v.name(),
                DType::E4M3(crate::kernel::problem::Scales::Row),
                false,
            )
            .unwrap();
        assert!(
            row.contains("#define GEMM_ABLATE_E4M3 1\n#define GEMM_ABLATE_SCALES 1\n#define GEMM_ABLATE_OUT_BF16 1\n")
                && !row.contains("E4M3-ROW"),
            "{row}"
        );
    }

    #[test]
    fn list_names_the_worked_example_and_its_switches() {
        let text = listing();
        assert!(text.contains("ext:mma_tile"), "{text}");
        assert!(
            text.contains("BM=128 (64|128)") && text.contains("fp16; sm_80"),
            "{text}"
        );
    }

    #[test]
    fn the_worked_example_plans_the_standard_compute_shapes() {
        let spec = ExternalSpec::parse("ext:mma_tile").unwrap().unwrap();
        let (m, values) = spec.load().unwrap();
        let shape = crate::kernel::problem::shape("square4096");
        let plan = m.plan(&values, &shape, DType::F16, shape.n).unwrap();
        assert_eq!(plan.grid, [32, 32, 1]);
    }

    /// The Triton peer's manifests (kernels/ext/triton_persistent, _bf16 and _e4m3) say what its build recorded
    /// (build.py's metadata file beside the cubin): checksum, entry, parameters (the hidden global scratch sized
    /// as Triton's launcher sizes it: the metadata's bytes times the grid; a null profile scratch), block, shared
    /// memory, and a `requires` for every divisibility hint it was compiled with.
    #[test]
    fn the_triton_peer_manifests_match_their_build_metadata() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/ext/triton_persistent");
        for (name, dtype) in [
            ("triton_persistent", DType::F16),
            ("triton_persistent_bf16", DType::BF16),
            ("triton_persistent_e4m3", DType::FP8),
        ] {
            // The FP8 build takes its two scale pointers after C.
            let scales = if dtype.is_fp8() { 2 } else { 0 };
            let metadata = folder.join(format!("matmul_abt_persistent_{}.json", dtype.name()));
            let facts: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&metadata).unwrap()).unwrap();
            let number = |key: &str| facts[key].as_i64().unwrap_or_else(|| panic!("{key}"));
            let spec = ExternalSpec::parse(&format!("ext:{name}"))
                .unwrap()
                .unwrap();
            let built = spec.build(name, dtype).unwrap(); // the entry's parameters checked against the cubin
            let m = &built.manifest;
            assert!(
                matches!(&m.module, Module::Cubin { sha256, .. } if facts["cubin_sha256"] == *sha256),
                "{name}"
            );
            assert_eq!(facts["entry"], m.entry.as_str());
            assert_eq!(m.dtypes, vec![dtype]);
            assert_eq!(m.arch.name(), "sm_90a");
            assert_eq!(built.compiled.report.spills(), 0, "{name}");
            // What the suite's launch does not do: clusters, cooperative or programmatic-dependent launches.
            assert_eq!(number("num_ctas"), 1);
            assert_eq!(facts["launch_cooperative_grid"], false);
            assert_eq!(facts["launch_pdl"], false);
            assert!(m.cluster.is_none());
            let hinted: Vec<&str> = (facts["hinted_divisible_by_16"].as_array().unwrap().iter())
                .map(|v| v.as_str().unwrap())
                .collect();
            for scalar in ["M", "N", "K", "ldc"] {
                let required =
                    (m.requires.iter()).any(|(text, _)| *text == format!("{scalar} % 16 == 0"));
                assert_eq!(hinted.contains(&scalar), required, "{name}: {scalar}");
            }
            let sms = 132;
            for (shape, programs) in [
                (crate::kernel::problem::shape("square4096"), sms),
                (crate::kernel::problem::shape("decode_attn_out"), 2 * 32),
                (Shape::new("one", 1, 256, 64), 1),
            ] {
                for ldc in [shape.n, shape.n + 256] {
                    let plan = m.plan(&built.switches, &shape, dtype, ldc).unwrap();
                    assert_eq!(plan.grid, [programs, 1, 1], "{name} {}", shape.name);
                    assert_eq!(plan.block, [32 * number("num_warps") as u32, 1, 1]);
                    assert_eq!(plan.shared_memory as i64, number("shared"));
                    assert_eq!(plan.params.len(), 9 + scales);
                    assert_eq!(plan.params[6 + scales], PlannedParam::Value(ldc as u64));
                    let scratch = programs as i64 * number("global_scratch_size");
                    assert_eq!(
                        plan.params[7 + scales],
                        PlannedParam::Scratch(scratch as u64)
                    );
                    assert_eq!(number("profile_scratch_size"), 0);
                    assert_eq!(m.params[8 + scales], Param::Null);
                    if dtype.is_fp8() {
                        assert_eq!(plan.params[3], PlannedParam::Scales(MapOperand::A));
                        assert_eq!(plan.params[4], PlannedParam::Scales(MapOperand::B));
                    }
                }
            }
            // A shape off the divisibility it was compiled for is refused, naming the condition.
            let odd = crate::kernel::problem::shape("square1000");
            let e = (m.plan(&built.switches, &odd, dtype, odd.n).unwrap_err()).to_string();
            assert!(e.contains("fails `N % 16 == 0`"), "{e}");
        }
    }

    #[test]
    fn a_cubins_entry_and_parameters_are_checked_before_the_gpu() {
        let dir = scratch_folder("cubin-entry");
        let cubin = "matmul_abt_persistent_fp16.cubin";
        let bytes = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("kernels/ext/triton_persistent")
                .join(cubin),
        )
        .unwrap();
        std::fs::write(dir.join(cubin), &bytes).unwrap();
        let module = format!(
            "{{ cubin = \"{cubin}\", sha256 = \"{}\" }}",
            sha256_hex(&bytes)
        );
        let text = GOOD
            .replace("{ source = \"k.cu\" }", &module)
            .replace("entry = \"k\"", "entry = \"matmul_abt_persistent\"");
        let spec_for = |text: &str| {
            std::fs::write(dir.join("kernel.toml"), text).unwrap();
            ExternalSpec::parse(&format!("ext:{}", dir.join("kernel.toml").display()))
                .unwrap()
                .unwrap()
        };
        // GOOD lists ten parameters of other sizes; the kernel takes nine.
        let e = build_error(&spec_for(&text), "a cubin's parameters");
        assert!(
            e.contains("params: the manifest lists 10 parameters")
                && e.contains("takes 9 of [8, 8, 8, 4, 4, 4, 4, 8, 8] bytes"),
            "{e}"
        );
        let e = build_error(
            &spec_for(&text.replace("entry = \"matmul_abt_persistent\"", "entry = \"gemm\"")),
            "no entry",
        );
        assert!(
            e.contains("entry: `gemm` is not a kernel of")
                && e.contains("(it has matmul_abt_persistent;"),
            "{e}"
        );
        let nine = text.replace(
            "\"null\", \"scratch(M * 4)\", \"f32:1\"",
            "\"scratch(M * 4)\", \"null\"",
        );
        let built = spec_for(&nine).build("cubin", DType::F16).unwrap();
        assert_eq!(built.compiled.report.functions[0].registers, 154);
    }

    /// The cubin reader (gpu/cubin.rs) against NVRTC: the kernels, parameters and registers it reads from a cubin
    /// NVRTC made are the PTX's and ptxas's.
    #[test]
    fn a_cubins_kernels_read_on_the_cpu_match_what_nvrtc_reported() {
        if !crate::gpu::probe::nvrtc_available() {
            assert!(
                !crate::settings::nvrtc_required(),
                "GEMM_ABLATE_REQUIRE_NVRTC=1 and no NVRTC"
            );
            println!("skipped: libnvrtc.so.13 not found");
            return;
        }
        let spec = ExternalSpec::parse("ext:mma_tile").unwrap().unwrap();
        let compiled = spec.build("cubin-reader", DType::F16).unwrap().compiled;
        let kernels = cubin_kernels(&compiled.cubin).expect("NVRTC's cubin is an ELF");
        assert_eq!(kernels.len(), 1);
        let (k, ptxas) = (&kernels[0], &compiled.report.functions[0]);
        assert_eq!(k.name, "mma_tile_gemm");
        assert_eq!(k.params, Some(vec![8, 8, 8, 4, 4, 4, 4]));
        assert_eq!(k.registers, Some(ptxas.registers));
        assert_eq!(k.frame_bytes, Some(ptxas.stack_bytes));
        assert!(compiled
            .entries
            .contains(&(k.name.clone(), k.params.clone())));
    }

    #[test]
    fn a_source_gets_its_switches_dtype_and_include_folders_and_an_edited_header_is_rebuilt() {
        let dir = scratch_folder("defines");
        std::fs::create_dir_all(dir.join("inc")).unwrap();
        std::fs::write(
            dir.join("k.cu"),
            "#if !defined(GEMM_ABLATE_FP16) || BM != 64\n#error switches or dtype not passed\n#endif\n\
             #include \"helper.cuh\"\nextern \"C\" __global__ void k(const void*, const void*, int* c, int, int, int, int, void*, void*, float) { HELPER(c); }\n",
        )
        .unwrap();
        std::fs::write(dir.join("inc/helper.cuh"), "#define HELPER(p) (*(p) = 1)\n").unwrap();
        let text = GOOD
            .replace(
                "{ source = \"k.cu\" }",
                "{ source = \"k.cu\", include = [\"inc\"] }",
            )
            .replace("default = 128, values", "default = 64, values");
        std::fs::write(dir.join("kernel.toml"), text).unwrap();
        let spec = ExternalSpec::parse(&format!("ext:{}", dir.join("kernel.toml").display()))
            .unwrap()
            .unwrap();
        if !crate::gpu::probe::nvrtc_available() {
            assert!(
                !crate::settings::nvrtc_required(),
                "GEMM_ABLATE_REQUIRE_NVRTC=1 and no NVRTC"
            );
            println!("skipped: libnvrtc.so.13 not found");
            return;
        }
        spec.build("defines", DType::F16).unwrap();
        let e = spec
            .build("defines", DType::BF16)
            .err()
            .expect("no fp16 define")
            .to_string();
        assert!(e.contains("switches or dtype not passed"), "{e}");
        std::fs::write(dir.join("inc/helper.cuh"), "#define HELPER(p) (*(p) = \n").unwrap();
        assert!(
            spec.build("defines", DType::F16).is_err(),
            "a stale build of an edited header"
        );
    }

    #[test]
    fn an_entry_point_the_module_lacks_is_caught_before_the_gpu() {
        let entries = ptx_entries(
            ".version 8.0\n.visible .entry k_1(\n.param .u64 .ptr .global .align 16 a,\n.param .u32 m,\n\
             .param .align 8 .b8 s[24]\n)\n{}\n.entry other ()\n{}\n.entry odd(.param .weird x)\n",
        );
        assert_eq!(
            entries,
            vec![
                ("k_1".to_string(), Some(vec![8, 4, 24])),
                ("other".to_string(), Some(vec![])),
                ("odd".to_string(), None),
            ]
        );
        let dir = scratch_folder("entry");
        std::fs::write(
            dir.join("k.ptx"),
            ".version 8.0\n.target sm_80\n.visible .entry k(\n)\n{ ret; }\n",
        )
        .unwrap();
        let ptx = GOOD.replace("{ source = \"k.cu\" }", "{ ptx = \"k.ptx\" }");
        std::fs::write(
            dir.join("kernel.toml"),
            ptx.replace("entry = \"k\"", "entry = \"kk\""),
        )
        .unwrap();
        let spec = ExternalSpec::parse(&format!("ext:{}", dir.join("kernel.toml").display()))
            .unwrap()
            .unwrap();
        let e = build_error(&spec, "no such entry");
        assert!(
            e.contains("entry: `kk` is not a kernel of") && e.contains("(it has k;"),
            "{e}"
        );
        // The entry takes no parameters; the manifest lists ten.
        std::fs::write(dir.join("kernel.toml"), &ptx).unwrap();
        let e = build_error(&spec, "a count");
        assert!(
            e.contains("params: the manifest lists 10 parameters") && e.contains("takes 0 of []"),
            "{e}"
        );
        let sizes = [8, 8, 8, 4, 4, 4, 4, 8, 8, 4];
        let params: Vec<String> = (sizes.iter().enumerate())
            .map(|(i, s)| format!(".param .b{} p{i}", s * 8))
            .collect();
        std::fs::write(
            dir.join("k.ptx"),
            format!(
                ".version 8.0\n.target sm_80\n.visible .entry k(\n{}\n)\n{{ ret; }}\n",
                params.join(",\n")
            ),
        )
        .unwrap();
        let built = spec.build("entry", DType::F16).unwrap();
        assert_eq!(built.compiled.cubin.last(), Some(&0));
        if !crate::gpu::probe::nvrtc_available() {
            assert!(
                !crate::settings::nvrtc_required(),
                "GEMM_ABLATE_REQUIRE_NVRTC=1 and no NVRTC"
            );
            println!("skipped the NVRTC half: libnvrtc.so.13 not found");
            return;
        }
        std::fs::write(dir.join("k.cu"), "__global__ void k() {}\n").unwrap();
        std::fs::write(dir.join("kernel.toml"), GOOD).unwrap();
        let e = build_error(&spec, "a mangled name");
        assert!(
            e.contains("entry: `k` is not a kernel of") && e.contains("_Z1kv"),
            "{e}"
        );
        // A source's parameters are read from the PTX NVRTC made: one too few is caught without a GPU.
        std::fs::write(
            dir.join("k.cu"),
            "extern \"C\" __global__ void k(const void* a) {}\n",
        )
        .unwrap();
        let e = build_error(&spec, "a count");
        assert!(
            e.contains("params: the manifest lists 10") && e.contains("takes 1 of [8] bytes"),
            "{e}"
        );
    }

    #[test]
    fn the_peers_are_the_manifests_that_say_so() {
        let peers = peers();
        assert!(peers.contains(&"ext:cute_hopper".to_string()), "{peers:?}");
        assert!(
            peers.contains(&"ext:triton_persistent".to_string()),
            "{peers:?}"
        );
        assert!(!peers.contains(&"ext:mma_tile".to_string()), "{peers:?}");
        assert!(listing().contains("(a peer: in the main job)"));
    }

    #[test]
    fn a_source_is_compiled_for_the_gpus_target_where_that_runs_its_arch() {
        let a = |s: &str| Arch::parse(s).unwrap();
        assert_eq!(source_target(a("sm_80"), Arch::HOPPER), Arch::HOPPER);
        assert_eq!(source_target(a("sm_80"), a("sm_89")), a("sm_89"));
        assert_eq!(source_target(a("sm_90a"), Arch::HOPPER), Arch::HOPPER);
        assert_eq!(source_target(a("sm_100a"), Arch::HOPPER), a("sm_100a"));
        assert_eq!(source_target(a("sm_90"), a("sm_89")), a("sm_90"));
    }

    #[test]
    fn tensor_map_parameters_parse_plan_and_name_their_errors() {
        let text = GOOD
            .replace(
                "\"null\", \"scratch(M * 4)\"",
                "\"tma(A, BM, 64, 128B)\", \"tma( B , 32, 16, 32B )\"",
            )
            .replace("K % 32 == 0", "K % 4 == 0");
        let m = Manifest::load(&manifest_file("tma", &text)).unwrap();
        assert_eq!(m.param_sizes(), vec![8, 8, 8, 4, 4, 4, 4, 128, 128, 4]);
        let values = m.switch_values(&[]).unwrap();
        let plan = m
            .plan(&values, &Shape::new("s", 256, 512, 200), DType::F16, 768)
            .unwrap();
        let PlannedParam::Tma { operand, map } = &plan.params[7] else {
            panic!("{:?}", plan.params[7])
        };
        assert_eq!(*operand, MapOperand::A);
        assert_eq!(
            *map,
            tma::operand(256, 200, 128, 64, Swizzle::B128).unwrap()
        );
        let PlannedParam::Tma { operand, map } = &plan.params[8] else {
            panic!("{:?}", plan.params[8])
        };
        assert_eq!(*operand, MapOperand::B);
        assert_eq!(
            (map.dims.clone(), map.box_dims.clone(), map.swizzle),
            (vec![200, 512], vec![16, 32], Swizzle::B32)
        );
        for (to, says) in [
            (
                "\"tma(A, 128, 64)\"",
                "params[7]: `tma(A, 128, 64)`: tma takes 4 arguments",
            ),
            (
                "\"tma(C, 128, 64, 128B)\"",
                "params[7]: `tma(C, 128, 64, 128B)`: a tensor map covers A or B",
            ),
            (
                "\"tma(A, 128, 64, none)\"",
                "params[7]: `tma(A, 128, 64, none)`: swizzle `none`: 32B, 64B or 128B",
            ),
            (
                "\"tma(A, TILE, 64, 128B)\"",
                "params[7]: `TILE`: unknown name `TILE`",
            ),
        ] {
            let e = broken("tma-bad", "\"null\"", to);
            assert!(e.contains(says), "{to}: {e}");
        }
        // Boxes the driver would refuse, and a K whose rows are not 16-byte multiples, are planning errors.
        for (from, to, shape, says) in [
            (
                "tma(A, BM, 64, 128B)",
                "tma(A, BM, 128, 128B)",
                (256, 512, 200),
                "a box of 128 rows by 128 columns",
            ),
            (
                "tma(A, BM, 64, 128B)",
                "tma(A, 512, 64, 128B)",
                (256, 512, 200),
                "rows 1 to 256",
            ),
            (
                "tma(A, BM, 64, 128B)",
                "tma(A, BM, 4, 128B)",
                (256, 512, 200),
                "multiple of 16",
            ),
            (
                "tma(A, BM, 64, 128B)",
                "tma(A, BM, 64, 128B)",
                (256, 512, 100),
                "strides must be multiples of 16",
            ),
        ] {
            let m = Manifest::load(&manifest_file("tma-plan", &text.replace(from, to))).unwrap();
            let e = m
                .plan(
                    &values,
                    &Shape::new("s", shape.0, shape.1, shape.2),
                    DType::F16,
                    768,
                )
                .unwrap_err()
                .to_string();
            assert!(e.contains("params[7]") && e.contains(says), "{to}: {e}");
        }
    }

    /// kernels/ext/cute_hopper/intercept/record.txt: what the CuTe DSL's compiled host launcher asked of the driver
    /// (build.sh --intercept, a stub libcuda, no GPU), for one problem per dtype.
    struct Recorded {
        dtype: DType,
        shape: Shape,
        ldc: usize,
        lines: Vec<String>,
    }

    fn recorded() -> Vec<Recorded> {
        let text = include_str!("../../../kernels/ext/cute_hopper/intercept/record.txt");
        let mut out: Vec<Recorded> = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("problem ") {
                let words: Vec<&str> = rest.split_whitespace().collect();
                let num = |key: &str| -> usize {
                    let w = words.iter().find_map(|w| w.strip_prefix(key)).unwrap();
                    w.parse().unwrap()
                };
                out.push(Recorded {
                    dtype: DType::parse(words[0]).unwrap(),
                    shape: Shape::new("recorded", num("M="), num("N="), num("K=")),
                    ldc: num("ldc="),
                    lines: Vec::new(),
                });
            } else {
                out.last_mut().unwrap().lines.push(line.to_string());
            }
        }
        out
    }

    #[test]
    fn the_cute_dsl_manifests_launch_as_the_dsls_own_launcher_does() {
        let records = recorded();
        assert_eq!(records.len(), 2, "one recorded problem per dtype");
        for r in records {
            let name = match r.dtype {
                DType::F16 => "ext:cute_hopper",
                DType::BF16 => "ext:cute_hopper_bf16",
                DType::E4M3(_) | DType::E4M3F16(_) => panic!("no FP8 launch was recorded"),
            };
            let (m, values) = ExternalSpec::parse(name).unwrap().unwrap().load().unwrap();
            let plan = m.plan(&values, &r.shape, r.dtype, r.ldc).unwrap();
            let find = |prefix: &str| -> Vec<&str> {
                (r.lines.iter())
                    .filter_map(|l| l.strip_prefix(prefix))
                    .collect()
            };
            assert_eq!(find("kernel "), vec![m.entry.as_str()], "{name}: entry");
            let launch = format!(
                "grid={},{},{} block={},{},{} shared={}",
                plan.grid[0],
                plan.grid[1],
                plan.grid[2],
                plan.block[0],
                plan.block[1],
                plan.block[2],
                plan.shared_memory
            );
            assert_eq!(find("launch "), vec![launch.as_str()], "{name}: launch");
            // No cluster: the launcher sets only cooperative (2) and programmatic serialization (6), both off.
            assert_eq!(plan.cluster, [1, 1, 1]);
            let mut attributes = find("attribute ");
            attributes.sort();
            assert_eq!(attributes, vec!["2 0", "6 0"], "{name}: launch attributes");
            let encodes = find("encode ");
            let params = find("param ");
            assert_eq!(params.len(), m.params.len(), "{name}: parameter count");
            for (i, (recorded, planned)) in params.iter().zip(&plan.params).enumerate() {
                let words: Vec<&str> = recorded.split_whitespace().collect();
                assert_eq!(words[0], i.to_string());
                assert_eq!(
                    words[1],
                    format!("bytes={}", m.params[i].size()),
                    "{name}: params[{i}]'s size"
                );
                match (planned, words[2].split_once('=').unwrap()) {
                    (PlannedParam::Tma { operand, map }, ("map", n)) => {
                        let encode = encodes
                            .iter()
                            .find_map(|e| e.strip_prefix(&format!("{n} ")))
                            .unwrap();
                        let operand = match operand {
                            MapOperand::A => "A",
                            MapOperand::B => "B",
                        };
                        let args = tma::encode_args(map, r.dtype).numbers();
                        let (rest, dims) = args.split_once(" dims=").unwrap();
                        let ours = format!("{rest} operand={operand} dims={dims}");
                        assert_eq!(encode, ours, "{name}: params[{i}]'s tensor map");
                    }
                    (PlannedParam::C, ("pointer", "C")) => {}
                    (PlannedParam::Value(v), ("value", recorded)) => {
                        assert_eq!(v.to_string(), recorded, "{name}: params[{i}]'s value")
                    }
                    (p, w) => panic!("{name}: params[{i}] is {p:?} here, {w:?} in the record"),
                }
            }
        }
    }

    /// A damaged copy of `text`: characters dropped, inserted or repeated, lines swapped or cut.
    pub(crate) fn damaged(text: &str, rng: &mut Rng) -> String {
        const NOISE: &[&str] = &[
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            "\"",
            "=",
            ",",
            ":",
            "\n",
            "#",
            "-",
            "9999999999999999999",
            "0",
            "/",
            "%",
            "cdiv(",
            "min(",
            "A",
            "scratch(",
            "i32:",
            "x",
            "ü",
            "\\",
            "'''",
            "\"\"\"",
            " ",
            "..",
        ];
        let mut chars: Vec<char> = text.chars().collect();
        for _ in 0..1 + rng.next_u64() % 4 {
            let at = (rng.next_u64() as usize) % (chars.len() + 1);
            match rng.next_u64() % 5 {
                0 if !chars.is_empty() => {
                    let end = (at + 1 + (rng.next_u64() % 12) as usize).min(chars.len());
                    chars.drain(at.min(chars.len())..end);
                }
                1 | 2 => {
                    let piece = NOISE[(rng.next_u64() as usize) % NOISE.len()];
                    for (i, c) in piece.chars().enumerate() {
                        chars.insert(at + i, c);
                    }
                }
                3 => {
                    let end = (at + (rng.next_u64() % 20) as usize).min(chars.len());
                    let copy: Vec<char> = chars[at.min(end)..end].to_vec();
                    for (i, c) in copy.into_iter().enumerate() {
                        chars.insert(end + i, c);
                    }
                }
                _ => chars.truncate(at),
            }
        }
        chars.into_iter().collect()
    }

    #[test]
    fn damaged_manifests_and_expressions_never_panic() {
        let dir = scratch_folder("fuzz");
        std::fs::write(dir.join("k.cu"), "").unwrap();
        std::fs::write(dir.join("mma_tile.cu"), "").unwrap();
        let example = include_str!("../../../kernels/ext/mma_tile/kernel.toml");
        let mut rng = Rng::new(38);
        let shapes = [
            Shape::new("a", 256, 256, 64),
            Shape::new("b", 1, 7, 3),
            Shape::new("c", 8192, 28672, 8192),
        ];
        let mut loaded = 0;
        for i in 0..600 {
            let base = if i % 2 == 0 { GOOD } else { example };
            let text = damaged(base, &mut rng);
            let path = dir.join("kernel.toml");
            let Ok(m) = Manifest::from_text(&path, &text) else {
                continue;
            };
            loaded += 1;
            let Ok(values) = m.switch_values(&[]) else {
                continue;
            };
            for s in &shapes {
                for dtype in [DType::F16, DType::BF16] {
                    let _ = m.plan(&values, s, dtype, s.n);
                }
            }
        }
        assert!(
            loaded > 0,
            "no damaged manifest loaded: the damage is too heavy to test planning"
        );
        for _ in 0..2000 {
            let text = damaged("min(cdiv(M, BM), 3) * (N % 7 + -K) >= 2 || !M", &mut rng);
            if let Ok(e) = Expr::parse(&text) {
                let _ = e.eval(&|n| (n.len() < 3).then_some(i64::MAX));
                let _ = e.eval(&|_| Some(0));
            }
        }
    }
}
