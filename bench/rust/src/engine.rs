//! Engine benchmarks: point-to-point queries side by side with the `fast_paths` crate on its own test
//! maps, and with a plain Dijkstra on the New York extract; customization, partial updates and
//! avoidances going live; a whole directions request (route, guidance, JSON). Prints a table and
//! writes `bench/results/engine.json`.
//!
//! `cargo run --release -p quietway-bench --bin engine-bench -- [--quick] [--out FILE]`

use quietway_bench::{arcs_live_ns, avoidance_live_ns, machine, manhattan_trips};
use quietway_engine::cch::{Cch, INF_WEIGHT, Weight};
use quietway_engine::city::City;
use quietway_engine::dijkstra::{Adjacency, Dijkstra};
use quietway_engine::metric::MetricKind;
use quietway_engine::query::CchQuery;
use quietway_engine::testing::Rng;
use quietway_graph_pipeline::build::{BuildInput, build};
use quietway_graph_pipeline::city::{load_cities, read_boundary};
use quietway_graph_pipeline::progress::Progress;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Instant;

/// Percentiles in microseconds of per-operation times given in nanoseconds.
fn summary(mut ns: Vec<u64>) -> Value {
    ns.sort_unstable();
    let pct = |p: f64| ns[((ns.len() as f64 - 1.0) * p).round() as usize] as f64 / 1000.0;
    let total: u64 = ns.iter().sum();
    json!({
        "count": ns.len(),
        "median_us": pct(0.5), "p90_us": pct(0.9), "p99_us": pct(0.99),
        "mean_us": total as f64 / ns.len() as f64 / 1000.0,
        "throughput_per_s": ns.len() as f64 / (total as f64 / 1e9),
    })
}

/// How many rounds the gated query measurements are repeated in (the same pairs each round).
fn rounds_for(pairs: usize) -> usize {
    if pairs > 2000 { 5 } else { 3 }
}

/// Median in microseconds of per-operation times given in nanoseconds.
fn median_of(ns: &[u64]) -> f64 {
    let mut v = ns.to_vec();
    v.sort_unstable();
    v[((v.len() - 1) as f64 * 0.5).round() as usize] as f64 / 1000.0
}

fn median_us(v: &Value) -> f64 {
    v["median_us"].as_f64().unwrap()
}

fn read_gr(path: &Path) -> (usize, Vec<(u32, u32, u32)>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut arcs = Vec::new();
    let mut n = 0;
    for line in text.lines() {
        let mut it = line.split_whitespace();
        if it.next() != Some("a") {
            continue;
        }
        let f: u32 = it.next().unwrap().parse().unwrap();
        let t: u32 = it.next().unwrap().parse().unwrap();
        let w: u32 = it.next().unwrap().parse().unwrap();
        n = n.max(f as usize + 1).max(t as usize + 1);
        arcs.push((f, t, w));
    }
    (n, arcs)
}

