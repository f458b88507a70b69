//! Route quality, measured as a rider would meet it (issue 14): on random trips of 300 m and more
//! as the crow flies inside each city's extract, how much longer SuperSafe rides than Direct
//! (median, p90, worst trip), how much longer than the crow flies (and walking, for comparison),
//! how many busy and very busy metres it avoids against Direct, and how clean the turn-by-turn steps
//! of the cycling routes (Direct and SuperSafe) are: U-turn steps (trips carry no bearing, so none
//! is forced), steps that "turn onto" the road just ridden, and steps shorter than 15 m. Steps that
//! keep to the road just ridden at a real corner ("turn left to stay on …", type `Continue`) are
//! counted apart, without a goal.
//!
//! The trips are not the safety benchmark's: another seed, and any point pair the safety benchmark
//! draws is skipped. Points more than 25 m from a usable way (the rivers, the lake) are drawn again,
//! and in New York no trip starts, ends or crosses (as the crow flies) the East Village hole of the
//! extract (`shared/data/README.md`), around which every route would make a detour no rider makes.
//!
//! The figures depend only on the data, the weighting model and guidance, not on the machine.
//! Prints a table per city and writes `bench/results/route-quality.json`; `bench/gate.mjs` fails
//! when a city misses a goal.
//!
//! `cargo run --release -p quietway-bench --bin route-quality-bench -- [--out FILE] [--shared-data DIR]`
//! (`--quick` is accepted and changes nothing).
use quietway_bench::{
    CITY_EXTRACTS, PushTally, RideFigures, build_city, graph_bbox, quantile, random_point,
    ride_figures,
};
use quietway_engine::city::{City, Profile, RouteRequest};
use quietway_engine::geo::{LonLat, haversine_m};
use quietway_engine::guidance::StepKind;
use quietway_engine::metric::MetricKind;
use quietway_engine::testing::Rng;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::path::Path;

/// Trips per city, their shortest crow-fly distance, and how far a drawn point may lie from the
/// way it snaps to.
const TRIPS: usize = 500;
const MIN_CROW_M: f64 = 300.0;
const MAX_SNAP_M: f64 = 25.0;
/// Steps shorter than this are "short".
const SHORT_STEP_M: f64 = 15.0;
/// The seed of these trips (`QUIETWAY_QUALITY_SEED` draws others, to judge on trips nothing was
/// tuned on), and the safety benchmark's (whose point pairs are skipped).
const SEED: u64 = 14;

fn seed() -> u64 {
    std::env::var("QUIETWAY_QUALITY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEED)
}
const SAFETY_SEED: u64 = 11;
const SAFETY_DRAWS: usize = 10_000;
/// The New York extract's East Village hole, `[west, south, east, north]`: no nodes between
/// latitudes 40.730 and 40.736 east of about longitude −74.00 (to the East River), widened by
/// about 150 m on every side.
const NYC_HOLE: [f64; 4] = [-74.0035, 40.7285, -73.965, 40.7375];

/// The goals of issue 14.
struct Goals {
    median: f64,
    p90: f64,
    worst: f64,
    busy_avoided: f64,
    uturns: usize,
    same_road_share: f64,
    short_share: f64,
}

fn goals(city: &str) -> Goals {
    Goals {
        median: 1.15,
        p90: 1.40,
        worst: 2.0,
        busy_avoided: if city == "nyc" { 0.60 } else { 0.45 },
        uturns: 0,
        same_road_share: 0.02,
        short_share: 0.03,
    }
}

// ---- The engine boundary: everything this benchmark asks of quietway-engine is in this section.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Direct,
    SuperSafe,
    Walking,
}

/// One step as the benchmark judges it.
struct StepSeen {
    uturn: bool,
    turn: bool,
    /// A maneuver that keeps to the road just ridden, worded "turn left to stay on …".
    stays: bool,
    arrive: bool,
    /// The road's name, or its ref when it has no name ("" when it has neither).
    road: String,
    distance_m: f64,
}

/// One planned route as the benchmark judges it.
struct Planned {
    length_m: f64,
    /// Metres ridden and pushed, busy metres ridden, duration (see `RideFigures`).
    figures: RideFigures,
    /// The snapped ends and the farther of their distances from the drawn points.
    from: [f64; 2],
    to: [f64; 2],
    snap_m: f64,
    steps: Vec<StepSeen>,
}

