//! Hiding rung 10's epilogue (ablations/HYPOTHESES.md H97-H99, H101): ping-pong with 128 rows a consumer
//! warpgroup (cuBLAS's prefill form), the turn passed once the last MMAs are issued, and the cooperative
//! epilogue's half-tile staged at once. Each trial is one kernel against the kernel it changes, on the shapes its
//! hypothesis named; the refuted ones are pinned from their sweep (fa65945, tools/sweeps/) with the hypothesis
//! beside the pin.

use harness::trial::expect::{Expect, Expectation};
use harness::trial::hypothesis::{configs, correct};
use harness::{DType, GemmConfig, GpuTrial, VariantSpec, Verdict};

/// H97's kernel: each consumer warpgroup its own 128x192 tile, one's epilogue under the other's MMAs.
const PINGPONG_192: &str = "rung10:pingpong=1,wg_m=128,bn=192";

/// A spec and its configuration, as `configs` takes a kernel.
fn kernel(spec: &str) -> (&str, GemmConfig) {
    let config =
        harness::kernel::ladder::parse_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    (spec, config)
}

/// `candidate` against `baseline` on `shape`, the pair a sweep line of the same specs measured.
fn pair(
    name: &str,
    baseline: &str,
    candidate: &str,
    shape: &str,
    expectation: Expectation,
) -> GpuTrial {
    configs(
        name,
        kernel(baseline),
        kernel(candidate),
        shape,
        expectation,
    )
}

/// The pin of the sweep's run of the trial's pair (within 3%), the refuted hypothesis beside it.
fn refuted(written: &str) -> Expectation {
    harness::trial::pins::pinned().refuting(written)
}

/// A verdict as written before measuring, confirmed by the sweep.
fn as_written(v: Verdict, why: &str) -> Expectation {
    Expectation::hypothesis(Expect::Verdict(v), why)
}

