//! OSRM's own guidance, bicycle and restriction scenarios, run against Quietway's pipeline and
//! engine: a measure of how far our steps agree with OSRM's, family by family.
//!
//! The cucumber files of osrm-backend v6.0.0 (`features/bicycle`, `features/guidance`,
//! `features/car/restrictions.feature`, BSD-2, copied with their licence under
//! `test/fixtures/osrm-features/`) are read as they are: the node map, the ways, nodes and
//! relations tables become a drawn map (`scenario_support::Map`), which the real pipeline builds;
//! each row of a routes table is routed by bicycle and its names, turns and modes compared with
//! OSRM's, the turns by direction only (the spec has fewer maneuver types); each row of a
//! routability table is a way of its own, ridden both ways. What is compared, and what is left
//! out, is in `docs/testing.md` ("OSRM's scenarios").
//!
//! The suite fails when a family's share of passing scenarios falls below its floor in
//! `test/fixtures/osrm-features/floors.json`; the rates are written to
//! `bench/results/osrm-features.json`. `cargo test -p quietway-graph-pipeline --test
//! osrm_features [file-filter] [-- --verbose]` runs it (`--verbose` prints every failing row).

mod scenario_support;

use quietway_engine::city::City;
use scenario_support::{Heard, Map, Mode, Tags, build_city, offset, route};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// OSRM's default grid (`DEFAULT_GRID_SIZE`) and the spacing of routability rows.
const DEFAULT_GRID_M: f64 = 100.0;

/// A table: its header and its rows, cells trimmed.
#[derive(Clone, Debug, Default)]
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn hashes(&self) -> Vec<BTreeMap<String, String>> {
        self.rows
            .iter()
            .map(|r| {
                self.header
                    .iter()
                    .cloned()
                    .zip(r.iter().cloned().chain(std::iter::repeat(String::new())))
                    .collect()
            })
            .collect()
    }
}

#[derive(Clone, Debug)]
enum StepDef {
    Profile(String),
    Grid(f64),
    Origin([f64; 2]),
    NodeMap(String),
    NodeLocations(Table),
    Nodes(Table),
    Ways(Table),
    Relations(Table),
    Shortcuts(Table),
    Route(Table),
    Routability(Table),
    /// A step the harness cannot run: the scenario is left out (a profile file, a matrix, …).
    Unsupported(String),
    /// A step that changes nothing a bicycle route shows (query options for overview, …).
    Ignored,
}

struct ScenarioDef {
    name: String,
    line: usize,
    tags: Vec<String>,
    steps: Vec<StepDef>,
}

struct Feature {
    family: &'static str,
    file: String,
    background: Vec<StepDef>,
    scenarios: Vec<ScenarioDef>,
}

/// A table row's cells, trimmed; `\|` is a `|` inside a cell and `\\` a backslash, as in Gherkin.
fn table_cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let inner = t.strip_prefix('|').unwrap_or(t);
    let mut cells = vec![String::new()];
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('|') => cells.last_mut().unwrap().push('|'),
                Some('\\') => cells.last_mut().unwrap().push('\\'),
                Some('n') => cells.last_mut().unwrap().push('\n'),
                Some(o) => {
                    cells.last_mut().unwrap().push('\\');
                    cells.last_mut().unwrap().push(o);
                }
                None => cells.last_mut().unwrap().push('\\'),
            },
            '|' => cells.push(String::new()),
            _ => cells.last_mut().unwrap().push(c),
        }
    }
    // The row's closing `|` leaves an empty last cell.
    if cells.len() > 1
        && cells.last().is_some_and(|c| c.trim().is_empty())
        && inner.trim_end().ends_with('|')
    {
        cells.pop();
    }
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

