//! SVG charts of a run, drawn with plotters' SVG backend (pure Rust, no font libraries): the ladder, a forest
//! plot of comparisons, and sweeps. Each function takes plain data and returns the SVG text.

use plotters::prelude::*;

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

type DrawResult<T> = Result<T, String>;

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("drawing a chart: {e:?}")
}

/// One shape's line in the ladder chart: TFLOP/s per rung (None where the cell did not run), and cuBLAS's.
pub struct LadderLine {
    pub shape: String,
    pub tflops: Vec<Option<f64>>,
    pub cublas_tflops: Option<f64>,
}

/// TFLOP/s per rung per shape, each shape's cuBLAS as a dashed line in the same colour.
pub fn ladder(rungs: &[String], lines: &[LadderLine]) -> DrawResult<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 540)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let top = lines
            .iter()
            .flat_map(|l| l.tflops.iter().flatten().chain(l.cublas_tflops.iter()))
            .fold(0.0f64, |a, &b| a.max(b));
        let n = rungs.len().max(1) as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "The ladder against cuBLAS (TFLOP/s; dashed: cuBLAS)",
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(60)
            .y_label_area_size(50)
            .build_cartesian_2d(0.5f64..n + 0.5, 0f64..(top * 1.1).max(1.0))
            .map_err(err)?;
        let names = rungs.to_vec();
        chart
            .configure_mesh()
            .x_labels(rungs.len())
            .x_label_formatter(&|x| {
                let i = x.round() as usize;
                if (x - x.round()).abs() < 1e-6 && i >= 1 && i <= names.len() {
                    names[i - 1].clone()
                } else {
                    String::new()
                }
            })
            .y_desc("TFLOP/s")
            .draw()
            .map_err(err)?;
        for (i, line) in lines.iter().enumerate() {
            let c = colour(i);
            let points: Vec<(f64, f64)> = line
                .tflops
                .iter()
                .enumerate()
                .filter_map(|(r, t)| t.map(|t| (r as f64 + 1.0, t)))
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))
                .map_err(err)?
                .label(line.shape.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
            chart
                .draw_series(points.iter().map(|p| Circle::new(*p, 3, c.filled())))
                .map_err(err)?;
            if let Some(cb) = line.cublas_tflops {
                chart
                    .draw_series(DashedLineSeries::new(
                        vec![(0.5, cb), (n + 0.5, cb)],
                        6,
                        4,
                        c.stroke_width(1),
                    ))
                    .map_err(err)?;
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// One row of a forest plot.
pub struct ForestRow {
    pub label: String,
    pub ratio: f64,
    pub interval: (f64, f64),
    /// Printed right of the plot: the verdict, and the seed's where it has one.
    pub note: String,
    pub passed: bool,
}

/// Each comparison's time ratio (candidate/baseline, log scale) with its interval, the band shaded.
pub fn forest(title: &str, rows: &[ForestRow], band: f64) -> DrawResult<String> {
    let height = 70 + 18 * rows.len() as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1100, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (left, rest) = root.split_horizontally(330);
        let (plot, right) = rest.split_horizontally(430);
        let lo = rows
            .iter()
            .map(|r| r.interval.0)
            .fold(1.0 - band, f64::min)
            .max(1e-3);
        let hi = rows.iter().map(|r| r.interval.1).fold(1.0 + band, f64::max);
        let n = rows.len() as f64;
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, ("sans-serif", 16))
            .margin_top(8)
            .x_label_area_size(30)
            .build_cartesian_2d((lo * 0.9..hi * 1.1).log_scale(), -0.5f64..n - 0.5)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc("time ratio, candidate / baseline (log)")
            .draw()
            .map_err(err)?;
        // The no-change band and the line of no change.
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(1.0 - band, -0.5), (1.0 + band, n - 0.5)],
                RGBColor(200, 200, 200).mix(0.5).filled(),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(1.0, -0.5), (1.0, n - 0.5)],
                BLACK.stroke_width(1),
            )))
            .map_err(err)?;
        let text = ("sans-serif", 12).into_font();
        for (i, r) in rows.iter().enumerate() {
            // First row at the top.
            let y = n - 1.0 - i as f64;
            let c = if r.passed { colour(0) } else { colour(3) };
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(r.interval.0.max(lo * 0.9), y), (r.interval.1, y)],
                    c.stroke_width(2),
                )))
                .map_err(err)?;
            chart
                .draw_series(std::iter::once(Circle::new((r.ratio, y), 3, c.filled())))
                .map_err(err)?;
            let (_, py) = chart.backend_coord(&(1.0, y));
            left.draw(&Text::new(r.label.clone(), (4, py - 6), text.clone()))
                .map_err(err)?;
            right
                .draw(&Text::new(r.note.clone(), (8, py - 6), text.clone()))
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// One point of a sweep: its time relative to the first, with an interval (None for a point that did not run).
pub struct SweepPoint {
    pub label: String,
    pub relative: Option<(f64, f64, f64)>,
}

/// A sweep as a line of relative times with interval bars.
pub fn sweep(title: &str, points: &[SweepPoint]) -> DrawResult<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let ran: Vec<(f64, (f64, f64, f64))> = points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.relative.map(|r| (i as f64, r)))
            .collect();
        let top = ran.iter().map(|(_, r)| r.2).fold(1.0f64, f64::max);
        let bottom = ran.iter().map(|(_, r)| r.1).fold(1.0f64, f64::min);
        let n = points.len().max(1) as f64;
        let labels: Vec<String> = points.iter().map(|p| p.label.clone()).collect();
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(70)
            .y_label_area_size(50)
            .build_cartesian_2d(-0.5f64..n - 0.5, (bottom * 0.95)..(top * 1.05))
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_labels(points.len())
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                    let l = &labels[i as usize];
                    l.rsplit(':').next().unwrap_or(l).to_string()
                } else {
                    String::new()
                }
            })
            .y_desc("time relative to the first point")
            .draw()
            .map_err(err)?;
        chart
            .draw_series(LineSeries::new(
                ran.iter().map(|(x, r)| (*x, r.0)),
                colour(0).stroke_width(2),
            ))
            .map_err(err)?;
        for (x, r) in &ran {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(*x, r.1), (*x, r.2)],
                    colour(0).stroke_width(2),
                )))
                .map_err(err)?;
            chart
                .draw_series(std::iter::once(Circle::new(
                    (*x, r.0),
                    3,
                    colour(0).filled(),
                )))
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_svg_with_their_labels() {
        let svg = ladder(
            &["rung1".into(), "rung2".into()],
            &[LadderLine {
                shape: "square4096".into(),
                tflops: vec![Some(180.0), None],
                cublas_tflops: Some(640.0),
            }],
        )
        .unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("square4096") && svg.contains("rung1"));
        let svg = forest(
            "steps",
            &[ForestRow {
                label: "ablation::swizzle::square4096".into(),
                ratio: 0.31,
                interval: (0.30, 0.32),
                note: "faster; seed: faster".into(),
                passed: true,
            }],
            0.02,
        )
        .unwrap();
        assert!(svg.contains("ablation::swizzle::square4096") && svg.contains("seed: faster"));
        let svg = sweep(
            "stages",
            &[
                SweepPoint {
                    label: "rung3:stages=2".into(),
                    relative: Some((1.0, 1.0, 1.0)),
                },
                SweepPoint {
                    label: "rung3:stages=9".into(),
                    relative: None,
                },
            ],
        )
        .unwrap();
        assert!(svg.contains("stages=2"));
    }
}
