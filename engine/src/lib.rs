//! Quietway's routing core: pure Rust, no N-API. It owns the city graph model, the hierarchy,
//! queries, snapping and guidance; `addon/` only translates between this crate and JavaScript.

pub mod format;
pub mod geo;
pub mod graph;
pub mod order;

/// The engine's version, as built (the crate version).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
