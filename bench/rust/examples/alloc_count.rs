//! Developer tool: heap allocations per request in the engine's routing, guidance and the whole
//! `City::directions` (each allocation costs about as much as a few hundred instructions, and under
//! Node the allocator shares the process with V8). `cargo run --release -p quietway-bench --example
//! alloc_count -- <graph.qwg>`
use quietway_engine::city::{City, Profile};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
/// The system allocator, counting allocations and reallocations.
struct Counting;
static N: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        N.fetch_add(1, Relaxed);
        BYTES.fetch_add(l.size(), Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        N.fetch_add(1, Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}
#[global_allocator]
static G: Counting = Counting;
fn main() {
    let city = City::load(std::env::args().nth(1).unwrap().as_ref(), None).unwrap();
    let reqs = quietway_bench::manhattan_trips(42, 200);
    for r in &reqs {
        let _ = city.directions(r, false);
    }
    let count = |f: &dyn Fn()| {
        let a = N.load(Relaxed);
        f();
        (N.load(Relaxed) - a) as f64 / reqs.len() as f64
    };
    println!(
        "route: {:.0}",
        count(&|| for r in &reqs {
            std::hint::black_box(city.route(r).unwrap());
        })
    );
    let routes: Vec<_> = reqs.iter().filter_map(|r| city.route(r).unwrap()).collect();
    println!(
        "guidance: {:.0}",
        count(&|| for rt in &routes {
            let w = &rt.waypoints[0];
            std::hint::black_box(city.guidance(
                &rt.legs[0],
                [w.lon, w.lat],
                Profile::Cycling,
                false,
            ));
        })
    );
    println!(
        "directions: {:.0}",
        count(&|| for r in &reqs {
            std::hint::black_box(city.directions(r, false).unwrap());
        })
    );
}
