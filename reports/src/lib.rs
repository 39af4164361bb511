//! `tern-reports`: renderings of tern-sim's results for people and machines.
//! Reports only read results; they never decide them. The merge of
//! [`shards`] judges the shards' results put together with the harness's
//! own rules, as one machine would have.

pub mod certify;
pub mod check;
pub mod determinism;
pub mod differences;
pub mod escape;
pub mod explore;
pub mod run;
pub mod shards;
pub mod site;
pub mod stateful;
