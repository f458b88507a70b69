//! Quietway's routing core: pure Rust, no N-API. It owns the city graph model, the hierarchy,
//! queries, snapping and guidance; `addon/` only translates between this crate and JavaScript.

pub mod cch;
pub mod city;
pub mod dijkstra;
pub mod geo;
pub mod graph;
pub mod guidance;
pub mod metric;
pub mod snap;

/// The engine's version, as built (the crate version).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[cfg(any(test, feature = "testing"))]
pub mod testing;
/// The hierarchy's order, queries and copy-on-write arrays, at the crate root where callers have
/// always found them.
pub use cch::{cow, order, query};
/// The city graph file and the turn model, likewise.
pub use graph::{format, turns};
/// Words for guidance steps (kept at the crate root, where callers have always found them).
pub use guidance::words;
/// Avoidance windows, likewise.
pub use metric::avoid;
