//! What Quietway's Rust benchmarks and developer examples share: the machine description every
//! results file carries, the Manhattan trips the directions figures are measured on (those of
//! the HTTP benchmark: cycling, 2.5–3.5 km apart as the crow flies), a city built from one extract,
//! and the random points the safety and route-quality benchmarks draw their trips from.
use quietway_engine::city::{City, Profile, Route, RouteRequest};
use quietway_engine::geo::{LonLat, haversine_m};
use quietway_engine::graph::{BikeAccess, SafetyClass};
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
/// elevation), with the nested-dissection order, its base metrics pruned. `QUIETWAY_WEIGHTING`
/// names a weighting model (JSON) to measure instead of the embedded one.
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
    let model = std::env::var_os("QUIETWAY_WEIGHTING").map(|f| {
        let json = std::fs::read_to_string(&f).expect("weighting model file");
        quietway_engine::metric::WeightingModel::from_json(&json).expect("weighting model")
    });
    let city = City::from_graph(graph, name.into(), model).expect("graph");
    // Routes as in steady use with every base metric pruned (whatever the default budget of
    // pruned graphs), so results do not depend on when a background pruning finishes.
    city.set_query_graph_budget(usize::MAX);
    city.prepare_base_metrics();
    city
}

/// A cycling route as a rider meets it: metres ridden and pushed (the bike walked: footways, steps,
/// the pavement against a oneway), busy metres ridden (roads the API reports as `busy`: the `busy`
/// and `very_busy` classes; a pushed arc is never rated busy), pushed metres beside a busy road (the
/// pavement of a road whose other direction is ridden busy), and the duration as the API reports it
/// (ridden at 15 km/h, pushed at 5 km/h).
#[derive(Clone, Copy, Debug, Default)]
pub struct RideFigures {
    pub length_m: f64,
    pub pushed_m: f64,
    pub busy_m: f64,
    pub pushed_beside_busy_m: f64,
    pub duration_s: f64,
}

impl RideFigures {
    pub fn ridden_m(&self) -> f64 {
        self.length_m - self.pushed_m
    }
    /// The share of the route's metres pushed.
    pub fn pushed_share(&self) -> f64 {
        self.pushed_m / self.length_m.max(1.0)
    }
    /// Adds another route's figures (totals over trips).
    pub fn add(&mut self, o: &RideFigures) {
        self.length_m += o.length_m;
        self.pushed_m += o.pushed_m;
        self.busy_m += o.busy_m;
        self.pushed_beside_busy_m += o.pushed_beside_busy_m;
        self.duration_s += o.duration_s;
    }
}

/// The figures of a cycling route.
pub fn ride_figures(city: &City, route: &Route) -> RideFigures {
    let g = &city.graph;
    let model = city.model();
    let busy = |arc: u32| {
        matches!(
            g.arc_attrs[arc as usize].safety_class(),
            SafetyClass::Busy | SafetyClass::VeryBusy
        )
    };
    let mut f = RideFigures::default();
    for p in route.legs.iter().flat_map(|l| l.pieces.iter()) {
        let frac = p.to - p.from;
        let m = g.arc_length_m(p.arc) as f64 * frac;
        f.length_m += m;
        f.duration_s += model.duration_s(g, p.arc, true, false) * frac;
        if g.arc_attrs[p.arc as usize].bike() == BikeAccess::Push {
            f.pushed_m += m;
            let twin = p.arc ^ 1;
            if (twin as usize) < g.arc_attrs.len()
                && g.arc_way(twin) == g.arc_way(p.arc)
                && g.arc_attrs[twin as usize].bike() == BikeAccess::Ride
                && busy(twin)
            {
                f.pushed_beside_busy_m += m;
            }
        } else if busy(p.arc) {
            f.busy_m += m;
        }
    }
    f
}

/// The busy-metre cut of SuperSafe against Direct: over all metres (`busy` totals), and over ridden
/// metres (the busy share of the metres ridden), so that a stretch walked counts neither as quiet
/// riding nor as busy.
pub fn busy_cuts(direct: &RideFigures, supersafe: &RideFigures) -> (f64, f64) {
    if direct.busy_m <= 0.0 {
        return (1.0, 1.0);
    }
    let all = 1.0 - supersafe.busy_m / direct.busy_m;
    let share = |f: &RideFigures| f.busy_m / f.ridden_m().max(1.0);
    (all, 1.0 - share(supersafe) / share(direct))
}

/// The pushing goals: SuperSafe walks the bike for at most `max(5 %, 1.5 × Direct's share)` of its
/// metres, at most 2 % of its trips push more than 30 % of their length, and its duration is at most
/// 1.3 × Direct's on the median trip.
pub const PUSHED_SHARE_FLOOR: f64 = 0.05;
pub const PUSHED_SHARE_OVER_DIRECT: f64 = 1.5;
pub const HEAVY_PUSH_SHARE: f64 = 0.30;
pub const MAX_HEAVY_PUSH_TRIPS: f64 = 0.02;
pub const MAX_DURATION_RATIO_MEDIAN: f64 = 1.3;

/// Pushing and duration over a city's trips, SuperSafe against Direct.
#[derive(Default)]
pub struct PushTally {
    pub direct: RideFigures,
    pub supersafe: RideFigures,
    /// SuperSafe trips pushing more than `HEAVY_PUSH_SHARE` of their length, and how many of them
    /// Direct pushes as much of (most start or end inside a pedestrian precinct or a park).
    pub heavy_push_trips: usize,
    pub heavy_push_trips_direct_too: usize,
    /// The heavy-push trips: ends and both settings' figures.
    pub heavy_push_examples: Vec<Value>,
    /// SuperSafe's duration over Direct's, per trip.
    pub duration_ratios: Vec<f64>,
}

