//! Why a frame is not a valid Tern 0.1 message, said precisely enough that a
//! person can find the byte and a program can branch on the class.

use std::fmt;

/// The stable classes of stateless rejection, in the order they are decided:
/// a frame that is not strict JSON is never asked its version, and a frame of
/// another version is never asked about its envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorClass {
    /// Not Tern's strict JSON: bad UTF-8, syntax, duplicate keys, non-finite
    /// numbers, excessive nesting, oversized frames, trailing content.
    Parse,
    /// `tern` names a version other than 0.1.
    Version,
    /// An envelope field (or the top-level `evidence`) is missing, unknown,
    /// mistyped or breaks a rule.
    Envelope,
    /// The body does not fit its act's schema.
    Body,
}

impl ErrorClass {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Parse => "parse",
            ErrorClass::Version => "version",
            ErrorClass::Envelope => "envelope",
            ErrorClass::Body => "body",
        }
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A 1-based line and byte column within the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// An RFC 6901 JSON pointer to the offending member (`""` is the whole frame).
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct Pointer(String);

impl Pointer {
    pub fn root() -> Pointer {
        Pointer(String::new())
    }

    /// A pointer as [`Pointer::as_str`] wrote it, read back from a
    /// snapshot (crate::binary).
    pub(crate) fn from_written(text: &str) -> Pointer {
        Pointer(text.to_owned())
    }

    /// Builds a pointer from unescaped keys, e.g. `Pointer::of(&["body", "question"])`.
    pub fn of(keys: &[&str]) -> Pointer {
        let mut p = Pointer::root();
        for k in keys {
            p.push_key(k);
        }
        p
    }

    pub fn push_key(&mut self, key: &str) {
        self.0.push('/');
        for c in key.chars() {
            match c {
                '~' => self.0.push_str("~0"),
                '/' => self.0.push_str("~1"),
                c => self.0.push(c),
            }
        }
    }

    pub fn push_index(&mut self, index: usize) {
        use fmt::Write;
        let _ = write!(self.0, "/{index}");
    }

    /// Extends the pointer along the place `serde_path_to_error` reports
    /// for a deserialization error (a segment it could not name is left
    /// out, so the pointer names the nearest member it knows).
    pub fn push_path(&mut self, path: &serde_path_to_error::Path) {
        for segment in path.iter() {
            match segment {
                serde_path_to_error::Segment::Seq { index } => self.push_index(*index),
                serde_path_to_error::Segment::Map { key } => self.push_key(key),
                serde_path_to_error::Segment::Enum { variant } => self.push_key(variant),
                serde_path_to_error::Segment::Unknown => {}
            }
        }
    }

    pub fn key(mut self, key: &str) -> Pointer {
        self.push_key(key);
        self
    }

    pub fn index(mut self, index: usize) -> Pointer {
        self.push_index(index);
        self
    }

    /// `true` for pointers strictly below `ancestor`.
    pub fn is_inside(&self, ancestor: &Pointer) -> bool {
        self.0.starts_with(&ancestor.0) && self.0.as_bytes().get(ancestor.0.len()) == Some(&b'/')
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A stateless rejection: class, where, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct WireError {
    pub class: ErrorClass,
    pub pointer: Pointer,
    pub message: String,
    /// Where in the frame reading stopped, when the reader knows.
    pub position: Option<Position>,
}

impl WireError {
    /// A frame refused for its size before parsing (profile rule P-JSON-7).
    pub fn oversized(len: usize, limit: usize) -> WireError {
        WireError::new(
            ErrorClass::Parse,
            Pointer::root(),
            format!("frame of {len} bytes exceeds the limit of {limit} bytes"),
        )
    }

    pub fn new(class: ErrorClass, pointer: Pointer, message: impl Into<String>) -> WireError {
        WireError {
            class,
            pointer,
            message: message.into(),
            position: None,
        }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} error", self.class)?;
        if let Some(p) = self.position {
            write!(f, " at line {} column {}", p.line, p.column)?;
        }
        if self.pointer.as_str().is_empty() {
            write!(f, " (top level): {}", self.message)
        } else {
            write!(f, " ({}): {}", self.pointer, self.message)
        }
    }
}
