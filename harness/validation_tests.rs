//! Every bad-input message, checked on the CPU: each names the constraint it enforces, before any launch.

use crate::error::{CudaContext as _, Error};
use crate::kernel::config::{Raster, Swizzle};
use crate::kernel::ladder::{parse_spec, Rung};
use crate::kernel::problem::{shape, DType, Scales, Shape};
use crate::kernel::tma;

fn err(r: crate::error::Result<impl std::fmt::Debug>) -> String {
    r.expect_err("expected an error").to_string()
}

#[test]
fn any_m_but_n_and_k_multiples_of_8() {
    // Partial tiles are fine for every rung: M = 1 and odd token counts, N and K off the tile.
    for rung in Rung::ALL {
        for (m, n, k) in [
            (1, 8192, 8192),
            (777, 28672, 8192),
            (1500, 8192, 8192),
            (1000, 1000, 1000),
            (8, 8, 8),
        ] {
            rung.config()
                .validate_shape(&Shape::new("partial", m, n, k))
                .unwrap_or_else(|e| panic!("{} on {m}x{n}x{k}: {e}", rung.name()));
        }
    }
    let n = err(Rung::top()
        .config()
        .validate_shape(&Shape::new("odd", 100, 4100, 4096)));
    assert!(
        n.contains("K and N must be multiples of 8 (K = 4096, N = 4100)"),
        "{n}"
    );
    let k = err(Rung::KLoop
        .config()
        .validate_shape(&Shape::new("odd", 128, 128, 100)));
    assert!(k.contains("K and N must be multiples of 8 (K = 100"), "{k}");
    for (m, n, k) in [(0, 128, 128), (128, 0, 128), (128, 128, 0)] {
        let zero = err(Rung::Swizzle128
            .config()
            .validate_shape(&Shape::new("empty", m, n, k)));
        assert!(zero.contains("must each be at least 1"), "{zero}");
    }
    let huge = err(Rung::Swizzle128.config().validate_shape(&Shape::new(
        "huge",
        i32::MAX as usize,
        128,
        128,
    )));
    assert!(huge.contains("32-bit coordinates"), "{huge}");
}

#[test]
fn load_path_keeps_whole_tiles() {
    let lp = crate::families::loadpath::config::LoadPathConfig::new(Swizzle::B128, 128);
    let m = err(lp.validate_shape(&Shape::new("tokens", 777, 4096, 4096)));
    assert!(
        m.contains("M and N multiples of 128 and K a multiple of 64"),
        "{m}"
    );
    assert!(lp.validate_shape(&shape("square4096")).is_ok());
}

#[test]
fn tma_stride_alignment_and_box_limits() {
    let stride = err(tma::operand(128, 100, 128, 64, Swizzle::B128));
    assert!(stride.contains("multiples of 16"), "{stride}");
    let big_box = err(tma::operand(1024, 1024, 512, 64, Swizzle::B128));
    assert!(
        big_box.contains("each box dimension must be 1..=256"),
        "{big_box}"
    );
    let wide = tma::TmaParams {
        dims: vec![256, 256],
        strides: vec![512],
        box_dims: vec![128, 64],
        swizzle: Swizzle::B128,
        elem_bytes: 2,
    };
    assert!(err(wide.validate()).contains("a 128B swizzle allows at most 128"));
    // A shape whose rows are not 16-byte aligned is caught by the config too.
    let c = Rung::KLoop.config();
    assert!(err(c.validate_shape(&Shape::new("k20", 128, 128, 20))).contains("multiples of 8"));
    // A box larger than the tensor is allowed (M = 1 under a 128-row box); an empty tensor is not.
    assert!(tma::operand(1, 64, 128, 64, Swizzle::B128).is_ok());
    let empty = tma::TmaParams {
        dims: vec![64, 0],
        strides: vec![128],
        box_dims: vec![64, 64],
        swizzle: Swizzle::B128,
        elem_bytes: 2,
    };
    assert!(err(empty.validate()).contains("each must be 1..=2^32"));
}

#[test]
fn shared_memory_over_the_limit() {
    let m = err(Rung::top().config().with_stages(6).validate());
    assert!(
        m.contains("shared memory over the limit") && m.contains("232448"),
        "{m}"
    );
}

