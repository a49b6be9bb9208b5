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

/// Defines the utility kernels need beside the data type (the primitives header reads these).
pub fn util_defines(dtype: DType) -> Vec<(&'static str, String)> {
    vec![
        ("DTYPE_BF16", u32::from(dtype == DType::BF16).to_string()),
        ("BOUNDED_WAITS", "0".into()),
        ("HANG_TIMEOUT_NS", "0ull".into()),
    ]
}

/// The program with every `#if` on a known define evaluated and removed: only the code this variant compiles.
pub fn resolved_program(defines: &[(&str, String)], kernel: &str) -> Result<String> {
    let mut out = String::from("// Switches of this variant:\n");
    for (name, value) in defines {
        out.push_str(&format!("#define {name} {value}\n"));
    }
    out.push('\n');
    out.push_str(&resolve_conditionals(PRIMITIVES, defines)?);
    out.push('\n');
    out.push_str(&resolve_conditionals(kernel, defines)?);
    Ok(out)
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
                let value = if let Some(name) = d.strip_prefix("ifdef ") {
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
                let value = eval(&d[5..], defines)
                    .or_else(|e| config_err(format!("line {}: {e}", lineno + 1)))?
                    != 0;
                let f = stack
                    .last_mut()
                    .ok_or_else(|| crate::error::Error::Config("#elif without #if".into()))?;
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
