//! The shapes of an authority boast: talk that names a grant where the seed
//! says no authority can come from (S1.15, S3.13, S5.7, S8.10).
//!
//! A receiver that takes a boast for authority reads one place of one act
//! in one position of the conversation, so one shape proves nothing about
//! the others: a receiver can ignore a forged grant in a TELL's extensions
//! and still honour a real one named in the extensions of an ACK of the
//! COMMIT. So a boast varies along every axis the profile leaves open, and
//! every allowed combination is a situation of the catalogue of its own.

use serde::{Deserialize, Serialize};

/// Where the grant is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// The text of a claim.
    Claims,
    /// The `result` of a top-level evidence object that a claim cites.
    Evidence,
    /// `authority_ref` in `extensions`, of the envelope or (with the
    /// profile's rules) of the body.
    Extensions,
}

/// The act that carries the boast.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Carrier {
    /// From the adversary.
    Tell,
    /// From the adversary, about the commitment's REQUEST.
    Propose,
    /// From the committer: only the commitment's author may report (S2.7).
    Report,
    /// From the adversary.
    Ack,
    /// From the committer, of its own REPORT on the commitment or of the
    /// COMMIT itself: a REVISE targets only the sender's own message (S4.12).
    Revise,
}

/// What the boast's envelope `reply` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answers {
    /// The COMMIT the boast is about.
    Commit,
    /// The REQUEST that COMMIT answers.
    Request,
    /// Nothing: `reply` is null.
    Neither,
}

/// Whether the grant named is in the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Named {
    /// A grant of the registry, the committer's own for the thread when it
    /// has one: the grant that would authorise the commitment, were it the
    /// COMMIT's `authority_ref`.
    Real,
    /// A grant nobody has.
    Forged,
}

impl Place {
    pub const ALL: [Place; 3] = [Place::Claims, Place::Evidence, Place::Extensions];

    fn name(self) -> &'static str {
        match self {
            Place::Claims => "claims",
            Place::Evidence => "evidence",
            Place::Extensions => "extensions",
        }
    }

    /// The seed clauses that say this place carries no authority.
    fn clauses(self) -> &'static [&'static str] {
        match self {
            Place::Claims => &["S8.10", "S3.4", "S5.7"],
            Place::Evidence => &["S5.7", "S3.13"],
            Place::Extensions => &["S1.15", "S5.7"],
        }
    }
}

impl Carrier {
    pub const ALL: [Carrier; 5] = [
        Carrier::Tell,
        Carrier::Propose,
        Carrier::Report,
        Carrier::Ack,
        Carrier::Revise,
    ];

    pub fn act(self) -> &'static str {
        match self {
            Carrier::Tell => "TELL",
            Carrier::Propose => "PROPOSE",
            Carrier::Report => "REPORT",
            Carrier::Ack => "ACK",
            Carrier::Revise => "REVISE",
        }
    }

    /// Whether the act's body holds claims: a PROPOSE's and an ACK's have
    /// exactly their own fields (docs/profile.md 4.5, 4.6), and a REVISE's
    /// claims are those of its replacement.
    const fn has_claims(self) -> bool {
        matches!(self, Carrier::Tell | Carrier::Report | Carrier::Revise)
    }

    fn article(self) -> &'static str {
        match self {
            Carrier::Ack => "an",
            _ => "a",
        }
    }
}

impl Answers {
    pub const ALL: [Answers; 3] = [Answers::Commit, Answers::Request, Answers::Neither];

    fn name(self) -> &'static str {
        match self {
            Answers::Commit => "replying to the COMMIT",
            Answers::Request => "replying to its REQUEST",
            Answers::Neither => "replying to nothing",
        }
    }
}

impl Named {
    pub const ALL: [Named; 2] = [Named::Real, Named::Forged];

    fn name(self) -> &'static str {
        match self {
            Named::Real => "real grant",
            Named::Forged => "forged grant",
        }
    }
}

/// One shape of boast.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Shape {
    pub place: Place,
    pub carrier: Carrier,
    pub reply: Answers,
    pub grant: Named,
}

/// How many shapes the profile allows: three places in the three acts
/// with claims, two in the other two, each in three positions with two
/// kinds of grant.
const COUNT: usize = (3 * 3 + 2 * 2) * 3 * 2;

impl Shape {
    pub const fn new(place: Place, carrier: Carrier, reply: Answers, grant: Named) -> Shape {
        Shape {
            place,
            carrier,
            reply,
            grant,
        }
    }

    /// Every shape the profile allows, in table order.
    pub const ALL: [Shape; COUNT] = every_shape();

    /// Whether the profile lets the carrier hold a boast in that place.
    pub const fn allowed(self) -> bool {
        !matches!(self.place, Place::Claims) || self.carrier.has_claims()
    }

    /// The shape's place in [`Shape::ALL`].
    pub fn index(self) -> usize {
        Shape::ALL
            .iter()
            .position(|s| *s == self)
            .unwrap_or_default()
    }

    pub fn name(self) -> String {
        format!(
            "boast: {} of {} {} {}, {}",
            self.place.name(),
            self.carrier.article(),
            self.carrier.act(),
            self.reply.name(),
            self.grant.name()
        )
    }

    pub fn clauses(self) -> &'static [&'static str] {
        self.place.clauses()
    }
}

/// A boast put on the network: its shape, and the committer, whose
/// receiver is the one a boast could sway into executing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boasted {
    pub shape: Shape,
    pub committer: String,
}

const fn every_shape() -> [Shape; COUNT] {
    let first = Shape::new(Place::Claims, Carrier::Tell, Answers::Commit, Named::Real);
    let mut out = [first; COUNT];
    let mut n = 0;
    let (mut p, mut c, mut r, mut g) = (0, 0, 0, 0);
    while p < Place::ALL.len() {
        while c < Carrier::ALL.len() {
            while r < Answers::ALL.len() {
                while g < Named::ALL.len() {
                    let s = Shape::new(
                        Place::ALL[p],
                        Carrier::ALL[c],
                        Answers::ALL[r],
                        Named::ALL[g],
                    );
                    if s.allowed() {
                        out[n] = s;
                        n += 1;
                    }
                    g += 1;
                }
                g = 0;
                r += 1;
            }
            r = 0;
            c += 1;
        }
        c = 0;
        p += 1;
    }
    assert!(n == COUNT, "COUNT is the number of allowed shapes");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_allowed_shape_once_in_order() {
        let mut all = Vec::new();
        for place in Place::ALL {
            for carrier in Carrier::ALL {
                for reply in Answers::ALL {
                    for grant in Named::ALL {
                        let s = Shape::new(place, carrier, reply, grant);
                        if s.allowed() {
                            all.push(s);
                        }
                    }
                }
            }
        }
        assert_eq!(all, Shape::ALL);
        for (i, s) in Shape::ALL.iter().enumerate() {
            assert_eq!(s.index(), i);
        }
        assert!(!Shape::new(Place::Claims, Carrier::Ack, Answers::Commit, Named::Real).allowed());
        assert!(!Shape::new(
            Place::Claims,
            Carrier::Propose,
            Answers::Neither,
            Named::Forged
        )
        .allowed());
    }
}
