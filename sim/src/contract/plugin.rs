//! The plug-in contract: what an implementation under test (IUT) is to the
//! harness. An IUT is a Tern receiver for one participant; the harness plays
//! the network, every sender, the authenticated transport, the clock, durable
//! storage and the outside world. docs/contract.md states it in full.

use std::sync::Arc;

use tern_model::ledger::{Event, Execution, LedgerConfig, LocalTime};
pub use tern_model::ledger::{View, ViewDigest};
use tern_model::message::{MessageRef, Participant, Principal, ThreadId};

pub use crate::contract::error::ImplError;
use crate::contract::storage::{FileOp, Storage};
use crate::contract::world::AgentWorld;

/// What an IUT is initialised with.
#[derive(Debug, Clone)]
pub struct InitParams {
    pub participant: Participant,
    pub principal: Principal,
    /// Identity contexts, grants and local policy; `viewer` names the
    /// participant. Shared: it lists every thread and grant of a run, and
    /// every restart is given it again.
    pub config: Arc<LedgerConfig>,
}

/// The answer to a delivery: outcome events, and any frames the receiver
/// sends on its own initiative (a conforming receiver need send none; these
/// are checked like any other message, e.g. never a reply to an invalid frame).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delivered {
    pub events: Vec<Event>,
    pub outgoing: Vec<Vec<u8>>,
}

/// An optional part of the contract an implementation may claim at start.
/// Corpus cases that need a capability the implementation did not claim are
/// not applicable to it; a claimed capability that fails is a false claim.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// Executes its own commitments through the world (`execute`).
    Execute,
    /// Over the protocol: a process that answered a session without
    /// crashing can be given another `init` and start over as if newly
    /// spawned, so a fresh start costs a round trip instead of a process
    /// (docs/protocol.md section 4.1). Restarts after a crash always get
    /// a new process.
    Reinit,
    /// Over the protocol: the process reads its input as a stream of
    /// lines, so it may be sent several requests in one write, and answers
    /// them in order. The views a step compares then cost one round trip,
    /// not one each (docs/protocol.md section 2).
    Pipeline,
}

impl Capability {
    pub const ALL: &'static [Capability] = &[
        Capability::Execute,
        Capability::Reinit,
        Capability::Pipeline,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Execute => "execute",
            Capability::Reinit => "reinit",
            Capability::Pipeline => "pipeline",
        }
    }

    /// A part of the contract that a corpus case can need, rather than a
    /// way of the protocol to cost less (`reinit`, `pipeline`), on which
    /// no verdict depends.
    pub fn is_contract(self) -> bool {
        self == Capability::Execute
    }

    pub fn from_name(name: &str) -> Option<Capability> {
        Capability::ALL.iter().copied().find(|c| c.as_str() == name)
    }
}

/// What a started implementation says about itself (the `init` answer of
/// the subprocess protocol): reports name it, and capabilities decide which
/// corpus cases apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    pub version: Option<String>,
    pub capabilities: std::collections::BTreeSet<Capability>,
}

impl Identity {
    /// tern-sim's own receivers: the reference and its mutants.
    pub fn builtin(name: impl Into<String>) -> Identity {
        Identity {
            name: name.into(),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            // In process there is no process to reuse.
            capabilities: [Capability::Execute].into_iter().collect(),
        }
    }

    pub fn claims(&self, capability: Capability) -> bool {
        self.capabilities.contains(&capability)
    }
}

/// What a crash of an implementation can take, which is what its
/// durability is judged against. Reports name it: a certification made
/// under [`Durability::KillOnly`] never checked a sync.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Durability {
    /// In tern-sim's own process: storage is simulated, and a crash drops
    /// every record that was not synced.
    Simulated,
    /// Over the protocol, each state directory on tern-statefs: a crash can
    /// be a power loss (whole or torn) and can fall inside a request.
    PowerLoss,
    /// Over the protocol without FUSE: a crash is a SIGKILL, which loses
    /// nothing the kernel holds, so syncs are not checked.
    KillOnly { reason: String },
}

impl Durability {
    /// One line for terminals and reports.
    pub fn label(&self) -> String {
        match self {
            Durability::Simulated => {
                "simulated storage (a crash drops what was not synced)".into()
            }
            Durability::PowerLoss => {
                "power loss (state directories on tern-statefs; a crash drops what was not synced, and can fall inside a request)".into()
            }
            Durability::KillOnly { reason } => format!(
                "kill only, FUSE unavailable: {reason} (a crash is a SIGKILL, which keeps what was not synced: syncs are not checked)"
            ),
        }
    }

