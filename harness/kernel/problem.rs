//! Problems: data types and the standard shapes (Llama-3-70B linear layers, from the seed).

use serde::{Deserialize, Serialize};

/// A problem's data type: of the operands A and B, with fp32 accumulation; the output C is `output()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DType {
    F16,
    BF16,
    /// FP8 e4m3 operands, dequantized by scales of the given scheme, a bf16 output (issue 40).
    E4M3(Scales),
    /// The same with an fp16 output (`e4m3-f16`, `e4m3-row-f16`, `e4m3-block-f16`).
    E4M3F16(Scales),
}

/// How FP8 operands are dequantized: C = dequant(A) dequant(B)^T. The scheme belongs to the problem (the data a
/// layer holds), so every variant of a comparison, cuBLAS included, takes the same scales.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Scales {
    /// One fp32 scale per tensor.
    Tensor,
    /// One per row: per token of A (M) and per output channel of B (N), applied in the epilogue.
    Row,
    /// DeepSeek-V3's fine-grained scales: one per token per 128 k-elements of A (1x128), one per 128x128 block of B,
    /// applied as each k-block's partial sums are promoted (two-level accumulation).
    Block,
}

impl Scales {
    pub const ALL: [Scales; 3] = [Scales::Tensor, Scales::Row, Scales::Block];
    /// The word a dtype name carries after `e4m3` (none for per-tensor).
    pub fn suffix(self) -> &'static str {
        match self {
            Scales::Tensor => "",
            Scales::Row => "-row",
            Scales::Block => "-block",
        }
    }
    /// The kernel's SCALES define.
    pub fn define(self) -> u32 {
        match self {
            Scales::Tensor => 0,
            Scales::Row => 1,
            Scales::Block => 2,
        }
    }
}

