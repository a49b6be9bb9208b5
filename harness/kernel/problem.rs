//! Problems: data types and the standard shapes (Llama-3-70B linear layers, from the seed).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DType {
    F16,
    BF16,
}

impl DType {
    pub fn name(self) -> &'static str {
        match self {
            DType::F16 => "fp16",
            DType::BF16 => "bf16",
        }
    }
    pub fn parse(s: &str) -> Option<DType> {
        match s.to_ascii_lowercase().as_str() {
            "fp16" | "f16" | "half" => Some(DType::F16),
            "bf16" | "bfloat16" => Some(DType::BF16),
            _ => None,
        }
    }
    /// Like `parse`, with an error naming what is supported.
    pub fn from_name(s: &str) -> crate::error::Result<DType> {
        DType::parse(s).ok_or_else(|| {
            crate::error::Error::Config(format!(
                "unsupported dtype `{s}`: the kernels take fp16 or bf16 inputs (fp32 accumulation)"
            ))
        })
    }
    /// NaN in this type's bits: written over every output before a correctness run.
    pub fn nan_bits(self) -> u16 {
        match self {
            DType::F16 => 0x7E00,
            DType::BF16 => 0x7FC0,
        }
    }
    /// Tolerances against cuBLAS (both accumulate in fp32; the difference is summation order plus one rounding
    /// of the output): relative Frobenius error, and max error relative to the largest reference value.
    pub fn tolerance(self) -> Tolerance {
        match self {
            DType::F16 => Tolerance {
                rel_fro: 2e-3,
                rel_max: 1e-2,
            },
            DType::BF16 => Tolerance {
                rel_fro: 1.6e-2,
                rel_max: 6e-2,
            },
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    pub rel_fro: f64,
    pub rel_max: f64,
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

/// Every named shape: the one list the trials, the main job and `compare` read.
pub fn named_shapes() -> Vec<Shape> {
    standard_shapes()
        .into_iter()
        .chain(extra_shapes())
        .collect()
}

/// A named shape, if there is one by that name.
pub fn find_shape(name: &str) -> Option<Shape> {
    named_shapes().into_iter().find(|s| s.name == name)
}

/// A named shape; panics on an unknown name (a typo in a trial list).
pub fn shape(name: &str) -> Shape {
    find_shape(name).unwrap_or_else(|| panic!("unknown shape name {name}"))
}