#[test]
fn cluster_size() {
    let m = err(Rung::Multicast.config().with_cluster(8).validate());
    assert!(m.contains("cluster size must be 1, 2 or 4"), "{m}");
    // Four CTAs share the B tile in quarters (H68); each quarter must be whole swizzle atoms.
    assert!(Rung::Multicast.config().with_cluster(4).validate().is_ok());
    let single = err(Rung::Pipeline.config().with_cluster(2).validate());
    assert!(single.contains("no cluster"), "{single}");
}

#[test]
fn raster_group_that_does_not_divide_the_grid() {
    let c = Rung::TmaEpilogue.config().with_raster(Raster::Group(4));
    let m = err(c.validate_shape(&shape("decode_attn_out")));
    assert!(
        m.contains("raster group 4 does not divide the 2 tile rows of M = 256"),
        "{m}"
    );
    // UpTo picks the largest power of two that divides.
    let up = Rung::TmaEpilogue.config().with_raster(Raster::UpTo(8));
    assert_eq!(up.raster_group(&shape("decode_attn_out")).unwrap(), 2);
    assert_eq!(up.raster_group(&shape("square4096")).unwrap(), 8);
    // Partial last tile rows count: rung 9's cluster tile is 256 rows, so M = 1500 is 6 tile rows, 777 is 4, 1 is 1.
    let r9 = Rung::Cooperative.config();
    let rows = |m: usize| Shape::new("tokens", m, 8192, 8192);
    assert_eq!(r9.raster_group(&rows(1500)).unwrap(), 2);
    assert_eq!(r9.raster_group(&rows(777)).unwrap(), 4);
    assert_eq!(r9.raster_group(&rows(1)).unwrap(), 1);
    let fixed = err(r9.with_raster(Raster::Group(4)).validate_shape(&rows(1500)));
    assert!(
        fixed.contains("raster group 4 does not divide the 6 tile rows of M = 1500")
            && fixed.contains("partial last one counted"),
        "{fixed}"
    );
    assert!(err(Rung::KLoop
        .config()
        .with_raster(Raster::Group(0))
        .validate())
    .contains("at least 1"));
}

#[test]
fn unsupported_dtype() {
    let m = err(DType::from_name("int8"));
    assert!(
        m.contains("unsupported dtype `int8`")
            && m.contains("fp16, bf16 or FP8")
            && m.contains("e4m3-block"),
        "{m}"
    );
    assert_eq!(DType::from_name("BF16").unwrap(), DType::BF16);
}

#[test]
fn no_gpu_at_all() {
    let m = err(crate::gpu::probe::require(&["gemm_ablate_no_such_library"]));
    assert!(
        m.contains("no usable GPU") && m.contains("libgemm_ablate_no_such_library"),
        "{m}"
    );
}

#[test]
fn device_memory_exhausted() {
    let r: std::result::Result<(), &str> =
        Err("DriverError(CUDA_ERROR_OUT_OF_MEMORY, \"out of memory\")");
    let m = r.during("allocating 470 MB").unwrap_err().to_string();
    assert!(
        m.contains("device memory exhausted") && m.contains("allocating 470 MB"),
        "{m}"
    );
}