impl PushTally {
    pub fn add(
        &mut self,
        ends: ([f64; 2], [f64; 2]),
        direct: &RideFigures,
        supersafe: &RideFigures,
    ) {
        self.direct.add(direct);
        self.supersafe.add(supersafe);
        if supersafe.pushed_share() > HEAVY_PUSH_SHARE {
            self.heavy_push_trips += 1;
            self.heavy_push_trips_direct_too +=
                usize::from(direct.pushed_share() > HEAVY_PUSH_SHARE);
            let f = |f: &RideFigures| {
                json!({ "length_m": f.length_m.round(), "pushed_m": f.pushed_m.round(),
                    "pushed_beside_busy_m": f.pushed_beside_busy_m.round(), "busy_m": f.busy_m.round(),
                    "duration_s": f.duration_s.round() })
            };
            self.heavy_push_examples.push(
                json!({ "from": ends.0, "to": ends.1, "direct": f(direct), "supersafe": f(supersafe) }),
            );
        }
        self.duration_ratios
            .push(supersafe.duration_s / direct.duration_s.max(1e-9));
    }

    /// The figures and their checks, as JSON (`pushing` in the benchmarks' results).
    pub fn json(&self) -> Value {
        let mut r = self.duration_ratios.clone();
        r.sort_by(f64::total_cmp);
        let trips = r.len().max(1);
        let (d, s) = (&self.direct, &self.supersafe);
        let max_share = PUSHED_SHARE_FLOOR.max(PUSHED_SHARE_OVER_DIRECT * d.pushed_share());
        let heavy = self.heavy_push_trips as f64 / trips as f64;
        let median = if r.is_empty() {
            f64::NAN
        } else {
            quantile(&r, 0.5)
        };
        let (cut_all, cut_ridden) = busy_cuts(d, s);
        let side = |f: &RideFigures| {
            json!({
                "ridden_km": f.ridden_m() / 1000.0, "pushed_km": f.pushed_m / 1000.0,
                "pushed_share": f.pushed_share(), "busy_km": f.busy_m / 1000.0,
                "pushed_beside_busy_km": f.pushed_beside_busy_m / 1000.0,
                "hours": f.duration_s / 3600.0,
            })
        };
        json!({
            "direct": side(d), "supersafe": side(s),
            "busy_cut": cut_all, "busy_cut_over_ridden": cut_ridden,
            "heavy_push_trips": self.heavy_push_trips, "heavy_push_trip_share": heavy,
            "heavy_push_trips_direct_too": self.heavy_push_trips_direct_too,
            "heavy_push_examples": self.heavy_push_examples,
            "duration_ratio": {
                "median": median,
                "p90": if r.is_empty() { f64::NAN } else { quantile(&r, 0.9) },
                "worst": r.last().copied().unwrap_or(f64::NAN),
            },
            "goal": {
                "max_pushed_share_supersafe": max_share, "heavy_push_share": HEAVY_PUSH_SHARE,
                "max_heavy_push_trip_share": MAX_HEAVY_PUSH_TRIPS,
                "max_duration_ratio_median": MAX_DURATION_RATIO_MEDIAN,
            },
            "checks": {
                "pushed_share_supersafe": s.pushed_share() <= max_share,
                "heavy_push_trips": heavy <= MAX_HEAVY_PUSH_TRIPS,
                "duration_ratio_median": median <= MAX_DURATION_RATIO_MEDIAN,
            },
        })
    }

    /// One table row: ridden / pushed km and pushed share per setting, heavy-push trips, the
    /// duration ratio and the busy cuts.
    pub fn row(&self, extract: &str) -> String {
        let j = self.json();
        let f = |p: &str| j.pointer(p).and_then(Value::as_f64).unwrap_or(f64::NAN);
        let ok = |k: &str| {
            if j["checks"][k].as_bool() == Some(true) {
                ""
            } else {
                " MISSED"
            }
        };
        format!(
            "| {extract} | {:.1} / {:.1} ({:.1} %) | {:.1} / {:.1} ({:.1} %, ≤ {:.1} %{}) | {:.1} / {:.1} | {} of {} ({:.1} %{}; Direct too: {}) | {:.2}{} / {:.2} / {:.2} | {:.0} % | {:.0} % |",
            f("/direct/ridden_km"),
            f("/direct/pushed_km"),
            100.0 * f("/direct/pushed_share"),
            f("/supersafe/ridden_km"),
            f("/supersafe/pushed_km"),
            100.0 * f("/supersafe/pushed_share"),
            100.0 * f("/goal/max_pushed_share_supersafe"),
            ok("pushed_share_supersafe"),
            f("/direct/pushed_beside_busy_km"),
            f("/supersafe/pushed_beside_busy_km"),
            self.heavy_push_trips,
            self.duration_ratios.len(),
            100.0 * f("/heavy_push_trip_share"),
            ok("heavy_push_trips"),
            self.heavy_push_trips_direct_too,
            f("/duration_ratio/median"),
            ok("duration_ratio_median"),
            f("/duration_ratio/p90"),
            f("/duration_ratio/worst"),
            100.0 * f("/busy_cut"),
            100.0 * f("/busy_cut_over_ridden"),
        )
    }

    pub const HEADER: &'static str = "| extract | Direct km ridden / pushed (share) | SuperSafe km ridden / pushed (share, goal) | km pushed beside a busy road Direct / SuperSafe | SuperSafe trips pushing > 30 % | SuperSafe / Direct duration median / p90 / worst | busy cut | busy cut over ridden metres |\n|---|---|---|---|---|---|---|---|";
}

/// Value at quantile `q` of sorted values.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
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