    /// The short name reports carry: `simulated`, `power-loss`, `kill-only`.
    pub fn name(&self) -> &'static str {
        match self {
            Durability::Simulated => "simulated",
            Durability::PowerLoss => "power-loss",
            Durability::KillOnly { .. } => "kill-only",
        }
    }
}

/// One running receiver.
pub trait Receiver {
    /// Who this receiver says it is, and what it claims to support.
    fn identity(&self) -> Identity;

    fn deliver(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Delivered, ImplError>;

    /// Decides and, when allowed, performs the commitment's effect through
    /// the world, exactly once.
    fn execute(
        &mut self,
        thread: &ThreadId,
        commitment: &MessageRef,
        now: LocalTime,
    ) -> Result<Execution, ImplError>;

    /// The canonical view of a thread (docs/ledger.md), as its canonical
    /// JSON text: views are compared after nearly every step, and equal
    /// views are equal bytes.
    fn view(&mut self, thread: &ThreadId) -> Result<View, ImplError>;

    /// A hint that right after the next [`Receiver::deliver`] the harness
    /// will ask [`Receiver::views_against`] for the views of `threads`, in
    /// this order, unless the delivery touches another thread than the
    /// frame names. A subprocess that claims `pipeline` writes those
    /// requests with the delivery, so that a delivery and the views after
    /// it cost one round trip; if the harness then asks something else, it
    /// reads those answers first and asks again. The default ignores it.
    fn views_follow(&mut self, threads: &[ThreadId]) {
        let _ = threads;
    }

    /// The views of several threads, each asked against the view expected
    /// of it, answered in order. The default asks
    /// [`Receiver::view_against`] for each in turn; a subprocess that
    /// claims `pipeline` is sent all the requests in one write, so the
    /// views a step compares cost one round trip, not one each.
    fn views_against(&mut self, wanted: &[(ThreadId, View)]) -> Result<Vec<View>, ImplError> {
        wanted
            .iter()
            .map(|(thread, expected)| self.view_against(thread, expected))
            .collect()
    }

    /// The digests of the views of `threads`, in order, for a receiver
    /// that keeps its state in the reference ledger
    /// ([`tern_model::ledger::Ledger::view_digest`], the only maker of a
    /// [`ViewDigest`]), or `None`, the default: the harness then asks
    /// [`Receiver::views_against`]. The harness compares digests with the
    /// oracle's and asks for the texts only of views that differ (and, in
    /// debug builds, of every view, to check the digests against them).
    /// Answering must do what answering [`Receiver::views_against`] would:
    /// a receiver whose views are more than its ledger's, or whose reads
    /// have effects of their own, answers `None`.
    fn view_digests(&mut self, threads: &[ThreadId]) -> Option<Result<Vec<ViewDigest>, ImplError>> {
        let _ = threads;
        None
    }

    /// A copy of this receiver that shares no state with it, bound to
    /// `storage` and `world` (copies of the storage and world it runs
    /// on), or `None`, the default, if it cannot be copied. The explorer
    /// forks the state it expands this way, once per move, instead of
    /// replaying the state's schedule from a fresh start for every move;
    /// an in-process receiver can give one, a subprocess cannot (its
    /// states are replayed as before). A fork must answer every later call
    /// exactly as this receiver would: debug builds check each forked
    /// state against a replayed one.
    fn fork(&self, storage: &Storage, world: &AgentWorld) -> Option<Box<dyn Receiver>> {
        let _ = (storage, world);
        None
    }

    /// The view of a thread, asked by a harness that expects `expected`
    /// (the oracle's canonical view). The answer must be what [`view`]
    /// would give; knowing the expected bytes only lets a receiver skip
    /// work when its view matches them (the subprocess adapter compares
    /// the text it read before parsing it). The default asks [`view`].
    ///
    /// [`view`]: Receiver::view
    fn view_against(&mut self, thread: &ThreadId, expected: &View) -> Result<View, ImplError> {
        let _ = expected;
        self.view(thread)
    }

    /// The harness crashes this receiver: stop now, without any cleanup. An
    /// in-process receiver is simply dropped afterwards; a subprocess is
    /// killed.
    fn kill(&mut self) {}

    /// The harness is done with this receiver, which did not crash, and
    /// drops it next. By default that is the end of it, as abrupt as
    /// [`Receiver::kill`]. A subprocess that claims `reinit` is set aside
    /// instead, for the next fresh start to reuse.
    fn dismiss(&mut self) {
        self.kill()
    }
}

/// A way to start receivers: called at the start and after every crash, with
/// the same storage (minus what was never synced) and world. Shared by the
/// worker threads of a batch (`--jobs`), so it is `Sync`; each receiver it
/// starts lives on one thread.
pub trait Implementation: Sync {
    /// A short name for reports.
    fn name(&self) -> String;

