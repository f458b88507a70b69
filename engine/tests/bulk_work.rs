//! Bulk work and transparent huge pages: a test binary of its own, as the switch is the process's
//! and the library's other tests customize metrics (bulk work) on their own threads.
#![cfg(target_os = "linux")]

use quietway_engine::{BulkWork, pause_huge_pages_during_bulk_work};

fn huge_pages_disabled() -> bool {
    // SAFETY: reads the process's flag.
    unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1 }
}

#[test]
fn huge_pages_stay_off_until_the_last_bulk_work_ends_on_any_thread() {
    // Not asked for: bulk work leaves the pages alone.
    drop(BulkWork::begin());
    let before = huge_pages_disabled();
    {
        let _work = BulkWork::begin();
        assert_eq!(huge_pages_disabled(), before);
    }
    pause_huge_pages_during_bulk_work();
    let load = BulkWork::begin();
    assert!(huge_pages_disabled());
    // A metric's first use on another thread, begun during the load and ended after it.
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let (end_tx, end_rx) = std::sync::mpsc::channel::<()>();
    let other = std::thread::spawn(move || {
        let work = BulkWork::begin();
        started_tx.send(()).unwrap();
        end_rx.recv().unwrap();
        drop(work);
    });
    started_rx.recv().unwrap();
    drop(load);
    assert!(huge_pages_disabled(), "still off: the first use runs");
    end_tx.send(()).unwrap();
    other.join().unwrap();
    assert!(!huge_pages_disabled(), "on again once no bulk work runs");
}
