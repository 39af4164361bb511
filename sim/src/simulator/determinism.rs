//! Whether the implementation under test is itself deterministic: the same
//! seed played twice, each time on fresh state, must get the same answers.
//! The harness draws every choice from the seed, so two plays of a seed
//! send the same requests for as long as the answers agree; an
//! implementation whose answers then differ reads something the harness
//! does not give it (the wall clock, randomness, a hash order, a thread
//! race), and none of its failures can be trusted to replay.

use std::sync::{Arc, Mutex};

use tern_model::ledger::{Execution, LocalTime};
use tern_model::message::{MessageRef, Principal, ThreadId};

use crate::contract::plugin::{
    Delivered, Durability, Identity, ImplError, Implementation, InitParams, Receiver, View,
};
use crate::contract::protocol::lines::DeliverAnswer;
use crate::contract::protocol::{encode_bytes, event_line, execute_answer};
use crate::contract::storage::{FileOp, Storage};
use crate::contract::world::AgentWorld;
use crate::implementations::locked;
use crate::simulator::driver::{play, steps_of, Batch};
use crate::simulator::runner::{RunConfig, Sessions};

/// How many passing seeds are checked besides the failing one, unless told.
pub const DEFAULT_SAMPLE: u64 = 10;

/// One request the harness made and the answer it got, as text a vendor
/// recognises: the protocol's own JSON for answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundTrip {
    pub request: String,
    pub answer: String,
}

/// The first request whose answer differed between two plays of a seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    pub seed: u64,
    /// Counted from 1, over every agent's requests in the order the
    /// harness made them.
    pub request_number: usize,
    pub request: String,
    pub first: String,
    pub second: String,
}

/// What a determinism check played and found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeterminismCheck {
    /// The seeds played twice, in the order played.
    pub seeds: Vec<u64>,
    /// The first difference, in the order of `seeds`.
    pub divergence: Option<Divergence>,
    /// False when an interrupt stopped it before its last seed.
    pub complete: bool,
}

/// The seeds a check plays after a batch that played `runs` runs and
/// failed at `failing` (its last run), if it failed: the failing one
/// first, then up to `sample` of the runs that passed, spread evenly over
/// them, so that a long batch is sampled from its start to its end and the
/// choice depends on the batch alone.
pub fn seeds_to_check(batch: &Batch, runs: u64, failing: Option<u64>, sample: u64) -> Vec<u64> {
    let passed = runs.saturating_sub(u64::from(failing.is_some()));
    let mut seeds: Vec<u64> = failing.into_iter().collect();
    let take = sample.min(passed);
    for k in 0..take {
        // k·passed/take, without overflow for any batch.
        let nth = (u128::from(k) * u128::from(passed) / u128::from(take)) as u64;
        seeds.push(batch.seed_of(nth));
    }
    seeds
}

/// Plays each seed of `seeds` twice on fresh state, until the first whose
/// two plays answered differently. `stop` is polled between plays; a check
/// it cut short finds nothing in the play it overlapped.
pub fn check(
    batch: &Batch,
    seeds: &[u64],
    implementation: &dyn Implementation,
    stop: impl Fn() -> bool,
) -> DeterminismCheck {
    let mut out = DeterminismCheck {
        seeds: Vec::new(),
        divergence: None,
        complete: true,
    };
    for &seed in seeds {
        if stop() {
            out.complete = false;
            break;
        }
        let config = RunConfig {
            sessions: Sessions::Once,
            ..batch.config(seed)
        };
        let first = transcript(&config, implementation);
        let second = transcript(&config, implementation);
        if stop() {
            out.complete = false;
            break;
        }
        out.seeds.push(seed);
        if let Some(d) = first_difference(seed, &first, &second) {
            out.divergence = Some(d);
            break;
        }
    }
    // What the plays wrote on stderr belongs to no case or run.
    let _ = implementation.take_log();
    out
}

/// Every request of one play of `config`, with its answer, on fresh
/// processes and fresh storage.
pub fn transcript(config: &RunConfig, implementation: &dyn Implementation) -> Vec<RoundTrip> {
    implementation.set_process_reuse(false);
    let recorder = Recorder {
        inner: implementation,
        exchanges: Arc::default(),
    };
    let _ = play(config, &steps_of(config), &recorder, false);
    let exchanges = locked(&recorder.exchanges).clone();
    exchanges
}

