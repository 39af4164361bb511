//! What a run asks of an agent's views and how it judges them: each view
//! against the oracle's, the text that explains a disagreement, and a
//! release the receiver could not report because it lost the message.

use super::*;

impl Run<'_> {
    /// An agent's view of a thread (`None` while it is down). Asking for a
    /// view is a read: an effect performed while answering one bypasses
    /// every authority check, so it is a violation like an effect during a
    /// delivery or at start-up (only `execute` may act on the world).
    pub(super) fn view_of(
        &mut self,
        a: usize,
        t: &ThreadId,
    ) -> Result<Option<View>, Box<Violation>> {
        let Some(receiver) = self.agents[a].under_test.receiver() else {
            return Ok(None);
        };
        let answer = no_effect::view(receiver, &self.world, t);
        self.stats.checks += 1;
        answer
            .map(Some)
            .map_err(|b| self.violation(Some(a), b.into_failure("a view")))
    }

    /// The implementation's view of a thread against the oracle's, plus the
    /// invariants that hold of any view on its own.
    pub(super) fn check_view(&mut self, a: usize, thread: &str) -> Checked {
        self.check_views_in(a, &[thread])
    }

    /// [`Run::check_view`] for several threads of agent `a`, whose views
    /// are asked together and judged in order.
    pub(super) fn check_views_in(&mut self, a: usize, threads: &[&str]) -> Checked {
        // A receiver that is down shows nothing: no oracle view is made.
        if !self.agents[a].is_up() {
            return Ok(());
        }
        let threads: Vec<ThreadId> = threads
            .iter()
            .filter_map(|t| ThreadId::new(t).ok())
            .collect();
        let checked =
            self.agents[a]
                .under_test
                .check_views(&self.world, &threads, self.config.names);
        self.stats.checks += threads.len() as u64;
        checked.map_err(|m| self.violation(Some(a), m))
    }

    /// A release the model expects and the receiver did not report, of a
    /// message the receiver had shown in a view and no longer holds: it
    /// lost that message (`history-preserved`), which is why it could not
    /// release it. Otherwise the disagreement `m` as it was.
    pub(super) fn lost_release(
        &mut self,
        a: usize,
        expected: &[Event],
        actual: &[Event],
        m: Failure,
    ) -> Failure {
        if m.invariant != inv::OUTCOMES {
            return m;
        }
        let released = |events: &[Event]| -> Vec<(ThreadId, MessageRef)> {
            events
                .iter()
                .filter(|e| e.kind == EventKind::Released)
                .filter_map(|e| Some((e.thread.clone()?, e.id.clone()?)))
                .collect()
        };
        let reported = released(actual);
        for (thread, id) in released(expected) {
            let under_test = &mut self.agents[a].under_test;
            let shown = under_test.has_shown(&thread, &id);
            if reported.contains(&(thread.clone(), id.clone())) || !shown {
                continue;
            }
            let Some(Ok(view)) = under_test.receiver().map(|r| r.view(&thread)) else {
                continue;
            };
            let held = view.to_value()["messages"]
                .as_array()
                .is_some_and(|ms| ms.iter().any(|x| x["id"] == id.as_str()));
            if !held {
                return Failure::new(
                    inv::HISTORY,
                    format!("{id} released, and still in the view of {thread}"),
                    format!("{id} not released, and missing from the view of {thread}, which showed it before"),
                );
            }
        }
        m
    }
}
