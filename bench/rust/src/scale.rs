//! The engine's side of the scale benchmark (`npm run bench:scale`, bench/scale/scale.mjs): one graph
//! file loaded as the server loads it, and what that costs at its size. Load time (until every
//! metric routes) by step, resident memory and the engine's own count by part, as loaded and with
//! every base metric built and pruned where the default budget of pruned graphs allows (as once
//! every metric is in steady use), what the first request for a metric not loaded with the city
//! pays, pruning's time, queries with their paths between random rideable road segments as served,
//! on a fresh metric and on that metric pruned, whole directions requests between random rideable points, full customization, 100 arcs
//! changed live on all cycling metrics, one avoidance live.
//! Prints one JSON document on standard output (progress on standard error).
//!
//! `scale-bench --graph FILE [--quick]`

use quietway_bench::{arcs_live_ns, avoidance_live_ns};
use quietway_engine::cch::{CustomizedMetric, INF_WEIGHT};
use quietway_engine::city::{City, Profile, RouteRequest};
use quietway_engine::metric::MetricKind;
use quietway_engine::query::CchQuery;
use quietway_engine::testing::Rng;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Instant;

// The allocator and its settings of the server's addon (addon/src/lib.rs): mimalloc, freed pages
// given back at once, no transparent huge pages during bulk work. With the system allocator the
// resident memory measured here said more about glibc's arenas than about the engine (the same
// engine read 920 or 1,050 MB resident depending on the order of its allocations).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

unsafe extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}
/// `mi_option_purge_delay` in mimalloc 3's `mi_option_e`.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// Percentiles in microseconds of per-operation times given in nanoseconds.
fn summary(mut ns: Vec<u64>) -> Value {
    ns.sort_unstable();
    if ns.is_empty() {
        return json!({ "count": 0 });
    }
    let pct = |p: f64| ns[((ns.len() as f64 - 1.0) * p).round() as usize] as f64 / 1000.0;
    json!({ "count": ns.len(), "median_us": pct(0.5), "p90_us": pct(0.9), "p99_us": pct(0.99), "max_us": pct(1.0) })
}

/// A line of /proc/self/status in bytes (`VmRSS`, `VmHWM`).
fn status_bytes(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with(key)).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<u64>().ok())
            })
        })
        .unwrap_or(0)
        * 1024
}

