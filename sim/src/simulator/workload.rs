//! What happens in a run, as a list of steps.
//!
//! A step names what to do with small indices ("the 3rd request", "agent 2")
//! that are resolved against the run's state when the step is played. So a
//! step list stays meaningful when steps are removed, which is what lets a
//! failing run shrink to a minimal one.

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::catalogue::boast::{Named, Shape};
use crate::contract::storage::PowerCut;

/// One honest utterance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Talk {
    Ask {
        from: u8,
        thread: u8,
    },
    Tell {
        from: u8,
        thread: u8,
        reply: Option<u8>,
    },
    Propose {
        from: u8,
        request: u8,
    },
    Request {
        from: u8,
        to: u8,
        thread: u8,
        grant: u8,
    },
    Commit {
        from: u8,
        request: u8,
        grant: u8,
    },
    Report {
        commit: u8,
        state: u8,
        follow: Option<u8>,
        evidence: bool,
    },
    Revise {
        target: u8,
        previous: Option<u8>,
        withdraw: bool,
    },
    Ack {
        from: u8,
        target: u8,
    },
    Challenge {
        from: u8,
        target: u8,
    },
    /// The original requester asks to replace a commitment, and the
    /// committer commits to the new request.
    Renew {
        commit: u8,
    },
}

/// Frames an adversary or a misbehaving sender produces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Attack {
    /// An earlier message sent again under mallory's principal, or a new
    /// one claiming to come from a victim.
    Spoof { of: u8, victim: u8 },
    /// An earlier ID reused with other content.
    ReuseId { of: u8 },
    /// A REVISE of someone else's message.
    ForeignRevise { target: u8, by: u8 },
    /// A REPORT on someone else's commitment.
    ForeignReport { commit: u8, by: u8 },
    /// A reply to a message that was never sent.
    Dangling { from: u8 },
    /// Talk that names a grant as if it were authority, about the
    /// `target`th commitment, in one [`Shape`]; `pick` chooses among the
    /// grants it could name and where its extensions sit.
    Boast { target: u8, pick: u8, shape: Shape },
    /// An earlier message, broken one wire rule at a time: `how` picks the
    /// [`Malformation`](crate::catalogue::malformed::Malformation).
    Malformed { of: u8, how: u8 },
    /// An earlier message delivered to an agent it was not addressed to.
    Misroute { of: u8, to: u8 },
    /// A REVISE by the owner whose replacement is not a body of the target's act.
    BadReplacement { target: u8 },
    /// A REQUEST to replace a commitment, from someone other than its requester.
    ForeignRenewal { commit: u8, by: u8 },
    /// An earlier COMMIT, byte for byte, delivered again to its addressees
    /// and to its own sender: the network replays it, perhaps after its
    /// effect was performed.
    Replay { commit: u8 },
    /// An earlier message sent from a participant no identity context binds,
    /// or (with the profile's rules) into a thread no context knows.
    Stranger { of: u8, thread: bool },
    /// The sender of an earlier message sends another one under the same ID
    /// in the other identity context: IDs are qualified by their context, so
    /// it is a new message there.
    OtherContext { of: u8 },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// `net` seeds this message's network fate (latency, loss, copies).
    Say {
        talk: Talk,
        net: u64,
    },
    Attack {
        attack: Attack,
        net: u64,
    },
    /// Ask an agent to execute one of its commitments.
    Execute {
        agent: u8,
        pick: u16,
    },
    /// Crash an agent: 0 now, 1 at its next sync before it is durable, 2 at
    /// its next sync once durable, 3 right after its next effect, 4 at its
    /// next effect before it happens (its intent durable), 5 and 6 now and
    /// again while it recovers (at the recovery's first sync, before or
    /// after it is durable).
    Crash {
        agent: u8,
        point: u8,
        /// How the crash falls over a power-loss state directory (fault
        /// `power-loss`); drawn from the seed and the step's place, never
        /// by the step's strategy, so that runs without it draw the same.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cut: Option<PowerCut>,
    },
    /// Cut the link from agent `a` to agent `b` (and back unless one way).
    Partition {
        a: u8,
        b: u8,
        one_way: bool,
        ms: u16,
    },
    /// Let time pass.
    Wait {
        ms: u16,
    },
}