#[test]
fn invalid_switch_combinations_name_the_rule() {
    assert!(err(Rung::KLoop
        .config()
        .with_swizzle(Swizzle::B128, 16)
        .validate())
    .contains("needs tile_k to be a multiple of 64"));
    // Several spans per stage are several boxes, at most four.
    assert_eq!(Rung::Swizzle128.config().with_tile_k(256).k_boxes(), 4);
    assert!(err(Rung::Swizzle128.config().with_tile_k(320).validate()).contains("at most 4"));
    assert!(err(Rung::TwoConsumers.config().with_pingpong(true).validate()).contains("persistent"));
    let wide = crate::kernel::config::GemmConfig {
        wg_m: 128,
        bn: 256,
        ..Rung::Swizzle128.config()
    };
    assert!(err(wide.validate()).contains("accumulator registers"));
    // 192 accumulators fit a consumer under setmaxnreg (cuBLAS's ping-pong tiles hold 168-176), not without it.
    let p192 = parse_spec("rung10:pingpong=1,wg_m=128,bn=192").unwrap();
    assert!(p192.validate().is_ok());
    let plain = crate::kernel::config::GemmConfig {
        setmaxnreg: false,
        ..p192
    };
    assert!(err(plain.validate()).contains("without setmaxnreg"));
    assert!(parse_spec("rung8:early_turn=1").is_ok());
    assert!(parse_spec("rung10:epi_buffers=4,stages=3")
        .unwrap()
        .validate()
        .is_ok());
    assert!(err(parse_spec("rung10:epi_buffers=4").unwrap().validate())
        .contains("shared memory over the limit"));
    assert!(err(parse_spec("rung10:epi_buffers=3,stages=3")
        .unwrap()
        .validate())
    .contains("2 (default) or 4"));
    assert!(err(parse_spec("rung10:early_turn=1").unwrap().validate()).contains("needs pingpong=1"));
    assert!(err(parse_spec("rung3:stages=x")).contains("wants a number"));
    assert!(matches!(parse_spec("rung0"), Err(Error::Config(_))));
}

#[test]
fn small_m_switches_name_their_rules() {
    let spec = |s: &str| parse_spec(s).unwrap();
    // Swap-AB stores the transposed tile from registers.
    assert!(err(spec("rung10:swap_ab=1").validate()).contains("epilogue=direct"));
    // Token tiles are wgmma n-sizes; the narrow ones need the direct epilogue.
    assert!(err(spec("rung10:bn=100").validate()).contains("wgmma n-size"));
    assert!(
        err(spec("rung10:bn=264,epilogue=direct,stmatrix=0").validate()).contains("wgmma n-size")
    );
    assert!(err(spec("rung10:bn=96").validate()).contains("epilogue=direct"));
    assert!(err(spec("rung10:bn=320").validate()).contains("wgmma n-size"));
    assert!(spec("rung10:bn=192").validate().is_ok());
    // Any multiple of 8 with the direct epilogue (H26), as long as a cluster's CTAs split it in whole atoms.
    assert!(spec("rung10:bn=208,epilogue=direct,stmatrix=0")
        .validate()
        .is_ok());
    assert!(
        err(spec("rung10:bn=200,epilogue=direct,stmatrix=0").validate()).contains("multiple of 8")
    );
    assert!(spec("rung10:bn=200,cluster=1,epilogue=direct,stmatrix=0")
        .validate()
        .is_ok());
    // Consumers that split the columns (H27): each owns every row and half the columns, direct epilogue only.
    let split =
        spec("rung10:cluster=1,consumers=2,split_n=1,wg_m=64,bn=192,epilogue=direct,stmatrix=0");
    assert!(split.validate().is_ok());
    assert_eq!(
        (split.bm(), split.wg_n(), split.accumulator_registers()),
        (64, 96, 48)
    );
    assert!(err(spec("rung10:split_n=1").validate()).contains("epilogue=direct"));
    assert!(
        err(spec("rung10:consumers=1,split_n=1,epilogue=direct,stmatrix=0").validate())
            .contains("consumers=2")
    );
    assert!(
        err(spec("rung10:cluster=1,split_n=1,bn=200,epilogue=direct,stmatrix=0").validate())
            .contains("multiple of 16")
    );
    // Swap-AB's epilogue through movmatrix (H39): swap-AB and the direct epilogue only.
    assert!(spec("rung10:cluster=1,consumers=1,wg_m=64,bn=16,epilogue=direct,stmatrix=0,swap_ab=1,swap_store=pairs")
        .validate()
        .is_ok());
    assert!(err(spec("rung10:swap_store=pairs").validate()).contains("swap_ab=1"));
    assert!(
        err(spec("rung10:epilogue=direct,stmatrix=0,swap_store=pairs").validate())
            .contains("swap_ab=1")
    );
    assert!(err(parse_spec("rung10:swap_ab=1,swap_store=rows")).contains("element or pairs"));
    // The cluster sharing A (cuBLAS's 1x2 form): a 2-CTA cluster, swizzled, whole tiles; B's rows need not split.
    let shared_a = "rung10:cluster=2,multicast=a,consumers=2,wg_m=64,bn=104,epilogue=direct,stmatrix=0,swap_ab=1,stages=7";
    assert!(spec(shared_a).validate().is_ok());
    for bad in [
        "rung10:cluster=1,multicast=a",
        "rung10:multicast=a,streamk=1",
        "rung10:multicast=a,swizzle=none",
        "rung10:multicast=a,pdl=1,early_weights=1",
    ] {
        assert!(err(spec(bad).validate()).contains("multicast=a"), "{bad}");
    }
    assert!(err(parse_spec("rung10:multicast=c")).contains("b or a"));
    // Each CTA of a cluster loads a whole swizzle atom of B rows.
    assert!(
        err(spec("rung10:bn=8,epilogue=direct,stmatrix=0").validate()).contains("multiple of 8")
    );
    assert!(err(spec("3:evict_first=1").validate()).contains("needs a swizzle"));
    assert!(err(spec("rung10:early_weights=1").validate()).contains("pdl"));
    assert!(spec("rung10:pdl=1,early_weights=1").validate().is_ok());
}

