//! The two calls whose answers a case judges: a delivery (its events
//! against the expectation, its frames against the delivery rules) and
//! an execution (its report against the effects the world saw). Each
//! also records its line of the transcript, failing or not.

use super::*;

/// The line of a delivery's transcript that a failure falls on, for the
/// diagram to draw in red: the delivery itself (its events, its effects),
/// or the `k`th frame it sent.
enum Culprit {
    Delivery,
    Sent(usize),
}

impl Player<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn deliver(
        &mut self,
        i: usize,
        frame: &[u8],
        principal: &Principal,
        at: LocalTime,
        expect: Option<&ExpectDeliver>,
        crash: Option<DeliverCrash>,
    ) -> Checked {
        let before = self.world.len();
        let answer = self.under_test.deliver(
            frame,
            principal,
            at,
            crash.map(DeliverCrash::point),
            &[],
            (),
        );
        let sender = sender_of(frame, principal, &self.under_test.init().config);
        let delivered = |answer| Did::Delivered {
            frame: frame.to_vec(),
            principal: principal.clone(),
            sender,
            crash,
            answer,
        };
        if crash.is_some() {
            self.record(Exchange {
                step: i,
                did: delivered(Answer::Killed),
                ok: true,
            });
            match answer {
                Err(breach) => {
                    return Err(self.breach(i, "a crash at the scheduled point", breach))
                }
                // One that never reached its crash point is killed once it
                // has answered.
                Ok(Asked::Answered { .. }) => self.under_test.crash(),
                Ok(Asked::Crashed) => {}
            }
            return Ok(());
        }
        let d: Delivered = match answer {
            Ok(Asked::Answered { reply, .. }) => reply,
            Ok(Asked::Crashed) => {
                // No crash was scheduled, so none could fire.
                self.record(Exchange {
                    step: i,
                    did: delivered(Answer::Failed(ImplError::Crashed.to_string())),
                    ok: false,
                });
                let breach = Breach::InventedCrash(Call::Delivery);
                return Err(self.breach(i, "an answer to deliver", breach));
            }
            Err(breach) => {
                self.record(Exchange {
                    step: i,
                    did: delivered(Answer::Failed(breach.actual())),
                    ok: false,
                });
                return Err(self.breach(i, "an answer to deliver", breach));
            }
        };
        let actual: Vec<ComparedEvent> = d.events.iter().map(ComparedEvent::of).collect();
        // The answer has the frame's own event first (the delivery rules
        // check it); once it matches the expectation, it is the outcome the
        // frame deserves.
        let deserved = d.events[0].outcome.clone();
        let delivered_at = self.transcript.len();
        self.record(Exchange {
            step: i,
            did: delivered(Answer::Given(actual.clone())),
            ok: true,
        });
        for out in &d.outgoing {
            self.record(Exchange {
                step: i,
                did: Did::Sent {
                    by: self.under_test.me().to_owned(),
                    frame: out.clone(),
                },
                ok: true,
            });
        }
        self.acks.note_frame(frame);
        let me = self.under_test.me().to_owned();
        let mut acks = std::mem::take(&mut self.acks);
        let judged = delivery::answered(
            before,
            self.world.len(),
            || self.expected_events(i, expect, &actual, d.outgoing.len()),
            &deserved,
            &d.outgoing,
            &me,
            &mut acks,
        );
        self.acks = acks;
        judged.map_err(|j| {
            let (failure, culprit) = match j {
                Judged::Events(blamed) => blamed,
                Judged::Effects(breach) => (
                    self.breach(i, "an answer to deliver", breach),
                    Culprit::Delivery,
                ),
                Judged::Sent { frame, breach } => (
                    self.breach(i, "an answer to deliver", breach),
                    Culprit::Sent(frame),
                ),
            };
            let line = match culprit {
                Culprit::Delivery => delivered_at,
                Culprit::Sent(k) => delivered_at + 1 + k,
            };
            if let Some(x) = self.transcript.get_mut(line) {
                x.ok = false;
            }
            failure
        })
    }

    /// A delivery's events (and, if the case says so, that it sent
    /// nothing: `sent` frames) against the case's expectation, if any.
    fn expected_events(
        &self,
        i: usize,
        expect: Option<&ExpectDeliver>,
        actual: &[ComparedEvent],
        sent: usize,
    ) -> Result<(), (StepFailure, Culprit)> {
        let Some(expect) = expect else {
            return Ok(());
        };
        // The loader makes every expectation start with `delivered`.
        let first_delivered = actual
            .first()
            .is_some_and(|e| e.kind == EventKindKey::Delivered);
        let same =
            |names: RejectNames| first_delivered && names.same_events(&expect.events, actual);
        if !same(RejectNames::Compared) {
            let (want, got) = (events_text(&expect.events), events_text(actual));
            let failure = if same(RejectNames::Ignored) {
                self.fail_by_name(i, want, got)
            } else {
                self.unexpected(i, want, got)
            };
            return Err((failure, Culprit::Delivery));
        }
        if expect.no_outgoing && sent > 0 {
            let failure = self.unexpected(
                i,
                "no frame sent by the receiver".into(),
                format!("{sent} frame(s) sent"),
            );
            return Err((failure, Culprit::Sent(0)));
        }
        Ok(())
    }

    pub(super) fn execute(
        &mut self,
        i: usize,
        thread: &tern_model::message::ThreadId,
        commitment: &tern_model::message::MessageRef,
        at: LocalTime,
        expect: Option<&Execution>,
        crash: Option<ExecuteCrash>,
    ) -> Checked {
        let before = self.world.len();
        let storage = self.under_test.storage().clone();
        let (result, fired) = storage.with_crash(crash.map(ExecuteCrash::point), || {
            self.receiver().execute(thread, commitment, at)
        });
        let performed: Vec<EffectKey> = self
            .world
            .log_since(before)
            .into_iter()
            .map(|(_, k)| k)
            .collect();
        let executed = |performed, answer| Did::Executed {
            thread: thread.clone(),
            commitment: commitment.clone(),
            performed,
            crash,
            answer,
        };
        if crash.is_some() {
            let many = performed.len();
            self.record(Exchange {
                step: i,
                did: executed(performed, Answer::Killed),
                ok: true,
            });
            self.crashed_as_scheduled(i, Call::Execution, result.map(drop), fired)?;
            if many > 1 {
                return Err(self.broke(
                    i,
                    Failure::new(
                        inv::AT_MOST_ONCE,
                        "at most one effect per execution",
                        format!("{many} effects"),
                    ),
                ));
            }
            self.under_test.crash();
            return Ok(());
        }
        let e = match result {
            Ok(e) => e,
            Err(err) => {
                self.record(Exchange {
                    step: i,
                    did: executed(performed, Answer::Failed(err.to_string())),
                    ok: false,
                });
                return Err(self.broke(i, Failure::unsound("an answer to execute", &err)));
            }
        };
        let consistent = match &e {
            Execution::Executed { effect } => performed == [effect.clone()],
            Execution::Refused(_) => performed.is_empty(),
        };
        let effects = effect_names(&performed);
        self.record(Exchange {
            step: i,
            did: executed(performed, Answer::Given(e.clone())),
            ok: true,
        });
        if !consistent {
            self.mark_last_failed();
            return Err(self.broke(
                i,
                Failure::new(
                    inv::EXECUTIONS,
                    format!(
                        "the world to see exactly what was reported: {}",
                        execution_text(&e)
                    ),
                    format!("performed [{effects}]"),
                ),
            ));
        }
        if let Some(expect) = expect {
            if !RejectNames::Compared.same_execution(expect, &e) {
                self.mark_last_failed();
                let (want, got) = (execution_text(expect), execution_text(&e));
                return Err(if RejectNames::Ignored.same_execution(expect, &e) {
                    self.fail_by_name(i, want, got)
                } else {
                    self.unexpected(i, want, got)
                });
            }
        }
        Ok(())
    }
}
