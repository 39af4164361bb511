//! The two calls whose answers a case judges: a delivery (its events
//! against the expectation, its frames against the delivery rules) and
//! an execution (its report against the effects the world saw). Each
//! also draws its line of the transcript, failing or not.

use super::*;

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
        let mut x = Exchange {
            step: i,
            op: "deliver",
            sender: Some(sender_of(frame, principal, &self.under_test.init().config)),
            gloss: shorthand::line(frame, Some(principal.as_str())),
            frame: Some(frame.to_vec()),
            answer: String::new(),
            fault: None,
            ok: true,
        };
        if let Some(c) = crash {
            x.fault = Some(match c {
                DeliverCrash::BeforeDurable => "crash before the frame is durable".to_owned(),
                DeliverCrash::AfterDurable => {
                    "crash after the frame is durable, before its outcome is taken".to_owned()
                }
            });
            x.answer = "(killed; no outcome)".to_owned();
            self.record(x);
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
                x.answer = ImplError::Crashed.to_string();
                x.ok = false;
                self.record(x);
                let breach = Breach::InventedCrash(Call::Delivery);
                return Err(self.breach(i, "an answer to deliver", breach));
            }
            Err(breach) => {
                x.answer = breach.actual();
                x.ok = false;
                self.record(x);
                return Err(self.breach(i, "an answer to deliver", breach));
            }
        };
        let actual: Vec<ComparedEvent> = d.events.iter().map(ComparedEvent::of).collect();
        x.answer = events_text(&actual);
        // The answer has the frame's own event first (the delivery rules
        // check it); once it matches the expectation, it is the outcome the
        // frame deserves.
        let deserved = d.events[0].outcome.clone();
        self.record(x);
        for out in &d.outgoing {
            self.record(Exchange {
                step: i,
                op: "outgoing",
                sender: Some(self.under_test.me().to_owned()),
                gloss: shorthand::line(out, None),
                frame: Some(out.clone()),
                answer: String::new(),
                fault: None,
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
            self.mark_last_failed();
            match j {
                Judged::Breach(breach) => self.breach(i, "an answer to deliver", breach),
                Judged::Events(failure) => failure,
            }
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
    ) -> Checked {
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
            return Err(if same(RejectNames::Ignored) {
                self.fail_by_name(i, want, got)
            } else {
                self.unexpected(i, want, got)
            });
        }
        if expect.no_outgoing && sent > 0 {
            return Err(self.unexpected(
                i,
                "no frame sent by the receiver".into(),
                format!("{sent} frame(s) sent"),
            ));
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
        let mut x = Exchange {
            step: i,
            op: "execute",
            sender: None,
            gloss: format!("execute {commitment} in {thread}"),
            frame: None,
            answer: String::new(),
            fault: None,
            ok: true,
        };
        if !performed.is_empty() {
            x.gloss.push_str(&format!(
                " (performed {})",
                performed
                    .iter()
                    .map(|k| k.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if let Some(crash) = crash {
            x.fault = Some(
                match crash {
                    ExecuteCrash::BeforeEffect => {
                        "crash at the effect, before it happens (its intent durable)"
                    }
                    ExecuteCrash::AfterEffect => {
                        "crash right after the effect, before it is reported"
                    }
                }
                .to_owned(),
            );
            x.answer = "(killed; no answer)".to_owned();
            self.record(x);
            self.crashed_as_scheduled(i, Call::Execution, result.map(drop), fired)?;
            if performed.len() > 1 {
                return Err(self.broke(
                    i,
                    Failure::new(
                        inv::AT_MOST_ONCE,
                        "at most one effect per execution",
                        format!("{} effects", performed.len()),
                    ),
                ));
            }
            self.under_test.crash();
            return Ok(());
        }
        let e = match result {
            Ok(e) => e,
            Err(err) => {
                x.answer = err.to_string();
                x.ok = false;
                self.record(x);
                return Err(self.broke(i, Failure::unsound("an answer to execute", &err)));
            }
        };
        x.answer = execution_text(&e);
        self.record(x);
        let consistent = match &e {
            Execution::Executed { effect } => performed == [effect.clone()],
            Execution::Refused(_) => performed.is_empty(),
        };
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
                    format!(
                        "performed [{}]",
                        performed
                            .iter()
                            .map(|k| k.0.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
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