/// Times `count` queries with their paths between random pairs of `arcs` on `metric` (ns each).
fn paths_ns(
    city: &City,
    q: &mut CchQuery,
    metric: &CustomizedMetric,
    arcs: &[u32],
    rng: &mut Rng,
    count: usize,
) -> Vec<u64> {
    (0..count)
        .map(|_| {
            let s = arcs[rng.below(arcs.len() as u64) as usize];
            let z = arcs[rng.below(arcs.len() as u64) as usize];
            let t = Instant::now();
            q.reset()
                .add_source(s, 0, &city.cch)
                .add_target(z, 0, &city.cch)
                .run(&city.cch, metric);
            std::hint::black_box(q.arc_path(&city.cch, metric));
            t.elapsed().as_nanos() as u64
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let quick = args.iter().any(|a| a == "--quick");
    let Some(path) = arg("--graph").map(PathBuf::from) else {
        eprintln!("usage: scale-bench --graph FILE [--quick]");
        std::process::exit(2);
    };
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets an option; mimalloc reads options at any time.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    }
    quietway_engine::pause_huge_pages_during_bulk_work();
    // The load and walking's metric after it, as the addon runs them.
    let load_work = quietway_engine::BulkWork::begin();
    let rss_before = status_bytes("VmRSS:");
    let t = Instant::now();
    let city = City::load(&path, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let load_s = t.elapsed().as_secs_f64();
    let peak_answering = status_bytes("VmHWM:");
    // Walking's metric, which the server builds in the background once a city answers.
    let t = Instant::now();
    city.warm();
    let warm_s = t.elapsed().as_secs_f64();
    drop(load_work);
    let rss_loaded = status_bytes("VmRSS:");
    let peak_loading = status_bytes("VmHWM:");
    eprintln!(
        "  loaded in {load_s:.2} s (walking's metric {warm_s:.2} s after): {} junctions, {} MB by the engine's count, {} MB resident",
        city.graph.node_count(),
        city.memory_bytes() / 1_000_000,
        rss_loaded / 1_000_000
    );
    let breakdown = city.memory_breakdown();
    let g = &city.graph;
    let mut rng = Rng(41);

    // Queries with their paths between random road segments of the connected cycling network.
    let metric = city.metric(MetricKind::SuperSafeDay, None);
    // A metric not loaded with the city is built by the first request that asks for it.
    let t = Instant::now();
    std::hint::black_box(city.metric(MetricKind::SuperSafeNight, None));
    let first_use_s = t.elapsed().as_secs_f64();
    // Base metrics in steady use are pruned within the city's budget of pruned graphs (none at city
    // size by default); measured here as they are then.
    let t = Instant::now();
    city.prepare_base_metrics();
    let prune_all_s = t.elapsed().as_secs_f64();
    let breakdown_all_pruned = city.memory_breakdown();
    let rss_all_pruned = status_bytes("VmRSS:");
    let connected: Vec<u32> = (0..g.arc_count() as u32)
        .filter(|&a| {
            city.is_well_connected(a >> 1, false) && metric.arc_weights[a as usize] < INF_WEIGHT
        })
        .collect();
    let pairs = if quick { 500 } else { 3000 };
    let mut q = CchQuery::new(&city.cch);
    let with_path = paths_ns(&city, &mut q, &metric, &connected, &mut rng, pairs);

    // The first route of a metric not yet pruned searches the full hierarchy (as every route does
    // until the metric is in steady use), then the same metric pruned.
    let (unpruned_path, prune_s, pruned_path) = {
        let m = city.cch.customize_owned(metric.input_weights.to_vec());
        let pairs = if quick { 100 } else { 400 };
        let sample = |q: &mut CchQuery, rng: &mut Rng| {
            summary(paths_ns(&city, q, &m, &connected, rng, pairs))
        };
        let unpruned = sample(&mut q, &mut rng);
        let t = Instant::now();
        m.prepare_queries(&city.cch);
        let prune_s = t.elapsed().as_secs_f64();
        (unpruned, prune_s, sample(&mut q, &mut rng))
    };
    // Whole directions requests (snap, route with the bounded detour, guidance, v2 JSON) between
    // points on random rideable segments, SuperSafe by day.
    let trips = if quick { 100 } else { 400 };
    let mut directions = Vec::with_capacity(trips);
    let mut routed = 0;
    let point = |rng: &mut Rng| {
        let a = connected[rng.below(connected.len() as u64) as usize];
        let [x0, y0] = g.node_lon_lat(g.arc_tail(a));
        let [x1, y1] = g.node_lon_lat(g.arc_head(a));
        [(x0 + x1) / 2.0, (y0 + y1) / 2.0]
    };
    for _ in 0..trips {
        let req = RouteRequest {
            waypoints: vec![point(&mut rng), point(&mut rng)],
            profile: Profile::Cycling,
            supersafe: true,
            night: false,
            bearing: None,
            departure: Some(29_000_000),
        };
        let t = Instant::now();
        let out = city.directions(&req, false);
        directions.push(t.elapsed().as_nanos() as u64);
        routed += usize::from(matches!(out, Ok(Some(_))));
    }

    // Full customization of one cycling metric, as a model change customizes each.
    let weights = metric.input_weights.to_vec();
    let mut custom = vec![];
    for _ in 0..if quick { 2 } else { 5 } {
        let inputs = weights.clone();
        let t = Instant::now();
        let m = city.cch.customize_owned(inputs);
        custom.push(t.elapsed().as_nanos() as u64);
        std::hint::black_box(m);
    }

    // 100 arcs changed and live on all six cycling metrics (accepted reports).
    let update_all = arcs_live_ns(&city, &mut rng, if quick { 4 } else { 12 }, || {
        city.prepare_base_metrics()
    });

    // One avoidance (a street's arcs) added, then the first query that routes around it.
    let avoid_pairs: Vec<(u32, u32)> = (0..if quick { 5 } else { 20 })
        .map(|_| {
            (
                connected[rng.below(connected.len() as u64) as usize],
                connected[rng.below(connected.len() as u64) as usize],
            )
        })
        .collect();
    let avoid_live = avoidance_live_ns(&city, &mut q, &mut rng, &avoid_pairs);

    let out = json!({
        "graph": path.display().to_string(),
        "junctions": g.node_count(), "arcs": g.arc_count(), "routing_nodes": city.turns.node_count(),
        "cch_arcs": city.cch.arc_count(),
        "load_s": load_s,
        "walking_metric_after_load_s": warm_s,
        "rss_peak_answering_bytes": peak_answering,
        "load_phases": city.load_phases.iter().map(|(p, s)| json!({ "phase": p, "seconds": s })).collect::<Vec<_>>(),
        "metric_first_use_s": first_use_s,
        "prune_all_base_metrics_s": prune_all_s, "prune_one_metric_s": prune_s,
        "memory_engine_all_pruned_bytes": breakdown_all_pruned.iter().map(|(_, b)| b).sum::<usize>(),
        "memory_breakdown_all_pruned": breakdown_all_pruned.iter().map(|(p, b)| json!({ "part": p, "bytes": b })).collect::<Vec<_>>(),
        "rss_all_pruned_bytes": rss_all_pruned,
        "query_with_path_unpruned": unpruned_path,
        "query_with_path_pruned": pruned_path,
        "query_graph_budget_bytes": quietway_engine::city::DEFAULT_QUERY_GRAPH_BUDGET,
        "memory_engine_bytes": breakdown.iter().map(|(_, b)| b).sum::<usize>(),
        "memory_breakdown": breakdown.iter().map(|(p, b)| json!({ "part": p, "bytes": b })).collect::<Vec<_>>(),
        "rss_before_load_bytes": rss_before, "rss_loaded_bytes": rss_loaded, "rss_peak_loading_bytes": peak_loading,
        "rss_end_bytes": status_bytes("VmRSS:"), "rss_peak_bytes": status_bytes("VmHWM:"),
        "query_with_path": summary(with_path),
        "directions": summary(directions), "directions_routed": routed, "directions_trips": trips,
        "full_customization": summary(custom),
        "update_arcs_100_all_cycling_metrics": summary(update_all),
        "avoidance_added_and_live": summary(avoid_live),
    });
    println!("{out}");
}