/// Where two transcripts of one seed first part. A request that differs
/// (which only a harness fault could cause, the answers before it being
/// equal) is reported as its own answer.
pub fn first_difference(
    seed: u64,
    first: &[RoundTrip],
    second: &[RoundTrip],
) -> Option<Divergence> {
    let ended = || RoundTrip {
        request: "(none: the play had ended)".to_owned(),
        answer: "(none: the play had ended)".to_owned(),
    };
    let at = (0..first.len().max(second.len())).find(|&i| first.get(i) != second.get(i))?;
    let (a, b) = (
        first.get(at).cloned().unwrap_or_else(ended),
        second.get(at).cloned().unwrap_or_else(ended),
    );
    let (first, second) = if a.request == b.request {
        (a.answer, b.answer)
    } else {
        (
            format!("{} → {}", a.request, a.answer),
            format!("{} → {}", b.request, b.answer),
        )
    };
    Some(Divergence {
        seed,
        request_number: at + 1,
        request: a.request,
        first,
        second,
    })
}

/// An implementation whose receivers write down every request and answer.
struct Recorder<'i> {
    inner: &'i dyn Implementation,
    exchanges: Arc<Mutex<Vec<RoundTrip>>>,
}

impl Recorder<'_> {
    fn push(exchanges: &Mutex<Vec<RoundTrip>>, request: String, answer: String) {
        locked(exchanges).push(RoundTrip { request, answer });
    }
}

impl Implementation for Recorder<'_> {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn start(
        &self,
        init: &InitParams,
        storage: Storage,
        world: AgentWorld,
    ) -> Result<Box<dyn Receiver>, ImplError> {
        let agent = init.participant.to_string();
        let started = self.inner.start(init, storage, world);
        let answer = match &started {
            Ok(r) => {
                let i = r.identity();
                let caps: Vec<&str> = i.capabilities.iter().map(|c| c.as_str()).collect();
                format!(
                    "started: {} {}, claims [{}]",
                    i.name,
                    i.version.as_deref().unwrap_or("(no version)"),
                    caps.join(", ")
                )
            }
            Err(e) => e.to_string(),
        };
        Recorder::push(&self.exchanges, format!("start {agent}"), answer);
        started.map(|inner| {
            Box::new(Recording {
                inner,
                agent,
                exchanges: Arc::clone(&self.exchanges),
            }) as Box<dyn Receiver>
        })
    }

    fn cap_request_wait(&self, cap: Option<std::time::Duration>) {
        self.inner.cap_request_wait(cap)
    }

    fn take_log(&self) -> Option<Vec<u8>> {
        self.inner.take_log()
    }

    fn set_process_reuse(&self, allowed: bool) {
        self.inner.set_process_reuse(allowed)
    }

    fn release(&self, storage: &Storage) {
        self.inner.release(storage)
    }

    fn hash_state_dir(&self, storage: &Storage, h: &mut dyn std::hash::Hasher) {
        self.inner.hash_state_dir(storage, h)
    }

    fn file_ops_mark(&self, storage: &Storage) -> Option<u64> {
        self.inner.file_ops_mark(storage)
    }

    fn file_ops_since(&self, storage: &Storage, mark: u64) -> Vec<FileOp> {
        self.inner.file_ops_since(storage, mark)
    }

    fn durability(&self) -> Durability {
        self.inner.durability()
    }

    fn set_power_loss(&self, on: bool) -> bool {
        self.inner.set_power_loss(on)
    }

    fn processes_reused(&self) -> u64 {
        self.inner.processes_reused()
    }
}

/// A receiver that writes down what it was asked and what it answered.
struct Recording {
    inner: Box<dyn Receiver>,
    agent: String,
    exchanges: Arc<Mutex<Vec<RoundTrip>>>,
}

impl Recording {
    fn note<T>(&self, request: String, answer: &Result<T, ImplError>, text: impl Fn(&T) -> String) {
        let answer = match answer {
            Ok(a) => text(a),
            Err(e) => e.to_string(),
        };
        Recorder::push(&self.exchanges, request, answer);
    }

    fn view_request(&self, thread: &ThreadId) -> String {
        format!("view {} of thread {thread}", self.agent)
    }
}

fn delivered_text(d: &Delivered) -> String {
    let answer = DeliverAnswer {
        events: d.events.iter().map(event_line).collect(),
        outgoing: (!d.outgoing.is_empty())
            .then(|| d.outgoing.iter().map(|f| encode_bytes(f)).collect()),
    };
    serde_json::to_string(&answer).unwrap_or_else(|e| format!("(unprintable answer: {e})"))
}

fn execution_text(e: &Execution) -> String {
    serde_json::to_string(&execute_answer(e))
        .unwrap_or_else(|e| format!("(unprintable answer: {e})"))
}

