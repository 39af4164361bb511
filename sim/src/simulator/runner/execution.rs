//! Executions: which commitment a step asks an agent to execute (the
//! executable ones, the refusals aimed by reason, boasts, grants about to
//! expire), and the execution itself with its checks.

use super::*;

impl Run<'_> {
    /// The expiry of the grant a COMMIT the workload said cites, if any.
    pub(super) fn grant_expiry(&self, commit: &Spoken) -> Option<i64> {
        let grant = commit.authority.as_ref()?;
        Some(self.scenario.grants.get(grant)?.expires_at?.0)
    }

    /// Agent `a`'s commitments the model would let it execute now.
    pub(super) fn executable<'v>(&self, a: usize, resolver: &'v Resolver) -> Vec<&'v Spoken> {
        let oracle = self.agents[a].oracle();
        let local = self.local(a);
        resolver
            .said
            .commitments_of(&self.agents[a].name)
            .into_iter()
            .filter(|c| {
                c.names.as_ref().is_some_and(|(t, id)| {
                    matches!(
                        oracle.would_execute(t, id, local),
                        Execution::Executed { .. }
                    )
                })
            })
            .collect()
    }

    /// Agent `a`'s commitments among `own` that the model would refuse now,
    /// by the reason it would give.
    pub(super) fn refused_by_reason<'v>(
        &self,
        a: usize,
        own: &[&'v Spoken],
    ) -> BTreeMap<Refusal, Vec<&'v Spoken>> {
        let oracle = self.agents[a].oracle();
        let local = self.local(a);
        let mut by_reason: BTreeMap<_, Vec<&Spoken>> = BTreeMap::new();
        for c in own {
            if let Some((t, id)) = &c.names {
                if let Execution::Refused(r) = oracle.would_execute(t, id, local) {
                    by_reason.entry(r).or_default().push(*c);
                }
            }
        }
        by_reason
    }

    /// A commitment the model would refuse, the reason drawn first and
    /// evenly among those it would give, so that every refusal is tried.
    pub(super) fn refused_pick<'v>(
        &self,
        a: usize,
        pick: u16,
        resolver: &'v Resolver,
    ) -> Option<(usize, &'v Spoken, Option<i64>)> {
        let n = self.agents.len();
        let mut by_reason: BTreeMap<Refusal, Vec<(usize, &Spoken)>> = BTreeMap::new();
        for b in (0..n)
            .map(|i| (a + i) % n)
            .filter(|b| self.agents[*b].is_up())
        {
            let own = resolver.said.commitments_of(&self.agents[b].name);
            for (r, cs) in self.refused_by_reason(b, &own) {
                by_reason
                    .entry(r)
                    .or_default()
                    .extend(cs.into_iter().map(|c| (b, c)));
            }
        }
        let pool = by_reason
            .values()
            .nth((pick as usize / 20) % by_reason.len().max(1))?;
        let (b, c) = pool[pick as usize % pool.len()];
        Some((b, c, None))
    }

    /// What an execute step asks, from its pick: which agent executes
    /// which commitment, and whether the clock is first moved to the
    /// commitment's grant expiry (by this many milliseconds from it).
    /// `None` when the step's kind of request has nothing to ask.
    ///
    /// Requests are aimed, so that every decision is reached often and
    /// where it is the only thing at stake; each kind goes to the first
    /// agent, from `a` on, that has something of its kind:
    /// - 11 in 20: a commitment the model would execute now (effects, and
    ///   the crashes around them, are common instead of rare), except half
    ///   of those whose grant is about to expire, kept for the next kind;
    /// - 2 in 20: the one a boast was last about, of those the model would
    ///   refuse for want of authority, by its committer whatever `a` (where
    ///   a receiver that took the boast for authority acts); when no boast
    ///   was made, one of these is of the kind above, and the other half
    ///   the time of that kind and half the time one of the refusals
    ///   below;
    /// - 4 in 20: one the model would execute now under a grant that
    ///   expires, with the clock moved to 1 ms before the expiry, to it
    ///   (half the time), or 1 ms after it;
    /// - 2 in 20: one the model would refuse, the reason drawn first and
    ///   evenly among those it would give, so that every refusal is tried;
    /// - 1 in 40 any commitment, and 1 in 40 a message that is no COMMIT.
    ///
    /// The pick is among the candidates, so it stays the same commitment
    /// when shrinking removes unrelated steps.
    pub(super) fn choose<'v>(
        &self,
        a: usize,
        pick: u16,
        resolver: &'v Resolver,
    ) -> Option<(usize, &'v Spoken, Option<i64>)> {
        let n = self.agents.len();
        let up = |b: &usize| self.agents[*b].is_up();
        let at = |pool: &[&'v Spoken]| picked(pool, pick.into()).copied();
        let from_a = (0..n).map(|i| (a + i) % n).filter(up);
        match pick % 20 {
            // Half the time a message that is no COMMIT, half the time any
            // commitment (so also other agents').
            0 if (pick / 20) % 2 == 0 => {
                let talk: Vec<&Spoken> = resolver
                    .said
                    .messages
                    .iter()
                    .filter(|m| m.act != Some(Act::Commit))
                    .collect();
                Some((a, at(&talk)?, None))
            }
            0 => Some((a, at(&resolver.said.all_commitments())?, None)),
            // A boast's commitment when a boast was made; else (as in most
            // runs before any) half the time a refusal, half the time one
            // ready, so that each keeps most of its share.
            1 => self.boasted(resolver).or_else(|| {
                if (pick / 20) % 2 == 0 {
                    self.refused_pick(a, pick, resolver)
                } else {
                    self.ready(a, pick, resolver)
                }
            }),
            2 | 3 => self.refused_pick(a, pick, resolver),
            5..=8 => {
                // The instant itself is the boundary most often got wrong.
                let delta = [-1i64, 0, 0, 1][(pick as usize / 20) % 4];
                from_a
                    .map(|b| {
                        let reachable = |e: i64| {
                            let at = e + delta - self.scenario.skew[b];
                            at >= self.now as i64 && at - self.now as i64 <= MAX_CLOCK_JUMP_MS
                        };
                        let ready: Vec<(&Spoken, i64)> = self
                            .executable(b, resolver)
                            .into_iter()
                            .filter_map(|c| Some((c, self.grant_expiry(c)?)))
                            .filter(|&(_, e)| reachable(e))
                            .collect();
                        // The nearest instant: the jump expires as few other
                        // grants as it can.
                        let first = ready.iter().map(|&(_, e)| e).min();
                        let nearest: Vec<&Spoken> = ready
                            .into_iter()
                            .filter(|&(_, e)| Some(e) == first)
                            .map(|(c, _)| c)
                            .collect();
                        (b, nearest)
                    })
                    .find(|(_, ready)| !ready.is_empty())
                    .and_then(|(b, ready)| Some((b, at(&ready)?, Some(delta))))
            }
            4 => self
                .boasted(resolver)
                .or_else(|| self.ready(a, pick, resolver)),
            _ => self.ready(a, pick, resolver),
        }
    }

    /// The commitment a boast was last about, of those whose committer is
    /// up and whose model would refuse them now for want of authority, and
    /// its committer: what a receiver that took the boast for authority
    /// would perform.
    pub(super) fn boasted<'v>(
        &self,
        resolver: &'v Resolver,
    ) -> Option<(usize, &'v Spoken, Option<i64>)> {
        let unauthorised = |b: usize, c: &Spoken| {
            let (oracle, local) = (self.agents[b].oracle(), self.local(b));
            c.names.as_ref().is_some_and(|(t, id)| {
                matches!(oracle.would_execute(t, id, local),
                    Execution::Refused(r) if inv::by_refusal(r) == inv::AUTHORITY)
            })
        };
        resolver
            .said
            .boasted
            .iter()
            .rev()
            .filter_map(|id| resolver.said.find(id.as_str()?))
            .find_map(|c| {
                let b = self.agents.iter().position(|x| c.is_from(&x.name))?;
                (self.agents[b].is_up() && unauthorised(b, c)).then_some((b, c, None))
            })
    }

    /// A commitment the model would execute now, of the first agent from
    /// `a` that has one.
    pub(super) fn ready<'v>(
        &self,
        a: usize,
        pick: u16,
        resolver: &'v Resolver,
    ) -> Option<(usize, &'v Spoken, Option<i64>)> {
        let n = self.agents.len();
        let at = |pool: &[&'v Spoken]| picked(pool, pick.into()).copied();
        (0..n)
            .map(|i| (a + i) % n)
            .filter(|b| self.agents[*b].is_up())
            // Half the commitments whose grant expires within reach of a
            // timed request (by their ID) are left to those, which meet the
            // expiry instant; the other half are executed while valid.
            .map(|b| {
                let soon = |c: &&Spoken| {
                    reserved_for_timing(c)
                        && self.grant_expiry(c).is_some_and(|e| {
                            let until = e - self.local(b).0;
                            (0..=RESERVE_WINDOW_MS).contains(&until)
                        })
                };
                let ready = self.executable(b, resolver);
                (
                    b,
                    ready.into_iter().filter(|c| !soon(c)).collect::<Vec<_>>(),
                )
            })
            .find(|(_, ready)| !ready.is_empty())
            .and_then(|(b, ready)| Some((b, at(&ready)?, None)))
    }

    pub(super) fn execute(&mut self, a: usize, pick: u16, resolver: &mut Resolver) -> Checked {
        let Some((a, chosen, timed)) = self.choose(a, pick, resolver) else {
            return Ok(());
        };
        if !self.agents[a].is_up() {
            return Ok(());
        }
        let name = self.agents[a].name.clone();
        let Some((thread, id)) = chosen.names.clone() else {
            return Ok(());
        };
        let expiry = self.grant_expiry(chosen);
        // Clocks only move forward, and by at most a few seconds.
        if let (Some(expires), Some(delta)) = (expiry, timed) {
            let at = expires + delta - self.scenario.skew[a];
            if at >= self.now as i64 && at - (self.now as i64) <= MAX_CLOCK_JUMP_MS {
                self.now = at as u64;
                self.happen(|at| Happening::Clock {
                    at,
                    agent: name.clone(),
                    delta,
                });
            }
        }
        let local = self.local(a);
        self.stats.executions += 1;
        // The crash points of an execution: around its effect.
        let point = self.agents[a]
            .pending_crash
            .filter(|p| matches!(p, CrashPoint::AfterEffect | CrashPoint::BeforeEffect));
        let asked =
            self.agents[a]
                .under_test
                .ask_to_execute(&self.world, &thread, &id, local, point);
        self.count_fell(a);
        if point.is_some() && asked.fired {
            self.agents[a].pending_crash = None;
        }
        self.stats.effects += asked.performed.len() as u64;
        self.stats.checks += 1;
        self.reach.on_execution(
            &mut self.stats.situations,
            a,
            id.as_str(),
            local.0,
            self.scenario.skew[a] != 0,
            expiry,
            &asked.decision,
        );
        if !asked.performed.is_empty() {
            self.reach.on_effect(thread.as_str(), id.as_str());
            resolver.said.note_executed(id.as_str());
        }
        let settled = self.agents[a].under_test.settle(
            asked,
            &self.world,
            &thread,
            &id,
            local,
            self.config.names,
        );
        match settled {
            Err(m) => Err(self.violation(Some(a), m)),
            Ok(Executed::Crashed) => {
                self.happen(|at| Happening::Execute {
                    at,
                    agent: name.clone(),
                    id: id.to_string(),
                    result: ExecutionResult::Crashed,
                });
                self.crashed(a, CrashWhen::Execution);
                Ok(())
            }
            Ok(Executed::Answered { actual, judged }) => {
                self.happen(|at| Happening::Execute {
                    at,
                    agent: name.clone(),
                    id: id.to_string(),
                    result: ExecutionResult::Answered(actual.clone()),
                });
                judged.map_err(|m| self.violation(Some(a), m))?;
                self.check_view(a, thread.as_str())
            }
        }
    }
}