fn step_of(text: &str, table: Option<Table>, doc: Option<String>) -> StepDef {
    let t = text.trim();
    let quoted = || t.split('"').nth(1).unwrap_or("").to_string();
    let table = table.unwrap_or_default();
    if t.starts_with("the profile file") {
        StepDef::Unsupported(t.into())
    } else if t.starts_with("the profile \"") {
        StepDef::Profile(quoted())
    } else if let Some(rest) = t.strip_prefix("a grid size of ") {
        StepDef::Grid(
            rest.split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or(DEFAULT_GRID_M),
        )
    } else if let Some(rest) = t.strip_prefix("the origin ") {
        let v: Vec<f64> = rest
            .split(',')
            .filter_map(|v| v.trim().parse().ok())
            .collect();
        StepDef::Origin([v[0], v[1]])
    } else if t == "the node map" {
        StepDef::NodeMap(doc.unwrap_or_default())
    } else if t == "the node locations" {
        StepDef::NodeLocations(table)
    } else if t == "the nodes" {
        StepDef::Nodes(table)
    } else if t.starts_with("the ways") {
        StepDef::Ways(table)
    } else if t == "the relations" {
        StepDef::Relations(table)
    } else if t == "the shortcuts" {
        StepDef::Shortcuts(table)
    } else if t == "I route I should get" {
        StepDef::Route(table)
    } else if t == "routability should be" {
        StepDef::Routability(table)
    } else if t == "the query options" || t.starts_with("the extract extra arguments") {
        StepDef::Ignored
    } else {
        StepDef::Unsupported(t.into())
    }
}

fn parse_feature(family: &'static str, file: String, text: &str) -> Feature {
    let mut f = Feature {
        family,
        file,
        background: vec![],
        scenarios: vec![],
    };
    let mut tags: Vec<String> = vec![];
    let mut feature_tags: Vec<String> = vec![];
    let mut in_background = false;
    // The step being read, with its table or docstring.
    let mut pending: Option<(String, Option<Table>, Option<String>)> = None;
    let mut doc: Option<Vec<String>> = None;
    let flush = |f: &mut Feature,
                 pending: &mut Option<(String, Option<Table>, Option<String>)>,
                 in_background: bool| {
        if let Some((text, table, doc)) = pending.take() {
            let step = step_of(&text, table, doc);
            if in_background {
                f.background.push(step);
            } else if let Some(s) = f.scenarios.last_mut() {
                s.steps.push(step);
            }
        }
    };
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim();
        if let Some(lines) = doc.as_mut() {
            if t == "\"\"\"" {
                let d = doc.take().unwrap().join("\n");
                if let Some(p) = pending.as_mut() {
                    p.2 = Some(d);
                }
            } else {
                lines.push(raw.replace('\t', "    "));
            }
            continue;
        }
        if t == "\"\"\"" {
            doc = Some(vec![]);
            continue;
        }
        if t.starts_with('|') {
            if let Some(p) = pending.as_mut() {
                let cells = table_cells(t);
                match p.1.as_mut() {
                    None => {
                        p.1 = Some(Table {
                            header: cells,
                            rows: vec![],
                        })
                    }
                    Some(tb) => tb.rows.push(cells),
                }
            }
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if t.starts_with('@') {
            tags.extend(t.split_whitespace().map(String::from));
            continue;
        }
        let first = t.split_whitespace().next().unwrap_or("");
        match first {
            "Feature:" => {
                // Tags above the feature apply to each of its scenarios.
                feature_tags = std::mem::take(&mut tags);
            }
            "Background:" => {
                flush(&mut f, &mut pending, in_background);
                in_background = true;
            }
            "Scenario:" | "Scenario" => {
                flush(&mut f, &mut pending, in_background);
                in_background = false;
                f.scenarios.push(ScenarioDef {
                    name: t.split_once(':').map_or(t, |x| x.1).trim().to_string(),
                    line: i + 1,
                    tags: feature_tags
                        .iter()
                        .cloned()
                        .chain(std::mem::take(&mut tags))
                        .collect(),
                    steps: vec![],
                });
            }
            "Given" | "When" | "Then" | "And" | "But" => {
                flush(&mut f, &mut pending, in_background);
                pending = Some((t[first.len()..].trim().to_string(), None, None));
            }
            _ => {}
        }
    }
    flush(&mut f, &mut pending, in_background);
    f
}

/// What the harness draws and asks for one scenario.
struct World {
    profile: String,
    grid_m: f64,
    origin: [f64; 2],
    map: Map,
    shortcuts: BTreeMap<String, String>,
}

fn new_map() -> Map {
    Map {
        city: "nyc".into(),
        min_island_nodes: 1,
        ..Default::default()
    }
}

