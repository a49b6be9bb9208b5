//! The expressions of an external kernel's manifest (harness/families/external/manifest.rs): whole numbers in 64 bits,
//! `+ - * / %`, parentheses, `min`, `max`, `cdiv` (division rounded up), comparisons, and `&& || !` for `requires`.
//! Overflow, division by zero and nesting past a limit are errors, never panics or wrapped values.

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Func {
    Min,
    Max,
    Cdiv,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Num(i64),
    Name(String),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Call(Func, Vec<Expr>),
}

/// Nesting deeper than this is refused: a damaged file must not overflow the parser's stack.
const MAX_DEPTH: usize = 64;

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Num(i64),
    Name(String),
    Op(&'static str),
}

fn tokens(text: &str) -> std::result::Result<Vec<Token>, String> {
    const OPS: [&str; 17] = [
        "==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "/", "%", "(", ")", ",", "<", ">", "!",
    ];
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().filter(|&&c| c != '_').collect();
            let n = word
                .parse::<i64>()
                .map_err(|_| format!("`{word}` is not a whole number that fits 64 bits"))?;
            out.push(Token::Num(n));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Name(chars[start..i].iter().collect()));
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let op = OPS
                .iter()
                .find(|op| rest.starts_with(**op))
                .ok_or_else(|| format!("unexpected character `{c}`"))?;
            out.push(Token::Op(op));
            i += op.len();
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn peek_op(&self) -> Option<&'static str> {
        match self.tokens.get(self.at) {
            Some(Token::Op(op)) => Some(op),
            _ => None,
        }
    }
    fn eat(&mut self, op: &str) -> bool {
        if self.peek_op() == Some(op) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, op: &str) -> std::result::Result<(), String> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(format!("expected `{op}` {}", self.where_()))
        }
    }
    fn where_(&self) -> String {
        match self.tokens.get(self.at) {
            None => "at the end".into(),
            Some(Token::Num(n)) => format!("before `{n}`"),
            Some(Token::Name(n)) => format!("before `{n}`"),
            Some(Token::Op(o)) => format!("before `{o}`"),
        }
    }
    fn deeper(&mut self) -> std::result::Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("nested more than {MAX_DEPTH} deep"));
        }
        Ok(())
    }
    fn binary_chain(
        &mut self,
        ops: &[(&str, BinOp)],
        next: fn(&mut Parser) -> std::result::Result<Expr, String>,
    ) -> std::result::Result<Expr, String> {
        let mut left = next(self)?;
        'outer: loop {
            for (text, op) in ops {
                if self.eat(text) {
                    let right = next(self)?;
                    left = Expr::Binary(*op, Box::new(left), Box::new(right));
                    continue 'outer;
                }
            }
            return Ok(left);
        }
    }
    fn or(&mut self) -> std::result::Result<Expr, String> {
        self.binary_chain(&[("||", BinOp::Or)], Parser::and)
    }
    fn and(&mut self) -> std::result::Result<Expr, String> {
        self.binary_chain(&[("&&", BinOp::And)], Parser::comparison)
    }
    fn comparison(&mut self) -> std::result::Result<Expr, String> {
        let left = self.sum()?;
        let ops = [
            ("==", BinOp::Eq),
            ("!=", BinOp::Ne),
            ("<=", BinOp::Le),
            (">=", BinOp::Ge),
            ("<", BinOp::Lt),
            (">", BinOp::Gt),
        ];
        for (text, op) in ops {
            if self.eat(text) {
                let right = self.sum()?;
                return Ok(Expr::Binary(op, Box::new(left), Box::new(right)));
            }
        }
        Ok(left)
    }
    fn sum(&mut self) -> std::result::Result<Expr, String> {
        self.binary_chain(&[("+", BinOp::Add), ("-", BinOp::Sub)], Parser::term)
    }
    fn term(&mut self) -> std::result::Result<Expr, String> {
        self.binary_chain(
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)],
            Parser::unary,
        )
    }
    fn unary(&mut self) -> std::result::Result<Expr, String> {
        self.deeper()?;
        let e = if self.eat("-") {
            Expr::Neg(Box::new(self.unary()?))
        } else if self.eat("!") {
            Expr::Not(Box::new(self.unary()?))
        } else {
            self.primary()?
        };
        self.depth -= 1;
        Ok(e)
    }
    fn primary(&mut self) -> std::result::Result<Expr, String> {
        match self.tokens.get(self.at).cloned() {
            Some(Token::Num(n)) => {
                self.at += 1;
                Ok(Expr::Num(n))
            }
            Some(Token::Name(name)) => {
                self.at += 1;
                if !self.eat("(") {
                    return Ok(Expr::Name(name));
                }
                let func = match name.as_str() {
                    "min" => Func::Min,
                    "max" => Func::Max,
                    "cdiv" => Func::Cdiv,
                    _ => return Err(format!("unknown function `{name}` (min, max, cdiv)")),
                };
                let mut args = vec![self.or()?];
                while self.eat(",") {
                    args.push(self.or()?);
                }
                self.expect(")")?;
                if args.len() != 2 {
                    return Err(format!("`{name}` takes 2 arguments, got {}", args.len()));
                }
                Ok(Expr::Call(func, args))
            }
            Some(Token::Op("(")) => {
                self.at += 1;
                let e = self.or()?;
                self.expect(")")?;
                Ok(e)
            }
            _ => Err(format!(
                "expected a number, a name or `(` {}",
                self.where_()
            )),
        }
    }
}

