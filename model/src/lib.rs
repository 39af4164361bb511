//! `tern-model`: what a Tern 0.1 message is, decided exactly.
//!
//! This crate is pure on purpose: no I/O, no clock, no randomness. Every other
//! part of tern-sim (the harness, the checkers, the reports) judges
//! implementations against the answers given here, so those answers must be a
//! function of their inputs alone.
//!
//! * [`wire`] turns raw frame bytes into a typed [`Message`] or a precise
//!   [`WireError`] (strict JSON, then version, envelope and body).
//! * [`message`] holds the typed vocabulary: acts, bodies, claims, evidence,
//!   and the newtypes for names and references that make malformed values
//!   unrepresentable once parsed.
//! * [`json`] is the strict JSON value used where the profile allows free-form
//!   data (`extensions`, a REVISE's `replacement`), with the structural
//!   equality that deduplication relies on.
//! * [`canonical`] writes any value as canonical JSON, the form views show
//!   messages in.

pub(crate) mod binary;
pub mod canonical;
pub mod json;
pub mod ledger;
pub mod message;
pub mod wire;

pub use binary::StateError;
pub use message::{Act, Body, Message};
pub use wire::{parse_frame, ErrorClass, Pointer, WireError};
