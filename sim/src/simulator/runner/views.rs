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
        let Some(receiver) = self.agents[a].receiver.as_mut() else {
            return Ok(None);
        };
        let answer = no_effect::view(receiver.as_mut(), &self.world, t);
        self.stats.checks += 1;
        answer.map(Some).map_err(|b| self.breach(a, "a view", b))
    }

    /// Agent `a`'s views of the threads `wanted` names, each asked against
    /// the oracle's view it is paired with (`None` while it is down): asked
    /// together, so that over the protocol they cost one round trip.
    pub(super) fn views_of(
        &mut self,
        a: usize,
        wanted: &[(ThreadId, View)],
    ) -> Result<Option<Vec<View>>, Box<Violation>> {
        let Some(receiver) = self.agents[a].receiver.as_mut() else {
            return Ok(None);
        };
        let answer = no_effect::views(receiver.as_mut(), &self.world, wanted);
        self.stats.checks += wanted.len() as u64;
        answer.map(Some).map_err(|b| self.breach(a, "a view", b))
    }

    /// The implementation's view of a thread against the oracle's, plus the
    /// invariants that hold of any view on its own.
    pub(super) fn check_view(&mut self, a: usize, thread: &str) -> Checked {
        self.check_views_in(a, &[thread])
    }

    /// [`Run::check_view`] for several threads of agent `a`, whose views
    /// are asked together and judged in order.
    pub(super) fn check_views_in(&mut self, a: usize, threads: &[&str]) -> Checked {
        // A receiver that is down shows nothing: no oracle view is built.
        if self.agents[a].receiver.is_none() {
            return Ok(());
        }
        let wanted: Vec<(ThreadId, View)> = threads
            .iter()
            .filter_map(|t| ThreadId::new(t).ok())
            .map(|t| {
                let expected = self.agents[a].oracle.view_text(&t);
                (t, expected)
            })
            .collect();
        let Some(actual) = self.views_of(a, &wanted)? else {
            return Ok(());
        };
        for ((t, expected), actual) in wanted.into_iter().zip(actual) {
            self.judge_view(a, &t, expected, actual)?;
        }
        Ok(())
    }

    /// One view against the oracle's.
    pub(super) fn judge_view(
        &mut self,
        a: usize,
        t: &ThreadId,
        expected: View,
        actual: View,
    ) -> Checked {
        let thread = t.as_str();
        if actual == expected {
            // The oracle's own view: it keeps every ID it ever showed and
            // lists commitments from COMMITs only, so the history and
            // commitment checks below hold of it. What it newly shows
            // joins the IDs seen.
            let agent = &mut self.agents[a];
            if let Some(new) = agent.unconfirmed.remove(thread) {
                let oracle = &agent.oracle;
                let seen = agent.seen_ids.entry(thread.to_owned()).or_default();
                for id in new.iter().filter(|id| oracle.shows(t, id)) {
                    if !seen.contains(id.as_str()) {
                        seen.insert(id.as_str().to_owned());
                    }
                }
            }
            return Ok(());
        }
        self.explain_view(a, thread, expected.to_value(), actual.to_value())
    }

    /// A view that differs from the oracle's by its text: the checks on
    /// the view as a tree, and the name of the difference.
    pub(super) fn explain_view(
        &mut self,
        a: usize,
        thread: &str,
        expected: Value,
        actual: Value,
    ) -> Checked {
        let seen = self.agents[a]
            .seen_ids
            .entry(thread.to_owned())
            .or_default();
        oracle::view_tree(
            thread,
            &expected,
            &actual,
            seen,
            &self.world,
            self.config.names,
        )
        .map_err(|m| self.mismatch(a, m))
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
        m: Mismatch,
    ) -> Mismatch {
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
            let agent = &mut self.agents[a];
            let shown = agent
                .seen_ids
                .get(thread.as_str())
                .is_some_and(|s| s.contains(id.as_str()));
            if reported.contains(&(thread.clone(), id.clone())) || !shown {
                continue;
            }
            let Some(Ok(view)) = agent.receiver.as_mut().map(|r| r.view(&thread)) else {
                continue;
            };
            let held = view.to_value()["messages"]
                .as_array()
                .is_some_and(|ms| ms.iter().any(|x| x["id"] == id.as_str()));
            if !held {
                return Mismatch::new(
                    inv::HISTORY,
                    format!("{id} released, and still in the view of {thread}"),
                    format!("{id} not released, and missing from the view of {thread}, which showed it before"),
                );
            }
        }
        m
    }
}
