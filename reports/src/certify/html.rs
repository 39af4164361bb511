//! `report.html`: one self-contained page a vendor can publish. The verdict
//! comes first, then the clause table, then each failure as a sequence
//! diagram beside its shorthand and raw frames. No script, no network, no
//! external asset; the layout reflows for phones, and only diagrams and
//! wide tables scroll sideways.

use std::fmt::Write;
use tern_harness::certify::SimVerdict;
use tern_harness::corpus::play::Status;
use tern_harness::explore::search::ScopeVerdict;

use super::baseline::{ImplChanges, Mark};
use super::diagram::{esc, Diagram};
use super::{section_title, CaseReport, ClauseText, ImplReport, Report, SECTIONS};
use crate::differences::Difference;

const STYLE: &str = r#"
:root{--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--ink:#1f2328;--mute:#59636e;--line:#d1d9e0;--bg:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:#fff}
main{max-width:1100px;margin:0 auto;padding:16px}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid var(--line)}h3{font-size:1.05em;margin:1.2em 0 .3em}
.verdict{border-radius:10px;padding:14px 18px;margin:12px 0;color:#fff}
.verdict.yes{background:var(--ok)}.verdict.no{background:var(--bad)}
.verdict .big{font-size:1.4em;font-weight:700;display:block}
.meta{color:var(--mute);font-size:.9em;word-break:break-all}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--bg)}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:var(--ok)}.fail{color:var(--bad);font-weight:600}.na{color:var(--mute)}
blockquote{margin:.4em 0;padding:.3em .8em;border-left:4px solid var(--line);color:var(--mute)}
.failure{border:1px solid var(--line);border-left:5px solid var(--bad);border-radius:6px;padding:8px 12px;margin:14px 0}
.pair{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:12px;align-items:start}
@media (max-width:760px){.pair{grid-template-columns:minmax(0,1fr)}main{padding:10px}}
pre{background:var(--bg);padding:8px;overflow-x:auto;font-size:.82em;white-space:pre-wrap;word-break:break-all}
ol.gloss{padding-left:1.6em;font-size:.88em;overflow-wrap:anywhere;min-width:0}ol.gloss li.bad{color:var(--bad);font-weight:600}
code{font-size:.9em}
.failure p{overflow-wrap:anywhere}
.mark{display:inline-block;border-radius:8px;padding:0 7px;font-size:.75em;font-weight:600;vertical-align:middle;color:#fff}.mark.new{background:var(--bad)}.mark.ongoing{background:var(--mute)}
.diff{margin:.5em 0}.diff td{overflow-wrap:anywhere;word-break:break-all}
svg.seq{background:#fff;font:12px system-ui,sans-serif;display:block}
svg.seq .life{stroke:#afb8c1;stroke-dasharray:4 4}
svg.seq rect.head{fill:var(--bg);stroke:#8c959f}svg.seq rect.head.iut{fill:#ddf4ff;stroke:#0969da}
svg.seq .lane{font-weight:600}svg.seq .sub{fill:#0969da;font-size:11px}
svg.seq .msg{stroke:#1f2328;stroke-width:1.4}
svg.seq .lbl{fill:#1f2328}svg.seq .ans{fill:#59636e;font-size:11px}
svg.seq .mark{fill:var(--bg);stroke:#afb8c1}
svg.seq .f .msg{stroke:#bc4c00;stroke-dasharray:5 3}svg.seq .f .mark{fill:#fff1e5;stroke:#bc4c00}
svg.seq .x .msg{stroke:#cf222e;stroke-width:2.2}svg.seq .x .mark{fill:#ffebe9;stroke:#cf222e}svg.seq .x .lbl,svg.seq .x .ans,svg.seq .x .mk{fill:#cf222e;font-weight:600}
svg.seq .lost{fill:#bc4c00;font-size:16px}
"#;

fn verdict_block(out: &mut String, i: &ImplReport, level: &str) {
    let yes = i.verdict.certified;
    let _ = write!(
        out,
        r#"<div class="verdict {}"><span class="big">{} {} at <code>{}</code> level</span>{} — {}; simulation: {}{}</div>"#,
        if yes { "yes" } else { "no" },
        if yes { "✔" } else { "✘" },
        if yes { "Certified" } else { "Not certified" },
        esc(level),
        esc(&i.title()),
        match i.conformant_level() {
            Some(l) => format!("conformant at {l} level"),
            None => "not conformant at any level".to_owned(),
        },
        i.simulation.verdict.words(),
        match i.exploration.verdict {
            None => String::new(),
            Some(v) => format!("; exploration: {}", v.words()),
        },
    );
}

fn sections_table(out: &mut String, report: &Report) {
    out.push_str(r#"<div class="scroll"><table><tr><th>Seed section</th>"#);
    for i in &report.implementations {
        let _ = write!(out, "<th>{}</th>", esc(&i.label));
    }
    out.push_str("</tr>");
    for s in SECTIONS {
        let _ = write!(out, "<tr><td>{}</td>", esc(section_title(s)));
        for i in &report.implementations {
            let n = i.section_counts(s);
            let (p, f, na) = (n.passed, n.failed, n.not_applicable);
            let _ = write!(
                out,
                r#"<td><span class="pass">{p} passed</span>, <span class="{}">{f} failed</span>, <span class="na">{na} n/a</span></td>"#,
                if f > 0 { "fail" } else { "na" }
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("<tr><td>Exploration</td>");
    for i in &report.implementations {
        let text = match &i.exploration.violation {
            Some(v) => format!(
                r#"<span class="fail">{} (scope {})</span>"#,
                esc(&v.invariant),
                esc(&v.scope)
            ),
            None => format!(
                "{} ({} scopes)",
                i.exploration.verdict.map_or("", SimVerdict::words),
                i.exploration.scopes.len()
            ),
        };
        let _ = write!(out, "<td>{text}</td>");
    }
    out.push_str("</tr>");
    out.push_str("<tr><td>Simulation</td>");
    for i in &report.implementations {
        let text = match &i.simulation.violation {
            Some(v) => format!(
                r#"<span class="fail">{} (seed {})</span>"#,
                esc(&v.invariant),
                v.seed
            ),
            None => format!(
                "{} ({} runs, {} deliveries)",
                i.simulation.verdict.words(),
                i.simulation.runs,
                i.simulation.deliveries
            ),
        };
        let _ = write!(out, "<td>{text}</td>");
    }
    out.push_str("</tr></table></div>");
}

fn clause_table(out: &mut String, report: &Report) {
    out.push_str(r#"<h2 id="clauses">Clauses</h2><p class="meta">Every normative sentence of seed sections 1–5 and 8, the cases that check it, and each implementation's result on them.</p><div class="scroll"><table><tr><th>Clause</th><th>Sentence</th><th>Cases</th>"#);
    for i in &report.implementations {
        let _ = write!(out, "<th>{}</th>", esc(&i.label));
    }
    out.push_str("</tr>");
    for c in &report.clauses {
        let cases: Vec<&str> = report
            .implementations
            .first()
            .map(|i| {
                i.cases
                    .iter()
                    .filter(|k| k.clauses.iter().any(|x| x.id == c.id))
                    .map(|k| k.id.as_str())
                    .collect()
            })
            .unwrap_or_default();
        let _ = write!(
            out,
            r#"<tr id="{}"><td><code>{}</code></td><td>{}</td><td class="n" title="{}">{}</td>"#,
            esc(&c.id),
            esc(&c.id),
            esc(&c.sentence),
            esc(&cases.join(", ")),
            cases.len()
        );
        for i in &report.implementations {
            let mine: Vec<&CaseReport> = i
                .cases
                .iter()
                .filter(|k| k.clauses.iter().any(|x| x.id == c.id))
                .collect();
            let failed: Vec<&str> = mine
                .iter()
                .filter(|k| k.failed())
                .map(|k| k.id.as_str())
                .collect();
            if failed.is_empty() {
                let passed = mine.iter().filter(|k| k.status == Status::Pass).count();
                let _ = write!(out, r#"<td><span class="pass">{passed} pass</span></td>"#);
            } else {
                let _ = write!(
                    out,
                    r#"<td><span class="fail">✘ {}</span></td>"#,
                    failed
                        .iter()
                        .map(|id| format!(
                            "<a href=\"#{}-{}\">{}</a>",
                            esc(&i.label_anchor()),
                            esc(id),
                            esc(id)
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></div>");
}

impl ImplReport {
    /// A fragment-safe name for links within the page; the site links
    /// to a failure as `LABEL-ANCHOR-CASE`.
    pub(crate) fn label_anchor(&self) -> String {
        self.label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect()
    }
}

/// The clauses a failure breaks, linked to the clause table, then what was
/// expected against what happened.
fn broken_clauses(
    out: &mut String,
    clauses: &[ClauseText],
    expected: &str,
    actual: &str,
    differences: &[Difference],
    reproduce: &str,
    files: &[(&str, &Option<String>)],
) {
    for cl in clauses {
        let _ = write!(
            out,
            r##"<blockquote><a href="#{}"><code>{}</code></a> “{}”</blockquote>"##,
            esc(&cl.id),
            esc(&cl.id),
            esc(&cl.sentence)
        );
    }
    if !differences.is_empty() {
        out.push_str(
            r#"<table class="diff"><tr><th>where</th><th>expected</th><th>actual</th></tr>"#,
        );
        let cell = |v: &Option<String>| v.as_deref().map_or("<i>nothing</i>".to_owned(), esc);
        for d in differences {
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td><code>{}</code></td><td><code>{}</code></td></tr>",
                esc(if d.path.is_empty() { "/" } else { &d.path }),
                cell(&d.expected),
                cell(&d.actual)
            );
        }
        out.push_str("</table>");
    }
    let _ = write!(
        out,
        r#"<p><b>Expected:</b> {}<br><b>Actual:</b> {}</p>"#,
        esc(expected),
        esc(actual)
    );
    if !reproduce.is_empty() {
        let _ = write!(out, "<p>Reproduce with:</p><pre>{}</pre>", esc(reproduce));
    }
    let links: Vec<String> = files
        .iter()
        .filter_map(|(what, path)| {
            let path = path.as_deref()?;
            Some(format!(r#"<a href="{}">{}</a>"#, esc(path), esc(what)))
        })
        .collect();
    if !links.is_empty() {
        let _ = write!(out, "<p>Files: {}.</p>", links.join(", "));
    }
}

fn failure_block(out: &mut String, i: &ImplReport, c: &CaseReport, mark: Option<Mark>) {
    let Some(f) = &c.failure else { return };
    let badge = mark
        .map(|m| format!(r#" <span class="mark {0}">{0}</span>"#, m.as_str()))
        .unwrap_or_default();
    let _ = write!(
        out,
        r#"<section class="failure" id="{}-{}"><h3>✘ <code>{}</code>{badge} — {}</h3><p><b>{}</b> ({} case) at step {} (<code>{}</code>), check <code>{}</code></p>"#,
        esc(&i.label_anchor()),
        esc(&c.id),
        esc(&c.id),
        esc(&c.title),
        esc(&c.status.as_str().replace('_', " ")),
        esc(&if f.level == c.level {
            c.level.as_str().to_owned()
        } else {
            format!(
                "{}; only a name differs, so it counts at {} level",
                c.level, f.level
            )
        }),
        f.step + 1,
        esc(&f.op),
        esc(&f.check),
    );
    broken_clauses(
        out,
        &c.clauses,
        &f.expected,
        &f.actual,
        &f.differences,
        &f.reproduce,
        &[("everything the implementation wrote on stderr", &f.stderr)],
    );
    let diagram = Diagram::from_transcript(&c.transcript, &c.participant);
    let _ = write!(
        out,
        r#"<div class="pair"><div class="scroll">{}</div><div><ol class="gloss">"#,
        diagram.svg(&format!("Sequence diagram of case {}", c.id))
    );
    for s in &c.transcript {
        let _ = write!(
            out,
            r#"<li value="{}"{}>{} → {}{}</li>"#,
            s.step + 1,
            if s.ok { "" } else { r#" class="bad""# },
            esc(&s.gloss),
            esc(&super::diagram::clip(&s.answer, 300)),
            s.fault
                .as_ref()
                .map(|f| format!(" <b>⚡ {}</b>", esc(f)))
                .unwrap_or_default()
        );
    }
    out.push_str("</ol></div></div><details><summary>Raw frames</summary><pre>");
    for s in &c.transcript {
        match (&s.frame, &s.frame_base64) {
            (Some(t), _) => {
                let _ = writeln!(out, "{}: {}", s.step + 1, esc(t));
            }
            (None, Some(b)) => {
                let _ = writeln!(out, "{}: (base64) {}", s.step + 1, esc(b));
            }
            _ => {}
        }
    }
    out.push_str("</pre></details></section>");
}

fn exploration_block(out: &mut String, i: &ImplReport) {
    let x = &i.exploration;
    if x.verdict.is_none() {
        return;
    }
    out.push_str("<h3>Exploration</h3>");
    if let Some(why) = &x.skipped {
        let _ = write!(out, "<p class=\"na\">Not run: {}.</p>", esc(why));
        return;
    }
    out.push_str("<div class=\"scroll\"><table><tr><th>scope</th><th>verdict</th><th>states</th><th>schedules</th><th>clauses</th></tr>");
    for s in &x.scopes {
        let _ = write!(
            out,
            "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if s.verdict == ScopeVerdict::Exhausted {
                ""
            } else {
                " class=\"fail\""
            },
            esc(&s.scope),
            esc(&s.verdict.as_str().replace('_', " ")),
            s.states,
            s.schedules,
            esc(&s.clauses.join(" "))
        );
    }
    out.push_str("</table></div>");
    let Some(v) = &x.violation else {
        return;
    };
    let _ = write!(
        out,
        r#"<section class="failure" id="{}-exploration"><h3>✘ <code>{}</code> violated in scope <code>{}</code> (seed section {})</h3><p>A shortest schedule, {} moves. Reproduce with:</p><pre>{}</pre>"#,
        esc(&i.label_anchor()),
        esc(&v.invariant),
        esc(&v.scope),
        esc(&v.section),
        v.schedule.len(),
        esc(&v.reproduce)
    );
    broken_clauses(
        out,
        &v.clauses,
        &v.expected,
        &v.actual,
        &v.differences,
        "",
        &[],
    );
    out.push_str("<ol class=\"gloss\">");
    for line in &v.schedule {
        let _ = write!(out, "<li>{}</li>", esc(line));
    }
    out.push_str("</ol></section>");
}

/// What `--check-determinism` found: a line when the answers agreed, the
/// request and its two answers when they did not.
fn determinism_block(out: &mut String, i: &ImplReport) {
    let Some(d) = &i.simulation.determinism else {
        return;
    };
    let cut = if d.complete { "" } else { " (interrupted)" };
    let Some(v) = &d.divergence else {
        let _ = write!(
            out,
            "<p>Determinism: {} seed(s) played twice on fresh state{cut}, the same answers each time.</p>",
            d.seeds.len()
        );
        return;
    };
    let _ = write!(
        out,
        r#"<section class="failure" id="{}-determinism"><h3>✘ Nondeterministic: seed {} played twice got two answers to request {}</h3><p>{}.</p><p>Request:</p><pre>{}</pre><p>First answer:</p><pre>{}</pre><p>Second answer:</p><pre>{}</pre></section>"#,
        esc(&i.label_anchor()),
        v.seed,
        v.request_number,
        esc(crate::determinism::WHY),
        esc(&v.request),
        esc(&v.first),
        esc(&v.second)
    );
}

fn simulation_block(out: &mut String, i: &ImplReport) {
    let sim = &i.simulation;
    let _ = write!(
        out,
        "<h3>Simulation</h3><p>{} runs, {} deliveries, {} executions, {} effects, {} checks; faults injected: {}.</p>",
        sim.runs,
        sim.deliveries,
        sim.executions,
        sim.effects,
        sim.checks,
        if sim.faults.is_empty() {
            "none".to_owned()
        } else {
            sim.faults
                .iter()
                .map(|(k, v)| format!("{} ×{v}", esc(k)))
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    if let Some(d) = &sim.durability {
        let _ = write!(
            out,
            "<p{}>Durability: {}.</p>",
            if d.kill_only() { " class=\"na\"" } else { "" },
            esc(&d.label)
        );
    }
    if let Some(why) = &sim.skipped {
        let _ = write!(out, "<p class=\"na\">Not run: {}.</p>", esc(why));
    }
    determinism_block(out, i);
    if !sim.situations.is_empty() {
        let missed: Vec<&str> = sim
            .situations
            .iter()
            .filter(|s| s.count == 0)
            .map(|s| s.situation.as_str())
            .collect();
        let _ = write!(
            out,
            "<details><summary>Situations reached: {} of {}{}</summary><table><tr><th>situation</th><th>reached</th><th>clauses</th></tr>",
            sim.situations.len() - missed.len(),
            sim.situations.len(),
            if missed.is_empty() {
                String::new()
            } else {
                format!("; never reached: {}", esc(&missed.join("; ")))
            }
        );
        for s in &sim.situations {
            let _ = write!(
                out,
                "<tr{}><td>{}</td><td>{}</td><td>{}</td></tr>",
                if s.count == 0 { " class=\"fail\"" } else { "" },
                esc(&s.situation),
                s.count,
                esc(&s.clauses.join(" "))
            );
        }
        out.push_str("</table></details>");
    }
    let Some(v) = &sim.violation else {
        return;
    };
    let _ = write!(
        out,
        r#"<section class="failure" id="{}-simulation"><h3>✘ <code>{}</code> violated (seed section {})</h3><p>Seed {}, shrunk from {} to {} steps{}.</p>"#,
        esc(&i.label_anchor()),
        esc(&v.invariant),
        esc(&v.section),
        v.seed,
        v.original_steps,
        v.shrunk_steps,
        v.agent
            .as_ref()
            .map(|a| format!(", at agent {}", esc(a)))
            .unwrap_or_default()
    );
    broken_clauses(
        out,
        &v.clauses,
        &v.expected,
        &v.actual,
        &v.differences,
        &v.reproduce,
        &[
            ("the shrunk run as a trace", &v.trace),
            ("everything the implementation wrote on stderr", &v.stderr),
        ],
    );
    let _ = write!(
        out,
        r#"<div class="pair"><div class="scroll">{}</div><div><ol class="gloss">"#,
        Diagram::from_sequence(&v.sequence).svg("Sequence diagram of the shrunk run")
    );
    for line in &v.shorthand {
        let bad = line.contains('✘');
        let _ = write!(
            out,
            "<li{}>{}</li>",
            if bad { r#" class="bad""# } else { "" },
            esc(line)
        );
    }
    out.push_str("</ol></div></div><details><summary>Raw frames</summary><pre>");
    for e in v.sequence.iter().filter(|e| e.kind == "send") {
        match (&e.frame, &e.frame_base64) {
            (Some(t), _) => {
                let _ = writeln!(out, "{}", esc(t));
            }
            (None, Some(b)) => {
                let _ = writeln!(out, "(base64) {}", esc(b));
            }
            _ => {}
        }
    }
    out.push_str("</pre></details></section>");
}

/// One implementation's failures against the baseline, and what it
/// resolved.
fn since_baseline(out: &mut String, ch: &ImplChanges) {
    let _ = write!(
        out,
        r#"<p class="meta">Since the baseline{}: <span class="mark new">new</span> {}, <span class="mark ongoing">ongoing</span> {}, resolved {} failing case(s); clauses: {} new, {} ongoing, {} resolved.</p>"#,
        if ch.compared_with.is_none() {
            " (not in it: everything is new)"
        } else {
            ""
        },
        ch.cases.new.len(),
        ch.cases.ongoing.len(),
        ch.cases.resolved.len(),
        ch.clauses.new.len(),
        ch.clauses.ongoing.len(),
        ch.clauses.resolved.len(),
    );
    if !ch.cases.resolved.is_empty() {
        let ids: Vec<String> = ch
            .cases
            .resolved
            .iter()
            .map(|id| format!("<code>{}</code>", esc(id)))
            .collect();
        let _ = write!(out, r#"<p class="pass">Resolved: {}</p>"#, ids.join(", "));
    }
}

pub fn render(report: &Report) -> String {
    render_within(report, None)
}

/// [`render`], for a page inside a site: `back` is the link to the
/// site's index, shown above the title.
pub fn render_within(report: &Report, back: Option<&str>) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let title = match report.implementations.as_slice() {
        [one] => format!("Tern 0.1 conformance: {}", one.title()),
        _ => "Tern 0.1 conformance: comparison".to_owned(),
    };
    let _ = write!(
        out,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{}</title><style>{STYLE}</style></head><body><main>{}<h1>{}</h1>"#,
        esc(&title),
        back.map(|b| format!(
            r#"<p class="meta"><a href="{}">← every implementation and version</a></p>"#,
            esc(b)
        ))
        .unwrap_or_default(),
        esc(&title)
    );
    if report.interrupted {
        out.push_str(r#"<div class="verdict no"><span class="big">Interrupted</span>The run was stopped before the end; this report covers only what ran and certifies nothing.</div>"#);
    } else if let Some(why) = report.not_certifiable() {
        let _ = write!(
            out,
            r#"<div class="verdict no"><span class="big">Partial run</span>{}. The results below stand, but certify nothing.</div>"#,
            esc(&why)
        );
    }
    for i in &report.implementations {
        verdict_block(&mut out, i, report.level_requested.as_str());
    }
    let b = &report.simulation_budget;
    let _ = write!(
        out,
        r#"<p class="meta">tern-sim {} · corpus <span title="{}">{}</span> ({} cases, {} clauses{}) · simulation: {} runs from seed {}, {} agents × {} steps, faults: {}, names {}</p>"#,
        esc(&report.tern_sim_version),
        esc(&report.corpus.hash),
        esc(&report.corpus.hash[..report.corpus.hash.len().min(16)]),
        report.corpus.cases,
        report.corpus.clauses,
        report
            .corpus
            .filter
            .as_ref()
            .map(|f| format!(", only cases matching “{}”", esc(f)))
            .unwrap_or_default(),
        b.seeds,
        b.first_seed,
        b.agents,
        b.steps,
        esc(&b.faults),
        esc(&b.names),
    );
    for i in &report.implementations {
        if let Some(line) = b.soak_line(i.simulation.runs) {
            let _ = write!(
                out,
                r#"<p class="meta">{}: {}</p>"#,
                esc(&i.label),
                esc(&line)
            );
        }
    }
    if let Some(bl) = &report.baseline {
        let _ = write!(
            out,
            r#"<p class="meta">Compared with the baseline {} (tern-sim {}, corpus <span title="{}">{}</span>)</p>"#,
            esc(&bl.path),
            esc(&bl.tern_sim_version),
            esc(&bl.corpus_hash),
            esc(bl.corpus_hash.get(..16).unwrap_or(&bl.corpus_hash)),
        );
        for n in bl.notes(&report.corpus.hash) {
            let _ = write!(out, r#"<p class="meta">Note: {}</p>"#, esc(&n));
        }
    }
    out.push_str(r#"<h2 id="summary">Summary</h2>"#);
    sections_table(&mut out, report);
    clause_table(&mut out, report);
    for i in &report.implementations {
        let _ = write!(
            out,
            r#"<h2 id="{}">Failures: {}</h2>"#,
            esc(&i.label_anchor()),
            esc(&i.label)
        );
        if let Some(e) = &i.start_error {
            let _ = write!(
                out,
                "<p class=\"fail\">The implementation did not start: {}</p>",
                esc(e)
            );
        }
        let failures: Vec<&CaseReport> = i.cases.iter().filter(|c| c.failure.is_some()).collect();
        if failures.is_empty() {
            out.push_str("<p class=\"pass\">No case failed.</p>");
        }
        if let Some(ch) = report.baseline.as_ref().and_then(|b| b.of(&i.label)) {
            since_baseline(&mut out, ch);
        }
        for c in failures {
            failure_block(&mut out, i, c, report.case_mark(&i.label, &c.id));
        }
        simulation_block(&mut out, i);
        exploration_block(&mut out, i);
    }
    out.push_str("</main></body></html>\n");
    out
}