/// Tags of a way row as OSRM's harness writes them: `highway=primary` unless the row says
/// otherwise, the name the way's letters unless the row has a name column (`""` an empty name,
/// an empty cell none); empty cells and `(nil)` write no tag.
fn way_tags(row: &BTreeMap<String, String>, nodes: &str) -> Tags {
    let mut tags: BTreeMap<String, String> = BTreeMap::new();
    tags.insert("highway".into(), "primary".into());
    for (k, v) in row {
        if k != "nodes" && !k.is_empty() && !k.starts_with('#') {
            tags.insert(k.clone(), v.clone());
        }
    }
    if !row.contains_key("name") {
        tags.insert("name".into(), nodes.into());
    }
    tags.into_iter()
        .filter(|(_, v)| !v.is_empty() && v != "(nil)" && v != "\"\"" && v != "''")
        .collect()
}

/// A bicycle rides OSRM's car maps: motorways become trunk roads (one-way as motorways are), so
/// the guidance they test is asked of a road a bicycle may take.
fn ride_car_map(tags: &mut Tags) {
    let highway = tags
        .iter()
        .find(|(k, _)| k == "highway")
        .map(|(_, v)| v.clone());
    let to = match highway.as_deref() {
        Some("motorway") => "trunk",
        Some("motorway_link") => "trunk_link",
        _ => return,
    };
    for (k, v) in tags.iter_mut() {
        if k == "highway" {
            *v = to.into();
        }
    }
    if !tags.iter().any(|(k, _)| k == "oneway") {
        tags.push(("oneway".into(), "yes".into()));
    }
}

/// The direction a maneuver names, OSRM's words or ours: `depart`, `arrive`, `roundabout N`,
/// `uturn`, or the modifier (`left`, `slight right`, `straight`, …).
fn direction(turn: &str) -> String {
    let t = turn.trim();
    if t.starts_with("depart") {
        return "depart".into();
    }
    if t.starts_with("arrive") {
        return "arrive".into();
    }
    // OSRM: roundabout-exit-2, rotary-exit-1, <rotary name>-exit-1, roundabout turn left exit-1;
    // ours: roundabout exit 2.
    // OSRM's `exit roundabout right`, `exit rotary straight` leave the ring: a direction.
    let leaving = t.starts_with("exit roundabout") || t.starts_with("exit rotary");
    if let Some(i) = t
        .rfind("exit-")
        .or_else(|| t.rfind("exit "))
        .filter(|_| !leaving)
    {
        if t.contains("roundabout") || t.contains("rotary") || t[..i].ends_with('-') {
            return format!("roundabout {}", &t[i + 5..]);
        }
    }
    if t.ends_with("uturn") {
        return "uturn".into();
    }
    for m in [
        "sharp left",
        "slight left",
        "sharp right",
        "slight right",
        "left",
        "right",
        "straight",
    ] {
        if t.ends_with(m) {
            return m.into();
        }
    }
    "straight".into()
}

fn split_list(s: &str) -> Vec<String> {
    s.split(',').map(|p| p.trim().to_string()).collect()
}

/// Why a row is not asked of a bicycle router: `Some(reason)` leaves it out.
fn row_left_out(row: &BTreeMap<String, String>) -> Option<&'static str> {
    for (col, why) in [
        ("bearings", "bearings"),
        ("bearing", "bearings"),
        ("approaches", "approaches"),
    ] {
        if row.get(col).is_some_and(|v| !v.is_empty()) {
            return Some(why);
        }
    }
    None
}

#[derive(Default, Clone, Copy)]
struct Count {
    scenarios: usize,
    passed: usize,
    rows: usize,
    rows_passed: usize,
}

enum Outcome {
    /// Not asked of a bicycle router (why).
    LeftOut(String),
    /// Rows passed, rows run, failures.
    Ran(usize, usize, Vec<String>),
}

