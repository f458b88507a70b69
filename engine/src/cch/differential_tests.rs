//! Randomized differential tests of the hierarchy against a plain Dijkstra, seeds logged so a
//! failure reproduces: `QW_SEED=<seed> cargo test -p quietway-engine differential`.

use crate::cch::order::{edge_pairs, order_for};
use crate::cch::query::CchQuery;
use crate::cch::{Cch, INF_WEIGHT};
use crate::testing::{RandomGraph, Rng, random_graph, reference_dijkstra};

fn seeds() -> Vec<u64> {
    match std::env::var("QW_SEED") {
        Ok(s) => vec![s.parse().expect("QW_SEED is a number")],
        Err(_) => {
            let base = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64;
            (0..12).map(|i| base.wrapping_add(i * 7919)).collect()
        }
    }
}

/// A random graph of `min` to `min + spread` nodes and its hierarchy in the nested-dissection order.
fn random_cch(rng: &mut Rng, min: usize, spread: u64) -> (usize, RandomGraph, Cch) {
    let n = min + rng.below(spread) as usize;
    let g = random_graph(rng, n);
    let mut pairs = edge_pairs(&g.tails, &g.heads);
    let order = order_for(n, &mut pairs, &g.coords);
    let (tails, heads) = crate::cch::both_ways(&g.tails, &g.heads);
    let cch = Cch::new(n, &tails, &heads, &order);
    (n, g, cch)
}

#[test]
fn differential_random_graphs_queries_and_paths() {
    for seed in seeds() {
        eprintln!("differential seed {seed}");
        let mut rng = Rng(seed);
        let (n, g, cch) = random_cch(&mut rng, 50, 400);
        let full = cch.customize(&g.weights);
        cch.check(Some(&full))
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        // The same queries on the full hierarchy and on the pruned query graph.
        let pruned = full.clone();
        pruned.prepare_queries(&cch);
        let mut q = CchQuery::new(&cch);
        for i in 0..80 {
            let metric = if i % 2 == 0 { &full } else { &pruned };
            let (s, t) = (rng.below(n as u64) as u32, rng.below(n as u64) as u32);
            let reference = reference_dijkstra(n, &g.tails, &g.heads, &g.weights, &[(s, 0)]);
            q.reset()
                .add_source(s, 0, &cch)
                .add_target(t, 0, &cch)
                .run(&cch, metric);
            assert_eq!(
                q.distance(),
                reference[t as usize],
                "seed {seed}: {s} → {t}"
            );
            if q.distance() < INF_WEIGHT {
                let path = q.arc_path(&cch, metric);
                assert_path(&g, &g.weights, s, t, &path, q.distance(), seed);
            }
        }
    }
}

/// `path` (input arcs) runs from `s` to `t` and weighs `distance` under `weights`.
fn assert_path(
    g: &RandomGraph,
    weights: &[u32],
    s: u32,
    t: u32,
    path: &[u32],
    distance: u32,
    seed: u64,
) {
    let mut at = s;
    let mut total = 0u32;
    for &a in path {
        let e = (a / 2) as usize;
        let (from, to) = if a % 2 == 0 {
            (g.tails[e], g.heads[e])
        } else {
            (g.heads[e], g.tails[e])
        };
        assert_eq!(from, at, "seed {seed}: path is not contiguous");
        at = to;
        total += weights[a as usize];
    }
    assert_eq!(at, t, "seed {seed}: path ends elsewhere");
    assert_eq!(
        total, distance,
        "seed {seed}: path weight differs from distance"
    );
}

