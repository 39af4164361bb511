//! Exhaustive exploration: every schedule of a small scope (every order of
//! its deliveries and executions, every placement of its faults, every
//! crash point), each move judged against the oracle by the simulator's
//! own rules. docs/explore.md says what "exhausted" proves.

pub mod builtin;
pub(crate) mod moves;
pub mod scope;
pub mod search;
pub(crate) mod subject;
pub mod sweep;
pub mod trace;
mod workers;
