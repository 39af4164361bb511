//! `tern-reports`: renderings of tern-sim's results for people and machines.
//! Reports only read results; they never decide them.

pub mod certify;
pub mod check;
pub mod escape;
pub mod explore;
pub mod run;
pub mod stateful;
