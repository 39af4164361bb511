//! Every rule that turns what a certification ran into its verdict, in one
//! place: the verdict of a simulation or an exploration, the level a
//! case's outcome counts at, the levels reached, and why a run cut short
//! certifies nothing. Reports render these values and `tern-sim merge`
//! combines them; neither judges again.

use std::collections::BTreeMap;

use super::{CorpusRun, ExplorationRun, SimulationRun};
use crate::corpus::play::{Status, StepFailure};
use crate::corpus::{Case, Level};

/// Reports write it by its name (`clean`, `not_run`...), and read only
/// those names back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SimVerdict {
    Clean,
    Violation,
    /// What a report holds before anything is judged.
    #[default]
    NotRun,
    Incomplete,
    /// The same seed, played twice on fresh state, got different answers
    /// (`--check-determinism`): whatever else was found cannot be
    /// reproduced, so this verdict comes before a violation.
    Nondeterministic,
}

impl SimVerdict {
    pub const ALL: [SimVerdict; 5] = [
        SimVerdict::Clean,
        SimVerdict::Violation,
        SimVerdict::NotRun,
        SimVerdict::Incomplete,
        SimVerdict::Nondeterministic,
    ];

    /// This verdict, or [`SimVerdict::Nondeterministic`] when a
    /// determinism check found two answers to one request.
    pub fn unless_nondeterministic(self, diverged: bool) -> SimVerdict {
        if diverged {
            SimVerdict::Nondeterministic
        } else {
            self
        }
    }

    /// A part that was skipped says so first; then a violation, found
    /// even in a part cut short; then whether it ran to its end.
    pub fn of(skipped: bool, violation: bool, complete: bool) -> SimVerdict {
        if skipped {
            SimVerdict::NotRun
        } else if violation {
            SimVerdict::Violation
        } else if !complete {
            SimVerdict::Incomplete
        } else {
            SimVerdict::Clean
        }
    }

    pub fn from_name(name: &str) -> Option<SimVerdict> {
        SimVerdict::ALL.into_iter().find(|v| v.as_str() == name)
    }

    /// The name as prose reads it: `not run`.
    pub fn words(self) -> &'static str {
        match self {
            SimVerdict::NotRun => "not run",
            other => other.as_str(),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SimVerdict::Clean => "clean",
            SimVerdict::Violation => "violation",
            SimVerdict::NotRun => "not_run",
            SimVerdict::Incomplete => "incomplete",
            SimVerdict::Nondeterministic => "nondeterministic",
        }
    }
}

/// The level a case's outcome counts at. A failure that differs from the
/// model only in a reject class or refusal reason counts at `profile`
/// whatever the case's level: the receiver did what the seed asks, under
/// another name, and those names are the profile's.
pub fn counts_at(case_level: Level, failure: Option<&StepFailure>) -> Level {
    match failure {
        Some(f) if f.names_only() => Level::Profile,
        _ => case_level,
    }
}

/// How much of the work a certification covered. Core conformance needs
/// every case of the corpus to have run: a selection (`--only`) or an
/// interrupted run reports its results but certifies nothing
/// (docs/certify.md section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    Whole,
    /// Only some cases of the corpus were selected.
    Selection,
    /// A signal stopped the run before its end.
    Interrupted,
}

impl Coverage {
    /// An interrupt is said before a selection: it is the reason that
    /// holds whatever was selected.
    pub fn of(selection: bool, interrupted: bool) -> Coverage {
        if interrupted {
            Coverage::Interrupted
        } else if selection {
            Coverage::Selection
        } else {
            Coverage::Whole
        }
    }

    /// Whether the run certifies nothing, whatever its results.
    pub fn cut_short(self) -> bool {
        self != Coverage::Whole
    }
}

/// What a certification concludes for one implementation: the verdict
/// every report prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// Certified at the level asked for.
    pub certified: bool,
    /// The highest level certified.
    pub level: Option<Level>,
    /// The corpus found it conformant at `core`...
    pub core: bool,
    /// ...and at `profile`.
    pub profile: bool,
    pub simulation: SimVerdict,
    pub exploration: SimVerdict,
}

/// Counts of outcomes at one level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub counts: BTreeMap<Status, usize>,
}

