//! Scopes explored one after another: what a certification's exploration
//! part and `tern-sim explore` both do. They differ only in policy, which
//! [`Sweep`] states: whether the first violation ends the sweep, and
//! whether the implementation's claims are known or asked of each scope.

use std::time::{Duration, Instant};

use crate::contract::plugin::{Capability, Implementation};
use crate::corpus::play::identify_as;
use crate::events::{Event, Listener, Work};
use crate::explore::scope::Scope;
use crate::explore::search::{explore, Exploration, Limits, Prepared, ScopeVerdict, Watch};
use crate::judge::compare::RejectNames;

/// A scope explored, and what its counterexample does in words.
#[derive(Debug, Clone)]
pub struct ExploredScope {
    pub id: String,
    pub clauses: Vec<String>,
    pub exploration: Exploration,
    /// The counterexample's moves in words.
    pub shorthand: Vec<String>,
    /// How long the search took.
    pub took: Duration,
}

/// Whether the implementation claims `execute`, which decides whether a
/// scope's executions are explored.
#[derive(Debug, Clone, Copy)]
pub enum Claims {
    /// Known already: a certification identifies the implementation before
    /// its parts run.
    Known(bool),
    /// Asked of the implementation started on each scope's own setup, as
    /// scopes from files may start it as anyone.
    EachScope,
}

/// How a sweep goes.
pub struct Sweep<'a> {
    pub limits: Limits,
    /// Whether reject classes and refusal reasons are compared.
    pub names: RejectNames,
    pub claims: Claims,
    /// Stop at the first scope with a violation (a certification's
    /// verdict needs no more), or explore every scope.
    pub until_first: bool,
    /// Counts of the scope under way, for a display that polls them.
    pub watch: &'a Watch,
}

/// The scopes explored, in order.
#[derive(Debug, Clone)]
pub struct Swept {
    pub scopes: Vec<ExploredScope>,
    /// Whether every scope explored was exhausted and nothing stopped the
    /// sweep.
    pub complete: bool,
}

/// The implementation would not start on a scope's setup, so that scope
/// could not be explored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{scope}: the implementation does not start: {why}")]
pub struct DoesNotStart {
    pub scope: String,
    pub why: String,
}

