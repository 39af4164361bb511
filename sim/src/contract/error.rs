//! How a call into an implementation can fail. Its own module, so that
//! storage and the world (which fail the same way when a crash fires) need
//! nothing else of the plug-in contract.

use std::fmt;

/// How an IUT call can fail. `Crashed` is the harness's own doing: storage or
/// the world refused to go on because a crash was scheduled at that point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImplError {
    Crashed,
    /// The implementation misbehaved (protocol breach, garbage...).
    Misbehaved(String),
    /// The implementation did not answer within its time limit.
    TimedOut(String),
}

impl fmt::Display for ImplError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ImplError::Crashed => f.write_str("crashed (injected)"),
            ImplError::Misbehaved(why) | ImplError::TimedOut(why) => {
                write!(f, "misbehaved: {why}")
            }
        }
    }
}

impl std::error::Error for ImplError {}
