//! The site's model and pages on reports made by hand: two
//! implementations, one of them in three versions, with a clause that
//! fails, goes on failing, then is resolved.

use std::collections::BTreeMap;

use tern_harness::corpus::play::Status;
use tern_harness::corpus::Level;

use super::model::{slug, Cell, Site};
use super::{render, Loaded};
use crate::certify::{
    BudgetReport, CaseReport, ClauseText, CorpusInfo, ExplorationReport, ImplReport, Report,
    SimulationReport, VerdictReport, SCHEMA,
};

fn clause(id: &str) -> ClauseText {
    ClauseText {
        id: id.into(),
        section: 1,
        sentence: format!("The sentence of {id}."),
    }
}

fn case(id: &str, status: &str, clause_id: &str) -> CaseReport {
    CaseReport {
        id: id.into(),
        title: String::new(),
        level: Level::Core,
        section: 1,
        participant: "bob".into(),
        status: Status::from_name(status).expect("a status tern-sim writes"),
        clauses: vec![clause(clause_id)],
        invariants: Vec::new(),
        failure: None,
        unclaimed: Vec::new(),
        transcript: Vec::new(),
    }
}

fn imp(name: &str, version: Option<&str>, cases: Vec<CaseReport>) -> ImplReport {
    let failing = cases.iter().any(CaseReport::failed);
    ImplReport {
        label: format!("--impl {name}"),
        name: name.into(),
        version: version.map(str::to_owned),
        capabilities: Vec::new(),
        start_error: None,
        flag: String::new(),
        verdict: VerdictReport {
            certified: !failing,
            level: (!failing).then_some(Level::Profile),
            core: !failing,
            profile: !failing,
            simulation: tern_harness::certify::SimVerdict::Clean,
            exploration: Some(tern_harness::certify::SimVerdict::NotRun),
        },
        tally: BTreeMap::new(),
        cases,
        simulation: SimulationReport::default(),
        exploration: ExplorationReport::default(),
    }
}

fn report(clauses: &[&str], implementations: Vec<ImplReport>) -> Report {
    Report {
        schema: SCHEMA.into(),
        tern_sim_version: "0.1.0".into(),
        corpus: CorpusInfo {
            hash: "ab".repeat(32),
            clauses: clauses.len(),
            cases: 3,
            filter: None,
        },
        level_requested: tern_harness::corpus::Level::Profile,
        simulation_budget: BudgetReport {
            first_seed: 1,
            seeds: 0,
            agents: 5,
            steps: 200,
            faults: "all".into(),
            names: "compared".into(),
            duration: None,
        },
        interrupted: false,
        clauses: clauses.iter().map(|c| clause(c)).collect(),
        implementations,
        shards: None,
        scopes_left_out: Vec::new(),
        baseline: None,
        attachments: BTreeMap::new(),
        latency: None,
    }
}

/// `zeta` 1.0 fails c1 (clause S1.1), 1.1 still does, 2.0 passes it;
/// `alpha` passes everything in the second report. The third report
/// has a corpus without S1.3.
fn reports() -> Vec<(String, Report)> {
    let all = ["S1.1", "S1.2", "S1.3"];
    vec![
        (
            "v1/report.json".into(),
            report(
                &all,
                vec![imp(
                    "zeta",
                    Some("1.0"),
                    vec![
                        case("c1", "fail", "S1.1"),
                        case("c2", "pass", "S1.2"),
                        case("c3", "not_applicable", "S1.3"),
                    ],
                )],
            ),
        ),
        (
            "v2/report.json".into(),
            report(
                &all,
                vec![
                    imp(
                        "zeta",
                        Some("1.1"),
                        vec![case("c1", "fail", "S1.1"), case("c2", "fail", "S1.2")],
                    ),
                    imp(
                        "alpha",
                        None,
                        vec![case("c1", "pass", "S1.1"), case("c2", "pass", "S1.2")],
                    ),
                ],
            ),
        ),
        (
            "v3/report.json".into(),
            report(
                &["S1.1", "S1.2"],
                vec![imp(
                    "zeta",
                    Some("2.0"),
                    vec![case("c1", "pass", "S1.1"), case("c2", "pass", "S1.2")],
                )],
            ),
        ),
    ]
}

