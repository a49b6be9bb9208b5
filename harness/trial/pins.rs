//! Values pinned from named reference runs, compiled in, so a pinned expectation can only ever say what those
//! files say:
//! - the H200 runs of commit b9d1c9c (three runs of every step and switch verdict, one microbench run), measured
//!   in one stretch per process: the verdicts the step, switch and isolation trials pin;
//! - the H200 whole-suite runs of commits 796511a and 9a8c135, with rounds on fresh operands, on two lent
//!   machines: the ladder cells, whose ratio to cuBLAS moves with the machine's sustained clock and with the
//!   cuBLAS algorithm a run picks, and the trials whose verdict did not hold from one reference run to the next.
//!   Their tolerance covers what the two runs disagreed by.
//!
//! The `replay::` CPU trials test the other direction: the committed runs must satisfy the current expectations.

use crate::measure::stats::Verdict;
use crate::trial::expect::{describe_expect, Expect, Expectation, Source};
use serde_json::Value;
use std::sync::OnceLock;

/// (file name under results/h200/, contents)
const RUNS: [(&str, &str); 9] = [
    (
        "b9d1c9c/ablations-full-20261130T010413Z",
        include_str!("../../results/h200/b9d1c9c/ablations-full-20261130T010413Z.json"),
    ),
    (
        "b9d1c9c/ablations-repeat-20261130T010753Z",
        include_str!("../../results/h200/b9d1c9c/ablations-repeat-20261130T010753Z.json"),
    ),
    (
        "b9d1c9c/ablations-repeat-20261130T010842Z",
        include_str!("../../results/h200/b9d1c9c/ablations-repeat-20261130T010842Z.json"),
    ),
    (
        "b9d1c9c/ablations-repeat-20261130T010908Z",
        include_str!("../../results/h200/b9d1c9c/ablations-repeat-20261130T010908Z.json"),
    ),
    (
        "b9d1c9c/ablations-repeat-20261130T010916Z",
        include_str!("../../results/h200/b9d1c9c/ablations-repeat-20261130T010916Z.json"),
    ),
    (
        "b9d1c9c/ablations-repeat-20261130T011004Z",
        include_str!("../../results/h200/b9d1c9c/ablations-repeat-20261130T011004Z.json"),
    ),
    (
        "b9d1c9c/ablations-repeat-20261130T011030Z",
        include_str!("../../results/h200/b9d1c9c/ablations-repeat-20261130T011030Z.json"),
    ),
    (
        "b9d1c9c/ladder-20261130T011437Z",
        include_str!("../../results/h200/b9d1c9c/ladder-20261130T011437Z.json"),
    ),
    (
        "b9d1c9c/microbench-20261130T011047Z",
        include_str!("../../results/h200/b9d1c9c/microbench-20261130T011047Z.json"),
    ),
];

/// What the reference runs measured for one comparison trial.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    pub runs: Vec<String>,
    pub ratios: Vec<f64>,
    pub verdicts: Vec<Verdict>,
}

impl Reference {
    /// Geometric mean of the runs' ratios.
    pub fn ratio(&self) -> f64 {
        (self.ratios.iter().map(|r| r.ln()).sum::<f64>() / self.ratios.len() as f64).exp()
    }
    /// The verdict every run gave, if they agree.
    pub fn verdict(&self) -> Option<Verdict> {
        let v = *self.verdicts.first()?;
        self.verdicts.iter().all(|&w| w == v).then_some(v)
    }
    pub fn describe(&self) -> String {
        format!(
            "ratio {} ({}), geometric mean {:.4}",
            self.ratios
                .iter()
                .map(|r| format!("{r:.4}"))
                .collect::<Vec<_>>()
                .join(", "),
            self.verdicts
                .iter()
                .map(|v| v.word())
                .collect::<Vec<_>>()
                .join(" / "),
            self.ratio()
        )
    }
}

/// The rounds-method reference runs (commits 796511a, 9a8c135, 7c0344c and 9f564f1, whole suite each, four lent
/// H200s).
const CURRENT: [(&str, &str); 4] = [
    (
        "796511a/ablations-20261130T122613Z",
        include_str!("../../results/h200/796511a/ablations-20261130T122613Z.json"),
    ),
    (
        "9a8c135/ablations-20261130T123530Z",
        include_str!("../../results/h200/9a8c135/ablations-20261130T123530Z.json"),
    ),
    (
        "7c0344c/ablations-20261130T131618Z",
        include_str!("../../results/h200/7c0344c/ablations-20261130T131618Z.json"),
    ),
    (
        "9f564f1/ablations-20261130T132526Z",
        include_str!("../../results/h200/9f564f1/ablations-20261130T132526Z.json"),
    ),
];

/// The first runs of the trials past the seed (rung 9 and up, `beyond::`, `ladder::auto`) (`tools/h200-trials.sh`,
/// one file per filter): on two-GPU H200 hosts deeab76 (rungs 9 and 10, their switches), c8e3b11 (stream-K on
/// decode), f45a873 (stream-K on the last waves, the `auto` row), da17df3 (programmatic dependent launch); on
/// one-GPU hosts 0af4cf4 (swap-AB, evict-first, early weights), 0b5d00a (wide k-blocks), 6eefa35 (the `auto` row
/// with evict-first and PDL, two CTAs an SM), 5be6541 (token-matched tiles), ee42796 (multicast tokens, token tiles
/// of any multiple of 8), a73ef92 (the Hilbert tile order, consumers splitting the token tile), 1442f58 (the weights shared by 2-CTA clusters,
/// H44 and H47). Where they refuted a hypothesis, the
/// trial is pinned from them and keeps the hypothesis beside the pin.
const PAST_SEED: [(&str, &str); 24] = [
    (
        "deeab76/ablations-20261130T141442Z",
        include_str!("../../results/h200/deeab76/ablations-20261130T141442Z.json"),
    ),
    (
        "deeab76/ablations-20261130T141453Z",
        include_str!("../../results/h200/deeab76/ablations-20261130T141453Z.json"),
    ),
    (
        "deeab76/ablations-20261130T141500Z",
        include_str!("../../results/h200/deeab76/ablations-20261130T141500Z.json"),
    ),
    (
        "deeab76/ablations-20261130T141516Z",
        include_str!("../../results/h200/deeab76/ablations-20261130T141516Z.json"),
    ),
    (
        "deeab76/ablations-20261130T141525Z",
        include_str!("../../results/h200/deeab76/ablations-20261130T141525Z.json"),
    ),
    (
        "c8e3b11/trials/runs/ablations-20261130T142755Z",
        include_str!("../../results/h200/c8e3b11/trials/runs/ablations-20261130T142755Z.json"),
    ),
    (
        "f45a873/trials/runs/ablations-20261130T143204Z",
        include_str!("../../results/h200/f45a873/trials/runs/ablations-20261130T143204Z.json"),
    ),
    (
        "f45a873/trials/runs/ablations-20261130T143213Z",
        include_str!("../../results/h200/f45a873/trials/runs/ablations-20261130T143213Z.json"),
    ),
    (
        "f45a873/trials/runs/ablations-20261130T143219Z",
        include_str!("../../results/h200/f45a873/trials/runs/ablations-20261130T143219Z.json"),
    ),
    (
        "f45a873/trials/runs/ablations-20261130T143223Z",
        include_str!("../../results/h200/f45a873/trials/runs/ablations-20261130T143223Z.json"),
    ),
    (
        "da17df3/trials/runs/ablations-20261130T144749Z",
        include_str!("../../results/h200/da17df3/trials/runs/ablations-20261130T144749Z.json"),
    ),
    (
        "0af4cf4/trials/runs/ablations-20261130T152429Z",
        include_str!("../../results/h200/0af4cf4/trials/runs/ablations-20261130T152429Z.json"),
    ),
    (
        "0af4cf4/trials/runs/ablations-20261130T152443Z",
        include_str!("../../results/h200/0af4cf4/trials/runs/ablations-20261130T152443Z.json"),
    ),
    (
        "0af4cf4/trials/runs/ablations-20261130T152450Z",
        include_str!("../../results/h200/0af4cf4/trials/runs/ablations-20261130T152450Z.json"),
    ),
    (
        "0b5d00a/trials/runs/ablations-20261130T152852Z",
        include_str!("../../results/h200/0b5d00a/trials/runs/ablations-20261130T152852Z.json"),
    ),
    (
        "6eefa35/trials/runs/ablations-20261130T153627Z",
        include_str!("../../results/h200/6eefa35/trials/runs/ablations-20261130T153627Z.json"),
    ),
    (
        "6eefa35/trials/runs/ablations-20261130T153645Z",
        include_str!("../../results/h200/6eefa35/trials/runs/ablations-20261130T153645Z.json"),
    ),
    (
        "5be6541/trials/runs/ablations-20261130T154108Z",
        include_str!("../../results/h200/5be6541/trials/runs/ablations-20261130T154108Z.json"),
    ),
    (
        "ee42796/trials/runs/ablations-20261130T163815Z",
        include_str!("../../results/h200/ee42796/trials/runs/ablations-20261130T163815Z.json"),
    ),
    (
        "ee42796/trials/runs/ablations-20261130T163822Z",
        include_str!("../../results/h200/ee42796/trials/runs/ablations-20261130T163822Z.json"),
    ),
    (
        "a73ef92/trials/runs/ablations-20261130T172711Z",
        include_str!("../../results/h200/a73ef92/trials/runs/ablations-20261130T172711Z.json"),
    ),
    (
        "a73ef92/trials/runs/ablations-20261130T172721Z",
        include_str!("../../results/h200/a73ef92/trials/runs/ablations-20261130T172721Z.json"),
    ),
    (
        "1442f58/trials/runs/ablations-20261130T210010Z",
        include_str!("../../results/h200/1442f58/trials/runs/ablations-20261130T210010Z.json"),
    ),
    (
        "1442f58/trials/runs/ablations-20261130T210018Z",
        include_str!("../../results/h200/1442f58/trials/runs/ablations-20261130T210018Z.json"),
    ),
];

