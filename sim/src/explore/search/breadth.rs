//! The breadth-first loop: a layer's children played by the worker pool in
//! rounds (its moves, then the crashes inside the requests they made),
//! judged in order, merged with the states already known, and counted.
//! Apart from the rules of a move, so that the order of the search, which
//! makes the first violation a shortest one, reads on its own.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::sleep::{Expanded, Weighed};
use super::{
    inside_points, Child, Counts, Coverage, Exploration, FailingSchedule, Implementation,
    KeptOracle, Limits, Move, Node, Prepared, RejectNames, Watch,
};
use crate::explore::workers::{Context, Job, Origin, Workers};

/// A child to play: its parent's place in the layer, the move, and the
/// moves its sleep set leaves out.
type Work = (usize, Move, Vec<Move>);

/// What the search has found so far, across layers.
struct Search<'p> {
    prepared: &'p Prepared<'p>,
    limits: Limits,
    counts: Counts,
    situations: Coverage,
    /// Every state met, by key; with sleep sets, what it left out.
    known: HashMap<u128, Option<Expanded>>,
    /// The cores of the states met ([`Child::State`]'s `core`), with sleep
    /// sets: a new state whose core is known is a twin.
    cores: HashSet<u128>,
    /// The pairs of deliveries weighed, by oracle.
    weighed: Weighed,
    exhausted: bool,
    violation: Option<FailingSchedule>,
}

/// [`super::explore`], apart from serving the state directories for power
/// loss.
pub(super) fn explore_with(
    prepared: &Prepared,
    implementation: &dyn Implementation,
    names: RejectNames,
    limits: Limits,
    watch: &Watch,
    stop: &(dyn Fn() -> bool + Sync),
) -> Exploration {
    let mut counts = Counts {
        unclaimed: prepared.unclaimed,
        ..Counts::default()
    };
    let situations = Coverage::default();
    let root = prepared.root();
    let reduce = limits.sleep_sets;
    // The start itself, judged like any move; its oracle is the root's.
    let start = prepared
        .replayed(implementation, names, &[])
        .map(|(s, _)| reduce.then(|| KeptOracle::of(&s)));
    let root_oracle = match start {
        Ok(oracle) => oracle,
        Err(m) => {
            return Exploration {
                counts,
                situations,
                exhausted: false,
                violation: Some(FailingSchedule {
                    schedule: Vec::new(),
                    failure: m,
                }),
                power_loss: false,
            };
        }
    };
    counts.states = 1;
    let layer = vec![Node {
        schedule: Vec::new(),
        harness: root,
        sleep: Vec::new(),
        oracle: root_oracle,
        only: None,
        twin: false,
        origin: None,
    }];
    let context = Context {
        prepared,
        implementation,
        names,
        keep_oracle: reduce,
        watch,
        stop,
    };
    let search = Search {
        prepared,
        limits,
        counts,
        situations,
        known: HashMap::new(),
        cores: HashSet::new(),
        weighed: Weighed::default(),
        exhausted: true,
        violation: None,
    };
    std::thread::scope(|scope| {
        let mut pool = Workers::start(scope, limits.jobs, context);
        search.run(&mut pool, layer, watch)
    })
}

