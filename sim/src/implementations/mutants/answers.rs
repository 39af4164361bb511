//! How each mutant answers the harness: the reference's answer to every
//! call, with the one wrong of the mutant being played put into it.

use super::*;

impl<S: Durable + 'static, W: Effects + Clone + 'static> Receiver for MutantReceiver<S, W> {
    fn identity(&self) -> Identity {
        Identity::builtin(format!("tern-sim mutant {}", self.mutant.name()))
    }

    fn fork(&self, storage: &Storage, world: &AgentWorld) -> Option<Box<dyn Receiver>> {
        Some(Box::new(MutantReceiver {
            mutant: self.mutant,
            inner: self.inner.fork_onto(storage, world)?,
            init: self.init.clone(),
            world: self.world.fork_onto(world)?,
            seen: self.seen.clone(),
            owed_ack: self.owed_ack.clone(),
            arrived: self.arrived.clone(),
            forgotten: self.forgotten.clone(),
            id_contexts: self.id_contexts.clone(),
            redelivered: self.redelivered.clone(),
            orphaned: self.orphaned.clone(),
            hidden: self.hidden.clone(),
            twice: self.twice.clone(),
        }))
    }

    fn deliver(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Delivered, ImplError> {
        type Part<S, W> = fn(
            &mut MutantReceiver<S, W>,
            &[u8],
            &Principal,
            LocalTime,
        ) -> Result<Option<Delivered>, ImplError>;
        let parts: [Part<S, W>; 5] = [
            Self::misread,
            Self::misidentifies,
            Self::misjudges,
            Self::misanswers,
            Self::misremembers,
        ];
        for part in parts {
            if let Some(d) = part(self, frame, principal, now)? {
                return Ok(d);
            }
        }
        self.by_kin(frame, principal, now)
    }

    fn execute(
        &mut self,
        thread: &ThreadId,
        commitment: &MessageRef,
        now: LocalTime,
    ) -> Result<Execution, ImplError> {
        // Local time matters to an execution only through grant expiry.
        let when = match self.mutant {
            Mutant::IgnoresExpiry => LocalTime(0),
            Mutant::ExpiresEarly => LocalTime(now.0.saturating_add(1)),
            // Expired when `now > expires_at`: one millisecond earlier
            // gives exactly that under the reference's `now >= expires_at`.
            Mutant::ValidAtExpiry => LocalTime(now.0.saturating_sub(1)),
            Mutant::ExpiryAtArrival => self
                .arrived
                .get(&format!("{thread}/{commitment}"))
                .copied()
                .unwrap_or(now),
            _ => now,
        };
        let decision = self.inner.execute(thread, commitment, when)?;
        let Execution::Refused(refusal) = decision else {
            if self.mutant == Mutant::MisreportsExecution {
                return Ok(Execution::Refused(Refusal::NoAuthority));
            }
            return Ok(decision);
        };
        let forced = match (self.mutant, refusal) {
            (Mutant::ClaimsAuthorise, Refusal::NoAuthority | Refusal::UnknownGrant) => {
                self.thread_has_evidence(thread)
            }
            (
                Mutant::ExtensionGrantAuthorises,
                Refusal::NoAuthority
                | Refusal::UnknownGrant
                | Refusal::GrantNotForExecutor
                | Refusal::OutOfScope
                | Refusal::GrantExpired
                | Refusal::ApprovalRequired,
            ) => self.grant_named_in_a_reply(thread, commitment, when),
            (Mutant::ExecutesOthers, Refusal::NotOwnCommitment) => true,
            (Mutant::ReExecutes, Refusal::AlreadyExecuted) => true,
            (
                Mutant::ExecutesWithdrawn,
                Refusal::Withdrawn | Refusal::Superseded | Refusal::Disputed,
            ) => true,
            (Mutant::IgnoresConflict, Refusal::RevisionConflict) => true,
            (Mutant::ExecutesPending, Refusal::PendingCommitment) => true,
            (m, r) => m.kin() == Kin::IgnoresRefusal && m.situation() == Situation::Refused(r),
        };
        if forced {
            self.force(thread, commitment)
        } else {
            Ok(decision)
        }
    }

    fn view_digests(&mut self, threads: &[ThreadId]) -> Option<Result<Vec<ViewDigest>, ImplError>> {
        // Views that are edited, or whose reading acts, are not the
        // ledger's: they are asked as texts.
        if self.mutant.edits_views() || self.mutant == Mutant::EffectInView {
            return None;
        }
        self.inner.view_digests(threads)
    }

    fn view(&mut self, thread: &ThreadId) -> Result<View, ImplError> {
        if self.mutant == Mutant::EffectInView {
            let probe = EffectKey(format!("{}/view-probe", self.context_of(thread)));
            self.world.perform(&probe)?;
        }
        let view = self.inner.view(thread)?;
        // Only the mutants whose defect is in the view pay for editing it.
        if !self.mutant.edits_views() {
            return Ok(view);
        }
        let mut v = view.to_value();
        self.edit_view(thread, &mut v);
        Ok(View::from_value(&v))
    }
}

impl Mutant {
    /// Whether the mutant's defect is written into its views, after its
    /// ledger made them: such views are more than the ledger's, so they
    /// are never answered by digest.
    fn edits_views(self) -> bool {
        matches!(
            self,
            Mutant::IndexBeforeData
                | Mutant::StoresTwice
                | Mutant::ForgetsEquivocatedEffects
                | Mutant::ForgetsConflictedEffects
                | Mutant::RedeliveryResets
                | Mutant::LastRevisionWins
                | Mutant::ReopensTerminal
                | Mutant::BlockedIsDone
                | Mutant::HidesPending
                | Mutant::ErasesHistory
                | Mutant::ProposeCommits
        )
    }
}

/// How each family of mutants answers a delivery.
impl<S: Durable + 'static, W: Effects + Clone + 'static> MutantReceiver<S, W> {
    /// The mutants that read a frame wrongly: each repairs, or lets
    /// through, what its defect is about, and passes every other frame on
    /// untouched. `None` for any other mutant.
    fn misread(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Option<Delivered>, ImplError> {
        let d = match self.mutant {
            Mutant::DuplicateKeys => match serde_json::from_slice::<Value>(frame) {
                Ok(v)
                    if tern_model::parse_frame(frame)
                        .is_err_and(|e| e.message.contains("duplicate key")) =>
                {
                    self.inner.deliver(
                        &serde_json::to_vec(&v).unwrap_or_default(),
                        principal,
                        now,
                    )?
                }
                _ => self.inner.deliver(frame, principal, now)?,
            },
            Mutant::NonFinite => match std::str::from_utf8(frame) {
                Ok(t) if t.contains("1e999") => {
                    self.inner
                        .deliver(t.replace("1e999", "0").as_bytes(), principal, now)?
                }
                _ => self.inner.deliver(frame, principal, now)?,
            },
            Mutant::LossyUtf8 => {
                self.inner
                    .deliver(String::from_utf8_lossy(frame).as_bytes(), principal, now)?
            }
            Mutant::AnyVersion => match std::str::from_utf8(frame) {
                Ok(t) if t.contains("\"tern\":\"0.2\"") => {
                    let patched = t.replacen("\"tern\":\"0.2\"", "\"tern\":\"0.1\"", 1);
                    self.inner.deliver(patched.as_bytes(), principal, now)?
                }
                _ => self.inner.deliver(frame, principal, now)?,
            },
            Mutant::BodyDuplicateKeys => {
                let forgiven = tern_model::parse_frame(frame)
                    .is_err_and(|e| e.message.contains("duplicate key"))
                    .then(|| body_keys::body_forgiven(frame))
                    .flatten();
                self.inner
                    .deliver(forgiven.as_deref().unwrap_or(frame), principal, now)?
            }
            _ => return Ok(None),
        };
        Ok(Some(d))
    }

    /// The mutants wrong about who sent a frame or which content an ID holds.
    /// `None` for any other mutant.
    fn misidentifies(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Option<Delivered>, ImplError> {
        let d = match self.mutant {
            Mutant::TrustsFrom => {
                let claimed = tern_model::parse_frame(frame).ok().and_then(|m| {
                    match &self.init.config.contexts {
                        Contexts::Fixed { contexts, threads } => threads
                            .get(&m.thread)
                            .and_then(|c| contexts.get(c))
                            .and_then(|c| c.bindings.get(&m.from).cloned()),
                        Contexts::Open => Principal::new(m.from.as_str()).ok(),
                    }
                });
                self.inner
                    .deliver(frame, claimed.as_ref().unwrap_or(principal), now)?
            }
            Mutant::FirstWins => {
                let id = tern_model::parse_frame(frame)
                    .ok()
                    .map(|m| format!("{}/{}", m.thread, m.id));
                match id {
                    Some(id) => match self.seen.get(&id) {
                        Some(first) if first.as_slice() != frame => {
                            let m = tern_model::parse_frame(frame).ok();
                            return Ok(Some(Delivered {
                                events: vec![Event {
                                    kind: EventKind::Delivered,
                                    origin: 0,
                                    id: m.as_ref().map(|m| m.id.clone()),
                                    thread: m.map(|m| m.thread),
                                    outcome: Outcome::Duplicate,
                                }],
                                outgoing: Vec::new(),
                            }));
                        }
                        _ => {
                            let d = self.inner.deliver(frame, principal, now)?;
                            if !matches!(
                                d.events.first().map(|e| &e.outcome),
                                Some(Outcome::Rejected(_))
                            ) {
                                self.seen.entry(id).or_insert_with(|| frame.to_vec());
                            }
                            d
                        }
                    },
                    None => self.inner.deliver(frame, principal, now)?,
                }
            }
            Mutant::ContextBlindIds => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                if let Ok(m) = tern_model::parse_frame(frame) {
                    let context = self.context_of(&m.thread);
                    let id = m.id.to_string();
                    if let Some(first) = d.events.first_mut() {
                        let stored =
                            matches!(first.outcome, Outcome::Accepted | Outcome::Pending { .. });
                        match self.id_contexts.get(&id) {
                            Some(c) if *c != context && stored => {
                                first.outcome =
                                    Outcome::Rejected(tern_model::ledger::Rejection::new(
                                        RejectClass::IdConflict,
                                        tern_model::Pointer::root(),
                                        format!("ID `{id}` is already in use"),
                                    ));
                            }
                            None if stored => {
                                self.id_contexts.insert(id, context);
                            }
                            _ => {}
                        }
                    }
                }
                d
            }
            _ => return Ok(None),
        };
        Ok(Some(d))
    }

    /// The mutants that give a frame another outcome than the reference's, or fewer events.
    /// `None` for any other mutant.
    fn misjudges(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Option<Delivered>, ImplError> {
        let d = match self.mutant {
            Mutant::InfersPending => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                if let Some(first) = d.events.first_mut() {
                    if matches!(first.outcome, Outcome::Pending { .. }) {
                        first.outcome = Outcome::Accepted;
                    }
                }
                d
            }
            Mutant::AcceptsUnknownFields => {
                let d = self.inner.deliver(frame, principal, now)?;
                let d = accepted_instead(d, RejectClass::Body);
                accepted_instead(d, RejectClass::Envelope)
            }
            Mutant::AcceptsMisrouted => accepted_instead(
                self.inner.deliver(frame, principal, now)?,
                RejectClass::NotAddressed,
            ),
            Mutant::LooseReferences => accepted_instead(
                self.inner.deliver(frame, principal, now)?,
                RejectClass::Reference,
            ),
            Mutant::LooseChains => accepted_instead(
                self.inner.deliver(frame, principal, now)?,
                RejectClass::RevisionChain,
            ),
            Mutant::AnyReplacement => accepted_instead(
                self.inner.deliver(frame, principal, now)?,
                RejectClass::Replacement,
            ),
            Mutant::AnyoneRenews => accepted_instead(
                self.inner.deliver(frame, principal, now)?,
                RejectClass::ReplacesNotRequester,
            ),
            Mutant::NoDedup => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                if let Some(first) = d.events.first_mut() {
                    if first.outcome == Outcome::Duplicate {
                        first.outcome = Outcome::Accepted;
                    }
                }
                d
            }
            Mutant::RejectsChallenges => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                let challenge = tern_model::parse_frame(frame)
                    .is_ok_and(|m| m.act() == tern_model::Act::Challenge);
                if let Some(first) = d.events.first_mut() {
                    if challenge && first.outcome == Outcome::Accepted {
                        first.outcome = Outcome::Rejected(tern_model::ledger::Rejection::new(
                            RejectClass::Body,
                            tern_model::wire::Pointer::of(&["act"]),
                            "CHALLENGE is not supported",
                        ));
                    }
                }
                d
            }
            Mutant::SilentReleases => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                d.events.truncate(1);
                d
            }
            Mutant::AnyoneReports => accepted_instead(
                self.inner.deliver(frame, principal, now)?,
                RejectClass::NotAuthor,
            ),
            Mutant::RevisesOthers => accepted_instead(
                self.inner.deliver(frame, principal, now)?,
                RejectClass::ForeignRevision,
            ),
            Mutant::RevisesRevisions => {
                let d = self.inner.deliver(frame, principal, now)?;
                if self.targets_a_revise(frame) {
                    accepted_instead(d, RejectClass::NotRevisable)
                } else {
                    d
                }
            }
            Mutant::NeverInvalidates => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                d.events.retain(|e| e.kind != EventKind::Invalidated);
                d
            }
            _ => return Ok(None),
        };
        Ok(Some(d))
    }

    /// The mutants that answer a frame with frames they must not send, or fail on it.
    /// `None` for any other mutant.
    fn misanswers(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Option<Delivered>, ImplError> {
        let d = match self.mutant {
            Mutant::AcksAcks => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                if let (Ok(m), Some(Outcome::Accepted)) = (
                    tern_model::parse_frame(frame),
                    d.events.first().map(|e| &e.outcome),
                ) {
                    if m.act() == tern_model::Act::Ack {
                        d.outgoing.push(ack_of(self.init.participant.as_str(), &m));
                    }
                }
                d
            }
            Mutant::AcksAcksLater => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                if matches!(
                    d.events.first().map(|e| &e.outcome),
                    Some(Outcome::Accepted)
                ) {
                    if let Some(owed) = self.owed_ack.take() {
                        d.outgoing
                            .push(ack_of(self.init.participant.as_str(), &owed));
                    }
                    match tern_model::parse_frame(frame) {
                        Ok(m) if m.act() == tern_model::Act::Ack => self.owed_ack = Some(m),
                        _ => {}
                    }
                }
                d
            }
            Mutant::RepliesToInvalid => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                if matches!(
                    d.events.first().map(|e| &e.outcome),
                    Some(Outcome::Rejected(_))
                ) {
                    d.outgoing
                        .push(b"{\"error\":\"I could not read your message\"}".to_vec());
                }
                d
            }
            Mutant::CrashesOnChallenge => {
                if tern_model::parse_frame(frame)
                    .is_ok_and(|m| m.act() == tern_model::Act::Challenge)
                {
                    return Err(ImplError::Misbehaved(
                        "internal error: unsupported act CHALLENGE".into(),
                    ));
                }
                self.inner.deliver(frame, principal, now)?
            }
            _ => return Ok(None),
        };
        Ok(Some(d))
    }

    /// The mutants whose defect is in what they remember of a delivery, for later calls.
    /// `None` for any other mutant.
    fn misremembers(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Option<Delivered>, ImplError> {
        let d = match self.mutant {
            Mutant::DedupAfterAnswer | Mutant::StoresTwice => {
                self.deliver_then_note(frame, principal, now)?
            }
            Mutant::IndexBeforeData => self.note_then_deliver(frame, principal, now)?,
            Mutant::RedeliveryResets => {
                let d = self.inner.deliver(frame, principal, now)?;
                if let (Ok(m), Some(Outcome::Duplicate)) = (
                    tern_model::parse_frame(frame),
                    d.events.first().map(|e| &e.outcome),
                ) {
                    if m.act() == tern_model::Act::Commit {
                        let effect = self.effect_of(&m.thread, &m.id);
                        self.redelivered.insert(effect.0);
                    }
                }
                d
            }
            Mutant::ExpiryAtArrival => {
                let d = self.inner.deliver(frame, principal, now)?;
                if let Ok(m) = tern_model::parse_frame(frame) {
                    let stored = !matches!(
                        d.events.first().map(|e| &e.outcome),
                        Some(Outcome::Rejected(_)) | None
                    );
                    if stored && m.act() == tern_model::Act::Commit {
                        self.arrived.entry(key_of(&m)).or_insert(now);
                    }
                }
                d
            }
            _ => return Ok(None),
        };
        Ok(Some(d))
    }

    /// The mutants of a family ([`Kin`]), each wrong in its one situation:
    /// a reject class it accepts, or a malformation whose check it skips.
    fn by_kin(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Delivered, ImplError> {
        let m = self.mutant;
        let d = self.inner.deliver(frame, principal, now)?;
        Ok(match (m.kin(), m.situation()) {
            (Kin::AcceptsRejected, Situation::Rejected(class)) => accepted_instead(d, class),
            // Only a frame the reference rejected can be one whose
            // check the mutant lacks.
            (Kin::SkipsCheck, Situation::Malformed(kind))
                if matches!(
                    d.events.first().map(|e| &e.outcome),
                    Some(Outcome::Rejected(_))
                ) =>
            {
                match tern_model::parse_frame(frame) {
                    Err(e) if skipped::recognises(kind, frame, &e) => {
                        accepted_instead(d, RejectClass::from(e.class))
                    }
                    _ => d,
                }
            }
            _ => d,
        })
    }

    /// Writes the mutant's defect into its view `v` of `thread`, which its
    /// ledger made right.
    fn edit_view(&self, thread: &ThreadId, v: &mut Value) {
        match self.mutant {
            Mutant::IndexBeforeData => {
                for list in ["messages", "commitments", "pending"] {
                    if let Some(items) = v[list].as_array_mut() {
                        items.retain(|m| !noted(&self.hidden, thread, m));
                    }
                }
            }
            Mutant::StoresTwice => {
                if let Some(ms) = v["messages"].as_array_mut() {
                    let again: Vec<Value> = ms
                        .iter()
                        .filter(|m| noted(&self.twice, thread, m))
                        .cloned()
                        .collect();
                    ms.extend(again);
                }
            }
            Mutant::ForgetsEquivocatedEffects | Mutant::ForgetsConflictedEffects => {
                // The commitments the conflict is taken to have undone: the
                // equivocated messages, or the targets of conflicted chains.
                let (list, field, value, id) = if self.mutant == Mutant::ForgetsEquivocatedEffects {
                    ("messages", "status", "equivocated", "id")
                } else {
                    ("revisions", "state", "conflict", "target")
                };
                let undone: BTreeSet<String> = v[list]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|x| x[field] == value)
                    .filter_map(|x| MessageRef::new(x[id].as_str()?).ok())
                    .map(|id| self.effect_of(thread, &id).0)
                    .collect();
                if let Some(effects) = v["effects"].as_array_mut() {
                    effects.retain(|e| e.as_str().is_none_or(|e| !undone.contains(e)));
                }
            }
            Mutant::RedeliveryResets => {
                if let Some(effects) = v["effects"].as_array_mut() {
                    effects.retain(|e| e.as_str().is_none_or(|e| !self.redelivered.contains(e)));
                }
            }
            Mutant::LastRevisionWins => {
                if let Some(revisions) = v["revisions"].as_array_mut() {
                    for r in revisions {
                        if r["state"] == "conflict" {
                            let last = r["conflict"]["successors"]
                                .as_array()
                                .and_then(|s| s.last().cloned())
                                .unwrap_or(Value::Null);
                            r["state"] = json!("replaced");
                            r["head"] = last;
                            r["conflict"] = Value::Null;
                        }
                    }
                }
            }
            Mutant::ReopensTerminal => {
                if let Some(cs) = v["commitments"].as_array_mut() {
                    for c in cs {
                        if c["annotations"]
                            .as_array()
                            .is_some_and(|a| a.iter().any(|x| x == "reopen_ignored"))
                        {
                            c["progress"] = json!("active");
                        }
                    }
                }
            }
            Mutant::BlockedIsDone => {
                if let Some(cs) = v["commitments"].as_array_mut() {
                    for c in cs {
                        if c["progress"] == "blocked" {
                            c["progress"] = json!("fulfilled");
                        }
                    }
                }
            }
            Mutant::HidesPending => {
                v["pending"] = json!([]);
            }
            Mutant::ErasesHistory => {
                let revised: Vec<Value> = v["revisions"]
                    .as_array()
                    .map(|rs| {
                        rs.iter()
                            .filter(|r| r["state"] != "original")
                            .map(|r| r["target"].clone())
                            .collect()
                    })
                    .unwrap_or_default();
                if let Some(ms) = v["messages"].as_array_mut() {
                    ms.retain(|m| !revised.contains(&m["id"]));
                }
            }
            Mutant::ProposeCommits => {
                let proposals: Vec<Value> = v["messages"]
                    .as_array()
                    .map(|ms| {
                        ms.iter()
                            .filter(|m| m["act"] == "PROPOSE" && m["status"] == "accepted")
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                if let Some(cs) = v["commitments"].as_array_mut() {
                    for p in proposals {
                        cs.push(json!({"id": p["id"], "committer": p["from"], "request": p["content"]["body"]["request"],
                                       "due": null, "progress": "unreported", "annotations": [], "disputes": [],
                                       "superseded_by": [], "reports": []}));
                    }
                }
            }
            _ => {}
        }
    }
}