/// Plans a two-waypoint trip (no bearing, no departure time) and guides it; `None` when there is
/// no route.
fn plan(city: &City, a: [f64; 2], b: [f64; 2], mode: Mode) -> Option<Planned> {
    let profile = if mode == Mode::Walking {
        Profile::Walking
    } else {
        Profile::Cycling
    };
    let req = RouteRequest {
        waypoints: vec![a, b],
        profile,
        supersafe: mode == Mode::SuperSafe,
        night: false,
        bearing: None,
        departure: None,
    };
    let route = city.route(&req).ok()??;
    let figures = ride_figures(city, &route);
    let mut steps = Vec::new();
    for (i, leg) in route.legs.iter().enumerate() {
        let w = &route.waypoints[i];
        let (leg_steps, _) = city.guidance(leg, [w.lon, w.lat], profile, false);
        steps.extend(leg_steps.into_iter().map(|s| StepSeen {
            uturn: s.kind == StepKind::UTurn,
            turn: s.kind == StepKind::Turn,
            stays: s.same_road && s.modifier.is_some_and(|m| m != "straight"),
            arrive: s.kind == StepKind::Arrive,
            road: s.road().to_string(),
            distance_m: s.distance_m,
        }));
    }
    let (s, e) = (route.waypoints.first()?, route.waypoints.last()?);
    Some(Planned {
        length_m: figures.length_m,
        figures,
        from: [s.lon, s.lat],
        to: [e.lon, e.lat],
        snap_m: s.distance_m.max(e.distance_m),
        steps,
    })
}

/// Diagnosis aid (`QUIETWAY_DUMP_UTURNS`): the trip and its steps, for every counted route that has
/// a U-turn step.
fn dump_uturns(a: [f64; 2], b: [f64; 2], planned: &Planned, mode: Mode) {
    if !planned.steps.iter().any(|s| s.uturn) {
        return;
    }
    eprintln!("U-turn in {mode:?} {a:?} -> {b:?}");
    for s in &planned.steps {
        eprintln!(
            "    {:>7.1} m  {}{}",
            s.distance_m,
            if s.uturn { "U-TURN " } else { "" },
            s.road
        );
    }
}

// ---- The benchmark.

fn crow_m(a: [f64; 2], b: [f64; 2]) -> f64 {
    haversine_m(LonLat::new(a[0], a[1]), LonLat::new(b[0], b[1]))
}

/// Whether the segment from `a` to `b` touches the box `[west, south, east, north]` (clipping
/// the segment's parameter range against each slab).
fn segment_touches_box(a: [f64; 2], b: [f64; 2], bx: [f64; 4]) -> bool {
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for axis in 0..2 {
        let (lo, hi) = (bx[axis], bx[axis + 2]);
        let d = b[axis] - a[axis];
        if d.abs() < 1e-15 {
            if a[axis] < lo || a[axis] > hi {
                return false;
            }
            continue;
        }
        let (mut u, mut v) = ((lo - a[axis]) / d, (hi - a[axis]) / d);
        if u > v {
            std::mem::swap(&mut u, &mut v);
        }
        t0 = t0.max(u);
        t1 = t1.min(v);
        if t0 > t1 {
            return false;
        }
    }
    true
}

/// The point pairs the safety benchmark draws in this city (its candidates, accepted or not).
fn safety_pairs(bbox: [f64; 4]) -> HashSet<[u64; 4]> {
    let mut rng = Rng(SAFETY_SEED);
    (0..SAFETY_DRAWS)
        .map(|_| {
            let (a, b) = (random_point(&mut rng, bbox), random_point(&mut rng, bbox));
            [
                a[0].to_bits(),
                a[1].to_bits(),
                b[0].to_bits(),
                b[1].to_bits(),
            ]
        })
        .collect()
}

#[derive(Default)]
struct StepCounts {
    routes: usize,
    steps: usize,
    uturns: usize,
    same_road: usize,
    stays: usize,
    short: usize,
    same_road_examples: Vec<String>,
}

