//! Bad input ends with one clear line and a non-zero exit, never a panic; a failed build never
//! replaces a good graph.

mod common;

use common::*;
use std::process::Command;

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_quietway-build-graph"))
        .args(args)
        .arg("--shared-data")
        .arg(shared_data())
        .arg("--quiet")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn assert_clean_failure(stderr: &str, needle: &str) {
    assert!(stderr.contains(needle), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    assert!(!stderr.contains("backtrace"), "stderr: {stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("qw-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Builds the tiny SoHo extract into a fresh folder: the folder and the run's standard output.
fn build_soho(name: &str) -> (std::path::PathBuf, String) {
    let d = tmp(name);
    let soho = shared_data().join("osm/nyc-soho-tiny.osm.pbf");
    let (ok, out, err) = run(&[
        "--city",
        "nyc",
        "--osm",
        soho.to_str().unwrap(),
        "--out",
        d.to_str().unwrap(),
    ]);
    assert!(ok, "{out}{err}");
    (d, out)
}

#[test]
fn missing_file() {
    let (ok, _, err) = run(&[
        "--city",
        "nyc",
        "--osm",
        "/nonexistent/x.osm.pbf",
        "--out",
        tmp("missing").to_str().unwrap(),
    ]);
    assert!(!ok);
    assert_clean_failure(&err, "/nonexistent/x.osm.pbf");
}

#[test]
fn empty_file() {
    let d = tmp("empty");
    let f = d.join("empty.osm.pbf");
    std::fs::write(&f, b"").unwrap();
    let (ok, _, err) = run(&[
        "--city",
        "nyc",
        "--osm",
        f.to_str().unwrap(),
        "--out",
        d.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert_clean_failure(&err, "empty");
}

#[test]
fn truncated_and_corrupt_pbf() {
    let d = tmp("trunc");
    let good = std::fs::read(shared_data().join("osm/nyc-soho-tiny.osm.pbf")).unwrap();
    let f = d.join("truncated.osm.pbf");
    std::fs::write(&f, &good[..good.len() / 2]).unwrap();
    let (ok, _, err) = run(&[
        "--city",
        "nyc",
        "--osm",
        f.to_str().unwrap(),
        "--out",
        d.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert_clean_failure(&err, "truncated.osm.pbf");
    let mut bad = good.clone();
    for b in bad.iter_mut().skip(200).step_by(7) {
        *b ^= 0x5a;
    }
    let f = d.join("corrupt.osm.pbf");
    std::fs::write(&f, &bad).unwrap();
    let (ok, _, err) = run(&[
        "--city",
        "nyc",
        "--osm",
        f.to_str().unwrap(),
        "--out",
        d.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert_clean_failure(&err, "corrupt.osm.pbf");
}

#[test]
fn garbage_xml() {
    let d = tmp("xml");
    let f = d.join("bad.osm");
    std::fs::write(&f, b"<osm><node id='1' lat='x' lon='1'/></osm>").unwrap();
    let (ok, _, err) = run(&[
        "--city",
        "nyc",
        "--osm",
        f.to_str().unwrap(),
        "--out",
        d.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert_clean_failure(&err, "bad.osm");
}

#[test]
fn extract_without_streets() {
    let d = tmp("nostreets");
    let f = d.join("empty-area.osm");
    std::fs::write(
        &f,
        b"<osm version='0.6'><node id='1' lat='40.72' lon='-73.99'/></osm>",
    )
    .unwrap();
    let (ok, _, err) = run(&[
        "--city",
        "nyc",
        "--osm",
        f.to_str().unwrap(),
        "--out",
        d.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert_clean_failure(&err, "no streets");
}

#[test]
fn extract_outside_the_city() {
    let d = tmp("outside");
    let soho = shared_data().join("osm/nyc-soho-tiny.osm.pbf");
    let (ok, _, err) = run(&[
        "--city",
        "london",
        "--osm",
        soho.to_str().unwrap(),
        "--out",
        d.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert_clean_failure(&err, "outside London");
}

#[test]
fn unknown_city() {
    let (ok, _, err) = run(&["--city", "paris", "--osm", "x.osm"]);
    assert!(!ok);
    assert_clean_failure(&err, "unknown city 'paris'");
}

#[test]
fn a_failed_build_keeps_the_previous_graph() {
    let (d, out) = build_soho("keep");
    assert!(out.contains("graph_version"));
    let graph = d.join("nyc.qwg");
    let before = std::fs::read(&graph).unwrap();
    let bad = d.join("bad.osm.pbf");
    std::fs::write(&bad, b"not a pbf at all").unwrap();
    let (ok, _, _) = run(&[
        "--city",
        "nyc",
        "--osm",
        bad.to_str().unwrap(),
        "--out",
        d.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert_eq!(std::fs::read(&graph).unwrap(), before);
    // The engine refuses a truncated graph file with a clear message.
    let cut = &before[..before.len() - 100];
    let err = quietway_engine::format::from_bytes(cut)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("truncated") || err.contains("corrupt"),
        "{err}"
    );
}

#[test]
fn help_lists_every_option() {
    let (ok, out, _) = run(&["--help"]);
    assert!(ok);
    for option in [
        "--city",
        "--osm",
        "--dem",
        "--out",
        "--boundary",
        "--shared-data",
        "--cities",
        "--summary-json",
        "--min-island-nodes",
        "--quiet",
        "--list-cities",
        "--help",
    ] {
        assert!(out.contains(option), "{option} missing from --help:\n{out}");
    }
}

#[test]
fn a_custom_cities_file_needs_no_sample_extracts() {
    let d = tmp("custom-cities");
    let cities = d.join("cities.json");
    std::fs::write(
        &cities,
        r#"{ "soho": { "name": "SoHo", "timezone": "America/New_York", "has_lighting_data": false,
             "drives_on_left": false, "boundary": "boundaries/nyc-boroughs.geojson",
             "default_speed_mph": { "*": 25 } } }"#,
    )
    .unwrap();
    let soho = shared_data().join("osm/nyc-soho-tiny.osm.pbf");
    let (ok, out, err) = run(&[
        "--city",
        "soho",
        "--cities",
        cities.to_str().unwrap(),
        "--osm",
        soho.to_str().unwrap(),
        "--out",
        d.to_str().unwrap(),
    ]);
    assert!(ok, "{out}{err}");
    assert!(d.join("soho.qwg").exists());
    // Without a boundary entry, --boundary is asked for in one clear line.
    std::fs::write(
        &cities,
        r#"{ "soho": { "name": "SoHo", "timezone": "America/New_York", "has_lighting_data": false,
             "drives_on_left": false, "default_speed_mph": {} } }"#,
    )
    .unwrap();
    let (ok, _, err) = run(&[
        "--city",
        "soho",
        "--cities",
        cities.to_str().unwrap(),
        "--osm",
        soho.to_str().unwrap(),
        "--out",
        d.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert_clean_failure(&err, "--boundary");
}

/// The graph the pipeline writes carries the cycling hierarchy: a load reads it rather than
/// building it, and routes exactly as a load that builds it; a file whose stored hierarchy is
/// damaged loads by building it.
#[test]
fn the_stored_cycling_hierarchy_routes_as_one_built_at_load() {
    use quietway_engine::city::{City, LOADED_METRICS, Profile, RouteRequest};
    let (d, out) = build_soho("stored-hierarchy");
    let (graph, version) = quietway_engine::format::read_file(&d.join("nyc.qwg")).unwrap();
    assert!(!graph.cycling_cch_up_head.is_empty() && graph.cycling_cch_usable.len() == 1);
    // The pipeline reads back what it wrote by its checksum, streamed (`check_file`), not parsed:
    // the version it prints is the one a load reads, and a damaged or cut file is refused.
    let file = d.join("nyc.qwg");
    assert!(out.contains(&format!("graph_version {version}")), "{out}");
    assert_eq!(quietway_engine::format::check_file(&file).unwrap(), version);
    let bytes = std::fs::read(&file).unwrap();
    let damaged = d.join("damaged.qwg");
    let mut b = bytes.clone();
    let mid = b.len() / 2;
    b[mid] ^= 0x40;
    std::fs::write(&damaged, &b).unwrap();
    let e = quietway_engine::format::check_file(&damaged)
        .unwrap_err()
        .to_string();
    assert!(e.contains("checksum"), "{e}");
    std::fs::write(&damaged, &bytes[..bytes.len() - 9]).unwrap();
    let e = quietway_engine::format::check_file(&damaged)
        .unwrap_err()
        .to_string();
    assert!(e.contains("truncated"), "{e}");
    // The load phase naming `what`: how the load came by it.
    let phase_of = |c: &City, what: &str| -> String {
        c.load_phases
            .iter()
            .map(|(p, _)| *p)
            .find(|p| p.contains(what))
            .unwrap()
            .to_string()
    };
    let phase = |c: &City| phase_of(c, "cycling hierarchy,");
    let metrics_phase = |c: &City| phase_of(c, "of which cycling metrics");
    // The turn-backs stored are those a load would find; without them it finds the same.
    assert!(!graph.turn_back_pairs.is_empty());
    let mut without = graph.clone();
    without.cycling_cch_usable.clear();
    without.turn_back_pairs.clear();
    let mut damaged = graph.clone();
    if let Some(h) = damaged.cycling_cch_up_head.last_mut() {
        *h = 0;
    }
    // The metrics a city loads with are stored too, customized: read by a load whose inputs are
    // those they were customized from, customized again by any other.
    assert_eq!(graph.cycling_metric_inputs.len(), LOADED_METRICS.len());
    assert_eq!(graph.cycling_metric_weights.len(), 2 * LOADED_METRICS.len());
    let mut stale = graph.clone();
    stale.cycling_metric_inputs[1] ^= 1;
    let stored = City::from_graph(graph, version.clone(), None).unwrap();
    let built = City::from_graph(without, version.clone(), None).unwrap();
    let mended = City::from_graph(damaged, version.clone(), None).unwrap();
    let restale = City::from_graph(stale, version, None).unwrap();
    assert!(phase(&stored).contains("read from the file"));
    assert!(phase(&built).contains("built"));
    assert!(phase(&mended).contains("built"));
    assert!(metrics_phase(&stored).contains("read from the file"));
    assert!(metrics_phase(&built).contains("customized"));
    assert!(metrics_phase(&restale).contains("customized"));
    for kind in LOADED_METRICS {
        let weights = |c: &City| c.metric(kind, None).hierarchy.weights.clone();
        assert_eq!(weights(&stored), weights(&built), "{kind:?}");
        assert_eq!(weights(&restale), weights(&built), "{kind:?}");
    }
    assert_eq!(stored.cch.up_head, built.cch.up_head);
    assert_eq!(stored.cch.input_cch_arc, built.cch.input_cch_arc);
    assert_eq!(stored.turns.turn_flags, built.turns.turn_flags);
    // Trips across the extract's box, corner to corner and side to side.
    let g = &stored.graph;
    let deg = |v: &[i32], max: bool| {
        let x = if max { v.iter().max() } else { v.iter().min() };
        *x.unwrap() as f64 / 1e7
    };
    let (w, e) = (deg(&g.node_lon, false), deg(&g.node_lon, true));
    let (s, n) = (deg(&g.node_lat, false), deg(&g.node_lat, true));
    let at = |fx: f64, fy: f64| [w + (e - w) * fx, s + (n - s) * fy];
    for (i, supersafe) in [(0, false), (1, true), (2, false), (3, true)] {
        let f = 0.2 + 0.1 * i as f64;
        let req = RouteRequest {
            waypoints: vec![at(f, 0.2), at(1.0 - f, 0.8)],
            profile: Profile::Cycling,
            supersafe,
            night: false,
            bearing: None,
            departure: None,
        };
        let a = stored.route(&req).unwrap().expect("a route");
        let b = built.route(&req).unwrap().expect("a route");
        let pieces = |r: &quietway_engine::city::Route| {
            r.legs
                .iter()
                .flat_map(|l| l.pieces.iter().map(|p| p.arc))
                .collect::<Vec<_>>()
        };
        assert_eq!(pieces(&a), pieces(&b));
        assert_eq!(a.legs[0].weight, b.legs[0].weight);
    }
}

/// A city loaded by night (`City::load_now` after dusk) loads SuperSafe's and Direct's night
/// metrics, customized since the file stores the day's, and leaves the day's until asked for: the
/// same metrics as a city loaded by day customizes on their first use.
#[test]
fn a_city_loaded_by_night_loads_the_night_metrics() {
    use quietway_engine::city::City;
    use quietway_engine::metric::MetricKind::*;
    let (d, _) = build_soho("night-load");
    let path = d.join("nyc.qwg");
    let night = City::load_for(&path, None, |_| [SuperSafeNight, DirectNight]).unwrap();
    let day = City::load(&path, None).unwrap();
    assert!(night.is_built(SuperSafeNight) && night.is_built(DirectNight));
    assert!(!night.is_built(SuperSafeDay) && !night.is_built(DirectDay));
    assert!(day.is_built(SuperSafeDay) && !day.is_built(SuperSafeNight));
    for kind in [SuperSafeNight, DirectNight, SuperSafeDay] {
        let weights = |c: &City| c.metric(kind, None).hierarchy.weights.clone();
        assert_eq!(weights(&night), weights(&day), "{kind:?}");
    }
}
