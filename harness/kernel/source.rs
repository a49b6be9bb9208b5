//! Kernel sources: the embedded CUDA files, the self-contained program handed to NVRTC for each variant, and
//! the same program with its switches resolved (`show`), so that a rung reads alone and a diff between rungs
//! shows only what changed.

use crate::error::{config_err, Result};
use crate::kernel::config::GemmConfig;
use crate::kernel::problem::DType;

pub const PRIMITIVES: &str = include_str!("../../kernels/primitives.cuh");
pub const GEMM: &str = include_str!("../../kernels/gemm.cu");
pub const UTIL: &str = include_str!("../../kernels/util.cu");
pub const LOAD_PATH: &str = include_str!("../../kernels/load_path.cu");
pub const CLOCK_AFTER: &str = include_str!("../../kernels/clock_after.cu");
pub const STREAM_READ: &str = include_str!("../../kernels/stream_read.cu");
pub const SKINNY: &str = include_str!("../../kernels/skinny.cu");

/// Defines, then the primitives header, then the kernel: what NVRTC compiles.
pub fn program(defines: &[(&str, String)], kernel: &str) -> String {
    let mut s = String::new();
    for (name, value) in defines {
        s.push_str(&format!("#define {name} {value}\n"));
    }
    s.push_str(PRIMITIVES);
    s.push('\n');
    s.push_str(kernel);
    s
}

pub fn gemm_program(config: &GemmConfig, dtype: DType) -> String {
    program(&config.defines(dtype), GEMM)
}

/// Defines the kernels outside the ladder need beside the data type: every switch the primitives header reads, the
/// ladder's mbarrier waits off (so that `show` can resolve the header for them too).
pub fn util_defines(dtype: DType) -> Vec<(&'static str, String)> {
    let fp8 = dtype.is_fp8().then(|| ("AB_E4M3", "1".to_string()));
    fp8.into_iter()
        .chain(util_defines_16(dtype.output()))
        .collect()
}

/// `util_defines` for a 16-bit type.
fn util_defines_16(dtype: DType) -> Vec<(&'static str, String)> {
    vec![
        ("DTYPE_BF16", u32::from(dtype == DType::BF16).to_string()),
        ("BOUNDED", "0".into()),
        ("HANG_TIMEOUT_NS", "0ull".into()),
        ("WAIT_SUSPEND", "0".into()),
        ("WAIT_SCOPE", "0".into()),
    ]
}

/// The program with every `#if` on a known define evaluated and removed: only the code this variant compiles.
/// With `everything` false (what `show` prints), also only what its `__global__` kernel uses: the primitives
/// and helpers it calls (transitively), the defines its code reads, and none of the files' header comments.
pub fn resolved_program(
    defines: &[(&str, String)],
    kernel: &str,
    everything: bool,
) -> Result<String> {
    resolved_program_of(defines, kernel, "gemm.cu", everything)
}

/// `resolved_program` for a kernel from `file` (kernels/`file`).
pub fn resolved_program_of(
    defines: &[(&str, String)],
    kernel: &str,
    file: &str,
    everything: bool,
) -> Result<String> {
    let primitives = resolve_conditionals(PRIMITIVES, defines)?;
    let kernel = resolve_conditionals(kernel, defines)?;
    if everything {
        let mut out = String::from("// Switches of this variant:\n");
        for (name, value) in defines {
            out.push_str(&format!("#define {name} {value}\n"));
        }
        out.push('\n');
        out.push_str(&primitives);
        out.push('\n');
        out.push_str(&kernel);
        return Ok(out);
    }
    let mut chunks = chunks(&without_file_header(&primitives));
    let from_kernel = chunks.len();
    chunks.extend(self::chunks(&without_file_header(&kernel)));
    let used = reachable(&chunks);
    let body: String = chunks
        .iter()
        .zip(&used)
        .filter(|(_, u)| **u)
        .map(|(c, _)| c.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let words = identifiers(&body);
    let mut out = String::from("// Switches this kernel reads:\n");
    for (name, value) in defines.iter().filter(|(n, _)| words.contains(*n)) {
        out.push_str(&format!("#define {name} {value}\n"));
    }
    let primitives_used = used[..from_kernel].iter().filter(|u| **u).count();
    out.push_str(&format!(
        "\n// From primitives.cuh: the {primitives_used} of {from_kernel} blocks this kernel uses (`show --all` prints every one).\n"
    ));
    for (i, c) in chunks.iter().enumerate() {
        if !used[i] {
            continue;
        }
        if i == from_kernel {
            out.push_str(&format!("\n// From {file}, resolved for this variant:\n"));
        }
        out.push('\n');
        out.push_str(&c.text);
        out.push('\n');
    }
    Ok(out)
}

/// A run of source lines between blank lines at file level (a function, a struct, a group of defines), with the
/// names it defines.
struct Chunk {
    text: String,
    defines: Vec<String>,
    is_entry: bool,
}

/// Splits resolved source into chunks; comment-only chunks (file headers, section rulers) are dropped.
fn chunks(src: &str) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut lines: Vec<&str> = Vec::new();
    let mut depth = 0i32;
    let flush = |lines: &mut Vec<&str>, out: &mut Vec<Chunk>| {
        if lines.is_empty() {
            return;
        }
        let text = lines.join("\n");
        lines.clear();
        let code: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect();
        if code.is_empty() {
            return;
        }
        let mut defines = Vec::new();
        for l in &code {
            let t = l.trim_start();
            if let Some(rest) = t.strip_prefix("#define ") {
                defines.push(first_identifier(rest));
            } else if let Some(rest) = t.strip_prefix("typedef ") {
                let name = rest
                    .trim_end_matches(';')
                    .split_whitespace()
                    .last()
                    .unwrap_or("");
                defines.push(name.to_string());
            } else if let Some(rest) = t.strip_prefix("struct ") {
                let rest = rest.trim_start_matches("__align__(64) ");
                defines.push(first_identifier(rest));
            } else if !l.starts_with(' ') && t.contains('(') && !t.starts_with("static_assert") {
                // A function at file level: the name just before the first parenthesis.
                let head = &t[..t.find('(').unwrap_or(0)];
                defines.push(head.split_whitespace().last().unwrap_or("").to_string());
            }
        }
        out.push(Chunk {
            is_entry: text.contains("__global__"),
            text,
            defines: defines.into_iter().filter(|d| !d.is_empty()).collect(),
        });
    };
    for line in src.lines() {
        if line.trim().is_empty() && depth == 0 {
            flush(&mut lines, &mut out);
            continue;
        }
        lines.push(line);
        if !line.trim_start().starts_with("//") {
            depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
        }
    }
    flush(&mut lines, &mut out);
    out
}