#[test]
fn differential_multi_seed_queries() {
    for seed in seeds() {
        let mut rng = Rng(seed ^ 0xabc);
        let (n, g, cch) = random_cch(&mut rng, 100, 200);
        let full = cch.customize(&g.weights);
        let pruned = full.clone();
        pruned.prepare_queries(&cch);
        let mut q = CchQuery::new(&cch);
        for i in 0..60 {
            let metric = if i % 2 == 0 { &full } else { &pruned };
            let sources: Vec<(u32, u32)> = (0..2)
                .map(|_| (rng.below(n as u64) as u32, rng.below(50) as u32))
                .collect();
            let targets: Vec<(u32, u32)> = (0..2)
                .map(|_| (rng.below(n as u64) as u32, rng.below(50) as u32))
                .collect();
            let dist = reference_dijkstra(n, &g.tails, &g.heads, &g.weights, &sources);
            let want = targets
                .iter()
                .map(|&(t, d)| dist[t as usize].saturating_add(d).min(INF_WEIGHT))
                .min()
                .unwrap();
            q.reset();
            for &(s, d) in &sources {
                q.add_source(s, d, &cch);
            }
            for &(t, d) in &targets {
                q.add_target(t, d, &cch);
            }
            q.run(&cch, metric);
            assert_eq!(q.distance(), want, "seed {seed}");
        }
    }
}

#[test]
fn partial_customization_equals_full_customization() {
    for seed in seeds() {
        eprintln!("partial customization seed {seed}");
        let mut rng = Rng(seed ^ 0x5eed);
        let (n, g, mut cch) = random_cch(&mut rng, 100, 300);
        if seed % 2 == 1 {
            // As a city's hierarchy: a changed input's arc found from its ends.
            let (t, h) = crate::cch::both_ways(&g.tails, &g.heads);
            cch.keep_inputs_by_ends(t.into(), h.into());
        }
        let mut metric = cch.customize(&g.weights);
        let mut weights = g.weights.clone();
        let mut q = CchQuery::new(&cch);
        for round in 0..5 {
            let changes: Vec<(u32, u32)> = (0..1 + rng.below(20))
                .map(|_| {
                    let a = rng.below(weights.len() as u64) as u32;
                    let w = if rng.below(3) == 0 {
                        INF_WEIGHT
                    } else {
                        1 + rng.below(2000) as u32
                    };
                    (a, w)
                })
                .collect();
            for &(a, w) in &changes {
                weights[a as usize] = w;
            }
            // The same changes in parallel tasks, the subtrees split finely.
            let mut tasks = metric.clone();
            let split = 1 + rng.below(40) as u32;
            cch.update_in_tasks(&mut tasks, &changes, Some(split));
            cch.update(&mut metric, &changes);
            let full = cch.customize(&weights);
            assert_eq!(
                metric.side_weights(0),
                full.side_weights(0),
                "seed {seed} round {round}"
            );
            assert_eq!(
                metric.side_weights(1),
                full.side_weights(1),
                "seed {seed} round {round}"
            );
            assert_eq!(
                tasks.side_weights(0),
                full.side_weights(0),
                "seed {seed} round {round} split {split}"
            );
            assert_eq!(
                tasks.side_weights(1),
                full.side_weights(1),
                "seed {seed} round {round} split {split}"
            );
            cch.check(Some(&metric)).unwrap();
            // Paths unpack on the updated metric: by search on the full hierarchy (no entries are
            // stored), then from the entries of its pruned graph.
            for i in 0..40 {
                if i == 20 {
                    metric.prepare_queries(&cch);
                }
                let (s, t) = (rng.below(n as u64) as u32, rng.below(n as u64) as u32);
                q.reset()
                    .add_source(s, 0, &cch)
                    .add_target(t, 0, &cch)
                    .run(&cch, &metric);
                if q.distance() < INF_WEIGHT {
                    let path = q.arc_path(&cch, &metric);
                    assert_path(&g, &weights, s, t, &path, q.distance(), seed);
                }
            }
        }
    }
}

#[test]
fn every_lower_triangle_is_found_by_merge_and_by_search() {
    // `for_each_lower_triangle` marks one downward list and looks the other up when their lengths
    // are close, and searches the shorter in the longer otherwise; both must give what `lower_triangles` gives.
    // Random graphs of a few hundred nodes have both kinds of arcs (hubs high in the order have
    // long downward lists).
    let (mut merged, mut searched) = (0, 0);
    for seed in seeds() {
        let mut rng = Rng(seed ^ 0x7e1a);
        let (_, _, cch) = random_cch(&mut rng, 100, 300);
        for b in 0..cch.arc_count() as u32 {
            let want: Vec<(u32, u32)> = cch.lower_triangles(b).collect();
            let mut got = vec![];
            cch.for_each_lower_triangle(b, |xy, xz| got.push((xy, xz)));
            assert_eq!(got, want, "seed {seed} arc {b}");
            let (y, z) = (cch.arc_tail(b) as usize, cch.up_head[b as usize] as usize);
            let len = |v: usize| (cch.down_first[v + 1] - cch.down_first[v]) as usize;
            let (s, l) = (len(y).min(len(z)), len(y).max(len(z)));
            if s * super::MERGE_RATIO >= l {
                merged += 1;
            } else if s > 0 {
                searched += 1;
            }
        }
    }
    assert!(
        merged > 0 && searched > 0,
        "merged {merged}, searched {searched}"
    );
}

