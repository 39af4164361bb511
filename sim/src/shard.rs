//! Splitting a body of work N ways, so that N machines each play a share
//! and `tern-sim merge` puts the shares back together (docs/scale.md).
//!
//! Every split is a pure function of the work and of `K/N`, never of the
//! machine or the clock, so that any shard can be re-run alone and give
//! the same part. Seeds go by residue (shard K of N takes the seeds whose
//! offset from the first is K-1 modulo N), which keeps each shard's load
//! even; named work (corpus cases, scopes, mutants) goes by a stable hash
//! of its name, so that adding a case moves no other case between shards.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Shard `index` of `count`, counted from 1 as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawShard", into = "RawShard")]
pub struct Shard {
    index: u32,
    count: u32,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShardError {
    #[error("`{0}` is not K/N (for example 2/4)")]
    Syntax(String),
    #[error("N must be at least 1 (got {0})")]
    NoShards(u32),
    #[error("K must be between 1 and N (got {index}/{count})")]
    OutOfRange { index: u32, count: u32 },
    #[error("N must be at most {max} (got {count}): more shards than that is not a split a merge can check", max = Shard::MAX_COUNT)]
    TooMany { count: u32 },
}

impl Shard {
    /// All the work: what an unsharded command plays.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// The most shards one piece of work splits into. A CI matrix has at
    /// most a few hundred jobs; the cap keeps a part's header (and a
    /// merge's list of missing shards) small, whatever a part claims.
    pub const MAX_COUNT: u32 = 1024;

    pub fn new(index: u32, count: u32) -> Result<Shard, ShardError> {
        if count == 0 {
            return Err(ShardError::NoShards(count));
        }
        if count > Shard::MAX_COUNT {
            return Err(ShardError::TooMany { count });
        }
        if index == 0 || index > count {
            return Err(ShardError::OutOfRange { index, count });
        }
        Ok(Shard { index, count })
    }

    /// `K/N`, as `--shard` takes it.
    pub fn parse(text: &str) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax(text.to_owned());
        let (k, n) = text.split_once('/').ok_or_else(syntax)?;
        let number = |s: &str| {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(syntax());
            }
            s.parse::<u32>().map_err(|_| syntax())
        };
        Shard::new(number(k)?, number(n)?)
    }

    pub fn index(self) -> u32 {
        self.index
    }

    pub fn count(self) -> u32 {
        self.count
    }

    pub fn is_whole(self) -> bool {
        self.count == 1
    }

    /// Whether the work at `position` (counted from 0) of a sequence is
    /// this shard's.
    pub fn takes_position(self, position: u64) -> bool {
        position % u64::from(self.count) == u64::from(self.index - 1)
    }

    /// Whether the named piece of work is this shard's.
    pub fn takes_name(self, name: &str) -> bool {
        self.takes_position(stable_hash(name))
    }

    /// The shard, of as many as this one's, that takes the named piece.
    pub fn owner_of_name(self, name: &str) -> Shard {
        self.owner_of_position(stable_hash(name))
    }

    /// The shard, of as many as this one's, that takes `position`.
    pub fn owner_of_position(self, position: u64) -> Shard {
        let index = position % u64::from(self.count);
        Shard {
            // Below `count`, a u32: the conversion cannot fail.
            index: u32::try_from(index).unwrap_or(0) + 1,
            count: self.count,
        }
    }

    /// How many of `total` positions (0 to total-1) this shard takes.
    pub fn positions_of(self, total: u64) -> u64 {
        let offset = u64::from(self.index - 1);
        if total <= offset {
            0
        } else {
            (total - offset).div_ceil(u64::from(self.count))
        }
    }

    /// The position (counted from 0) of this shard's `nth` piece of a
    /// sequence split by position.
    pub fn position(self, nth: u64) -> u64 {
        u64::from(self.index - 1) + nth * u64::from(self.count)
    }
}

impl Shard {
    /// The seed of this shard's `nth` run (counted from 0) in a batch of
    /// seeds from `first`.
    pub fn seed(self, first: u64, nth: u64) -> u64 {
        first.saturating_add(self.position(nth))
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// 64-bit FNV-1a of the name's bytes: fixed by its definition, the same
/// on every platform and in every version, unlike the standard library's
/// hasher.
pub fn stable_hash(name: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    name.bytes()
        .fold(OFFSET, |h, b| (h ^ u64::from(b)).wrapping_mul(PRIME))
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShard {
    index: u32,
    count: u32,
}

impl TryFrom<RawShard> for Shard {
    type Error = ShardError;
    fn try_from(raw: RawShard) -> Result<Shard, ShardError> {
        Shard::new(raw.index, raw.count)
    }
}

impl From<Shard> for RawShard {
    fn from(s: Shard) -> RawShard {
        RawShard {
            index: s.index,
            count: s.count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k_of_n_and_refuses_the_rest() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(Shard::parse("1/1"), Ok(Shard::WHOLE));
        for bad in ["", "2", "2/", "/4", "a/4", "2/4/1", " 2/4", "+2/4", "-1/4"] {
            assert_eq!(Shard::parse(bad), Err(ShardError::Syntax(bad.to_owned())));
        }
        assert_eq!(
            Shard::parse("0/4"),
            Err(ShardError::OutOfRange { index: 0, count: 4 })
        );
        assert_eq!(
            Shard::parse("5/4"),
            Err(ShardError::OutOfRange { index: 5, count: 4 })
        );
        assert_eq!(Shard::parse("1/0"), Err(ShardError::NoShards(0)));
        assert_eq!(Shard::parse("1024/1024"), Shard::new(1024, 1024));
        assert_eq!(
            Shard::parse("1/4294967295"),
            Err(ShardError::TooMany { count: u32::MAX })
        );
        assert_eq!(
            Shard::parse("1/1025"),
            Err(ShardError::TooMany { count: 1025 })
        );
    }

    #[test]
    fn every_piece_has_exactly_one_owner_and_it_takes_the_piece() {
        for count in [1, 3, 7] {
            let one = Shard::new(1, count).unwrap();
            for name in ["a", "case-1", "scope/x", ""] {
                let owner = one.owner_of_name(name);
                assert!(owner.takes_name(name));
                let takers = (1..=count)
                    .filter(|&k| Shard::new(k, count).unwrap().takes_name(name))
                    .count();
                assert_eq!(takers, 1);
            }
        }
    }

    #[test]
    fn the_shards_of_a_split_take_every_position_exactly_once() {
        for count in [1, 2, 3, 7] {
            for total in [0, 1, 6, 7, 8, 100] {
                let mut taken = vec![0; total as usize];
                for index in 1..=count {
                    let s = Shard::new(index, count).unwrap();
                    let mine: Vec<u64> =
                        (0..s.positions_of(total)).map(|n| s.position(n)).collect();
                    assert!(mine.iter().all(|&p| s.takes_position(p)));
                    for p in mine {
                        taken[p as usize] += 1;
                    }
                }
                assert!(
                    taken.iter().all(|&n| n == 1),
                    "{count} shards of {total}: {taken:?}"
                );
            }
        }
    }

    #[test]
    fn the_name_hash_is_fnv_1a() {
        // The published FNV-1a 64 test vectors: a change here would move
        // work between shards from one version to the next.
        assert_eq!(stable_hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(stable_hash("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(stable_hash("foobar"), 0x8594_4171_f739_67e8);
    }
}