fn gather(reports: &[(String, Report)]) -> Site<'_> {
    Site::gather(reports.iter().map(|(p, r)| (p.as_str(), r)))
}

#[test]
fn implementations_by_name_and_versions_in_the_order_given() {
    let reports = reports();
    let site = gather(&reports);
    let names: Vec<&str> = site
        .implementations
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(names, ["alpha", "zeta"]);
    let columns: Vec<String> = site.columns().iter().map(|e| e.title()).collect();
    assert_eq!(
        columns,
        ["alpha unversioned", "zeta 1.0", "zeta 1.1", "zeta 2.0"]
    );
    let zeta = &site.implementations[1];
    let levels: Vec<Option<Level>> = site.history(zeta).iter().map(|e| e.level).collect();
    assert_eq!(levels, [None, None, Some(Level::Profile)]);
    let failing: Vec<usize> = site.history(zeta).iter().map(|e| e.failing_cases).collect();
    assert_eq!(failing, [1, 2, 0]);
    assert_eq!(site.sources[1].folder, "reports/02-zeta-1.1");
}

#[test]
fn a_clause_fails_goes_on_failing_then_is_resolved() {
    let reports = reports();
    let site = gather(&reports);
    let zeta = &site.implementations[1];
    assert!(site.changes(zeta, 0).is_none());
    let second = site.changes(zeta, 1).unwrap();
    assert_eq!(second.cases.ongoing, ["c1"]);
    assert_eq!(second.cases.new, ["c2"]);
    assert_eq!(second.clauses.ongoing, ["S1.1"]);
    assert_eq!(second.clauses.new, ["S1.2"]);
    let third = site.changes(zeta, 2).unwrap();
    assert_eq!(third.cases.resolved, ["c1", "c2"]);
    assert_eq!(third.clauses.resolved, ["S1.1", "S1.2"]);
    assert!(third.cases.new.is_empty() && third.clauses.new.is_empty());

    let history = site.history(zeta);
    let row: Vec<Cell> = history.iter().map(|e| site.cell(e, "S1.1")).collect();
    assert_eq!(
        row,
        [
            Cell::Broken {
                cases: vec!["c1"],
                by_run: false
            },
            Cell::Broken {
                cases: vec!["c1"],
                by_run: false
            },
            Cell::Passed(1),
        ]
    );
    let s13: Vec<Cell> = history.iter().map(|e| site.cell(e, "S1.3")).collect();
    assert_eq!(s13, [Cell::NotApplicable, Cell::NotRun, Cell::Absent]);
}

#[test]
fn the_same_version_twice_gets_a_column_of_its_own() {
    let mut reports = reports();
    let again = reports[0].1.clone();
    reports.push(("again/report.json".into(), again));
    let site = gather(&reports);
    let zeta = &site.implementations[1];
    let versions: Vec<&str> = site
        .history(zeta)
        .iter()
        .map(|e| e.version.as_str())
        .collect();
    assert_eq!(versions, ["1.0", "1.1", "2.0", "1.0 #2"]);
}

#[test]
fn slugs_are_file_names() {
    assert_eq!(
        slug("tern-sim mutant trusts-from"),
        "tern-sim-mutant-trusts-from"
    );
    assert_eq!(slug("python3 ../agent.py"), "python3-..-agent.py");
    assert_eq!(slug("../"), "implementation");
    assert_eq!(slug("ünï"), "n");
    assert_eq!(slug("éé"), "implementation");
    assert_eq!(slug(&"x".repeat(200)).len(), 60);
}

