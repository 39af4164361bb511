//! An example Tern receiver, written against tern-sim's plug-in contract
//! (`docs/contract.md`), and tested by tern-sim's conformance state
//! machine in this crate's own `cargo test` (`tests/conformance.rs`).
//!
//! The receiver here hands every call to tern-sim's reference
//! implementation, so that the example conforms; a vendor puts their own
//! receiver in its place and keeps the tests.

use tern_harness::contract::plugin::{
    Capability, Delivered, Identity, ImplError, Implementation, InitParams, Receiver, View,
};
use tern_harness::contract::storage::Storage;
use tern_harness::contract::world::AgentWorld;
use tern_harness::implementations::reference::ReferenceImpl;
use tern_model::ledger::{Execution, LocalTime};
use tern_model::message::{MessageRef, Principal, ThreadId};

/// The implementation: starts a receiver for one participant, at the start
/// of a run and again after every crash, on the same storage.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExampleImpl;

impl Implementation for ExampleImpl {
    fn name(&self) -> String {
        "tern example receiver".to_owned()
    }

    fn start(
        &self,
        init: &InitParams,
        storage: Storage,
        world: AgentWorld,
    ) -> Result<Box<dyn Receiver>, ImplError> {
        // Recovery is the inner receiver's: it replays what it synced to
        // `storage` before the crash.
        let inner = ReferenceImpl.start(init, storage, world)?;
        Ok(Box::new(ExampleReceiver { inner }))
    }
}

/// One running receiver. Everything it must keep across a crash goes
/// through its `Storage`; what it holds in memory is lost.
pub struct ExampleReceiver {
    inner: Box<dyn Receiver>,
}

impl Receiver for ExampleReceiver {
    fn identity(&self) -> Identity {
        Identity {
            name: "tern-example-receiver".to_owned(),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            // It performs its own commitments' effects through the world.
            capabilities: [Capability::Execute].into_iter().collect(),
        }
    }

    fn deliver(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Delivered, ImplError> {
        self.inner.deliver(frame, principal, now)
    }

    fn execute(
        &mut self,
        thread: &ThreadId,
        commitment: &MessageRef,
        now: LocalTime,
    ) -> Result<Execution, ImplError> {
        self.inner.execute(thread, commitment, now)
    }

    fn view(&mut self, thread: &ThreadId) -> Result<View, ImplError> {
        self.inner.view(thread)
    }

    fn view_against(&mut self, thread: &ThreadId, expected: &View) -> Result<View, ImplError> {
        self.inner.view_against(thread, expected)
    }

    fn kill(&mut self) {
        self.inner.kill();
    }
}
