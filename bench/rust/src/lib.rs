//! What Quietway's Rust benchmarks and developer examples share: the machine description every
//! results file carries, and the Manhattan trips the directions figures are measured on (those of
//! the HTTP benchmark: cycling, 2.5–3.5 km apart as the crow flies).
use quietway_engine::city::{Profile, RouteRequest};
use quietway_engine::geo::{LonLat, haversine_m};
use quietway_engine::testing::Rng;
use serde_json::{Value, json};

/// CPU model, cores and the commit measured.
pub fn machine() -> Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    json!({ "cpu": cpu, "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1), "commit": commit })
}

/// `count` SuperSafe cycling trips between random points of Manhattan below 42nd Street that lie
/// 2.5–3.5 km apart, departing at a fixed local time.
pub fn manhattan_trips(seed: u64, count: usize) -> Vec<RouteRequest> {
    let b = [-74.018, 40.700, -73.972, 40.757];
    let mut rng = Rng(seed);
    let mut trips = Vec::with_capacity(count);
    while trips.len() < count {
        let mut p = || {
            [
                b[0] + rng.unit() * (b[2] - b[0]),
                b[1] + rng.unit() * (b[3] - b[1]),
            ]
        };
        let (a, z) = (p(), p());
        let d = haversine_m(LonLat::new(a[0], a[1]), LonLat::new(z[0], z[1]));
        if (2500.0..=3500.0).contains(&d) {
            trips.push(RouteRequest {
                waypoints: vec![a, z],
                profile: Profile::Cycling,
                supersafe: true,
                night: false,
                bearing: None,
                departure: Some(29_000_000),
            });
        }
    }
    trips
}