pub(crate) fn epilogue_hiding() -> Vec<GpuTrial> {
    let rung10 = "rung10";
    let h97 = "ablations/HYPOTHESES.md H97: one warpgroup's epilogue under the other's MMAs, against rung 10's \
               cooperative epilogue that stops both consumers (about 6% of 4096 cubed)";
    // H97(a): 128x192 tiles, 4 stages, the TMA epilogue.
    let pingpong_192 = ["prefill_attn_out", "prefill_mlp_up", "square4096", "long_k"].map(|s| {
        let name = format!("beyond::pingpong_128_rows::{s}");
        let expectation = match s {
            "prefill_attn_out" => harness::trial::pins::pinned()
            .noting(&format!(
                "; as written (2-4% faster), {h97}; pinned as an effect because its interval ends 0.1 points \
                 inside the band's edge"
            )),
            "prefill_mlp_up" => refuted(&format!("1.5-3.5% faster ({h97})")),
            _ => refuted(
                &format!("5-10% slower ({h97}; 128x192 tiles are 5.33 waves at 4096 cubed: 6 rounds)"),
            ),
        };
        pair(&name, rung10, PINGPONG_192, s, expectation)
    });
    // H97(b): cuBLAS's own 176-wide tile, which needs the direct epilogue; H97(c): 128x128 tiles, 6 stages.
    let pingpong_176 = "rung10:pingpong=1,wg_m=128,bn=176,epilogue=direct,stmatrix=0,stages=5";
    let pingpong_128 = "rung10:pingpong=1,wg_m=128,bn=128,stages=6";
    let other_widths = [
        (
            "beyond::pingpong_128_rows_176::prefill_attn_out",
            pingpong_176,
            "prefill_attn_out",
            "1.5-3.5% faster",
        ),
        (
            "beyond::pingpong_128_rows_176::square4096",
            pingpong_176,
            "square4096",
            "no change to 2% faster",
        ),
        (
            "beyond::pingpong_128_rows_128::square4096",
            pingpong_128,
            "square4096",
            "1-4% faster",
        ),
        (
            "beyond::pingpong_128_rows_128::long_k",
            pingpong_128,
            "long_k",
            "no change to 3% slower",
        ),
    ]
    .map(|(name, spec, s, written)| {
        pair(
            name,
            rung10,
            spec,
            s,
            refuted(&format!("{written} ({h97})")),
        )
    });
    // The 128x192 ping-pong is not a rung, so it is checked as a rung is: bf16, partial M and N tiles.
    let pingpong_correct = correct(
        "beyond::pingpong_128_rows_correct::bf16::tokens_777",
        VariantSpec::gemm(PINGPONG_192.to_string(), kernel(PINGPONG_192).1),
        "tokens_777",
        DType::BF16,
    );
    // H98 and H101(c): the turn passed once the last MMAs are issued (CUTLASS's ordered barrier).
    let h98 = "ablations/HYPOTHESES.md H98: no change; one drain of a batch of wgmmas is a few hundred of a tile's \
               tens of thousands of cycles";
    let pingpong_192_early = format!("{PINGPONG_192},early_turn=1");
    let early_turn = [
        (
            "prefill_attn_out",
            PINGPONG_192,
            pingpong_192_early.as_str(),
        ),
        ("prefill_mlp_up", PINGPONG_192, pingpong_192_early.as_str()),
        ("square4096", "rung8", "rung8:early_turn=1"),
    ]
    .map(|(s, base, candidate)| {
        pair(
            &format!("beyond::early_turn::{s}"),
            base,
            candidate,
            s,
            as_written(Verdict::NoChange, h98),
        )
    });
    // H99: the cooperative epilogue's 64x256 half-tile staged in four chunks, (a) against the same 3-stage ring,
    // (b) against rung 10's 4 stages.
    let h99 = "ablations/HYPOTHESES.md H99: the half-tile's stores queue at once instead of waiting behind the \
               132 CTAs writing C together";
    let staged = "rung10:epi_buffers=4,stages=3";
    let three_stages = "rung10:stages=3";
    let epi_buffers = [
        ("square4096", Some("2-4% faster")),
        ("prefill_attn_out", Some("1-2% faster")),
        ("long_k", None),
    ]
    .map(|(s, refuted_written)| {
        let expectation = match refuted_written {
            Some(written) => refuted(&format!("{written} ({h99})")),
            None => as_written(
                Verdict::NoChange,
                &format!("{h99}: no change on long_k, as written"),
            ),
        };
        pair(
            &format!("beyond::epi_buffers::{s}"),
            three_stages,
            staged,
            s,
            expectation,
        )
    });
    let epi_buffers_vs_rung10 = [
        pair(
            "beyond::epi_buffers_vs_rung10::square4096",
            rung10,
            staged,
            "square4096",
            refuted(&format!("0.5-3% faster ({h99}, less a stage)")),
        ),
        pair(
            "beyond::epi_buffers_vs_rung10::long_k",
            rung10,
            staged,
            "long_k",
            as_written(
                Verdict::NoChange,
                &format!("{h99}: 0-2% slower, the lost stage costing more than the staging saves at K = 16384"),
            ),
        ),
    ];
    // H101(a), (b): one switch at a time on the 128x192 ping-pong.
    let h101 = "ablations/HYPOTHESES.md H101";
    let direct = format!("{PINGPONG_192},epilogue=direct,stmatrix=0,stages=5");
    let unclustered = format!("{PINGPONG_192},cluster=1");
    let tuning = ["prefill_attn_out", "prefill_mlp_up"].into_iter().flat_map(|s| {
        [
            pair(
                &format!("beyond::pingpong_192_direct::{s}"),
                PINGPONG_192,
                &direct,
                s,
                refuted(
                    &format!("2-6% slower ({h101}(a): the direct epilogue's stores from registers, a fifth stage)"),
                ),
            ),
            pair(
                &format!("beyond::pingpong_192_cluster1::{s}"),
                PINGPONG_192,
                &unclustered,
                s,
                refuted(
                    &format!("1-3% slower ({h101}(b): every CTA loads its own B tile, twice the bytes from L2)"),
                ),
            ),
        ]
    });
    pingpong_192
        .into_iter()
        .chain(other_widths)
        .chain([pingpong_correct])
        .chain(early_turn)
        .chain(epi_buffers)
        .chain(epi_buffers_vs_rung10)
        .chain(tuning)
        .collect()
}
