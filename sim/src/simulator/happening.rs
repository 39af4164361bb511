//! What happened in a recorded run, as data rather than text: who sent
//! which message, when each copy arrived and with what outcome, and every
//! fault. Reports draw it as a sequence diagram; the shorthand notes say
//! the same for people reading a terminal.

/// One event of a recorded run, at virtual time `at` (milliseconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Happening {
    /// A message put on the network. `index` identifies it in later events.
    Send {
        at: u64,
        index: usize,
        from: String,
        to: Vec<String>,
        gloss: String,
        frame: Vec<u8>,
        spoofed: bool,
    },
    /// A copy reached `to`, which reported `outcome`.
    Deliver {
        at: u64,
        index: usize,
        to: String,
        outcome: String,
    },
    /// A copy to `to` was lost; the sender retransmits.
    Lost { at: u64, index: usize, to: String },
    /// A crash, restart, partition or scheduled crash; `agent` is the one it hits.
    Fault {
        at: u64,
        agent: Option<String>,
        text: String,
    },
    /// An execution and its result.
    Execute {
        at: u64,
        agent: String,
        text: String,
    },
    /// The violation that ended the run.
    Violation {
        at: u64,
        agent: Option<String>,
        text: String,
    },
}