fn build_world(steps: &[StepDef], family: &str) -> Result<World, String> {
    let mut w = World {
        profile: "bicycle".into(),
        grid_m: DEFAULT_GRID_M,
        origin: [1.0, 1.0],
        map: new_map(),
        shortcuts: BTreeMap::new(),
    };
    for s in steps {
        match s {
            StepDef::Profile(p) => w.profile = p.clone(),
            StepDef::Grid(g) => w.grid_m = *g,
            StepDef::Origin(o) => w.origin = *o,
            StepDef::NodeMap(doc) => {
                for (ri, line) in doc.lines().enumerate() {
                    for (ci, c) in line.chars().enumerate() {
                        if c.is_ascii_lowercase() || c.is_ascii_digit() {
                            let p = offset(ci as f64 * 0.5 * w.grid_m, ri as f64 * w.grid_m);
                            if w.map.positions.insert(c, p).is_some() {
                                return Err(format!("'{c}' drawn twice"));
                            }
                        }
                    }
                }
            }
            StepDef::NodeLocations(t) => {
                for r in t.hashes() {
                    let c = r["node"].chars().next().ok_or("a node without a name")?;
                    let lon: f64 = r["lon"].parse().map_err(|_| "bad lon")?;
                    let lat: f64 = r["lat"].parse().map_err(|_| "bad lat")?;
                    let m = scenario_support::METRES_PER_DEGREE;
                    let dx = (lon - w.origin[0]) * m * w.origin[1].to_radians().cos();
                    let dy = -(lat - w.origin[1]) * m;
                    w.map.positions.insert(c, offset(dx, dy));
                }
            }
            StepDef::Nodes(t) => {
                for r in t.hashes() {
                    let c = r["node"].chars().next().ok_or("a node without a name")?;
                    let tags: Tags = r
                        .iter()
                        .filter(|(k, v)| *k != "node" && *k != "id" && !v.is_empty())
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    w.map.nodes.push((c, tags));
                }
            }
            StepDef::Ways(t) => {
                for r in t.hashes() {
                    let nodes = r.get("nodes").cloned().unwrap_or_default();
                    let mut tags = way_tags(&r, &nodes);
                    if family == "guidance" || w.profile == "car" {
                        ride_car_map(&mut tags);
                    }
                    w.map.ways.push((nodes, tags));
                }
            }
            StepDef::Relations(t) => {
                for r in t.hashes() {
                    let mut tags = Tags::new();
                    let mut members = Tags::new();
                    for (k, v) in &r {
                        if v.is_empty() {
                            continue;
                        }
                        if let Some(role) = k.strip_prefix("node").or(k.strip_prefix("way")) {
                            let role = role.trim_start_matches(':');
                            for m in v.split(',').map(str::trim) {
                                // OSRM's harness finds a way by its letters either way round.
                                let back: String = m.chars().rev().collect();
                                let known = |k: &str| w.map.ways.iter().any(|(n, _)| n == k);
                                let m = if m.len() > 1 && !known(m) && known(&back) {
                                    back
                                } else {
                                    m.to_string()
                                };
                                members.push((role.to_string(), m));
                            }
                        } else if k.starts_with("relation") {
                            return Err("a relation of relations".into());
                        } else {
                            tags.push((k.clone(), v.clone()));
                        }
                    }
                    w.map.relations.push((tags, members));
                }
            }
            StepDef::Shortcuts(t) => {
                for r in t.hashes() {
                    w.shortcuts.insert(r["key"].clone(), r["value"].clone());
                }
            }
            _ => {}
        }
    }
    Ok(w)
}

/// Whether the scenario's restrictions bind a bicycle as they bind OSRM's car: plain
/// `restriction` relations, no `except` naming either (`except=motorcar` binds the bicycle only).
fn restrictions_bind_bicycles(map: &Map) -> Result<(), String> {
    for (tags, _) in &map.relations {
        for (k, v) in tags {
            if k.starts_with("restriction:") {
                return Err(format!("{k} binds one vehicle"));
            }
            let either = ["bicycle", "motorcar", "motor_vehicle", "vehicle"];
            if k == "except" && v.split(';').any(|x| either.contains(&x.trim())) {
                return Err(format!("except={v}"));
            }
        }
    }
    Ok(())
}

/// OSRM's restriction maps force a path with one-way arms; a bicycle may walk against one, which
/// the car may not, so there walking one is forbidden too (`foot=no`), and what is measured is
/// the restriction.
fn oneways_bind_walking(map: &mut Map) {
    for (_, tags) in &mut map.ways {
        if tags
            .iter()
            .any(|(k, v)| k == "oneway" && matches!(v.as_str(), "yes" | "-1" | "1" | "true"))
        {
            tags.push(("foot".into(), "no".into()));
        }
    }
}

