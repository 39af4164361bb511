//! tern-statefs (documentation to come).

pub mod crash;
pub mod data;
pub mod lost;
pub mod model;
pub mod tree;

pub use crash::Cut;
pub use lost::{Lost, LostData};
pub use model::{Ino, Kind, Model, ModelError, NodeSpec, RenameMode, ROOT};
pub use tree::{Node, Tree};
