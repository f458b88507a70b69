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

/// What the embedding process does around the engine's bulk work after a load: a metric built on
/// its first use, a pruned query graph. Called with `true` as such work begins and `false` as it
/// ends (possibly on several threads at once: the process counts). The addon turns transparent huge
/// pages off meanwhile, as it does while a city loads: on the 4 × 4 tiling of New York a metric's
/// first use took 1.7-1.9 s with them on, 0.40 s with them off.
static BULK_WORK_HOOK: std::sync::OnceLock<fn(bool)> = std::sync::OnceLock::new();

/// Sets the hook called around bulk work (see [`BulkWork`]); the first one set stays.
pub fn set_bulk_work_hook(hook: fn(bool)) {
    let _ = BULK_WORK_HOOK.set(hook);
}

/// Bulk work under way (a metric customized on first use, a query graph pruned): the hook set by
/// [`set_bulk_work_hook`] is told as it begins and as this guard drops.
pub struct BulkWork(());

impl BulkWork {
    pub fn begin() -> BulkWork {
        if let Some(hook) = BULK_WORK_HOOK.get() {
            hook(true);
        }
        BulkWork(())
    }
}

impl Drop for BulkWork {
    fn drop(&mut self) {
        if let Some(hook) = BULK_WORK_HOOK.get() {
            hook(false);
        }
    }
}

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
