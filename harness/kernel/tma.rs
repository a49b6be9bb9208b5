//! Tensor maps (cuTensorMapEncodeTiled): the parameters for each operand layout are computed by plain functions
//! (tested on the CPU), then encoded by the driver.

use crate::error::{config_err, CudaContext as _, Result};
use crate::kernel::config::Swizzle;
use crate::kernel::problem::DType;
use cudarc::driver::sys;

/// A CUtensorMap passed by value as a `__grid_constant__` kernel parameter.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct TmaDesc(pub [u64; 16]);

/// Everything cuTensorMapEncodeTiled needs besides the address and data type. Index 0 is the innermost dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmaParams {
    pub dims: Vec<u64>,
    /// Byte strides of dimensions 1.. (dimension 0 is contiguous).
    pub strides: Vec<u64>,
    pub box_dims: Vec<u32>,
    pub swizzle: Swizzle,
    /// Bytes of an element: 2 (fp16, bf16), 1 (FP8).
    pub elem_bytes: u32,
}

impl TmaParams {
    /// Bytes one box lands in shared memory.
    pub fn box_bytes(&self) -> u64 {
        self.box_dims.iter().map(|&d| u64::from(d)).product::<u64>() * u64::from(self.elem_bytes)
    }

    /// The driver's constraints, checked here so that a bad map is a sentence, not CUDA_ERROR_INVALID_VALUE.
    /// A box may be larger than the tensor (M = 1 under a 128-row box): the driver's rules for
    /// cuTensorMapEncodeTiled bound a box only by 256 per dimension, and the part outside the tensor is zero-filled
    /// on load and dropped on store.
    pub fn validate(&self) -> Result<()> {
        if self.dims.is_empty() || self.dims.len() > 5 || self.box_dims.len() != self.dims.len() {
            return config_err(
                "a tensor map has 1 to 5 dimensions, with one box size per dimension",
            );
        }
        for (i, &b) in self.box_dims.iter().enumerate() {
            if b == 0 || b > 256 {
                return config_err(format!(
                    "TMA box dimension {i} is {b}: each box dimension must be 1..=256"
                ));
            }
        }
        if let Some(i) = self.dims.iter().position(|&d| d == 0 || d > 1 << 32) {
            return config_err(format!(
                "TMA tensor dimension {i} is {}: each must be 1..=2^32",
                self.dims[i]
            ));
        }
        let inner_bytes = self.box_dims[0] * self.elem_bytes;
        if !inner_bytes.is_multiple_of(16) {
            return config_err(format!(
                "TMA box inner dimension is {inner_bytes} bytes: it must be a multiple of 16"
            ));
        }
        let span = self.swizzle.bytes();
        if span != 0 && inner_bytes > span {
            return config_err(format!(
                "TMA box inner dimension is {inner_bytes} bytes: a {span}B swizzle allows at most {span}"
            ));
        }
        for &s in &self.strides {
            if s % 16 != 0 || s >= 1 << 40 {
                return config_err(format!(
                    "TMA global stride {s} bytes: strides must be multiples of 16 below 2^40"
                ));
            }
        }
        Ok(())
    }
}

/// Rows an operand of `rows` rows must have allocated (and readable) for `operand`'s maps: the core-matrix map
/// reads whole 8-row groups, so a partial last group is read in full (its extra rows only feed outputs past M,
/// which are never stored; the operands are allocated this way and the padding zeroed).
pub fn rows_to_allocate(rows: usize) -> usize {
    rows.next_multiple_of(8)
}

/// A K-major operand of `rows` x `k` (row-major), loaded `box_rows` rows by `tile_k` columns at a time.
/// Swizzled: a plain 2-D map, one box per swizzle span of the stage's k-block (a box is at most one span wide). Unswizzled: the wgmma core-matrix layout through a 4-D map
/// {8 elements, 8 rows, k/8 slices, ceil(rows/8) groups}, so each 8-row group keeps its K slices side by side
/// (LBO = 128 B between K-adjacent core matrices, SBO = tile_k * 16 B between row groups). A row count that is not
/// a multiple of 8 does not fit that map: its last group is read whole, from the padding `rows_to_allocate` adds.
pub fn operand(
    rows: usize,
    k: usize,
    box_rows: u32,
    tile_k: u32,
    swizzle: Swizzle,
) -> Result<TmaParams> {
    operand_of(rows, k, box_rows, tile_k, swizzle, 2)
}