impl DType {
    pub fn name(self) -> &'static str {
        match self {
            DType::F16 => "fp16",
            DType::BF16 => "bf16",
            DType::E4M3(Scales::Tensor) => "e4m3",
            DType::E4M3(Scales::Row) => "e4m3-row",
            DType::E4M3(Scales::Block) => "e4m3-block",
            DType::E4M3F16(Scales::Tensor) => "e4m3-f16",
            DType::E4M3F16(Scales::Row) => "e4m3-row-f16",
            DType::E4M3F16(Scales::Block) => "e4m3-block-f16",
        }
    }
    pub fn parse(s: &str) -> Option<DType> {
        let s = s.to_ascii_lowercase();
        match s.as_str() {
            "fp16" | "f16" | "half" => return Some(DType::F16),
            "bf16" | "bfloat16" => return Some(DType::BF16),
            _ => {}
        }
        // FP8: `e4m3`, `e4m3-row`, `e4m3-block` (also spelled `fp8…` or torch's `float8_e4m3fn…`), each with
        // `-f16` for an fp16 output.
        let rest = ["e4m3", "fp8", "float8_e4m3fn"]
            .iter()
            .find_map(|head| s.strip_prefix(head))?;
        let (rest, f16_out) = match rest.strip_suffix("-f16") {
            Some(r) => (r, true),
            None => (rest, false),
        };
        let scales = Scales::ALL
            .into_iter()
            .find(|scales| scales.suffix() == rest)?;
        Some(if f16_out {
            DType::E4M3F16(scales)
        } else {
            DType::E4M3(scales)
        })
    }
    /// FP8's scaling scheme; None for 16-bit operands.
    pub fn scales(self) -> Option<Scales> {
        match self {
            DType::E4M3(scales) | DType::E4M3F16(scales) => Some(scales),
            _ => None,
        }
    }
    pub fn is_fp8(self) -> bool {
        self.scales().is_some()
    }
    /// Per-tensor FP8, the default FP8 problem.
    pub const FP8: DType = DType::E4M3(Scales::Tensor);
    /// Like `parse`, with an error naming what is supported.
    pub fn from_name(s: &str) -> crate::error::Result<DType> {
        DType::parse(s).ok_or_else(|| {
            crate::error::Error::Config(format!(
                "unsupported dtype `{s}`: the kernels take fp16, bf16 or FP8 inputs (fp32 accumulation); FP8 is e4m3 (per-tensor scales), e4m3-row (a scale per row of A and of B) or e4m3-block (1x128 scales of A, 128x128 of B), with a bf16 output, or an fp16 one with -f16 (e4m3-row-f16)"
            ))
        })
    }
    /// Bytes of an operand element (of A and B).
    pub fn operand_bytes(self) -> usize {
        match self {
            DType::F16 | DType::BF16 => 2,
            DType::E4M3(_) | DType::E4M3F16(_) => 1,
        }
    }
    /// The output's type: the operands' own, or bf16 for FP8.
    pub fn output(self) -> DType {
        match self {
            DType::E4M3(_) => DType::BF16,
            DType::E4M3F16(_) => DType::F16,
            sixteen_bit => sixteen_bit,
        }
    }
    /// NaN in the output type's bits: written over every output before a correctness run.
    pub fn nan_bits(self) -> u16 {
        match self.output() {
            DType::F16 => 0x7E00,
            _ => 0x7FC0,
        }
    }
    /// Tolerances against the reference (both accumulate in fp32; the difference is summation order plus one
    /// rounding of each to the output type): relative Frobenius error, and max error over the reference's rms
    /// beyond one unit in the last place of the output type at each value (two roundings of nearly equal values
    /// can land one ulp apart, and an ulp grows with the value: at 8fb4f1b cuBLASLt's own row-wise FP8 result was
    /// 2.0 off at an output of 256-512, 6.3e-2 of the rms, one bf16 ulp there).
    /// FP8's reference multiplies the dequantized operands in fp32: what differs is the output's rounding and the
    /// tensor core's own FP8 accumulation (about 14 bits, DeepGEMM), which over K = 8192 can reach fp16's rounding
    /// but stays under bf16's, so FP8 takes bf16's tolerance whatever its output type (H128, H129 in
    /// ablations/HYPOTHESES.md: unpromoted at long K it may not).
    pub fn tolerance(self) -> Tolerance {
        let like = if self.is_fp8() {
            DType::BF16
        } else {
            self.output()
        };
        // One ulp relative to the value: 2^-7 for bf16's 8 significant bits, 2^-10 for fp16's 11.
        let rel_value = match self.output() {
            DType::F16 => 2f64.powi(-10),
            _ => 2f64.powi(-7),
        };
        match like {
            DType::F16 => Tolerance {
                rel_fro: 2e-3,
                rel_max: 1e-2,
                rel_value,
            },
            _ => Tolerance {
                rel_fro: 1.6e-2,
                rel_max: 6e-2,
                rel_value,
            },
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    pub rel_fro: f64,
    /// The largest error beyond `rel_value` of its value, over the reference's rms.
    pub rel_max: f64,
    /// The error each output may have relative to its value before it counts against `rel_max`: one ulp of the
    /// output type (0 in records before the allowance).
    #[serde(default)]
    pub rel_value: f64,
}

/// A GEMM problem C[M,N] = A[M,K] * B[N,K]^T.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shape {
    pub name: String,
    pub m: usize,
    pub n: usize,
    pub k: usize,
}

impl Shape {
    pub fn new(name: &str, m: usize, n: usize, k: usize) -> Shape {
        Shape {
            name: name.to_string(),
            m,
            n,
            k,
        }
    }
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }
    /// The fewest bytes a GEMM must move through device memory: each input read once, the output written once.
    pub fn min_bytes(&self, elem: usize) -> f64 {
        ((self.m * self.k + self.n * self.k + self.m * self.n) * elem) as f64
    }
}

/// The seven standard shapes (name, M, N, K): 4096^3, Llama-3-70B prefill at M = 8192 and decode at M = 256.
pub fn standard_shapes() -> Vec<Shape> {
    vec![
        Shape::new("square4096", 4096, 4096, 4096),
        Shape::new("prefill_attn_out", 8192, 8192, 8192),
        Shape::new("prefill_mlp_up", 8192, 28672, 8192),
        Shape::new("decode_attn_out", 256, 8192, 8192),
        Shape::new("decode_qkv", 256, 10240, 8192),
        Shape::new("decode_mlp_up", 256, 28672, 8192),
        Shape::new("decode_mlp_down", 256, 8192, 28672),
    ]
}

/// The four shapes of the seed's per-step table.
pub fn seed_table_shapes() -> Vec<Shape> {
    [
        "square4096",
        "prefill_mlp_up",
        "decode_attn_out",
        "decode_mlp_up",
    ]
    .iter()
    .map(|n| shape(n))
    .collect()
}

/// Shapes beside the standard ones: the long-K raster shape and the sanitizer's small problem.
pub fn extra_shapes() -> Vec<Shape> {
    vec![
        Shape::new("long_k", 4096, 4096, 16384),
        Shape::new("small", 256, 512, 512),
    ]
}

