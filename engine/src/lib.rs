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

/// Whether bulk work runs with transparent huge pages off ([`pause_huge_pages_during_bulk_work`]).
static PAUSE_HUGE_PAGES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Bulk work under way, on every thread.
static BULK_RUNNING: std::sync::Mutex<usize> = std::sync::Mutex::new(0);

/// Has the process run bulk work (a city's load, a metric built on first use, a live change, a
/// query graph pruned) with transparent huge pages off, on again once none runs. mimalloc asks for
/// them, and faulting a large array in 2 MB pages had the kernel compact memory (`defrag` is
/// `madvise`): on the 4 × 4 tiling of New York a load took 2.5-3.2 s with them on against 1.2 s, a
/// metric's first use 1.7-1.9 s against 0.41 s. Between such work the queries' own memory still
/// gets them (off for good, the peers bench served 812 requests a second at 64 connections against
/// 1,046-1,254). The addon and scale-bench call this; a process that does not keeps its pages.
pub fn pause_huge_pages_during_bulk_work() {
    PAUSE_HUGE_PAGES.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Bulk work under way: while any guard lives, transparent huge pages are off for the process if
/// [`pause_huge_pages_during_bulk_work`] asked for it. Guards nest and may live on several threads.
pub struct BulkWork(());

impl BulkWork {
    pub fn begin() -> BulkWork {
        let mut running = BULK_RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        if *running == 0 {
            set_huge_pages(false);
        }
        *running += 1;
        BulkWork(())
    }
}

impl Drop for BulkWork {
    fn drop(&mut self) {
        let mut running = BULK_RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        *running -= 1;
        if *running == 0 {
            set_huge_pages(true);
        }
    }
}

/// The process's switch for transparent huge pages (`PR_SET_THP_DISABLE`, what mimalloc sets when
/// told at start), when bulk work pauses them.
fn set_huge_pages(on: bool) {
    if !PAUSE_HUGE_PAGES.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: a process-wide flag that only changes how later page faults are served.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, libc::c_ulong::from(!on), 0, 0, 0);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = on;
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
