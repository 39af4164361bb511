//! A plan carried out: each implementation's corpus share, its simulation
//! (a soak where asked, then the determinism check), and its exploration,
//! each part told to a listener as it starts and ends. The command line
//! only draws what it hears and writes the reports; what runs, in which
//! order, and when an interrupt stops it, is decided here.

use std::time::Instant;

use super::{
    check_determinism, run_corpus_with, run_exploration, run_simulation, Certification, CorpusRun,
    ExplorationRun, Plan, SimulationRun, Subject,
};
use crate::contract::plugin::Identity;
use crate::corpus::Case;
use crate::events::{Event, Listener, Part};
use crate::shard::Shard;
use crate::simulator::driver::Jobs;

/// The share of a plan this process carries out: the cases selected, the
/// shard, and how many workers play them.
#[derive(Debug, Clone, Copy)]
pub struct Share<'a> {
    pub cases: &'a [&'a Case],
    pub shard: Shard,
    pub jobs: Jobs,
}

/// Certifies each implementation of `plan` in order. `stop` is polled
/// throughout (an interrupt, a failing machine): the implementation under
/// way then ends with its parts cut short or never run, each marked so,
/// and the implementations after it are not started.
pub fn certify(
    plan: &Plan,
    share: Share<'_>,
    events: &Listener<'_>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Vec<Certification> {
    let mut out = Vec::new();
    for subject in &plan.subjects {
        out.push(certify_one(plan, share, subject, events, stop));
        if stop() {
            break;
        }
    }
    out
}

/// One implementation's parts, in order: the corpus first, since its
/// first start says what the implementation claims, which the
/// simulation and the exploration need.
fn certify_one(
    plan: &Plan,
    share: Share<'_>,
    subject: &Subject,
    events: &Listener<'_>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Certification {
    let part = Telling {
        label: &subject.label,
        events,
    };
    let corpus = part.run(Part::Corpus, share_of_cases(share), share.jobs, || {
        corpus(plan, share, subject, events, stop)
    });
    let identity = corpus.identity.as_ref().ok();
    let simulation = simulation(plan, share, subject, identity, &part, stop);
    let explored = subject.explore.skipped().is_none() && !plan.scopes.is_empty();
    let exploration = part.run(
        Part::Exploration,
        if explored {
            plan.scopes.len() as u64
        } else {
            0
        },
        Jobs::ONE,
        || exploration(plan, share, subject, identity, events, stop),
    );
    Certification {
        label: subject.label.clone(),
        flag: subject.flag.clone(),
        implementation: subject.implementation.name(),
        corpus,
        simulation,
        exploration,
    }
}

/// Tells a part's start and end around it.
struct Telling<'a> {
    label: &'a str,
    events: &'a Listener<'a>,
}

impl Telling<'_> {
    fn run<T>(&self, part: Part, len: u64, jobs: Jobs, work: impl FnOnce() -> T) -> T {
        (self.events)(Event::PartStarted {
            label: self.label,
            part,
            len,
            workers: jobs.0.get(),
        });
        let started = Instant::now();
        let out = work();
        (self.events)(Event::PartEnded {
            label: self.label,
            part,
            took: started.elapsed(),
        });
        out
    }
}

fn share_of_cases(share: Share<'_>) -> u64 {
    share
        .cases
        .iter()
        .filter(|c| share.shard.takes_name(&c.id))
        .count() as u64
}

fn corpus(
    plan: &Plan,
    share: Share<'_>,
    subject: &Subject,
    events: &Listener<'_>,
    stop: &(dyn Fn() -> bool + Sync),
) -> CorpusRun {
    run_corpus_with(
        share.cases,
        share.shard,
        subject.implementation.as_ref(),
        plan.give_up_after,
        share.jobs,
        events,
        stop,
    )
}

/// The simulation (a soak when the plan says so), then the determinism
/// check if asked for. A part the interrupt never let start is due, so
/// it is incomplete.
fn simulation(
    plan: &Plan,
    share: Share<'_>,
    subject: &Subject,
    identity: Option<&Identity>,
    part: &Telling<'_>,
    stop: &(dyn Fn() -> bool + Sync),
) -> SimulationRun {
    let (budget, imp) = (&plan.budget, subject.implementation.as_ref());
    let len = if stop() { 0 } else { budget.share() };
    let mut sim = part.run(Part::Simulation, len, share.jobs, || {
        if stop() {
            return SimulationRun::never_ran(budget, imp);
        }
        let played = match plan.soak {
            Some(soak) => soak.played(budget, Instant::now()),
            None => budget.clone(),
        };
        run_simulation(&played, imp, share.jobs, identity, part.events, stop)
    });
    if let Some(sample) = plan.determinism.filter(|_| !stop()) {
        part.run(Part::Determinism, 0, Jobs::ONE, || {
            check_determinism(&mut sim, imp, sample, stop)
        });
    }
    if let Some(soak) = plan.soak {
        soak.judge(&mut sim, budget);
    }
    sim
}