impl StepCounts {
    /// Counts a route's steps; the arrive step (a point, not a stretch ridden) is not a step here.
    fn add(&mut self, p: &Planned) {
        self.routes += 1;
        let mut before: Option<&str> = None;
        for s in p.steps.iter().filter(|s| !s.arrive) {
            self.steps += 1;
            self.uturns += usize::from(s.uturn);
            self.stays += usize::from(s.stays);
            if s.turn && !s.road.is_empty() && before == Some(s.road.as_str()) {
                self.same_road += 1;
                if self.same_road_examples.len() < 5 {
                    self.same_road_examples
                        .push(format!("{} ({:.0} m)", s.road, s.distance_m));
                }
            }
            self.short += usize::from(s.distance_m < SHORT_STEP_M);
            before = Some(&s.road);
        }
    }
    fn share(&self, n: usize) -> f64 {
        n as f64 / self.steps.max(1) as f64
    }
    fn json(&self) -> Value {
        json!({
            "routes": self.routes, "steps": self.steps, "uturn_steps": self.uturns,
            "turn_onto_same_road_steps": self.same_road, "turn_onto_same_road_share": self.share(self.same_road),
            "short_steps": self.short, "short_step_share": self.share(self.short),
            "turn_onto_same_road_examples": self.same_road_examples,
            "stay_on_road_steps": self.stays, "stay_on_road_share": self.share(self.stays),
        })
    }
}