/// One run's estimate of a trial: (run, ratio, 95% interval low, high).
type Estimate = (&'static str, f64, f64, f64);

/// A ratio pinned from the b774589 whole-suite run, the first after the any-M and stream-K restructuring of the
/// kernel's tile loop (as `pinned_current_ratio`, within `floor` at least), for a trial whose effect that
/// restructuring moved; the earlier pin's runs are named beside it.
pub fn pinned_after_stream_k(trial: &str, floor: f64, hypothesis: &str) -> Expectation {
    let runs = estimates(&whole_suite_runs()[..1], trial);
    assert!(
        !runs.is_empty(),
        "{trial}: the b774589 run does not hold it"
    );
    let before = current(trial)
        .iter()
        .map(|r| format!("{} {:.4}", r.0, r.1))
        .collect::<Vec<_>>()
        .join(", ");
    pinned_ratio_from(&runs, floor)
        .refuting(format!("{hypothesis}; before the restructuring: {before}"))
}

/// Whole-suite runs on two-GPU H200 hosts since the any-M and stream-K restructuring, the runs where a trial's ratio
/// moved from one host to the next among them: b774589 (all green, first: `pinned_after_stream_k` reads it),
/// 9c40536, 0797e18, 2de39eb, 243efda; and 2bc72f3 on a one-GPU host, where rungs 1 and 2 on decode_mlp_up ran as
/// slowly as on 9f564f1 while cuBLAS ran fast, and raster groups of 2 on rung 8 at decode_attn_out measured 1.041;
/// and 7baa087's two shards on one one-GPU host, where rung 3 on decode_attn_out measured 4.444; 51898b3's first shard
/// (all green) and 93711e8's (one-GPU hosts), where `auto`'s whole 128x128 tiles on decode_mlp_down measured 0.958
/// against cuBLAS (cuBLAS 207.6 us, the kernel 199.1 us at a 1365 MHz median) after 1.021-1.026 in four runs.
const WHOLE_SUITE: [(&str, &str); 10] = [
    (
        "b774589/ablations-20261130T143838Z",
        include_str!("../../results/h200/b774589/ablations-20261130T143838Z.json"),
    ),
    (
        "9c40536/ablations-20261130T145125Z",
        include_str!("../../results/h200/9c40536/ablations-20261130T145125Z.json"),
    ),
    (
        "0797e18/ablations-20261130T145826Z",
        include_str!("../../results/h200/0797e18/ablations-20261130T145826Z.json"),
    ),
    (
        "2de39eb/ablations-20261130T155204Z",
        include_str!("../../results/h200/2de39eb/ablations-20261130T155204Z.json"),
    ),
    (
        "243efda/ablations-20261130T160058Z",
        include_str!("../../results/h200/243efda/ablations-20261130T160058Z.json"),
    ),
    (
        "2bc72f3/ablations-20261130T174403Z",
        include_str!("../../results/h200/2bc72f3/ablations-20261130T174403Z.json"),
    ),
    (
        "7baa087/ablations-20261130T185539Z",
        include_str!("../../results/h200/7baa087/ablations-20261130T185539Z.json"),
    ),
    (
        "7baa087/ablations-20261130T190146Z",
        include_str!("../../results/h200/7baa087/ablations-20261130T190146Z.json"),
    ),
    (
        "51898b3/ablations-20261130T200659Z",
        include_str!("../../results/h200/51898b3/ablations-20261130T200659Z.json"),
    ),
    (
        "93711e8/ablations-20261130T210632Z",
        include_str!("../../results/h200/93711e8/ablations-20261130T210632Z.json"),
    ),
];

/// Trials whose ratio moved between H200 hosts with an unchanged kernel: `ablation::multicast::decode_attn_out`
/// measured 1.07-1.11 in five runs and 1.019, 1.020 on the 0797e18 and 2de39eb hosts; rungs 9 and 10 on
/// decode_mlp_up 0.996-1.006 in three runs, 1.03 and 1.06 on those two hosts (at 1410 MHz, where cuBLAS chose
/// another algorithm); rung 3 on decode_qkv 5.02-5.31 in the four rounds-method runs it was pinned from, 5.19-5.41
/// in four whole-suite runs and 5.52 at 243efda (its cubin unchanged since b774589). At 2bc72f3 (a one-GPU host, all
/// 113 earlier cubins byte-identical to 6a8b716's, `tools/cubin-identity.sh`): rungs 1, 2 and 3 on decode_mlp_up
/// 5.77, 5.72, 4.46 against cuBLAS (rungs 1 and 2 took 1038 and 1015 us, as on 9f564f1, against 965 and 911 us on
/// 6a8b716's host, while cuBLAS took 177 us, its fastest), and rung 8 with raster groups of 2 on decode_attn_out
/// 1.041 against 0.995 at 6a8b716; each reproduced in a second process on the same host (`2bc72f3/rerun/`). At
/// 7baa087 (one-GPU host, the 113 earlier cubins byte-identical to 6a8b716's): rung 3 on decode_attn_out 4.444
/// against its pin of 4.024 (+-8%) from the rounds-method runs. At 93711e8 (one-GPU host; the kernel's source
/// unchanged since 51898b3): `auto`'s whole 128x128 tiles on decode_mlp_down 0.958 against cuBLAS, after 1.021-1.026
/// in the 869f58b sweep and three runs since. At 370face (one-GPU host) cuBLAS's fastest path on decode_mlp_up in
/// the trials' conditions was cuBLASLt's algorithm 1, 4-6% faster in the rounds than the paths chosen on the hosts
/// before: rung 9 measured 1.125 against it and `auto` 1.005, with both kernels' times unchanged (`AFTER_H50`).
/// At 80b1dd8 (one-GPU host, rung 10's cubin unchanged: its default switches compile as before) the chooser took
/// cublasGemmEx on prefill_attn_out, which ran 1738.5 us in the rounds against cuBLASLt's algorithm 7 at 1608-1650
/// us on the hosts before, while rung 10 took 1667.9 us (1668-1699 before): rung 10 measured 0.968 against cuBLAS
/// where six runs had measured 1.031-1.038. At 1432bb9 (one-GPU host) the chooser took cublasGemmEx on
/// prefill_attn_out again (1627 us in the chooser against algorithms 6 and 7 at 1640; 1718-1736 us in the rounds):
/// rungs 7 and 9 and `auto` measured 1.006, 0.974 and 0.966 against it where the runs against algorithm 7 had
/// measured 1.058-1.069, 1.027-1.033 and 1.026-1.035, their own times as before (rung 9 1671.5 us, `auto` 1677.4).
pub const ACROSS_HOSTS: [&str; 15] = [
    "ladder::rung7_twoconsumers::prefill_attn_out",
    "ladder::rung9_cooperative::prefill_attn_out",
    "ladder::auto::prefill_attn_out",
    "ablation::multicast::decode_attn_out",
    "ladder::rung10_stmatrix::prefill_attn_out",
    "ladder::rung9_cooperative::decode_mlp_up",
    "ladder::rung10_stmatrix::decode_mlp_up",
    "ladder::rung3_warpspec::decode_qkv",
    "ladder::rung1_kloop::decode_mlp_up",
    "ladder::rung2_pipeline::decode_mlp_up",
    "ladder::rung3_warpspec::decode_mlp_up",
    "switch::raster8_on::decode_attn_out",
    "ladder::rung3_warpspec::decode_attn_out",
    "ladder::auto::decode_mlp_down",
    "ladder::auto::decode_mlp_up",
];

/// Whether a trial's ratio is pinned across hosts: the trials named in `ACROSS_HOSTS`, and every ladder cell of
/// rungs 1-3. Those rungs run 4-7x cuBLAS's time, so their ratio follows whichever algorithm and clock cuBLAS gets
/// on a host; four of their 21 cells went red on a new host with a byte-identical cubin (rung 3 on decode_qkv at
/// 243efda, rungs 2 and 3 on decode_mlp_up at 2bc72f3, rung 3 on decode_attn_out at 7baa087), rung 1 on
/// decode_mlp_up passed there on its interval's edge, and rung 2 on decode_attn_out (6a8b716) and square4096
/// (2bc72f3) measured outside today's windows; so all 21 take their window from every run that holds them instead
/// of waiting for the next host to find the rest. Likewise every ladder cell on decode_mlp_up: cuBLAS's time there
/// ran 189.7-221.3 us over the committed runs since the chooser fix, and three of its cells went red at 44ddb92
/// (rungs 6 and 10 and `auto`, each faster than its pin against cuBLAS at 209.8-218.1 us).
pub fn across_hosts(trial: &str) -> bool {
    ACROSS_HOSTS.contains(&trial)
        || ["ladder::rung1_", "ladder::rung2_", "ladder::rung3_"]
            .iter()
            .any(|p| trial.starts_with(p))
        || (trial.starts_with("ladder::") && trial.ends_with("::decode_mlp_up"))
}

/// The whole-suite run since the cuBLAS path chooser was fixed (bda6421: a warm-up, then every path in five
/// interleaved rounds, the lowest median wins): ea85c90's two shards, then the `ladder::` runs of 34dbaf0 and
/// 18f19ed, each on the next host, one-GPU hosts (results/h200/, the runs the `replay::` trials judge). On ea85c90's
/// second host rung 5 on decode_attn_out measured 1.247 against cuBLAS (and rung 6 over rung 5 there 0.943), on
/// 34dbaf0's 1.101. On decode_mlp_down the chooser takes cublasGemmEx or cuBLASLt's algorithm 2, 1-2% apart back to
/// back, whose times in the trial's rounds differ more: `auto` measured 1.027 and 1.025 against algorithm 2, 0.952
/// against cublasGemmEx at 18f19ed (0.958 at 93711e8, also against cublasGemmEx). A ladder cell's window spans what
/// these runs saw.
///
/// Every earlier run compared the ladder against a path chosen in one pass, in a row, on a GPU that may have been cold (or under ncu): at 4e3a90c
/// that pass took cuBLASLt's algorithm 6 at 63.9 us where cublasGemmEx runs 47.9 us (200x8192x8192), and in
/// ea85c90's suite the fixed chooser took faster paths than the earlier runs had on prefill_attn_out (1617 against
/// cublasGemmEx's 1715 us), decode_mlp_up and decode_mlp_down. So those runs no longer pin a ratio to cuBLAS.
const FIXED_CHOOSER: [(&str, &str); 4] = [
    (
        "ablations-20261130T215926Z",
        include_str!("../../results/h200/ablations-20261130T215926Z.json"),
    ),
    (
        "ablations-20261130T220720Z",
        include_str!("../../results/h200/ablations-20261130T220720Z.json"),
    ),
    (
        "ablations-20261130T221821Z",
        include_str!("../../results/h200/ablations-20261130T221821Z.json"),
    ),
    (
        "ablations-20261130T222350Z",
        include_str!("../../results/h200/ablations-20261130T222350Z.json"),
    ),
];

fn fixed_chooser_runs() -> &'static [(&'static str, Value)] {
    static PARSED: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    PARSED.get_or_init(|| parse(&FIXED_CHOOSER))
}

/// The whole-suite runs since cuBLAS's path is chosen in the trials' own conditions (H50), each shard on its own
/// one-GPU host's run: be65393, 370face and 80b1dd8's first shard. On decode_mlp_up cuBLAS's chosen path ran 203.8-207.1 us in be65393's
/// rounds (cuBLASLt's algorithm 5) and 195.5-199.3 us in 370face's (algorithm 1, 184.8 us in the chooser against
/// algorithm 5's 187.7), while rung 9 took 219.0-219.1 us and `auto` 197.9-200.5 in both: rung 9 measured 1.076 and
/// 1.125, `auto` 0.954 and 1.005 against cuBLAS (0.918 at ea85c90, against algorithm 3). Then 1432bb9's two shards
/// (one host, cublasGemmEx on prefill_attn_out; see `ACROSS_HOSTS`). Then 44ddb92's first shard and the part of its
/// second shard the device budget left (one host): cuBLAS took 209.8-218.1 us on decode_mlp_up there, against
/// 189.7-207.1 in the runs before, and rungs 6 and 10 and `auto` measured 1.197, 1.003 and 0.893 against it with
/// their own times as before (251.7, 215.7 and 194.7 us).
const AFTER_H50: [(&str, &str); 9] = [
    (
        "ablations-20261201T033730Z",
        include_str!("../../results/h200/ablations-20261201T033730Z.json"),
    ),
    (
        "ablations-20261201T034528Z",
        include_str!("../../results/h200/ablations-20261201T034528Z.json"),
    ),
    (
        "ablations-20261130T230907Z",
        include_str!("../../results/h200/ablations-20261130T230907Z.json"),
    ),
    (
        "ablations-20261201T012458Z",
        include_str!("../../results/h200/ablations-20261201T012458Z.json"),
    ),
    (
        "ablations-20261130T231539Z",
        include_str!("../../results/h200/ablations-20261130T231539Z.json"),
    ),
    (
        "ablations-20261201T001821Z",
        include_str!("../../results/h200/ablations-20261201T001821Z.json"),
    ),
    (
        "ablations-20261201T002606Z",
        include_str!("../../results/h200/ablations-20261201T002606Z.json"),
    ),
    (
        "ablations-20261201T082518Z",
        include_str!("../../results/h200/ablations-20261201T082518Z.json"),
    ),
    (
        "44ddb92/partial/ablations-20261201T105124Z",
        include_str!("../../results/h200/44ddb92/partial/ablations-20261201T105124Z.json"),
    ),
];

fn after_h50_runs() -> &'static [(&'static str, Value)] {
    static PARSED: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    PARSED.get_or_init(|| parse(&AFTER_H50))
}