fn bench_gr(path: &Path, pairs: usize, rows: &mut Vec<String>) -> Value {
    let name = path.file_stem().unwrap().to_string_lossy().to_string();
    let (n, arcs) = read_gr(path);
    // fast_paths, as its README prepares it.
    let t0 = Instant::now();
    let mut input = fast_paths::InputGraph::new();
    for &(f, t, w) in &arcs {
        input.add_edge(f as usize, t as usize, w as usize);
    }
    input.freeze();
    let fast = fast_paths::prepare(&input);
    let fp_prepare_s = t0.elapsed().as_secs_f64();
    // Quietway: each directed arc is an input arc.
    let t0 = Instant::now();
    let tails: Vec<u32> = arcs.iter().map(|a| a.0).collect();
    let heads: Vec<u32> = arcs.iter().map(|a| a.1).collect();
    let weights: Vec<Weight> = arcs.iter().map(|a| a.2.max(1)).collect();
    let mut pairs_edges: Vec<(u32, u32)> = arcs
        .iter()
        .filter(|a| a.0 != a.1)
        .map(|a| (a.0.min(a.1), a.0.max(a.1)))
        .collect();
    let order = quietway_engine::order::order_without_coordinates(n, &mut pairs_edges);
    let order_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let cch = Cch::new(n, &tails, &heads, &order);
    let topo_s = t1.elapsed().as_secs_f64();
    let t2 = Instant::now();
    let metric = cch.customize(&weights);
    let custom_s = t2.elapsed().as_secs_f64();
    let t3 = Instant::now();
    let pruned = metric.prepare_queries(&cch);
    let prune_s = t3.elapsed().as_secs_f64();
    let pruned_arcs = pruned.fw_arcs.len() + pruned.bw_arcs().len();

    let mut rng = Rng(42);
    let queries: Vec<(u32, u32)> = (0..pairs)
        .map(|_| (rng.below(n as u64) as u32, rng.below(n as u64) as u32))
        .collect();
    let mut calc = fast_paths::create_calculator(&fast);
    let mut q = CchQuery::new(&cch);
    let (mut ours, mut theirs) = (Vec::with_capacity(pairs), Vec::with_capacity(pairs));
    let mut ours_distance = Vec::with_capacity(pairs);
    let mut mismatches = 0;
    let mut path_len = 0usize;
    // The same pairs in several rounds, each engine's query right after the other's on each pair;
    // the gated ratio is of each engine's best round (see bench_nyc).
    let mut round_medians: [Vec<f64>; 2] = [vec![], vec![]];
    for round in 0..rounds_for(pairs) {
        let (mut o, mut f) = (Vec::with_capacity(pairs), Vec::with_capacity(pairs));
        for &(s, t) in &queries {
            let a = Instant::now();
            let fp = calc.calc_path(&fast, s as usize, t as usize);
            f.push(a.elapsed().as_nanos() as u64);
            let b = Instant::now();
            q.reset()
                .add_source(s, 0, &cch)
                .add_target(t, 0, &cch)
                .run(&cch, &metric);
            let d = q.distance();
            let path = if d < INF_WEIGHT {
                q.arc_path(&cch, &metric)
            } else {
                Vec::new()
            };
            o.push(b.elapsed().as_nanos() as u64);
            if round == 0 {
                path_len += path.len();
                let fd = fp.map(|p| p.get_weight() as Weight).unwrap_or(INF_WEIGHT);
                if fd != d {
                    mismatches += 1;
                }
            }
        }
        round_medians[0].push(median_of(&o));
        round_medians[1].push(median_of(&f));
        ours.extend(o);
        theirs.extend(f);
    }
    for &(s, t) in &queries {
        let c = Instant::now();
        q.reset()
            .add_source(s, 0, &cch)
            .add_target(t, 0, &cch)
            .run(&cch, &metric);
        std::hint::black_box(q.distance());
        ours_distance.push(c.elapsed().as_nanos() as u64);
    }
    let (ours, theirs) = (summary(ours), summary(theirs));
    let ours_distance = summary(ours_distance);
    let best = |k: usize| round_medians[k].iter().copied().fold(f64::MAX, f64::min);
    let ratio = best(0) / best(1);
    rows.push(format!(
        "{:<22} {:>8} {:>8} | quietway with path {:>7.2} µs p50 {:>7.2} p99 (distance {:>6.2}) | fast_paths {:>7.2} µs p50 {:>7.2} p99 | ratio of best rounds {:.2}",
        name, n, arcs.len(), median_us(&ours), ours["p99_us"].as_f64().unwrap(), median_us(&ours_distance), median_us(&theirs),
        theirs["p99_us"].as_f64().unwrap(), ratio
    ));
    json!({
        "graph": name, "nodes": n, "arcs": arcs.len(), "pairs": pairs,
        "quietway_query_with_path": ours, "quietway_query_distance": ours_distance, "fast_paths_query_with_path": theirs,
        "ratio_median_quietway_to_fast_paths": ratio, "distance_mismatches": mismatches,
        "query_rounds": { "count": round_medians[0].len(), "quietway_with_path_median_us": round_medians[0], "fast_paths_median_us": round_medians[1] },
        "avg_path_arcs": path_len as f64 / pairs as f64,
        "quietway_order_s": order_s, "quietway_topology_s": topo_s, "quietway_customization_s": custom_s,
        "quietway_pruning_s": prune_s, "pruned_query_arcs": pruned_arcs,
        "cch_arcs": cch.arc_count(), "cch_triangles": cch.triangle_count(), "fast_paths_prepare_s": fp_prepare_s,
    })
}