impl Tally {
    pub fn get(&self, s: Status) -> usize {
        self.counts.get(&s).copied().unwrap_or(0)
    }

    pub fn failures(&self) -> usize {
        self.counts
            .iter()
            .filter(|(s, _)| s.is_failure())
            .map(|(_, n)| n)
            .sum()
    }
}

/// The conformance levels an implementation reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conformance {
    /// No core case failed (and the corpus ran to the end).
    pub core: bool,
    /// Nor any profile case.
    pub profile: bool,
    pub simulation: SimVerdict,
    pub exploration: SimVerdict,
    pub by_level: BTreeMap<Level, Tally>,
}

impl Conformance {
    pub fn of(
        cases: &[&Case],
        corpus: &CorpusRun,
        sim: &SimulationRun,
        exploration: &ExplorationRun,
    ) -> Conformance {
        let level: BTreeMap<&str, Level> = cases.iter().map(|c| (c.id.as_str(), c.level)).collect();
        let outcomes = corpus.cases.iter().map(|run| {
            let case_level = level.get(run.id.as_str()).copied().unwrap_or(Level::Core);
            (counts_at(case_level, run.failure.as_ref()), run.status)
        });
        Conformance::of_outcomes(
            outcomes,
            corpus.complete && corpus.identity.is_ok(),
            sim.verdict(),
            exploration.verdict(),
        )
    }

    /// The levels reached from each case's outcome and the level it counts
    /// at; `whole` says the corpus ran to its end on a started
    /// implementation. `tern-sim merge` judges the shards' cases with it.
    pub fn of_outcomes(
        outcomes: impl IntoIterator<Item = (Level, Status)>,
        whole: bool,
        simulation: SimVerdict,
        exploration: SimVerdict,
    ) -> Conformance {
        let mut by_level: BTreeMap<Level, Tally> = BTreeMap::new();
        for (l, status) in outcomes {
            *by_level
                .entry(l)
                .or_default()
                .counts
                .entry(status)
                .or_default() += 1;
        }
        let clean = |l: Level| by_level.get(&l).is_none_or(|t| t.failures() == 0);
        let core = whole && clean(Level::Core);
        Conformance {
            core,
            profile: core && clean(Level::Profile),
            simulation,
            exploration,
            by_level,
        }
    }

    /// Certified at `level`: that level's cases all pass or do not apply,
    /// and neither the simulation nor the exploration found anything (a
    /// simulation that could not run for want of `execute`, or an
    /// exploration left out, does not block, and the report says so).
    pub fn certified(&self, level: Level) -> bool {
        let cases = match level {
            Level::Core => self.core,
            Level::Profile => self.profile,
        };
        let clean = |v: SimVerdict| matches!(v, SimVerdict::Clean | SimVerdict::NotRun);
        cases && clean(self.simulation) && clean(self.exploration)
    }

    /// The highest level certified, if any.
    pub fn level(&self) -> Option<Level> {
        [Level::Profile, Level::Core]
            .into_iter()
            .find(|l| self.certified(*l))
    }

