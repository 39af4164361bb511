//! The simulator: randomized multi-agent Tern conversations through a faulty
//! network into implementations under test, checked at every operation.

pub mod crash_cut;
pub mod determinism;
pub mod driver;
pub mod faults;
pub mod happening;
pub(crate) mod network;
pub mod resolve;
pub mod runner;
pub mod scenario;
pub mod stats;
pub mod trace;
pub mod workload;
