//! The scenario suite: small hand-drawn maps (after OSRM's cucumber features), each built with the
//! real pipeline and routed with the real engine, checking the steps a rider gets: names, turns
//! and modes. The format is described in `tests/scenarios/README.md`.
//!
//! Scenarios today's engine gets wrong for reasons others are fixing (turn restrictions, guidance)
//! are listed in `tests/scenarios/known-failures.txt`: they are run, printed loudly, and the suite
//! fails when one of them starts to pass, so the list only shrinks. Run alone with
//! `cargo test -p quietway-graph-pipeline --test scenarios` (an argument filters files by name).

mod scenario_support;

use quietway_engine::city::City;
use scenario_support::{Map, Mode, Tags, build_city, offset, route};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

struct Row {
    line: usize,
    profile: Mode,
    waypoints: Vec<char>,
    names: Option<String>,
    turns: Option<String>,
    modes: Option<String>,
    distance: Option<f64>,
}

#[derive(Default)]
struct Scenario {
    grid_m: f64,
    map: Map,
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
        map: Map {
            city: "nyc".into(),
            min_island_nodes: 25,
            ..Default::default()
        },
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
                sc.map.city = words.next().unwrap_or("nyc").to_string();
                continue;
            }
            "islands" => {
                sc.map.min_island_nodes = words
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
                        if sc.map.positions.insert(c, offset(dx, dy)).is_some() {
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
                sc.map
                    .ways
                    .push((nodes.to_string(), parse_tags(tags).map_err(err)?));
            }
            "nodes" => {
                let (node, tags) = trimmed
                    .split_once(char::is_whitespace)
                    .unwrap_or((trimmed, ""));
                let c = node.chars().next().unwrap();
                sc.map.nodes.push((c, parse_tags(tags).map_err(err)?));
            }
            "relations" => {
                let (tags, members) = trimmed
                    .split_once('|')
                    .ok_or_else(|| err("a relation is `tags | role=member…`".into()))?;
                sc.map.relations.push((
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

/// What a row's route gives: `(names, turns, modes, metres)`, or `None` for no route.
fn run_row(city: &City, sc: &Scenario, row: &Row) -> Result<Option<[String; 4]>, String> {
    let waypoints = row
        .waypoints
        .iter()
        .map(|c| {
            sc.map
                .positions
                .get(c)
                .copied()
                .ok_or_else(|| format!("waypoint '{c}' is not on the map"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(route(city, &waypoints, row.profile)?.map(|h| {
        [
            h.names.join(","),
            h.turns.join(","),
            h.modes.join(","),
            format!("{:.0}", h.metres),
        ]
    }))
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
        let city = build_city(&sc.map, &name, &tmp);
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
