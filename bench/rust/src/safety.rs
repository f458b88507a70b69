//! The safety goal, measured: across random trips in each city extract, how many fewer busy metres
//! SuperSafe rides than Direct, how much longer it is, and whether any trip rides noticeably more
//! busy metres than Direct. Busy metres are those ridden on roads the API reports as `busy` (the
//! `busy` and `very_busy` classes). The goal: at least 60 % fewer busy metres in each city, counted
//! over all metres and over the metres ridden (a stretch walked beside a busy road is no quiet
//! riding), at most 20 % extra length on the median trip, and no trip with more than 50 m of busy
//! road beyond Direct's. Pushed metres (the bike walked) are reported apart, with the pushing goals
//! of `quietway_bench::PushTally` (SuperSafe's pushed share and its duration against Direct's),
//! which route-quality-bench holds its trips to.
//!
//! The figures depend only on the data and the weighting model, not on the machine: the same run
//! gives the same numbers anywhere. Prints a table and writes `bench/results/safety.json`.
//!
//! `cargo run --release -p quietway-bench --bin safety-bench -- [--out FILE] [--shared-data DIR]`
//! (`--quick` is accepted and changes nothing).
use quietway_bench::{PushTally, busy_cuts, ride_figures};
use quietway_engine::city::{Profile, RouteRequest};
use quietway_engine::testing::Rng;
use serde_json::{Value, json};
use std::path::Path;

/// The goal's thresholds.
const MIN_FEWER_BUSY: f64 = 0.60;
const MAX_MEDIAN_EXTRA: f64 = 0.20;
const NOTICEABLE_M: f64 = 50.0;
/// Trips shorter than this (by Direct) are left out: there is nothing to choose between.
const MIN_TRIP_M: f64 = 500.0;

