//! The stream checkers behind `tern-sim check`: frames split from a
//! JSON-lines stream with bounded memory, checked one by one or through a
//! ledger.

pub mod check;
pub mod frames;
pub mod stateful;
