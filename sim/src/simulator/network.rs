//! The run's network: copies of sent frames on their way to agents, in
//! order of arrival, the partitions that cut links for a while, and the
//! fate each copy draws from its seed. It knows frames only by their index
//! in the run's list of sent frames; what a delivery means is the runner's.

use std::collections::BTreeMap;

use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::faults::{Fault, FaultSet};

/// One copy of a sent frame on its way to one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InFlight {
    pub to: usize,
    /// The frame's index among those sent.
    pub sent: usize,
    /// Dropped on the way: the transport retransmits it.
    pub lost: bool,
}

/// A copy taken off the network, with where it was in the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Due {
    pub copy: InFlight,
    pub key: (u64, u64),
}

/// What the network does to the copy of one frame for one recipient,
/// drawn from the frame's `net` value and the recipient alone, so that a
/// shrunk run keeps each copy's fate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fate {
    pub at: u64,
    pub reordered: bool,
    pub delayed: bool,
    pub lost: bool,
    /// When a second copy arrives, if the frame is duplicated.
    pub second_copy: Option<u64>,
}

impl Fate {
    /// The fate of the copy of a frame sent at `now` with seed `net` to
    /// `recipient`, under `faults`.
    pub fn draw(net: u64, recipient: usize, now: u64, faults: &FaultSet) -> Fate {
        let mut rng =
            ChaCha8Rng::seed_from_u64(net ^ (recipient as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut at = now + 1 + rng.next_u64() % 5;
        let reordered = faults.has(Fault::Reorder) && rng.next_u64() % 2 == 0;
        if reordered {
            at += rng.next_u64() % 80;
        }
        let delayed = faults.has(Fault::Delay) && rng.next_u64() % 10 == 0;
        if delayed {
            at += 200 + rng.next_u64() % 800;
        }
        let lost = faults.has(Fault::Drop) && rng.next_u64() % 7 == 0;
        let second_copy = (faults.has(Fault::Duplicate) && rng.next_u64() % 6 == 0)
            .then(|| at + 1 + rng.next_u64() % 150);
        Fate {
            at,
            reordered,
            delayed,
            lost,
            second_copy,
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Network {
    /// By (arrival time, order of sending): ties go in the order queued.
    queue: BTreeMap<(u64, u64), InFlight>,
    queued: u64,
    /// How many copies of each sent frame are on the network.
    copies: Vec<u32>,
    /// (from, to, until): no copy from `from` reaches `to` before `until`.
    cuts: Vec<(usize, usize, u64)>,
}

impl Network {
    /// A frame was sent: it gets the next index, with no copy yet.
    pub fn add_frame(&mut self) -> usize {
        self.copies.push(0);
        self.copies.len() - 1
    }

    pub fn enqueue(&mut self, at: u64, to: usize, sent: usize, lost: bool) {
        self.copies[sent] += 1;
        self.queued += 1;
        self.queue
            .insert((at, self.queued), InFlight { to, sent, lost });
    }

    /// Cuts the link from `a` to `b` until `until`, and back too unless
    /// `one_way`.
    pub fn partition(&mut self, a: usize, b: usize, one_way: bool, until: u64) {
        self.cuts.push((a, b, until));
        if !one_way {
            self.cuts.push((b, a, until));
        }
    }

    /// Heals every partition.
    pub fn heal(&mut self) {
        self.cuts.clear();
    }

    /// Whether a copy from `from` (a frame with no sender agent is never
    /// cut) to `to` is cut at `now`.
    pub fn cut(&self, from: Option<usize>, to: usize, now: u64) -> bool {
        let Some(from) = from else { return false };
        self.cuts
            .iter()
            .any(|&(a, b, until)| a == from && b == to && until > now)
    }

    /// The copies due by `now`, in arrival order, without taking them.
    pub fn due(&self, now: u64) -> impl Iterator<Item = ((u64, u64), &InFlight)> {
        self.queue.range(..=(now, u64::MAX)).map(|(k, c)| (*k, c))
    }

    /// Takes the first copy due by `now`.
    pub fn take_due(&mut self, now: u64) -> Option<Due> {
        let (&key, _) = self.queue.first_key_value()?;
        if key.0 > now {
            return None;
        }
        let copy = self.queue.remove(&key)?;
        self.copies[copy.sent] -= 1;
        Some(Due { copy, key })
    }

    /// How many copies of frame `sent` are on the network: none left, and
    /// the frame's bytes may be let go (a copy a crash cut is redelivered
    /// from the agent's own record of it).
    pub fn copies_of(&self, sent: usize) -> u32 {
        self.copies[sent]
    }

    /// When the next copy arrives, if any is on the network.
    pub fn next_arrival(&self) -> Option<u64> {
        self.queue.first_key_value().map(|(&(at, _), _)| at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_come_in_arrival_order_then_sending_order() {
        let mut n = Network::default();
        let (f0, f1) = (n.add_frame(), n.add_frame());
        n.enqueue(5, 0, f0, false);
        n.enqueue(3, 1, f1, false);
        n.enqueue(5, 2, f1, true);
        assert_eq!(n.next_arrival(), Some(3));
        assert_eq!(n.due(4).count(), 1);
        let first = n.take_due(10).unwrap();
        assert_eq!((first.copy.to, n.copies_of(f1)), (1, 1));
        let second = n.take_due(10).unwrap();
        assert_eq!((second.copy.to, n.copies_of(f0)), (0, 0));
        let third = n.take_due(10).unwrap();
        assert_eq!(
            (third.copy.to, third.copy.lost, n.copies_of(f1)),
            (2, true, 0)
        );
        assert_eq!(n.take_due(10), None);
        assert_eq!(n.next_arrival(), None);
    }

    #[test]
    fn nothing_is_taken_before_it_is_due() {
        let mut n = Network::default();
        let f = n.add_frame();
        n.enqueue(7, 0, f, false);
        assert_eq!(n.take_due(6), None);
        assert!(n.take_due(7).is_some());
    }

    #[test]
    fn a_partition_cuts_its_direction_until_it_ends_and_heals() {
        let mut n = Network::default();
        n.partition(0, 1, true, 100);
        assert!(n.cut(Some(0), 1, 99));
        assert!(!n.cut(Some(0), 1, 100), "over at its end");
        assert!(!n.cut(Some(1), 0, 50), "one way");
        assert!(!n.cut(None, 1, 50), "a frame no agent sent is never cut");
        n.partition(2, 3, false, 100);
        assert!(n.cut(Some(3), 2, 50));
        n.heal();
        assert!(!n.cut(Some(0), 1, 50) && !n.cut(Some(3), 2, 50));
    }

    #[test]
    fn a_fate_depends_on_the_seed_and_recipient_alone_and_obeys_the_faults() {
        let all = FaultSet::all();
        let none = FaultSet::none();
        assert_eq!(Fate::draw(9, 2, 100, &all), Fate::draw(9, 2, 100, &all));
        let mut seen = (false, false, false, false);
        for net in 0..400 {
            let calm = Fate::draw(net, 1, 100, &none);
            assert!(!calm.reordered && !calm.delayed && !calm.lost);
            assert_eq!(calm.second_copy, None);
            assert!((101..=105).contains(&calm.at), "{calm:?}");
            let f = Fate::draw(net, 1, 100, &all);
            assert!(f.at > 100);
            if let Some(later) = f.second_copy {
                assert!(later > f.at);
            }
            seen.0 |= f.reordered;
            seen.1 |= f.delayed;
            seen.2 |= f.lost;
            seen.3 |= f.second_copy.is_some();
        }
        assert_eq!(seen, (true, true, true, true), "every fault is drawn");
    }
}
