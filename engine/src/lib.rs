//! Quietway's routing core: pure Rust, no N-API. It owns the city graph model, the hierarchy,
//! queries, snapping and guidance; `addon/` only translates between this crate and JavaScript.

pub mod avoid;
pub mod cch;
pub mod city;
pub mod cow;
pub mod dijkstra;
pub mod directions;
pub mod format;
pub mod geo;
pub mod graph;
pub mod guidance;
pub mod metric;
pub mod order;
pub mod query;
pub mod snap;
pub mod turns;

/// The engine's version, as built (the crate version).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[cfg(any(test, feature = "testing"))]
pub mod testing;
/// Words for guidance steps (kept at the crate root, where callers have always found them).
pub use guidance::words;

#[cfg(test)]
mod differential_tests;
