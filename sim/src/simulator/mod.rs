//! The simulator: randomized multi-agent Tern conversations through a faulty
//! network into implementations under test, checked at every operation.

pub(crate) mod crash_cut;
pub mod determinism;
pub mod driver;
pub mod faults;
pub mod happening;
pub mod hunt;
pub(crate) mod network;
pub(crate) mod resolve;
pub mod runner;
pub mod scenario;
pub(crate) mod stats;
pub mod trace;
pub mod workload;
