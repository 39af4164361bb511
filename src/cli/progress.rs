//! The progress display of the long commands: one bar for the work done,
//! and, when several workers share it, a line per worker naming what it is
//! playing. A user who waits on a slow seed or a hanging case sees which
//! one it is.
//!
//! Everything is drawn on standard error, and nothing at all when the
//! output is not for a person (`--format json`, or the bar hidden).

use std::borrow::Cow;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    multi: MultiProgress,
    pub bar: ProgressBar,
    workers: Vec<ProgressBar>,
}

impl Progress {
    /// A bar of `len` items drawn with `template` (an indicatif template),
    /// and a line for each of `workers` workers when there are several
    /// and more than one item.
    pub fn new(shown: bool, len: u64, template: &str, workers: usize) -> Progress {
        let multi = if shown && !super::output::quiet() {
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
        Progress {
            multi,
            bar,
            workers,
        }
    }

    /// Says what worker `w` (counted from 0) has taken up.
    pub fn worker(&self, w: usize, doing: impl Into<Cow<'static, str>>) {
        if let Some(line) = self.workers.get(w) {
            line.set_message(doing);
        }
    }

    /// Runs `f` with the display out of the way, for printing above it.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.multi.suspend(f)
    }

    /// Clears the bar and every worker line.
    pub fn finish(&self) {
        for line in &self.workers {
            line.finish_and_clear();
        }
        self.bar.finish_and_clear();
    }
}
