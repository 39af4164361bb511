//! Rules that judge an implementation's answers against the oracle's, the
//! same for the simulator and the corpus player: how events and executions
//! are compared, and which frames a receiver may send of its own accord.

pub mod compare;
pub mod replies;
