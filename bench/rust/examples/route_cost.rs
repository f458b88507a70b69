//! Developer tool: where a route request's time goes in the engine (route, summary, guidance).
//! `cargo run --release -p quietway-bench --example route_cost -- <graph.qwg>`
use quietway_engine::city::{City, Profile, RouteRequest};
use quietway_engine::testing::Rng;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("graph file");
    let city = City::load(path.as_ref(), None).unwrap();
    let mut rng = Rng(42);
    let b = [-74.018, 40.700, -73.972, 40.757];
    let reqs: Vec<RouteRequest> = (0..300)
        .map(|_| {
            let p = |r: &mut Rng| {
                [
                    b[0] + r.unit() * (b[2] - b[0]),
                    b[1] + r.unit() * (b[3] - b[1]),
                ]
            };
            RouteRequest {
                waypoints: vec![p(&mut rng), p(&mut rng)],
                profile: Profile::Cycling,
                supersafe: true,
                night: false,
                bearing: None,
                departure: Some(29_000_000),
            }
        })
        .collect();
    for _ in 0..5 {
        let (mut t_route, mut t_sum, mut t_guid, mut t_words) = (0.0, 0.0, 0.0, 0.0);
        for r in &reqs {
            let t = Instant::now();
            let route = city.route(r).unwrap();
            t_route += t.elapsed().as_secs_f64();
            if let Some(route) = route {
                for (i, leg) in route.legs.iter().enumerate() {
                    let t = Instant::now();
                    std::hint::black_box(city.summarize_leg(leg, Profile::Cycling, false));
                    t_sum += t.elapsed().as_secs_f64();
                    let t = Instant::now();
                    let w = &route.waypoints[i];
                    let (steps, stops) =
                        city.guidance(leg, [w.lon, w.lat], Profile::Cycling, false);
                    t_guid += t.elapsed().as_secs_f64();
                    let t = Instant::now();
                    let legs = [quietway_engine::words::WordedLeg {
                        steps: &steps,
                        stops: &stops,
                        distance_m: 0.0,
                        duration_s: 0.0,
                        elevation_gain_m: 0.0,
                        elevation_loss_m: 0.0,
                        geometry: &[],
                    }];
                    std::hint::black_box(quietway_engine::words::route_json(
                        &legs,
                        Profile::Cycling,
                    ));
                    t_words += t.elapsed().as_secs_f64();
                }
            }
        }
        let n = reqs.len() as f64;
        println!(
            "per request: route {:.1} µs, summary {:.1} µs, guidance {:.1} µs, words+JSON {:.1} µs",
            t_route / n * 1e6,
            t_sum / n * 1e6,
            t_guid / n * 1e6,
            t_words / n * 1e6
        );
    }
}