fn bench_city(shared: &Path, city_id: &str, file: &str) -> Value {
    let city = build_city(shared, city_id, file, "route-quality");
    let bbox = graph_bbox(&city);
    let skip = safety_pairs(bbox);
    let goal = goals(city_id);
    let mut rng = Rng(seed());
    let (mut ratio_direct, mut ratio_crow, mut walk_crow) = (vec![], vec![], vec![]);
    let mut tally = PushTally::default();
    let (mut direct_steps, mut supersafe_steps) = (StepCounts::default(), StepCounts::default());
    let mut worst = json!(null);
    let mut rejected = json!({ "snap": 0, "short": 0, "hole": 0, "no_route": 0, "safety_pair": 0 });
    let mut bump =
        |why: &str| *rejected.get_mut(why).unwrap() = json!(rejected[why].as_u64().unwrap() + 1);
    let direct = city.metric(MetricKind::DirectDay, None);
    let mut tries = 0;
    while ratio_direct.len() < TRIPS && tries < TRIPS * 50 {
        tries += 1;
        let (a, b) = (random_point(&mut rng, bbox), random_point(&mut rng, bbox));
        if skip.contains(&[
            a[0].to_bits(),
            a[1].to_bits(),
            b[0].to_bits(),
            b[1].to_bits(),
        ]) {
            bump("safety_pair");
            continue;
        }
        if crow_m(a, b) < MIN_CROW_M {
            bump("short");
            continue;
        }
        if city_id == "nyc" && segment_touches_box(a, b, NYC_HOLE) {
            bump("hole");
            continue;
        }
        let (Some(d), Some(s), Some(w)) = (
            plan(&city, a, b, Mode::Direct),
            plan(&city, a, b, Mode::SuperSafe),
            plan(&city, a, b, Mode::Walking),
        ) else {
            bump("no_route");
            continue;
        };
        // A drawn point is kept by its distance to the nearest way a bicycle may use (ridden or
        // pushed), whichever position the route then starts or ends at (a point on a footway in a
        // park may start on the ridden path a little farther off): the trips do not depend on
        // how the engine chooses among a point's positions.
        let near = |p: [f64; 2]| {
            city.snap(p[0], p[1], MetricKind::DirectDay, &direct, None)
                .map_or(f64::INFINITY, |c| c.distance_m)
        };
        if near(a).max(near(b)) > MAX_SNAP_M || w.snap_m > MAX_SNAP_M {
            bump("snap");
            continue;
        }
        if crow_m(d.from, d.to) < MIN_CROW_M || d.length_m <= 0.0 {
            bump("short");
            continue;
        }
        let r = s.length_m / d.length_m;
        if worst.is_null() || r > worst["ratio"].as_f64().unwrap() {
            worst = json!({
                "from": a, "to": b, "ratio": r, "direct_m": d.length_m, "supersafe_m": s.length_m,
                "crow_m": crow_m(s.from, s.to),
            });
        }
        ratio_direct.push(r);
        ratio_crow.push(s.length_m / crow_m(s.from, s.to));
        walk_crow.push(w.length_m / crow_m(w.from, w.to));
        tally.add((a, b), &d.figures, &s.figures);
        if std::env::var_os("QUIETWAY_DUMP_UTURNS").is_some() {
            dump_uturns(a, b, &d, Mode::Direct);
            dump_uturns(a, b, &s, Mode::SuperSafe);
        }
        direct_steps.add(&d);
        supersafe_steps.add(&s);
    }
    assert!(
        ratio_direct.len() >= TRIPS / 2,
        "{file}: only {} trips found",
        ratio_direct.len()
    );
    for v in [&mut ratio_direct, &mut ratio_crow, &mut walk_crow] {
        v.sort_by(f64::total_cmp);
    }
    let (busy_direct, busy_supersafe) = (tally.direct.busy_m, tally.supersafe.busy_m);
    let (busy_avoided, busy_avoided_over_ridden) =
        quietway_bench::busy_cuts(&tally.direct, &tally.supersafe);
    let pushing = tally.json();
    // The step figures cover every cycling route planned: Direct's and SuperSafe's.
    let mut all = StepCounts::default();
    for c in [&direct_steps, &supersafe_steps] {
        all.routes += c.routes;
        all.steps += c.steps;
        all.uturns += c.uturns;
        all.same_road += c.same_road;
        all.stays += c.stays;
        all.short += c.short;
    }
    all.same_road_examples = supersafe_steps.same_road_examples.clone();
    let (median, p90, max) = (
        quantile(&ratio_direct, 0.5),
        quantile(&ratio_direct, 0.9),
        quantile(&ratio_direct, 1.0),
    );
    let checks = json!({
        "supersafe_to_direct_median": median <= goal.median,
        "supersafe_to_direct_p90": p90 <= goal.p90,
        "supersafe_to_direct_worst": max <= goal.worst,
        "busy_avoided": busy_avoided >= goal.busy_avoided,
        "busy_avoided_over_ridden": busy_avoided_over_ridden >= goal.busy_avoided,
        "pushed_share_supersafe": pushing["checks"]["pushed_share_supersafe"],
        "heavy_push_trips": pushing["checks"]["heavy_push_trips"],
        "duration_ratio_median": pushing["checks"]["duration_ratio_median"],
        "uturn_steps": all.uturns <= goal.uturns,
        "turn_onto_same_road_share": all.share(all.same_road) <= goal.same_road_share,
        "short_step_share": all.share(all.short) <= goal.short_share,
    });
    let met = checks
        .as_object()
        .unwrap()
        .values()
        .all(|v| v.as_bool() == Some(true));
    json!({
        "extract": file, "city": city_id, "trips": ratio_direct.len(), "draws": tries, "rejected": rejected,
        "supersafe_to_direct": { "median": median, "p90": p90, "worst": max, "worst_trip": worst },
        "supersafe_to_crow_median": quantile(&ratio_crow, 0.5),
        "walking_to_crow_median": quantile(&walk_crow, 0.5),
        "busy_m_direct": busy_direct, "busy_m_supersafe": busy_supersafe, "busy_avoided": busy_avoided,
        "busy_avoided_over_ridden": busy_avoided_over_ridden,
        "pushing": pushing, "pushing_row": tally.row(file),
        "steps": all.json(), "steps_direct": direct_steps.json(), "steps_supersafe": supersafe_steps.json(),
        "goal": {
            "supersafe_to_direct_median": goal.median, "supersafe_to_direct_p90": goal.p90,
            "supersafe_to_direct_worst": goal.worst, "busy_avoided": goal.busy_avoided,
            "uturn_steps": goal.uturns, "turn_onto_same_road_share": goal.same_road_share,
            "short_step_share": goal.short_share,
        },
        "checks": checks, "goal_met": met,
    })
}