/// `operand` for elements of `elem_bytes` bytes (1: FP8). A core matrix is 8 rows of 16 bytes whatever the
/// element, so the unswizzled map's slices are 16 / `elem_bytes` elements wide (16 for FP8).
pub fn operand_of(
    rows: usize,
    k: usize,
    box_rows: u32,
    tile_k: u32,
    swizzle: Swizzle,
    elem_bytes: u32,
) -> Result<TmaParams> {
    let row_bytes = (k * elem_bytes as usize) as u64;
    let slice = 16 / elem_bytes;
    let p = match swizzle {
        Swizzle::None => TmaParams {
            dims: vec![
                u64::from(slice),
                8,
                (k / slice as usize) as u64,
                rows.div_ceil(8) as u64,
            ],
            strides: vec![row_bytes, 16, 8 * row_bytes],
            box_dims: vec![slice, 8, tile_k / slice, box_rows / 8],
            swizzle,
            elem_bytes,
        },
        _ => TmaParams {
            dims: vec![k as u64, rows as u64],
            strides: vec![row_bytes],
            box_dims: vec![tile_k.min(swizzle.bytes() / elem_bytes), box_rows],
            swizzle,
            elem_bytes,
        },
    };
    p.validate()?;
    Ok(p)
}

/// The output C (m x n, row-major, rows `ldc` elements apart), stored in 64x64 chunks staged with the 128B
/// swizzle. The map has the true m x n, so the parts of edge chunks past M or N are not written.
pub fn output(m: usize, n: usize, ldc: usize) -> Result<TmaParams> {
    if ldc < n {
        return config_err(format!(
            "C's leading dimension {ldc} is shorter than its {n} columns"
        ));
    }
    let p = TmaParams {
        dims: vec![n as u64, m as u64],
        strides: vec![(ldc * 2) as u64],
        box_dims: vec![64, 64],
        swizzle: Swizzle::B128,
        elem_bytes: 2,
    };
    p.validate()?;
    Ok(p)
}

/// cuTensorMapEncodeTiled's arguments besides the map and the address, exactly as `encode` passes them. A prebuilt
/// module's host launcher encodes its maps itself; an external kernel's manifest states them, and a CPU test compares
/// these with the arguments that launcher was seen to pass (kernels/ext/cute_hopper/intercept/record.txt).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeArgs {
    pub data_type: sys::CUtensorMapDataType,
    pub dims: Vec<u64>,
    pub strides: Vec<u64>,
    pub box_dims: Vec<u32>,
    pub element_strides: Vec<u32>,
    pub interleave: sys::CUtensorMapInterleave,
    pub swizzle: sys::CUtensorMapSwizzle,
    pub l2_promotion: sys::CUtensorMapL2promotion,
    pub oob_fill: sys::CUtensorMapFloatOOBfill,
}

impl EncodeArgs {
    /// As the driver's header numbers them: `dtype=6 rank=2 dims=K,M strides=2K box=64,128 element_strides=1,1
    /// interleave=0 swizzle=3 l2_promotion=3 oob_fill=0`.
    pub fn numbers(&self) -> String {
        let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let list32 = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        format!(
            "dtype={} rank={} dims={} strides={} box={} element_strides={} interleave={} swizzle={} l2_promotion={} \
             oob_fill={}",
            self.data_type as u32,
            self.dims.len(),
            list(&self.dims),
            list(&self.strides),
            list32(&self.box_dims),
            list32(&self.element_strides),
            self.interleave as u32,
            self.swizzle as u32,
            self.l2_promotion as u32,
            self.oob_fill as u32
        )
    }
}

/// The arguments `encode` passes for `params` over a `dtype` tensor.
pub fn encode_args(params: &TmaParams, dtype: DType) -> EncodeArgs {
    EncodeArgs {
        data_type: match dtype {
            DType::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            DType::BF16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            // FP8 codes are bytes to TMA (it copies them, it does not convert them).
            DType::E4M3(_) | DType::E4M3F16(_) => {
                sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8
            }
        },
        dims: params.dims.clone(),
        strides: params.strides.clone(),
        box_dims: params.box_dims.clone(),
        element_strides: vec![1u32; params.dims.len()],
        interleave: sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
        swizzle: match params.swizzle {
            Swizzle::None => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            Swizzle::B32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            Swizzle::B64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            Swizzle::B128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        },
        l2_promotion: sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        oob_fill: sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    }
}

