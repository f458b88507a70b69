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

/// Gives memory the allocator holds freed back to the system (glibc's `malloc_trim`, every
/// thread's arena): after a large step whose memory the next one does not reuse, so that the
/// process's peak is what it uses at once, not what it used in turn.
pub fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}