#[test]
fn an_arcs_tail_is_the_node_whose_upward_list_holds_it() {
    for seed in seeds() {
        let mut rng = Rng(seed ^ 0x7a11);
        let (_, _, cch) = random_cch(&mut rng, 50, 200);
        for x in 0..cch.node_count() {
            for a in cch.up_first[x]..cch.up_first[x + 1] {
                assert_eq!(cch.arc_tail(a) as usize, x, "seed {seed} arc {a}");
                // From any node at or before x whose list starts at or before the arc.
                for from in (0..=x).rev().take(40) {
                    if cch.up_first[from] <= a {
                        assert_eq!(
                            cch.tail_from(from, a) as usize,
                            x,
                            "seed {seed} arc {a} from {from}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn a_restricted_hierarchy_routes_as_the_full_one_on_the_arcs_it_may_use() {
    // The last seed pruned a restriction with an arc of the full hierarchy's, left in the scratch
    // map, taken for one it lacks.
    for seed in seeds().into_iter().chain([1795832241407769981]) {
        eprintln!("restricted hierarchy seed {seed}");
        let mut rng = Rng(seed ^ 0x00a1_10ed);
        let (n, g, cch) = random_cch(&mut rng, 100, 300);
        // A class of metrics that may use three input arcs in five (cycling: the ways a bicycle
        // may use).
        let usable: Vec<bool> = (0..g.weights.len()).map(|_| rng.below(5) < 3).collect();
        let mut sub = cch.restricted(&usable);
        if seed % 2 == 1 {
            // As a city's hierarchy: a changed input's arc found from its ends (none for the
            // input arcs not usable).
            let (t, h) = crate::cch::both_ways(&g.tails, &g.heads);
            sub.keep_inputs_by_ends(t.into(), h.into());
        }
        assert!(sub.is_restricted() && sub.arc_count() <= cch.arc_count());
        sub.check(None).unwrap();
        // What such a metric is: its weights where usable, infinite elsewhere. The restricted
        // hierarchy is given the unmasked weights and must ignore the rest itself.
        let mask = |w: &[u32]| -> Vec<u32> {
            w.iter()
                .zip(&usable)
                .map(|(&w, &u)| if u { w } else { INF_WEIGHT })
                .collect()
        };
        let mut weights = g.weights.clone();
        let mut metric = sub.customize(&weights);
        let mut q = CchQuery::new(&sub);
        for round in 0..4 {
            if round > 0 {
                let changes: Vec<(u32, u32)> = (0..1 + rng.below(20))
                    .map(|_| {
                        let a = rng.below(weights.len() as u64) as u32;
                        let w = match rng.below(3) {
                            0 => INF_WEIGHT,
                            _ => 1 + rng.below(2000) as u32,
                        };
                        (a, w)
                    })
                    .collect();
                for &(a, w) in &changes {
                    weights[a as usize] = w;
                }
                let mut tasks = metric.clone();
                sub.update_in_tasks(&mut tasks, &changes, Some(1 + rng.below(40) as u32));
                sub.update(&mut metric, &changes);
                let fresh = sub.customize(&weights);
                assert_eq!(
                    metric.side_weights(0),
                    fresh.side_weights(0),
                    "seed {seed} round {round}"
                );
                assert_eq!(
                    metric.side_weights(1),
                    fresh.side_weights(1),
                    "seed {seed} round {round}"
                );
                assert_eq!(
                    tasks.side_weights(0),
                    fresh.side_weights(0),
                    "seed {seed} round {round}"
                );
                assert_eq!(
                    tasks.side_weights(1),
                    fresh.side_weights(1),
                    "seed {seed} round {round}"
                );
            }
            sub.check_triangles(&metric).unwrap();
            let masked = mask(&weights);
            let on_full = cch.customize(&masked);
            for i in 0..40 {
                if i == 20 {
                    // Scratch maps as the full hierarchy's customization leaves them on these
                    // threads: node z maps to an arc of the full hierarchy, whose index often
                    // falls in the list of a node of the restriction that lacks (y, z).
                    let fill = || {
                        super::SCRATCH.with(|cell| {
                            let mut pos = cell.borrow_mut();
                            pos.resize(n, 0);
                            for a in 0..cch.arc_count() {
                                pos[cch.up_head[a] as usize] = a as u32;
                            }
                        })
                    };
                    fill();
                    rayon::broadcast(|_| fill());
                    metric.prepare_queries(&sub);
                }
                let (s, t) = (rng.below(n as u64) as u32, rng.below(n as u64) as u32);
                let reference = reference_dijkstra(n, &g.tails, &g.heads, &masked, &[(s, 0)]);
                q.reset()
                    .add_source(s, 0, &sub)
                    .add_target(t, 0, &sub)
                    .run(&sub, &metric);
                assert_eq!(
                    q.distance(),
                    reference[t as usize],
                    "seed {seed}: {s} → {t}"
                );
                if q.distance() < INF_WEIGHT {
                    let path = q.arc_path(&sub, &metric);
                    assert_path(&g, &masked, s, t, &path, q.distance(), seed);
                }
            }
            // Every arc kept has the full hierarchy's weights; every arc dropped is infinite there.
            let mut kept = 0;
            for x in 0..n {
                for a in cch.up_first[x]..cch.up_first[x + 1] {
                    let y = cch.up_head[a as usize];
                    let b = sub.find_arc(x as u32, y);
                    let (f, w) = (on_full.fw(a as usize), on_full.bw(a as usize));
                    match b {
                        Some(b) => {
                            kept += 1;
                            assert_eq!((metric.fw(b as usize), metric.bw(b as usize)), (f, w));
                        }
                        None => assert_eq!((f, w), (INF_WEIGHT, INF_WEIGHT), "seed {seed}"),
                    }
                }
            }
            assert_eq!(kept, sub.arc_count());
        }
    }
}

/// Liu's elimination tree (no chordal completion) is the tree of the completion, on random
/// graphs in nested-dissection and in random orders; the hierarchy built on its postorder is a
/// postorder of its own tree.
#[test]
fn elimination_tree_without_completion_matches_the_chordal_one() {
    for seed in seeds() {
        let mut rng = Rng(seed);
        let n = 30 + rng.below(300) as usize;
        let g = random_graph(&mut rng, n);
        let mut pairs = edge_pairs(&g.tails, &g.heads);
        let nd = order_for(n, &mut pairs, &g.coords);
        let mut shuffled: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            shuffled.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for order in [nd, shuffled] {
            let chordal = Cch::build(n, &g.tails, &g.heads, &order);
            let liu = super::elimination_tree(n, &g.tails, &g.heads, &order);
            assert_eq!(liu, chordal.etree_parent, "seed {seed}");
            let cch = Cch::new(n, &g.tails, &g.heads, &order);
            for x in 0..n {
                let p = cch.etree_parent[x];
                assert!(
                    p == u32::MAX || p as usize > x,
                    "seed {seed}: not a postorder"
                );
                if p != u32::MAX {
                    // A subtree is a contiguous range ending at its root.
                    assert!(x + 1 >= cch.subtree_size[x] as usize, "seed {seed}");
                }
            }
        }
    }
}

/// A restricted hierarchy made again from the parts a graph file stores is the same hierarchy, in
/// every array; parts that do not fit together are refused.
#[test]
fn a_stored_restricted_hierarchy_reads_back_as_built() {
    for seed in seeds() {
        let mut rng = Rng(seed ^ 0x0057_07ed);
        let (_, g, cch) = random_cch(&mut rng, 50, 300);
        let usable: Vec<bool> = (0..g.weights.len()).map(|_| rng.below(5) < 3).collect();
        let sub = cch.restricted(&usable);
        let (tails, heads) = crate::cch::both_ways(&g.tails, &g.heads);
        assert_eq!(
            cch.clone().into_restricted_parts(&usable),
            sub.stored_parts()
        );
        // The finite sides in bits are a customization with unit weights's finite arcs.
        let unit: Vec<u32> = usable
            .iter()
            .map(|&u| if u { 1 } else { INF_WEIGHT })
            .collect();
        let reach = cch.customize(&unit);
        let [fw, bw] = cch.finite_sides(&usable);
        for a in 0..cch.arc_count() {
            let bit = |v: &[u64]| v[a >> 6] >> (a & 63) & 1 != 0;
            assert_eq!(bit(&fw), reach.fw(a) < INF_WEIGHT, "seed {seed} arc {a}");
            assert_eq!(bit(&bw), reach.bw(a) < INF_WEIGHT, "seed {seed} arc {a}");
        }
        let back = Cch::from_stored(sub.stored_parts(), &tails, &heads, &usable).unwrap();
        assert_eq!(back.order, sub.order, "seed {seed}");
        assert_eq!(back.rank, sub.rank, "seed {seed}");
        assert_eq!(back.up_first, sub.up_first, "seed {seed}");
        assert_eq!(back.up_head, sub.up_head, "seed {seed}");
        assert_eq!(back.etree_parent, sub.etree_parent, "seed {seed}");
        assert_eq!(
            (&back.down_first, &back.down_off, &back.down_tail),
            (&sub.down_first, &sub.down_off, &sub.down_tail),
            "seed {seed}"
        );
        assert_eq!(back.triangles, sub.triangles, "seed {seed}");
        assert_eq!(back.input_cch_arc, sub.input_cch_arc, "seed {seed}");
        // (An input arc no metric may use has no arc, and its direction is not read.)
        for (i, &u) in usable.iter().enumerate() {
            if u {
                assert_eq!(back.input_upward[i], sub.input_upward[i], "seed {seed}");
            }
        }
        assert_eq!(back.subtree_size, sub.subtree_size, "seed {seed}");
        assert_eq!(
            (&back.child_first, &back.child),
            (&sub.child_first, &sub.child)
        );
        assert_eq!(back.roots, sub.roots, "seed {seed}");
        assert!(back.is_restricted());
        // The sides that can be finite: stored, and found again on the restricted hierarchy for
        // a file that does not store them, are the restriction's; a kept arc has one at least.
        assert_eq!(back.sides, sub.sides, "seed {seed}");
        let mut without = sub.stored_parts();
        without.sides.clear();
        let found = Cch::from_stored(without, &tails, &heads, &usable).unwrap();
        assert_eq!(found.sides, sub.sides, "seed {seed}");
        for a in 0..sub.arc_count() {
            assert!(
                sub.sides.has(0, a) || sub.sides.has(1, a),
                "seed {seed} arc {a}"
            );
        }
        assert!(sub.sides.len(0) + sub.sides.len(1) <= 2 * sub.arc_count());
        for a in 0..sub.arc_count() {
            assert!(
                back.inputs_of.of(a).eq(sub.inputs_of.of(a)),
                "seed {seed} arc {a}"
            );
        }
        let m = back.customize(&g.weights);
        assert_eq!(
            m.side_weights(0),
            sub.customize(&g.weights).side_weights(0),
            "seed {seed}"
        );

        let parts = sub.stored_parts();
        let mut bad = parts.clone();
        if let Some(h) = bad.up_head.last_mut() {
            *h = 0;
            assert!(Cch::from_stored(bad, &tails, &heads, &usable).is_err());
        }
        let mut bad = parts.clone();
        bad.up_first.pop();
        assert!(Cch::from_stored(bad, &tails, &heads, &usable).is_err());
        let mut bad = parts;
        bad.order.swap(0, 1);
        bad.order[0] = bad.order[1];
        assert!(Cch::from_stored(bad, &tails, &heads, &usable).is_err());
    }
}