#[test]
fn swap_ab_tiles_the_transposed_problem() {
    let c = parse_spec(&crate::kernel::frozen_rules::swap_ab_spec(1)).unwrap();
    let s = shape("decode_m1");
    let k = c.kernel_shape(&s);
    assert_eq!((k.m, k.n, k.k), (8192, 1, 8192));
    // 128 weight rows a tile, one 8-token tile: 64 tiles of 128 k-blocks.
    assert_eq!(
        (c.tile_rows(&s), c.tile_cols(&s), c.k_blocks(&s)),
        (64, 1, 128)
    );
    c.validate_shape(&s).unwrap();
    // Unswapped, the same sizes tile the problem as given.
    let plain = Rung::Stmatrix.config();
    assert_eq!(plain.kernel_shape(&s).m, 1);
}

#[test]
fn a_cluster_sharing_a_walks_cluster_columns_and_halves_the_a_box() {
    // cuBLAS's tiling at 200x8192x8192 in our terms: 128 weight rows, 104 tokens, the weights shared along N.
    let spec = "rung10:cluster=2,multicast=a,consumers=2,wg_m=64,bn=104,epilogue=direct,stmatrix=0,swap_ab=1,stages=7";
    let c = parse_spec(spec).unwrap();
    let s = Shape::new("t", 200, 8192, 8192);
    // Kernel shape 8192 x 200: 64 tile rows, one cluster column of two 104-token tiles, 128 CTAs.
    assert_eq!((c.tile_rows(&s), c.tile_cols(&s)), (64, 1));
    assert_eq!(c.grid(&s, 132), 128);
    assert_eq!((c.a_box_rows(), c.b_box_rows()), (64, 104));
    c.validate_shape(&s).unwrap();
    // The default shares B: the cluster's rows along M, B's box halved.
    let b = parse_spec(
        "rung10:cluster=2,consumers=2,wg_m=64,bn=112,epilogue=direct,stmatrix=0,swap_ab=1",
    )
    .unwrap();
    assert_eq!((b.tile_rows(&s), b.tile_cols(&s)), (32, 2));
    assert_eq!((b.a_box_rows(), b.b_box_rows()), (128, 56));
}

#[test]
fn a_wide_k_block_is_one_box_per_swizzle_span() {
    let c = Rung::Swizzle128.config().with_tile_k(128);
    assert_eq!(c.k_boxes(), 2);
    let p = tma::operand(4096, 4096, 128, c.tile_k, c.swizzle).unwrap();
    // The box is one 128-byte span wide; the stage holds two of them side by side.
    assert_eq!(p.box_dims, vec![64, 128]);
    assert_eq!(c.stage_bytes(), (c.bm() + c.bn) * 128 * 2);
}

