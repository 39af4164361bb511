//! The terminal summary of a certification: outcomes by seed section, the
//! verdict, then every failure with the clause it breaks. With several
//! implementations, one column each, and the cases where they differ.

use std::collections::BTreeMap;

use super::{section_title, ExplorationReport, ImplReport, Report, SECTIONS};
use crate::escape::t;
use crate::run::{clip, expected_actual, table};
use tern_harness::certify::SimVerdict;
use tern_harness::corpus::Level;

/// The verdict line of one implementation.
pub fn verdict_line(i: &ImplReport, level: &str) -> String {
    let name = t(&i.title());
    let reached = match i.conformant_level() {
        Some(l) => format!("conformant at `{l}` level"),
        None => "not conformant at any level".to_owned(),
    };
    let explored = match i.verdict.exploration {
        None => String::new(),
        Some(v) => format!("; exploration {}", v.words()),
    };
    // A certification whose crashes could not lose power never checked a
    // sync: it says so in its verdict.
    let kill_only = i
        .simulation
        .durability
        .as_ref()
        .is_some_and(|d| d.kill_only());
    format!(
        "{} {name}: {} at `{level}` ({reached}; simulation {}{}{explored})",
        if i.verdict.certified { "✔" } else { "✘" },
        if i.verdict.certified {
            "CERTIFIED"
        } else {
            "NOT CERTIFIED"
        },
        i.verdict.simulation.words(),
        if kill_only {
            ", crashes kill only: syncs not checked"
        } else {
            ""
        },
    )
}

fn one(report: &Report, i: &ImplReport) -> String {
    let mut rows = vec![vec![
        "seed section".to_owned(),
        "passed".to_owned(),
        "failed".to_owned(),
        "not applicable".to_owned(),
    ]];
    for s in SECTIONS {
        let n = i.section_counts(s);
        rows.push(vec![
            section_title(s).to_owned(),
            n.passed.to_string(),
            n.failed.to_string(),
            n.not_applicable.to_string(),
        ]);
    }
    let mut out = table(rows);
    out.push('\n');
    if let Some(e) = &i.start_error {
        out.push_str(&format!("the implementation did not start: {}\n", clip(e)));
    }
    case_failures(report, i, &mut out);
    if let Some(changes) = report.baseline.as_ref().and_then(|b| b.of(&i.label)) {
        out.push_str(&super::baseline::lines(changes, ""));
    }
    simulation_lines(report, i, &mut out);
    out.push_str(&exploration_lines(&i.exploration));
    out.push_str(&verdict_line(i, report.level_requested.as_str()));
    out.push('\n');
    if let (false, Some(why)) = (i.verdict.certified, report.not_certifiable()) {
        out.push_str(&format!("    not certified because: {}\n", t(&why)));
    }
    out
}

/// Every failing case: what it breaks, expected against actual, and how
/// to play it again.
fn case_failures(report: &Report, i: &ImplReport, out: &mut String) {
    for c in i.cases.iter().filter(|c| c.failure.is_some()) {
        let f = c.failure.as_ref().expect("filtered");
        let clause = c
            .clauses
            .first()
            .map(|cl| format!("{} \"{}\"", t(&cl.id), t(&cl.sentence)))
            .unwrap_or_default();
        let level = if f.level == c.level {
            t(c.level.as_str())
        } else {
            format!(
                "{} case, counts at {}: only a name differs",
                t(c.level.as_str()),
                t(f.level.as_str())
            )
        };
        let mark = report
            .case_mark(&i.label, &c.id)
            .map(|m| format!("[{}] ", m.as_str()))
            .unwrap_or_default();
        out.push_str(&format!(
            "✘ {mark}{} [{}, {}] step {} ({}), {}\n    breaks {clause}\n{}",
            t(&c.id),
            level,
            t(&c.status.as_str().replace('_', " ")),
            f.step,
            t(&f.op),
            t(&f.check),
            expected_actual("    ", &f.expected, &f.actual),
        ));
        if !f.reproduce.is_empty() {
            out.push_str(&format!("    reproduce: {}\n", t(&f.reproduce)));
        }
        if let Some(path) = &f.stderr {
            out.push_str(&format!(
                "    stderr, whole: {} in the report folder\n",
                t(path)
            ));
        }
    }
}