fn bench_city(shared: &Path, city_id: &str, file: &str, trips: usize) -> Value {
    let city = quietway_bench::build_city(shared, city_id, file, "safety");
    let bbox = quietway_bench::graph_bbox(&city);
    // `QUIETWAY_SAFETY_SEED` draws other trips, to judge on trips nothing was tuned on.
    let seed = std::env::var("QUIETWAY_SAFETY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(11);
    let mut rng = Rng(seed);
    let mut tally = PushTally::default();
    let mut extra = Vec::with_capacity(trips);
    let mut worse: Vec<Value> = Vec::new();
    let mut most_extra_busy: f64 = 0.0;
    let mut most_extra_busy_trip = json!(null);
    let mut tries = 0;
    while extra.len() < trips && tries < trips * 20 {
        tries += 1;
        let (a, b) = (
            quietway_bench::random_point(&mut rng, bbox),
            quietway_bench::random_point(&mut rng, bbox),
        );
        let req = |supersafe: bool| RouteRequest {
            waypoints: vec![a, b],
            profile: Profile::Cycling,
            supersafe,
            night: false,
            bearing: None,
            departure: None,
        };
        let (Ok(Some(d)), Ok(Some(s))) = (city.route(&req(false)), city.route(&req(true))) else {
            continue;
        };
        let (fd, fs) = (ride_figures(&city, &d), ride_figures(&city, &s));
        if fd.length_m < MIN_TRIP_M {
            continue;
        }
        tally.add((a, b), &fd, &fs);
        let (busy_d, busy_s) = (fd.busy_m, fs.busy_m);
        extra.push(fs.length_m / fd.length_m - 1.0);
        if busy_s - busy_d > most_extra_busy {
            most_extra_busy = busy_s - busy_d;
            most_extra_busy_trip =
                json!({ "from": a, "to": b, "direct_busy_m": busy_d, "supersafe_busy_m": busy_s });
        }
        if busy_s > busy_d + NOTICEABLE_M {
            worse.push(
                json!({ "from": a, "to": b, "direct_busy_m": busy_d, "supersafe_busy_m": busy_s }),
            );
        }
    }
    extra.sort_by(f64::total_cmp);
    let pct = |q: f64| extra[((extra.len() - 1) as f64 * q).round() as usize];
    let (fewer, fewer_over_ridden) = busy_cuts(&tally.direct, &tally.supersafe);
    // The pushing goals are route-quality-bench's (its trips, snapped near a way); here they are
    // reported on this benchmark's trips.
    let pushing = tally.json();
    let met = fewer >= MIN_FEWER_BUSY
        && fewer_over_ridden >= MIN_FEWER_BUSY
        && pct(0.5) <= MAX_MEDIAN_EXTRA
        && worse.is_empty();
    let row = tally.row(file);
    json!({
        "extract": file, "city": city_id, "trips": extra.len(),
        "busy_m_direct": tally.direct.busy_m, "busy_m_supersafe": tally.supersafe.busy_m,
        "fewer_busy_m": fewer, "fewer_busy_share_of_ridden_m": fewer_over_ridden,
        "extra_length_median": pct(0.5), "extra_length_p90": pct(0.9), "extra_length_max": pct(1.0),
        "most_extra_busy_m": most_extra_busy, "most_extra_busy_trip": most_extra_busy_trip,
        "trips_with_noticeably_more_busy": worse,
        "pushed_share_direct": tally.direct.pushed_share(),
        "pushed_share_supersafe": tally.supersafe.pushed_share(),
        "pushing": pushing, "pushing_row": row,
        "goal_met": met,
    })
}

fn main() {
    let quietway_bench::BenchArgs { quick, shared, out } = quietway_bench::bench_args("safety");
    // The same trips in quick runs: the whole benchmark takes a few seconds.
    let trips = 500;
    let results: Vec<Value> = quietway_bench::CITY_EXTRACTS
        .iter()
        .map(|(city, file)| bench_city(&shared, city, file, trips))
        .collect();
    println!(
        "Safety goal: SuperSafe against Direct over {trips} random trips per extract (≥ {:.0} % fewer busy metres, ≤ {:.0} % extra length on the median trip, no trip with more than {NOTICEABLE_M:.0} m of busy road beyond Direct's)",
        MIN_FEWER_BUSY * 100.0,
        MAX_MEDIAN_EXTRA * 100.0
    );
    println!(
        "| extract | busy m ridden Direct | busy m ridden SuperSafe | fewer (over ridden metres) | extra length median / p90 | most extra busy m | pushed Direct / SuperSafe | goal |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for r in &results {
        let f = |k: &str| r[k].as_f64().unwrap_or(0.0);
        println!(
            "| {} | {:.0} | {:.0} | {:.0} % ({:.0} %) | {:.1} % / {:.1} % | {:.0} | {:.1} % / {:.1} % | {} |",
            r["extract"].as_str().unwrap_or(""),
            f("busy_m_direct"),
            f("busy_m_supersafe"),
            100.0 * f("fewer_busy_m"),
            100.0 * f("fewer_busy_share_of_ridden_m"),
            100.0 * f("extra_length_median"),
            100.0 * f("extra_length_p90"),
            f("most_extra_busy_m"),
            100.0 * f("pushed_share_direct"),
            100.0 * f("pushed_share_supersafe"),
            if r["goal_met"].as_bool() == Some(true) {
                "met"
            } else {
                "not met"
            }
        );
    }
    println!(
        "\nPushing (the bike walked) and duration, SuperSafe against Direct on the same trips (goals: SuperSafe pushes ≤ max(5 %, 1.5 × Direct's share), ≤ 2 % of its trips push > 30 %, duration ≤ 1.3 × Direct's on the median trip)"
    );
    println!("{}", PushTally::HEADER);
    for r in &results {
        println!("{}", r["pushing_row"].as_str().unwrap_or(""));
    }
    let result = json!({
        "name": "safety", "quick": quick, "machine": quietway_bench::machine(), "trips_per_extract": trips,
        "goal": { "min_fewer_busy_m": MIN_FEWER_BUSY, "max_extra_length_median": MAX_MEDIAN_EXTRA, "noticeable_m": NOTICEABLE_M },
        "extracts": results,
    });
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).expect("results directory");
    }
    std::fs::write(&out, serde_json::to_string_pretty(&result).expect("json"))
        .expect("write results");
    println!("written {}", out.display());
}
