//! The network as the run drives it: a frame sent with the faults its seed
//! draws, and the copies due delivered in time order, a lost or unreachable
//! copy put back for retransmission. Kept apart from the judging of a
//! delivery, which happens the same whichever way a copy came.

use super::*;

impl Run<'_> {
    /// Puts a frame on the network, with the faults its seed draws.
    pub(super) fn send(&mut self, out: Outgoing, net: u64) {
        self.stats.messages += 1;
        let claimed = out.claimed.clone();
        let spoofed = out.spoofed;
        let index = self.sent.len();
        // The one parse of this frame: the catalogue, the ACK-of-ACK rule
        // and every oracle that receives it read this message.
        let parsed = tern_model::ledger::parse_shared(&out.frame);
        if self.record {
            let to = out
                .recipients
                .iter()
                .map(|r| self.agents[*r].name.clone())
                .collect();
            let frame = out.frame.clone();
            self.happen(|at| Happening::Send {
                at,
                index,
                from: claimed,
                to,
                frame,
                spoofed,
            });
        }
        let actor = out.actor;
        let recipients = out.recipients.clone();
        let message = parsed.as_ref().ok().map(|m| m.message());
        if let Some(m) = message {
            self.acks.note(m);
        }
        let mut facts = self.reach.on_send(message, out.malformed);
        facts.boast = out.boast.clone();
        self.facts.push(facts);
        self.parsed.push(parsed);
        self.sent.push(out);
        let added = self.network.add_frame();
        debug_assert_eq!(added, index, "the network numbers frames as they are sent");
        if let Some(a) = actor {
            self.network.enqueue(self.now, a, index, false);
        }
        for r in recipients {
            let fate = Fate::draw(net, r, self.now, &self.config.faults);
            if fate.reordered {
                self.fault(Fault::Reorder);
            }
            if fate.delayed {
                self.fault(Fault::Delay);
            }
            self.network.enqueue(fate.at, r, index, fate.lost);
            if let Some(later) = fate.second_copy {
                self.network.enqueue(later, r, index, false);
                self.fault(Fault::Duplicate);
                let to = self.agents[r].name.clone();
                self.happen(|at| Happening::SecondCopy { at, index, to });
            }
        }
    }

    fn cut(&self, from: Option<usize>, to: usize) -> bool {
        self.network.cut(from, to, self.now)
    }

    /// Delivers everything due by now, in time order.
    pub(super) fn deliver_due(&mut self) -> Checked {
        // Each agent's last copy due now that will reach it. Nothing is sent
        // while copies are delivered, so this set is final; the views that
        // follow can go out with that delivery (`Receiver::views_follow`).
        let mut last: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
        for (key, copy) in self.network.due(self.now) {
            if self.agents[copy.to].pipelines
                && !copy.lost
                && !self.cut(self.sent[copy.sent].actor, copy.to)
            {
                last.insert(copy.to, key);
            }
        }
        while let Some(due) = self.network.take_due(self.now) {
            let sent = due.copy.sent;
            let views_follow = last.get(&due.copy.to) == Some(&due.key);
            self.deliver_copy(due.copy, views_follow)?;
            // (Delivering may have put a copy back: a retransmission.)
            if self.network.copies_of(sent) == 0 {
                self.sent[sent].frame = Vec::new();
            }
        }
        Ok(())
    }

    fn deliver_copy(&mut self, copy: InFlight, views_follow: bool) -> Checked {
        let to = copy.to;
        let actor = self.sent[copy.sent].actor;
        if copy.lost {
            self.fault(Fault::Drop);
            let name = self.agents[to].name.clone();
            // Say whose copy it is: a misrouted frame or a replay also goes
            // to agents its `to` does not name.
            let whose = self.facts[copy.sent].copy_to(&name);
            self.happen(|at| Happening::Lost {
                at,
                index: copy.sent,
                whose,
                to: name,
            });
            self.network
                .enqueue(self.now + RETRANSMIT_MS, to, copy.sent, false);
            return Ok(());
        }
        if !self.agents[to].is_up() || self.cut(actor, to) {
            // Unreachable: retransmitted later.
            self.network
                .enqueue(self.now + RETRANSMIT_MS, to, copy.sent, false);
            return Ok(());
        }
        let frame = self.sent[copy.sent].frame.clone();
        let principal = self.sent[copy.sent].principal.clone();
        self.deliver_to(to, &frame, &principal, copy.sent, views_follow)
    }
}