/// Encodes a map over the tensor of `dtype` elements at `address`.
pub fn encode(params: &TmaParams, address: sys::CUdeviceptr, dtype: DType) -> Result<TmaDesc> {
    params.validate()?;
    if !address.is_multiple_of(16) {
        return config_err("TMA global address must be 16-byte aligned");
    }
    let args = encode_args(params, dtype);
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            args.data_type,
            args.dims.len() as u32,
            address as *mut std::ffi::c_void,
            args.dims.as_ptr(),
            args.strides.as_ptr(),
            args.box_dims.as_ptr(),
            args.element_strides.as_ptr(),
            args.interleave,
            args.swizzle,
            args.l2_promotion,
            args.oob_fill,
        )
    }
    .result()
    .during(&format!("encoding a tensor map {params:?}"))?;
    Ok(TmaDesc(map.opaque))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_matrix_layout_map_groups_rows_by_eight() {
        // A 4096 x 4096 operand, 128-row boxes, tile_k 16, no swizzle: {8 elements, 8 rows, K/8 slices, rows/8 groups}.
        let p = operand(4096, 4096, 128, 16, Swizzle::None).unwrap();
        assert_eq!(p.dims, vec![8, 8, 512, 512]);
        assert_eq!(p.strides, vec![8192, 16, 65536]);
        assert_eq!(p.box_dims, vec![8, 8, 2, 16]);
        assert_eq!(p.box_bytes(), 128 * 16 * 2);
    }

    #[test]
    fn swizzled_map_is_one_box_per_stage() {
        let p = operand(8192, 8192, 256, 64, Swizzle::B128).unwrap();
        assert_eq!(p.dims, vec![8192, 8192]);
        assert_eq!(p.strides, vec![16384]);
        assert_eq!(p.box_dims, vec![64, 256]);
        assert_eq!(p.box_bytes(), 256 * 128);
        let c = output(256, 8192, 8192).unwrap();
        assert_eq!(
            (c.box_dims.clone(), c.swizzle),
            (vec![64, 64], Swizzle::B128)
        );
    }

    #[test]
    fn maps_have_the_true_shape_of_partial_problems() {
        // M = 1 under a 128-row box, K = 1000 (not a multiple of tile_k 64): the map is the tensor as it is.
        let a = operand(1, 1000, 128, 64, Swizzle::B128).unwrap();
        assert_eq!(
            (a.dims.clone(), a.box_dims.clone()),
            (vec![1000, 1], vec![64, 128])
        );
        // The core-matrix map counts a partial last 8-row group, which is why A is allocated in whole groups.
        let plain = operand(777, 1000, 128, 16, Swizzle::None).unwrap();
        assert_eq!(plain.dims, vec![8, 8, 125, 98]);
        assert_eq!(rows_to_allocate(777), 784);
        assert_eq!(rows_to_allocate(1), 8);
        assert_eq!(rows_to_allocate(4096), 4096);
        // C: true M x N with a padded row stride (the check's guard columns).
        let c = output(777, 1000, 1256).unwrap();
        assert_eq!(
            (c.dims.clone(), c.strides.clone()),
            (vec![1000, 777], vec![2512])
        );
        assert!(output(8, 1000, 992)
            .unwrap_err()
            .to_string()
            .contains("leading dimension"));
    }

    #[test]
    fn encode_arguments_are_numbered_as_the_drivers_header_numbers_them() {
        let p = operand(256, 200, 128, 64, Swizzle::B128).unwrap();
        assert_eq!(
            encode_args(&p, DType::F16).numbers(),
            "dtype=6 rank=2 dims=200,256 strides=400 box=64,128 element_strides=1,1 interleave=0 swizzle=3 \
             l2_promotion=3 oob_fill=0"
        );
        let p = operand(512, 64, 32, 16, Swizzle::B32).unwrap();
        assert_eq!(
            encode_args(&p, DType::BF16).numbers(),
            "dtype=9 rank=2 dims=64,512 strides=128 box=16,32 element_strides=1,1 interleave=0 swizzle=1 \
             l2_promotion=3 oob_fill=0"
        );
    }
}
