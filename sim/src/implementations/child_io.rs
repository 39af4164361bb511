//! Talking to a child through its pipes without ever waiting longer than a
//! deadline: writes and reads go through nonblocking descriptors and
//! `poll(2)`, and the child's output is split into lines, giving up on a
//! line as soon as it passes the limit rather than waiting for a newline
//! that may never come.

use std::io::{self, Read};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

/// Makes our end of a pipe nonblocking (the child's end is a separate open
/// file and keeps its own flags).
pub fn set_nonblocking(fd: &impl AsRawFd) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own, reading then setting its flags.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Why a bounded write did not complete.
#[derive(Debug, thiserror::Error)]
pub enum WriteFailure {
    /// The child did not take the bytes in time; `written` of them went in.
    #[error("timed out after {written} bytes")]
    TimedOut { written: usize },
    /// The pipe is closed (EPIPE) or otherwise failed.
    #[error("{0}")]
    Closed(io::Error),
}

/// Writes all of `bytes` to the nonblocking `fd`, or fails at `deadline`.
pub fn write_all_by(fd: RawFd, bytes: &[u8], deadline: Instant) -> Result<(), WriteFailure> {
    let mut written = 0;
    while written < bytes.len() {
        let rest = &bytes[written..];
        // SAFETY: writing from a live slice to a descriptor we own.
        let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
        if n > 0 {
            written += n as usize;
            continue;
        }
        let error = io::Error::last_os_error();
        match error.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(WriteFailure::TimedOut { written });
                }
                // Round up, so that a sub-millisecond rest is not a busy loop.
                let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
                let mut pollfd = libc::pollfd {
                    fd,
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: poll on one pollfd we own.
                let r = unsafe { libc::poll(&mut pollfd, 1, ms) };
                if r < 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(WriteFailure::Closed(e));
                    }
                }
                // Writable, hung up or timed out: the next write or the
                // deadline check tells which.
            }
            _ => return Err(WriteFailure::Closed(error)),
        }
    }
    Ok(())
}

/// What the reader saw, each tagged with the seq of the request last
/// written when it saw it: a line completed before a request was being
/// written cannot be an answer to it.
#[derive(Debug)]
pub enum Seen {
    /// One line, without its `\n`.
    Line { bytes: Vec<u8>, tag: u64 },
    /// A line passed the limit; `len` bytes of it had arrived, no newline
    /// yet. Nothing more is read. Fatal whenever it was seen, so untagged.
    TooLong { len: usize },
    /// End of output: every writer closed it.
    Closed { tag: u64 },
    /// Reading failed: fatal whenever it was seen, so untagged.
    Failed { error: io::Error },
}

/// The child's output split into lines on the caller's own thread: a line
/// is read only while the caller waits for one, through a nonblocking
/// descriptor and `poll(2)`, so an answer costs one wake-up and no handoff
/// between threads. At most `limit` bytes of a line are held: a longer one
/// is reported as soon as it passes the limit, not when its newline comes.
pub struct LineReader<R> {
    output: R,
    limit: usize,
    buf: Vec<u8>,
    /// The line being read, without its newline yet.
    line: Vec<u8>,
    /// What was seen and not yet taken, in order.
    ready: std::collections::VecDeque<Seen>,
    /// The end, a line past the limit, or a failure was seen: nothing more
    /// is read.
    done: bool,
}

impl<R: Read + AsRawFd> LineReader<R> {
    pub fn new(output: R, limit: usize) -> io::Result<LineReader<R>> {
        set_nonblocking(&output)?;
        Ok(LineReader {
            output,
            limit,
            buf: vec![0u8; 64 << 10],
            line: Vec::new(),
            ready: std::collections::VecDeque::new(),
            done: false,
        })
    }

    /// Takes in whatever has arrived, without waiting, tagging the lines it
    /// completes with `tag`. Called before a request is written, so that a
    /// line the child printed before it is known to be unsolicited.
    pub fn take_ready(&mut self, tag: u64) {
        while !self.done && matches!(self.read_once(tag), Ok(true)) {}
    }