    /// The verdict at the level `asked` for: a run cut short certifies
    /// nothing and reaches no level, though its simulation and
    /// exploration verdicts stand for what ran.
    pub fn judge(&self, asked: Level, coverage: Coverage) -> Judgement {
        let whole = !coverage.cut_short();
        Judgement {
            certified: whole && self.certified(asked),
            level: self.level().filter(|_| whole),
            core: whole && self.core,
            profile: whole && self.profile,
            simulation: self.simulation,
            exploration: self.exploration,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::play::Check;

    fn failure(names_only: bool) -> StepFailure {
        StepFailure {
            step: 1,
            op: "deliver",
            check: Check::Expectation { names_only },
            expected: "rejected (body)".to_owned(),
            actual: "rejected (envelope)".to_owned(),
        }
    }

    /// Conformance over one core and one profile case, with a clean
    /// simulation and exploration.
    fn conformance(core: Status, profile: Status, whole: bool) -> Conformance {
        Conformance::of_outcomes(
            [(Level::Core, core), (Level::Profile, profile)],
            whole,
            SimVerdict::Clean,
            SimVerdict::Clean,
        )
    }

    #[test]
    fn a_failure_on_names_only_counts_at_profile() {
        assert_eq!(counts_at(Level::Core, Some(&failure(true))), Level::Profile);
        assert_eq!(counts_at(Level::Core, Some(&failure(false))), Level::Core);
        assert_eq!(counts_at(Level::Core, None), Level::Core);
        assert_eq!(counts_at(Level::Profile, None), Level::Profile);
    }

    #[test]
    fn a_violation_is_found_even_in_a_part_cut_short_but_not_in_one_skipped() {
        assert_eq!(SimVerdict::of(true, true, false), SimVerdict::NotRun);
        assert_eq!(SimVerdict::of(false, true, false), SimVerdict::Violation);
        assert_eq!(SimVerdict::of(false, false, false), SimVerdict::Incomplete);
        assert_eq!(SimVerdict::of(false, false, true), SimVerdict::Clean);
        assert_eq!(
            SimVerdict::Violation.unless_nondeterministic(true),
            SimVerdict::Nondeterministic
        );
        assert_eq!(
            SimVerdict::Clean.unless_nondeterministic(false),
            SimVerdict::Clean
        );
    }

    #[test]
    fn verdict_names_read_back() {
        for v in SimVerdict::ALL {
            assert_eq!(SimVerdict::from_name(v.as_str()), Some(v));
        }
        assert_eq!(SimVerdict::NotRun.words(), "not run");
    }

    #[test]
    fn levels_follow_the_failures_of_each_level() {
        let c = conformance(Status::Pass, Status::NotApplicable, true);
        assert!(c.core && c.profile);
        assert_eq!(c.level(), Some(Level::Profile));
        let c = conformance(Status::Pass, Status::Fail, true);
        assert!(c.core && !c.profile);
        assert_eq!(c.level(), Some(Level::Core));
        // Profile conformance needs core conformance.
        let c = conformance(Status::Error, Status::Pass, true);
        assert!(!c.core && !c.profile);
        assert_eq!(c.level(), None);
        // A corpus that did not run whole reaches no level.
        let c = conformance(Status::Pass, Status::Pass, false);
        assert!(!c.core);
        assert_eq!(c.by_level[&Level::Core].get(Status::Pass), 1);
        assert_eq!(
            conformance(Status::FalseClaim, Status::Pass, true).by_level[&Level::Core].failures(),
            1
        );
    }

    #[test]
    fn a_simulation_not_run_does_not_block_but_an_incomplete_one_does() {
        let mut c = conformance(Status::Pass, Status::Pass, true);
        c.simulation = SimVerdict::NotRun;
        c.exploration = SimVerdict::NotRun;
        assert!(c.certified(Level::Profile));
        for blocking in [
            SimVerdict::Violation,
            SimVerdict::Incomplete,
            SimVerdict::Nondeterministic,
        ] {
            let mut s = c.clone();
            s.simulation = blocking;
            assert!(!s.certified(Level::Core), "{}", blocking.as_str());
            let mut x = c.clone();
            x.exploration = blocking;
            assert!(!x.certified(Level::Core), "{}", blocking.as_str());
        }
    }

    #[test]
    fn a_run_cut_short_certifies_nothing_but_keeps_its_part_verdicts() {
        assert_eq!(Coverage::of(true, true), Coverage::Interrupted);
        assert_eq!(Coverage::of(true, false), Coverage::Selection);
        assert_eq!(Coverage::of(false, false), Coverage::Whole);
        let mut c = conformance(Status::Pass, Status::Pass, true);
        c.simulation = SimVerdict::Incomplete;
        let whole = c.judge(Level::Core, Coverage::Whole);
        assert!(!whole.certified && whole.core && whole.profile && whole.level.is_none());
        c.simulation = SimVerdict::Clean;
        let whole = c.judge(Level::Core, Coverage::Whole);
        assert!(whole.certified && whole.level == Some(Level::Profile));
        for cut in [Coverage::Selection, Coverage::Interrupted] {
            let j = c.judge(Level::Core, cut);
            assert!(!j.certified && !j.core && !j.profile && j.level.is_none());
            assert_eq!(j.simulation, SimVerdict::Clean);
        }
    }
}
