// Embeds the commit the binaries were built from: results record it, and the GPU machine has no git checkout.
use std::process::Command;

fn main() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = git(&[
        "status",
        "--porcelain",
        "--",
        "kernels",
        "harness",
        "ablations",
        "microbench",
        "Cargo.toml",
    ])
    .map(|s| !s.is_empty())
    .unwrap_or(false);
    println!(
        "cargo:rustc-env=GEMM_ABLATE_COMMIT={commit}{}",
        if dirty { "-dirty" } else { "" }
    );
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");
    println!("cargo:rerun-if-changed=kernels");
    println!("cargo:rerun-if-changed=harness");
}
