//! The one command that plays a certification's failure again, for each
//! kind of failure. Each names the implementation with `flag`, what a
//! command line adds to name it (` --mutant x`, ` --impl 'c'`, or nothing
//! for the reference; see [`super::Subject::flag`]).

use crate::corpus::Level;

/// Corpus case `id` on its own.
pub fn case(id: &str, level: Level, flag: &str) -> String {
    format!(
        "tern-sim certify --only {id} --seeds 0 --no-explore{}{flag}",
        at_level(level)
    )
}

/// Simulation run `seed` on its own, which `run` shrinks and saves as a
/// trace for `replay`. A `core` certification ignores names, which only
/// certify can do, so its run is played through certify.
pub fn seed(seed: u64, level: Level, agents: usize, steps: usize, flag: &str) -> String {
    match level {
        Level::Profile => format!(
            "tern-sim run --seed {seed} --seeds 1 --agents {agents} --steps {steps} --faults{flag}"
        ),
        Level::Core => format!(
            "tern-sim certify --seed {seed} --seeds 1 --agents {agents} --steps {steps} --no-explore{}{flag}",
            at_level(level)
        ),
    }
}

/// The shrunk run saved at `trace` (already quoted for a shell), played
/// again exactly.
pub fn replay(trace: &str, flag: &str) -> String {
    format!("tern-sim replay {trace}{flag}")
}

/// The built-in scope `id`, explored again.
pub fn scope(id: &str, flag: &str) -> String {
    format!("tern-sim explore {id}{flag}")
}

/// What a command adds for the level certified at: `profile` is the
/// default.
fn at_level(level: Level) -> &'static str {
    match level {
        Level::Core => " --level core",
        Level::Profile => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_is_played_alone_at_its_level() {
        assert_eq!(
            case("json.comments-rejected", Level::Profile, " --mutant m"),
            "tern-sim certify --only json.comments-rejected --seeds 0 --no-explore --mutant m"
        );
        assert_eq!(
            case("x", Level::Core, ""),
            "tern-sim certify --only x --seeds 0 --no-explore --level core"
        );
    }

    #[test]
    fn a_seed_at_core_is_played_through_certify_which_alone_ignores_names() {
        assert_eq!(
            seed(7, Level::Profile, 5, 200, ""),
            "tern-sim run --seed 7 --seeds 1 --agents 5 --steps 200 --faults"
        );
        assert_eq!(
            seed(7, Level::Core, 3, 50, " --impl 'a b'"),
            "tern-sim certify --seed 7 --seeds 1 --agents 3 --steps 50 --no-explore --level core --impl 'a b'"
        );
    }

    #[test]
    fn a_trace_is_replayed_and_a_scope_explored() {
        assert_eq!(
            replay("r/traces/t.jsonl", " --mutant m"),
            "tern-sim replay r/traces/t.jsonl --mutant m"
        );
        assert_eq!(scope("renewal", ""), "tern-sim explore renewal");
    }
}
