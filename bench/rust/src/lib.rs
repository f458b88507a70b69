//! What Quietway's Rust benchmarks and developer examples share: the machine description every
//! results file carries, the Manhattan trips the directions figures are measured on (those of
//! the HTTP benchmark: cycling, 2.5–3.5 km apart as the crow flies), a city built from one extract,
//! and the random points the safety and route-quality benchmarks draw their trips from.
use quietway_engine::city::{City, Profile, RouteRequest};
use quietway_engine::geo::{LonLat, haversine_m};
use quietway_engine::testing::Rng;
use quietway_graph_pipeline::build::{BuildInput, build};
use quietway_graph_pipeline::city::{load_cities, read_boundary};
use quietway_graph_pipeline::progress::Progress;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The largest extract of each city, as the safety and route-quality benchmarks use them. (London's
/// Moorgate extract is left out: it is a few streets of the City, where most trips have no
/// alternative to their busy roads.)
pub const CITY_EXTRACTS: [(&str, &str); 3] = [
    ("nyc", "nyc-manhattan-below-42nd.osm.pbf"),
    ("chicago", "chicago-loop.osm.pbf"),
    ("london", "london-clerkenwell.osm.pbf"),
];

/// A city routed from one OSM extract of `shared/osm`, built as the pipeline builds it (without
/// elevation), with the nested-dissection order, its base metrics pruned.
pub fn build_city(shared: &Path, city_id: &str, file: &str, name: &str) -> City {
    let cities = load_cities(None).expect("city configuration");
    let cfg = cities[city_id].clone();
    let areas = read_boundary(&shared.join(&cfg.boundary)).expect("city boundary");
    let input = BuildInput {
        city_id: city_id.into(),
        city: cfg,
        osm: vec![shared.join("osm").join(file)],
        dem: None,
        areas,
        sources: vec![],
        min_component_nodes: 25,
    };
    let (graph, _) = build(&input, &Progress::new(true)).expect("graph build");
    let city = City::from_graph(graph, name.into(), None).expect("graph");
    // Routes as in steady use: every base metric pruned (a fresh city prunes a metric once routes
    // use it), so results do not depend on when a background pruning finishes.
    city.prepare_base_metrics();
    city
}

/// The bounding box of a city's graph nodes, `[west, south, east, north]`.
pub fn graph_bbox(city: &City) -> [f64; 4] {
    let g = &city.graph;
    let mut b = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
    for n in 0..g.node_count() as u32 {
        let [x, y] = g.node_lon_lat(n);
        b = [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)];
    }
    b
}

/// A point drawn uniformly in a `[west, south, east, north]` box.
pub fn random_point(rng: &mut Rng, b: [f64; 4]) -> [f64; 2] {
    [
        b[0] + rng.unit() * (b[2] - b[0]),
        b[1] + rng.unit() * (b[3] - b[1]),
    ]
}

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

/// The command line every benchmark takes: `--quick`, `--shared-data DIR` (default
/// `../shared/data`) and `--out FILE` (default `bench/results/<name>.json`).
pub struct BenchArgs {
    pub quick: bool,
    pub shared: PathBuf,
    pub out: PathBuf,
}

pub fn bench_args(name: &str) -> BenchArgs {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    BenchArgs {
        quick: args.iter().any(|a| a == "--quick"),
        shared: PathBuf::from(arg("--shared-data").unwrap_or_else(|| "../shared/data".into())),
        out: PathBuf::from(arg("--out").unwrap_or_else(|| format!("bench/results/{name}.json"))),
    }
}

/// 100 random arcs changed live on every loaded cycling metric (accepted reports), in `rounds`
/// rounds: an even round makes its arcs three times dearer, the next resets the same arcs (ns each).
/// `after` runs after each round, untimed (benchmarks prune the new metrics, as routes soon do in
/// service).
pub fn arcs_live_ns(city: &City, rng: &mut Rng, rounds: usize, after: impl Fn()) -> Vec<u64> {
    use quietway_engine::city::ArcChange;
    let mut arcs: Vec<u32> = vec![];
    (0..rounds)
        .map(|round| {
            if round % 2 == 0 {
                arcs = (0..100)
                    .map(|_| rng.below(city.graph.arc_count() as u64) as u32)
                    .collect();
            }
            let change = if round % 2 == 0 {
                ArcChange::Factor(3.0)
            } else {
                ArcChange::Reset
            };
            let changes: Vec<(u32, ArcChange)> = arcs.iter().map(|&a| (a, change)).collect();
            let t = std::time::Instant::now();
            city.update_arcs(&changes).unwrap();
            let ns = t.elapsed().as_nanos() as u64;
            after();
            ns
        })
        .collect()
}

/// One avoidance live, per pair of routing nodes: a random street's arcs closed as an avoidance,
/// then the first query between the pair on the metric in force, which routes around it (ns each).
pub fn avoidance_live_ns(
    city: &City,
    q: &mut quietway_engine::query::CchQuery,
    rng: &mut Rng,
    pairs: &[(u32, u32)],
) -> Vec<u64> {
    use quietway_engine::avoid::{Avoidance, Schedule, Severity};
    let g = &city.graph;
    let mut ns = Vec::with_capacity(pairs.len());
    for (i, &(s, t)) in pairs.iter().enumerate() {
        let way = rng.below(g.way_count() as u64) as u32;
        let arcs: Vec<u32> = (0..g.arc_count() as u32)
            .filter(|&a| g.arc_way(a) == way)
            .collect();
        let start = std::time::Instant::now();
        city.add_avoidance(Avoidance {
            id: format!("bench-{i}"),
            arcs,
            severity: Severity::Closed,
            schedule: Schedule::Always,
        })
        .unwrap();
        let live = city.metric(quietway_engine::metric::MetricKind::SuperSafeDay, None);
        q.reset()
            .add_source(s, 0, &city.cch)
            .add_target(t, 0, &city.cch)
            .run(&city.cch, &live);
        std::hint::black_box(q.distance());
        ns.push(start.elapsed().as_nanos() as u64);
        city.remove_avoidance(&format!("bench-{i}"));
    }
    ns
}
