//! The wire layer: strict JSON frames in, typed messages or precise errors out.

mod envelope;
mod error;
mod parse;

pub use error::{ErrorClass, Pointer, Position, WireError};
pub use parse::{message_of, parse_body, parse_frame, MAX_DEPTH, MAX_FRAME_BYTES};
