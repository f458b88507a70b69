//! The scenario suite: small hand-drawn maps (after OSRM's cucumber features), each built with the
//! real pipeline and routed with the real engine, checking the steps a rider gets: names, turns
//! and modes. The format is described in `tests/scenarios/README.md`.
//!
//! Scenarios today's engine gets wrong for reasons others are fixing (turn restrictions, guidance)
//! are listed in `tests/scenarios/known-failures.txt`: they are run, printed loudly, and the suite
//! fails when one of them starts to pass, so the list only shrinks. Run alone with
//! `cargo test -p quietway-graph-pipeline --test scenarios` (an argument filters files by name).

use quietway_engine::city::{City, Profile, RouteRequest};
use quietway_engine::graph::{CoverageArea, way_flags};
use quietway_engine::guidance::{Step, StepKind};
use quietway_graph_pipeline::build::{BuildInput, build};
use quietway_graph_pipeline::city::load_cities;
use quietway_graph_pipeline::progress::Progress;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Where the maps are drawn: a corner of Manhattan (any place works; the coverage is the map's own).
const ORIGIN: [f64; 2] = [-73.99, 40.73];
const METRES_PER_DEGREE: f64 = 111_320.0;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Direct,
    SuperSafe,
    Walking,
}

struct Row {
    line: usize,
    profile: Mode,
    waypoints: Vec<char>,
    names: Option<String>,
    turns: Option<String>,
    modes: Option<String>,
    distance: Option<f64>,
}

type Tags = Vec<(String, String)>;

#[derive(Default)]
struct Scenario {
    grid_m: f64,
    city: String,
    min_island_nodes: usize,
    positions: BTreeMap<char, [f64; 2]>,
    ways: Vec<(String, Tags)>,
    nodes: Vec<(char, Tags)>,
    /// Tags, then members as (role, way letters or node letter).
    relations: Vec<(Tags, Tags)>,
    rows: Vec<Row>,
}

fn parse_tags(s: &str) -> Result<Tags, String> {
    s.split_whitespace()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_string(), v.replace('~', " ")))
                .ok_or_else(|| format!("'{kv}' is not key=value"))
        })
        .collect()
}

fn optional(cell: Option<&str>) -> Option<String> {
    let c = cell?.trim();
    (!c.is_empty() && c != "*").then(|| c.to_string())
}

fn parse(text: &str) -> Result<Scenario, String> {
    let mut sc = Scenario {
        grid_m: 20.0,
        city: "nyc".into(),
        min_island_nodes: 25,
        ..Default::default()
    };
    let mut section = "";
    let mut map_row = 0usize;
    let mut profile = Mode::Direct;
    for (i, raw) in text.lines().enumerate() {
        let err = |m: String| format!("line {}: {m}", i + 1);
        // ` #` starts a comment to the end of the line.
        let line = raw.split(" #").next().unwrap_or("").trim_end();
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && section != "map") {
            continue;
        }
        let mut words = trimmed.split_whitespace();
        let first = words.next().unwrap_or("");
        match first {
            "grid" => {
                sc.grid_m = words
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| err("grid takes metres".into()))?;
                continue;
            }
            "city" => {
                sc.city = words.next().unwrap_or("nyc").to_string();
                continue;
            }
            "islands" => {
                sc.min_island_nodes = words
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| err("islands takes a node count".into()))?;
                continue;
            }
            "profile" => {
                profile = match words.next() {
                    Some("direct") => Mode::Direct,
                    Some("supersafe") => Mode::SuperSafe,
                    Some("walking") => Mode::Walking,
                    other => return Err(err(format!("unknown profile {other:?}"))),
                };
                continue;
            }
            "map" | "ways" | "nodes" | "relations" | "routes" if trimmed == first => {
                section = if first == "map" { "map" } else { first };
                continue;
            }
            _ => {}
        }
        match section {
            "map" => {
                if trimmed.is_empty() && map_row == 0 {
                    continue;
                }
                for (col, c) in line.chars().enumerate() {
                    if c.is_ascii_alphanumeric() {
                        let dx = col as f64 * sc.grid_m;
                        let dy = map_row as f64 * sc.grid_m;
                        let lon =
                            ORIGIN[0] + dx / (METRES_PER_DEGREE * ORIGIN[1].to_radians().cos());
                        let lat = ORIGIN[1] - dy / METRES_PER_DEGREE;
                        if sc.positions.insert(c, [lon, lat]).is_some() {
                            return Err(err(format!("'{c}' is drawn twice")));
                        }
                    }
                }
                map_row += 1;
            }
            "ways" => {
                let (nodes, tags) = trimmed
                    .split_once(char::is_whitespace)
                    .unwrap_or((trimmed, ""));
                sc.ways
                    .push((nodes.to_string(), parse_tags(tags).map_err(err)?));
            }
            "nodes" => {
                let (node, tags) = trimmed
                    .split_once(char::is_whitespace)
                    .unwrap_or((trimmed, ""));
                let c = node.chars().next().unwrap();
                sc.nodes.push((c, parse_tags(tags).map_err(err)?));
            }
            "relations" => {
                let (tags, members) = trimmed
                    .split_once('|')
                    .ok_or_else(|| err("a relation is `tags | role=member…`".into()))?;
                sc.relations.push((
                    parse_tags(tags).map_err(err)?,
                    parse_tags(members).map_err(err)?,
                ));
            }
            "routes" => {
                let cells: Vec<&str> = trimmed.split('|').collect();
                if cells[0].trim() == "waypoints" {
                    continue; // the header
                }
                let waypoints: Vec<char> = cells[0]
                    .split(|c: char| c.is_whitespace() || c == ',')
                    .filter(|w| !w.is_empty())
                    .map(|w| w.chars().next().unwrap())
                    .collect();
                if waypoints.len() < 2 {
                    return Err(err("a route needs two waypoints".into()));
                }
                let distance = optional(cells.get(4).copied())
                    .map(|d| d.trim_start_matches('~').parse::<f64>())
                    .transpose()
                    .map_err(|_| err("distance is ~metres".into()))?;
                sc.rows.push(Row {
                    line: i + 1,
                    profile,
                    waypoints,
                    names: optional(cells.get(1).copied()),
                    turns: optional(cells.get(2).copied()),
                    modes: optional(cells.get(3).copied()),
                    distance,
                });
            }
            _ => return Err(err(format!("'{trimmed}' is outside any section"))),
        }
    }
    Ok(sc)
}