/// Explores `scopes` in order under `sweep`. `events` hears each scope
/// taken up and each explored; `explored` is handed each scope with what
/// it was prepared as, for whoever saves a counterexample as a trace.
/// `stop` is asked during each search and after each scope.
pub fn sweep<'s>(
    scopes: impl IntoIterator<Item = &'s Scope>,
    implementation: &dyn Implementation,
    sweep: &Sweep<'_>,
    events: &Listener<'_>,
    mut explored: impl FnMut(&Scope, &Prepared, &ExploredScope),
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Swept, DoesNotStart> {
    let mut out = Swept {
        scopes: Vec::new(),
        complete: true,
    };
    for scope in scopes {
        let claims = match sweep.claims {
            Claims::Known(claims) => claims,
            Claims::EachScope => identify_as(implementation, &scope.setup.init())
                .map_err(|why| DoesNotStart {
                    scope: scope.id.clone(),
                    why,
                })?
                .claims(Capability::Execute),
        };
        events(Event::Started {
            worker: 0,
            work: Work::Scope(&scope.id),
        });
        let prepared = Prepared::new(scope, claims);
        let started = Instant::now();
        let exploration = explore(
            &prepared,
            implementation,
            sweep.names,
            sweep.limits,
            sweep.watch,
            stop,
        );
        let took = started.elapsed();
        let shorthand = exploration
            .violation
            .as_ref()
            .map(|ce| prepared.describe_schedule(&ce.schedule))
            .unwrap_or_default();
        out.complete &= exploration.verdict() != ScopeVerdict::NotExhausted;
        let found = exploration.violation.is_some();
        let scope_explored = ExploredScope {
            id: scope.id.clone(),
            clauses: scope.clauses.clone(),
            exploration,
            shorthand,
            took,
        };
        explored(scope, &prepared, &scope_explored);
        events(Event::Scope(&scope_explored));
        out.scopes.push(scope_explored);
        if stop() {
            out.complete = false;
            break;
        }
        if found && sweep.until_first {
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::contract::error::ImplError;
    use crate::contract::plugin::{InitParams, Receiver};
    use crate::contract::storage::Storage;
    use crate::contract::world::AgentWorld;
    use crate::corpus::Corpus;
    use crate::explore::builtin;
    use crate::implementations::mutants::{Mutant, MutantImpl};
    use crate::implementations::reference::ReferenceImpl;

    fn scopes(names: &[&str]) -> Vec<Scope> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let corpus = Corpus::load(&dir).expect("the corpus loads");
        names
            .iter()
            .map(|n| builtin::by_name(n, Some(&corpus)).expect("a built-in scope"))
            .collect()
    }

    fn policy(watch: &Watch, claims: Claims, until_first: bool) -> Sweep<'_> {
        Sweep {
            limits: Limits {
                merge: true,
                sleep_sets: true,
                max_states: 100_000,
                jobs: 1,
                power_loss: false,
            },
            names: RejectNames::default(),
            claims,
            until_first,
            watch,
        }
    }

    /// What a listener heard, in order: `+id` for a scope taken up, `id`
    /// and its verdict for a scope explored.
    fn heard(
        implementation: &dyn Implementation,
        scopes: &[Scope],
        until_first: bool,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> (Vec<String>, Result<Swept, DoesNotStart>) {
        let told = Mutex::new(Vec::new());
        let listener = |e: Event<'_>| match e {
            Event::Started {
                work: Work::Scope(id),
                ..
            } => told.lock().unwrap().push(format!("+{id}")),
            Event::Scope(x) => {
                told.lock()
                    .unwrap()
                    .push(format!("{} {:?}", x.id, x.exploration.verdict()))
            }
            _ => {}
        };
        let watch = Watch::default();
        let mut handed = Vec::new();
        let swept = sweep(
            scopes,
            implementation,
            &policy(&watch, Claims::Known(true), until_first),
            &listener,
            |scope, _, x| handed.push((scope.id.clone(), x.id.clone())),
            stop,
        );
        let told = told.into_inner().unwrap();
        let explored: Vec<String> = told
            .iter()
            .filter(|t| !t.starts_with('+'))
            .cloned()
            .collect();
        assert_eq!(handed.len(), explored.len(), "each scope handed over once");
        assert!(handed.iter().all(|(scope, x)| scope == x));
        (told, swept)
    }

    #[test]
    fn certification_stops_at_the_first_violation_and_explore_goes_on() {
        let scopes = scopes(&["commit-execute-crash", "spoofed-same-id"]);
        let mutant = MutantImpl(
            *Mutant::ALL
                .iter()
                .find(|m| m.name() == "re-executes")
                .unwrap(),
        );
        let (told, swept) = heard(&mutant, &scopes, true, &|| false);
        assert_eq!(
            told,
            ["+commit-execute-crash", "commit-execute-crash Violation"]
        );
        assert!(swept.expect("the claims are known").complete);
        let (told, swept) = heard(&mutant, &scopes, false, &|| false);
        assert_eq!(
            told,
            [
                "+commit-execute-crash",
                "commit-execute-crash Violation",
                "+spoofed-same-id",
                "spoofed-same-id Exhausted"
            ]
        );
        assert_eq!(swept.expect("the claims are known").scopes.len(), 2);
    }

    #[test]
    fn a_stop_ends_the_sweep_incomplete() {
        let scopes = scopes(&["spoofed-same-id", "pending-chain"]);
        let (told, swept) = heard(&ReferenceImpl, &scopes, false, &|| true);
        let swept = swept.expect("the claims are known");
        assert!(!swept.complete);
        assert_eq!(swept.scopes.len(), 1, "{told:?}");
        let (_, swept) = heard(&ReferenceImpl, &scopes, false, &|| false);
        let swept = swept.expect("the claims are known");
        assert!(swept.complete);
        assert_eq!(swept.scopes.len(), 2);
    }

    struct NeverStarts;

    impl Implementation for NeverStarts {
        fn name(&self) -> String {
            "never-starts".into()
        }
        fn start(
            &self,
            _: &InitParams,
            _: Storage,
            _: AgentWorld,
        ) -> Result<Box<dyn Receiver>, ImplError> {
            Err(ImplError::Misbehaved("no".into()))
        }
    }

    /// Asked of each scope, an implementation that does not start is named
    /// with the scope it would not start on, before anything is explored.
    #[test]
    fn claims_asked_of_each_scope_name_the_scope_it_would_not_start_on() {
        let scopes = scopes(&["spoofed-same-id"]);
        let watch = Watch::default();
        let policy = policy(&watch, Claims::EachScope, false);
        let err = sweep(
            &scopes,
            &NeverStarts,
            &policy,
            &|_| {},
            |_, _, _| {},
            &|| false,
        )
        .expect_err("it does not start");
        assert_eq!(err.scope, "spoofed-same-id");
        assert!(err
            .to_string()
            .starts_with("spoofed-same-id: the implementation does not start"));
    }
}
