//! The plug-in contract: what an implementation is to the harness
//! (docs/contract.md), what it may use (durable storage and the world), and
//! the same contract as lines over a pipe (docs/protocol.md).

pub(crate) mod error;
pub mod plugin;
pub mod protocol;
pub mod storage;
pub mod world;