/// `estimates` of the records whose candidate is `candidate` (a ladder cell of `auto` measured another kernel
/// wherever `auto`'s rule for the shape has changed since).
fn estimates_of(runs: &[(&'static str, Value)], trial: &str, candidate: &str) -> Vec<Estimate> {
    let ran_it = |v: &Value| {
        v["trials"].as_array().is_some_and(|ts| {
            ts.iter()
                .any(|t| t["name"] == trial && t["comparison"]["candidate"] == candidate)
        })
    };
    estimates(runs, trial)
        .into_iter()
        .filter(|e| runs.iter().any(|(r, v)| *r == e.0 && ran_it(v)))
        .collect()
}

/// A ladder cell (a kernel's time over cuBLAS's) after the chooser fix: where a run with the fixed chooser holds it,
/// `before` stays only if it is a verdict those runs confirm; otherwise the ratio those runs measured, within the
/// tolerance `before` had (the spread earlier runs showed across hosts) or what the runs need, whichever is wider,
/// with `before` named beside it (as the hypothesis refuted, where it was one).
/// For a trial pinned across hosts, the runs since H50 (`AFTER_H50`) of the same `candidate` count too.
pub fn against_the_fixed_chooser(trial: &str, candidate: &str, before: Expectation) -> Expectation {
    let mut runs = estimates_of(fixed_chooser_runs(), trial, candidate);
    if across_hosts(trial) {
        runs.extend(estimates_of(after_h50_runs(), trial, candidate));
    }
    if runs.is_empty() {
        return before;
    }
    let seen = |run: &str| {
        fixed_chooser_runs()
            .iter()
            .find(|(r, _)| *r == run)
            .and_then(|(_, v)| recorded_verdict(v, trial))
    };
    if let Expect::Verdict(v) = &before.expect {
        if runs.iter().all(|r| seen(r.0) == Some(*v)) {
            return before;
        }
    }
    let tolerance = match before.expect {
        Expect::RatioNear { tolerance, .. } | Expect::EffectNear { tolerance, .. } => tolerance,
        _ => 0.05,
    };
    let was = before.describe().join("; ");
    let pin = pinned_ratio_from(&runs, tolerance);
    match before.source {
        Source::Hypothesis(why) => {
            pin.refuting(format!("{} ({why})", describe_expect(&before.expect)))
        }
        Source::Pinned { .. } => pin.noting(&format!(
            "; before the chooser fix (bda6421), against the path the one-pass chooser took: {was}"
        )),
    }
}

/// The whole-suite runs, parsed once.
fn whole_suite_runs() -> &'static [(&'static str, Value)] {
    static PARSED: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    PARSED.get_or_init(|| parse(&WHOLE_SUITE))
}

/// A trial whose ratio moves between H200 hosts with the same kernel (its cubin unchanged): a ratio pinned from
/// every rounds-method reference run and whole-suite run that holds it (as `pinned_current_ratio`, within `floor`
/// at least, so as wide as the hosts disagreed), keeping the hypothesis it leaves unsettled.
pub fn pinned_across_hosts(trial: &str, hypothesis: &str, floor: f64) -> Expectation {
    let mut runs = current(trial);
    runs.extend(estimates(whole_suite_runs(), trial));
    // A trial of two of our kernels does not depend on cuBLAS's path: the runs since the chooser fix add hosts.
    if !trial.starts_with("ladder::") {
        runs.extend(estimates(fixed_chooser_runs(), trial));
    }
    unsettled_across_hosts(trial, &runs, floor, &format!("{hypothesis}:"))
}

