//! JUnit XML for CI systems: one suite per seed section (per implementation
//! when there are several), one test per case named by its ID. Only a
//! `fail` (or a false claim, which is a failed case) is a failure; an
//! implementation that misbehaved is an error, and a case that does not
//! apply is skipped.

use quick_junit::{NonSuccessKind, Property, Report as Junit, TestCase, TestCaseStatus, TestSuite};
use tern_harness::certify::SimVerdict;
use tern_harness::corpus::play::Status;
use tern_harness::explore::search::ScopeVerdict;

use super::{section_title, ImplReport, Report};

pub fn render(report: &Report) -> Result<String, String> {
    let mut junit = Junit::new("tern-sim certify");
    let several = report.implementations.len() > 1;
    for i in &report.implementations {
        for suite in section_suites(report, i, several) {
            junit.add_test_suite(suite);
        }
        if i.simulation.verdict != SimVerdict::NotRun {
            junit.add_test_suite(simulation_suite(report, i, several));
        }
        if !i.exploration.scopes.is_empty() {
            junit.add_test_suite(exploration_suite(i, several));
        }
    }
    // Names, messages and descriptions come from the implementation and
    // the input: a CI page shows them as they are, so no bidi or other
    // control reaches it raw. The XML's own markup is plain ASCII.
    junit
        .to_string()
        .map(|xml| crate::escape::multiline(&xml).into_owned())
        .map_err(|e| e.to_string())
}

/// One suite per seed section of an implementation's cases, one test per
/// case.
fn section_suites(report: &Report, i: &ImplReport, several: bool) -> Vec<TestSuite> {
    let mut suites = Vec::new();
    let mut sections: Vec<u8> = i.cases.iter().map(|c| c.section).collect();
    sections.sort_unstable();
    sections.dedup();
    for s in sections {
        let name = if several {
            format!("{}: {}", i.label, section_title(s))
        } else {
            section_title(s).to_owned()
        };
        let mut suite = TestSuite::new(name);
        for c in i.cases.iter().filter(|c| c.section == s) {
            let mut status = match c.status {
                Status::Pass => TestCaseStatus::success(),
                Status::NotApplicable => {
                    let mut st = TestCaseStatus::skipped();
                    st.set_message(format!("needs {}", c.unclaimed.join(", ")));
                    st
                }
                Status::Error => TestCaseStatus::non_success(NonSuccessKind::Error),
                _ => TestCaseStatus::non_success(NonSuccessKind::Failure),
            };
            if let Some(f) = &c.failure {
                let clause = c
                    .clauses
                    .first()
                    .map(|cl| format!("{} \"{}\"", cl.id, cl.sentence))
                    .unwrap_or_default();
                // CI pages show the message first: a failure the last
                // change brought is told from one that was there before.
                let mark = report
                    .case_mark(&i.label, &c.id)
                    .map(|m| format!("[{}] ", m.as_str()))
                    .unwrap_or_default();
                status.set_message(format!("{mark}{}: breaks {clause}", f.check));
                status.set_description(format!(
                    "step {} ({})\nexpected: {}\nactual:   {}\nlevel: {}, outcome: {}",
                    f.step, f.op, f.expected, f.actual, c.level, c.status
                ));
            }
            let mut case = TestCase::new(c.id.clone(), status);
            case.set_classname(format!("tern.{}", c.level));
            suite.add_test_case(case);
        }
        suites.push(suite);
    }
    suites
}

/// The simulation's suite: its runs as one test, and the determinism
/// check as another when there was one.
fn simulation_suite(report: &Report, i: &ImplReport, several: bool) -> TestSuite {
    let mut suite = TestSuite::new(if several {
        format!("{}: simulation", i.label)
    } else {
        "simulation".to_owned()
    });
    if let Some(d) = &i.simulation.durability {
        suite.add_property(Property::new("durability", d.label.clone()));
    }
    let status = match &i.simulation.violation {
        None => TestCaseStatus::success(),
        Some(v) => {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
            st.set_message(format!("{} violated at seed {}", v.invariant, v.seed));
            st.set_description(format!(
                "expected: {}\nactual:   {}\n{}",
                v.expected,
                v.actual,
                v.shorthand.join("\n")
            ));
            st
        }
    };
    suite.add_test_case(TestCase::new(
        format!(
            "{} runs from seed {}",
            report.simulation_budget.seeds, report.simulation_budget.first_seed
        ),
        status,
    ));
    if let Some(d) = &i.simulation.determinism {
        let status = match &d.divergence {
            None => TestCaseStatus::success(),
            Some(v) => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(format!(
                    "nondeterministic: seed {} got two answers to request {}",
                    v.seed, v.request_number
                ));
                st.set_description(format!(
                    "request: {}\nfirst:   {}\nsecond:  {}",
                    v.request, v.first, v.second
                ));
                st
            }
        };
        suite.add_test_case(TestCase::new(
            format!("determinism: {} seed(s) played twice", d.seeds.len()),
            status,
        ));
    }
    suite
}

/// The exploration's suite: one test per scope explored.
fn exploration_suite(i: &ImplReport, several: bool) -> TestSuite {
    let mut suite = TestSuite::new(if several {
        format!("{}: exploration", i.label)
    } else {
        "exploration".to_owned()
    });
    for scope in &i.exploration.scopes {
        let status = match (&i.exploration.violation, scope.verdict) {
            (Some(v), ScopeVerdict::Violation) if v.scope == scope.scope => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(format!(
                    "{} violated in a schedule of {} moves",
                    v.invariant,
                    v.schedule.len()
                ));
                st.set_description(format!(
                    "expected: {}\nactual:   {}\n{}\nreproduce: {}",
                    v.expected,
                    v.actual,
                    v.schedule.join("\n"),
                    v.reproduce
                ));
                st
            }
            (_, ScopeVerdict::Exhausted) => TestCaseStatus::success(),
            _ => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
                st.set_message("not exhausted");
                st
            }
        };
        let mut case = TestCase::new(scope.scope.clone(), status);
        case.set_classname("tern.exploration");
        suite.add_test_case(case);
    }
    suite
}
