//! The engine on every shared extract: hierarchy invariants, and every metric's queries compared
//! with a plain Dijkstra (test-only, below), with and without avoidances. Seeds are logged;
//! `QW_SEED=<n>` reruns one.

mod common;

use common::*;
use quietway_engine::avoid::{Avoidance, Schedule, Severity};
use quietway_engine::cch::{Cch, CustomizedMetric, INF_WEIGHT, Weight};
use quietway_engine::city::{City, CityMetric, Profile, RouteRequest, SNAP_SLACK_M};
use quietway_engine::graph::BikeAccess;
use quietway_engine::metric::MetricKind;
use quietway_engine::query::CchQuery;
use quietway_engine::testing::{Rng, reference_dijkstra};

/// Dijkstra on the graph a metric's hierarchy ranks: the turn model (routing node = arc, input
/// arc `t` = turn `t`), or for a metric on junctions the graph itself (input arc = arc).
fn reference(city: &City, m: &CityMetric, w: &[Weight], sources: &[(u32, Weight)]) -> Vec<Weight> {
    let (t, g) = (&city.turns, &city.graph);
    if m.on_junctions {
        reference_dijkstra(g.node_count(), &g.edge_tail, &g.edge_head, w, sources)
    } else {
        // The reference takes edges both ways: a turn's reverse is no turn.
        let both: Vec<Weight> = w.iter().flat_map(|&x| [x, INF_WEIGHT]).collect();
        reference_dijkstra(t.node_count(), &t.turn_from, &t.turn_to, &both, sources)
    }
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
/// Checks each pair on the metric as it is and on a copy with the pruned query graph (or on the
/// full hierarchy, if the metric already has its pruned graph). One Dijkstra serves several
/// targets of a source.
/// A query-only metric (walking's, on junctions: no shortcut or input weights) is checked through
/// a full customization of its arc weights, and answers each pair on its own pruned graph too.
fn check_metric(city: &City, m: &CityMetric, rng: &mut Rng, label: &str, pairs: usize) {
    let metric = &m.hierarchy;
    let (whole, full);
    // The hierarchy this metric's weights are on: the cycling one, or for walking (whose metric
    // keeps only its pruned graph and the nodes of its hierarchy) its hierarchy on junctions,
    // built again.
    let (cch, metric, query_only) = if metric.has_shortcut_weights() {
        (&*m.cch, metric, None)
    } else {
        let g = &city.graph;
        let (tails, heads) = quietway_engine::cch::both_ways(&g.edge_tail, &g.edge_head);
        whole = Cch::new(g.node_count(), &tails, &heads, &g.walking_order);
        full = whole.customize(&m.arc_weights.to_vec());
        (&whole, &full, Some(metric))
    };
    cch.check_triangles(metric)
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    let other = metric.clone();
    if metric.pruned.get().is_none() {
        other.prepare_queries(cch);
    }
    let other_label = format!("{label} (other query graph)");
    let inputs = metric.input_weights.to_vec();
    let n = cch.node_count() as u64;
    let mut q = CchQuery::new(cch);
    const TARGETS_PER_SOURCE: usize = 5;
    for _ in 0..pairs.div_ceil(TARGETS_PER_SOURCE) {
        let s = rng.below(n) as u32;
        let dist = reference(city, m, &inputs, &[(s, 0)]);
        for _ in 0..TARGETS_PER_SOURCE {
            let t = rng.below(n) as u32;
            check_query(
                city,
                m,
                &inputs,
                cch,
                metric,
                &mut q,
                s,
                t,
                dist[t as usize],
                label,
            );
            check_query(
                city,
                m,
                &inputs,
                cch,
                &other,
                &mut q,
                s,
                t,
                dist[t as usize],
                &other_label,
            );
            if let Some(qm) = query_only {
                check_query(
                    city,
                    m,
                    &inputs,
                    &m.cch,
                    qm,
                    &mut q,
                    s,
                    t,
                    dist[t as usize],
                    label,
                );
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn check_query(
    city: &City,
    m: &CityMetric,
    inputs: &[Weight],
    cch: &Cch,
    metric: &CustomizedMetric,
    q: &mut CchQuery,
    s: u32,
    t: u32,
    want: Weight,
    label: &str,
) {
    q.reset()
        .add_source(s, 0, cch)
        .add_target(t, 0, cch)
        .run(cch, metric);
    assert_eq!(q.distance(), want, "{label}: {s} → {t}");
    if want < INF_WEIGHT {
        let path = q.arc_path(cch, metric);
        let total: u64 = path.iter().map(|&a| inputs[a as usize] as u64).sum();
        assert_eq!(total, want as u64, "{label}: path weight");
        if let (Some(&first), Some(&last)) = (path.first(), path.last()) {
            let ends = |i| m.input_ends(&city.graph, &city.turns, i);
            assert_eq!(ends(first).0, s, "{label}");
            assert_eq!(ends(last).1, t, "{label}");
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
    use rayon::prelude::*;
    let seed = seed();
    eprintln!("engine_on_extracts seed {seed}");
    // Cities in parallel (each with its own random stream): the Dijkstras are sequential.
    shared_extracts()
        .into_par_iter()
        .enumerate()
        .for_each(|(i, (city_id, file))| {
            let mut rng = Rng(seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            let (g, _) = build_city(&city_id, std::slice::from_ref(&file), 25).unwrap();
            let city = City::from_graph(g, "test".into(), None).unwrap();
            // The whole turn graph's hierarchy (chordal), then the cycling one the city keeps.
            let t = &city.turns;
            let order = quietway_engine::order::turn_graph_order(t, &city.graph);
            Cch::new(t.node_count(), &t.turn_from, &t.turn_to, &order)
                .check(None)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            city.cch
                .check(None)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
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
        });
}

/// A partial customization of many turns runs in parallel tasks over the elimination tree; on a
/// real hierarchy its weights equal a full customization's, round after round.
#[test]
fn partial_customization_in_tasks_equals_full_on_an_extract() {
    let seed = seed();
    eprintln!("partial customization seed {seed}");
    let mut rng = Rng(seed ^ 0x7a5c);
    let city = lower_manhattan();
    let mut metric = city
        .metric(MetricKind::SuperSafeDay, None)
        .hierarchy
        .clone();
    let inputs = metric.input_weights.len() as u64;
    for round in 0..6 {
        let changes: Vec<(u32, Weight)> = (0..100 + rng.below(200))
            .map(|_| {
                let a = rng.below(inputs) as u32;
                let w = metric.input_weights[a as usize];
                let w = match rng.below(3) {
                    0 => INF_WEIGHT,
                    1 => w.saturating_mul(3).min(INF_WEIGHT - 1),
                    _ => w / 2,
                };
                (a, w)
            })
            .collect();
        city.cch.update(&mut metric, &changes);
        let full = city.cch.customize(&metric.input_weights.to_vec());
        assert!(
            metric.side_weights(0) == full.side_weights(0)
                && metric.side_weights(1) == full.side_weights(1),
            "seed {seed} round {round}: partial and full customization differ"
        );
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
    // The cycling hierarchy keeps only what cycling can ever use: every turn a cycling metric
    // prices finite is among those, also the U-turns the closures made the way on at new dead ends.
    let usable = quietway_engine::metric::cycling_can_use(&city.graph, &city.turns);
    for kind in MetricKind::ALL {
        let with = city.metric(kind, Some(50));
        if kind.is_cycling() {
            let w = with.input_weights.to_vec();
            let beyond = (0..w.len())
                .filter(|&i| w[i] < INF_WEIGHT && !usable[i])
                .count();
            assert_eq!(beyond, 0, "{kind:?}: finite turns cycling cannot use");
        }
        for &a in &closed {
            let expect_closed = kind.is_cycling();
            assert_eq!(
                with.arc_weights[a as usize] >= INF_WEIGHT,
                expect_closed || model.arc_weight(&city.graph, a, kind) >= INF_WEIGHT
            );
        }
        check_metric(&city, &with, &mut rng, &format!("{kind:?} seed {seed}"), 40);
    }
    assert!(city.remove_avoidance("c"));
    let after = city.metric(MetricKind::SuperSafeDay, Some(500));
    let base = model.weights(&city.graph, MetricKind::SuperSafeDay);
    assert_eq!(
        after.arc_weights.to_vec(),
        base,
        "removing the avoidance restores the weights"
    );
}

/// A trip between two random junctions, each end moved a few metres off it.
fn random_trip(
    rng: &mut Rng,
    g: &quietway_engine::graph::CityGraph,
    profile: Profile,
    supersafe: bool,
) -> RouteRequest {
    let v1 = rng.below(g.node_count() as u64) as u32;
    let v2 = rng.below(g.node_count() as u64) as u32;
    let (p1, p2) = (g.node_lon_lat(v1), g.node_lon_lat(v2));
    RouteRequest {
        waypoints: vec![[p1[0] + 0.0001, p1[1]], [p2[0], p2[1] + 0.0001]],
        profile,
        supersafe,
        night: false,
        bearing: None,
        departure: None,
    }
}

/// Walking routes on its hierarchy on junctions: each leg's weight is Dijkstra's over the graph's
/// arcs from the junctions ahead of the start (with the part of the start's arc to them) to the
/// junctions the end's arcs leave (with the part of the arc up to the end), its pieces are
/// contiguous, and it never turns back on an arc.
#[test]
fn walking_routes_between_snapped_points_are_shortest() {
    let seed = seed();
    eprintln!("walking routes seed {seed}");
    let mut rng = Rng(seed ^ 0x3a1c);
    let city = lower_manhattan();
    let g = &city.graph;
    let metric = city.metric(MetricKind::Walking, None);
    assert!(metric.on_junctions);
    // The same both ways, its query graph is stored once and read as its own mirror the other way
    // (the routes below unpack through it).
    assert!(
        metric.hierarchy.pruned.get().is_some_and(|p| p.mirrored),
        "walking's query graph is kept for both ways"
    );
    let w = &metric.arc_weights;
    let part = |x: Weight, f: f64| (x as f64 * f.clamp(0.0, 1.0)).round() as Weight;
    let mut checked = 0;
    for _ in 0..60 {
        let req = random_trip(&mut rng, g, Profile::Walking, false);
        let Some(route) = city.route(&req).unwrap() else {
            continue;
        };
        let (a, b) = (&route.waypoints[0], &route.waypoints[1]);
        if a.edge == b.edge {
            continue; // a walk along one segment needs no search
        }
        let leg = &route.legs[0];
        let ends = [(2 * a.edge, a.t), (2 * a.edge + 1, 1.0 - a.t)];
        let seeds: Vec<(u32, Weight)> = ends
            .iter()
            .filter(|&&(arc, _)| w[arc as usize] < INF_WEIGHT)
            .map(|&(arc, f)| (g.arc_head(arc), part(w[arc as usize], 1.0 - f)))
            .collect();
        let dist = reference(&city, &metric, &w.to_vec(), &seeds);
        let want = [(2 * b.edge, b.t), (2 * b.edge + 1, 1.0 - b.t)]
            .iter()
            .filter(|&&(arc, _)| w[arc as usize] < INF_WEIGHT)
            .map(|&(arc, f)| {
                dist[g.arc_tail(arc) as usize].saturating_add(part(w[arc as usize], f))
            })
            .min()
            .unwrap();
        // The chosen candidates may lie a few metres beyond the nearest (priced in `snap_extra`).
        assert!(
            leg.weight - leg.snap_extra <= want,
            "seed {seed}: walked {} (extra {}), Dijkstra {want}",
            leg.weight,
            leg.snap_extra
        );
        if leg.snap_extra == 0 {
            assert_eq!(leg.weight, want, "seed {seed}");
        }
        for p in leg.pieces.windows(2) {
            assert_eq!(g.arc_head(p[0].arc), g.arc_tail(p[1].arc), "seed {seed}");
            assert_ne!(p[0].arc ^ 1, p[1].arc, "seed {seed}: turned back on an arc");
        }
        checked += 1;
    }
    assert!(checked > 30, "only {checked} walks found");
}

#[test]
fn routes_between_snapped_points_are_shortest() {
    let seed = seed();
    eprintln!("routes seed {seed}");
    let mut rng = Rng(seed ^ 99);
    let city = lower_manhattan();
    let g = &city.graph;
    for supersafe in [true, false] {
        // A SuperSafe leg rides the full weighting, the gentler one or Direct's route (the
        // bounded detour): its weight is the shortest distance in one of them.
        let kinds = if supersafe {
            vec![
                MetricKind::SuperSafeDay,
                MetricKind::SuperSafeGentleDay,
                MetricKind::DirectDay,
            ]
        } else {
            vec![MetricKind::DirectDay]
        };
        let metrics: Vec<_> = kinds.iter().map(|&k| city.metric(k, None)).collect();
        let (mut checked, mut priced) = (0, 0);
        for _ in 0..60 {
            let req = random_trip(&mut rng, g, Profile::Cycling, supersafe);
            let Some(route) = city.route(&req).unwrap() else {
                continue;
            };
            let (a, b) = (&route.waypoints[0], &route.waypoints[1]);
            let (ea, eb) = (a.edge, b.edge);
            if ea == eb {
                continue; // a trip along one segment needs no search
            }
            // The nearest candidate at each end: another one pays for the metres it lies farther
            // from the point, at the rate of the arc it is ridden on, or where the nearest way can
            // only be pushed, at the nearest arc's rate if dearer (see `City::leg_between`).
            let nearest = |p: [f64; 2]| {
                let c =
                    city.snap_candidates(p[0], p[1], kinds[0], &metrics[0], None, SNAP_SLACK_M)[0];
                (c.distance_m, c.edge)
            };
            let ((near_a, first_a), (near_b, first_b)) =
                (nearest(req.waypoints[0]), nearest(req.waypoints[1]));
            let pushed_only = |e: u32| {
                [2 * e, 2 * e + 1]
                    .iter()
                    .all(|&a| g.arc_attrs[a as usize].bike() != BikeAccess::Ride)
            };
            // Reference: Dijkstra on the turn model from the arcs the chosen start lies on to every
            // routing node of the arcs the chosen end lies on, each end's extra added per arc.
            let part = |x: Weight, f: f64| (x as f64 * f).round() as Weight;
            let wants: Vec<Weight> = metrics
                .iter()
                .map(|metric| {
                    let w = &metric.arc_weights;
                    let rate = |arc: u32| {
                        let len = g.arc_length_m(arc) as f64;
                        if len <= 0.0 || w[arc as usize] >= INF_WEIGHT {
                            0.0
                        } else {
                            w[arc as usize] as f64 / len
                        }
                    };
                    let extra = |arc: u32, m: f64, first: u32| -> Weight {
                        let mut per_m = rate(arc);
                        if m <= 0.0 || per_m == 0.0 {
                            return 0;
                        }
                        if pushed_only(first) && arc / 2 != first {
                            per_m = per_m.max(rate(2 * first).max(rate(2 * first + 1)));
                        }
                        (per_m * m).round().min(INF_WEIGHT as f64 / 4.0) as Weight
                    };
                    let mut want = INF_WEIGHT;
                    for (arc, f, ok) in [
                        (2 * ea, a.t, a.forward),
                        (2 * ea + 1, 1.0 - a.t, a.backward),
                    ] {
                        if !ok || w[arc as usize] >= INF_WEIGHT {
                            continue;
                        }
                        let start = part(w[arc as usize], 1.0 - f)
                            + extra(arc, a.distance_m - near_a, first_a);
                        let dist = reference(
                            &city,
                            metric,
                            &metric.input_weights.to_vec(),
                            &[(arc, start)],
                        );
                        for (arc, f) in [(2 * eb, b.t), (2 * eb + 1, 1.0 - b.t)] {
                            let wa = w[arc as usize];
                            if wa >= INF_WEIGHT {
                                continue;
                            }
                            let x = extra(arc, b.distance_m - near_b, first_b);
                            for n in city.turns.nodes_of_arc(arc) {
                                if dist[n as usize] < INF_WEIGHT {
                                    want = want.min(dist[n as usize] - (wa - part(wa, f)) + x);
                                }
                            }
                        }
                    }
                    want
                })
                .collect();
            let leg = &route.legs[0];
            if leg.turn_backs_priced == 0 {
                assert!(
                    wants.contains(&leg.weight),
                    "seed {seed}: weight {} not among {wants:?}",
                    leg.weight
                );
            } else {
                // Searched again with its turn-backs priced (City::without_turn_backs): a
                // longer way than the plain shortest one of its metric.
                assert!(
                    leg.weight >= *wants.iter().min().unwrap(),
                    "seed {seed}: weight {} below {wants:?}",
                    leg.weight
                );
                priced += 1;
            }
            // Pieces are contiguous.
            for p in route.legs[0].pieces.windows(2) {
                assert_eq!(g.arc_head(p[0].arc), g.arc_tail(p[1].arc), "seed {seed}");
            }
            checked += 1;
        }
        assert!(checked > 30, "only {checked} routes found");
        assert!(
            priced * 4 < checked,
            "{priced} of {checked} routes priced turn-backs"
        );
    }
}

/// A city loads with the metrics of `LOADED_METRICS`; the others are built by their first use,
/// with the arc changes made before it in force: their weights equal those of a city that had
/// every metric built before the same changes (updated by partial customization).
#[test]
fn metrics_not_loaded_are_built_on_first_use_with_the_changes_in_force() {
    use quietway_engine::city::{ArcChange, LOADED_METRICS};
    let lazy = lower_manhattan();
    for kind in MetricKind::ALL {
        assert_eq!(
            lazy.is_built(kind),
            LOADED_METRICS.contains(&kind),
            "{kind:?}"
        );
    }
    let eager = lower_manhattan();
    eager.prepare_base_metrics();
    assert!(MetricKind::ALL.iter().all(|&k| eager.is_built(k)));
    let mut rng = Rng(seed());
    let n = lazy.graph.arc_count() as u64;
    let changes: Vec<(u32, ArcChange)> = (0..60)
        .map(|i| {
            let change = if i % 3 == 0 {
                ArcChange::Closed
            } else {
                ArcChange::Factor(2.5)
            };
            (rng.below(n) as u32, change)
        })
        .collect();
    lazy.update_arcs(&changes).unwrap();
    eager.update_arcs(&changes).unwrap();
    for kind in MetricKind::ALL {
        let (a, b) = (lazy.metric(kind, None), eager.metric(kind, None));
        assert!(lazy.is_built(kind));
        assert_eq!(a.arc_weights, b.arc_weights, "{kind:?}");
        if kind.is_cycling() {
            assert_eq!(
                a.input_weights.to_vec(),
                b.input_weights.to_vec(),
                "{kind:?}"
            );
            assert_eq!(a.side_weights(0), b.side_weights(0), "{kind:?}");
            assert_eq!(a.side_weights(1), b.side_weights(1), "{kind:?}");
        }
    }
}

/// Pruned query graphs keep to the city's budget. With none, routes in steady use leave every
/// cycling metric on the full hierarchy (walking's metric is its pruned graph, outside the budget),
/// where an unlimited budget prunes the metric after its 16th route; with room for about one
/// graph, the first metric of `MetricKind::ALL` (SuperSafe by day) is pruned and no other.
#[test]
fn pruned_query_graphs_keep_to_the_budget() {
    let pruned = |city: &City, kind| city.metric(kind, None).pruned.get().is_some();
    let req = RouteRequest {
        waypoints: vec![[-74.0113, 40.7060], [-73.9950, 40.7180]],
        profile: Profile::Cycling,
        supersafe: false,
        night: false,
        bearing: None,
        departure: None,
    };
    let routed_in_steady_use = |budget: usize| {
        let city = lower_manhattan();
        city.set_query_graph_budget(budget);
        for _ in 0..20 {
            assert!(matches!(city.route(&req), Ok(Some(_))));
        }
        // The pruning runs on the thread pool: wait for it (up to 20 s) where it was started.
        for _ in 0..200 {
            if pruned(&city, MetricKind::DirectDay) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        city
    };
    let unlimited = routed_in_steady_use(usize::MAX);
    assert!(pruned(&unlimited, MetricKind::DirectDay));
    let none = routed_in_steady_use(0);
    assert!(!pruned(&none, MetricKind::DirectDay));
    none.prepare_base_metrics();
    for kind in MetricKind::ALL {
        assert_eq!(pruned(&none, kind), !kind.is_cycling(), "{kind:?}");
    }

    // Room for one and a half of a pruned graph (Direct's, about the size of SuperSafe's).
    let one = unlimited
        .metric(MetricKind::DirectDay, None)
        .pruned
        .get()
        .unwrap()
        .memory_bytes()
        * 3
        / 2;
    let city = lower_manhattan();
    city.set_query_graph_budget(one);
    city.prepare_base_metrics();
    for kind in MetricKind::ALL {
        let want = kind == MetricKind::SuperSafeDay || !kind.is_cycling();
        assert_eq!(pruned(&city, kind), want, "{kind:?}");
    }
}