/// Writes the scenario as an OSM XML file: letters become nodes, ways and relations get ids in the
/// order written.
fn to_osm(sc: &Scenario) -> Result<String, String> {
    let node_id = |c: char| -> Result<i64, String> {
        sc.positions
            .keys()
            .position(|&k| k == c)
            .map(|p| p as i64 + 1)
            .ok_or_else(|| format!("node '{c}' is not on the map"))
    };
    let way_id = |key: &str| -> Result<i64, String> {
        sc.ways
            .iter()
            .position(|(k, _)| k == key)
            .map(|p| p as i64 + 101)
            .ok_or_else(|| format!("no way '{key}'"))
    };
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('"', "&quot;")
            .replace('<', "&lt;")
    };
    let mut x = String::from("<?xml version=\"1.0\"?>\n<osm version=\"0.6\">\n");
    for (&c, p) in &sc.positions {
        if c.is_ascii_digit() {
            continue; // digits mark waypoints only
        }
        write!(
            x,
            "<node id=\"{}\" version=\"1\" lon=\"{:.7}\" lat=\"{:.7}\">",
            node_id(c)?,
            p[0],
            p[1]
        )
        .unwrap();
        for (n, tags) in &sc.nodes {
            if *n == c {
                for (k, v) in tags {
                    write!(x, "<tag k=\"{}\" v=\"{}\"/>", esc(k), esc(v)).unwrap();
                }
            }
        }
        x.push_str("</node>\n");
    }
    for (key, tags) in &sc.ways {
        write!(x, "<way id=\"{}\" version=\"1\">", way_id(key)?).unwrap();
        for c in key.chars() {
            write!(x, "<nd ref=\"{}\"/>", node_id(c)?).unwrap();
        }
        for (k, v) in tags {
            write!(x, "<tag k=\"{}\" v=\"{}\"/>", esc(k), esc(v)).unwrap();
        }
        x.push_str("</way>\n");
    }
    for (i, (tags, members)) in sc.relations.iter().enumerate() {
        write!(x, "<relation id=\"{}\" version=\"1\">", 1001 + i).unwrap();
        for (role, m) in members {
            if m.chars().count() == 1 {
                let c = m.chars().next().unwrap();
                write!(
                    x,
                    "<member type=\"node\" ref=\"{}\" role=\"{role}\"/>",
                    node_id(c)?
                )
                .unwrap();
            } else {
                write!(
                    x,
                    "<member type=\"way\" ref=\"{}\" role=\"{role}\"/>",
                    way_id(m)?
                )
                .unwrap();
            }
        }
        for (k, v) in tags {
            write!(x, "<tag k=\"{}\" v=\"{}\"/>", esc(k), esc(v)).unwrap();
        }
        x.push_str("</relation>\n");
    }
    x.push_str("</osm>\n");
    Ok(x)
}