/// Which kinds of step a run uses (swarm testing: each run a random subset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mix {
    /// Bit i enables talk kind i (in `Talk`'s order).
    pub talk: u16,
    /// Bit i enables attack kind i (in `Attack`'s order).
    pub attacks: u16,
    pub crashes: bool,
    pub partitions: bool,
    /// Whether attacks may test rules only the profile states: a frame
    /// delivered to someone it is not addressed to (L-ID-5), a number out
    /// of binary64's range (P-JSON-8). Off for a `--level core` judgement,
    /// which must rest on the seed alone.
    #[serde(default = "on")]
    pub profile_rules: bool,
}

fn on() -> bool {
    true
}

impl Mix {
    /// The attack bit of `Attack::Misroute`.
    const MISROUTE: u16 = 1 << 7;
    /// How many kinds of attack there are (bits of `attacks`).
    pub const ATTACK_KINDS: u32 = 13;

    pub fn everything(crashes: bool, partitions: bool) -> Mix {
        Mix {
            talk: 0x3ff,
            attacks: (1 << Mix::ATTACK_KINDS) - 1,
            crashes,
            partitions,
            profile_rules: true,
        }
    }

    /// The same mix without the attacks that test profile-only rules.
    pub fn seed_rules_only(self) -> Mix {
        Mix {
            attacks: self.attacks & !Mix::MISROUTE,
            profile_rules: false,
            ..self
        }
    }
}

fn talk_strategy(mix: Mix) -> BoxedStrategy<Talk> {
    let u = || any::<u8>();
    let all: Vec<(u32, BoxedStrategy<Talk>)> = vec![
        (
            1,
            (u(), u())
                .prop_map(|(from, thread)| Talk::Ask { from, thread })
                .boxed(),
        ),
        (
            1,
            (u(), u(), proptest::option::of(u()))
                .prop_map(|(from, thread, reply)| Talk::Tell {
                    from,
                    thread,
                    reply,
                })
                .boxed(),
        ),
        (
            1,
            (u(), u())
                .prop_map(|(from, request)| Talk::Propose { from, request })
                .boxed(),
        ),
        (
            4,
            (u(), u(), u(), u())
                .prop_map(|(from, to, thread, grant)| Talk::Request {
                    from,
                    to,
                    thread,
                    grant,
                })
                .boxed(),
        ),
        (
            7,
            (u(), u(), u())
                .prop_map(|(from, request, grant)| Talk::Commit {
                    from,
                    request,
                    grant,
                })
                .boxed(),
        ),
        (
            5,
            (u(), u(), proptest::option::of(u()), any::<bool>())
                .prop_map(|(commit, state, follow, evidence)| Talk::Report {
                    commit,
                    state,
                    follow,
                    evidence,
                })
                .boxed(),
        ),
        (
            3,
            (
                u(),
                proptest::option::weighted(0.3, u()),
                proptest::bool::weighted(0.3),
            )
                .prop_map(|(target, previous, withdraw)| Talk::Revise {
                    target,
                    previous,
                    withdraw,
                })
                .boxed(),
        ),
        (
            1,
            (u(), u())
                .prop_map(|(from, target)| Talk::Ack { from, target })
                .boxed(),
        ),
        (
            1,
            (u(), u())
                .prop_map(|(from, target)| Talk::Challenge { from, target })
                .boxed(),
        ),
        (1, u().prop_map(|commit| Talk::Renew { commit }).boxed()),
    ];
    let enabled: Vec<(u32, BoxedStrategy<Talk>)> = all
        .into_iter()
        .enumerate()
        .filter(|(i, _)| mix.talk & (1 << i) != 0)
        .map(|(_, s)| s)
        .collect();
    if enabled.is_empty() {
        return (any::<u8>(), any::<u8>())
            .prop_map(|(from, thread)| Talk::Ask { from, thread })
            .boxed();
    }
    proptest::strategy::Union::new_weighted(enabled).boxed()
}

/// A boast's shape: every allowed shape, three in four naming a real
/// grant. A forged grant is refused by any receiver that looks grants up;
/// a real one is where a receiver that reads the wrong place shows it.
fn shape_strategy() -> BoxedStrategy<Shape> {
    let of = |grant: Named| -> Vec<Shape> {
        Shape::ALL
            .iter()
            .copied()
            .filter(|s| s.grant == grant)
            .collect()
    };
    proptest::strategy::Union::new_weighted(vec![
        (3, proptest::sample::select(of(Named::Real)).boxed()),
        (1, proptest::sample::select(of(Named::Forged)).boxed()),
    ])
    .boxed()
}

