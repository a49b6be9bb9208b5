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
        if !top.is_finite() {
            return Err(format!(
                "the ladder's largest TFLOP/s, {top}, cannot be charted"
            ));
        }
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

/// Width in pixels of `text` at the 12-pixel sans-serif the charts use (a generous average advance: labels are
/// mostly lower case, digits and colons), so that a column can be made wide enough for its longest label.
fn text_width(text: &str) -> u32 {
    7 * text.chars().count() as u32 + 12
}

/// `text` cut to `most` characters, with an ellipsis where it was cut.
fn cut(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        text.to_string()
    } else {
        let kept: String = text.chars().take(most.saturating_sub(1)).collect();
        format!("{kept}…")
    }
}

/// Round ratios a forest plot's axis may be labelled at, the most telling first: the line of no change, then
/// halvings and doublings, then finer steps.
const ROUND_RATIOS: [f64; 24] = [
    1.0, 0.5, 2.0, 0.1, 0.2, 5.0, 0.3, 3.0, 0.7, 1.5, 0.8, 1.2, 0.9, 1.1, 0.95, 1.05, 0.05, 0.98,
    1.02, 0.96, 1.04, 0.99, 1.01, 10.0,
];

/// The round ratios inside (lo, hi) to label, taken in `ROUND_RATIOS`' order and kept where their label does not
/// crowd one already kept; `pixel` places a ratio on the axis.
fn round_ratios(lo: f64, hi: f64, pixel: impl Fn(f64) -> i32) -> Vec<f64> {
    let mut kept: Vec<f64> = Vec::new();
    for x in ROUND_RATIOS.into_iter().filter(|x| *x > lo && *x < hi) {
        if kept.iter().all(|k| (pixel(*k) - pixel(x)).abs() >= 40) {
            kept.push(x);
        }
    }
    kept
}

/// Longest note printed right of a forest plot; the report's table holds the whole text. A verdict with its ratio
/// and the seed's word, "inconclusive (0.968); seed, not confirmed: no change", fits whole.
const NOTE_CHARS: usize = 60;

/// Each comparison's time ratio (candidate/baseline, log scale) with its interval at its true width (a bar with
/// end ticks, the estimate a dot), the no-change band shaded and edged, an axis at the top and the bottom. The
/// axis spans these rows' own intervals, so a group of comparisons near 1 is not squeezed by another group's
/// 4x; the label and note columns are as wide as their longest entries.
pub fn forest(title: &str, rows: &[ForestRow], band: f64) -> DrawResult<String> {
    let height = 110 + 20 * rows.len() as u32;
    let label_width = rows
        .iter()
        .map(|r| text_width(&r.label))
        .max()
        .unwrap_or(100)
        .clamp(100, 520);
    let note_width = rows
        .iter()
        .map(|r| text_width(&cut(&r.note, NOTE_CHARS)))
        .max()
        .unwrap_or(100)
        .clamp(100, 340);
    let plot_width = 460;
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (label_width + plot_width + note_width, height))
                .into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (left, rest) = root.split_horizontally(label_width);
        let (plot, right) = rest.split_horizontally(plot_width);
        let lo = rows
            .iter()
            .map(|r| r.interval.0.min(r.ratio))
            .filter(|x| x.is_finite() && *x > 0.0)
            .fold(1.0 - 2.0 * band, f64::min);
        let hi = rows
            .iter()
            .map(|r| r.interval.1.max(r.ratio))
            .filter(|x| x.is_finite())
            .fold(1.0 + 2.0 * band, f64::max);
        // A little room either side, on the log scale.
        let pad = (hi / lo).powf(0.04);
        let (lo, hi) = (lo / pad, hi * pad);
        let n = rows.len() as f64;
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, ("sans-serif", 15))
            .margin_top(6)
            .margin_right(12)
            .x_label_area_size(40)
            .top_x_label_area_size(22)
            .build_cartesian_2d((lo..hi).log_scale(), -0.5f64..n - 0.5)
            .map_err(err)?;
        // The axes with plotters' frame; the ticks are drawn below at round ratios, which a log axis of a narrow
        // range would otherwise leave without a single label.
        chart
            .configure_mesh()
            .disable_mesh()
            .y_labels(0)
            .x_labels(0)
            .x_label_formatter(&|_| String::new())
            .draw()
            .map_err(err)?;
        let text = ("sans-serif", 12).into_font();
        let ticks = round_ratios(lo, hi, |x| chart.backend_coord(&(x, 0.0)).0);
        for &x in &ticks {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, -0.5), (x, n - 0.5)],
                    RGBColor(225, 225, 225).stroke_width(1),
                )))
                .map_err(err)?;
            let (px, top) = chart.backend_coord(&(x, n - 0.5));
            let (_, bottom) = chart.backend_coord(&(x, -0.5));
            let label = format!("{x}");
            let half = (text_width(&label) as i32 - 12) / 2;
            for py in [top - 16, bottom + 4] {
                root.draw(&Text::new(label.clone(), (px - half, py), text.clone()))
                    .map_err(err)?;
            }
        }
        let (_, bottom) = chart.backend_coord(&(1.0, -0.5));
        let desc = "time ratio, candidate / baseline (log scale)";
        let centre =
            label_width as i32 + plot_width as i32 / 2 - (text_width(desc) as i32 - 12) / 2;
        root.draw(&Text::new(desc, (centre, bottom + 20), text.clone()))
            .map_err(err)?;
        // The no-change band, shaded and edged, and the line of no change.
        let (b_lo, b_hi) = ((1.0 - band).max(lo), (1.0 + band).min(hi));
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(b_lo, -0.5), (b_hi, n - 0.5)],
                RGBColor(120, 190, 120).mix(0.35).filled(),
            )))
            .map_err(err)?;
        for (x, width) in [(b_lo, 1), (b_hi, 1), (1.0, 2)] {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, -0.5), (x, n - 0.5)],
                    RGBColor(60, 120, 60).stroke_width(width),
                )))
                .map_err(err)?;
        }
        for (i, r) in rows.iter().enumerate() {
            // First row at the top.
            let y = n - 1.0 - i as f64;
            let c = if r.passed { colour(0) } else { colour(3) };
            let (a, b) = (r.interval.0.clamp(lo, hi), r.interval.1.clamp(lo, hi));
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(a, y), (b, y)],
                    c.stroke_width(2),
                )))
                .map_err(err)?;
            for end in [a, b] {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(end, y - 0.25), (end, y + 0.25)],
                        c.stroke_width(1),
                    )))
                    .map_err(err)?;
            }
            chart
                .draw_series(std::iter::once(Circle::new(
                    (r.ratio.clamp(lo, hi), y),
                    3,
                    c.filled(),
                )))
                .map_err(err)?;
            let (_, py) = chart.backend_coord(&(1.0, y));
            left.draw(&Text::new(r.label.clone(), (4, py - 6), text.clone()))
                .map_err(err)?;
            right
                .draw(&Text::new(
                    cut(&r.note, NOTE_CHARS),
                    (8, py - 6),
                    text.clone(),
                ))
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
