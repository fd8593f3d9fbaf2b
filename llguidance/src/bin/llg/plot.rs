//! SVG plots for `llg bench` (and, through `#[path]`, for peer-bench): the cumulative
//! distribution of TBM (per-token mask + consume time) and of TTFM (per-schema compile time),
//! log-scale x axes, one line per engine. No dependencies: plain SVG text.

use std::fmt::Write;

/// One engine's samples in microseconds.
pub struct Series<'a> {
    pub name: &'a str,
    pub tbm_us: &'a [f64],
    pub ttfm_us: &'a [f64],
}

const COLORS: [&str; 4] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];
const W: f64 = 520.0;
const H: f64 = 340.0;
const PAD_L: f64 = 60.0;
const PAD_B: f64 = 45.0;
const PAD_T: f64 = 35.0;
const PAD_R: f64 = 20.0;

/// Two panels side by side (TBM CDF, TTFM CDF), each series in its own color, with the
/// p50/p99 of each series in the legend.
pub fn cdf_svg(title: &str, series: &[Series]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="12">"#,
        2.0 * W,
        H + 30.0
    );
    let _ = write!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = write!(
        s,
        r#"<text x="{}" y="18" text-anchor="middle" font-size="14">{}</text>"#,
        W,
        esc(title)
    );
    let tbm: Vec<(&str, &[f64])> = series.iter().map(|x| (x.name, x.tbm_us)).collect();
    let ttfm: Vec<(&str, &[f64])> = series.iter().map(|x| (x.name, x.ttfm_us)).collect();
    panel(&mut s, 0.0, 20.0, "TBM: mask + consume per token (µs, log)", &tbm);
    panel(&mut s, W, 20.0, "TTFM: compile + first matcher per schema (µs, log)", &ttfm);
    s.push_str("</svg>\n");
    s
}

fn esc(t: &str) -> String {
    t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn panel(s: &mut String, x0: f64, y0: f64, label: &str, series: &[(&str, &[f64])]) {
    let sorted: Vec<Vec<f64>> = series
        .iter()
        .map(|(_, v)| {
            let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite() && *x > 0.0).collect();
            v.sort_by(f64::total_cmp);
            v
        })
        .collect();
    let lo = sorted.iter().filter_map(|v| v.first()).copied().fold(f64::INFINITY, f64::min);
    let hi = sorted.iter().filter_map(|v| v.last()).copied().fold(0.0, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > 0.0 {
        (
            10f64.powf(lo.log10().floor()),
            10f64.powf(hi.log10().ceil().max(lo.log10().floor() + 1.0)),
        )
    } else {
        (1.0, 10.0)
    };
    let (pw, ph) = (W - PAD_L - PAD_R, H - PAD_T - PAD_B);
    let px = |v: f64| x0 + PAD_L + (v.log10() - lo.log10()) / (hi.log10() - lo.log10()) * pw;
    let py = |q: f64| y0 + PAD_T + (1.0 - q) * ph;
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        x0 + PAD_L + pw / 2.0,
        y0 + 20.0,
        esc(label)
    );
    let _ = write!(
        s,
        r##"<rect x="{}" y="{}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>"##,
        x0 + PAD_L,
        y0 + PAD_T
    );
    // Decades on x, quartiles on y.
    let mut d = lo;
    while d <= hi * 1.0001 {
        let x = px(d);
        let _ = write!(
            s,
            r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#ddd"/>"##,
            py(0.0),
            py(1.0)
        );
        let _ = write!(
            s,
            r#"<text x="{x}" y="{}" text-anchor="middle">{}</text>"#,
            py(0.0) + 15.0,
            fmt_us(d)
        );
        d *= 10.0;
    }
    for q in [0.0, 0.25, 0.5, 0.75, 0.99, 1.0] {
        let y = py(q);
        let _ = write!(
            s,
            r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#eee"/>"##,
            x0 + PAD_L,
            x0 + PAD_L + pw
        );
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{q}</text>"#,
            x0 + PAD_L - 4.0,
            y + 4.0
        );
    }
    for (i, ((name, _), v)) in series.iter().zip(&sorted).enumerate() {
        let color = COLORS[i % COLORS.len()];
        if !v.is_empty() {
            // At most ~2000 points per line: every k-th sample of the sorted list.
            let k = v.len().div_ceil(2000).max(1);
            let mut pts = String::new();
            for (j, &x) in v
                .iter()
                .enumerate()
                .step_by(k)
                .chain(std::iter::once((v.len() - 1, v.last().expect("non-empty"))))
            {
                let _ = write!(pts, "{:.1},{:.1} ", px(x), py((j + 1) as f64 / v.len() as f64));
            }
            let _ = write!(
                s,
                r#"<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="1.5"/>"#
            );
        }
        let ly = y0 + PAD_T + 15.0 + 16.0 * i as f64;
        let _ = write!(
            s,
            r#"<text x="{}" y="{ly}" fill="{color}">{} (n={}): p50 {} p99 {}</text>"#,
            x0 + PAD_L + 8.0,
            esc(name),
            v.len(),
            fmt_us(pct(v, 0.5)),
            fmt_us(pct(v, 0.99))
        );
    }
}

fn fmt_us(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1} s", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} ms", v / 1e3)
    } else if v >= 1.0 {
        format!("{v:.0} µs")
    } else {
        format!("{v:.2} µs")
    }
}