/// The places of `Attack::Boast` and `Attack::Malformed` among the attacks.
const BOAST: usize = 5;
const MALFORMED: usize = 6;
const BOAST_WEIGHT: u32 = 16;

fn attack_strategy(mix: Mix) -> Option<BoxedStrategy<Attack>> {
    let u = || any::<u8>();
    let all: Vec<BoxedStrategy<Attack>> = vec![
        (u(), u())
            .prop_map(|(of, victim)| Attack::Spoof { of, victim })
            .boxed(),
        u().prop_map(|of| Attack::ReuseId { of }).boxed(),
        (u(), u())
            .prop_map(|(target, by)| Attack::ForeignRevise { target, by })
            .boxed(),
        (u(), u())
            .prop_map(|(commit, by)| Attack::ForeignReport { commit, by })
            .boxed(),
        u().prop_map(|from| Attack::Dangling { from }).boxed(),
        (u(), u(), shape_strategy())
            .prop_map(|(target, pick, shape)| Attack::Boast {
                target,
                pick,
                shape,
            })
            .boxed(),
        (
            u(),
            0..(crate::catalogue::malformed::Malformation::ALL.len()
                * crate::catalogue::malformed::VARIANTS) as u8,
        )
            .prop_map(|(of, how)| Attack::Malformed { of, how })
            .boxed(),
        (u(), u())
            .prop_map(|(of, to)| Attack::Misroute { of, to })
            .boxed(),
        u().prop_map(|target| Attack::BadReplacement { target })
            .boxed(),
        (u(), u())
            .prop_map(|(commit, by)| Attack::ForeignRenewal { commit, by })
            .boxed(),
        u().prop_map(|commit| Attack::Replay { commit }).boxed(),
        (u(), any::<bool>())
            .prop_map(|(of, thread)| Attack::Stranger { of, thread })
            .boxed(),
        u().prop_map(|of| Attack::OtherContext { of }).boxed(),
    ];
    // Broken frames weigh eight: they are forty-two kinds in one. Boasts
    // weigh BOAST_WEIGHT: they are seventy-eight shapes in one, and a
    // shape counts only where its committer accepts it.
    let enabled: Vec<(u32, BoxedStrategy<Attack>)> = all
        .into_iter()
        .enumerate()
        .filter(|(i, _)| mix.attacks & (1 << i) != 0)
        .map(|(i, s)| {
            let weight = match i {
                MALFORMED => 8,
                BOAST => BOAST_WEIGHT,
                _ => 1,
            };
            (weight, s)
        })
        .collect();
    (!enabled.is_empty()).then(|| proptest::strategy::Union::new_weighted(enabled).boxed())
}

/// The strategy for one step under a mix.
pub fn step_strategy(mix: Mix) -> BoxedStrategy<Step> {
    let u = || any::<u8>();
    let mut arms: Vec<(u32, BoxedStrategy<Step>)> = vec![
        (
            12,
            (talk_strategy(mix), any::<u64>())
                .prop_map(|(talk, net)| Step::Say { talk, net })
                .boxed(),
        ),
        (
            3,
            (u(), any::<u16>())
                .prop_map(|(agent, pick)| Step::Execute { agent, pick })
                .boxed(),
        ),
        (1, (0..400u16).prop_map(|ms| Step::Wait { ms }).boxed()),
    ];
    if let Some(attacks) = attack_strategy(mix) {
        arms.push((
            3,
            (attacks, any::<u64>())
                .prop_map(|(attack, net)| Step::Attack { attack, net })
                .boxed(),
        ));
    }
    if mix.crashes {
        arms.push((
            1,
            // `point % 7` is where; for the two sync points, `point / 7`
            // says whether one more delivery passes first.
            (u(), 0..14u8)
                .prop_map(|(agent, point)| Step::Crash {
                    agent,
                    point,
                    cut: None,
                })
                .boxed(),
        ));
    }
    if mix.partitions {
        arms.push((
            1,
            (u(), u(), any::<bool>(), 50..600u16)
                .prop_map(|(a, b, one_way, ms)| Step::Partition { a, b, one_way, ms })
                .boxed(),
        ));
    }
    proptest::strategy::Union::new_weighted(arms).boxed()
}

/// A claim, as the workload writes them.
pub fn claim(text: &str, evidence: &[&str]) -> Value {
    json!({"text": text, "basis": "observed", "confidence": "high", "scope": "This run.",
           "evidence": evidence, "alternatives": []})
}
