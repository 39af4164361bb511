//! What a run or an exploration can reach, named: the situations of the
//! catalogue and the coverage of them, the ways a frame is broken, the
//! shapes of a boast, and what each sent frame tells the catalogue. The
//! simulator generates from these, the explorer and the mutants name them,
//! and reports count them; none of them needs the simulator.

pub mod boast;
pub(crate) mod malformed;
pub(crate) mod reach;
pub mod situations;

/// The identity context of a thread: threads named `side.*` are in the
/// annex, every other in the main context. The scenario names threads so,
/// and the catalogue tells copies in one context from the other by it.
pub fn context_of(thread: &str) -> &'static str {
    if thread.split('.').next() == Some("side") {
        "annex"
    } else {
        "main"
    }
}