#[test]
fn an_fp8_k_block_holds_the_bytes_of_a_sixteen_bit_one_twice_as_long() {
    use crate::kernel::config::{FP8, SIXTEEN_BIT};
    let top = Rung::top().config();
    let fp8 = top.clone().with_tile_k(2 * top.tile_k);
    fp8.validate_fp8(Scales::Tensor).unwrap();
    assert_eq!(fp8.stage_bytes_of(FP8), top.stage_bytes_of(SIXTEEN_BIT));
    assert_eq!(fp8.smem_bytes_of(FP8), top.smem_bytes());
    assert_eq!(fp8.k_boxes_of(FP8), top.k_boxes());
    let defines = fp8.fp8_defines(DType::FP8).unwrap();
    let value = |name: &str| {
        defines
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(value("AB_E4M3").as_deref(), Some("1"));
    // The output is bf16.
    assert_eq!(value("DTYPE_BF16").as_deref(), Some("1"));
    assert_eq!(value("STAGE_BYTES"), Some(top.stage_bytes().to_string()));
    // Half a 128-byte row of FP8 is no k-block under the 128-byte swizzle.
    assert!(err(top.validate_fp8(Scales::Tensor)).contains("multiple of 128"));
    // The other layouts take FP8 with the same bytes a row: two 64-byte spans a k-block of 128, and the core-matrix
    // layout, whose 8-row groups sit a k-block's row bytes times 8 apart.
    let narrow = Rung::Swizzle128.config().with_swizzle(Swizzle::B64, 128);
    narrow.validate_fp8(Scales::Tensor).unwrap();
    assert_eq!(narrow.k_boxes_of(FP8), 2);
    assert!(err(Rung::Swizzle128
        .config()
        .with_swizzle(Swizzle::B64, 32)
        .validate_fp8(Scales::Tensor))
    .contains("multiple of 64"));
    let plain = top.clone().with_swizzle(Swizzle::None, 128);
    plain.validate_fp8(Scales::Tensor).unwrap();
    assert_eq!(
        plain.operand_layout_of(FP8),
        plain.with_tile_k(64).operand_layout()
    );
    assert!(err(Rung::top()
        .config()
        .with_swizzle(Swizzle::None, 16)
        .validate_fp8(Scales::Tensor))
    .contains("multiple of 32"));
}

#[test]
fn fp8_is_e4m3_operands_with_a_bf16_output_and_the_rungs_take_it_twice_as_deep() {
    use crate::trial::job::VariantSpec;
    assert_eq!(DType::parse("fp8"), Some(DType::FP8));
    assert_eq!(DType::FP8.name(), "e4m3");
    assert_eq!(
        (DType::FP8.operand_bytes(), DType::FP8.output()),
        (1, DType::BF16)
    );
    assert_eq!(DType::FP8.nan_bits(), DType::BF16.nan_bits());
    let square = shape("square4096");
    let fp8_top = VariantSpec::gemm("10:tile_k=128", parse_spec("10:tile_k=128").unwrap());
    fp8_top.validate_for(&square, DType::FP8).unwrap();
    // The rung as it is holds half a 128-byte row of FP8 a k-block; the message says what to write instead.
    let top = VariantSpec::gemm("10", parse_spec("10").unwrap());
    assert!(err(top.validate_for(&square, DType::FP8)).contains("`10:tile_k=128`"));
    // The unswizzled rungs take it too, their k-block twice as deep.
    let unswizzled = VariantSpec::gemm("3:tile_k=128", parse_spec("3:tile_k=128").unwrap());
    unswizzled.validate_for(&square, DType::FP8).unwrap();
    // Kernels outside the ladder take 16-bit operands only, said before anything is built.
    let skinny = VariantSpec::outside_ladder("skinny").unwrap().unwrap();
    assert!(err(skinny.validate_for(&shape("decode_m1"), DType::FP8)).contains("fp16 and bf16"));
    // FP8 rows of K bytes: TMA's boxes are 128 one-byte elements wide under the 128-byte swizzle.
    let p = tma::operand_of(4096, 4096, 128, 128, Swizzle::B128, 1).unwrap();
    assert_eq!(
        (p.box_dims.clone(), p.strides.clone()),
        (vec![128, 128], vec![4096])
    );
    assert_eq!(p.box_bytes(), 128 * 128);
    // Unswizzled, a core matrix is 8 rows of 16 bytes: slices of 16 FP8 elements, the 16-bit map's bytes.
    let plain = tma::operand_of(4096, 4096, 128, 128, Swizzle::None, 1).unwrap();
    let sixteen = tma::operand(4096, 2048, 128, 64, Swizzle::None).unwrap();
    assert_eq!(plain.dims, vec![16, 8, 256, 512]);
    assert_eq!(plain.box_dims, vec![16, 8, 8, 16]);
    assert_eq!(
        (plain.strides.clone(), plain.box_bytes()),
        (sixteen.strides.clone(), sixteen.box_bytes())
    );
    // Half the bytes: as many rotation sets or more, to keep the operands out of L2.
    use crate::measure::operands::rotation_sets;
    let decode = shape("decode_attn_out");
    let l2 = 60 << 20;
    assert!(rotation_sets(&decode, l2, DType::FP8) > rotation_sets(&decode, l2, DType::F16));
}

#[test]
fn fp8_scaling_schemes_are_problems_named_by_their_dtype() {
    for (word, dtype) in [
        ("e4m3", DType::E4M3(Scales::Tensor)),
        ("e4m3-row", DType::E4M3(Scales::Row)),
        ("e4m3-block", DType::E4M3(Scales::Block)),
        ("FP8-Row", DType::E4M3(Scales::Row)),
        ("float8_e4m3fn-block", DType::E4M3(Scales::Block)),
    ] {
        assert_eq!(DType::parse(word), Some(dtype), "{word}");
        assert_eq!(DType::parse(dtype.name()), Some(dtype));
        assert_eq!((dtype.operand_bytes(), dtype.output()), (1, DType::BF16));
    }
    for word in ["e4m3-", "e4m3-col", "e4m3row", "fp16-row"] {
        assert_eq!(DType::parse(word), None, "{word}");
    }
    assert!(err(DType::from_name("e4m3-col")).contains("e4m3-block"));
    // The kernel's SCALES define follows the problem's scheme; 16-bit programs have none.
    let config = parse_spec("10:tile_k=128,bn=128,promote=1").unwrap();
    for (scales, value) in [
        (Scales::Tensor, "0"),
        (Scales::Row, "1"),
        (Scales::Block, "2"),
    ] {
        let defines = config.fp8_defines(DType::E4M3(scales)).unwrap();
        let scales_define = defines.iter().find(|(n, _)| *n == "SCALES");
        assert_eq!(scales_define.map(|(_, v)| v.as_str()), Some(value));
        let promote = defines.iter().find(|(n, _)| *n == "PROMOTE");
        assert_eq!(promote.map(|(_, v)| v.as_str()), Some("1"));
    }
    let sixteen = Rung::top().config().defines(DType::F16);
    assert!(!sixteen.iter().any(|(n, _)| *n == "SCALES"));
    assert!(config.fp8_defines(DType::F16).is_err());
}

#[test]
fn promotion_and_block_scales_say_what_they_need_before_anything_is_built() {
    let spec = |s: &str| parse_spec(s).unwrap();
    let block = DType::E4M3(Scales::Block);
    // Block scales change every k-block of 128: promotion at every k-block, tile_k of exactly one scale block.
    spec("10:tile_k=128,bn=128,promote=1")
        .validate_for(block)
        .unwrap();
    assert!(err(spec("10:tile_k=128,bn=128").validate_for(block)).contains("promote=1"));
    assert!(err(spec("10:tile_k=128,bn=128,promote=2").validate_for(block)).contains("promote=1"));
    assert!(
        err(spec("10:tile_k=256,bn=128,promote=1,stages=2").validate_for(block))
            .contains("tile_k=128")
    );
    assert!(
        err(spec("10:tile_k=128,bn=128,promote=1,k_rotate=1").validate_for(block))
            .contains("k_rotate")
    );
    // Two sets of accumulators: rung 10's 64x256 per warpgroup does not fit twice, nor 64x192 (ptxas spilled);
    // 64x128 does.
    let two_sets = err(spec("10:tile_k=128,promote=1").validate_for(DType::FP8));
    assert!(
        two_sets.contains("2 x 128") && two_sets.contains("bn=128"),
        "{two_sets}"
    );
    assert!(
        err(spec("10:tile_k=128,bn=192,promote=1").validate_for(DType::FP8)).contains("2 x 96")
    );
    // Per-tensor and row-wise scales take any interval, or none; 16-bit operands none.
    spec("10:tile_k=128,bn=128,promote=4")
        .validate_for(DType::FP8)
        .unwrap();
    spec("10:tile_k=128")
        .validate_for(DType::E4M3(Scales::Row))
        .unwrap();
    assert!(err(spec("10:bn=128,promote=1").validate_for(DType::BF16)).contains("FP8"));
    assert!(
        err(spec("10:tile_k=128,bn=128,promote=65").validate_for(DType::FP8)).contains("1 to 64")
    );
    // Promotion lives in the plain consumer loop.
    assert!(
        err(spec("10:tile_k=128,bn=128,promote=1,desc_advance=1").validate_for(DType::FP8))
            .contains("desc_advance=0")
    );
}

#[test]
fn the_promotion_under_the_next_k_blocks_mmas_says_what_it_needs() {
    let spec = |s: &str| parse_spec(s).unwrap();
    let block = DType::E4M3(Scales::Block);
    let overlap = "10:tile_k=128,bn=128,promote=1,one_b_block=1,promote_overlap=1";
    spec(overlap).validate_for(block).unwrap();
    // H156: a third set of accumulators spilled per tensor and with a B scale per eight columns.
    for (dtype, s) in [
        (
            DType::FP8,
            "10:tile_k=128,bn=128,promote=1,promote_overlap=1",
        ),
        (block, "10:tile_k=128,bn=128,promote=1,promote_overlap=1"),
        (
            block,
            "10:tile_k=128,bn=128,promote=1,one_b_block=1,scale_prefetch=1,promote_overlap=1",
        ),
    ] {
        let e = err(spec(s).validate_for(dtype));
        assert!(
            e.contains("promote_overlap=1") && e.contains("one_b_block=1"),
            "{s}: {e}"
        );
    }
    // Nothing to overlap without FP8's promotion: refused, not compiled as a kernel that ignores it.
    assert!(err(spec("10:promote_overlap=1").validate_for(DType::F16)).contains("e4m3-block"));
}

#[test]
fn staggered_promotion_windows_say_what_they_need() {
    let spec = |s: &str| parse_spec(s).unwrap();
    spec("10:tile_k=128,bn=128,promote=4,promote_stagger=1")
        .validate_for(DType::FP8)
        .unwrap();
    // H163: half a window needs a window of two k-blocks or more, and a second consumer on the same tile.
    for s in [
        "10:tile_k=128,bn=128,promote_stagger=1",
        "10:tile_k=128,bn=128,promote=1,promote_stagger=1",
        "10:tile_k=128,bn=128,promote=4,consumers=1,wg_m=64,promote_stagger=1",
        "8:tile_k=128,bn=128,promote=4,promote_stagger=1",
    ] {
        let e = err(spec(s).validate_for(DType::FP8));
        assert!(
            e.contains("promote_stagger=1") && e.contains("promote >= 2"),
            "{s}: {e}"
        );
    }
    assert!(err(spec("10:promote_stagger=1").validate_for(DType::F16)).contains("e4m3"));
}

#[test]
fn the_windowed_promoting_loop_says_what_it_needs() {
    let spec = |s: &str| parse_spec(s).unwrap();
    spec("10:tile_k=128,bn=128,promote=4,promote_windows=1")
        .validate_for(DType::FP8)
        .unwrap();
    // H165: a loop over windows needs windows, and is not the overlap's two-set loop.
    let e = err(spec("10:tile_k=128,bn=128,promote_windows=1").validate_for(DType::FP8));
    assert!(
        e.contains("promote_windows=1") && e.contains("promote >= 1"),
        "{e}"
    );
    let overlap =
        "10:tile_k=128,bn=128,promote=1,one_b_block=1,promote_overlap=1,promote_windows=1";
    let e = err(spec(overlap).validate_for(DType::E4M3(Scales::Block)));
    assert!(e.contains("promote_overlap=0"), "{e}");
    assert!(err(spec("10:promote_windows=1").validate_for(DType::F16)).contains("e4m3"));
}

#[test]
fn fp8_scales_are_drawn_apart_from_one_and_padded_past_the_last_tile() {
    use crate::measure::fp8::Scaling;
    use crate::measure::operands::draw_scales;
    assert_eq!(draw_scales(Scaling::PerTensor, 100, 256, 0.5, 7), vec![0.5]);
    let row = draw_scales(Scaling::RowWise, 100, 256, 0.5, 7);
    assert_eq!(row.len(), 100);
    assert!(row.iter().all(|s| (0.25..2.0).contains(s)));
    // Not all alike: a kernel that takes a neighbour's scale is off.
    assert!(row.windows(2).all(|w| w[0] != w[1]));
    assert_eq!(row, draw_scales(Scaling::RowWise, 100, 256, 0.5, 7));
    assert_ne!(row, draw_scales(Scaling::RowWise, 100, 256, 0.5, 8));
    assert_eq!(
        draw_scales(Scaling::Blocks1x128, 100, 300, 0.5, 7).len(),
        300
    );
    // 128x128: three rows of three k-blocks each, padded to four with a zero (cuBLASLt's stride).
    let blocks = draw_scales(Scaling::Blocks128x128, 300, 300, 0.5, 7);
    assert_eq!(blocks.len(), 12);
    for (i, s) in blocks.iter().enumerate() {
        assert_eq!(*s == 0.0, i % 4 == 3, "scale {i}: {s}");
    }
}

#[test]
fn auto_in_fp8_takes_the_sixteen_bit_kernel_with_k_blocks_of_the_same_bytes() {
    use crate::kernel::dispatch::{
        auto_spec, auto_spec_for, auto_variant_for, FP8_BLOCK_SPEC, H200_SMS,
    };
    for name in [
        "decode_m1",
        "decode_m64",
        "decode_attn_out",
        "square4096",
        "attn_out_777",
    ] {
        let s = shape(name);
        let sixteen = auto_spec(&s, H200_SMS).0;
        assert_eq!(auto_spec_for(&s, H200_SMS, DType::BF16).0, sixteen);
        let fp8 = auto_spec_for(&s, H200_SMS, DType::FP8).0;
        assert!(
            fp8.starts_with(&sixteen) && fp8.ends_with("tile_k=128"),
            "{fp8}"
        );
        for scales in Scales::ALL {
            let dtype = DType::E4M3(scales);
            let (_, config) = auto_variant_for(&s, H200_SMS, dtype);
            config.validate_shape_for(&s, dtype).unwrap();
        }
        assert_eq!(
            auto_spec_for(&s, H200_SMS, DType::E4M3(Scales::Block)).0,
            FP8_BLOCK_SPEC
        );
    }
}

#[test]
fn fp8_takes_an_fp16_output_by_name_and_keeps_bf16s_tolerance() {
    for scales in Scales::ALL {
        let dtype = DType::E4M3F16(scales);
        assert_eq!(DType::parse(dtype.name()), Some(dtype));
        assert!(dtype.name().ends_with("-f16"));
        assert_eq!((dtype.output(), dtype.operand_bytes()), (DType::F16, 1));
        assert_eq!(dtype.scales(), Some(scales));
        assert_eq!(dtype.nan_bits(), DType::F16.nan_bits());
        // bf16's error bounds, with the allowance of one ulp of its own (fp16) output.
        let (own, bf16_out) = (dtype.tolerance(), DType::E4M3(scales).tolerance());
        assert_eq!(
            (own.rel_fro, own.rel_max),
            (bf16_out.rel_fro, bf16_out.rel_max)
        );
        assert_eq!(own.rel_value, DType::F16.tolerance().rel_value);
    }
    assert_eq!(
        DType::parse("fp8-row-f16"),
        Some(DType::E4M3F16(Scales::Row))
    );
    assert_eq!(DType::parse("e4m3-f16-row"), None);
    // The kernel writes fp16: DTYPE_BF16 is 0, the rest as for a bf16 output.
    let config = parse_spec("10:tile_k=128").unwrap();
    let defines = config.fp8_defines(DType::E4M3F16(Scales::Row)).unwrap();
    let value = |name: &str| {
        defines
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(value("DTYPE_BF16").as_deref(), Some("0"));
    assert_eq!(value("SCALES").as_deref(), Some("1"));
    assert_eq!(value("AB_E4M3").as_deref(), Some("1"));
}
