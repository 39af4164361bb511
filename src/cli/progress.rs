//! The progress display of the long commands: one bar for the work done,
//! and, when several workers share it, a line per worker naming what it is
//! playing. A user who waits on a slow seed or a hanging case sees which
//! one it is.
//!
//! Everything is drawn on standard error, and nothing at all when the
//! output is not for a person (`--format json`, or the bar hidden).
//!
//! A bar is drawn only on a terminal. When standard error is a file or a
//! pipe, as in a CI log, a plain line says how far the work is at most
//! every [`PLAIN_EVERY`] instead, so a long certification is never silent
//! until it ends, and the log does not fill with redraws.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use tern_harness::events::{Event, Work};
use tern_harness::implementations::locked;
use tern_reports::escape;

/// How often the plain line is printed. `TERN_SIM_PROGRESS_EVERY` (a span
/// such as `500ms`) overrides it, which the tests use to see the line
/// without waiting.
pub const PLAIN_EVERY: Duration = Duration::from_secs(10);

pub struct Progress {
    multi: MultiProgress,
    pub bar: ProgressBar,
    workers: Vec<ProgressBar>,
    /// Taken, and stopped, by [`Progress::finish`] or on drop.
    plain: Mutex<Option<PlainLines>>,
}

impl Progress {
    /// A bar of `len` items drawn with `template` (an indicatif template),
    /// and a line for each of `workers` workers when there are several
    /// and more than one item.
    pub fn new(shown: bool, len: u64, template: &str, workers: usize) -> Progress {
        let shown = shown && !super::output::quiet();
        let on_terminal = std::io::stderr().is_terminal();
        let multi = if shown && on_terminal {
            MultiProgress::new()
        } else {
            MultiProgress::with_draw_target(ProgressDrawTarget::hidden())
        };
        let bar = multi.add(ProgressBar::new(len));
        bar.set_style(
            ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let lines = if workers > 1 && len > 1 {
            workers.min(usize::try_from(len).unwrap_or(usize::MAX))
        } else {
            0
        };
        let workers = (0..lines)
            .map(|w| {
                let line = multi.add(ProgressBar::new_spinner());
                line.set_style(
                    ProgressStyle::with_template("  worker {prefix}: {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                line.set_prefix((w + 1).to_string());
                line
            })
            .collect();
        let plain = Mutex::new((shown && !on_terminal).then(|| PlainLines::start(bar.clone())));
        Progress {
            multi,
            bar,
            workers,
            plain,
        }
    }

    /// Says what worker `w` (counted from 0) has taken up.
    pub fn worker(&self, w: usize, doing: impl Into<Cow<'static, str>>) {
        if let Some(line) = self.workers.get(w) {
            line.set_message(doing);
        }
    }

    /// Draws what the engines tell: a worker's line names the case or seed
    /// it took up, and the bar moves with each case, run or scope that
    /// ends (a run also shows the deliveries so far, a scope its name).
    pub fn hear(&self, event: Event<'_>) {
        match event {
            Event::Started { worker, work } => self.worker(
                worker,
                match work {
                    Work::Case(case) => format!("case {}", escape::terminal(&case.id)),
                    Work::Seed(seed) => format!("seed {seed}"),
                    Work::Mutant(m) => format!("mutant {}", m.name()),
                    Work::Scope(id) => format!("scope {}", escape::terminal(id)),
                },
            ),
            Event::Case(_) | Event::Mutant(_) => self.bar.inc(1),
            Event::Run { totals, .. } => {
                self.bar.inc(1);
                self.bar
                    .set_message(format!("{} deliveries", totals.deliveries));
            }
            Event::Scope(scope) => {
                self.bar.inc(1);
                self.bar.set_message(scope.id.clone());
            }
            // A bar is one part's: whoever listens to a whole
            // certification makes one at each part's start. What a
            // violation found and its shrinking say is printed by the
            // command, above the bar.
            Event::PartStarted { .. }
            | Event::PartEnded { .. }
            | Event::Found { .. }
            | Event::Shrinking(_) => {}
        }
    }

    /// Runs `f` with the display out of the way, for printing above it.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.multi.suspend(f)
    }

    /// Clears the bar and every worker line, and stops the plain lines.
    pub fn finish(&self) {
        for line in &self.workers {
            line.finish_and_clear();
        }
        self.bar.finish_and_clear();
        self.stop_plain();
    }

    fn stop_plain(&self) {
        let plain = locked(&self.plain).take();
        if let Some(plain) = plain {
            plain.stop();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop_plain();
    }
}

/// The thread that prints the plain progress line, woken early to stop.
struct PlainLines {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl PlainLines {
    fn start(bar: ProgressBar) -> PlainLines {
        let every = std::env::var("TERN_SIM_PROGRESS_EVERY")
            .ok()
            .and_then(|v| humantime::parse_duration(&v).ok())
            .filter(|d| !d.is_zero())
            .unwrap_or(PLAIN_EVERY);
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            every_until_stopped(&stopped, every, || noteln!("{}", plain_line(&bar)))
        });
        PlainLines {
            stop,
            thread: Some(thread),
        }
    }

    fn stop(mut self) {
        let (lock, wake) = &*self.stop;
        if let Ok(mut done) = lock.lock() {
            *done = true;
        }
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Calls `tick` every `every` until `stop` says so. Asked to stop before
/// it first held the lock, it does not wait at all: nobody would wake it,
/// and a quick command would hang for a whole period at its end.
fn every_until_stopped(stop: &(Mutex<bool>, Condvar), every: Duration, mut tick: impl FnMut()) {
    let (lock, wake) = stop;
    let Ok(mut done) = lock.lock() else { return };
    while !*done {
        match wake.wait_timeout(done, every) {
            Ok((guard, _)) => done = guard,
            Err(_) => return,
        }
        if !*done {
            tick();
        }
    }
}

/// `progress: reference: corpus: 120/287 done in 3s, 41.3/s, about 5s left`:
/// what a bar shows, in words that read well in a log.
fn plain_line(bar: &ProgressBar) -> String {
    let done = bar.position();
    let secs = bar.elapsed().as_secs_f64();
    let mut line = String::from("progress: ");
    let prefix = bar.prefix();
    if !prefix.is_empty() {
        line.push_str(&prefix);
        line.push_str(": ");
    }
    let elapsed = humantime::format_duration(Duration::from_secs(secs as u64));
    match bar.length().filter(|&len| len > 0) {
        Some(len) => {
            line.push_str(&format!("{done}/{len} done in {elapsed}"));
            if done > 0 && secs > 0.0 {
                let rate = done as f64 / secs;
                let left = len.saturating_sub(done) as f64 / rate;
                line.push_str(&format!(
                    ", {rate:.1}/s, about {} left",
                    humantime::format_duration(Duration::from_secs(left.ceil() as u64))
                ));
            }
        }
        None if done > 0 => line.push_str(&format!("{done} done in {elapsed}")),
        None => line.push_str(&format!("running for {elapsed}")),
    }
    let message = bar.message();
    if !message.is_empty() {
        line.push_str(&format!(" ({message})"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stop that comes before the printing thread first waits is not
    /// lost: the thread ends at once instead of waiting out its period
    /// (an hour here; the test gives it a minute).
    #[test]
    fn a_stop_before_the_first_wait_is_not_lost() {
        let stop = Arc::new((Mutex::new(true), Condvar::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let ticks = std::thread::spawn(move || {
            let mut ticks = 0;
            every_until_stopped(&stop, Duration::from_secs(3600), || ticks += 1);
            let _ = tx.send(());
            ticks
        });
        assert!(
            rx.recv_timeout(Duration::from_secs(60)).is_ok(),
            "the thread waited although it was stopped"
        );
        assert_eq!(ticks.join().unwrap(), 0);
    }

    #[test]
    fn it_ticks_until_stopped() {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let stopper = Arc::clone(&stop);
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            every_until_stopped(&stop, Duration::from_millis(1), || {
                let _ = tx.send(());
            })
        });
        rx.recv().unwrap();
        rx.recv().unwrap();
        *stopper.0.lock().unwrap() = true;
        stopper.1.notify_all();
        thread.join().unwrap();
    }
}