fn loaded(reports: Vec<(String, Report)>) -> Vec<Loaded> {
    reports
        .into_iter()
        .map(|(path, report)| Loaded {
            json: report.to_json().into_bytes(),
            path,
            report,
            attachments: Vec::new(),
            missing: Vec::new(),
        })
        .collect()
}

/// The targets of every `href` in `html`, fragments cut off.
fn links(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .map(|s| s.split('#').next().unwrap_or("").replace("&amp;", "&"))
        .filter(|s| !s.is_empty())
        .collect()
}

#[test]
fn every_link_leads_to_a_file_of_the_site_and_the_same_reports_give_the_same_bytes() {
    let files = render(&loaded(reports()));
    assert_eq!(files, render(&loaded(reports())));
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    for name in [
        "index.html",
        "matrix.html",
        "implementations/alpha.html",
        "implementations/zeta.html",
        "reports/01-zeta-1.0/report.html",
        "reports/01-zeta-1.0/report.json",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    for (name, bytes) in &files {
        if !name.ends_with(".html") {
            continue;
        }
        let html = std::str::from_utf8(bytes).unwrap();
        assert!(!html.contains("<script"), "{name}");
        let folder = std::path::Path::new(name).parent().unwrap();
        for link in links(html) {
            let target = normalize(&folder.join(&link));
            assert!(
                names.contains(&target.as_str()),
                "{name} links to {link}, which the site lacks"
            );
        }
    }
}

/// `a/b/../c` as `a/c`.
fn normalize(p: &std::path::Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    parts.join("/")
}

#[test]
fn names_from_a_report_are_text_on_every_page() {
    let mut reports = reports();
    reports[1].1.implementations[1].name = "<script>alert(1)</script>\u{202e}".into();
    let files = render(&loaded(reports));
    for (name, bytes) in &files {
        let text = String::from_utf8_lossy(bytes);
        if name.ends_with(".html") {
            assert!(!text.contains("<script"), "{name}");
            assert!(!text.contains('\u{202e}'), "{name}");
        }
    }
    let index = String::from_utf8_lossy(&files.iter().find(|f| f.0 == "index.html").unwrap().1)
        .into_owned();
    assert!(
        index.contains("&lt;script&gt;alert(1)&lt;/script&gt;\\u{202e}"),
        "{index}"
    );
}

#[test]
fn a_clause_broken_only_by_a_run_links_to_that_run() {
    use crate::certify::ViolationReport;
    let mut reports = reports();
    reports[1].1.implementations[1].simulation.violation = Some(ViolationReport {
        invariant: "no-spoofing".into(),
        section: "5".into(),
        clauses: vec![clause("S1.3")],
        seed: 7,
        agent: None,
        expected: String::new(),
        actual: String::new(),
        differences: Vec::new(),
        reproduce: String::new(),
        trace: None,
        stderr: None,
        original_steps: 9,
        shrunk_steps: 3,
        shorthand: Vec::new(),
        sequence: Vec::new(),
    });
    let site = gather(&reports);
    let alpha = &site.history(&site.implementations[0])[0];
    assert_eq!(
        site.cell(alpha, "S1.3"),
        Cell::Broken {
            cases: Vec::new(),
            by_run: true
        }
    );
    let files = render(&loaded(reports.clone()));
    let matrix = String::from_utf8_lossy(&files.iter().find(|f| f.0 == "matrix.html").unwrap().1)
        .into_owned();
    assert!(
        matrix.contains(
            r##"<a href="reports/02-zeta-1.1/report.html#--impl-alpha-simulation">✘ run</a>"##
        ),
        "{matrix}"
    );
    let page = String::from_utf8_lossy(
        &files
            .iter()
            .find(|f| f.0 == "reports/02-zeta-1.1/report.html")
            .unwrap()
            .1,
    )
    .into_owned();
    assert!(page.contains(r#"id="--impl-alpha-simulation""#));
}