/// Token counts that are not tile multiples (issue 11, "any M"): decode of Llama-3-70B's attention output
/// (N = K = 8192) at M = 1 to 240 and 384, 480 and 1280 tokens, at M = 1, 64 and 192 with N = 4096 (and K = 4096 at 192), a prefill of 1500 tokens, 777 tokens through the MLP up projection
/// and through the attention output, and 1000^3
/// (N and K off every tile width and tile_k too). For the `correct::any_m::*` trials and `compare`; they are not
/// standard shapes, so the ladder and the step trials do not run them.
pub fn token_count_shapes() -> Vec<Shape> {
    let mut shapes: Vec<Shape> = [1, 8, 16, 32, 64, 128, 160, 192, 200, 224, 240]
        .iter()
        .map(|&m| Shape::new(&format!("decode_m{m}"), m, 8192, 8192))
        .collect();
    shapes.extend([
        Shape::new("tokens_384", 384, 8192, 8192),
        Shape::new("prefill_1500", 1500, 8192, 8192),
        Shape::new("tokens_777", 777, 28672, 8192),
        Shape::new("attn_out_777", 777, 8192, 8192),
        Shape::new("square1000", 1000, 1000, 1000),
        Shape::new("tokens_1280", 1280, 8192, 8192),
        Shape::new("tokens_480", 480, 8192, 8192),
        // Half the weight rows (N = 4096): where 64-row tiles fill half the SMs (H33, H35).
        Shape::new("n4096_m1", 1, 4096, 8192),
        Shape::new("n4096_m64", 64, 4096, 8192),
        Shape::new("n4096_m192", 192, 4096, 8192),
        // Llama-3-8B's attention output (N = K = 4096) at 192 tokens (H46, H47).
        Shape::new("n4096_k4096_m192", 192, 4096, 4096),
        // Out of H61's sample, where `auto` takes 256-row weight tiles (H62): Llama-3-8B's MLP up projection
        // (N = 14336) at 620 tokens, and 4200 tokens through the attention output.
        Shape::new("n14336_m620", 620, 14336, 8192),
        Shape::new("tokens_4200", 4200, 8192, 8192),
    ]);
    shapes
}

/// DeepSeek-V3's linear layers that issue 40 names for FP8 (N x K): the fused q/kv down projection 2112 x 7168, the
/// q up projection 24576 x 1536, the kv up projection 32768 x 512, the attention output 7168 x 16384, an expert's
/// gate and up 4096 x 7168 and its down 7168 x 2048; each at M = 64 and 128 tokens (decode) and 4096 (prefill).
/// Named `dsv3_<layer>_m<M>` for `compare` and reports; no trial runs them yet.
pub fn deepseek_v3_shapes() -> Vec<Shape> {
    let layers = [
        ("qkv_a", 2112, 7168),
        ("q_b", 24576, 1536),
        ("kv_b", 32768, 512),
        ("o", 7168, 16384),
        ("up", 4096, 7168),
        ("down", 7168, 2048),
    ];
    layers
        .iter()
        .flat_map(|&(layer, n, k)| {
            [64, 128, 4096].map(|m| Shape::new(&format!("dsv3_{layer}_m{m}"), m, n, k))
        })
        .collect()
}

/// Every named shape: the one list the trials, the main job and `compare` read.
pub fn named_shapes() -> Vec<Shape> {
    standard_shapes()
        .into_iter()
        .chain(extra_shapes())
        .chain(token_count_shapes())
        .chain(deepseek_v3_shapes())
        .collect()
}

/// A named shape, if there is one by that name.
pub fn find_shape(name: &str) -> Option<Shape> {
    named_shapes().into_iter().find(|s| s.name == name)
}