/// The source without its leading comment block (a file header describes every switch, not this variant's)
/// and without section rulers (`// ----- TMA`), which no longer rule over anything once blocks are left out.
fn without_file_header(src: &str) -> String {
    src.lines()
        .skip_while(|l| l.trim_start().starts_with("//"))
        .filter(|l| !l.trim_start().starts_with("// ----"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn first_identifier(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// Every identifier in a piece of code, comments left out (a name in a comment is not a use).
fn identifiers(code: &str) -> std::collections::HashSet<&str> {
    code.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .flat_map(|l| l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
        .filter(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        })
        .collect()
}

/// Which chunks the entry chunks use, transitively, by the names they define. Chunks that define nothing
/// (a static_assert) are kept with the entry.
fn reachable(chunks: &[Chunk]) -> Vec<bool> {
    let mut used: Vec<bool> = chunks
        .iter()
        .map(|c| c.is_entry || c.defines.is_empty())
        .collect();
    loop {
        let words: std::collections::HashSet<&str> = chunks
            .iter()
            .zip(&used)
            .filter(|(_, u)| **u)
            .flat_map(|(c, _)| identifiers(&c.text))
            .collect();
        let mut changed = false;
        for (c, u) in chunks.iter().zip(used.iter_mut()) {
            if !*u && c.defines.iter().any(|d| words.contains(d.as_str())) {
                *u = true;
                changed = true;
            }
        }
        if !changed {
            return used;
        }
    }
}

/// One level of `#if`/`#elif`/`#else`/`#endif` nesting state.
struct Frame {
    parent_active: bool,
    taken: bool,
    active: bool,
}

/// Evaluates conditional directives whose expressions use only the given defines; everything else is kept.
pub fn resolve_conditionals(src: &str, defines: &[(&str, String)]) -> Result<String> {
    let mut out = String::new();
    let mut stack: Vec<Frame> = Vec::new();
    let active = |stack: &Vec<Frame>| stack.last().map(|f| f.active).unwrap_or(true);
    for (lineno, line) in src.lines().enumerate() {
        let t = line.trim_start();
        let directive = t.strip_prefix('#').map(|d| d.trim_start());
        match directive {
            Some(d)
                if d.starts_with("if ") || d.starts_with("ifdef ") || d.starts_with("ifndef ") =>
            {
                let parent = active(&stack);
                // As the preprocessor does, a condition inside a skipped group is not evaluated (it may name a
                // define only the taken group's programs have, such as FP8's SCALES).
                let value = if !parent {
                    false
                } else if let Some(name) = d.strip_prefix("ifdef ") {
                    defines.iter().any(|(n, _)| *n == name.trim())
                } else if let Some(name) = d.strip_prefix("ifndef ") {
                    !defines.iter().any(|(n, _)| *n == name.trim())
                } else {
                    eval(&d[3..], defines)
                        .or_else(|e| config_err(format!("line {}: {e}", lineno + 1)))?
                        != 0
                };
                stack.push(Frame {
                    parent_active: parent,
                    taken: value,
                    active: parent && value,
                });
            }
            Some(d) if d.starts_with("elif ") => {
                let f = stack
                    .last_mut()
                    .ok_or_else(|| crate::error::Error::Config("#elif without #if".into()))?;
                let value = f.parent_active
                    && !f.taken
                    && eval(&d[5..], defines)
                        .or_else(|e| config_err(format!("line {}: {e}", lineno + 1)))?
                        != 0;
                f.active = f.parent_active && !f.taken && value;
                f.taken |= value;
            }
            Some(d) if d.starts_with("else") => {
                let f = stack
                    .last_mut()
                    .ok_or_else(|| crate::error::Error::Config("#else without #if".into()))?;
                f.active = f.parent_active && !f.taken;
                f.taken = true;
            }
            Some(d) if d.starts_with("endif") => {
                stack
                    .pop()
                    .ok_or_else(|| crate::error::Error::Config("#endif without #if".into()))?;
            }
            _ => {
                if active(&stack) {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
    }
    if !stack.is_empty() {
        return config_err("unterminated #if");
    }
    Ok(out)
}

/// Integer expression evaluator for directive conditions: identifiers (the defines), numbers, parentheses,
/// `! * / + - < <= > >= == != && ||` with C precedence.
pub fn eval(expr: &str, defines: &[(&str, String)]) -> std::result::Result<i64, String> {
    let expr = match expr.find("//") {
        Some(i) => &expr[..i],
        None => expr,
    };
    let tokens = tokenize(expr)?;
    let mut p = Parser {
        tokens,
        pos: 0,
        defines,
    };
    let v = p.binary(0)?;
    if p.pos != p.tokens.len() {
        return Err(format!(
            "unexpected `{}` in `{}`",
            p.tokens[p.pos],
            expr.trim()
        ));
    }
    Ok(v)
}

fn tokenize(s: &str) -> std::result::Result<Vec<String>, String> {
    let chars: Vec<char> = s.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(chars[start..i].iter().collect());
        } else {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            if ["&&", "||", "==", "!=", "<=", ">="].contains(&two.as_str()) {
                tokens.push(two);
                i += 2;
            } else if "()!<>+-*/".contains(c) {
                tokens.push(c.to_string());
                i += 1;
            } else {
                return Err(format!(
                    "unsupported character `{c}` in directive `{}`",
                    s.trim()
                ));
            }
        }
    }
    Ok(tokens)
}

struct Parser<'a> {
    tokens: Vec<String>,
    pos: usize,
    defines: &'a [(&'a str, String)],
}

const LEVELS: [&[&str]; 6] = [
    &["||"],
    &["&&"],
    &["==", "!="],
    &["<", "<=", ">", ">="],
    &["+", "-"],
    &["*", "/"],
];

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.pos).map(|s| s.as_str())
    }
    fn binary(&mut self, level: usize) -> std::result::Result<i64, String> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        while let Some(op) = self
            .peek()
            .filter(|t| LEVELS[level].contains(t))
            .map(str::to_string)
        {
            self.pos += 1;
            let rhs = self.binary(level + 1)?;
            lhs = match op.as_str() {
                "||" => i64::from(lhs != 0 || rhs != 0),
                "&&" => i64::from(lhs != 0 && rhs != 0),
                "==" => i64::from(lhs == rhs),
                "!=" => i64::from(lhs != rhs),
                "<" => i64::from(lhs < rhs),
                "<=" => i64::from(lhs <= rhs),
                ">" => i64::from(lhs > rhs),
                ">=" => i64::from(lhs >= rhs),
                "+" => lhs + rhs,
                "-" => lhs - rhs,
                "*" => lhs * rhs,
                _ => lhs.checked_div(rhs).ok_or("division by zero")?,
            };
        }
        Ok(lhs)
    }
    fn unary(&mut self) -> std::result::Result<i64, String> {
        let t = self.peek().ok_or("expression ends early")?.to_string();
        self.pos += 1;
        match t.as_str() {
            "!" => Ok(i64::from(self.unary()? == 0)),
            "-" => Ok(-self.unary()?),
            "(" => {
                let v = self.binary(0)?;
                if self.peek() != Some(")") {
                    return Err("missing `)`".into());
                }
                self.pos += 1;
                Ok(v)
            }
            _ if t.chars().next().is_some_and(|c| c.is_ascii_digit()) => {
                let digits: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
                digits.parse().map_err(|_| format!("bad number `{t}`"))
            }
            _ => {
                let (_, value) = self
                    .defines
                    .iter()
                    .find(|(n, _)| *n == t)
                    .ok_or_else(|| format!("`{t}` is not a switch of this kernel"))?;
                let digits: String = value.chars().take_while(|c| c.is_ascii_digit()).collect();
                digits
                    .parse()
                    .map_err(|_| format!("switch {t} = {value} is not a number"))
            }
        }
    }
}
