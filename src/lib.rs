//! `tern-sim`: the conformance harness and simulator for Tern 0.1.
//!
//! The binary's commands live in [`cli`]; the work is done by the
//! `tern-model` (wire and model), `tern-harness` (driving checks) and
//! `tern-reports` (rendering) crates, in that direction of data flow.

pub mod cli;

pub use tern_harness as harness;
pub use tern_model as model;
pub use tern_reports as reports;