    fn start(
        &self,
        init: &InitParams,
        storage: Storage,
        world: AgentWorld,
    ) -> Result<Box<dyn Receiver>, ImplError>;

    /// Caps how long the harness waits for one answer from receivers started
    /// from now on (`None` lifts the cap). Shrinking a run that failed by
    /// timing out uses it: a candidate that times out fails the same way,
    /// so the full timeout need not be waited out again. Only an
    /// implementation the harness can wait on (a subprocess) has a wait.
    fn cap_request_wait(&self, _cap: Option<std::time::Duration>) {}

    /// What the receivers started on the calling thread wrote on their
    /// diagnostic channel (a subprocess's stderr) since this thread last
    /// asked, or `None` when there is no such channel. certify keeps it in
    /// a file beside the report for a failing case or run.
    fn take_log(&self) -> Option<Vec<u8>> {
        None
    }

    /// Whether a fresh start may take a process kept from an earlier
    /// session (a subprocess that claims `reinit`). Either way, the
    /// processes kept so far are shut down: after this call every start
    /// begins from what the caller plays next, which is how a failing run
    /// is shrunk and replayed deterministically.
    fn set_process_reuse(&self, _allowed: bool) {}

    /// The session on `storage` is over, its agent up or down: whatever
    /// the implementation keeps for it (a state directory) goes. Called at
    /// the end of every run, schedule and case.
    fn release(&self, storage: &Storage) {
        let _ = storage;
    }

    /// Feeds `h` what the state directory of `storage` holds, live and
    /// after a clean power loss, where tern-sim serves it (a subprocess
    /// with power loss on): the part of a state an exhaustive search
    /// cannot see otherwise, so that two schedules that left different
    /// files are not merged. Nothing elsewhere.
    fn hash_state_dir(&self, storage: &Storage, h: &mut dyn std::hash::Hasher) {
        let _ = (storage, h);
    }

    /// How many mutating file operations the state directory of
    /// `storage` saw so far, where tern-sim serves it: a mark for
    /// [`Implementation::file_ops_since`].
    fn file_ops_mark(&self, storage: &Storage) -> Option<u64> {
        let _ = storage;
        None
    }

    /// The mutating file operations of `storage`'s state directory since
    /// `mark`, oldest first: the crash points a request has.
    fn file_ops_since(&self, storage: &Storage, mark: u64) -> Vec<FileOp> {
        let _ = (storage, mark);
        Vec::new()
    }

    /// What a crash of this implementation takes (see [`Durability`]).
    fn durability(&self) -> Durability {
        Durability::Simulated
    }

    /// Serves power-loss crashes from now on (`on`), where this
    /// implementation can have them (a subprocess, with FUSE), or kills
    /// only; whether they are served now. A run whose crashes are power
    /// losses has fault `power-loss`.
    fn set_power_loss(&self, on: bool) -> bool {
        let _ = on;
        false
    }

    /// How many fresh starts so far took a process kept from an earlier
    /// session. A failure found then may depend on what that session left
    /// in the process.
    fn processes_reused(&self) -> u64 {
        0
    }
}

/// Power-loss crashes served by an implementation for as long as this
/// lives, where it can have them (a subprocess, with FUSE); kills again
/// once it is dropped, so that each command part that wants power losses
/// asks for them itself.
pub struct PowerLossServed<'i>(Option<&'i dyn Implementation>);

impl<'i> PowerLossServed<'i> {
    /// Power losses from now on, if `wanted` and the implementation can.
    pub fn on(implementation: &'i dyn Implementation, wanted: bool) -> PowerLossServed<'i> {
        PowerLossServed((wanted && implementation.set_power_loss(true)).then_some(implementation))
    }

    /// Whether crashes are power losses now.
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }
}

impl Drop for PowerLossServed<'_> {
    fn drop(&mut self) {
        if let Some(i) = self.0 {
            i.set_power_loss(false);
        }
    }
}
