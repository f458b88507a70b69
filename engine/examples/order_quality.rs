//! Developer tool: hierarchy size and customization time for a graph file's order.
//! `cargo run --release -p quietway-engine --example order_quality -- <graph.qwg>`
use quietway_engine::cch::Cch;
use quietway_engine::metric::{MetricKind, WeightingModel};
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("graph file");
    let (g, _) = quietway_engine::format::read_file(path.as_ref()).unwrap();
    let t = Instant::now();
    let order = quietway_engine::order::nested_dissection_order(&g);
    let order_s = t.elapsed().as_secs_f64();
    let cch = Cch::new(g.node_count(), &g.edge_tail, &g.edge_head, &order);
    let w = WeightingModel::default().weights(&g, MetricKind::SuperSafeDay);
    let t = Instant::now();
    let m = cch.customize(&w);
    let c = t.elapsed().as_secs_f64();
    let depth = (0..g.node_count())
        .map(|mut x| {
            let mut d = 0;
            while x != u32::MAX as usize {
                d += 1;
                x = cch.etree_parent[x] as usize;
            }
            d
        })
        .max()
        .unwrap();
    let avg_depth: f64 = (0..g.node_count())
        .map(|mut x| {
            let mut d = 0;
            while x != u32::MAX as usize {
                d += 1;
                x = cch.etree_parent[x] as usize;
            }
            d as f64
        })
        .sum::<f64>()
        / g.node_count() as f64;
    println!(
        "nodes {} edges {} cch arcs {} triangles {} order {:.2}s customize {:.1}ms etree max depth {} avg {:.0}",
        g.node_count(),
        g.edge_count(),
        cch.arc_count(),
        cch.triangle_count(),
        order_s,
        c * 1000.0,
        depth,
        avg_depth
    );
    std::hint::black_box(m);
}