impl Search<'_> {
    /// Expands layer after layer until none is left, a violation is found,
    /// the search is interrupted or the bound on states is reached.
    fn run(mut self, pool: &mut Workers, mut layer: Vec<Node>, watch: &Watch) -> Exploration {
        let mut layer_no = 0usize;
        while !layer.is_empty() {
            layer_no += 1;
            // The workers keep the states of this layer, and those it reaches.
            let keep: Arc<HashSet<Origin>> =
                Arc::new(layer.iter().filter_map(|n| n.origin).collect());
            let since = pool.next_round();
            let work = self.work(&layer);
            if work.is_empty() {
                break;
            }
            let next = self.play_layer(pool, &layer, layer_no, work, &keep, since);
            self.counts.depth = layer[0].schedule.len() as u64 + 1;
            watch.states.store(self.counts.states, Ordering::Relaxed);
            watch.depth.store(self.counts.depth, Ordering::Relaxed);
            if self.violation.is_some() || !self.exhausted {
                self.exhausted = false;
                break;
            }
            if self.counts.states >= self.limits.max_states && !next.is_empty() {
                self.exhausted = false;
                break;
            }
            layer = next;
        }
        Exploration {
            counts: self.counts,
            situations: self.situations,
            exhausted: self.exhausted,
            violation: self.violation,
            power_loss: false,
        }
    }

    /// The children of a layer to play, in order, each with its sleep set.
    fn work(&mut self, layer: &[Node]) -> Vec<Work> {
        let reduce = self.limits.sleep_sets;
        let mut work: Vec<Work> = Vec::new();
        for (i, n) in layer.iter().enumerate() {
            let mut before: Vec<Move> = Vec::new();
            for mv in self.prepared.moves(&n.harness) {
                // A twin's other moves lead where they lead from the state
                // it is a twin of, which plays them.
                if n.twin && !mv.reads_last_answered() {
                    self.counts.slept += 1;
                    continue;
                }
                if reduce
                    && n.oracle.as_ref().is_some_and(|oracle| {
                        self.prepared.crash_never_reached(oracle, &n.harness, mv)
                    })
                {
                    self.counts.slept += 1;
                    continue;
                }
                if n.sleep.contains(&mv) {
                    if n.only.is_none() {
                        self.counts.slept += 1;
                    }
                    continue;
                }
                // Met again with a smaller sleep set: the moves it played
                // the first time are not played again.
                if n.only.as_ref().is_some_and(|only| !only.contains(&mv)) {
                    before.push(mv);
                    continue;
                }
                let sleep = match (&n.oracle, reduce) {
                    (Some(oracle), true) => n
                        .sleep
                        .iter()
                        .chain(&before)
                        .copied()
                        .filter(|&m| {
                            self.prepared
                                .commute(oracle, &n.harness, m, mv, &mut self.weighed)
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                work.push((i, mv, sleep));
                before.push(mv);
            }
        }
        work
    }

    /// Plays a layer's children and judges them in order: the next layer.
    fn play_layer(
        &mut self,
        pool: &mut Workers,
        layer: &[Node],
        layer_no: usize,
        work: Vec<Work>,
        keep: &Arc<HashSet<Origin>>,
        since: u32,
    ) -> Vec<Node> {
        // Each layer is played in two rounds: its moves, then the crashes
        // inside the requests its plain moves made (over a power-loss
        // state directory), whose number only playing the move tells.
        let mut next: Vec<Node> = Vec::new();
        let mut round = work;
        let mut inside_round = false;
        while !round.is_empty() {
            let jobs = round
                .iter()
                .map(|&(i, mv, _)| Job {
                    parent: i,
                    origin: layer[i].origin,
                    schedule: layer[i].schedule.clone(),
                    mv,
                })
                .collect();
            let (round_no, results) = pool.play(jobs, keep, since);
            let mut inside: Vec<Work> = Vec::new();
            for (k, ((i, mv, sleep), child)) in round.into_iter().zip(results).enumerate() {
                // Only an interrupt leaves a child unplayed before the first
                // that breaks a rule.
                let Some(child) = child else {
                    self.exhausted = false;
                    break;
                };
                self.counts.transitions += 1;
                self.counts.played += layer[i].schedule.len() as u64 + 1;
                let mut schedule = layer[i].schedule.clone();
                schedule.push(mv);
                match child {
                    Child::Violation(m) => {
                        self.violation = Some(FailingSchedule {
                            schedule,
                            failure: m,
                        });
                        break;
                    }
                    Child::State {
                        key,
                        core,
                        harness,
                        situations: reached,
                        oracle,
                        ops,
                    } => {
                        if !inside_round && layer[i].harness.budget.crashes > 0 {
                            inside.extend(
                                inside_points(&ops)
                                    .into_iter()
                                    .filter_map(|at| mv.crashed_inside(at))
                                    .map(|m| (i, m, Vec::new())),
                            );
                        }
                        let oracle = oracle.map(|o| *o);
                        self.situations.add(&reached);
                        let node = Node {
                            schedule,
                            harness,
                            sleep,
                            oracle,
                            only: None,
                            twin: false,
                            origin: Some(Origin::of(round_no, k)),
                        };
                        self.reached(key, core, node, layer_no, &mut next);
                    }
                }
            }
            if self.violation.is_some() || !self.exhausted || inside_round {
                break;
            }
            round = inside;
            inside_round = true;
        }
        next
    }

    /// A state a child reached, as `node` would expand it: counted, merged
    /// with the state of the same key if one is known, else put in the next
    /// layer, as a twin if a state of the same core is known.
    fn reached(
        &mut self,
        key: u128,
        core: Option<u128>,
        mut node: Node,
        layer_no: usize,
        next: &mut Vec<Node>,
    ) {
        if node.harness.complete() {
            self.counts.schedules += 1;
        }
        if self.limits.merge {
            if let Some(met) = self.known.get_mut(&key) {
                self.counts.merged += 1;
                if let Some(met) = met {
                    met.meet(&node.sleep, layer_no, next);
                }
                return;
            }
            let expanded = self.limits.sleep_sets.then(|| Expanded {
                sleep: node.sleep.clone(),
                pending: (layer_no, next.len()),
                schedule: node.schedule.clone(),
                harness: node.harness.clone(),
                oracle: node.oracle.clone(),
            });
            self.known.insert(key, expanded);
            if let (Some(core), true) = (core, self.limits.sleep_sets) {
                node.twin = !self.cores.insert(core);
            }
        }
        self.counts.states += 1;
        next.push(node);
    }
}