fn compare(row: &BTreeMap<String, String>, got: Option<&Heard>, modes: bool) -> Result<(), String> {
    let want_route = row.get("route").cloned().unwrap_or_default();
    let Some(got) = got else {
        return if want_route.is_empty() {
            Ok(())
        } else {
            Err(format!("no route; want {want_route}"))
        };
    };
    if want_route.is_empty() && row.contains_key("route") {
        return Err(format!("want no route; got {}", got.names.join(",")));
    }
    let mut diffs = vec![];
    // The spec names the road taken on the step after a roundabout's, so the roundabout step's own
    // name (the ring's) is not compared with OSRM's (the exit road's).
    let want_names = split_list(&want_route);
    let same_names = want_names.len() == got.names.len()
        && want_names
            .iter()
            .zip(&got.names)
            .zip(&got.turns)
            .all(|((w, h), t)| w == h || t.starts_with("roundabout"));
    if row.contains_key("route") && !same_names {
        diffs.push(format!(
            "route: want {want_route} | got {}",
            got.names.join(",")
        ));
    }
    if let Some(want) = row.get("turns").filter(|t| !t.is_empty()) {
        let w: Vec<String> = split_list(want).iter().map(|t| direction(t)).collect();
        let h: Vec<String> = got.turns.iter().map(|t| direction(t)).collect();
        // OSRM's `roundabout-exit-undefined` (a start on the ring) names no direction and no exit:
        // any maneuver there matches it (ours turns off the ring at the exit).
        let same = w.len() == h.len()
            && w.iter().zip(&h).all(|(a, b)| {
                a == b || (a == "roundabout undefined" && b != "depart" && b != "arrive")
            });
        if !same {
            diffs.push(format!("turns: want {want} | got {}", got.turns.join(",")));
        }
    }
    if modes && let Some(want) = row.get("modes").filter(|t| !t.is_empty()) {
        let w: Vec<String> = split_list(want)
            .into_iter()
            .map(|m| {
                if m == "pushing bike" {
                    "pushing".into()
                } else {
                    m
                }
            })
            .collect();
        if w != got.modes {
            diffs.push(format!("modes: want {want} | got {}", got.modes.join(",")));
        }
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        diffs.push(format!("{:.0} m", got.metres));
        Err(diffs.join("; "))
    }
}

fn waypoint_position(w: &World, name: &str) -> Result<[f64; 2], String> {
    let c = name.trim().chars().next().ok_or("an empty waypoint")?;
    w.map
        .positions
        .get(&c)
        .copied()
        .ok_or_else(|| format!("waypoint '{c}' is not on the map"))
}

fn run_routes(w: &World, city: &City, t: &Table, modes: bool, out: &mut Outcome) {
    let Outcome::Ran(passed, run, fails) = out else {
        return;
    };
    for row in t.hashes() {
        if row_left_out(&row).is_some() {
            continue;
        }
        let waypoints: Result<Vec<[f64; 2]>, String> = if let Some(wp) = row.get("waypoints") {
            wp.split(|c: char| c == ',' || c.is_whitespace())
                .filter(|s| !s.is_empty())
                .map(|s| waypoint_position(w, s))
                .collect()
        } else {
            [row.get("from"), row.get("to")]
                .into_iter()
                .map(|s| waypoint_position(w, s.map_or("", |s| s.as_str())))
                .collect()
        };
        *run += 1;
        let label = row
            .get("waypoints")
            .cloned()
            .unwrap_or_else(|| format!("{},{}", row["from"], row["to"]));
        let outcome = waypoints.and_then(|wps| {
            let got = route(city, &wps, Mode::Direct).unwrap_or(None);
            compare(&row, got.as_ref(), modes)
        });
        match outcome {
            Ok(()) => *passed += 1,
            Err(e) => fails.push(format!("{label}: {e}")),
        }
    }
}

