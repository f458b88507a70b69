//! Developer tool: a trip read as a rider meets it, in Direct and SuperSafe: each step's road, turn,
//! length, safety class and the metres of it walked, and each route's length, pushed metres and
//! duration (as the safety and route-quality benchmarks count them).
//! `cargo run --release -p quietway-bench --example ride_read -- <city> <extract> <lon> <lat> <lon> <lat> [...]`
//! (the city id and an extract of `shared/osm`, then one or more trips' two ends; `QUIETWAY_SHARED_DATA_DIR`
//! names the shared data, default `../shared/data`; `RIDE_NIGHT=1` rides the night metrics).
use quietway_bench::{build_city, ride_figures};
use quietway_engine::city::{Profile, RouteRequest};
use quietway_engine::graph::BikeAccess;
use std::path::PathBuf;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let shared = PathBuf::from(
        std::env::var("QUIETWAY_SHARED_DATA_DIR").unwrap_or_else(|_| "../shared/data".into()),
    );
    let city = build_city(&shared, &a[1], &a[2], "ride-read");
    let g = &city.graph;
    let nums: Vec<f64> = a[3..].iter().map(|s| s.parse().unwrap()).collect();
    for t in nums.chunks_exact(4) {
        let (from, to) = ([t[0], t[1]], [t[2], t[3]]);
        println!("\n== {from:?} -> {to:?}");
        for supersafe in [false, true] {
            let req = RouteRequest {
                waypoints: vec![from, to],
                profile: Profile::Cycling,
                supersafe,
                night: std::env::var("RIDE_NIGHT").is_ok_and(|v| v == "1"),
                bearing: None,
                departure: None,
            };
            let Ok(Some(route)) = city.route(&req) else {
                println!(
                    "{}: no route",
                    if supersafe { "SuperSafe" } else { "Direct" }
                );
                continue;
            };
            let f = ride_figures(&city, &route);
            println!(
                "{} ({:?}): {:.0} m, {:.0} m pushed ({:.0} beside a busy road), {:.0} busy m ridden, {:.1} min",
                if supersafe { "SuperSafe" } else { "Direct" },
                route.metric,
                f.length_m,
                f.pushed_m,
                f.pushed_beside_busy_m,
                f.busy_m,
                f.duration_s / 60.0
            );
            for (i, leg) in route.legs.iter().enumerate() {
                let w = &route.waypoints[i];
                let (steps, _) = city.guidance(leg, [w.lon, w.lat], Profile::Cycling, false);
                for s in &steps {
                    let pushed: f64 = s
                        .arcs
                        .iter()
                        .filter(|&&x| g.arc_attrs[x as usize].bike() == BikeAccess::Push)
                        .map(|&x| g.arc_length_m(x) as f64)
                        .sum::<f64>()
                        .min(s.distance_m);
                    println!(
                        "    {:>6.0} m {:<10} {:<13} {:<40} {:?}{}",
                        s.distance_m,
                        format!("{:?}", s.kind),
                        s.modifier.unwrap_or(""),
                        s.road(),
                        s.safety_class,
                        if pushed > 0.0 {
                            format!("  pushed ~{pushed:.0} m")
                        } else {
                            String::new()
                        }
                    );
                }
            }
        }
    }
}