fn bench_nyc(shared: &Path, pairs: usize, rows: &mut Vec<String>) -> Value {
    let file = shared.join("osm/nyc-manhattan-below-42nd.osm.pbf");
    let cities = load_cities(None).unwrap();
    let cfg = cities["nyc"].clone();
    let areas = read_boundary(&shared.join(&cfg.boundary)).unwrap();
    let t0 = Instant::now();
    let input = BuildInput {
        city_id: "nyc".into(),
        city: cfg,
        osm: vec![file],
        dem: None,
        areas,
        sources: vec![],
        min_component_nodes: 25,
    };
    let (mut graph, _) = build(&input, &Progress::new(true)).unwrap();
    let turns = quietway_engine::turns::TurnGraph::new(
        &graph,
        &quietway_engine::turns::stored_restrictions(&graph),
    );
    graph.walking_order = quietway_engine::order::nested_dissection_order(&graph);
    let usable = quietway_engine::metric::cycling_can_use(&graph, &turns);
    graph.cycling_order = quietway_engine::order::cycling_order(&turns, &graph, &usable);
    drop(turns);
    let build_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let city = City::from_graph(graph, "bench".into(), None).unwrap();
    let load_s = t1.elapsed().as_secs_f64();
    // Measured as in steady use: every base metric with its pruned query graph (a fresh city
    // prunes a metric once routes use it).
    city.prepare_base_metrics();
    let g = &city.graph;
    // The hierarchy runs on the turn model: its nodes are the arcs (and copies for restrictions).
    let n = city.turns.node_count();
    let metric = city.metric(MetricKind::SuperSafeDay, None);
    let mut rng = Rng(7);
    // Random pairs of road segments, ridden one way, in the connected cycling network (as riders'
    // trips are).
    let connected: Vec<u32> = (0..g.arc_count() as u32)
        .filter(|&a| {
            city.is_well_connected(a >> 1, false) && metric.arc_weights[a as usize] < INF_WEIGHT
        })
        .collect();
    let queries: Vec<(u32, u32)> = (0..pairs)
        .map(|_| {
            (
                connected[rng.below(connected.len() as u64) as usize],
                connected[rng.below(connected.len() as u64) as usize],
            )
        })
        .collect();
    // The like-for-like reference the gate holds the query to: fast_paths' CH on the same turn
    // model (routing nodes and turns with their weights, turn costs included; a plain Dijkstra is
    // 100 times slower and memory-bound, so its ratio to a query swings with the machine's load;
    // see README, Performance).
    let t0 = Instant::now();
    let mut input = fast_paths::InputGraph::new();
    for t in 0..city.turns.turn_count() {
        let (from, to) = (
            city.turns.turn_from[t] as usize,
            city.turns.turn_to[t] as usize,
        );
        let w = metric.input_weights[t];
        if w < INF_WEIGHT && from != to {
            input.add_edge(from, to, w as usize);
        }
    }
    input.freeze();
    let fast = fast_paths::prepare(&input);
    let fp_prepare_s = t0.elapsed().as_secs_f64();
    let mut calc = fast_paths::create_calculator(&fast);
    let mut q = CchQuery::new(&city.cch);
    let (mut dist_only, mut with_path, mut dijkstra, mut fp) = (vec![], vec![], vec![], vec![]);
    let mut found = 0;
    let mut mismatches = 0;
    let mut d = Dijkstra::new(n);
    // Adjacency arc 2t runs along turn t, 2t + 1 against it (no turn).
    let input_weights: Vec<Weight> = metric
        .input_weights
        .to_vec()
        .iter()
        .flat_map(|&w| [w, INF_WEIGHT])
        .collect();
    let turn_adjacency = Adjacency::new(n, &city.turns.turn_from, &city.turns.turn_to);
    // The same pairs in several rounds: the gate's ratios take each measure's best round (the
    // one least disturbed by whatever else the machine runs), so a slow spell during one pass
    // does not read as a regression.
    let mut round_medians: [Vec<f64>; 4] = [vec![], vec![], vec![], vec![]];
    for round in 0..rounds_for(pairs) {
        let (mut wp, mut dd, mut dj, mut ff) = (vec![], vec![], vec![], vec![]);
        // Separate passes, so no query runs on caches its twin just warmed; fast_paths' query
        // right before ours on each pair.
        for &(s, t) in &queries {
            let a = Instant::now();
            let path_fp = calc.calc_path(&fast, s as usize, t as usize);
            ff.push(a.elapsed().as_nanos() as u64);
            let b = Instant::now();
            q.reset()
                .add_source(s, 0, &city.cch)
                .add_target(t, 0, &city.cch)
                .run(&city.cch, &metric);
            let path = q.arc_path(&city.cch, &metric);
            wp.push(b.elapsed().as_nanos() as u64);
            std::hint::black_box(&path);
            if round == 0 {
                let fd = path_fp.map_or(INF_WEIGHT, |p| p.get_weight() as Weight);
                mismatches += usize::from(fd != q.distance());
            }
        }
        for (i, &(s, t)) in queries.iter().enumerate() {
            let a = Instant::now();
            q.reset()
                .add_source(s, 0, &city.cch)
                .add_target(t, 0, &city.cch)
                .run(&city.cch, &metric);
            let dist = q.distance();
            dd.push(a.elapsed().as_nanos() as u64);
            if round == 0 && dist < INF_WEIGHT {
                found += 1;
            }
            // Dijkstra is slow: every 10th pair is enough for its distribution.
            if i % 10 == 0 {
                let c = Instant::now();
                d.run(
                    &turn_adjacency,
                    &input_weights,
                    &[(s, 0)],
                    INF_WEIGHT,
                    |v, _| v == t,
                );
                dj.push(c.elapsed().as_nanos() as u64);
                assert_eq!(
                    d.distance(t),
                    dist,
                    "CCH and Dijkstra disagree on {s} → {t}"
                );
            }
        }
        for (k, v) in [&wp, &dd, &dj, &ff].into_iter().enumerate() {
            round_medians[k].push(median_of(v));
        }
        with_path.extend(wp);
        dist_only.extend(dd);
        dijkstra.extend(dj);
        fp.extend(ff);
    }
    let best = |k: usize| round_medians[k].iter().copied().fold(f64::MAX, f64::min);
    let rounds = json!({
        "count": round_medians[0].len(),
        "query_with_path_median_us": round_medians[0], "query_distance_median_us": round_medians[1],
        "dijkstra_median_us": round_medians[2], "fast_paths_median_us": round_medians[3],
        "best": {
            "query_with_path_median_us": best(0), "query_distance_median_us": best(1),
            "dijkstra_median_us": best(2), "fast_paths_median_us": best(3),
        },
    });
    // Full customization.
    let weights = metric.input_weights.to_vec();
    // Page faults are counted too: a customization fills fresh memory, and how much of it the
    // system backs on first touch, 4 KiB at a time, is a good part of its time.
    let (mut custom, mut prune, mut custom_faults) = (vec![], vec![], vec![]);
    for _ in 0..if pairs > 2000 { 15 } else { 5 } {
        // As a city customizes: the input weights handed over, the metric keeping them.
        let inputs = weights.clone();
        let faults = minor_page_faults();
        let t = Instant::now();
        let m = city.cch.customize_owned(inputs);
        custom.push(t.elapsed().as_nanos() as u64);
        custom_faults.push(minor_page_faults() - faults);
        let t = Instant::now();
        m.prepare_queries(&city.cch);
        prune.push(t.elapsed().as_nanos() as u64);
        std::hint::black_box(m);
    }
    custom_faults.sort_unstable();
    let custom_faults = custom_faults[custom_faults.len() / 2];
    // 100 arcs changed and live: a copy of the metric, partial customization, swap (one metric),
    // and through City::update_arcs (all six cycling metrics).
    let mut partial = vec![];
    let mut partial_update_only = vec![];
    let mut spare = metric.hierarchy.clone();
    for _ in 0..20 {
        // 100 turns (input arcs) of the hierarchy directly.
        let changes: Vec<(u32, Weight)> = (0..100)
            .map(|_| {
                let a = rng.below(city.turns.turn_count() as u64) as u32;
                (a, weights[a as usize].saturating_mul(3).min(INF_WEIGHT - 1))
            })
            .collect();
        let t = Instant::now();
        let mut m = metric.hierarchy.clone();
        city.cch.update(&mut m, &changes);
        let m = std::sync::Arc::new(m);
        partial.push(t.elapsed().as_nanos() as u64);
        std::hint::black_box(m);
        spare.clone_from(&metric.hierarchy);
        let t = Instant::now();
        city.cch.update(&mut spare, &changes);
        partial_update_only.push(t.elapsed().as_nanos() as u64);
    }
    let update_all = arcs_live_ns(&city, &mut rng, 20, || city.prepare_base_metrics());
    // One avoidance (a street's arcs) added, then the first query that routes around it.
    let avoid_live = avoidance_live_ns(&city, &mut q, &mut rng, &queries[..queries.len().min(20)]);
    // A whole directions request in the engine (what the HTTP benchmark's trips cost before the
    // server): snapping both ends, the route, guidance and the worded v2 route object as JSON, on
    // cycling trips in Manhattan 2.5–3.5 km apart.
    let trips = manhattan_trips(42, 300);
    let mut directions = vec![];
    let mut bytes = 0;
    for _ in 0..(pairs / 1000).max(3) {
        for r in &trips {
            let t = Instant::now();
            let out = city.directions(r, false).unwrap();
            directions.push(t.elapsed().as_nanos() as u64);
            bytes += out.map_or(0, |o| o.route_json.len());
        }
    }
    let directions_bytes = bytes / directions.len();
    let directions = summary(directions);
    let (dist_only, with_path, dijkstra) =
        (summary(dist_only), summary(with_path), summary(dijkstra));
    let prune = summary(prune);
    let (custom, partial, update_all, avoid_live) = (
        summary(custom),
        summary(partial),
        summary(update_all),
        summary(avoid_live),
    );
    let partial_update_only = summary(partial_update_only);
    let memory = city.memory_bytes();
    let breakdown = city.memory_breakdown();
    for (part, bytes) in &breakdown {
        eprintln!("  memory: {part:<36} {:>8.1} MB", *bytes as f64 / 1e6);
    }
    rows.push(format!(
        "nyc-manhattan-below-42nd {} nodes {} arcs ({} CCH arcs): CCH distance {:.2} µs p50, with path {:.2} µs p50 / {:.2} p99; Dijkstra {:.0} µs p50 ({:.0}× slower)",
        n, g.arc_count(), city.cch.arc_count(), median_us(&dist_only), median_us(&with_path),
        with_path["p99_us"].as_f64().unwrap(), median_us(&dijkstra), median_us(&dijkstra) / median_us(&with_path)
    ));
    rows.push(format!(
        "  best of {} rounds (medians): with path {:.2} µs, distance {:.2} µs, Dijkstra {:.0} µs; fast_paths on the same graph and pairs {:.2} µs (ratio {:.2}, {} distance mismatches)",
        rounds["count"], best(0), best(1), best(2), best(3), best(0) / best(3), mismatches
    ));
    rows.push(format!(
        "  full customization {:.2} ms p50 ({} page faults; then {:.2} ms pruning, off the query path); 100 arcs live {:.2} ms p50 (one metric), {:.2} ms (six cycling metrics); one avoidance live {:.3} ms p50; memory {:.1} MB; build {:.2} s, load {:.2} s",
        median_us(&custom) / 1000.0, custom_faults, median_us(&prune) / 1000.0, median_us(&partial) / 1000.0, median_us(&update_all) / 1000.0,
        median_us(&avoid_live) / 1000.0, memory as f64 / 1e6, build_s, load_s
    ));
    rows.push(format!(
        "  directions (snap, route, guidance, v2 route JSON of {} bytes) for 2.5–3.5 km trips: {:.1} µs p50 / {:.1} p99",
        directions_bytes, median_us(&directions), directions["p99_us"].as_f64().unwrap()
    ));
    json!({
        "graph": "nyc-manhattan-below-42nd", "nodes": n, "arcs": g.arc_count(), "cch_arcs": city.cch.arc_count(),
        "cch_triangles": city.cch.triangle_count(), "pairs": pairs, "pairs_connected": found,
        "query_distance": dist_only, "query_with_path": with_path, "dijkstra": dijkstra, "query_rounds": rounds,
        "fast_paths_query_with_path": summary(fp), "fast_paths_prepare_s": fp_prepare_s, "fast_paths_distance_mismatches": mismatches,
        "ratio_best_quietway_to_fast_paths": best(0) / best(3),
        "full_customization": custom, "full_customization_page_faults_p50": custom_faults, "pruning_after_customization": prune, "partial_customization_100_arcs": partial,
        "update_arcs_100_all_cycling_metrics": update_all, "partial_customization_100_arcs_without_copy": partial_update_only, "avoidance_added_and_live": avoid_live,
        "memory_bytes": memory, "build_s": build_s, "load_s": load_s,
        "memory_breakdown": breakdown.iter().map(|(p, b)| json!({ "part": p, "bytes": b })).collect::<Vec<_>>(),
        "directions_2500_3500_m": directions, "directions_route_json_bytes": directions_bytes,
    })
}

