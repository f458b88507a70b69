//! The engine on every shared extract: hierarchy invariants, and every metric's queries compared
//! with a plain Dijkstra (test-only, below), with and without avoidances. Seeds are logged;
//! `QW_SEED=<n>` reruns one.

mod common;

use common::*;
use quietway_engine::avoid::{Avoidance, Schedule, Severity};
use quietway_engine::cch::{CustomizedMetric, INF_WEIGHT, Weight};
use quietway_engine::city::{City, Profile, RouteRequest};
use quietway_engine::graph::CityGraph;
use quietway_engine::metric::MetricKind;
use quietway_engine::query::CchQuery;
use quietway_engine::testing::{Rng, reference_dijkstra};

fn reference(g: &CityGraph, w: &[Weight], sources: &[(u32, Weight)]) -> Vec<Weight> {
    reference_dijkstra(g.node_count(), &g.edge_tail, &g.edge_head, w, sources)
}

fn seed() -> u64 {
    std::env::var("QW_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        })
}

/// Queries between random nodes on one metric equal Dijkstra's distances, and their unpacked paths run
/// from source to target with exactly that weight; the hierarchy's invariants hold.
/// Checks queries on the metric as it is, then on a copy with the pruned query graph (or on the
/// full hierarchy, if the metric already has its pruned graph).
fn check_metric(city: &City, metric: &CustomizedMetric, rng: &mut Rng, label: &str, pairs: usize) {
    check_queries(city, metric, rng, label, pairs);
    let other = metric.clone();
    if metric.pruned.get().is_none() {
        other.prepare_queries(&city.cch);
    }
    check_queries(
        city,
        &other,
        rng,
        &format!("{label} (other query graph)"),
        pairs,
    );
}

fn check_queries(city: &City, metric: &CustomizedMetric, rng: &mut Rng, label: &str, pairs: usize) {
    let g = &city.graph;
    let n = g.node_count() as u64;
    let mut q = CchQuery::new(&city.cch);
    city.cch
        .check(Some(metric))
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    for _ in 0..pairs {
        let (s, t) = (rng.below(n) as u32, rng.below(n) as u32);
        let want = reference(g, &metric.input_weights, &[(s, 0)])[t as usize];
        q.reset()
            .add_source(s, 0, &city.cch)
            .add_target(t, 0, &city.cch)
            .run(&city.cch, metric);
        assert_eq!(q.distance(), want, "{label}: {s} → {t}");
        if want < INF_WEIGHT {
            let path = q.arc_path(&city.cch, metric);
            let total: u64 = path
                .iter()
                .map(|&a| metric.input_weights[a as usize] as u64)
                .sum();
            assert_eq!(total, want as u64, "{label}: path weight");
            if let (Some(&first), Some(&last)) = (path.first(), path.last()) {
                assert_eq!(g.arc_tail(first), s, "{label}");
                assert_eq!(g.arc_head(last), t, "{label}");
            }
        }
    }
}

fn lower_manhattan() -> City {
    let (g, _) = build_city(
        "nyc",
        &[shared_data().join("osm/nyc-lower-manhattan.osm.pbf")],
        25,
    )
    .unwrap();
    City::from_graph(g, "test".into(), None).unwrap()
}

#[test]
fn every_extract_every_metric_matches_dijkstra() {
    let seed = seed();
    eprintln!("engine_on_extracts seed {seed}");
    let mut rng = Rng(seed);
    for (city_id, file) in shared_extracts() {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let (g, _) = build_city(&city_id, std::slice::from_ref(&file), 25).unwrap();
        let city = City::from_graph(g, "test".into(), None).unwrap();
        for kind in MetricKind::ALL {
            let metric = city.metric(kind, None);
            check_metric(
                &city,
                &metric,
                &mut rng,
                &format!("{name} {kind:?} seed {seed}"),
                25,
            );
        }
    }
}

#[test]
fn avoidances_change_cycling_metrics_only_and_match_dijkstra() {
    let seed = seed();
    eprintln!("avoidances seed {seed}");
    let mut rng = Rng(seed ^ 77);
    let city = lower_manhattan();
    let arcs = city.graph.arc_count() as u64;
    let closed: Vec<u32> = (0..200).map(|_| rng.below(arcs) as u32).collect();
    let avoided: Vec<u32> = (0..200).map(|_| rng.below(arcs) as u32).collect();
    city.add_avoidance(Avoidance {
        id: "c".into(),
        arcs: closed.clone(),
        severity: Severity::Closed,
        schedule: Schedule::Always,
    })
    .unwrap();
    city.add_avoidance(Avoidance {
        id: "a".into(),
        arcs: avoided.clone(),
        severity: Severity::Avoid,
        schedule: Schedule::Once { start: 0, end: 100 },
    })
    .unwrap();
    assert_eq!(
        city.active_avoidances(Some(50)),
        vec!["a".to_string(), "c".to_string()]
    );
    assert_eq!(city.active_avoidances(Some(500)), vec!["c".to_string()]);
    let model = city.model();
    for kind in MetricKind::ALL {
        let with = city.metric(kind, Some(50));
        for &a in &closed {
            let expect_closed = kind.is_cycling();
            assert_eq!(
                with.input_weights[a as usize] >= INF_WEIGHT,
                expect_closed || model.arc_weight(&city.graph, a, kind) >= INF_WEIGHT
            );
        }
        check_metric(&city, &with, &mut rng, &format!("{kind:?} seed {seed}"), 40);
    }
    assert!(city.remove_avoidance("c"));
    let after = city.metric(MetricKind::SuperSafeDay, Some(500));
    let base = model.weights(&city.graph, MetricKind::SuperSafeDay);
    assert_eq!(
        after.input_weights, base,
        "removing the avoidance restores the weights"
    );
}

#[test]
fn routes_between_snapped_points_are_shortest() {
    let seed = seed();
    eprintln!("routes seed {seed}");
    let mut rng = Rng(seed ^ 99);
    let city = lower_manhattan();
    let g = &city.graph;
    for supersafe in [true, false] {
        let metric = city.metric(MetricKind::cycling(supersafe, false), None);
        let w = &metric.input_weights;
        let mut checked = 0;
        for _ in 0..60 {
            let v1 = rng.below(g.node_count() as u64) as u32;
            let v2 = rng.below(g.node_count() as u64) as u32;
            let p1 = g.node_lon_lat(v1);
            let p2 = g.node_lon_lat(v2);
            let req = RouteRequest {
                waypoints: vec![[p1[0] + 0.0001, p1[1]], [p2[0], p2[1] + 0.0001]],
                profile: Profile::Cycling,
                supersafe,
                night: false,
                bearing: None,
                departure: None,
            };
            let Some(route) = city.route(&req).unwrap() else {
                continue;
            };
            let (a, b) = (&route.waypoints[0], &route.waypoints[1]);
            // Reference: Dijkstra from the first snap's seeds to the second snap's seeds.
            let (ea, eb) = (a.edge as usize, b.edge as usize);
            let part = |x: Weight, f: f64| (x as f64 * f).round() as Weight;
            let mut seeds = vec![];
            if a.forward && w[2 * ea] < INF_WEIGHT {
                seeds.push((g.edge_head[ea], part(w[2 * ea], 1.0 - a.t)));
            }
            if a.backward && w[2 * ea + 1] < INF_WEIGHT {
                seeds.push((g.edge_tail[ea], part(w[2 * ea + 1], a.t)));
            }
            let dist = reference(g, w, &seeds);
            let mut want = INF_WEIGHT;
            if w[2 * eb] < INF_WEIGHT {
                want =
                    want.min(dist[g.edge_tail[eb] as usize].saturating_add(part(w[2 * eb], b.t)));
            }
            if w[2 * eb + 1] < INF_WEIGHT {
                want = want.min(
                    dist[g.edge_head[eb] as usize].saturating_add(part(w[2 * eb + 1], 1.0 - b.t)),
                );
            }
            if ea == eb {
                if a.t <= b.t && a.forward && w[2 * ea] < INF_WEIGHT {
                    want = want.min(part(w[2 * ea], b.t - a.t));
                }
                if a.t >= b.t && a.backward && w[2 * ea + 1] < INF_WEIGHT {
                    want = want.min(part(w[2 * ea + 1], a.t - b.t));
                }
            }
            assert_eq!(route.legs[0].weight, want, "seed {seed}");
            // Pieces are contiguous.
            for p in route.legs[0].pieces.windows(2) {
                assert_eq!(g.arc_head(p[0].arc), g.arc_tail(p[1].arc), "seed {seed}");
            }
            checked += 1;
        }
        assert!(checked > 30, "only {checked} routes found");
    }
}