/// What the simulation found (its violation, why it did not run, or its
/// counts), the soak, durability and determinism, and the situations it
/// reached.
fn simulation_lines(report: &Report, i: &ImplReport, out: &mut String) {
    let sim = &i.simulation;
    match (&sim.violation, &sim.skipped) {
        (Some(v), _) => {
            out.push_str(&format!(
                "✘ simulation: {} violated (seed {}, shrunk from {} to {} steps)\n",
                t(&v.invariant),
                v.seed,
                v.original_steps,
                v.shrunk_steps
            ));
            for c in &v.clauses {
                out.push_str(&format!("    breaks {} \"{}\"\n", t(&c.id), t(&c.sentence)));
            }
            out.push_str(&expected_actual("    ", &v.expected, &v.actual));
            for line in &v.shorthand {
                out.push_str(&format!("    {}\n", t(line)));
            }
            if !v.reproduce.is_empty() {
                out.push_str(&format!("    reproduce: {}\n", t(&v.reproduce)));
            }
            if let Some(path) = &v.stderr {
                out.push_str(&format!(
                    "    stderr, whole: {} in the report folder\n",
                    t(path)
                ));
            }
        }
        (None, Some(why)) => out.push_str(&format!("simulation not run: {}\n", t(why))),
        (None, None) if sim.verdict == SimVerdict::Incomplete && sim.runs == 0 => {
            out.push_str("simulation incomplete: interrupted before its first run\n")
        }
        (None, None) => out.push_str(&format!(
            "simulation: {} runs, {} deliveries, {} checks, no violation{}\n",
            sim.runs,
            sim.deliveries,
            sim.checks,
            match (sim.verdict, &report.simulation_budget.duration) {
                (SimVerdict::Incomplete, Some(_)) if !report.interrupted =>
                    " (too few runs for the soak to certify)",
                (SimVerdict::Incomplete, _) => " (interrupted)",
                _ => "",
            }
        )),
    }
    if let Some(line) = report.simulation_budget.soak_line(sim.runs) {
        out.push_str(&format!("{line}\n"));
    }
    if let Some(d) = &sim.durability {
        out.push_str(&format!("durability: {}\n", t(&d.label)));
    }
    if let Some(d) = &sim.determinism {
        for line in d.lines() {
            out.push_str(&format!("{}\n", t(&line)));
        }
    }
    if !sim.situations.is_empty() {
        let stopped_early = sim.verdict == SimVerdict::Violation;
        out.push_str(&situations_table(&sim.situations, stopped_early));
        out.push('\n');
    }
}

/// What exploring the built-in scopes found, for people.
fn exploration_lines(x: &ExplorationReport) -> String {
    let mut out = String::new();
    if let Some(v) = &x.violation {
        out.push_str(&format!(
            "✘ exploration: {} violated in scope {}, shortest schedule of {} moves\n",
            t(&v.invariant),
            t(&v.scope),
            v.schedule.len()
        ));
        for c in &v.clauses {
            out.push_str(&format!("    breaks {} \"{}\"\n", t(&c.id), t(&c.sentence)));
        }
        for (n, line) in v.schedule.iter().enumerate() {
            out.push_str(&format!("    {:>2}. {}\n", n + 1, t(line)));
        }
        out.push_str(&expected_actual("    ", &v.expected, &v.actual));
        out.push_str(&format!("    reproduce: {}\n", t(&v.reproduce)));
    } else if let Some(why) = &x.skipped {
        out.push_str(&format!("exploration not run: {}\n", t(why)));
    } else if let Some(verdict) = x.verdict {
        let states: u64 = x.scopes.iter().map(|s| s.states).sum();
        out.push_str(&format!(
            "exploration: {} scope(s) {}, {states} states, no violation\n",
            x.scopes.len(),
            if verdict == SimVerdict::Clean {
                "exhausted"
            } else {
                "explored (not all exhausted)"
            }
        ));
    }
    out
}