/// A routability row: a way of its own (five nodes a grid apart), ridden from its second node to
/// its fourth (`forw`) and back (`backw`), as OSRM's harness does.
fn run_routability(w: &World, t: &Table, tmp: &Path, key: &str, out: &mut Outcome) {
    let Outcome::Ran(passed, run, fails) = out else {
        return;
    };
    for (ri, row) in t.hashes().into_iter().enumerate() {
        let mut map = new_map();
        let letters = ['a', 'b', 'c', 'd', 'e'];
        for (i, &c) in letters.iter().enumerate() {
            map.positions.insert(c, offset(i as f64 * w.grid_m, 0.0));
        }
        let mut tags: BTreeMap<String, String> = BTreeMap::new();
        tags.insert("highway".into(), "primary".into());
        let mut node_tags = Tags::new();
        for (k, v) in &row {
            if k.starts_with("forw") || k.starts_with("backw") || k.starts_with("bothw") {
                continue;
            }
            if k.is_empty() || k.starts_with('#') {
                continue; // a comment column
            }
            if v.is_empty() {
                continue;
            }
            if let Some(nk) = k.strip_prefix("node/") {
                if v != "(nil)" {
                    node_tags.push((nk.to_string(), v.clone()));
                }
            } else if v == "(nil)" {
                tags.remove(k);
            } else {
                tags.insert(k.clone(), v.clone());
            }
        }
        tags.insert("name".into(), format!("w{ri}"));
        let mut tags: Tags = tags.into_iter().collect();
        if w.profile == "car" {
            ride_car_map(&mut tags);
        }
        map.ways.push(("abcde".into(), tags));
        map.nodes.push(('c', node_tags));
        let city = build_city(&map, &format!("{key}-{ri}"), tmp);
        for dir in ["forw", "backw", "bothw"] {
            let Some(want) = row.get(dir) else { continue };
            let want = w.shortcuts.get(want).cloned().unwrap_or(want.clone());
            let dirs: &[bool] = match dir {
                "forw" => &[true],
                "backw" => &[false],
                _ => &[true, false],
            };
            for &forward in dirs {
                *run += 1;
                let (a, b) = (map.positions[&'b'], map.positions[&'d']);
                let got = match &city {
                    Ok(city) => route(city, &if forward { [a, b] } else { [b, a] }, Mode::Direct)
                        .unwrap_or(None)
                        .filter(|h| h.names.first().is_some_and(|n| *n == format!("w{ri}"))),
                    Err(_) => None,
                };
                let mode = got.as_ref().map(|h| h.modes[0].clone());
                let ok = match want.as_str() {
                    "" => mode.is_none(),
                    "x" => mode.is_some(),
                    s if s.ends_with("km/h") || s.ends_with(" s") || s.contains("km/h") => {
                        mode.is_some()
                    }
                    "pushing bike" => mode.as_deref() == Some("pushing"),
                    m => mode.as_deref() == Some(m),
                };
                if ok {
                    *passed += 1;
                } else {
                    let tags: Vec<String> = row
                        .iter()
                        .filter(|(k, v)| !v.is_empty() && !k.starts_with("forw"))
                        .filter(|(k, _)| !k.starts_with("backw") && !k.starts_with("bothw"))
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect();
                    fails.push(format!(
                        "{} {}: want '{want}' | got '{}'",
                        tags.join(" "),
                        if forward { "forward" } else { "backward" },
                        mode.unwrap_or_default()
                    ));
                }
            }
        }
    }
}