fn peak_memory() -> u64 {
    quietway_graph_pipeline::progress::peak_memory_bytes().unwrap_or(0)
}

fn main() {
    let quietway_bench::BenchArgs { quick, shared, out } = quietway_bench::bench_args("engine");
    let pairs = if quick { 2_000 } else { 10_000 };
    let mut rows = vec![];
    let mut gr = vec![];
    let maps: &[&str] = if quick {
        &["bremen_time", "south_seattle_car"]
    } else {
        &[
            "bremen_time",
            "bremen_dist",
            "south_seattle_car",
            "graph_ballard",
        ]
    };
    for m in maps {
        gr.push(bench_gr(
            &shared.join(format!("graphs/{m}.gr")),
            pairs,
            &mut rows,
        ));
    }
    let nyc = bench_nyc(&shared, pairs, &mut rows);
    println!(
        "\nEngine benchmark ({} pairs per graph, same random pairs for both engines)",
        pairs
    );
    for r in &rows {
        println!("{r}");
    }
    let result = json!({
        "name": "engine", "quick": quick, "machine": machine(), "peak_memory_bytes": peak_memory(),
        "fast_paths_maps": gr, "nyc": nyc,
    });
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(&out, serde_json::to_string_pretty(&result).unwrap()).unwrap();
    println!("written {}", out.display());
}

/// The process's minor page faults so far (Linux; 0 elsewhere).
fn minor_page_faults() -> u64 {
    // /proc/self/stat: pid (comm) state ppid pgrp session tty_nr tpgid flags minflt ...
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.get(s.rfind(')')? + 2..)?;
            rest.split(' ').nth(7)?.parse().ok()
        })
        .unwrap_or(0)
}