fn main() {
    let quietway_bench::BenchArgs { quick, shared, out } =
        quietway_bench::bench_args("route-quality");
    let results: Vec<Value> = CITY_EXTRACTS
        .iter()
        .map(|(city, file)| bench_city(&shared, city, file))
        .collect();
    println!("Pushing (the bike walked) and duration, SuperSafe against Direct on the same trips");
    println!("{}", PushTally::HEADER);
    for r in &results {
        println!("{}", r["pushing_row"].as_str().unwrap_or(""));
    }
    println!();
    println!(
        "Route quality over {TRIPS} random trips per extract ({MIN_CROW_M:.0} m and more as the crow flies; step figures over the Direct and SuperSafe cycling routes)"
    );
    let pct = |x: f64| format!("{:.1} %", 100.0 * x);
    for r in &results {
        let f = |p: &str| r.pointer(p).and_then(Value::as_f64).unwrap_or(f64::NAN);
        let ok = |k: &str| {
            if r["checks"][k].as_bool() == Some(true) {
                "ok"
            } else {
                "MISSED"
            }
        };
        println!(
            "\n{} ({} trips)",
            r["extract"].as_str().unwrap_or(""),
            r["trips"]
        );
        println!("| what | measured | goal | |");
        println!("|---|---|---|---|");
        for (what, k, measured, goal) in [
            (
                "SuperSafe / Direct length, median",
                "supersafe_to_direct_median",
                format!("{:.2}", f("/supersafe_to_direct/median")),
                format!("≤ {:.2}", f("/goal/supersafe_to_direct_median")),
            ),
            (
                "same, p90",
                "supersafe_to_direct_p90",
                format!("{:.2}", f("/supersafe_to_direct/p90")),
                format!("≤ {:.2}", f("/goal/supersafe_to_direct_p90")),
            ),
            (
                "same, worst trip",
                "supersafe_to_direct_worst",
                format!(
                    "{:.2} ({:.0} m ridden as {:.0} m)",
                    f("/supersafe_to_direct/worst"),
                    f("/supersafe_to_direct/worst_trip/direct_m"),
                    f("/supersafe_to_direct/worst_trip/supersafe_m")
                ),
                format!("≤ {:.1}", f("/goal/supersafe_to_direct_worst")),
            ),
            (
                "busy + very busy metres avoided vs Direct",
                "busy_avoided",
                format!(
                    "{} ({:.0} km → {:.0} km)",
                    pct(f("/busy_avoided")),
                    f("/busy_m_direct") / 1000.0,
                    f("/busy_m_supersafe") / 1000.0
                ),
                format!("≥ {:.0} %", 100.0 * f("/goal/busy_avoided")),
            ),
            (
                "same, over ridden metres (busy share of the metres ridden)",
                "busy_avoided_over_ridden",
                pct(f("/busy_avoided_over_ridden")),
                format!("≥ {:.0} %", 100.0 * f("/goal/busy_avoided")),
            ),
            (
                "SuperSafe's metres pushed (Direct's)",
                "pushed_share_supersafe",
                format!(
                    "{} ({})",
                    pct(f("/pushing/supersafe/pushed_share")),
                    pct(f("/pushing/direct/pushed_share"))
                ),
                format!("≤ {}", pct(f("/pushing/goal/max_pushed_share_supersafe"))),
            ),
            (
                "SuperSafe trips pushing > 30 % of their length",
                "heavy_push_trips",
                format!(
                    "{} ({} trips)",
                    pct(f("/pushing/heavy_push_trip_share")),
                    r["pushing"]["heavy_push_trips"]
                ),
                "≤ 2 %".into(),
            ),
            (
                "SuperSafe / Direct duration, median (p90, worst)",
                "duration_ratio_median",
                format!(
                    "{:.2} ({:.2}, {:.2})",
                    f("/pushing/duration_ratio/median"),
                    f("/pushing/duration_ratio/p90"),
                    f("/pushing/duration_ratio/worst")
                ),
                "≤ 1.30".into(),
            ),
            (
                "U-turn steps (no bearing given)",
                "uturn_steps",
                format!(
                    "{} in {} routes",
                    r["steps"]["uturn_steps"], r["steps"]["routes"]
                ),
                "0".into(),
            ),
            (
                "steps turning onto the road just ridden",
                "turn_onto_same_road_share",
                format!(
                    "{} ({} of {} steps)",
                    pct(f("/steps/turn_onto_same_road_share")),
                    r["steps"]["turn_onto_same_road_steps"],
                    r["steps"]["steps"]
                ),
                format!("≤ {:.0} %", 100.0 * f("/goal/turn_onto_same_road_share")),
            ),
            (
                "steps shorter than 15 m",
                "short_step_share",
                pct(f("/steps/short_step_share")),
                format!("≤ {:.0} %", 100.0 * f("/goal/short_step_share")),
            ),
        ] {
            println!("| {what} | {measured} | {goal} | {} |", ok(k));
        }
        println!(
            "| steps keeping to the road just ridden at a corner (\"turn left to stay on\") | {} ({} steps) | – | |",
            pct(f("/steps/stay_on_road_share")),
            r["steps"]["stay_on_road_steps"]
        );
        println!(
            "| SuperSafe / crow-fly length, median (walking's) | {:.2} ({:.2}) | – | |",
            f("/supersafe_to_crow_median"),
            f("/walking_to_crow_median")
        );
    }
    let result = json!({
        "name": "route-quality", "quick": quick, "machine": quietway_bench::machine(),
        "trips_per_extract": TRIPS, "min_crow_m": MIN_CROW_M, "max_snap_m": MAX_SNAP_M, "short_step_m": SHORT_STEP_M,
        "seed": seed(), "nyc_excluded_box": NYC_HOLE,
        "extracts": results,
    });
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).expect("results directory");
    }
    std::fs::write(&out, serde_json::to_string_pretty(&result).expect("json"))
        .expect("write results");
    println!("written {}", out.display());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_crossing_touching_or_missing_the_hole() {
        let bx = [0.0, 0.0, 1.0, 1.0];
        assert!(segment_touches_box([-1.0, 0.5], [2.0, 0.5], bx));
        assert!(segment_touches_box([0.5, -1.0], [0.5, 0.5], bx));
        assert!(segment_touches_box([0.2, 0.2], [0.3, 0.3], bx));
        assert!(!segment_touches_box([-1.0, 2.0], [2.0, 1.5], bx));
        assert!(!segment_touches_box([-1.0, 0.5], [-0.5, 3.0], bx));
        // Passing by a corner without touching it.
        assert!(!segment_touches_box([-1.0, 0.5], [0.5, 2.1], bx));
        // NYC: Broadway from Houston to Union Square crosses it; the Hudson greenway does not.
        assert!(segment_touches_box(
            [-73.9976, 40.7255],
            [-73.9903, 40.7359],
            NYC_HOLE
        ));
        assert!(!segment_touches_box(
            [-74.0105, 40.7200],
            [-74.0090, 40.7450],
            NYC_HOLE
        ));
    }

    fn step(kind: &str, road: &str, distance_m: f64) -> StepSeen {
        StepSeen {
            uturn: kind == "uturn",
            turn: kind == "turn",
            stays: kind == "stay",
            arrive: kind == "arrive",
            road: road.into(),
            distance_m,
        }
    }

    #[test]
    fn counts_uturns_turns_onto_the_same_road_and_short_steps() {
        let planned = Planned {
            length_m: 0.0,
            figures: RideFigures::default(),
            from: [0.0, 0.0],
            to: [0.0, 0.0],
            snap_m: 0.0,
            steps: vec![
                step("depart", "Hudson River Greenway", 120.0),
                step("turn", "Hudson River Greenway", 10.0),
                step("uturn", "Hudson River Greenway", 40.0),
                step("turn", "Canal Street", 300.0),
                step("turn", "", 12.0),
                step("turn", "", 50.0),
                step("continue", "Canal Street", 80.0),
                step("turn", "Canal Street", 60.0),
                step("stay", "Canal Street", 70.0),
                step("arrive", "Canal Street", 0.0),
            ],
        };
        let mut c = StepCounts::default();
        c.add(&planned);
        // The arrival is no step; two unnamed ways in a row are not "the same road".
        assert_eq!((c.routes, c.steps), (1, 9));
        assert_eq!(c.uturns, 1);
        // "Turn left to stay on Canal Street" is a maneuver worded as one, not a turn onto it.
        assert_eq!((c.same_road, c.stays), (2, 1));
        assert_eq!(c.short, 2);
    }
}