/// Builds the scenario's map with the pipeline and loads it into the engine.
fn build_city(sc: &Scenario, name: &str, dir: &Path) -> Result<City, String> {
    let file = dir.join(format!("{name}.osm"));
    std::fs::write(&file, to_osm(sc)?).map_err(|e| e.to_string())?;
    let cities = load_cities(None)?;
    let config = cities
        .get(&sc.city)
        .cloned()
        .ok_or_else(|| format!("unknown city {}", sc.city))?;
    // The coverage is the map's own box, a kilometre round it.
    let (mut w, mut s, mut e, mut n) = (180.0f64, 90.0f64, -180.0f64, -90.0f64);
    for p in sc.positions.values() {
        (w, s, e, n) = (w.min(p[0]), s.min(p[1]), e.max(p[0]), n.max(p[1]));
    }
    let pad = 0.01;
    let ring = vec![
        [w - pad, s - pad],
        [e + pad, s - pad],
        [e + pad, n + pad],
        [w - pad, n + pad],
        [w - pad, s - pad],
    ];
    let input = BuildInput {
        city_id: sc.city.clone(),
        city: config,
        osm: vec![file],
        dem: None,
        areas: vec![CoverageArea {
            name: "scenario".into(),
            polygons: vec![vec![ring]],
        }],
        sources: vec![],
        min_component_nodes: sc.min_island_nodes,
    };
    let (graph, _) = build(&input, &Progress::new(true))?;
    City::from_graph(graph, "scenario".into(), None)
}

fn turn_of(s: &Step) -> String {
    match s.kind {
        StepKind::Depart => "depart".into(),
        StepKind::Arrive => "arrive".into(),
        StepKind::Roundabout => format!("roundabout exit {}", s.exit.unwrap_or(0)),
        StepKind::UTurn => "uturn".into(),
        k => match s.modifier {
            Some(m) => format!("{} {m}", k.name()),
            None => k.name().into(),
        },
    }
}

