//! Isolation microbenchmarks and sweeps (see the README): added with the microbench issue.
use std::process::ExitCode;

fn main() -> ExitCode {
    harness::suite::main("microbench", Vec::new(), Vec::new())
}
