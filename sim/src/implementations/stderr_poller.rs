//! Reading the stderr of every child with one thread per core.
//!
//! Exploration over the protocol starts a fresh process for each of
//! hundreds of thousands of states, and a reader thread per process made
//! every start pay for a thread's creation and end. So one thread, started
//! with the first child, waits in `poll(2)` on the stderr of the live
//! children, and on a pipe of its own that a new child's registration
//! writes to, so that its stderr is polled from then on.
//!
//! One such thread per home core ([`super::affinity`]), in fact: a harness thread
//! and its children share a core so that a wake-up does not cross cores,
//! and a single poller on one core, woken by children on every other, cost
//! more than the threads it replaced. A poller is started by the first
//! child of its core, from a thread bound to it, and inherits the binding.
//!
//! A child's bytes reach its tail and its log in the order it wrote them,
//! as they come (`last_words` gives them a moment, then reads the tail).
//! Its end is signalled only once a read returned 0, so that everything it
//! wrote before it died is in the tail and the log by then. Should the
//! thread or its pipe not be had, or should the thread stop, a child's
//! stderr is read by a thread of its own, as it was before.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::implementations::child_io::set_nonblocking;
use crate::implementations::locked;
use crate::implementations::stderr_log::StderrLog;

/// Where one child's stderr goes.
pub(crate) struct Sink {
    /// Its last `tail_bytes` bytes, quoted by a verdict.
    pub(crate) tail: Arc<Mutex<VecDeque<u8>>>,
    pub(crate) tail_bytes: usize,
    /// The log of the thread using the child now: switched when a kept
    /// process is taken by another thread.
    pub(crate) log: Arc<Mutex<Arc<Mutex<StderrLog>>>>,
}

impl Sink {
    fn feed(&self, chunk: &[u8]) {
        {
            let mut tail = locked(&self.tail);
            // Only the chunk's end can stay in the tail.
            tail.extend(&chunk[chunk.len().saturating_sub(self.tail_bytes)..]);
            let over = tail.len().saturating_sub(self.tail_bytes);
            tail.drain(..over);
        }
        let log = locked(&self.log).clone();
        locked(&log).push(chunk);
    }
}

/// Reads a child's stderr `fd` into `sink` until it ends (every process
/// holding it closed it or died), on the poller of `home`, the calling
/// thread's [`super::affinity::home`]. The receiver hears once everything is in
/// the sink and `fd` is closed, or hangs up if no reader could be had.
pub(crate) fn watch(fd: impl Into<OwnedFd>, sink: Sink, home: Option<usize>) -> Receiver<()> {
    let (done, ended) = mpsc::channel();
    let watched = Watched {
        file: File::from(fd.into()),
        sink,
        done,
    };
    // The poller must never block on one child, so its fd is nonblocking.
    let left = match poller(home) {
        Some(poller) if set_nonblocking(&watched.file).is_ok() => poller.add(watched),
        _ => Err(watched),
    };
    if let Err(watched) = left {
        on_its_own_thread(watched);
    }
    ended
}

/// One child's stderr being read.
struct Watched {
    file: File,
    sink: Sink,
    done: Sender<()>,
}

impl Watched {
    /// Closes the fd, then says the sink is whole.
    fn end(self) {
        let Watched { file, done, .. } = self;
        drop(file);
        let _ = done.send(());
    }

