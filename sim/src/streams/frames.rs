//! Splitting a JSON-lines stream into frames with bounded memory.
//!
//! A line longer than the frame limit is never held whole: reading stops
//! buffering at the limit and skips to the next newline, so a flood of bytes
//! without a newline costs at most the limit.

use std::io::{self, BufRead, Read};

use tern_model::wire::MAX_FRAME_BYTES;

/// One line of a stream, without its terminating `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// The line's bytes, as sent (not necessarily UTF-8).
    Bytes { line: usize, bytes: Vec<u8> },
    /// The line was longer than the limit; `len` is its full length.
    Oversized { line: usize, len: usize },
}

impl Frame {
    pub fn line(&self) -> usize {
        match self {
            Frame::Bytes { line, .. } | Frame::Oversized { line, .. } => *line,
        }
    }
}

/// Iterates over the lines of a JSON-lines stream.
pub struct Frames<R> {
    reader: R,
    line: usize,
    limit: usize,
    done: bool,
}

impl<R: BufRead> Frames<R> {
    pub fn new(reader: R) -> Frames<R> {
        Frames::with_limit(reader, MAX_FRAME_BYTES)
    }

    pub fn with_limit(reader: R, limit: usize) -> Frames<R> {
        Frames {
            reader,
            line: 0,
            limit,
            done: false,
        }
    }

    fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        let mut bytes = Vec::new();
        let mut len = 0usize;
        let mut saw_any = false;
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                self.done = true;
                break;
            }
            saw_any = true;
            let (chunk, found_newline) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], true),
                None => (buf, false),
            };
            let room = self.limit.saturating_sub(bytes.len());
            bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
            len += chunk.len();
            let consumed = chunk.len() + usize::from(found_newline);
            self.reader.consume(consumed);
            if found_newline {
                break;
            }
        }
        if !saw_any {
            return Ok(None);
        }
        self.line += 1;
        Ok(Some(if len > self.limit {
            Frame::Oversized {
                line: self.line,
                len,
            }
        } else {
            Frame::Bytes {
                line: self.line,
                bytes,
            }
        }))
    }
}

impl<R: BufRead> Iterator for Frames<R> {
    type Item = io::Result<Frame>;

    fn next(&mut self) -> Option<io::Result<Frame>> {
        if self.done {
            return None;
        }
        self.next_frame().transpose()
    }
}

/// Reads a whole document (one possibly pretty-printed message), refusing to
/// hold more than `limit` bytes. `Ok(Err(len))` reports an oversized document.
pub fn read_document(reader: impl Read, limit: usize) -> io::Result<Result<Vec<u8>, usize>> {
    let mut bytes = Vec::new();
    let mut reader = reader;
    reader
        .by_ref()
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() > limit {
        let rest = io::copy(&mut reader, &mut io::sink())?;
        return Ok(Err(bytes.len() + rest as usize));
    }
    Ok(Ok(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8], limit: usize) -> Vec<Frame> {
        Frames::with_limit(input, limit)
            .collect::<io::Result<Vec<_>>>()
            .expect("in-memory reads do not fail")
    }

    #[test]
    fn splits_lines_and_numbers_them_from_one() {
        let got = frames(b"{}\n\n{\"a\":1}", 100);
        assert_eq!(
            got,
            vec![
                Frame::Bytes {
                    line: 1,
                    bytes: b"{}".to_vec()
                },
                Frame::Bytes {
                    line: 2,
                    bytes: vec![]
                },
                Frame::Bytes {
                    line: 3,
                    bytes: b"{\"a\":1}".to_vec()
                },
            ]
        );
    }

    #[test]
    fn a_final_newline_does_not_make_an_empty_frame() {
        assert_eq!(frames(b"{}\n", 100).len(), 1);
        assert!(frames(b"", 100).is_empty());
    }

    #[test]
    fn oversized_lines_are_reported_with_their_length_and_skipped() {
        let mut input = vec![b'x'; 50];
        input.extend_from_slice(b"\n{}\n");
        // A tiny buffer forces the long line across many fills.
        let reader = io::BufReader::with_capacity(7, &input[..]);
        let got: Vec<Frame> = Frames::with_limit(reader, 10).map(|f| f.unwrap()).collect();
        assert_eq!(
            got,
            vec![
                Frame::Oversized { line: 1, len: 50 },
                Frame::Bytes {
                    line: 2,
                    bytes: b"{}".to_vec()
                },
            ]
        );
    }

    #[test]
    fn a_line_exactly_at_the_limit_is_kept() {
        assert_eq!(
            frames(b"0123456789\n", 10),
            vec![Frame::Bytes {
                line: 1,
                bytes: b"0123456789".to_vec()
            }]
        );
    }

    #[test]
    fn documents_over_the_limit_are_refused_with_their_size() {
        assert_eq!(read_document(&b"12345"[..], 4).unwrap(), Err(5));
        assert_eq!(
            read_document(&b"1234"[..], 4).unwrap(),
            Ok(b"1234".to_vec())
        );
    }
}