/// A shape from the command line: a name (`prefill_attn_out`) or `MxNxK` (`1500x8192x8192`). A size that no
/// GEMM here can take is an error naming the constraint, before anything is allocated or launched.
pub fn parse_shape(text: &str) -> crate::error::Result<Shape> {
    if let Some(s) = find_shape(text) {
        return Ok(s);
    }
    let err = |why: String| crate::error::Error::Config(format!("shape {text:?}: {why}"));
    let dims: Vec<&str> = text.split(['x', 'X']).collect();
    let looks_numeric =
        dims.len() == 3 && dims.iter().all(|d| d.chars().all(|c| c.is_ascii_digit()));
    if !looks_numeric {
        let names: Vec<String> = named_shapes().into_iter().map(|s| s.name).collect();
        return Err(err(format!(
            "give MxNxK (such as 1500x8192x8192) or one of {}",
            names.join(", ")
        )));
    }
    let mut v = [0usize; 3];
    for (slot, d) in v.iter_mut().zip(&dims) {
        *slot = d.parse().map_err(|_| err(format!("{d} is not a size")))?;
    }
    let [m, n, k] = v;
    if m == 0 || n == 0 || k == 0 {
        return Err(err("M, N and K must each be at least 1".into()));
    }
    if n % 8 != 0 || k % 8 != 0 {
        return Err(err(format!(
            "N ({n}) and K ({k}) must be multiples of 8: TMA needs every row stride to be a multiple of 16 bytes"
        )));
    }
    if [m, n, k].iter().any(|&d| d > i32::MAX as usize) {
        return Err(err(
            "each size must fit a 32-bit coordinate (at most 2147483647)".into(),
        ));
    }
    Ok(Shape::new(&format!("{m}x{n}x{k}"), m, n, k))
}

/// A named shape, or `MxNxK` for a trial at a size no other trial needs; panics on anything else (a typo in a
/// trial list).
pub fn shape(name: &str) -> Shape {
    parse_shape(name).unwrap_or_else(|e| panic!("unknown shape {name}: {e}"))
}

#[cfg(test)]
mod parse_tests {
    use super::*;

    #[test]
    fn shapes_are_names_or_sizes_and_bad_sizes_say_why() {
        assert_eq!(parse_shape("long_k").unwrap().k, 16384);
        let s = parse_shape("1500x8192x8192").unwrap();
        assert_eq!(
            (s.m, s.n, s.k, s.name.as_str()),
            (1500, 8192, 8192, "1500x8192x8192")
        );
        let e = |t: &str| parse_shape(t).unwrap_err().to_string();
        assert!(e("1500x8190x8192").contains("multiples of 8"));
        assert!(e("0x8192x8192").contains("at least 1"));
        assert!(e("4096x4096x4294967296").contains("32-bit"));
        assert!(e("squre4096").contains("square4096"));
        assert!(e("12x8").contains("MxNxK"));
        // Any M: a partial shape parses as sizes, and the named token-count shapes by name.
        let p = parse_shape("777x1000x1000").unwrap();
        assert_eq!((p.m, p.n, p.k), (777, 1000, 1000));
        assert_eq!(parse_shape("1x8192x8192").unwrap().m, 1);
        assert_eq!(parse_shape("decode_m1").unwrap().m, 1);
        assert_eq!(parse_shape("tokens_777").unwrap().n, 28672);
        assert!(e("777x1000x1001").contains("multiples of 8"));
    }

    #[test]
    fn token_count_shapes_are_named_but_not_standard() {
        let names: Vec<String> = token_count_shapes().into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "decode_m1",
                "decode_m8",
                "decode_m16",
                "decode_m32",
                "decode_m64",
                "decode_m128",
                "decode_m160",
                "decode_m192",
                "decode_m200",
                "decode_m224",
                "decode_m240",
                "tokens_384",
                "prefill_1500",
                "tokens_777",
                "attn_out_777",
                "square1000",
                "tokens_1280",
                "tokens_480",
                "n4096_m1",
                "n4096_m64",
                "n4096_m192",
                "n4096_k4096_m192",
                "n14336_m620",
                "tokens_4200"
            ]
        );
        // The ladder (every rung on every standard shape) and the main job stay on the seven shapes.
        assert_eq!(standard_shapes().len(), 7);
        assert!(standard_shapes().iter().all(|s| !names.contains(&s.name)));
        let mut all: Vec<String> = named_shapes().into_iter().map(|s| s.name).collect();
        let count = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), count, "shape names are unique");
        // DeepSeek-V3's: FP8 rows of K bytes need K a multiple of 16.
        let dsv3 = deepseek_v3_shapes();
        assert_eq!(dsv3.len(), 18);
        assert!(dsv3.iter().all(|s| s.n % 8 == 0 && s.k % 16 == 0));
        assert_eq!(
            find_shape("dsv3_o_m128").map(|s| (s.m, s.n, s.k)),
            Some((128, 7168, 16384))
        );
        for s in token_count_shapes() {
            assert!(s.n % 8 == 0 && s.k % 8 == 0 && s.m >= 1, "{}", s.name);
        }
    }
}
