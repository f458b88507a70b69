//! Developer tool: how a point snaps for each metric, and whether a route leaves it.
//! `cargo run --release -p quietway-bench --example snap_probe -- <graph.qwg> <lon> <lat> [<lon> <lat>]`
use quietway_engine::city::{City, Profile, RouteRequest};
use quietway_engine::metric::MetricKind;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let city = City::load(a[1].as_ref(), None).unwrap();
    let p = [a[2].parse::<f64>().unwrap(), a[3].parse::<f64>().unwrap()];
    let to = if a.len() > 5 {
        [a[4].parse::<f64>().unwrap(), a[5].parse::<f64>().unwrap()]
    } else {
        [p[0] + 0.004, p[1]]
    };
    let g = &city.graph;
    for kind in [
        MetricKind::SuperSafeDay,
        MetricKind::DirectDay,
        MetricKind::Walking,
    ] {
        let m = city.metric(kind, None);
        for s in city.snap_candidates(p[0], p[1], kind, &m, None, 12.0) {
            let (f, b) = (2 * s.edge, 2 * s.edge + 1);
            println!(
                "{kind:?}: edge {} way {} '{}' {:.1} m t={:.2} fw={} bw={} w=({}, {}) connected={} turns out fw {:?} bw {:?}",
                s.edge,
                g.way_osm_id[g.arc_way(f) as usize],
                g.string(g.way_name[g.arc_way(f) as usize]),
                s.distance_m,
                s.t,
                s.forward,
                s.backward,
                m.arc_weights[f as usize],
                m.arc_weights[b as usize],
                city.is_well_connected(s.edge, kind == MetricKind::Walking),
                city.turns
                    .turns_out_of(f)
                    .map(|t| m.input_weights[2 * t as usize])
                    .collect::<Vec<_>>(),
                city.turns
                    .turns_out_of(b)
                    .map(|t| m.input_weights[2 * t as usize])
                    .collect::<Vec<_>>(),
            );
        }
    }
    // Reachability on the turn model itself (Dijkstra over the Direct metric's turns), from the
    // nearest snap's arcs to the destination's.
    let m = city.metric(MetricKind::DirectDay, None);
    if let (Some(a), Some(b)) = (
        city.snap(p[0], p[1], MetricKind::DirectDay, &m, None),
        city.snap(to[0], to[1], MetricKind::DirectDay, &m, None),
    ) {
        let n = city.turns.node_count();
        let adj = quietway_engine::dijkstra::Adjacency::new(
            n,
            &city.turns.turn_from,
            &city.turns.turn_to,
        );
        let mut d = quietway_engine::dijkstra::Dijkstra::new(n);
        d.run(
            &adj,
            &m.input_weights.to_vec(),
            &[(2 * a.edge, 0), (2 * a.edge + 1, 0)],
            quietway_engine::cch::INF_WEIGHT,
            |_, _| false,
        );
        let reached = (0..n as u32)
            .filter(|&x| d.distance(x) < quietway_engine::cch::INF_WEIGHT)
            .count();
        // Turns out of the reached set that the metric closes, by junction (a few).
        let g = &city.graph;
        let mut shown = 0;
        for t in 0..city.turns.turn_count() {
            let (f, to_) = (city.turns.turn_from[t], city.turns.turn_to[t]);
            if d.distance(f) < quietway_engine::cch::INF_WEIGHT
                && d.distance(to_) >= quietway_engine::cch::INF_WEIGHT
                && shown < 12
                && m.arc_weights[city.turns.node_arc[to_ as usize] as usize]
                    < quietway_engine::cch::INF_WEIGHT
            {
                shown += 1;
                let (fa, ta) = (
                    city.turns.node_arc[f as usize],
                    city.turns.node_arc[to_ as usize],
                );
                let v = g.arc_head(fa);
                println!(
                    "  closed turn at node {} {:?}: '{}' ({:?}) -> '{}' ({:?}) w={} flags={} arc w into={}",
                    g.node_osm_id[v as usize],
                    g.node_lon_lat(v),
                    g.string(g.way_name[g.arc_way(fa) as usize]),
                    g.arc_attrs[fa as usize].safety_class(),
                    g.string(g.way_name[g.arc_way(ta) as usize]),
                    g.arc_attrs[ta as usize].safety_class(),
                    m.input_weights[2 * t],
                    city.turns.turn_flags[t],
                    m.arc_weights[ta as usize],
                );
            }
        }
        let (comp, sizes) = quietway_engine::dijkstra::strongly_connected(&adj, |x| {
            x % 2 == 0 && m.input_weights[x as usize] < quietway_engine::cch::INF_WEIGHT
        });
        let mut sorted = sizes.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        // Closed arcs leading out of the start's island into the largest set: which ways wall it in.
        let main = (0..sizes.len()).max_by_key(|&c| sizes[c]).unwrap() as u32;
        let mut ways = std::collections::BTreeMap::new();
        for t in 0..city.turns.turn_count() {
            let (f, to_) = (city.turns.turn_from[t], city.turns.turn_to[t]);
            if comp[f as usize] == comp[2 * a.edge as usize]
                && comp[to_ as usize] != comp[f as usize]
            {
                let ta = city.turns.node_arc[to_ as usize];
                // Where does this arc lead: the largest set within a turn or two?
                let head = g.arc_head(ta);
                let leads_main = city
                    .turns
                    .turns_at(head)
                    .any(|u| comp[city.turns.turn_to[u] as usize] == main);
                if leads_main {
                    let w = g.arc_way(ta);
                    *ways
                        .entry((
                            g.way_osm_id[w as usize],
                            g.string(g.way_name[w as usize]).to_string(),
                            format!("{:?}", g.arc_attrs[ta as usize].bike()),
                            m.arc_weights[ta as usize],
                            m.input_weights[2 * t],
                        ))
                        .or_insert(0) += 1;
                }
            }
        }
        for (k, n) in ways.iter().take(25) {
            println!(
                "  wall: way {} '{}' bike {} arc w {} turn w {} ({n} turns)",
                k.0, k.1, k.2, k.3, k.4
            );
        }
        println!(
            "SCC sizes: largest {:?}; the start's {}",
            &sorted[..5.min(sorted.len())],
            sizes[comp[2 * a.edge as usize] as usize]
        );
        println!(
            "Dijkstra on turns from edge {}: {} of {} routing nodes reached; destination edge {}: {} / {}",
            a.edge,
            reached,
            n,
            b.edge,
            d.distance(2 * b.edge),
            d.distance(2 * b.edge + 1)
        );
    }
    for (profile, supersafe) in [
        (Profile::Cycling, true),
        (Profile::Cycling, false),
        (Profile::Walking, false),
    ] {
        let r = city.route(&RouteRequest {
            waypoints: vec![p, to],
            profile,
            supersafe,
            night: false,
            bearing: None,
            departure: None,
        });
        println!(
            "{profile:?} supersafe={supersafe}: {}",
            match r {
                Ok(Some(r)) => format!(
                    "{:.0} m",
                    r.legs.iter().map(|l| city.leg_length_m(l)).sum::<f64>()
                ),
                Ok(None) => "no route".into(),
                Err(e) => format!("error {e:?}"),
            }
        );
    }
}