    /// The next thing seen, tagged `tag` if it is read now; `None` when
    /// nothing came by `deadline`. After the end it is `Closed` again.
    pub fn next_by(&mut self, deadline: Instant, tag: u64) -> Option<Seen> {
        loop {
            if let Some(seen) = self.ready.pop_front() {
                return Some(seen);
            }
            if self.done {
                return Some(Seen::Closed { tag });
            }
            match self.read_once(tag) {
                Ok(true) => continue,
                Ok(false) => {}
                Err(()) => continue,
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            // Round up, so that a sub-millisecond rest is not a busy loop.
            let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
            let mut pollfd = libc::pollfd {
                fd: self.output.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: poll on one pollfd we own. Readable, hung up or timed
            // out: the next read or the deadline check tells which.
            unsafe { libc::poll(&mut pollfd, 1, ms) };
        }
    }

    /// One read: `Ok(true)` when bytes (or the end) came, `Ok(false)` when
    /// nothing is there yet, `Err(())` when reading ended in a failure
    /// (queued).
    fn read_once(&mut self, tag: u64) -> Result<bool, ()> {
        let n = match self.output.read(&mut self.buf) {
            Ok(0) => {
                if !self.line.is_empty() {
                    let bytes = std::mem::take(&mut self.line);
                    self.ready.push_back(Seen::Line { bytes, tag });
                }
                self.ready.push_back(Seen::Closed { tag });
                self.done = true;
                return Ok(true);
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(error) => {
                self.ready.push_back(Seen::Failed { error });
                self.done = true;
                return Err(());
            }
        };
        let mut chunk = &self.buf[..n];
        while !chunk.is_empty() {
            let (part, complete) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (&chunk[..i], true),
                None => (chunk, false),
            };
            chunk = &chunk[part.len() + usize::from(complete)..];
            if self.line.len() + part.len() > self.limit {
                self.ready.push_back(Seen::TooLong {
                    len: self.line.len() + part.len(),
                });
                self.done = true;
                return Ok(true);
            }
            self.line.extend_from_slice(part);
            if complete {
                let bytes = std::mem::take(&mut self.line);
                self.ready.push_back(Seen::Line { bytes, tag });
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A pipe as (read end, write end), without std::io::pipe (newer than
    /// the crate's minimum Rust).
    fn pipe() -> (std::fs::File, std::fs::File) {
        use std::os::fd::FromRawFd;
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills two fresh descriptors, each owned once below.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        unsafe {
            (
                std::fs::File::from_raw_fd(fds[0]),
                std::fs::File::from_raw_fd(fds[1]),
            )
        }
    }

    /// Everything read from a pipe that `input` was written to and closed.
    fn collect(input: &'static [u8], limit: usize) -> Vec<Seen> {
        let (read, mut write) = pipe();
        std::io::Write::write_all(&mut write, input).unwrap();
        drop(write);
        let mut reader = LineReader::new(read, limit).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        loop {
            match reader.next_by(deadline, 7) {
                Some(Seen::Closed { tag }) => {
                    seen.push(Seen::Closed { tag });
                    return seen;
                }
                Some(s) => seen.push(s),
                None => panic!("no end"),
            }
        }
    }

    #[test]
    fn lines_come_whole_and_tagged_then_the_end() {
        let seen = collect(b"{\"a\":1}\n\n{\"b\"", 100);
        assert!(matches!(&seen[0], Seen::Line { bytes, tag: 7 } if bytes == b"{\"a\":1}"));
        assert!(matches!(&seen[1], Seen::Line { bytes, .. } if bytes.is_empty()));
        assert!(matches!(&seen[2], Seen::Line { bytes, .. } if bytes == b"{\"b\""));
        assert!(matches!(&seen[3], Seen::Closed { tag: 7 }));
        assert_eq!(seen.len(), 4);
    }

    #[test]
    fn a_line_past_the_limit_is_reported_without_waiting_for_its_newline() {
        // A pipe whose writer never sends a newline and never closes.
        let (read, mut write) = pipe();
        let mut reader = LineReader::new(read, 1000).unwrap();
        std::io::Write::write_all(&mut write, &[b'x'; 1500]).unwrap();
        match reader.next_by(Instant::now() + Duration::from_secs(10), 0) {
            Some(Seen::TooLong { len, .. }) => assert!(len > 1000, "{len}"),
            other => panic!("{other:?}"),
        }
        drop(write);
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_accepted() {
        let seen = collect(b"yyyyyyyyyy\n", 10);
        assert!(matches!(&seen[0], Seen::Line { bytes, .. } if bytes.len() == 10));
    }

    #[test]
    fn nothing_by_the_deadline_is_none_and_lines_before_a_request_keep_their_tag() {
        let (read, mut write) = pipe();
        let mut reader = LineReader::new(read, 100).unwrap();
        let soon = Instant::now() + Duration::from_millis(50);
        assert!(reader.next_by(soon, 1).is_none());
        // Printed before request 2 was written: taken in with tag 1.
        std::io::Write::write_all(&mut write, b"early\n").unwrap();
        reader.take_ready(1);
        std::io::Write::write_all(&mut write, b"answer\n").unwrap();
        let later = Instant::now() + Duration::from_secs(10);
        assert!(matches!(
            reader.next_by(later, 2),
            Some(Seen::Line { tag: 1, .. })
        ));
        assert!(matches!(
            reader.next_by(later, 2),
            Some(Seen::Line { tag: 2, .. })
        ));
    }

    #[test]
    fn a_write_nobody_reads_fails_at_the_deadline() {
        let (read, write) = pipe();
        set_nonblocking(&write).unwrap();
        let big = vec![b'z'; 1 << 20];
        let r = write_all_by(
            write.as_raw_fd(),
            &big,
            Instant::now() + Duration::from_millis(100),
        );
        match r {
            Err(WriteFailure::TimedOut { written }) => assert!(written < big.len()),
            other => panic!("{other:?}"),
        }
        drop(read);
    }

    #[test]
    fn a_write_to_a_closed_pipe_says_so() {
        let (read, write) = pipe();
        drop(read);
        set_nonblocking(&write).unwrap();
        let r = write_all_by(
            write.as_raw_fd(),
            b"hello\n",
            Instant::now() + Duration::from_secs(5),
        );
        assert!(matches!(r, Err(WriteFailure::Closed(_))), "{r:?}");
    }
}