    /// Reads what is there, at most `reads` times, into the sink.
    fn drain(&self, buf: &mut [u8], reads: usize) -> Drained {
        for _ in 0..reads {
            match (&self.file).read(buf) {
                Ok(0) => return Drained::Ended,
                Ok(n) => self.sink.feed(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Drained::Empty,
                Err(_) => return Drained::Ended,
            }
        }
        Drained::More
    }
}

enum Drained {
    /// End of file, or an error no later read would clear.
    Ended,
    /// Nothing more for now.
    Empty,
    /// Read its fill: there may be more.
    More,
}

/// Bytes read at once.
const CHUNK: usize = 64 * 1024;

/// Reads of one child's stderr per wake-up of the poller: a child that
/// writes without pause cannot keep the others waiting.
const READS_PER_TURN: usize = 4;

/// The thread's side of the registrations.
struct Poller {
    /// Children registered and not yet taken by the thread; `None` once it
    /// stopped.
    pending: Arc<Mutex<Option<Vec<Watched>>>>,
    /// Written to after each registration, to wake the thread.
    wake: OwnedFd,
}

/// The poller of each home core, started or not (`None`: it could not be,
/// and is not tried again). A handful at most: one per core, and one for
/// threads without a home.
static POLLERS: Mutex<Vec<HomePoller>> = Mutex::new(Vec::new());

/// A home core, and its poller if it could be started.
type HomePoller = (Option<usize>, Option<Arc<Poller>>);

fn poller(home: Option<usize>) -> Option<Arc<Poller>> {
    let mut pollers = locked(&POLLERS);
    if let Some((_, poller)) = pollers.iter().find(|(h, _)| *h == home) {
        return poller.clone();
    }
    let poller = start().map(Arc::new);
    pollers.push((home, poller.clone()));
    poller
}

fn start() -> Option<Poller> {
    let (woken, wake) = pipe().ok()?;
    let pending = Arc::new(Mutex::new(Some(Vec::new())));
    let served = Served {
        watched: Vec::new(),
        pending: pending.clone(),
    };
    std::thread::Builder::new()
        .name("tern-sim-stderr".into())
        .spawn(move || serve(woken, served))
        .ok()?;
    Some(Poller { pending, wake })
}

impl Poller {
    /// Hands `watched` to the thread; back if it stopped.
    fn add(&self, watched: Watched) -> Result<(), Watched> {
        match locked(&self.pending).as_mut() {
            Some(pending) => pending.push(watched),
            None => return Err(watched),
        }
        // Written after the push: the thread takes the pending after it
        // emptied the pipe, so no registration waits for a later one. A
        // full pipe has a wake-up in it already.
        loop {
            // SAFETY: a one-byte write from a live array to our pipe.
            let n = unsafe { libc::write(self.wake.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
            if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return Ok(());
            }
        }
    }
}

/// What the thread reads. Should it stop (a failed `poll`, or a panic),
/// every child it read and every one waiting is given a thread of its own.
struct Served {
    watched: Vec<Watched>,
    pending: Arc<Mutex<Option<Vec<Watched>>>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let pending = locked(&self.pending).take().unwrap_or_default();
        for watched in self.watched.drain(..).chain(pending) {
            on_its_own_thread(watched);
        }
    }
}

/// The poller's loop: sleeps in `poll` until a child wrote, ended, or was
/// registered.
fn serve(woken: OwnedFd, mut served: Served) {
    let mut buf = vec![0u8; CHUNK];
    let mut fds: Vec<libc::pollfd> = Vec::new();
    let polled = |fd: RawFd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        fds.clear();
        fds.push(polled(woken.as_raw_fd()));
        fds.extend(served.watched.iter().map(|w| polled(w.file.as_raw_fd())));
        // SAFETY: poll on a live array of pollfds, as long as said.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        // From the back: `swap_remove` then only moves a child already seen.
        for i in (0..served.watched.len()).rev() {
            let revents = fds[i + 1].revents;
            if revents == 0 {
                continue;
            }
            let over = match served.watched[i].drain(&mut buf, READS_PER_TURN) {
                Drained::Ended => true,
                Drained::More => false,
                // Readable yet empty: only a hang-up or an error says that,
                // and polling it again would return at once, forever.
                Drained::Empty => revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0,
            };
            if over {
                served.watched.swap_remove(i).end();
            }
        }
        if fds[0].revents != 0 && !emptied(&woken) {
            return;
        }
        let pending = locked(&served.pending).as_mut().map(std::mem::take);
        served.watched.extend(pending.unwrap_or_default());
    }
}

