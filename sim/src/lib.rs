//! `tern-harness`: the part of tern-sim that touches the outside world on the
//! model's behalf: reading frames from streams and files, and running the
//! model's checks over them.

pub mod check;
pub mod frames;
pub mod stateful;