fn run_scenario(f: &Feature, sc: &ScenarioDef, tmp: &Path) -> Outcome {
    // As OSRM's own CH run (cucumber.js): not @todo, @stress or @mld.
    if let Some(t) = sc
        .tags
        .iter()
        .find(|t| ["@todo", "@stress", "@mld"].contains(&t.as_str()))
    {
        return Outcome::LeftOut(format!("OSRM's own {t}"));
    }
    let steps: Vec<StepDef> = f.background.iter().chain(&sc.steps).cloned().collect();
    if let Some(StepDef::Unsupported(s)) =
        steps.iter().find(|s| matches!(s, StepDef::Unsupported(_)))
    {
        return Outcome::LeftOut(format!("needs '{s}'"));
    }
    let has_tests = steps
        .iter()
        .any(|s| matches!(s, StepDef::Route(_) | StepDef::Routability(_)));
    if !has_tests {
        return Outcome::LeftOut("no routes".into());
    }
    let mut w = match build_world(&steps, f.family) {
        Ok(w) => w,
        Err(e) => return Outcome::LeftOut(e),
    };
    if f.family == "restrictions"
        && let Err(e) = restrictions_bind_bicycles(&w.map)
    {
        return Outcome::LeftOut(e);
    }
    if f.family == "restrictions" || w.profile == "car" {
        oneways_bind_walking(&mut w.map);
    }
    let key = format!("{}-{}", f.file.replace(['/', '.'], "-"), sc.line);
    let mut out = Outcome::Ran(0, 0, vec![]);
    let needs_map = steps.iter().any(|s| matches!(s, StepDef::Route(_)));
    let city = if needs_map {
        Some(build_city(&w.map, &key, tmp))
    } else {
        None
    };
    for s in &steps {
        match s {
            StepDef::Route(t) => match &city {
                Some(Ok(city)) => run_routes(&w, city, t, f.family == "bicycle", &mut out),
                Some(Err(e)) => {
                    if let Outcome::Ran(_, run, fails) = &mut out {
                        *run += t.rows.len();
                        fails.push(format!("the map does not build: {e}"));
                    }
                }
                None => {}
            },
            StepDef::Routability(t) => run_routability(&w, t, tmp, &key, &mut out),
            _ => {}
        }
    }
    if let Outcome::Ran(_, 0, _) = out {
        return Outcome::LeftOut("no row a bicycle router is asked".into());
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "--verbose");
    let filter: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = root.join("test/fixtures/osrm-features");
    let mut files: Vec<(&'static str, PathBuf)> = vec![];
    for (family, sub) in [("bicycle", "bicycle"), ("guidance", "guidance")] {
        let mut fs: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "feature"))
            .collect();
        fs.sort();
        files.extend(fs.into_iter().map(|p| (family, p)));
    }
    files.push(("restrictions", dir.join("car/restrictions.feature")));
    let tmp = std::env::temp_dir().join(format!("qw-osrm-features-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();

    let mut counts: BTreeMap<&str, Count> = BTreeMap::new();
    let mut per_file: BTreeMap<String, Count> = BTreeMap::new();
    let mut left_out: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures: Vec<String> = vec![];
    for (family, path) in &files {
        let rel = path
            .strip_prefix(&dir)
            .unwrap()
            .to_string_lossy()
            .to_string();
        if !filter.is_empty() && !filter.iter().any(|f| rel.contains(f.as_str())) {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let feature = parse_feature(family, rel.clone(), &text);
        for sc in &feature.scenarios {
            match run_scenario(&feature, sc, &tmp) {
                Outcome::LeftOut(why) => {
                    *left_out.entry(family).or_default() += 1;
                    if verbose {
                        println!("left out {rel}:{} {}: {why}", sc.line, sc.name);
                    }
                }
                Outcome::Ran(passed, run, fails) => {
                    for c in [
                        counts.entry(family).or_default(),
                        per_file.entry(rel.clone()).or_default(),
                    ] {
                        c.scenarios += 1;
                        c.passed += usize::from(fails.is_empty());
                        c.rows += run;
                        c.rows_passed += passed;
                    }
                    if !fails.is_empty() {
                        failures.push(format!(
                            "{rel}:{} {}\n      {}",
                            sc.line,
                            sc.name,
                            fails.join("\n      ")
                        ));
                    }
                }
            }
        }
    }
    if std::env::var_os("QW_KEEP_SCENARIOS").is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }

    if verbose {
        println!("\nFailing scenarios:");
        for f in &failures {
            println!("  {f}");
        }
    }
    println!("\nOSRM v6.0.0 scenarios by file (scenarios passed / run):");
    for (file, c) in &per_file {
        println!("  {file:<52} {:>3} / {:<3}", c.passed, c.scenarios);
    }
    println!("\nfamily          scenarios passed      rows passed    left out");
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    let mut json = serde_json::Map::new();
    for (family, c) in &counts {
        println!(
            "{family:<15} {:>4} / {:<4} {:>5.1} %   {:>4} / {:<4}  {:>4}",
            c.passed,
            c.scenarios,
            pct(c.passed, c.scenarios),
            c.rows_passed,
            c.rows,
            left_out.get(family).copied().unwrap_or(0)
        );
        json.insert(
            family.to_string(),
            serde_json::json!({
                "scenarios": c.scenarios,
                "passed": c.passed,
                "rate": (pct(c.passed, c.scenarios) * 10.0).round() / 10.0,
                "rows": c.rows,
                "rows_passed": c.rows_passed,
                "left_out": left_out.get(family).copied().unwrap_or(0),
            }),
        );
    }
    if !filter.is_empty() {
        return;
    }
    let results = root.join("bench/results");
    let _ = std::fs::create_dir_all(&results);
    let _ = std::fs::write(
        results.join("osrm-features.json"),
        serde_json::to_string_pretty(&serde_json::Value::Object(json)).unwrap(),
    );
    // Each family's floor: the suite fails when a change makes fewer of OSRM's scenarios pass.
    let floors: BTreeMap<String, f64> = std::fs::read_to_string(dir.join("floors.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let mut fell = false;
    for (family, floor) in &floors {
        let c = counts.get(family.as_str()).copied().unwrap_or_default();
        let rate = pct(c.passed, c.scenarios);
        if rate + 1e-9 < *floor {
            println!("{family}: {rate:.1} % of scenarios pass, below its floor of {floor} %");
            fell = true;
        }
    }
    if fell {
        std::process::exit(1);
    }
}
