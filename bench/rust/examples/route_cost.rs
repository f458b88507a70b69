//! Developer tool: where a route request's time goes in the engine (snapping, route, guidance,
//! wording) and the whole `City::directions` a directions request makes, on trips like the HTTP
//! benchmark's (Manhattan, 2.5–3.5 km apart). Prints the fastest and the median of 15 rounds, per
//! request: on a shared machine the fastest round is the steadiest figure.
//! `cargo run --release -p quietway-bench --example route_cost -- <graph.qwg>`
use quietway_bench::manhattan_trips;
use quietway_engine::city::{City, Profile};
use quietway_engine::metric::MetricKind;
use quietway_engine::words::{WordedLeg, route_json};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("graph file");
    let city = City::load(path.as_ref(), None).unwrap();
    let reqs = manhattan_trips(42, 300);
    let routes: Vec<_> = reqs.iter().map(|r| city.route(r).unwrap()).collect();
    let guided: Vec<_> = routes
        .iter()
        .flatten()
        .map(|route| {
            let w = &route.waypoints[0];
            city.guidance(&route.legs[0], [w.lon, w.lat], Profile::Cycling, false)
        })
        .collect();
    let n = reqs.len() as f64;
    let time = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64() / n * 1e6
    };
    let names = [
        "snap both ends",
        "route",
        "guidance",
        "words + JSON",
        "directions (all)",
    ];
    let mut rounds: Vec<[f64; 5]> = Vec::new();
    for _ in 0..15 {
        let kind = MetricKind::cycling(true, false);
        let snap = time(&mut || {
            for r in &reqs {
                let m = city.metric(kind, r.departure);
                for p in &r.waypoints {
                    black_box(city.snap(p[0], p[1], kind, &m, None));
                }
            }
        });
        let route = time(&mut || {
            for r in &reqs {
                black_box(city.route(r).unwrap());
            }
        });
        let guidance = time(&mut || {
            for route in routes.iter().flatten() {
                let w = &route.waypoints[0];
                black_box(city.guidance(&route.legs[0], [w.lon, w.lat], Profile::Cycling, false));
            }
        });
        let words = time(&mut || {
            for (steps, stops) in &guided {
                let legs = [WordedLeg {
                    steps,
                    stops,
                    distance_m: 0.0,
                    duration_s: 0.0,
                    elevation_gain_m: 0.0,
                    elevation_loss_m: 0.0,
                    geometry: &[],
                }];
                black_box(route_json(&legs, Profile::Cycling));
            }
        });
        let all = time(&mut || {
            for r in &reqs {
                black_box(city.directions(r, false).unwrap());
            }
        });
        rounds.push([snap, route, guidance, words, all]);
    }
    println!(
        "per request ({} trips), µs: fastest / median of 15 rounds",
        reqs.len()
    );
    for (i, name) in names.iter().enumerate() {
        let mut v: Vec<f64> = rounds.iter().map(|r| r[i]).collect();
        v.sort_by(f64::total_cmp);
        println!("{name:>18}: {:6.1} / {:6.1}", v[0], v[v.len() / 2]);
    }
}