impl Expr {
    /// Parses an expression; the error says what is wrong (the caller names the file and field).
    pub fn parse(text: &str) -> std::result::Result<Expr, String> {
        let mut p = Parser {
            tokens: tokens(text)?,
            at: 0,
            depth: 0,
        };
        if p.tokens.is_empty() {
            return Err("empty expression".into());
        }
        let e = p.or()?;
        if p.at < p.tokens.len() {
            return Err(format!("unexpected text {}", p.where_()));
        }
        Ok(e)
    }

    /// Every name the expression reads.
    pub fn names(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_names(&mut out);
        out
    }
    fn collect_names(&self, out: &mut Vec<String>) {
        match self {
            Expr::Num(_) => {}
            Expr::Name(n) => out.push(n.clone()),
            Expr::Neg(e) | Expr::Not(e) => e.collect_names(out),
            Expr::Binary(_, a, b) => {
                a.collect_names(out);
                b.collect_names(out);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.collect_names(out)),
        }
    }

    /// The value, with `vars` giving each name's; overflow and division by zero are errors, never panics.
    pub fn eval(&self, vars: &dyn Fn(&str) -> Option<i64>) -> std::result::Result<i64, String> {
        let overflow = || "arithmetic overflow".to_string();
        Ok(match self {
            Expr::Num(n) => *n,
            Expr::Name(n) => vars(n).ok_or_else(|| format!("unknown name `{n}`"))?,
            Expr::Neg(e) => e.eval(vars)?.checked_neg().ok_or_else(overflow)?,
            Expr::Not(e) => (e.eval(vars)? == 0) as i64,
            Expr::Binary(op, a, b) => {
                let (x, y) = (a.eval(vars)?, b.eval(vars)?);
                match op {
                    BinOp::Add => x.checked_add(y).ok_or_else(overflow)?,
                    BinOp::Sub => x.checked_sub(y).ok_or_else(overflow)?,
                    BinOp::Mul => x.checked_mul(y).ok_or_else(overflow)?,
                    BinOp::Div | BinOp::Rem if y == 0 => return Err("division by zero".into()),
                    BinOp::Div => x.checked_div(y).ok_or_else(overflow)?,
                    BinOp::Rem => x.checked_rem(y).ok_or_else(overflow)?,
                    BinOp::Eq => (x == y) as i64,
                    BinOp::Ne => (x != y) as i64,
                    BinOp::Lt => (x < y) as i64,
                    BinOp::Le => (x <= y) as i64,
                    BinOp::Gt => (x > y) as i64,
                    BinOp::Ge => (x >= y) as i64,
                    BinOp::And => (x != 0 && y != 0) as i64,
                    BinOp::Or => (x != 0 || y != 0) as i64,
                }
            }
            Expr::Call(f, args) => {
                let (x, y) = (args[0].eval(vars)?, args[1].eval(vars)?);
                match f {
                    Func::Min => x.min(y),
                    Func::Max => x.max(y),
                    Func::Cdiv if y <= 0 => {
                        return Err(format!("cdiv({x}, {y}): the divisor must be positive"))
                    }
                    Func::Cdiv => x.div_euclid(y) + (x.rem_euclid(y) != 0) as i64,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str) -> std::result::Result<i64, String> {
        Expr::parse(text)?.eval(&|n| match n {
            "M" => Some(4096),
            "N" => Some(100),
            "BM" => Some(128),
            _ => None,
        })
    }

    #[test]
    fn expressions_follow_precedence_and_say_what_is_wrong() {
        assert_eq!(eval("1 + 2 * 3").unwrap(), 7);
        assert_eq!(eval("(1 + 2) * 3").unwrap(), 9);
        assert_eq!(eval("10 - 4 - 3").unwrap(), 3);
        assert_eq!(eval("M / BM").unwrap(), 32);
        assert_eq!(eval("cdiv(N, 64)").unwrap(), 2);
        assert_eq!(eval("cdiv(128, 64)").unwrap(), 2);
        assert_eq!(eval("min(M, N) + max(3, -2)").unwrap(), 103);
        assert_eq!(eval("N % 7").unwrap(), 2);
        assert_eq!(eval("-N + 1").unwrap(), -99);
        assert_eq!(eval("M % BM == 0 && N >= 64").unwrap(), 1);
        assert_eq!(eval("N < 64 || !(M != 4096)").unwrap(), 1);
        assert_eq!(eval("1_000").unwrap(), 1000);
        for (bad, says) in [
            ("", "empty"),
            ("1 +", "expected a number"),
            ("(1 + 2", "expected `)`"),
            ("1 2", "unexpected text"),
            ("M $ 2", "unexpected character"),
            ("foo(1, 2)", "unknown function"),
            ("min(1)", "takes 2 arguments"),
            ("X + 1", "unknown name `X`"),
            ("M / (BM - 128)", "division by zero"),
            ("M % 0", "division by zero"),
            ("cdiv(M, 0)", "must be positive"),
            ("9223372036854775807 + 1", "overflow"),
            ("99999999999999999999", "fits 64 bits"),
        ] {
            let e = eval(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
        assert!(eval(&deep).unwrap_err().contains("nested"));
        assert!(eval(&"-".repeat(500)).unwrap_err().contains("nested"));
    }
}