/// The pin of these runs, keeping `lead` (the hypothesis) and what they measured beside it.
fn unsettled_across_hosts(trial: &str, runs: &[Estimate], floor: f64, lead: &str) -> Expectation {
    assert!(runs.len() >= 2, "{trial}: fewer than two runs hold it");
    pinned_ratio_from(runs, floor).refuting(format!(
        "{lead} not settled on the H200; the same kernel measured {} on different hosts",
        runs.iter()
            .map(|r| format!("{:.3}", r.1))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// `compare` sweeps that measured a kernel before any trial ran it: H31's whole 128x128 tiles at M = 256 against
/// cuBLAS (869f58b, tools/sweeps/decode-whole.txt), the pin of `ladder::auto` on the shapes `auto` now runs them;
/// `swap_store=pairs` against the element stores on tokens_777 and tokens_480 (36011d7,
/// tools/sweeps/h40-pairs-paired.txt), the pins of `beyond::swap_store`; one consumer of 128 weight rows against
/// two of 64 at M = 200 (4e3a90c, tools/sweeps/h48-one-consumer.txt), the pin of `beyond::one_consumer`; the
/// waits at CTA scope at M = 200 (cab62f3, tools/sweeps/h49-wait-scope.txt), the pin of `beyond::wait_scope`; the
/// waits with a suspend-time hint at M = 200 and on decode_attn_out (5bc64c4, tools/sweeps/h51-wait-suspend.txt), the
/// pins of `beyond::wait_suspend`; `auto`'s small-M and decode kernels with loads only (31a1c80,
/// tools/sweeps/h52-loads-only.txt), the pins of the microbench's `loads_only`; 12 ring stages against 8 at M = 1
/// and 64 (2022ecc, tools/sweeps/h53-deep-ring.txt), the pins of `beyond::deep_ring`; token tiles rounded to 8
/// on tokens_777 (62a0efe, tools/sweeps/h54-token-tiles-of-8.txt), the pins of `beyond::token_tiles_of_8`;
/// descriptors advanced on decode_attn_out, CTA-scope acquires and one consumer of 128 rows on the lean loop at
/// M = 200 (3c8fceb, tools/sweeps/h64-desc-advance.txt), and one consumer over the whole 208-token tile at M = 200
/// (c204b16, tools/sweeps/h63-one-consumer-whole.txt): the pins of the refuted H63-H66 trials; four-CTA clusters on
/// decode_attn_out (6521e85, tools/sweeps/h68-cluster4.txt) and at N = 7168 and with stream-K (8bda908,
/// tools/sweeps/h69-cluster4-fit.txt): the pins of the refuted H68 and H69 trials; `auto` at M = 128 taken apart
/// and 128 weight rows with stream-K at M = 64-128 (7de3d0a, tools/sweeps/h72-m128.txt): the pins of H72's trials;
/// the skinny kernel against `auto`'s at M = 1, 8 and 16 (e7f7856, tools/sweeps/h80-skinny.txt) and with 8 k-steps
/// in flight at M = 1 (979d348, tools/sweeps/h80-skinny-2.txt): the pins of `beyond::skinny`; its k-steps dealt
/// round-robin to its warps (c026bf9, tools/sweeps/h81-interleave.txt): the pin of `beyond::skinny_interleave`;
/// where `auto`'s M = 1 kernel loses to the read floor (c83e681 tools/sweeps/h82-gap.txt, fbf50d1
/// tools/sweeps/h84-order.txt, 8c9318b tools/sweeps/h86-resident.txt): the pins of the microbench's
/// `read_floor::gemm_order*`, `read_floor::auto_loads*`, `read_floor::streamk*` and `stages::two_ctas_an_sm`.
/// (H83's sweep, c83e681, ran a `k_rotate=1` that divided once per k-block: `beyond::k_rotate` is pinned from
/// `SUITE_REPINS` instead.) `auto`'s M = 1 kernel without its token cluster (6e92dc3,
/// tools/sweeps/h88-cluster-m1.txt): the pins of `beyond::no_token_cluster` and `loads_only::no_token_cluster`;
/// the same over M = 8-96 (697fd3a, tools/sweeps/h89-cluster-over-m.txt): the pins of the rest of
/// `beyond::no_token_cluster`; the read floor with a chain of MMAs each lap (697fd3a, tools/sweeps/h90-floor-mmas.txt)
/// and the skinny kernel's cp.async ring against `auto`'s kernel (697fd3a, tools/sweeps/h91-skinny-ring.txt): the
/// pins of `read_floor::mma_chain` and `beyond::skinny_ring`; `auto` against cuBLAS at M = 1 and 8 (1c88247,
/// tools/sweeps/h92-auto-over-m.txt), with the trials' own run: the pins of `beyond::auto_vs_cublas` there.
/// Stream-K on the last waves with the clusters walking k in step, against rung 10 and against `streamk=2`
/// (9e055dd, tools/sweeps/h95-streamk-in-step.txt): the pins of `beyond::streamk_in_step*`, and its `streamk=3`
/// against cuBLAS on prefill_attn_out, the pin of `ladder::auto` there since H100's rule. Ping-pong with 128 rows a
/// warpgroup, the turn passed early, the cooperative epilogue's half-tile staged at once, `streamk=3` out of H95's
/// sample and three changes to the 128x192 ping-pong (fa65945, tools/sweeps/h97-pingpong-128-rows.txt,
/// h99-epilogue-staging.txt, h100-streamk-model.txt, h101-pingpong-192-tuning.txt): the pins of
/// `beyond::pingpong_128_rows*`, `beyond::early_turn`, `beyond::epi_buffers*`, `beyond::streamk_model` and
/// `beyond::pingpong_192_*`. H102, `streamk=3` where H100's rule sends `auto` far from its fit, and H103, the
/// 256x192 tile against rung 10 and cuBLAS (89ac068, tools/sweeps/h102-streamk-rule-reach.txt, h103-wide-tile.txt):
/// the pins of `beyond::streamk_rule_reach::*` and `beyond::wide_tile::*`. H104, two pairs with both clock probes
/// read in the rounds, twice (029a7ba, tools/sweeps/h104-paired-clock.txt): the pin of `clock::paired::*`.
const SWEEPS: [(&str, &str); 111] = [
    (
        "9e055dd/h95-streamk-in-step/runs/compare-20261201T210132Z",
        include_str!(
            "../../results/h200/9e055dd/h95-streamk-in-step/runs/compare-20261201T210132Z.json"
        ),
    ),
    (
        "fa65945/h97-pingpong-128-rows/runs/compare-20261201T221321Z",
        include_str!(
            "../../results/h200/fa65945/h97-pingpong-128-rows/runs/compare-20261201T221321Z.json"
        ),
    ),
    (
        "fa65945/h97-pingpong-128-rows/runs/compare-20261201T221326Z",
        include_str!(
            "../../results/h200/fa65945/h97-pingpong-128-rows/runs/compare-20261201T221326Z.json"
        ),
    ),
    (
        "fa65945/h97-pingpong-128-rows/runs/compare-20261201T221330Z",
        include_str!(
            "../../results/h200/fa65945/h97-pingpong-128-rows/runs/compare-20261201T221330Z.json"
        ),
    ),
    (
        "fa65945/h97-pingpong-128-rows/runs/compare-20261201T221337Z",
        include_str!(
            "../../results/h200/fa65945/h97-pingpong-128-rows/runs/compare-20261201T221337Z.json"
        ),
    ),
    (
        "fa65945/h97-pingpong-128-rows/runs/compare-20261201T221342Z",
        include_str!(
            "../../results/h200/fa65945/h97-pingpong-128-rows/runs/compare-20261201T221342Z.json"
        ),
    ),
    (
        "fa65945/h97-pingpong-128-rows/runs/compare-20261201T221345Z",
        include_str!(
            "../../results/h200/fa65945/h97-pingpong-128-rows/runs/compare-20261201T221345Z.json"
        ),
    ),
    (
        "fa65945/h97-pingpong-128-rows/runs/compare-20261201T221348Z",
        include_str!(
            "../../results/h200/fa65945/h97-pingpong-128-rows/runs/compare-20261201T221348Z.json"
        ),
    ),
    (
        "fa65945/h99-epilogue-staging/runs/compare-20261201T221351Z",
        include_str!(
            "../../results/h200/fa65945/h99-epilogue-staging/runs/compare-20261201T221351Z.json"
        ),
    ),
    (
        "fa65945/h99-epilogue-staging/runs/compare-20261201T221353Z",
        include_str!(
            "../../results/h200/fa65945/h99-epilogue-staging/runs/compare-20261201T221353Z.json"
        ),
    ),
    (
        "fa65945/h99-epilogue-staging/runs/compare-20261201T221356Z",
        include_str!(
            "../../results/h200/fa65945/h99-epilogue-staging/runs/compare-20261201T221356Z.json"
        ),
    ),
    (
        "fa65945/h99-epilogue-staging/runs/compare-20261201T221400Z",
        include_str!(
            "../../results/h200/fa65945/h99-epilogue-staging/runs/compare-20261201T221400Z.json"
        ),
    ),
    (
        "fa65945/h99-epilogue-staging/runs/compare-20261201T221402Z",
        include_str!(
            "../../results/h200/fa65945/h99-epilogue-staging/runs/compare-20261201T221402Z.json"
        ),
    ),
    (
        "fa65945/h99-epilogue-staging/runs/compare-20261201T221405Z",
        include_str!(
            "../../results/h200/fa65945/h99-epilogue-staging/runs/compare-20261201T221405Z.json"
        ),
    ),
    (
        "fa65945/h99-epilogue-staging/runs/compare-20261201T221408Z",
        include_str!(
            "../../results/h200/fa65945/h99-epilogue-staging/runs/compare-20261201T221408Z.json"
        ),
    ),
    (
        "fa65945/h100-streamk-model/runs/compare-20261201T221412Z",
        include_str!(
            "../../results/h200/fa65945/h100-streamk-model/runs/compare-20261201T221412Z.json"
        ),
    ),
    (
        "fa65945/h100-streamk-model/runs/compare-20261201T221415Z",
        include_str!(
            "../../results/h200/fa65945/h100-streamk-model/runs/compare-20261201T221415Z.json"
        ),
    ),
    (
        "fa65945/h100-streamk-model/runs/compare-20261201T221418Z",
        include_str!(
            "../../results/h200/fa65945/h100-streamk-model/runs/compare-20261201T221418Z.json"
        ),
    ),
    (
        "fa65945/h100-streamk-model/runs/compare-20261201T221420Z",
        include_str!(
            "../../results/h200/fa65945/h100-streamk-model/runs/compare-20261201T221420Z.json"
        ),
    ),
    (
        "fa65945/h100-streamk-model/runs/compare-20261201T221423Z",
        include_str!(
            "../../results/h200/fa65945/h100-streamk-model/runs/compare-20261201T221423Z.json"
        ),
    ),
    (
        "fa65945/h100-streamk-model/runs/compare-20261201T221425Z",
        include_str!(
            "../../results/h200/fa65945/h100-streamk-model/runs/compare-20261201T221425Z.json"
        ),
    ),
    (
        "fa65945/h100-streamk-model/runs/compare-20261201T221428Z",
        include_str!(
            "../../results/h200/fa65945/h100-streamk-model/runs/compare-20261201T221428Z.json"
        ),
    ),
    (
        "fa65945/h101-pingpong-192-tuning/runs/compare-20261201T221757Z",
        include_str!(
            "../../results/h200/fa65945/h101-pingpong-192-tuning/runs/compare-20261201T221757Z.json"
        ),
    ),
    (
        "fa65945/h101-pingpong-192-tuning/runs/compare-20261201T221805Z",
        include_str!(
            "../../results/h200/fa65945/h101-pingpong-192-tuning/runs/compare-20261201T221805Z.json"
        ),
    ),
    (
        "fa65945/h101-pingpong-192-tuning/runs/compare-20261201T221808Z",
        include_str!(
            "../../results/h200/fa65945/h101-pingpong-192-tuning/runs/compare-20261201T221808Z.json"
        ),
    ),
    (
        "9e055dd/h95-streamk-in-step/runs/compare-20261201T210101Z",
        include_str!(
            "../../results/h200/9e055dd/h95-streamk-in-step/runs/compare-20261201T210101Z.json"
        ),
    ),
    (
        "9e055dd/h95-streamk-in-step/runs/compare-20261201T210103Z",
        include_str!(
            "../../results/h200/9e055dd/h95-streamk-in-step/runs/compare-20261201T210103Z.json"
        ),
    ),
    (
        "9e055dd/h95-streamk-in-step/runs/compare-20261201T210107Z",
        include_str!(
            "../../results/h200/9e055dd/h95-streamk-in-step/runs/compare-20261201T210107Z.json"
        ),
    ),
    (
        "9e055dd/h95-streamk-in-step/runs/compare-20261201T210109Z",
        include_str!(
            "../../results/h200/9e055dd/h95-streamk-in-step/runs/compare-20261201T210109Z.json"
        ),
    ),
    (
        "9e055dd/h95-streamk-in-step/runs/compare-20261201T210115Z",
        include_str!(
            "../../results/h200/9e055dd/h95-streamk-in-step/runs/compare-20261201T210115Z.json"
        ),
    ),
    (
        "9e055dd/h95-streamk-in-step/runs/compare-20261201T210118Z",
        include_str!(
            "../../results/h200/9e055dd/h95-streamk-in-step/runs/compare-20261201T210118Z.json"
        ),
    ),
    (
        "1c88247/h92-auto-over-m/runs/compare-20261201T080929Z",
        include_str!(
            "../../results/h200/1c88247/h92-auto-over-m/runs/compare-20261201T080929Z.json"
        ),
    ),
    (
        "1c88247/h92-auto-over-m/runs/compare-20261201T080931Z",
        include_str!(
            "../../results/h200/1c88247/h92-auto-over-m/runs/compare-20261201T080931Z.json"
        ),
    ),
    (
        "697fd3a/h89-cluster-over-m/runs/compare-20261201T080008Z",
        include_str!(
            "../../results/h200/697fd3a/h89-cluster-over-m/runs/compare-20261201T080008Z.json"
        ),
    ),
    (
        "697fd3a/h89-cluster-over-m/runs/compare-20261201T080011Z",
        include_str!(
            "../../results/h200/697fd3a/h89-cluster-over-m/runs/compare-20261201T080011Z.json"
        ),
    ),
    (
        "697fd3a/h89-cluster-over-m/runs/compare-20261201T080013Z",
        include_str!(
            "../../results/h200/697fd3a/h89-cluster-over-m/runs/compare-20261201T080013Z.json"
        ),
    ),
    (
        "697fd3a/h89-cluster-over-m/runs/compare-20261201T080017Z",
        include_str!(
            "../../results/h200/697fd3a/h89-cluster-over-m/runs/compare-20261201T080017Z.json"
        ),
    ),
    (
        "697fd3a/h89-cluster-over-m/runs/compare-20261201T080021Z",
        include_str!(
            "../../results/h200/697fd3a/h89-cluster-over-m/runs/compare-20261201T080021Z.json"
        ),
    ),
    (
        "697fd3a/h89-cluster-over-m/runs/compare-20261201T080024Z",
        include_str!(
            "../../results/h200/697fd3a/h89-cluster-over-m/runs/compare-20261201T080024Z.json"
        ),
    ),
    (
        "697fd3a/h89-cluster-over-m/runs/compare-20261201T080028Z",
        include_str!(
            "../../results/h200/697fd3a/h89-cluster-over-m/runs/compare-20261201T080028Z.json"
        ),
    ),
    (
        "697fd3a/h89-cluster-over-m/runs/compare-20261201T080031Z",
        include_str!(
            "../../results/h200/697fd3a/h89-cluster-over-m/runs/compare-20261201T080031Z.json"
        ),
    ),
    (
        "697fd3a/h90-floor-mmas/runs/compare-20261201T080038Z",
        include_str!(
            "../../results/h200/697fd3a/h90-floor-mmas/runs/compare-20261201T080038Z.json"
        ),
    ),
    (
        "697fd3a/h91-skinny-ring/runs/compare-20261201T080047Z",
        include_str!(
            "../../results/h200/697fd3a/h91-skinny-ring/runs/compare-20261201T080047Z.json"
        ),
    ),
    (
        "6e92dc3/h88-cluster-m1/runs/compare-20261201T063615Z",
        include_str!(
            "../../results/h200/6e92dc3/h88-cluster-m1/runs/compare-20261201T063615Z.json"
        ),
    ),
    (
        "6e92dc3/h88-cluster-m1/runs/compare-20261201T063618Z",
        include_str!(
            "../../results/h200/6e92dc3/h88-cluster-m1/runs/compare-20261201T063618Z.json"
        ),
    ),
    (
        "8c9318b/h86-resident/runs/compare-20261201T055608Z",
        include_str!("../../results/h200/8c9318b/h86-resident/runs/compare-20261201T055608Z.json"),
    ),
    (
        "8c9318b/h86-resident/runs/compare-20261201T055614Z",
        include_str!("../../results/h200/8c9318b/h86-resident/runs/compare-20261201T055614Z.json"),
    ),
    (
        "8c9318b/h86-resident/runs/compare-20261201T055616Z",
        include_str!("../../results/h200/8c9318b/h86-resident/runs/compare-20261201T055616Z.json"),
    ),
    (
        "8c9318b/h86-resident/runs/compare-20261201T055620Z",
        include_str!("../../results/h200/8c9318b/h86-resident/runs/compare-20261201T055620Z.json"),
    ),
    (
        "c83e681/h82-gap/runs/compare-20261201T054609Z",
        include_str!("../../results/h200/c83e681/h82-gap/runs/compare-20261201T054609Z.json"),
    ),
    (
        "c83e681/h82-gap/runs/compare-20261201T054612Z",
        include_str!("../../results/h200/c83e681/h82-gap/runs/compare-20261201T054612Z.json"),
    ),
    (
        "c83e681/h82-gap/runs/compare-20261201T054615Z",
        include_str!("../../results/h200/c83e681/h82-gap/runs/compare-20261201T054615Z.json"),
    ),
    (
        "fbf50d1/h84-order/runs/compare-20261201T055221Z",
        include_str!("../../results/h200/fbf50d1/h84-order/runs/compare-20261201T055221Z.json"),
    ),
    (
        "fbf50d1/h84-order/runs/compare-20261201T055222Z",
        include_str!("../../results/h200/fbf50d1/h84-order/runs/compare-20261201T055222Z.json"),
    ),
    (
        "fbf50d1/h84-order/runs/compare-20261201T055224Z",
        include_str!("../../results/h200/fbf50d1/h84-order/runs/compare-20261201T055224Z.json"),
    ),
    (
        "c026bf9/h81-interleave/runs/compare-20261201T044025Z",
        include_str!(
            "../../results/h200/c026bf9/h81-interleave/runs/compare-20261201T044025Z.json"
        ),
    ),
    (
        "e7f7856/h80-skinny/runs/compare-20261201T043205Z",
        include_str!("../../results/h200/e7f7856/h80-skinny/runs/compare-20261201T043205Z.json"),
    ),
    (
        "e7f7856/h80-skinny/runs/compare-20261201T043208Z",
        include_str!("../../results/h200/e7f7856/h80-skinny/runs/compare-20261201T043208Z.json"),
    ),
    (
        "e7f7856/h80-skinny/runs/compare-20261201T043210Z",
        include_str!("../../results/h200/e7f7856/h80-skinny/runs/compare-20261201T043210Z.json"),
    ),
    (
        "979d348/h80-skinny-2/runs/compare-20261201T043506Z",
        include_str!("../../results/h200/979d348/h80-skinny-2/runs/compare-20261201T043506Z.json"),
    ),
    (
        "7de3d0a/h72-m128/runs/compare-20261201T025200Z",
        include_str!("../../results/h200/7de3d0a/h72-m128/runs/compare-20261201T025200Z.json"),
    ),
    (
        "7de3d0a/h72-m128/runs/compare-20261201T025202Z",
        include_str!("../../results/h200/7de3d0a/h72-m128/runs/compare-20261201T025202Z.json"),
    ),
    (
        "7de3d0a/h72-m128/runs/compare-20261201T025204Z",
        include_str!("../../results/h200/7de3d0a/h72-m128/runs/compare-20261201T025204Z.json"),
    ),
    (
        "7de3d0a/h72-m128/runs/compare-20261201T025207Z",
        include_str!("../../results/h200/7de3d0a/h72-m128/runs/compare-20261201T025207Z.json"),
    ),
    (
        "6521e85/h68-cluster4/runs/compare-20261201T021046Z",
        include_str!("../../results/h200/6521e85/h68-cluster4/runs/compare-20261201T021046Z.json"),
    ),
    (
        "8bda908/h69-cluster4-fit/runs/compare-20261201T021509Z",
        include_str!(
            "../../results/h200/8bda908/h69-cluster4-fit/runs/compare-20261201T021509Z.json"
        ),
    ),
    (
        "8bda908/h69-cluster4-fit/runs/compare-20261201T021511Z",
        include_str!(
            "../../results/h200/8bda908/h69-cluster4-fit/runs/compare-20261201T021511Z.json"
        ),
    ),
    (
        "8bda908/h69-cluster4-fit/runs/compare-20261201T021513Z",
        include_str!(
            "../../results/h200/8bda908/h69-cluster4-fit/runs/compare-20261201T021513Z.json"
        ),
    ),
    (
        "36011d7/h40-pairs-paired/runs/compare-20261130T195816Z",
        include_str!(
            "../../results/h200/36011d7/h40-pairs-paired/runs/compare-20261130T195816Z.json"
        ),
    ),
    (
        "36011d7/h40-pairs-paired/runs/compare-20261130T195835Z",
        include_str!(
            "../../results/h200/36011d7/h40-pairs-paired/runs/compare-20261130T195835Z.json"
        ),
    ),
    (
        "869f58b/decode-whole/runs/compare-20261130T180715Z",
        include_str!("../../results/h200/869f58b/decode-whole/runs/compare-20261130T180715Z.json"),
    ),
    (
        "869f58b/decode-whole/runs/compare-20261130T180720Z",
        include_str!("../../results/h200/869f58b/decode-whole/runs/compare-20261130T180720Z.json"),
    ),
    (
        "4e3a90c/h48-one-consumer/runs/compare-20261130T214536Z",
        include_str!(
            "../../results/h200/4e3a90c/h48-one-consumer/runs/compare-20261130T214536Z.json"
        ),
    ),
    (
        "cab62f3/h49-wait-scope/runs/compare-20261130T215530Z",
        include_str!(
            "../../results/h200/cab62f3/h49-wait-scope/runs/compare-20261130T215530Z.json"
        ),
    ),
    (
        "5bc64c4/h51-wait-suspend/runs/compare-20261130T224756Z",
        include_str!(
            "../../results/h200/5bc64c4/h51-wait-suspend/runs/compare-20261130T224756Z.json"
        ),
    ),
    (
        "5bc64c4/h51-wait-suspend/runs/compare-20261130T224758Z",
        include_str!(
            "../../results/h200/5bc64c4/h51-wait-suspend/runs/compare-20261130T224758Z.json"
        ),
    ),
    (
        "31a1c80/h52-loads-only/runs/compare-20261130T225307Z",
        include_str!(
            "../../results/h200/31a1c80/h52-loads-only/runs/compare-20261130T225307Z.json"
        ),
    ),
    (
        "31a1c80/h52-loads-only/runs/compare-20261130T225310Z",
        include_str!(
            "../../results/h200/31a1c80/h52-loads-only/runs/compare-20261130T225310Z.json"
        ),
    ),
    (
        "31a1c80/h52-loads-only/runs/compare-20261130T225312Z",
        include_str!(
            "../../results/h200/31a1c80/h52-loads-only/runs/compare-20261130T225312Z.json"
        ),
    ),
    (
        "2022ecc/h53-deep-ring/runs/compare-20261130T225518Z",
        include_str!("../../results/h200/2022ecc/h53-deep-ring/runs/compare-20261130T225518Z.json"),
    ),
    (
        "2022ecc/h53-deep-ring/runs/compare-20261130T225525Z",
        include_str!("../../results/h200/2022ecc/h53-deep-ring/runs/compare-20261130T225525Z.json"),
    ),
    (
        "62a0efe/h54-token-tiles-of-8/runs/compare-20261130T225942Z",
        include_str!(
            "../../results/h200/62a0efe/h54-token-tiles-of-8/runs/compare-20261130T225942Z.json"
        ),
    ),
    (
        "cfb0bff/h57-h58/runs/compare-20261130T234811Z",
        include_str!("../../results/h200/cfb0bff/h57-h58/runs/compare-20261130T234811Z.json"),
    ),
    (
        "cfb0bff/h57-h58/runs/compare-20261130T234813Z",
        include_str!("../../results/h200/cfb0bff/h57-h58/runs/compare-20261130T234813Z.json"),
    ),
    (
        "cfb0bff/h57-h58/runs/compare-20261130T234816Z",
        include_str!("../../results/h200/cfb0bff/h57-h58/runs/compare-20261130T234816Z.json"),
    ),
    (
        "cfb0bff/h57-h58/runs/compare-20261130T234825Z",
        include_str!("../../results/h200/cfb0bff/h57-h58/runs/compare-20261130T234825Z.json"),
    ),
    (
        "50886f8/h59-mma-only/runs/compare-20261130T235252Z",
        include_str!("../../results/h200/50886f8/h59-mma-only/runs/compare-20261130T235252Z.json"),
    ),
    (
        "2cdba4f/h60-kb-per-wait/runs/compare-20261201T000250Z",
        include_str!(
            "../../results/h200/2cdba4f/h60-kb-per-wait/runs/compare-20261201T000250Z.json"
        ),
    ),
    (
        "2cdba4f/h60-kb-per-wait/runs/compare-20261201T000303Z",
        include_str!(
            "../../results/h200/2cdba4f/h60-kb-per-wait/runs/compare-20261201T000303Z.json"
        ),
    ),
    (
        "21d2e6f/h61-cublas-777-tiling/runs/compare-20261201T000721Z",
        include_str!(
            "../../results/h200/21d2e6f/h61-cublas-777-tiling/runs/compare-20261201T000721Z.json"
        ),
    ),
    (
        "3c8fceb/h64-desc-advance/runs/compare-20261201T010950Z",
        include_str!(
            "../../results/h200/3c8fceb/h64-desc-advance/runs/compare-20261201T010950Z.json"
        ),
    ),
    (
        "3c8fceb/h64-desc-advance/runs/compare-20261201T011002Z",
        include_str!(
            "../../results/h200/3c8fceb/h64-desc-advance/runs/compare-20261201T011002Z.json"
        ),
    ),
    (
        "3c8fceb/h64-desc-advance/runs/compare-20261201T011009Z",
        include_str!(
            "../../results/h200/3c8fceb/h64-desc-advance/runs/compare-20261201T011009Z.json"
        ),
    ),
    (
        "c204b16/h63-one-consumer-whole/runs/compare-20261201T010447Z",
        include_str!(
            "../../results/h200/c204b16/h63-one-consumer-whole/runs/compare-20261201T010447Z.json"
        ),
    ),
    (
        "89ac068/h102-streamk-rule-reach/runs/compare-20261201T232046Z",
        include_str!(
            "../../results/h200/89ac068/h102-streamk-rule-reach/runs/compare-20261201T232046Z.json"
        ),
    ),
    (
        "89ac068/h102-streamk-rule-reach/runs/compare-20261201T232048Z",
        include_str!(
            "../../results/h200/89ac068/h102-streamk-rule-reach/runs/compare-20261201T232048Z.json"
        ),
    ),
    (
        "89ac068/h102-streamk-rule-reach/runs/compare-20261201T232050Z",
        include_str!(
            "../../results/h200/89ac068/h102-streamk-rule-reach/runs/compare-20261201T232050Z.json"
        ),
    ),
    (
        "89ac068/h102-streamk-rule-reach/runs/compare-20261201T232053Z",
        include_str!(
            "../../results/h200/89ac068/h102-streamk-rule-reach/runs/compare-20261201T232053Z.json"
        ),
    ),
    (
        "89ac068/h102-streamk-rule-reach/runs/compare-20261201T232055Z",
        include_str!(
            "../../results/h200/89ac068/h102-streamk-rule-reach/runs/compare-20261201T232055Z.json"
        ),
    ),
    (
        "89ac068/h102-streamk-rule-reach/runs/compare-20261201T232057Z",
        include_str!(
            "../../results/h200/89ac068/h102-streamk-rule-reach/runs/compare-20261201T232057Z.json"
        ),
    ),
    (
        "89ac068/h102-streamk-rule-reach/runs/compare-20261201T232100Z",
        include_str!(
            "../../results/h200/89ac068/h102-streamk-rule-reach/runs/compare-20261201T232100Z.json"
        ),
    ),
    (
        "89ac068/h103-wide-tile/runs/compare-20261201T232103Z",
        include_str!(
            "../../results/h200/89ac068/h103-wide-tile/runs/compare-20261201T232103Z.json"
        ),
    ),
    (
        "89ac068/h103-wide-tile/runs/compare-20261201T232106Z",
        include_str!(
            "../../results/h200/89ac068/h103-wide-tile/runs/compare-20261201T232106Z.json"
        ),
    ),
    (
        "89ac068/h103-wide-tile/runs/compare-20261201T232108Z",
        include_str!(
            "../../results/h200/89ac068/h103-wide-tile/runs/compare-20261201T232108Z.json"
        ),
    ),
    (
        "89ac068/h103-wide-tile/runs/compare-20261201T232110Z",
        include_str!(
            "../../results/h200/89ac068/h103-wide-tile/runs/compare-20261201T232110Z.json"
        ),
    ),
    (
        "89ac068/h103-wide-tile/runs/compare-20261201T232112Z",
        include_str!(
            "../../results/h200/89ac068/h103-wide-tile/runs/compare-20261201T232112Z.json"
        ),
    ),
    (
        "89ac068/h103-wide-tile/runs/compare-20261201T232115Z",
        include_str!(
            "../../results/h200/89ac068/h103-wide-tile/runs/compare-20261201T232115Z.json"
        ),
    ),
    (
        "029a7ba/h104-paired-clock-after/runs/compare-20261201T233344Z",
        include_str!(
            "../../results/h200/029a7ba/h104-paired-clock-after/runs/compare-20261201T233344Z.json"
        ),
    ),
    (
        "029a7ba/h104-paired-clock-after/runs/compare-20261201T233347Z",
        include_str!(
            "../../results/h200/029a7ba/h104-paired-clock-after/runs/compare-20261201T233347Z.json"
        ),
    ),
    (
        "029a7ba/h104-paired-clock/runs/compare-20261201T233305Z",
        include_str!(
            "../../results/h200/029a7ba/h104-paired-clock/runs/compare-20261201T233305Z.json"
        ),
    ),
    (
        "029a7ba/h104-paired-clock/runs/compare-20261201T233307Z",
        include_str!(
            "../../results/h200/029a7ba/h104-paired-clock/runs/compare-20261201T233307Z.json"
        ),
    ),
];

/// A trial whose kernel a `compare` sweep measured against cuBLAS first: the ratio the sweep's `compare_trial`
/// measured (within `floor` at least, as `pinned_current_ratio`), with the hypothesis that chose the kernel beside it.
pub fn pinned_from_sweep(compare_trial: &str, hypothesis: &str, floor: f64) -> Expectation {
    sweep_pin(compare_trial, floor).noting(&format!("; chosen by {hypothesis}"))
}

/// As `pinned_from_sweep`, for a trial in `ACROSS_HOSTS`: the sweep's ratio and every whole-suite run of the same
/// candidate (by its label) together, so the window is as wide as the hosts disagreed, the hypothesis kept beside it.
pub fn pinned_from_sweep_across_hosts(
    compare_trial: &str,
    trial: &str,
    candidate: &str,
    hypothesis: &str,
    floor: f64,
) -> Expectation {
    let ran_it = |run: &str| {
        whole_suite_runs().iter().any(|(r, v)| {
            *r == run
                && v["trials"].as_array().is_some_and(|ts| {
                    ts.iter().any(|t| {
                        t["name"] == trial
                            && t["variants"]
                                .as_array()
                                .is_some_and(|vs| vs.iter().any(|x| x["name"] == candidate))
                    })
                })
        })
    };
    let mut runs = estimates(sweep_runs(), compare_trial);
    runs.extend(
        estimates(whole_suite_runs(), trial)
            .into_iter()
            .filter(|e| ran_it(e.0)),
    );
    unsettled_across_hosts(trial, &runs, floor, &format!("chosen by {hypothesis};"))
}

/// Whole-suite microbench runs (one-GPU hosts) that hold a trial pinned from a sweep whose share moved with the
/// host: 1432bb9's and a827402's. At a827402 `auto`'s MMAs alone at M = 128 (`mma_only::auto::decode_m128`) took
/// 0.694 [0.674, 0.714] of the whole kernel's time, where 7de3d0a's sweep had measured 0.761 and 1432bb9's suite
/// 0.740, the kernel's source unchanged since 7de3d0a.
const MICROBENCH_SUITES: [(&str, &str); 2] = [
    (
        "microbench-20261201T033439Z",
        include_str!("../../results/h200/microbench-20261201T033439Z.json"),
    ),
    (
        "microbench-20261201T044606Z",
        include_str!("../../results/h200/microbench-20261201T044606Z.json"),
    ),
];

/// As `sweep_pin`, with the whole-suite microbench runs of `trial` (`MICROBENCH_SUITES`) beside the sweep: the
/// window as wide as the hosts disagreed (within `floor` at least).
pub fn sweep_pin_across_hosts(compare_trial: &str, trial: &str, floor: f64) -> Expectation {
    static PARSED: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    let mut runs = estimates(sweep_runs(), compare_trial);
    assert!(
        !runs.is_empty(),
        "{compare_trial}: no committed sweep holds it"
    );
    runs.extend(estimates(
        PARSED.get_or_init(|| parse(&MICROBENCH_SUITES)),
        trial,
    ));
    pinned_ratio_from(&runs, floor)
}

/// The ablations whole-suite run at cd0171e (two shards, one one-GPU host): the first run of `k_rotate=1` as the
/// switch is built since fbf50d1, its offset divided once per work item. H83's sweep (c83e681) had measured a form
/// that divided once per k-block inside the producer's loop (its SASS, nvdisasm): 1.05-1.32 of the time without the
/// switch, where this form took 1.03-1.15.
const SUITE_REPINS: [(&str, &str); 2] = [
    (
        "ablations-20261201T061253Z",
        include_str!("../../results/h200/ablations-20261201T061253Z.json"),
    ),
    (
        "ablations-20261201T062116Z",
        include_str!("../../results/h200/ablations-20261201T062116Z.json"),
    ),
];

/// A trial's ratio pinned from the whole-suite run that first ran its kernel in its current form (`SUITE_REPINS`),
/// within `floor` at least.
pub fn suite_run_pin(trial: &str, floor: f64) -> Expectation {
    static PARSED: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    let runs = estimates(PARSED.get_or_init(|| parse(&SUITE_REPINS)), trial);
    assert!(!runs.is_empty(), "{trial}: no run in SUITE_REPINS holds it");
    pinned_ratio_from(&runs, floor)
}

/// The committed `compare` sweeps, parsed once.
fn sweep_runs() -> &'static [(&'static str, Value)] {
    static PARSED: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    PARSED.get_or_init(|| parse(&SWEEPS))
}

/// The ratio a committed `compare` sweep measured for `compare_trial` (within `floor` at least), for a trial that
/// runs the same pair of kernels on the same shape.
pub fn sweep_pin(compare_trial: &str, floor: f64) -> Expectation {
    let runs = estimates(sweep_runs(), compare_trial);
    assert!(
        !runs.is_empty(),
        "{compare_trial}: no committed sweep holds it"
    );
    pinned_ratio_from(&runs, floor)
}

/// Runs of single trials made after the sweep that pinned them (`tools/h200-trials.sh`), where a trial's pinned
/// verdict did not hold on the next host: 63bea06's run of `beyond::deep_ring` (decode_m1 measured 1.017 where the
/// sweep's 1.032 had read "slower").
/// And 1c88247's run of `beyond::auto_vs_cublas`, where cuBLAS's chooser took another path at M = 1 and 8 than in
/// H92's sweep of the same processes' kind (Lt(1) against Lt(0)), one 5-9% slower than the other.
/// And 1c88247's runs of `beyond::no_token_cluster` and `beyond::skinny_ring`, then the part of 44ddb92's second
/// ablations shard the device budget left: there `skinny_ring` measured 1.078 (1.135 in its sweep, 1.176 at
/// 1c88247) and `no_token_cluster` at M = 16 0.982 (0.948 in its sweep, 0.974 at 1c88247), each still on its
/// sweep's side of 1.
/// And 1142956's first ablations shard, where cuBLAS's chooser took Lt(0) at M = 1 and it ran 39.6 us in the rounds
/// (35.6-35.8 us on the hosts before): `auto`'s kernel, unchanged since 1c88247, took 34.9 us as before, and
/// `beyond::auto_vs_cublas::decode_m1` measured 0.863 against its window of 0.902-0.995.
const TRIAL_RUNS: [(&str, &str); 6] = [
    (
        "63bea06/trials/runs/ablations-20261130T230537Z",
        include_str!("../../results/h200/63bea06/trials/runs/ablations-20261130T230537Z.json"),
    ),
    (
        "1c88247/trials/runs/ablations-20261201T081009Z",
        include_str!("../../results/h200/1c88247/trials/runs/ablations-20261201T081009Z.json"),
    ),
    (
        "1c88247/trials/runs/ablations-20261201T080949Z",
        include_str!("../../results/h200/1c88247/trials/runs/ablations-20261201T080949Z.json"),
    ),
    (
        "1c88247/trials/runs/ablations-20261201T081006Z",
        include_str!("../../results/h200/1c88247/trials/runs/ablations-20261201T081006Z.json"),
    ),
    (
        "44ddb92/partial/ablations-20261201T105124Z",
        include_str!("../../results/h200/44ddb92/partial/ablations-20261201T105124Z.json"),
    ),
    (
        "1142956/suite/runs/ablations-20261201T223117Z",
        include_str!("../../results/h200/1142956/suite/runs/ablations-20261201T223117Z.json"),
    ),
];

/// What a committed sweep measured for `compare_trial` and the runs of `trial` itself (TRIAL_RUNS) measured.
fn sweep_and_trial_runs(compare_trial: &str, trial: &str) -> Vec<Estimate> {
    static PARSED: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    let mut runs = estimates(sweep_runs(), compare_trial);
    runs.extend(estimates(PARSED.get_or_init(|| parse(&TRIAL_RUNS)), trial));
    runs
}

/// A ratio pinned from a committed sweep's `compare_trial` and the runs of `trial` itself (TRIAL_RUNS), the window
/// spanning both (as `pinned_ratio_from`, within `floor` at least): for a ratio against cuBLAS whose path the
/// chooser picked differently in the two.
pub fn sweep_and_trial_runs_pin(compare_trial: &str, trial: &str, floor: f64) -> Expectation {
    let runs = sweep_and_trial_runs(compare_trial, trial);
    assert!(
        runs.len() >= 2,
        "{trial}: fewer than two runs hold it ({runs:?})"
    );
    pinned_ratio_from(&runs, floor)
}

/// An effect pinned from a committed sweep's `compare_trial` and the later runs of `trial` itself (TRIAL_RUNS):
/// the window spans what they measured (as `pinned_ratio_from`, within `floor` at least), and the interval must
/// stay on the effect's side of 1 (`EffectNear`). For an effect near the band's edge, whose verdict moved between
/// hosts while its direction did not.
pub fn effect_from_sweep_and_runs(compare_trial: &str, trial: &str, floor: f64) -> Expectation {
    let runs = sweep_and_trial_runs(compare_trial, trial);
    assert!(
        an_effect(&runs),
        "{trial}: the runs do not agree on an effect ({runs:?})"
    );
    let pinned = pinned_ratio_from(&runs, floor);
    let Expect::RatioNear { ratio, tolerance } = pinned.expect else {
        unreachable!("pinned_ratio_from pins a ratio")
    };
    Expectation {
        expect: Expect::EffectNear { ratio, tolerance },
        ..pinned
    }
}

/// The candidate's probed clock over the baseline's in the rounds of every committed sweep of `compare_trial`
/// (`clock_probe=1` on both), pinned: the window spans what they read, widened by `tolerance` each side.
pub fn paired_clocks_pin(compare_trial: &str, tolerance: f64) -> Expectation {
    let found: Vec<(&'static str, f64)> = sweep_runs()
        .iter()
        .filter_map(|(run, v)| {
            let probed = &record_of(v, compare_trial)?["comparison"]["probed_median_mhz"];
            Some((*run, probed[1].as_f64()? / probed[0].as_f64()?))
        })
        .collect();
    assert!(
        !found.is_empty(),
        "{compare_trial}: no committed sweep read both probes in its rounds"
    );
    let lo = found.iter().map(|f| f.1).fold(f64::INFINITY, f64::min);
    let hi = found.iter().map(|f| f.1).fold(f64::NEG_INFINITY, f64::max);
    let measured = format!(
        "the candidate's probed clock over the baseline's in the rounds: {}",
        found
            .iter()
            .map(|(run, r)| format!("{r:.4} ({run})"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Expectation::pinned(
        Expect::PairedClocks {
            lo: lo / (1.0 + tolerance),
            hi: hi * (1.0 + tolerance),
        },
        found.iter().map(|(run, _)| run.to_string()).collect(),
        measured,
    )
}

/// The verdict a committed `compare` sweep reached for `compare_trial`, pinned from it: for an effect so large
/// (H51: 1.24-1.38x slower) that its size moves with the host's clock while its direction does not.
pub fn sweep_verdict_pin(compare_trial: &str) -> Expectation {
    let (run, verdict) = sweep_runs()
        .iter()
        .find_map(|(run, v)| Some((*run, recorded_verdict(v, compare_trial)?)))
        .unwrap_or_else(|| panic!("{compare_trial}: no committed sweep holds its verdict"));
    let measured = describe_estimates(&estimates(sweep_runs(), compare_trial));
    Expectation::pinned(Expect::Verdict(verdict), vec![run.to_string()], measured)
}

/// Each rounds-method reference run's estimate of a trial: (run, ratio, 95% interval).
fn current(trial: &str) -> Vec<Estimate> {
    static PARSED: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    estimates(PARSED.get_or_init(|| parse(&CURRENT)), trial)
}

/// The past-the-seed reference runs, parsed once.
fn past_seed_runs() -> &'static [(&'static str, Value)] {
    static PARSED: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    PARSED.get_or_init(|| parse(&PAST_SEED))
}

/// The verdict a run's record of `trial` reached (None where it holds no comparison of that name).
fn recorded_verdict(run: &Value, trial: &str) -> Option<Verdict> {
    let t = run["trials"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == trial)?;
    serde_json::from_value(t["comparison"]["estimate"]["verdict"].clone()).ok()
}

/// Each past-the-seed reference run's estimate of a trial, as `current` gives them, with its verdict.
fn past_seed(trial: &str) -> Vec<(Estimate, Option<Verdict>)> {
    let runs = past_seed_runs();
    let holds = |v: &Value| {
        v["trials"]
            .as_array()
            .is_some_and(|ts| ts.iter().any(|t| t["name"] == trial))
    };
    let verdicts = runs
        .iter()
        .filter(|(_, v)| holds(v))
        .map(|(run, v)| (*run, recorded_verdict(v, trial)));
    let verdicts: Vec<_> = verdicts.collect();
    estimates(runs, trial)
        .into_iter()
        .map(|e| {
            let v = verdicts
                .iter()
                .find(|(r, _)| *r == e.0)
                .and_then(|(_, v)| *v);
            (e, v)
        })
        .collect()
}

/// A run's record of `trial`, where it holds one.
fn record_of<'a>(run: &'a Value, trial: &str) -> Option<&'a Value> {
    run["trials"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == trial)
}

/// Every run's (run, ratio, 95% interval) for a comparison trial it holds.
fn estimates(runs: &[(&'static str, Value)], trial: &str) -> Vec<Estimate> {
    runs.iter()
        .filter_map(|(run, v)| {
            let e = &record_of(v, trial)?["comparison"]["estimate"];
            Some((
                *run,
                e["ratio"].as_f64()?,
                e["ci"][0].as_f64()?,
                e["ci"][1].as_f64()?,
            ))
        })
        .collect()
}

/// Whether any rounds-method reference run holds this trial (a rung past them has none until it is measured).
pub fn has_current(trial: &str) -> bool {
    !current(trial).is_empty()
}

/// A ratio pinned from the rounds-method reference runs: their geometric mean, within `floor` or, where wider,
/// half of what the runs disagreed by plus twice the widest run's own half-width (a pin cannot be tighter than
/// the runs it comes from could tell), rounded up to half a percent.
fn pinned_current_ratio(trial: &str, floor: f64) -> Expectation {
    let runs = current(trial);
    assert!(
        !runs.is_empty(),
        "{trial}: no rounds-method reference run holds it"
    );
    pinned_ratio_from(&runs, floor)
}

/// Past the seed: the hypothesis where every reference run that holds the trial gave its verdict (or none holds
/// it yet); otherwise the ratio pinned from those runs (as `pinned_current_ratio`, within `floor` at least),
/// keeping the hypothesis it refuted.
///
/// A confirmed hypothesis whose runs' ratio sits within 1.5% of a band edge is pinned as a ratio too (the rule
/// `pinned` applies): there the verdict flips with a run's noise, as `beyond::pdl::decode_m1` (0.977 faster,
/// then 0.978 inconclusive) and `ladder::auto::prefill_attn_out` showed at 0797e18.
pub fn hypothesis_or_pinned(trial: &str, v: Verdict, hypothesis: &str, floor: f64) -> Expectation {
    // A ladder cell says where a kernel stands against cuBLAS, not an effect of a change: its pin is a ratio.
    let effect = (!trial.starts_with("ladder::")).then_some(trial);
    hypothesis_or_pinned_from(past_seed(trial), v, hypothesis, floor, effect)
}

/// `hypothesis_or_pinned` from the runs that measured this candidate (by its label): for a trial whose kernel
/// changes (`ladder::auto::*` when the dispatcher's rule does), runs of an earlier kernel say nothing about it.
pub fn hypothesis_or_pinned_for(
    trial: &str,
    candidate: &str,
    v: Verdict,
    hypothesis: &str,
    floor: f64,
) -> Expectation {
    let runs = past_seed(trial)
        .into_iter()
        .filter(|((run, ..), _)| candidate_label(run, trial).as_deref() == Some(candidate))
        .collect();
    hypothesis_or_pinned_from(runs, v, hypothesis, floor, None)
}

/// The candidate's label in a past-the-seed run's record of a trial.
fn candidate_label(run: &str, trial: &str) -> Option<String> {
    let runs = past_seed_runs();
    let (_, v) = runs.iter().find(|(r, _)| *r == run)?;
    let t = v["trials"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == trial)?;
    t["comparison"]["candidate"].as_str().map(str::to_string)
}

/// `effect`: the trial, where a pin may assert its side of 1 (`pinned_effect_or_ratio`); None: only the ratio.
fn hypothesis_or_pinned_from(
    runs: Vec<(Estimate, Option<Verdict>)>,
    v: Verdict,
    hypothesis: &str,
    floor: f64,
    effect: Option<&str>,
) -> Expectation {
    let pin = |estimates: &[Estimate]| match effect {
        Some(trial) => pinned_effect_or_ratio(trial, estimates, floor),
        None => pinned_ratio_from(estimates, floor),
    };
    let estimates: Vec<_> = runs.iter().map(|(e, _)| *e).collect();
    let confirmed = runs.iter().all(|(_, seen)| *seen == Some(v));
    let geomean =
        (estimates.iter().map(|e| e.1.ln()).sum::<f64>() / estimates.len().max(1) as f64).exp();
    let near_edge = !estimates.is_empty() && edge_distance(geomean, 0.02) < 0.015;
    match (confirmed, near_edge) {
        (true, false) => Expectation::hypothesis(Expect::Verdict(v), hypothesis),
        (true, true) => pin(&estimates).noting(&format!(
            "; the hypothesis held ({} ({hypothesis})) but within 1.5% of the band's edge",
            v.word()
        )),
        (false, _) => pin(&estimates).refuting(format!("{} ({hypothesis})", v.word())),
    }
}

/// As `pinned_ratio_from`, and where every run measured an effect of 1% or more on the same side of 1 with its
/// interval wholly on that side (the pin's runs and every whole-suite run that holds the trial), the pin asserts
/// that side too (`EffectNear`): a window of a few percent around a 1-3% effect reaches past 1.0, and without it a
/// lost effect would pass.
fn pinned_effect_or_ratio(trial: &str, runs: &[Estimate], floor: f64) -> Expectation {
    let pin = pinned_ratio_from(runs, floor);
    match pin.expect {
        Expect::RatioNear { ratio, tolerance } if an_effect_everywhere(trial, runs) => {
            Expectation {
                expect: Expect::EffectNear { ratio, tolerance },
                ..pin
            }
        }
        _ => pin,
    }
}

/// `an_effect` over these runs and every whole-suite run that holds the trial: an effect a host did not show is
/// not asserted (`beyond::mma_wait_all::square4096`: 1.015 [1.013, 1.018] at deeab76, 1.007 [0.998, 1.016] at
/// 0797e18).
fn an_effect_everywhere(trial: &str, runs: &[Estimate]) -> bool {
    let mut all = runs.to_vec();
    all.extend(estimates(whole_suite_runs(), trial));
    an_effect(&all)
}

/// Whether every run measured an effect of 1% or more on the same side of 1, its interval wholly on that side.
fn an_effect(runs: &[Estimate]) -> bool {
    !runs.is_empty()
        && (runs.iter().all(|r| r.3 < 1.0 && r.1 <= 0.99)
            || runs.iter().all(|r| r.2 > 1.0 && r.1 >= 1.01))
}

/// The pin of `pinned_current_ratio`, from the given runs' estimates.
fn pinned_ratio_from(runs: &[Estimate], floor: f64) -> Expectation {
    let logs: Vec<f64> = runs.iter().map(|r| r.1.ln()).collect();
    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
    // The window is centred on the mean, so it must reach the run farthest from it (half the spread only when the
    // runs sit symmetrically: one host far from six others pulled the mean off the middle at 1432bb9).
    let reach = logs.iter().map(|l| (l - mean).abs()).fold(0.0, f64::max);
    let widest = runs
        .iter()
        .map(|r| (r.3 / r.2).ln() / 2.0)
        .fold(0.0, f64::max);
    let needed = (reach + 2.0 * widest).exp_m1();
    let tolerance = ((floor.max(needed) * 200.0).ceil() / 200.0 * 1e4).round() / 1e4;
    Expectation::pinned(
        Expect::RatioNear {
            ratio: round4(mean.exp()),
            tolerance,
        },
        runs.iter().map(|r| r.0.to_string()).collect(),
        describe_estimates(runs),
    )
}

/// "ratio 1.0324 [1.0207, 1.0443], ...": what the runs measured, for a pin's provenance.
fn describe_estimates(runs: &[Estimate]) -> String {
    runs.iter()
        .map(|r| format!("ratio {:.4} [{:.4}, {:.4}]", r.1, r.2, r.3))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A trial whose verdict did not hold from one reference run to the next: its ratio pinned from the
/// rounds-method runs (see `pinned_current_ratio`), keeping the hypothesis it leaves unsettled.
pub fn pinned_unsettled(trial: &str, hypothesis: &str) -> Expectation {
    let earlier = reference(trial)
        .map(|r| format!("; the b9d1c9c runs said {}", r.describe()))
        .unwrap_or_default();
    pinned_current_ratio(trial, 0.03).refuting(format!(
        "{hypothesis}: not settled on the H200{earlier}; the rounds-method runs disagree across machines or sit on the edge of the band"
    ))
}

/// Committed runs (name, JSON text) parsed once.
fn parse(runs: &[(&'static str, &'static str)]) -> Vec<(&'static str, Value)> {
    runs.iter()
        .map(|(name, text)| {
            (
                *name,
                serde_json::from_str(text).expect("a committed reference run parses"),
            )
        })
        .collect()
}

fn parsed() -> &'static Vec<(&'static str, Value)> {
    static PARSED: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    PARSED.get_or_init(|| parse(&RUNS))
}

fn records(trial: &str) -> impl Iterator<Item = (&'static str, &'static Value)> + '_ {
    parsed().iter().flat_map(move |(run, v)| {
        v["trials"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(move |t| t["name"] == trial)
            .map(move |t| (*run, t))
    })
}

/// The reference runs' figures for a comparison trial, if they hold it.
pub fn reference(trial: &str) -> Option<Reference> {
    let mut r = Reference {
        runs: Vec::new(),
        ratios: Vec::new(),
        verdicts: Vec::new(),
    };
    for (run, t) in records(trial) {
        let e = &t["comparison"]["estimate"];
        let (Some(ratio), Ok(verdict)) = (
            e["ratio"].as_f64(),
            serde_json::from_value::<Verdict>(e["verdict"].clone()),
        ) else {
            continue;
        };
        r.runs.push(run.to_string());
        r.ratios.push(ratio);
        r.verdicts.push(verdict);
    }
    (!r.runs.is_empty()).then_some(r)
}

/// A sweep's points with their time relative to the first, from the reference run that holds it.
pub fn reference_sweep(trial: &str) -> Option<(String, Vec<(String, f64)>)> {
    let (run, t) = records(trial).next()?;
    let rows = t["table"]
        .as_array()?
        .iter()
        .filter(|r| r["point"] != "cuBLAS")
        .filter_map(|r| {
            Some((
                r["point"].as_str()?.to_string(),
                r["relative_time"].as_f64()?,
            ))
        })
        .collect();
    Some((run.to_string(), rows))
}

/// How far (in log) a ratio sits from the nearer edge of the +-2% band.
fn edge_distance(ratio: f64, band: f64) -> f64 {
    let l = ratio.ln();
    (l - (1.0 + band).ln())
        .abs()
        .min((l - (1.0 - band).ln()).abs())
}

/// Pinned from the reference runs: the verdict they all gave, or, where their ratio sits within 1.5% of a band
/// edge (a verdict there flips with the noise of the next run: rounds on fresh operands differ by 0.5-2.5% on
/// the H200), the ratio itself within +-3%.
pub fn pinned(trial: &str) -> Expectation {
    let r = reference(trial)
        .unwrap_or_else(|| panic!("{trial}: no reference run holds this trial to pin it from"));
    let near_edge = edge_distance(r.ratio(), 0.02) < 0.015;
    // Near the edge: the ratio, and its side of 1 where every reference run's interval lies there by 1% or more
    // (as `pinned_effect_or_ratio`).
    let effect =
        !trial.starts_with("ladder::") && an_effect_everywhere(trial, &estimates(parsed(), trial));
    let (ratio, tolerance) = (round4(r.ratio()), 0.03);
    let expect = match r.verdict() {
        Some(v) if !near_edge => Expect::Verdict(v),
        _ if effect => Expect::EffectNear { ratio, tolerance },
        _ => Expect::RatioNear { ratio, tolerance },
    };
    Expectation::pinned(expect, r.runs.clone(), r.describe())
}

/// A ladder cell: the rung's time against cuBLAS, pinned from the rounds-method reference runs, within +-5% (or
/// more where those runs disagreed), so a regression of more than a few percent fails.
pub fn pinned_ratio(trial: &str) -> Expectation {
    pinned_current_ratio(trial, 0.05)
}

/// A sweep pinned from its reference run: the fastest is one of the points within the band of the best there.
pub fn pinned_fastest(trial: &str) -> Expectation {
    let (run, rows) = reference_sweep(trial)
        .unwrap_or_else(|| panic!("{trial}: no reference run holds this sweep to pin it from"));
    let best = rows.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    let names: Vec<String> = rows
        .iter()
        .filter(|r| r.1 <= best * 1.02)
        .map(|r| r.0.clone())
        .collect();
    let measured = rows
        .iter()
        .map(|(p, t)| format!("{p} {t:.3}"))
        .collect::<Vec<_>>()
        .join(", ");
    Expectation::pinned(
        Expect::FastestAmong(names),
        vec![run],
        format!("time vs first: {measured}"),
    )
}

/// The seed's verdict as the hypothesis where the reference runs agree with it; otherwise the pinned H200
/// measurement, keeping the seed's verdict as the hypothesis it refuted.
pub fn seed_or_pinned(trial: &str, seed: Verdict, seed_says: &str) -> Expectation {
    let hypothesis = format!("seed (B200): {} ({seed_says})", seed.word());
    match reference(trial) {
        Some(r) if r.verdict() == Some(seed) => {
            Expectation::hypothesis(Expect::Verdict(seed), hypothesis)
        }
        Some(_) => pinned(trial).refuting(hypothesis),
        None => Expectation::hypothesis(Expect::Verdict(seed), hypothesis),
    }
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_seed_trials_keep_a_confirmed_hypothesis_and_pin_a_refuted_one() {
        use crate::trial::expect::Source;
        // deeab76 measured 0.9991 [0.9954, 1.0028]: no change, as H14 said.
        let kept = hypothesis_or_pinned(
            "beyond::regs_24_240::square4096",
            Verdict::NoChange,
            "H14",
            0.03,
        );
        assert_eq!(kept.source, Source::Hypothesis("H14".into()));
        // H10 said slower; deeab76 measured 1.0154 [1.0126, 1.0182], no change.
        let pinned = hypothesis_or_pinned(
            "beyond::mma_wait_all::square4096",
            Verdict::Slower,
            "H10",
            0.03,
        );
        // ... a ratio, not a side of 1: a whole-suite host measured 1.007 [0.998, 1.016] (0797e18).
        match (&pinned.expect, &pinned.source) {
            (Expect::RatioNear { ratio, tolerance }, Source::Pinned { runs, refuted, .. }) => {
                assert_eq!((*ratio, *tolerance), (1.0154, 0.03));
                assert_eq!(runs, &["deeab76/ablations-20261130T141500Z"]);
                assert_eq!(refuted.as_deref(), Some("slower (H10)"));
            }
            other => panic!("not pinned: {other:?}"),
        }
        // A trial no run holds yet keeps its hypothesis.
        let fresh =
            hypothesis_or_pinned("beyond::no_such::square4096", Verdict::Faster, "H0", 0.03);
        assert_eq!(fresh.source, Source::Hypothesis("H0".into()));
    }

    #[test]
    fn only_an_effect_seen_in_every_run_pins_its_side() {
        let run = |ratio: f64, lo: f64, hi: f64| ("r", ratio, lo, hi);
        assert!(an_effect(&[
            run(0.977, 0.974, 0.980),
            run(0.983, 0.981, 0.985)
        ]));
        assert!(an_effect(&[run(1.022, 1.021, 1.024)]));
        // An interval reaching 1, an effect under 1%, runs on both sides, no runs: the ratio alone.
        assert!(!an_effect(&[
            run(0.977, 0.974, 0.980),
            run(0.988, 0.976, 1.001)
        ]));
        assert!(!an_effect(&[run(1.004, 1.003, 1.005)]));
        assert!(!an_effect(&[run(0.98, 0.97, 0.99), run(1.02, 1.01, 1.03)]));
        assert!(!an_effect(&[]));
    }

    #[test]
    fn pins_come_from_the_named_runs() {
        let r = reference("ablation::swizzle::square4096").unwrap();
        assert_eq!(r.runs.len(), 3);
        assert_eq!(r.verdict(), Some(Verdict::Faster));
        assert!(r.ratio() > 0.31 && r.ratio() < 0.32);
        assert!(reference("ablation::no_such_step::square4096").is_none());
    }

    #[test]
    fn a_ratio_near_the_band_edge_is_pinned_as_a_ratio() {
        // isolation::stages8: 0.976-0.978 in three runs, 0.3% beyond the band; each interval wholly under 1, so
        // the pin keeps that side as well as the ratio.
        match pinned("isolation::stages8::square4096").expect {
            Expect::EffectNear { ratio, tolerance } => {
                assert!((ratio - 0.9763).abs() < 0.002 && tolerance == 0.03)
            }
            e => panic!("{e:?}"),
        }
        assert_eq!(
            pinned("ablation::swizzle::square4096").expect,
            Expect::Verdict(Verdict::Faster)
        );
    }

    #[test]
    fn a_refuted_seed_hypothesis_is_kept_beside_the_pin() {
        let e = seed_or_pinned(
            "ablation::pipeline::square4096",
            Verdict::Faster,
            "1.87x at 4096^3",
        );
        let lines = e.describe().join("\n");
        assert!(
            lines.contains("did not confirm") && lines.contains("1.87x"),
            "{lines}"
        );
        let kept = seed_or_pinned("ablation::swizzle::square4096", Verdict::Faster, "4.1x");
        assert!(kept.describe()[0].contains("hypothesis, before measuring"));
    }

    #[test]
    fn sweeps_pin_the_points_within_the_band_of_the_best() {
        match pinned_fastest("stages::rung5::square4096").expect {
            Expect::FastestAmong(v) => assert_eq!(v, ["rung5:stages=4"]),
            e => panic!("{e:?}"),
        }
    }
}

/// Committed sustained runs (each kernel alone, `clock_probe=1`) that pin the `clock::` trials: H75 at f32970e, H76
/// at 6feb1af, the whole microbench at 1432bb9, H77 at c5615b6, H103 at 89ac068 and H104 at 029a7ba, each on its own host
/// (`results/h200/<commit>/...`; the microbench's record at the top level).
const SUSTAIN_RUNS: [(&str, &str); 6] = [
    (
        "f32970e/h75-clock-probe/runs/sustain-20261201T032537Z",
        include_str!(
            "../../results/h200/f32970e/h75-clock-probe/runs/sustain-20261201T032537Z.json"
        ),
    ),
    (
        "6feb1af/h76-clock-price/runs/sustain-20261201T032903Z",
        include_str!(
            "../../results/h200/6feb1af/h76-clock-price/runs/sustain-20261201T032903Z.json"
        ),
    ),
    (
        "microbench-20261201T033439Z",
        include_str!("../../results/h200/microbench-20261201T033439Z.json"),
    ),
    (
        "c5615b6/h77-clock-after/runs/sustain-20261201T040616Z",
        include_str!(
            "../../results/h200/c5615b6/h77-clock-after/runs/sustain-20261201T040616Z.json"
        ),
    ),
    (
        "89ac068/h103-clock-by-tile/runs/sustain-20261201T232158Z",
        include_str!(
            "../../results/h200/89ac068/h103-clock-by-tile/runs/sustain-20261201T232158Z.json"
        ),
    ),
    (
        "029a7ba/h104-alone/runs/sustain-20261201T233342Z",
        include_str!("../../results/h200/029a7ba/h104-alone/runs/sustain-20261201T233342Z.json"),
    ),
];

/// Figure `figure` of `variant` over `over`'s, pass by pass, in every committed sustained record that holds both:
/// each run's name and its values.
fn sustained_values(
    figure: crate::trial::expect::SustainedFigure,
    variant: &str,
    over: &str,
) -> Vec<(&'static str, Vec<f64>)> {
    static PARSED: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    let runs = PARSED.get_or_init(|| parse(&SUSTAIN_RUNS));
    let mut found = Vec::new();
    for (name, v) in runs {
        for t in v["trials"].as_array().into_iter().flatten() {
            if t["sustained"].as_array().is_none_or(|r| r.is_empty()) {
                continue;
            }
            let record: crate::trial::job::TrialRecord =
                serde_json::from_value(t.clone()).expect("a committed sustained record parses");
            let settled = |pass: usize, who: &str| {
                record
                    .sustained
                    .iter()
                    .find(|r| r.pass == pass && r.variant == who)
                    .and_then(|r| r.settled.as_ref())
                    .and_then(|s| figure.of(s))
            };
            let passes = record
                .sustained
                .iter()
                .map(|r| r.pass + 1)
                .max()
                .unwrap_or(0);
            let values: Option<Vec<f64>> = (0..passes)
                .map(|p| Some(settled(p, variant)? / settled(p, over)?))
                .collect();
            if let Some(values) = values.filter(|v| !v.is_empty()) {
                found.push((*name, values));
            }
        }
    }
    assert!(
        !found.is_empty(),
        "no committed sustained run holds {variant} and {over}"
    );
    found
}

/// A sustained check pinned from the committed runs that measured it: the window spans what their passes measured,
/// widened by `tolerance` each side.
pub fn sustained_check_pin(
    figure: crate::trial::expect::SustainedFigure,
    variant: &str,
    over: &str,
    tolerance: f64,
) -> (
    crate::trial::expect::SustainedCheck,
    Vec<&'static str>,
    String,
) {
    let found = sustained_values(figure, variant, over);
    let all = found.iter().flat_map(|(_, v)| v.iter().copied());
    let lo = all.clone().fold(f64::INFINITY, f64::min);
    let hi = all.fold(f64::NEG_INFINITY, f64::max);
    let check = crate::trial::expect::SustainedCheck::new(
        figure,
        variant,
        Some(over),
        (lo / (1.0 + tolerance), hi * (1.0 + tolerance)),
    );
    let measured = format!(
        "{variant} over {over}'s: {}",
        found
            .iter()
            .map(|(run, v)| format!(
                "{} ({run})",
                v.iter()
                    .map(|x| format!("{x:.3}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .collect::<Vec<_>>()
            .join("; ")
    );
    (check, found.iter().map(|(r, _)| *r).collect(), measured)
}

/// Sustained checks pinned from committed runs, with the hypothesis they refuted.
pub fn sustained_pin(
    checks: Vec<(
        crate::trial::expect::SustainedCheck,
        Vec<&'static str>,
        String,
    )>,
    refuted: &str,
) -> Expectation {
    let mut runs: Vec<String> = Vec::new();
    for r in checks.iter().flat_map(|(_, r, _)| r) {
        if !runs.iter().any(|x| x == r) {
            runs.push(r.to_string());
        }
    }
    let measured = checks
        .iter()
        .map(|(c, _, m)| format!("{} of {m}", c.figure.name()))
        .collect::<Vec<_>>()
        .join("; ");
    Expectation::pinned(
        Expect::Sustained(checks.into_iter().map(|(c, _, _)| c).collect()),
        runs,
        measured,
    )
    .refuting(refuted)
}

#[cfg(test)]
mod sustained_pin_tests {
    use super::*;
    use crate::trial::expect::SustainedFigure as F;

    #[test]
    fn the_decode_clock_pins_read_the_committed_runs() {
        let decode = "rung10:bn=128,stages=6,evict_first=1,pdl=1,clock_probe=1";
        let mma = "rung10:bn=128,stages=6,evict_first=1,pdl=1,loads=0,clock_probe=1";
        let solo = "rung10:bn=128,stages=6,evict_first=1,pdl=1,cluster=1,clock_probe=1";
        // The MMAs alone over the whole: 1.175-1.176 at f32970e, 1.184-1.187 in 1432bb9's microbench, 1.225-1.226 at
        // c5615b6, each on its own host: the window spans the three.
        let (c, runs, measured) = sustained_check_pin(F::ProbedMhz, mma, decode, 0.04);
        assert_eq!(runs.len(), 3, "{runs:?}");
        assert!(
            c.range.0 > 1.12 && c.range.0 < 1.14 && c.range.1 > 1.27 && c.range.1 < 1.28,
            "{c:?} {measured}"
        );
        // H76 at 6feb1af and the microbench at 1432bb9: without the cluster, the same clock.
        let (c, runs, _) = sustained_check_pin(F::ProbedMhz, solo, decode, 0.02);
        assert_eq!(
            runs,
            [
                "6feb1af/h76-clock-price/runs/sustain-20261201T032903Z",
                "microbench-20261201T033439Z"
            ]
        );
        assert!(c.range.0 > 0.97 && c.range.1 < 1.03, "{c:?}");
        let e = sustained_pin(
            vec![sustained_check_pin(F::Cycles, solo, decode, 0.03)],
            "H76(a)",
        );
        let text = e.describe().join(" ");
        assert!(
            text.contains("cycles of") && text.contains("H76(a)"),
            "{text}"
        );
    }
}

#[cfg(test)]
mod window_tests {
    use super::*;

    #[test]
    fn a_pinned_window_reaches_the_run_farthest_from_the_mean() {
        // Six runs near 1.03 and one at 0.966 (1432bb9's `auto` on prefill_attn_out against cublasGemmEx): the mean
        // sits near 1.021, so half the spread (3.3%) fell short of the lone run, 5.5% away.
        let mut runs: Vec<Estimate> = (0..6).map(|_| ("a", 1.03, 1.027, 1.033)).collect();
        runs.push(("b", 0.9656, 0.9622, 0.9691));
        let Expect::RatioNear { ratio, tolerance } = pinned_ratio_from(&runs, 0.05).expect else {
            panic!("a ratio pin")
        };
        for r in &runs {
            assert!(
                r.1 >= ratio / (1.0 + tolerance) && r.1 <= ratio * (1.0 + tolerance),
                "{} outside {ratio} +-{tolerance}",
                r.1
            );
        }
    }
}