/// Reads the wake-up pipe empty; false if it broke, which only a bug can do.
fn emptied(woken: &OwnedFd) -> bool {
    let mut buf = [0u8; 256];
    loop {
        // SAFETY: reading into a live array from our pipe.
        let n = unsafe { libc::read(woken.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 {
            continue;
        }
        if n == 0 {
            return false;
        }
        match io::Error::last_os_error().kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return true,
            _ => return false,
        }
    }
}

/// A reader thread for one child, as before the poller: when the poller
/// cannot be had. Its fd may be nonblocking, so it waits in `poll` first.
/// Without a thread either, the fd is closed and the receiver hangs up.
fn on_its_own_thread(watched: Watched) {
    let _ = std::thread::Builder::new()
        .name("tern-sim-stderr-reader".into())
        .spawn(move || {
            let mut buf = vec![0u8; CHUNK];
            loop {
                let mut fd = libc::pollfd {
                    fd: watched.file.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: poll on one pollfd we own.
                if unsafe { libc::poll(&mut fd, 1, -1) } < 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        // Not to spin should it keep failing: the read
                        // below tells whether there is anything.
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
                if let Drained::Ended = watched.drain(&mut buf, usize::MAX) {
                    break;
                }
            }
            watched.end();
        });
}

/// A pipe as (read end, write end), both nonblocking and close-on-exec, so
/// that no child inherits them.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills two fresh descriptors, each owned once below.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just opened, and nothing else owns them.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::implementations::stderr_log::ThreadLogs;
    use std::io::Write;
    use std::time::Instant;

    /// A pipe whose write end blocks, as a child's stderr does.
    fn child_pipe() -> (OwnedFd, File) {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe2 fills two fresh descriptors, each owned once below.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        unsafe { (OwnedFd::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
    }

    /// A sink keeping up to `tail_bytes`, with the log it writes to.
    fn sink(tail_bytes: usize) -> (Sink, ThreadLogs) {
        let logs = ThreadLogs::default();
        let sink = Sink {
            tail: Arc::new(Mutex::new(VecDeque::new())),
            tail_bytes,
            log: Arc::new(Mutex::new(logs.for_this_thread())),
        };
        (sink, logs)
    }

    fn bytes(tail: &Arc<Mutex<VecDeque<u8>>>) -> Vec<u8> {
        locked(tail).iter().copied().collect()
    }

    /// What writer `w` writes: numbered lines, so a lost, doubled or
    /// reordered chunk shows.
    fn script(w: usize) -> Vec<u8> {
        (0..2000)
            .flat_map(|i| format!("writer {w} line {i}\n").into_bytes())
            .collect()
    }

    #[test]
    fn several_writers_arrive_whole_and_in_order() {
        assert!(poller(None).is_some(), "the poller is running");
        let writers = 8;
        let mut ends = Vec::new();
        for w in 0..writers {
            let (read, write) = child_pipe();
            let (sink, logs) = sink(1 << 20);
            let tail = sink.tail.clone();
            // Two pollers: one of no home, one of home 0.
            let home = (w % 2 == 1).then_some(0);
            ends.push((watch(read, sink, home), write, tail, logs, w));
        }
        // All registered first, then written at once, in small pieces.
        std::thread::scope(|s| {
            for (_, write, _, _, w) in &mut ends {
                let bytes = script(*w);
                s.spawn(move || {
                    for piece in bytes.chunks(97) {
                        write.write_all(piece).unwrap();
                    }
                });
            }
        });
        for (done, write, tail, logs, w) in ends {
            drop(write);
            done.recv_timeout(Duration::from_secs(10)).unwrap();
            assert!(bytes(&tail) == script(w), "writer {w}'s tail");
            assert!(logs.take() == script(w), "writer {w}'s log");
        }
    }

    #[test]
    fn the_end_is_signalled_after_the_last_bytes_and_the_tail_keeps_its_bound() {
        let (read, mut write) = child_pipe();
        let (sink, logs) = sink(100);
        let tail = sink.tail.clone();
        let done = watch(read, sink, None);
        write.write_all(&script(1)).unwrap();
        assert_eq!(
            done.recv_timeout(Duration::from_millis(50)),
            Err(mpsc::RecvTimeoutError::Timeout),
            "no end while a writer holds the pipe"
        );
        // The last words, written just before the end.
        write.write_all(b"last words\n").unwrap();
        drop(write);
        done.recv_timeout(Duration::from_secs(10)).unwrap();
        let kept = bytes(&tail);
        assert_eq!(kept.len(), 100);
        assert!(kept.ends_with(b"writer 1 line 1999\nlast words\n"));
        assert_eq!(logs.take().len(), script(1).len() + 11);
    }

    #[test]
    fn children_come_and_go() {
        for round in 0..3 {
            let mut ends = Vec::new();
            for _ in 0..100 {
                let (read, mut write) = child_pipe();
                let (sink, logs) = sink(64);
                write.write_all(b"bye\n").unwrap();
                drop(write);
                ends.push((watch(read, sink, None), logs));
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            for (done, _) in ends {
                let left = deadline.saturating_duration_since(Instant::now());
                done.recv_timeout(left).unwrap();
            }
            // One more, after all those ended: still read.
            let (read, mut write) = child_pipe();
            let (sink, logs) = sink(64);
            let tail = sink.tail.clone();
            let done = watch(read, sink, None);
            write
                .write_all(format!("round {round}\n").as_bytes())
                .unwrap();
            drop(write);
            done.recv_timeout(Duration::from_secs(10)).unwrap();
            assert_eq!(bytes(&tail), format!("round {round}\n").into_bytes());
            assert_eq!(logs.take(), format!("round {round}\n").into_bytes());
        }
    }

    #[test]
    fn a_thread_of_its_own_reads_the_same() {
        let (read, mut write) = child_pipe();
        let (sink, logs) = sink(1 << 20);
        let tail = sink.tail.clone();
        let (done, ended) = mpsc::channel();
        on_its_own_thread(Watched {
            file: File::from(read),
            sink,
            done,
        });
        write.write_all(&script(2)).unwrap();
        drop(write);
        ended.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(bytes(&tail) == script(2));
        assert!(logs.take() == script(2));
    }
}