impl Receiver for Recording {
    fn identity(&self) -> Identity {
        self.inner.identity()
    }

    fn deliver(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Delivered, ImplError> {
        let answer = self.inner.deliver(frame, principal, now);
        let request = format!(
            "deliver to {} (sender authenticated as {principal}) at {}: {}",
            self.agent,
            now.0,
            String::from_utf8_lossy(frame)
        );
        self.note(request, &answer, delivered_text);
        answer
    }

    fn execute(
        &mut self,
        thread: &ThreadId,
        commitment: &MessageRef,
        now: LocalTime,
    ) -> Result<Execution, ImplError> {
        let answer = self.inner.execute(thread, commitment, now);
        let request = format!(
            "execute {commitment} by {} in thread {thread} at {}",
            self.agent, now.0
        );
        self.note(request, &answer, execution_text);
        answer
    }

    fn view(&mut self, thread: &ThreadId) -> Result<View, ImplError> {
        let answer = self.inner.view(thread);
        self.note(self.view_request(thread), &answer, |v| {
            v.as_str().to_owned()
        });
        answer
    }

    fn views_follow(&mut self, threads: &[ThreadId]) {
        self.inner.views_follow(threads)
    }

    fn views_against(&mut self, wanted: &[(ThreadId, View)]) -> Result<Vec<View>, ImplError> {
        let answer = self.inner.views_against(wanted);
        match &answer {
            Ok(views) => {
                for ((thread, _), view) in wanted.iter().zip(views) {
                    Recorder::push(
                        &self.exchanges,
                        self.view_request(thread),
                        view.as_str().to_owned(),
                    );
                }
            }
            Err(e) => {
                let threads: Vec<String> = wanted.iter().map(|(t, _)| t.to_string()).collect();
                Recorder::push(
                    &self.exchanges,
                    format!("views {} of threads {}", self.agent, threads.join(", ")),
                    e.to_string(),
                );
            }
        }
        answer
    }

    fn view_against(&mut self, thread: &ThreadId, expected: &View) -> Result<View, ImplError> {
        let answer = self.inner.view_against(thread, expected);
        self.note(self.view_request(thread), &answer, |v| {
            v.as_str().to_owned()
        });
        answer
    }

    fn kill(&mut self) {
        Recorder::push(
            &self.exchanges,
            format!("crash {}", self.agent),
            "-".to_owned(),
        );
        self.inner.kill()
    }

    fn dismiss(&mut self) {
        self.inner.dismiss()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(request: &str, answer: &str) -> RoundTrip {
        RoundTrip {
            request: request.to_owned(),
            answer: answer.to_owned(),
        }
    }

    #[test]
    fn equal_transcripts_do_not_differ() {
        let t = vec![ex("start a", "ok"), ex("view a of thread t", "{}")];
        assert_eq!(first_difference(1, &t, &t.clone()), None);
    }

    #[test]
    fn the_first_answer_that_differs_is_named_with_its_request() {
        let a = vec![ex("start a", "ok"), ex("deliver x", "1"), ex("view", "v")];
        let b = vec![ex("start a", "ok"), ex("deliver x", "2"), ex("view", "w")];
        let d = first_difference(7, &a, &b).expect("differs");
        assert_eq!(d.seed, 7);
        assert_eq!(d.request_number, 2);
        assert_eq!(d.request, "deliver x");
        assert_eq!((d.first.as_str(), d.second.as_str()), ("1", "2"));
    }

    #[test]
    fn a_play_that_ends_early_differs_where_it_ended() {
        let a = vec![ex("start a", "ok"), ex("deliver x", "1")];
        let b = vec![ex("start a", "ok")];
        let d = first_difference(3, &a, &b).expect("differs");
        assert_eq!(d.request_number, 2);
        assert!(d.second.contains("ended"), "{}", d.second);
    }

    #[test]
    fn the_sample_is_spread_over_the_passing_runs_after_the_failing_seed() {
        let batch = Batch {
            first_seed: 100,
            seeds: 1000,
            agents: 3,
            steps: 10,
            faults: Default::default(),
            names: Default::default(),
            swarm: true,
            shard: crate::shard::Shard::WHOLE,
            deadline: None,
        };
        assert_eq!(
            seeds_to_check(&batch, 1000, None, 4),
            vec![100, 350, 600, 850]
        );
        assert_eq!(
            seeds_to_check(&batch, 3, Some(102), 10),
            vec![102, 100, 101]
        );
        assert_eq!(seeds_to_check(&batch, 0, None, 10), Vec::<u64>::new());
    }
}
