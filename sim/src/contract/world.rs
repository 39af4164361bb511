//! The outside world: where effects happen. It counts every performance of
//! every key, so a repeated effect can never go unnoticed.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use tern_model::ledger::EffectKey;

use crate::contract::error::ImplError;
use crate::contract::storage::{CrashPoint, Storage};

#[derive(Debug, Clone, Default)]
struct Inner {
    performed: BTreeMap<EffectKey, u32>,
    /// Every performance in order, with the agent that performed it.
    log: Vec<(String, EffectKey)>,
}

/// The shared world.
#[derive(Debug, Clone, Default)]
pub struct World(Rc<RefCell<Inner>>);

impl World {
    pub fn new() -> World {
        World::default()
    }

    /// A copy that shares nothing with this world, for a forked state
    /// ([`Storage::fork`]).
    pub fn fork(&self) -> World {
        World(Rc::new(RefCell::new(self.0.borrow().clone())))
    }

    /// A handle for one agent: performances are attributed to it, and a
    /// crash scheduled at `AfterEffect` on its storage fires here.
    pub fn for_agent(&self, agent: &str, storage: &Storage) -> AgentWorld {
        AgentWorld {
            world: self.clone(),
            agent: agent.to_owned(),
            storage: storage.clone(),
        }
    }

    pub fn count(&self, key: &EffectKey) -> u32 {
        self.0.borrow().performed.get(key).copied().unwrap_or(0)
    }

    pub fn log(&self) -> Vec<(String, EffectKey)> {
        self.0.borrow().log.clone()
    }

    /// The performances from position `from` of the log on: what one call
    /// did, at the cost of what it did rather than of the whole history.
    pub fn log_since(&self, from: usize) -> Vec<(String, EffectKey)> {
        self.0.borrow().log.get(from..).unwrap_or_default().to_vec()
    }

    pub fn len(&self) -> usize {
        self.0.borrow().log.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One agent's access to the world.
#[derive(Debug, Clone)]
pub struct AgentWorld {
    world: World,
    agent: String,
    storage: Storage,
}

impl AgentWorld {
    /// Performs the effect `key`. The world records it even if a crash is
    /// scheduled right after, which is exactly the case receivers must
    /// reconcile; a crash scheduled before the effect fires instead, and
    /// the effect never happens.
    pub fn perform(&self, key: &EffectKey) -> Result<(), ImplError> {
        if self.storage.fired() {
            return Err(ImplError::Crashed);
        }
        if self.storage.armed() == Some(CrashPoint::BeforeEffect) {
            self.storage.fire();
            return Err(ImplError::Crashed);
        }
        {
            let mut inner = self.world.0.borrow_mut();
            *inner.performed.entry(key.clone()).or_default() += 1;
            inner.log.push((self.agent.clone(), key.clone()));
        }
        if self.storage.armed() == Some(CrashPoint::AfterEffect) {
            self.storage.fire();
            return Err(ImplError::Crashed);
        }
        Ok(())
    }

    /// Every effect this agent performed, for a restarted subprocess.
    pub fn performed_by_me(&self) -> Vec<String> {
        self.world
            .0
            .borrow()
            .log
            .iter()
            .filter(|(who, _)| *who == self.agent)
            .map(|(_, k)| k.0.clone())
            .collect()
    }

    /// Whether `key` was ever performed: the reconciliation query after a crash.
    pub fn performed(&self, key: &EffectKey) -> bool {
        self.world.count(key) > 0
    }
}

/// What a receiver needs of the world: performing an effect, and asking after
/// a crash whether an effect happened.
pub trait Effects {
    fn perform(&self, key: &EffectKey) -> Result<(), ImplError>;
    fn performed(&self, key: &EffectKey) -> bool;

    /// This world's part in a receiver forked onto `world`, a copy of the
    /// harness's world ([`crate::contract::plugin::Receiver::fork`]);
    /// `None`, the default, where the world is not the harness's to copy
    /// (the protocol's).
    fn fork_onto(&self, world: &AgentWorld) -> Option<Self>
    where
        Self: Sized,
    {
        let _ = world;
        None
    }
}

impl Effects for AgentWorld {
    fn perform(&self, key: &EffectKey) -> Result<(), ImplError> {
        AgentWorld::perform(self, key)
    }

    fn performed(&self, key: &EffectKey) -> bool {
        AgentWorld::performed(self, key)
    }

    fn fork_onto(&self, world: &AgentWorld) -> Option<AgentWorld> {
        Some(world.clone())
    }
}
