//! Statistics: percentiles and means of TTFM and TBM samples, pooled over the schemas both
//! engines compiled and the valid instances both accepted.

use crate::outcome::EngineResult;

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

pub struct Stats {
    pub n: usize,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

pub fn stats(mut v: Vec<f64>) -> Stats {
    v.sort_by(f64::total_cmp);
    let mean = if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 };
    Stats {
        n: v.len(),
        mean,
        p50: pct(&v, 0.5),
        p99: pct(&v, 0.99),
        p999: pct(&v, 0.999),
        max: pct(&v, 1.0),
    }
}

pub fn stats_json(s: &Stats) -> serde_json::Value {
    serde_json::json!({"n": s.n, "mean": s.mean, "p50": s.p50, "p99": s.p99, "p999": s.p999, "max": s.max})
}

pub fn ratio(a: f64, b: f64) -> f64 {
    a / b
}

pub type Row = (String, EngineResult, EngineResult);

/// The raw samples behind [`summarize`]: TTFM ours, theirs; TBM ours, theirs (µs).
pub fn samples(rows: &[&Row]) -> [Vec<f64>; 4] {
    let both: Vec<&&Row> =
        rows.iter().filter(|(_, o, r)| o.ttfm_us.is_some() && r.ttfm_us.is_some()).collect();
    let mut out: [Vec<f64>; 4] = Default::default();
    for (_, o, r) in &both {
        out[0].push(o.ttfm_us.unwrap());
        out[1].push(r.ttfm_us.unwrap());
        for (a, b) in o.replays.iter().zip(r.replays.iter()) {
            if let (Some(a), Some(b)) = (a, b) {
                if a.accepted && b.accepted && a.times.len() == b.times.len() {
                    out[2].extend(a.times.iter().copied());
                    out[3].extend(b.times.iter().copied());
                }
            }
        }
    }
    out
}

/// TTFM stats over schemas both compiled and TBM stats over valid instances both accepted.
pub fn summarize(rows: &[&Row]) -> (usize, Stats, Stats, Stats, Stats, usize) {
    let both: Vec<&&Row> =
        rows.iter().filter(|(_, o, r)| o.ttfm_us.is_some() && r.ttfm_us.is_some()).collect();
    let ttfm_o = stats(both.iter().map(|(_, o, _)| o.ttfm_us.unwrap()).collect());
    let ttfm_r = stats(both.iter().map(|(_, _, r)| r.ttfm_us.unwrap()).collect());
    let mut tbm_o = Vec::new();
    let mut tbm_r = Vec::new();
    let mut common = 0usize;
    for (_, o, r) in &both {
        for (a, b) in o.replays.iter().zip(r.replays.iter()) {
            if let (Some(a), Some(b)) = (a, b) {
                if a.accepted && b.accepted && a.times.len() == b.times.len() {
                    common += 1;
                    tbm_o.extend(a.times.iter().copied());
                    tbm_r.extend(b.times.iter().copied());
                }
            }
        }
    }
    (both.len(), ttfm_o, ttfm_r, stats(tbm_o), stats(tbm_r), common)
}
