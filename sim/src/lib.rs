//! `tern-harness`: the part of tern-sim that touches the outside world on the
//! model's behalf: reading frames from streams and files, running the
//! model's checks over them, and simulating multi-agent runs with faults
//! against implementations plugged in through [`plugin`].

pub mod adapter;
pub mod agent;
pub mod certify;
pub mod check;
pub mod child_io;
pub mod compare;
pub mod corpus;
pub mod exit_guard;
pub mod frames;
pub mod mutants;
pub mod plugin;
pub mod protocol;
pub mod reaper;
pub mod reference;
pub mod replies;
pub mod sim;
pub mod stateful;
pub mod storage;
pub mod world;