/// The exploration of the plan's scopes, where it is asked for.
fn exploration(
    plan: &Plan,
    share: Share<'_>,
    subject: &Subject,
    identity: Option<&Identity>,
    events: &Listener<'_>,
    stop: &(dyn Fn() -> bool + Sync),
) -> ExplorationRun {
    let explore = subject.explore;
    if explore.skipped().is_some() || stop() {
        return ExplorationRun::never_ran(explore);
    }
    run_exploration(
        &plan.scopes,
        share.shard,
        subject.implementation.as_ref(),
        identity,
        plan.budget.names,
        share.jobs,
        events,
        stop,
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::certify::{budget, subjects, Explore, SimVerdict};
    use crate::corpus::{Corpus, Level};
    use crate::implementations::reference::ReferenceImpl;

    fn scenarios() -> Corpus {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        Corpus::load(&dir).expect("the corpus loads")
    }

    fn subject(
        label: &str,
        implementation: Box<dyn crate::contract::plugin::Implementation>,
    ) -> Subject {
        Subject {
            label: label.to_owned(),
            flag: String::new(),
            explore: Explore::LeftOut,
            implementation,
        }
    }

    fn plan(subjects_: Vec<Subject>, seeds: u64) -> Plan {
        Plan {
            subjects: subjects(subjects_).unwrap(),
            level: Level::Profile,
            budget: budget(seeds, 1, 3, 40, Level::Profile, Shard::WHOLE),
            soak: None,
            scopes: Vec::new(),
            give_up_after: 10,
            determinism: Some(2),
        }
    }

    /// Every part of every implementation is told started and ended, in
    /// order, each part's pieces between its two ends.
    #[test]
    fn each_part_is_told_in_order_around_its_work() {
        let corpus = scenarios();
        let cases: Vec<&Case> = corpus.cases.iter().take(5).collect();
        let plan = plan(
            vec![
                subject("one", Box::new(ReferenceImpl)),
                subject("two", Box::new(ReferenceImpl)),
            ],
            3,
        );
        let heard = Mutex::new(Vec::new());
        let listener = |e: Event<'_>| {
            let line = match e {
                Event::PartStarted {
                    label, part, len, ..
                } => {
                    format!("{label} {} {len}", part.name())
                }
                Event::PartEnded { label, part, .. } => format!("{label} {} end", part.name()),
                Event::Case(_) => "case".to_owned(),
                Event::Run { .. } => "run".to_owned(),
                _ => return,
            };
            heard.lock().unwrap().push(line);
        };
        let share = Share {
            cases: &cases,
            shard: Shard::WHOLE,
            jobs: Jobs::ONE,
        };
        let out = certify(&plan, share, &listener, &|| false);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].simulation.verdict(), SimVerdict::Clean);
        assert!(out[0].simulation.determinism.is_some());
        let mut expected = Vec::new();
        for label in ["one", "two"] {
            expected.push(format!("{label} corpus 5"));
            expected.extend(std::iter::repeat_n("case".to_owned(), 5));
            expected.push(format!("{label} corpus end"));
            expected.push(format!("{label} simulation 3"));
            let runs = out
                .iter()
                .find(|c| c.label == label)
                .unwrap()
                .simulation
                .runs;
            expected.extend(std::iter::repeat_n("run".to_owned(), runs as usize));
            expected.push(format!("{label} simulation end"));
            expected.push(format!("{label} determinism 0"));
            expected.push(format!("{label} determinism end"));
            expected.push(format!("{label} exploration 0"));
            expected.push(format!("{label} exploration end"));
        }
        assert_eq!(heard.into_inner().unwrap(), expected);
    }

    /// An interrupt before the first implementation ends it with every
    /// part due and not run, and the next implementation never starts.
    #[test]
    fn an_interrupt_stops_at_the_implementation_under_way() {
        let corpus = scenarios();
        let cases: Vec<&Case> = corpus.cases.iter().take(3).collect();
        let plan = plan(
            vec![
                subject("a", Box::new(ReferenceImpl)),
                subject("b", Box::new(ReferenceImpl)),
            ],
            5,
        );
        let share = Share {
            cases: &cases,
            shard: Shard::WHOLE,
            jobs: Jobs::ONE,
        };
        let out = certify(&plan, share, &crate::events::quiet, &|| true);
        assert_eq!(out.len(), 1);
        assert!(!out[0].corpus.complete);
        assert_eq!(out[0].simulation.verdict(), SimVerdict::Incomplete);
        assert!(out[0].simulation.determinism.is_none());
    }
}
