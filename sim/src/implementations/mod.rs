//! Receivers that honour the contract: the reference, its mutants, the
//! adapter that runs an implementation in another process (with the
//! process plumbing it needs), and `tern-sim agent`, the reference served
//! over the protocol.

pub mod adapter;
pub mod affinity;
pub mod agent;
pub mod child_io;
pub mod exit_guard;
pub mod machine;
pub mod mutants;
pub mod reaper;
pub mod reference;
pub mod state_dirs;
pub mod stderr_log;
