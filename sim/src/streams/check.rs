//! Stateless checking of streams and documents: each frame through the wire
//! layer, with the line it came from.

use tern_model::message::{Act, MessageRef};
use tern_model::wire::{parse_frame, WireError, MAX_FRAME_BYTES};

use crate::streams::frames::Frame;

/// The verdict on one input message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// 1-based line of the input where the message starts.
    pub line: usize,
    pub verdict: Validity,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Validity {
    Valid { act: Act, id: MessageRef },
    Invalid(WireError),
}

impl Checked {
    pub fn is_valid(&self) -> bool {
        matches!(self.verdict, Validity::Valid { .. })
    }

    /// The 1-based line and column of the error in the input, when known.
    pub fn error_location(&self) -> Option<(usize, usize)> {
        match &self.verdict {
            Validity::Invalid(err) => err.position.map(|p| (self.line + p.line - 1, p.column)),
            Validity::Valid { .. } => None,
        }
    }
}

/// Checks one bytes frame starting at `line`.
pub fn check_bytes(line: usize, bytes: &[u8]) -> Checked {
    let verdict = match parse_frame(bytes) {
        Ok(message) => Validity::Valid {
            act: message.act(),
            id: message.id,
        },
        Err(err) => Validity::Invalid(err),
    };
    Checked { line, verdict }
}

/// Checks one line of a JSON-lines stream.
pub fn check_frame(frame: &Frame) -> Checked {
    match frame {
        Frame::Bytes { line, bytes } => check_bytes(*line, bytes),
        Frame::Oversized { line, len } => Checked {
            line: *line,
            verdict: Validity::Invalid(WireError::oversized(*len, MAX_FRAME_BYTES)),
        },
    }
}

/// Checks a whole document read by [`crate::streams::frames::read_document`].
pub fn check_document(document: Result<Vec<u8>, usize>) -> Checked {
    match document {
        Ok(bytes) => check_bytes(1, &bytes),
        Err(len) => Checked {
            line: 1,
            verdict: Validity::Invalid(WireError::oversized(len, MAX_FRAME_BYTES)),
        },
    }
}
