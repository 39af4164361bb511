//! tern-statefs (documentation to come).

mod attr;
pub mod backing;
pub mod crash;
pub mod data;
mod fs;
pub mod gate;
mod handles;
pub mod lost;
pub mod model;
mod mount;
mod mountinfo;
pub mod probe;
mod reaper;
mod state;
pub mod tree;

pub use crash::Cut;
pub use fs::StateFs;
pub use gate::{ArmError, HeldOp, OpKind};
pub use lost::{Lost, LostData};
pub use model::{Ino, Kind, Model, ModelError, NodeSpec, RenameMode, ROOT};
pub use mount::{mount, MountError, Mounted, PowerLossError};
pub use probe::{probe, Unavailable, NO_FUSE_ENV};
pub use tree::{Node, Tree};
