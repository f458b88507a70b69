//! Developer tool: hierarchy size, customization time and query time of the nested-dissection order
//! on the benchmark graphs. `cargo run --release -p quietway-bench --example order_lab`
use quietway_engine::cch::{Cch, INF_WEIGHT};
use quietway_engine::query::CchQuery;
use quietway_engine::testing::Rng;
use std::time::Instant;

fn stats(
    name: &str,
    n: usize,
    tails: &[u32],
    heads: &[u32],
    weights: &[u32],
    order: &[u32],
    order_s: f64,
) {
    let cch = Cch::new(n, tails, heads, order);
    let t = Instant::now();
    let m = cch.customize(weights);
    let c = t.elapsed().as_secs_f64();
    let depth: Vec<usize> = (0..n)
        .map(|mut x| {
            let mut d = 0;
            while x != u32::MAX as usize {
                d += 1;
                x = cch.etree_parent[x] as usize;
            }
            d
        })
        .collect();
    let mut q = CchQuery::new(&cch);
    let mut rng = Rng(3);
    let mut times = vec![];
    for _ in 0..3000 {
        let (s, t) = (rng.below(n as u64) as u32, rng.below(n as u64) as u32);
        let a = Instant::now();
        q.reset()
            .add_source(s, 0, &cch)
            .add_target(t, 0, &cch)
            .run(&cch, &m);
        if q.distance() < INF_WEIGHT {
            std::hint::black_box(q.arc_path(&cch, &m));
        }
        times.push(a.elapsed().as_nanos() as u64);
    }
    times.sort_unstable();
    // Relaxations per search side: up-degree summed over the ancestors, all arcs vs arcs that
    // survive perfect customization (finite and not improved through a higher node).
    let (mut pf, mut pb) = (m.side_weights(0), m.side_weights(1));
    for b in (0..cch.arc_count()).rev() {
        cch.for_each_lower_triangle(b as u32, |xy, xz| {
            let (xy, xz) = (xy as usize, xz as usize);
            let v = pf[xy].saturating_add(pf[b]);
            if v < pf[xz] {
                pf[xz] = v;
            }
            let v = pb[b].saturating_add(pb[xy]);
            if v < pb[xz] {
                pb[xz] = v;
            }
            let v = pf[xz].saturating_add(pb[b]);
            if v < pf[xy] {
                pf[xy] = v;
            }
            let v = pf[b].saturating_add(pb[xz]);
            if v < pb[xy] {
                pb[xy] = v;
            }
        });
    }
    let keep_f: Vec<bool> = (0..cch.arc_count())
        .map(|a| pf[a] < INF_WEIGHT && pf[a] == m.fw(a))
        .collect();
    let keep_b: Vec<bool> = (0..cch.arc_count())
        .map(|a| pb[a] < INF_WEIGHT && pb[a] == m.bw(a))
        .collect();
    let (mut all, mut kept) = (0usize, 0usize);
    for s in 0..n {
        let mut x = s;
        while x != u32::MAX as usize {
            let (a0, a1) = (cch.up_first[x] as usize, cch.up_first[x + 1] as usize);
            all += a1 - a0;
            kept += (a0..a1).filter(|&a| keep_f[a]).count();
            x = cch.etree_parent[x] as usize;
        }
    }
    println!(
        "  arcs kept fw {} bw {} of {}; relaxations per side all {:.0} pruned {:.0}",
        keep_f.iter().filter(|&&k| k).count(),
        keep_b.iter().filter(|&&k| k).count(),
        cch.arc_count(),
        all as f64 / n as f64,
        kept as f64 / n as f64
    );
    println!(
        "{name:<20} nodes {n:>6} cch arcs {:>7} triangles {:>8} order {:.2}s customize {:.1}ms depth max {} avg {:.0} query p50 {:.2}µs",
        cch.arc_count(),
        cch.triangle_count(),
        order_s,
        c * 1000.0,
        depth.iter().max().unwrap(),
        depth.iter().sum::<usize>() as f64 / n as f64,
        times[times.len() / 2] as f64 / 1000.0
    );
}

fn main() {
    let shared = std::path::PathBuf::from("../shared/data");
    for name in ["bremen_time", "south_seattle_car", "graph_ballard"] {
        let text = std::fs::read_to_string(shared.join(format!("graphs/{name}.gr"))).unwrap();
        let (mut tails, mut heads, mut weights) = (vec![], vec![], vec![]);
        let mut n = 0;
        for line in text.lines() {
            let v: Vec<&str> = line.split_whitespace().collect();
            if v.first() != Some(&"a") {
                continue;
            }
            let (f, t, w): (u32, u32, u32) = (
                v[1].parse().unwrap(),
                v[2].parse().unwrap(),
                v[3].parse().unwrap(),
            );
            n = n.max(f as usize + 1).max(t as usize + 1);
            tails.push(f);
            heads.push(t);
            weights.push(w.max(1));
            weights.push(INF_WEIGHT);
        }
        let t = Instant::now();
        let mut pairs = quietway_engine::order::edge_pairs(&tails, &heads);
        let order = quietway_engine::order::order_without_coordinates(n, &mut pairs);
        stats(
            name,
            n,
            &tails,
            &heads,
            &weights,
            &order,
            t.elapsed().as_secs_f64(),
        );
    }
    let path = std::env::args().nth(1);
    if let Some(p) = path {
        let (g, _) = quietway_engine::format::read_file(p.as_ref()).unwrap();
        let t = Instant::now();
        let order = quietway_engine::order::nested_dissection_order(&g);
        let s = t.elapsed().as_secs_f64();
        let w = quietway_engine::metric::WeightingModel::default()
            .weights(&g, quietway_engine::metric::MetricKind::SuperSafeDay);
        stats(
            "nyc",
            g.node_count(),
            &g.edge_tail,
            &g.edge_head,
            &w,
            &order,
            s,
        );
    }
}