/// What a row's route gives: `(names, turns, modes, metres)`, or `None` for no route.
fn run_row(city: &City, sc: &Scenario, row: &Row) -> Result<Option<[String; 4]>, String> {
    let waypoints = row
        .waypoints
        .iter()
        .map(|c| {
            sc.positions
                .get(c)
                .copied()
                .ok_or_else(|| format!("waypoint '{c}' is not on the map"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let profile = if row.profile == Mode::Walking {
        Profile::Walking
    } else {
        Profile::Cycling
    };
    let req = RouteRequest {
        waypoints,
        profile,
        supersafe: row.profile == Mode::SuperSafe,
        night: false,
        bearing: None,
        departure: None,
    };
    let Some(route) = city.route(&req).map_err(|e| format!("{e:?}"))? else {
        return Ok(None);
    };
    let g = &city.graph;
    let (mut names, mut turns, mut modes) = (vec![], vec![], vec![]);
    let mut metres = 0.0;
    for (i, leg) in route.legs.iter().enumerate() {
        let w = &route.waypoints[i];
        let (steps, _) = city.guidance(leg, [w.lon, w.lat], profile, false);
        for s in &steps {
            metres += s.distance_m;
            names.push(s.name.clone());
            turns.push(turn_of(s));
            let ferry = s
                .arcs
                .iter()
                .any(|&a| g.way_flags[g.arc_way(a) as usize] & way_flags::FERRY != 0);
            // Arriving is no change of mode: the arrive step keeps the mode it arrives in.
            if s.kind == StepKind::Arrive {
                let last = modes.last().cloned().unwrap_or_default();
                modes.push(last);
                continue;
            }
            modes.push(
                if ferry {
                    "ferry"
                } else if s.push {
                    "pushing"
                } else if profile == Profile::Walking {
                    "walking"
                } else {
                    "cycling"
                }
                .to_string(),
            );
        }
    }
    Ok(Some([
        names.join(","),
        turns.join(","),
        modes.join(","),
        format!("{metres:.0}"),
    ]))
}

/// Compares a row's route with what it expects; `Ok(())` or the differences.
fn check(row: &Row, got: &Option<[String; 4]>) -> Result<(), String> {
    let Some(got) = got else {
        return match row.names.as_deref() {
            Some("-") => Ok(()),
            _ => Err("no route".into()),
        };
    };
    if row.names.as_deref() == Some("-") {
        return Err(format!("expected no route, got {}", got[0]));
    }
    let mut diffs = Vec::new();
    for (label, want, have) in [
        ("names", &row.names, &got[0]),
        ("turns", &row.turns, &got[1]),
        ("modes", &row.modes, &got[2]),
    ] {
        if let Some(want) = want {
            let norm = |s: &str| {
                s.split(',')
                    .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            // A `*` element matches any one step.
            let (w, h) = (norm(want), norm(have));
            let (w, h): (Vec<&str>, Vec<&str>) = (w.split(',').collect(), h.split(',').collect());
            let same = w.len() == h.len() && w.iter().zip(&h).all(|(a, b)| *a == "*" || a == b);
            if !same {
                diffs.push(format!("{label}: want {want} | got {have}"));
            }
        }
    }
    if let Some(d) = row.distance {
        let have: f64 = got[3].parse().unwrap_or(0.0);
        if (have - d).abs() > (d * 0.1).max(10.0) {
            diffs.push(format!("distance: want ~{d} m | got {have} m"));
        }
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join("; "))
    }
}

fn row_key(file: &str, row: &Row) -> String {
    let wps: String = row.waypoints.iter().collect();
    let profile = match row.profile {
        Mode::Direct => "",
        Mode::SuperSafe => " supersafe",
        Mode::Walking => " walking",
    };
    format!("{file}: {wps}{profile}")
}

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let known_text = std::fs::read_to_string(dir.join("known-failures.txt")).unwrap_or_default();
    let mut known: BTreeMap<String, String> = BTreeMap::new();
    for line in known_text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, why) = line.split_once('#').unwrap_or((line, ""));
        known.insert(key.trim().to_string(), why.trim().to_string());
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "scenario"))
        .collect();
    files.sort();
    let tmp = std::env::temp_dir().join(format!("qw-scenarios-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();

    let (mut passed, mut unexpected, mut known_failed) = (0, Vec::new(), Vec::new());
    let mut now_passing = Vec::new();
    let mut seen = BTreeSet::new();
    for path in &files {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let sc = match parse(&text) {
            Ok(sc) => sc,
            Err(e) => {
                unexpected.push(format!("{name}: cannot read the scenario: {e}"));
                continue;
            }
        };
        let city = build_city(&sc, &name, &tmp);
        for row in &sc.rows {
            let key = row_key(&name, row);
            if !seen.insert(key.clone()) {
                unexpected.push(format!("{key}: the same row twice (line {})", row.line));
                continue;
            }
            let outcome = match &city {
                Ok(city) => run_row(city, &sc, row).and_then(|got| check(row, &got)),
                Err(e) => Err(format!("the map does not build: {e}")),
            };
            match (outcome, known.get(&key)) {
                (Ok(()), None) => passed += 1,
                (Ok(()), Some(_)) => now_passing.push(key),
                (Err(e), Some(why)) => known_failed.push(format!("{key}  [{why}]\n      {e}")),
                (Err(e), None) => unexpected.push(format!("{key} (line {}): {e}", row.line)),
            }
        }
    }
    let stale: Vec<&String> = if filter.is_empty() {
        known.keys().filter(|k| !seen.contains(*k)).collect()
    } else {
        vec![]
    };
    if std::env::var_os("QW_KEEP_SCENARIOS").is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }

    println!("\nscenarios: {} rows in {} files", seen.len(), files.len());
    println!("  passed            {passed}");
    if !known_failed.is_empty() {
        println!(
            "\n!!!!!!!! KNOWN FAILURES ({}): still wrong, listed in tests/scenarios/known-failures.txt !!!!!!!!",
            known_failed.len()
        );
        for k in &known_failed {
            println!("  KNOWN FAILURE  {k}");
        }
    }
    let mut fail = false;
    if !now_passing.is_empty() {
        fail = true;
        println!(
            "\nNOW PASSING ({}): remove from tests/scenarios/known-failures.txt:",
            now_passing.len()
        );
        for k in &now_passing {
            println!("  {k}");
        }
    }
    if !stale.is_empty() {
        fail = true;
        println!("\nknown-failures.txt names rows that do not exist:");
        for k in &stale {
            println!("  {k}");
        }
    }
    if !unexpected.is_empty() {
        fail = true;
        println!("\nFAILED ({}):", unexpected.len());
        for u in &unexpected {
            println!("  {u}");
        }
    }
    if fail {
        std::process::exit(1);
    }
}
