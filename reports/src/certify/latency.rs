//! `latency.json` and its lines on the terminal: how fast an
//! implementation over the protocol answered, per kind of request, and
//! its slowest requests with the command that plays each again. Times
//! vary from run to run, so none of this is in report.json or the other
//! reports, which stay the same bytes for the same seed.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use tern_harness::certify::Certification;
use tern_harness::corpus::Level;
use tern_harness::implementations::latency::{During, Timed};

use super::ImplReport;
use crate::escape::t;

pub const SCHEMA: &str = "tern-sim/latency/1";

/// Slowest requests kept per implementation.
const SLOWEST: usize = 5;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LatencyReport {
    pub schema: String,
    /// Only the implementations over the protocol, in report order: one in
    /// tern-sim's own process has no round trip to time.
    pub implementations: Vec<ImplLatency>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImplLatency {
    pub label: String,
    /// One per kind of request seen, in protocol order.
    pub kinds: Vec<KindLatency>,
    /// The slowest requests, slowest first.
    pub slowest: Vec<SlowRequest>,
}

/// Microseconds, nearest-rank percentiles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KindLatency {
    pub kind: String,
    pub count: usize,
    pub p50_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SlowRequest {
    pub kind: String,
    pub took_us: u64,
    /// The corpus case it belonged to, or null.
    pub case: Option<String>,
    /// The simulation seed it belonged to, or null.
    pub seed: Option<u64>,
    /// Its place among that case's or run's requests, from 1.
    pub request: u64,
    /// The command that plays that case or run again, if it belonged to one.
    pub reproduce: Option<String>,
}

/// Protocol order, then any other kind by name.
fn kind_rank(kind: &str) -> (usize, &str) {
    let known = ["init", "deliver", "execute", "view"];
    (
        known.iter().position(|k| *k == kind).unwrap_or(known.len()),
        kind,
    )
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// The value at quantile `q` of `sorted` (ascending, not empty), by
/// nearest rank: one that was measured, never an interpolation.
fn nearest_rank(sorted: &[u64], q: f64) -> u64 {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// One implementation's round trips, summed up; `None` when it made none
/// (in process, or it did not start).
pub fn summarise(
    imp: &ImplReport,
    timed: &[&Timed],
    level: Level,
    agents: usize,
    steps: usize,
) -> Option<ImplLatency> {
    if timed.is_empty() {
        return None;
    }
    let mut by_kind: BTreeMap<(usize, &str), Vec<u64>> = BTreeMap::new();
    for x in timed {
        by_kind
            .entry(kind_rank(x.op))
            .or_default()
            .push(micros(x.took));
    }
    let kinds = by_kind
        .into_iter()
        .map(|((_, kind), mut v)| {
            v.sort_unstable();
            KindLatency {
                kind: kind.to_owned(),
                count: v.len(),
                p50_us: nearest_rank(&v, 0.50),
                p99_us: nearest_rank(&v, 0.99),
                max_us: v[v.len() - 1],
            }
        })
        .collect();
    let mut slow: Vec<&&Timed> = timed.iter().collect();
    // Ties broken by where the request was, so the list is one order.
    slow.sort_by(|a, b| {
        b.took
            .cmp(&a.took)
            .then_with(|| a.work.cmp(&b.work))
            .then(a.nth.cmp(&b.nth))
    });
    let slowest = slow
        .into_iter()
        .take(SLOWEST)
        .map(|x| {
            let (case, seed, reproduce) = match &x.work {
                Some(During::Case(id)) => {
                    (Some(id.clone()), None, Some(imp.case_command(id, level)))
                }
                Some(During::Seed(s)) => (
                    None,
                    Some(*s),
                    Some(imp.seed_command(*s, level, agents, steps)),
                ),
                None => (None, None, None),
            };
            SlowRequest {
                kind: x.op.to_owned(),
                took_us: micros(x.took),
                case,
                seed,
                request: x.nth,
                reproduce,
            }
        })
        .collect();
    Some(ImplLatency {
        label: imp.label.clone(),
        kinds,
        slowest,
    })
}

/// The latency of every implementation of `results` over the protocol
/// (`implementations` is the report's, in the same order); `None` when
/// none of them is.
pub fn of(
    implementations: &[ImplReport],
    results: &[Certification],
    level: Level,
    agents: usize,
    steps: usize,
) -> Option<LatencyReport> {
    let list: Vec<ImplLatency> = implementations
        .iter()
        .zip(results)
        .filter_map(|(imp, r)| {
            let timed: Vec<&Timed> = r
                .corpus
                .latency
                .iter()
                .chain(&r.simulation.latency)
                .collect();
            summarise(imp, &timed, level, agents, steps)
        })
        .collect();
    (!list.is_empty()).then(|| LatencyReport {
        schema: SCHEMA.to_owned(),
        implementations: list,
    })
}

impl LatencyReport {
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

fn ms(us: u64) -> String {
    format!("{:.2} ms", us as f64 / 1000.0)
}

/// For the terminal: per implementation a table of kinds, then its
/// slowest requests.
pub fn text(report: &LatencyReport) -> String {
    let mut out = String::new();
    for i in &report.implementations {
        out.push_str(&format!(
            "latency of {} over the protocol (this run only; latency.json):\n",
            t(&i.label)
        ));
        let mut rows = vec![vec![
            "request".to_owned(),
            "count".to_owned(),
            "p50".to_owned(),
            "p99".to_owned(),
            "max".to_owned(),
        ]];
        for k in &i.kinds {
            rows.push(vec![
                t(&k.kind),
                k.count.to_string(),
                ms(k.p50_us),
                ms(k.p99_us),
                ms(k.max_us),
            ]);
        }
        out.push_str(&crate::run::table(rows));
        out.push('\n');
        for s in &i.slowest {
            let place = match (&s.case, s.seed) {
                (Some(c), _) => format!("case {}", t(c)),
                (None, Some(seed)) => format!("seed {seed}"),
                (None, None) => "outside any case or run".to_owned(),
            };
            out.push_str(&format!(
                "  slow: {} took {}, request {} of {place}{}\n",
                t(&s.kind),
                ms(s.took_us),
                s.request,
                s.reproduce
                    .as_ref()
                    .map(|r| format!("; reproduce: {}", t(r)))
                    .unwrap_or_default()
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_measured_values_by_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(nearest_rank(&v, 0.5), 50);
        assert_eq!(nearest_rank(&v, 0.99), 99);
        assert_eq!(nearest_rank(&[7], 0.99), 7);
        assert_eq!(nearest_rank(&[1, 9], 0.5), 1);
        assert_eq!(nearest_rank(&[1, 9], 0.99), 9);
    }
}
