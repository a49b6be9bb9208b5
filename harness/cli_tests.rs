//! The command line, run as a user runs it, without a GPU: bad input gets a clear error and a non-zero exit before
//! anything launches, and no input makes it panic (a panic exits with 101 and prints "panicked").

use std::process::{Command, Output};

fn gemm_ablate(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gemm-ablate"));
    c.args(args)
        .env("GEMM_ABLATE_RESULTS_DIR", std::env::temp_dir());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("the binary runs")
}

fn said(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn refused(args: &[&str], words: &str) {
    let o = gemm_ablate(args, &[]);
    let text = said(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {text}");
    assert!(
        text.contains(words),
        "{args:?} should say {words:?}: {text}"
    );
}

#[test]
fn bad_arguments_are_named_with_exit_2() {
    refused(&["build", "4", "bf16", "fp16"], "one dtype");
    // FP8: a mistyped scheme is named as a dtype, and a spec FP8 cannot take is refused before any GPU or ncu.
    refused(
        &["compare", "square4096", "cublas", "10", "e4m3-col"],
        "unsupported dtype `e4m3-col`",
    );
    refused(&["sustain", "square4096", "10", "e4m3"], "tile_k=128");
    refused(
        &["profile", "10:tile_k=128", "square4096", "e4m3-block"],
        "promote=1",
    );
    refused(&["diff", "3"], "a rung is missing");
    refused(&["diff", "3", "nope"], "unknown rung \"nope\"");
    refused(&["baseline", "a.json,", "b.json"], "empty file name");
    refused(
        &["baseline", "missing-now.json", "missing-base.json"],
        "missing-now.json",
    );
    refused(&["auto", "5x8191x8192"], "multiples of 8");
    refused(
        &["compare", "square4096", "10", "cublas", "e4m3"],
        "`10:tile_k=128`",
    );
    refused(
        &["compare", "square4096", "10", "10", "bf16", "e4m3"],
        "one dtype",
    );
    refused(
        &["compare", "square4096", "cublas", "skinny", "e4m3"],
        "fp16 and bf16",
    );
}

/// Nothing a command does not take is dropped in silence: an extra word, an unknown option, an empty switch.
#[test]
fn what_a_command_does_not_take_is_named_with_exit_2() {
    refused(&["show", "8", "fp32"], "`fp32` is none of them");
    refused(&["show", "8", "--bogus"], "`--bogus` is none of them");
    refused(&["show", "8", "e4m3"], "tile_k=128");
    refused(&["show", "8:"], "nothing after its colon");
    refused(
        &["show", "rung8:stages=4,,pingpong=0"],
        "doubled or trailing comma",
    );
    refused(&["show", "auto"], "auto SHAPE");
    refused(&["diff", "7", "8", "9"], "`9` is a third");
    refused(&["list", "x"], "list takes nothing");
    refused(&["auto", "--ranges", "4096"], "NxK");
    refused(
        &["auto", "--ranges", "4096x4096", "square4096"],
        "`square4096` is extra",
    );
    refused(&["auto", "square4096", "--bogus"], "`--bogus`");
    refused(&["stalls", "/no/such/source.csv", "abc"], "`abc`");
    refused(&["stalls", "/no/such/source.csv"], "/no/such/source.csv");
    refused(&["report", "a.json", "--bogus"], "`--bogus` is neither");
    refused(&["profile", "10", "square4096", "--bogus"], "`--bogus`");
    refused(&["build", "auto"], "auto SHAPE");
    refused(&["build", "ext:mma_tile:"], "nothing after its colon");
    refused(&["show", "10:cluster=0"], "cluster size must be 1, 2 or 4");
    refused(
        &["compare", "square4096"],
        "gemm-ablate compare SHAPE BASE CAND",
    );
    refused(&["bogus"], "unknown command `bogus`");
    let h200 = concat!(env!("CARGO_MANIFEST_DIR"), "/results/h200/");
    let ablations = format!("{h200}9a8c135/ablations-20261130T123530Z.json");
    refused(
        &["baseline", &ablations, &ablations, "--fail-on-slowr"],
        "`--fail-on-slowr` is not it",
    );
}

#[test]
fn help_prints_every_command_and_exits_0() {
    for word in ["help", "--help", "-h"] {
        let o = gemm_ablate(&[word], &[]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{word}: {}", said(&o));
        for command in [
            "show",
            "diff",
            "build",
            "compare",
            "sustain",
            "profile",
            "cublas-paths",
            "auto",
            "list",
            "device",
            "agree",
            "report",
            "baseline",
            "stalls",
        ] {
            assert!(
                out.contains(&format!("gemm-ablate {command} ")),
                "{word}: no {command}: {out}"
            );
        }
    }
}

/// `auto` without a GPU names the kernel of the dtype it is given, fp16 without one.
#[test]
fn auto_names_the_kernel_of_the_dtype_it_is_given() {
    let o = gemm_ablate(&["auto", "square4096"], &[]);
    assert!(
        o.status.success() && said(&o).contains("fp16"),
        "{}",
        said(&o)
    );
    let o = gemm_ablate(&["auto", "square4096", "e4m3-block"], &[]);
    let text = said(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("promote=1") && text.contains("e4m3-block"),
        "{text}"
    );
    let o = gemm_ablate(&["auto", "--ranges", "8192x8192", "e4m3"], &[]);
    let text = said(&o);
    assert!(o.status.success() && text.contains("tile_k=128"), "{text}");
    let o = gemm_ablate(&["auto", "long_k", "e4m3"], &[]);
    assert!(said(&o).contains("promote=4"), "{}", said(&o));
    refused(&["auto", "square4096", "e4m3", "bf16"], "one dtype");
    refused(&["auto", "square4096", "e4m3-col"], "e4m3-col");
}

/// A variable a build recipe reads (kernels/ext/*/build.sh) is no setting of the binary's, and no reason to stop.
#[test]
fn a_build_recipe_s_variable_does_not_stop_the_binary() {
    let dir = std::ffi::OsStr::new("/tmp/triton");
    let o = gemm_ablate(
        &["list"],
        &[
            ("GEMM_ABLATE_TRITON_DIR", dir),
            ("GEMM_ABLATE_CUTE_DSL", dir),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
}

#[test]
fn a_baseline_of_another_suite_or_with_nothing_in_common_is_refused() {
    let h200 = concat!(env!("CARGO_MANIFEST_DIR"), "/results/h200/");
    let ablations = format!("{h200}9a8c135/ablations-20261130T123530Z.json");
    let microbench = format!("{h200}9a8c135/microbench-20261130T124018Z.json");
    refused(&["baseline", &microbench, &ablations], "one suite");
    let o = gemm_ablate(&["baseline", &ablations, &ablations], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
}

#[test]
fn settings_out_of_range_or_not_text_are_named_and_others_bytes_are_ignored() {
    use std::os::unix::ffi::OsStrExt;
    let huge = std::ffi::OsStr::new("1e300");
    let o = gemm_ablate(&["list"], &[("GEMM_ABLATE_TRIAL_TIMEOUT_S", huge)]);
    assert_eq!(o.status.code(), Some(2), "{}", said(&o));
    assert!(said(&o).contains("GEMM_ABLATE_TRIAL_TIMEOUT_S"));
    let bytes = std::ffi::OsStr::from_bytes(b"\xff\xfe");
    let o = gemm_ablate(&["list"], &[("SOME_OTHER_PROGRAM", bytes)]);
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
    let o = gemm_ablate(&["list"], &[("GEMM_ABLATE_BAND", bytes)]);
    assert_eq!(o.status.code(), Some(2), "{}", said(&o));
    assert!(said(&o).contains("not UTF-8"), "{}", said(&o));
}

/// Arguments and settings drawn from the words the tool knows and some it does not, in every order: whatever
/// comes, the binary ends with 0, 1 or 2 and never panics.
#[test]
fn no_argument_or_setting_makes_it_panic() {
    let words = [
        "show",
        "diff",
        "compare",
        "auto",
        "list",
        "agree",
        "report",
        "baseline",
        "profile",
        "sustain",
        "stalls",
        "cublas-paths",
        "ladder",
        "4",
        "10",
        "0",
        "-1",
        "99",
        "swizzle",
        "rung4_swizzle",
        "top",
        "bf16",
        "fp16",
        "fp8",
        "--all",
        "--ranges",
        "--out",
        "--seconds",
        "--passes",
        "--fail-on-slower",
        "--full",
        "square4096",
        "decode_m1",
        "1x8192x8192",
        "0x8x8",
        "8x0x8",
        "99999999999x8x8",
        "7x7x7",
        "stream",
        "skinny",
        "stream:bogus=1",
        "rung10:bn=0",
        "rung10:stages=20",
        "rung10:cluster=3",
        "auto",
        "cublas",
        "ext:x",
        "a.json",
        ",",
        "",
        " ",
        "\u{e9}",
        "8192x8192",
        // FP8 (issue 40): the schemes, a mistyped one, and switches only FP8 takes.
        "e4m3-row",
        "e4m3-block",
        "e4m3-col",
        "e4m3-block-f16",
        "10:tile_k=128,bn=128,promote=1",
        "10:promote=65",
        "10:tile_k=128,bn=128,promote=1,scale_loads=stage",
        "dsv3_o_m128",
        // Help, an unknown option, and switch lists with nothing in a place.
        "help",
        "--help",
        "--bogus",
        "8:",
        "rung8:stages=4,,pingpong=0",
    ];
    let settings = [
        (
            "GEMM_ABLATE_BAND",
            ["0.02", "0", "-1", "nan", "inf", "0.6", "x"],
        ),
        (
            "GEMM_ABLATE_PROCESSES",
            ["3", "0", "17", "-1", "1e9", "", "x"],
        ),
        (
            "GEMM_ABLATE_TRIAL_TIMEOUT_S",
            ["300", "0", "1e300", "inf", "nan", "-5", "x"],
        ),
        (
            "GEMM_ABLATE_REPEAT",
            ["1", "0", "101", "18446744073709551616", "2", "", "x"],
        ),
    ];
    let mut state: u64 = 0x5eed;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % n
    };
    for case in 0..150 {
        // `build` compiles kernels (slow with NVRTC installed) and `ladder`/`device` look for a GPU: they are
        // covered above; here every other command with up to four words after it.
        let first = words[next(12)];
        let mut args = vec![first];
        for _ in 0..next(5) {
            args.push(words[next(words.len())]);
        }
        let (k, values) = settings[next(settings.len())];
        let v = values[next(values.len())];
        let o = gemm_ablate(&args, &[(k, std::ffi::OsStr::new(v))]);
        let text = said(&o);
        assert!(
            matches!(o.status.code(), Some(0..=2)) && !text.contains("panicked"),
            "case {case}: {k}={v:?} gemm-ablate {args:?} ended with {:?}: {text}",
            o.status.code()
        );
    }
}

#[test]
fn external_kernels_are_refused_before_anything_launches_naming_manifest_and_field() {
    let manifest = "kernels/ext/mma_tile/kernel.toml";
    for (args, code, words) in [
        (
            &["compare", "square4096", "auto", "ext:mma_tile:BM=32"][..],
            2,
            "switches.BM: `32` is not one of 64, 128",
        ),
        (
            &["compare", "96x4096x4096", "auto", "ext:mma_tile"][..],
            2,
            "requires[0]: shape 96x4096x4096 fails `M % BM == 0`",
        ),
        (
            &["compare", "square4096", "ext:nonesuch", "auto"][..],
            2,
            "no manifest",
        ),
        (
            &["build", "ext:mma_tile", "bf16"][..],
            2,
            "dtypes: bf16 is not supported",
        ),
        (&["show", "ext:mma_tile:XX=1"][..], 2, "no switch `XX`"),
    ] {
        let o = gemm_ablate(args, &[]);
        let text = said(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {text}");
        assert!(
            text.contains(words),
            "{args:?} should say {words:?}: {text}"
        );
        if !words.contains("no manifest") {
            assert!(
                text.contains(manifest),
                "{args:?} should name {manifest}: {text}"
            );
        }
    }
}

#[test]
fn a_kept_worker_answers_a_request_with_its_record_and_token_and_ends_with_its_stdin() {
    use std::io::Write;
    let record = std::env::temp_dir().join(format!("kept-worker-test-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&record);
    let token = "\u{1e}test token 1";
    // The wire format of harness/trial/pool.rs: one request a line.
    let request = serde_json::json!({
        "name": "kept::cublas_vs_cpu",
        "job": {"CublasVsCpu": {"dtype": "F16"}},
        "settings": [["GEMM_ABLATE_LOOKS", "1"]],
        "record": record,
        "token": token,
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_gemm-ablate"))
        .env("GEMM_ABLATE_CHILD_SERVE", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{request}").unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let text = said(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    for stream in [&o.stdout, &o.stderr] {
        let lines = String::from_utf8_lossy(stream).to_string();
        assert!(lines.lines().any(|l| l.ends_with(token)), "{text}");
    }
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).expect("the record")).unwrap();
    let _ = std::fs::remove_file(&record);
    assert_eq!(written["name"], "kept::cublas_vs_cpu", "{written}");
    // Without a GPU the record says why; with one, cuBLAS was checked.
    let observed = written["observed"].to_string();
    assert!(
        observed.contains("GPU") || observed.contains("driver") || observed.contains("Correct"),
        "{observed}"
    );
}
