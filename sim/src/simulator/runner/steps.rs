//! A step of the workload turned into what happens in the run: a frame
//! said or forged, an execution, a crash armed, a partition, time passing.
//! The dispatch on the step list, apart from how each thing is judged.

use super::*;

impl Run<'_> {
    pub(super) fn play_step(&mut self, step: &Step, resolver: &mut Resolver) -> Checked {
        let n = self.agents.len();
        resolver.now = self.now as i64;
        match step {
            Step::Say { talk, net } => {
                if let Some(out) = resolver.talk(talk) {
                    self.send(out, *net);
                }
            }
            Step::Attack { attack, net } => {
                if let Some(out) = resolver.attack(attack) {
                    self.send(out, *net);
                }
            }
            Step::Execute { agent, pick } => self.execute(*agent as usize % n, *pick, resolver)?,
            Step::Crash { agent, point, cut } => {
                let a = *agent as usize % n;
                if self.agents[a].is_up() {
                    self.agents[a].storage().set_cut(*cut);
                    match point % 7 {
                        // Now, and again at the recovery's first sync:
                        // before what it writes is durable, or after.
                        5 | 6 => {
                            self.agents[a].recovery_crash = Some(if point % 7 == 5 {
                                CrashPoint::BeforeSync
                            } else {
                                CrashPoint::AfterSync
                            });
                            self.crash_between_operations(a, CrashWhen::IdleThenRecovery);
                        }
                        0 => self.crash_between_operations(a, CrashWhen::Idle),
                        p => {
                            // Half the sync crashes fall at the second
                            // delivery from now.
                            let later = p <= 2 && (point / 7) % 2 == 1;
                            let point = [
                                CrashPoint::BeforeSync,
                                CrashPoint::AfterSync,
                                CrashPoint::AfterEffect,
                                CrashPoint::BeforeEffect,
                            ][(p - 1) as usize];
                            self.agents[a].pending_crash = Some(point);
                            self.agents[a].crash_after = u8::from(later);
                            let when = if later {
                                " of its second delivery from now"
                            } else {
                                ""
                            };
                            let name = self.agents[a].name.clone();
                            self.happen(|at| Happening::Fault {
                                at,
                                agent: name,
                                fault: FaultEvent::WillCrash { point, when },
                            });
                        }
                    }
                }
            }
            Step::Partition { a, b, one_way, ms } => {
                let (a, b) = (*a as usize % n, *b as usize % n);
                if a != b {
                    let until = self.now + u64::from(*ms);
                    self.network.partition(a, b, *one_way, until);
                    self.fault(Fault::Partition);
                    let (x, y) = (self.agents[a].name.clone(), self.agents[b].name.clone());
                    let arrow = if *one_way { "↛" } else { "↮" };
                    self.happen(|at| Happening::Fault {
                        at,
                        agent: x,
                        fault: FaultEvent::Partition {
                            to: y,
                            arrow,
                            ms: *ms,
                        },
                    });
                }
            }
            Step::Wait { ms } => self.now += u64::from(*ms),
        }
        Ok(())
    }
}
