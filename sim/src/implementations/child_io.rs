//! Talking to a child through its pipes without ever waiting longer than a
//! deadline: writes go through a nonblocking descriptor and `poll(2)`, and a
//! thread splits the child's output into lines, giving up on a line as soon
//! as it passes the limit rather than waiting for a newline that may never
//! come.

use std::io::{self, Read};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
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

/// What the reader thread saw, each tagged with the value of the request
/// counter when it saw it: a line completed before a request was being
/// written cannot be an answer to it.
#[derive(Debug)]
pub enum Seen {
    /// One line, without its `\n`.
    Line { bytes: Vec<u8>, tag: u64 },
    /// A line passed the limit; `len` bytes of it had arrived, no newline
    /// yet. Nothing more is read.
    TooLong { len: usize, tag: u64 },
    /// End of output: every writer closed it.
    Closed { tag: u64 },
    /// Reading failed.
    Failed { error: io::Error, tag: u64 },
}

/// Reads `output` in a thread, line by line, holding at most `limit` bytes
/// of a line. `tag` is read as each line completes.
pub fn spawn_reader(
    output: impl Read + Send + 'static,
    limit: usize,
    tag: Arc<AtomicU64>,
) -> Receiver<Seen> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut output = output;
        let mut buf = vec![0u8; 64 << 10];
        let mut line: Vec<u8> = Vec::new();
        loop {
            let n = match output.read(&mut buf) {
                Ok(0) => {
                    if !line.is_empty() {
                        let bytes = std::mem::take(&mut line);
                        let _ = tx.send(Seen::Line {
                            bytes,
                            tag: tag.load(Ordering::SeqCst),
                        });
                    }
                    let _ = tx.send(Seen::Closed {
                        tag: tag.load(Ordering::SeqCst),
                    });
                    return;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    let _ = tx.send(Seen::Failed {
                        error,
                        tag: tag.load(Ordering::SeqCst),
                    });
                    return;
                }
            };
            let mut chunk = &buf[..n];
            while !chunk.is_empty() {
                let (part, complete) = match chunk.iter().position(|&b| b == b'\n') {
                    Some(i) => (&chunk[..i], true),
                    None => (chunk, false),
                };
                chunk = &chunk[part.len() + usize::from(complete)..];
                if line.len() + part.len() > limit {
                    let _ = tx.send(Seen::TooLong {
                        len: line.len() + part.len(),
                        tag: tag.load(Ordering::SeqCst),
                    });
                    return;
                }
                line.extend_from_slice(part);
                if complete {
                    let bytes = std::mem::take(&mut line);
                    if tx
                        .send(Seen::Line {
                            bytes,
                            tag: tag.load(Ordering::SeqCst),
                        })
                        .is_err()
                    {
                        return;
                    }
                }
            }
        }
    });
    rx
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

    fn collect(input: &'static [u8], limit: usize) -> Vec<Seen> {
        let rx = spawn_reader(input, limit, Arc::new(AtomicU64::new(7)));
        rx.iter().collect()
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
        let rx = spawn_reader(read, 1000, Arc::new(AtomicU64::new(0)));
        std::io::Write::write_all(&mut write, &[b'x'; 1500]).unwrap();
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Seen::TooLong { len, .. }) => assert!(len > 1000, "{len}"),
            other => panic!("{other:?}"),
        }
        drop(write);
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_accepted() {
        let mut input = vec![b'y'; 10];
        input.push(b'\n');
        let rx = spawn_reader(std::io::Cursor::new(input), 10, Arc::new(AtomicU64::new(0)));
        assert!(matches!(rx.recv().unwrap(), Seen::Line { bytes, .. } if bytes.len() == 10));
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
