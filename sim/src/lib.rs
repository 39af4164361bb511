//! `tern-harness`: the part of tern-sim that touches the outside world on the
//! model's behalf: reading frames from streams and files, running the
//! model's checks over them, and simulating multi-agent runs with faults
//! against implementations plugged in through [`contract`].
//!
//! The folders follow the data flow, one role each: the plug-in
//! [`contract`]; the [`implementations`] that honour it (the reference, the
//! mutants, the subprocess adapter and `tern-sim agent`); the rules that
//! [`judge`] an implementation's answers, shared by the [`simulator`] and
//! the [`corpus`] player; [`certify`], which runs both; the mutant
//! [`zoo`] set against both, which proves the harness's power; and the
//! [`streams`] checkers behind `tern-sim check`. The seeds, cases and
//! mutants all run on one ordered worker [`pool`], and the seeds, cases and
//! scopes tell what they do as one typed stream of [`events`]. A [`shard`]
//! is one share of any of that work, for `tern-sim merge` to put back
//! together. The [`shorthand`] draws
//! frames in one line each, for every report. [`conformance`] offers the
//! simulator to a Rust implementation's own `cargo test`, as a proptest
//! state machine.

pub mod catalogue;
pub mod certify;
pub mod conformance;
pub mod contract;
pub mod corpus;
pub mod events;
pub mod explore;
pub mod implementations;
pub mod judge;
pub(crate) mod pool;
pub mod shard;
pub mod shorthand;
pub mod simulator;
pub mod streams;
pub mod zoo;
