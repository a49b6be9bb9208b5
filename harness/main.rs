use harness::{compile, ladder::Rung, problem::DType, source};
fn main() {
    for r in Rung::ALL {
        let cfg = r.config();
        if let Err(e) = cfg.validate() { println!("{}: {e}", r.name()); continue; }
        let t = std::time::Instant::now();
        match compile::compile(&r.name(), &source::gemm_program(&cfg, DType::F16)) {
            Ok(c) => println!("{}: {:?} {:.1}s", r.name(), c.report, t.elapsed().as_secs_f64()),
            Err(e) => println!("{}: {e}", r.name()),
        }
    }
}