fn side_by_side(report: &Report) -> String {
    let mut header = vec!["seed section".to_owned()];
    header.extend(report.implementations.iter().map(|i| t(&i.label)));
    let mut rows = vec![header];
    for s in SECTIONS {
        let mut row = vec![section_title(s).to_owned()];
        for i in &report.implementations {
            let n = i.section_counts(s);
            row.push(format!(
                "{}/{} passed, {} failed",
                n.passed, n.total, n.failed
            ));
        }
        rows.push(row);
    }
    let mut sim = vec!["simulation".to_owned()];
    sim.extend(
        report
            .implementations
            .iter()
            .map(|i| match &i.simulation.violation {
                Some(v) => format!("{} (seed {})", t(&v.invariant), v.seed),
                None => i.simulation.verdict.words().into(),
            }),
    );
    rows.push(sim);
    let mut verdict = vec!["verdict".to_owned()];
    verdict.extend(report.implementations.iter().map(|i| {
        if i.verdict.certified {
            format!(
                "certified ({})",
                t(i.verdict.level.map_or("-", Level::as_str))
            )
        } else {
            "not certified".to_owned()
        }
    }));
    rows.push(verdict);
    let mut out = table(rows);
    out.push('\n');
    // The cases on which they disagree, one row each.
    let mut outcomes: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (n, i) in report.implementations.iter().enumerate() {
        for c in &i.cases {
            let row = outcomes
                .entry(c.id.as_str())
                .or_insert_with(|| vec!["-"; report.implementations.len()]);
            row[n] = c.status.as_str();
        }
    }
    let differing: Vec<_> = outcomes
        .into_iter()
        .filter(|(_, v)| v.iter().any(|s| *s != v[0]))
        .collect();
    if !differing.is_empty() {
        let mut header = vec!["case where they differ".to_owned()];
        header.extend(report.implementations.iter().map(|i| t(&i.label)));
        let mut rows = vec![header];
        for (id, v) in differing {
            let mut row = vec![t(id)];
            row.extend(v.iter().map(|s| t(&s.replace('_', " "))));
            rows.push(row);
        }
        out.push_str(&table(rows));
        out.push('\n');
    }
    for i in &report.implementations {
        out.push_str(&verdict_line(i, report.level_requested.as_str()));
        out.push('\n');
    }
    out
}

/// The whole summary.
pub fn summary(report: &Report) -> String {
    let mut out = String::new();
    if report.interrupted {
        out.push_str("interrupted: the results below cover only what ran before the signal\n");
    } else if let Some(why) = report.not_certifiable() {
        out.push_str(&format!(
            "{}. The results below stand, but certify nothing.\n",
            t(&why)
        ));
    }
    if let Some(note) = super::scopes_left_out_note(&report.scopes_left_out) {
        out.push_str(&format!("{}\n", t(&note)));
    }
    if let Some(b) = &report.baseline {
        out.push_str(&super::baseline::heading(b, &report.corpus.hash));
    }
    if report.implementations.len() == 1 {
        out.push_str(&one(report, &report.implementations[0]));
    } else {
        for i in &report.implementations {
            out.push_str(&format!("── {} ──\n", t(&i.label)));
            out.push_str(&one(report, i));
        }
        out.push_str(&side_by_side(report));
    }
    out
}

/// The situations a simulation reached, as a table, then the missed ones.
fn situations_table(situations: &[super::SituationCount], stopped_early: bool) -> String {
    let rows: Vec<crate::run::SituationRow> = situations
        .iter()
        .map(|s| crate::run::SituationRow {
            name: s.situation.clone(),
            count: s.count,
            clauses: s.clauses.join(" "),
        })
        .collect();
    crate::run::situation_rows_table(&rows, stopped_early)
}
