//! Rules that judge an implementation's answers, the same for the
//! simulator and the corpus player: the invariants and how a disagreement
//! with the oracle is named, how events and executions are compared, and
//! what every delivery must respect whatever the oracle expects (crashes
//! exactly as scheduled, no effect, no reply to a rejected frame, no ACK of
//! an ACK).

pub mod compare;
pub(crate) mod delivery;
pub mod failure;
pub mod invariants;
pub(crate) mod no_effect;
pub(crate) mod oracle;
pub(crate) mod replies;
pub(crate) mod under_test;
pub(crate) mod views;
