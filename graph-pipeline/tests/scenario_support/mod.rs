//! What the scenario suite and the OSRM feature harness share: a hand-drawn map written as an OSM
//! file, built with the real pipeline, loaded into the real engine, and a route's steps read as a
//! rider hears them (names, turns, modes).

// Each test crate that includes the module uses part of it.
#![allow(dead_code)]

use quietway_engine::city::{City, Profile, RouteRequest};
use quietway_engine::graph::{CoverageArea, way_flags};
use quietway_engine::guidance::{Step, StepKind};
use quietway_graph_pipeline::build::{BuildInput, build};
use quietway_graph_pipeline::city::load_cities;
use quietway_graph_pipeline::progress::Progress;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Where the maps are drawn: a corner of Manhattan (any place works; the coverage is the map's own).
pub const ORIGIN: [f64; 2] = [-73.99, 40.73];
pub const METRES_PER_DEGREE: f64 = 111_320.0;

/// `[lon, lat]` of a point `dx` metres east and `dy` metres south of the origin.
pub fn offset(dx: f64, dy: f64) -> [f64; 2] {
    [
        ORIGIN[0] + dx / (METRES_PER_DEGREE * ORIGIN[1].to_radians().cos()),
        ORIGIN[1] - dy / METRES_PER_DEGREE,
    ]
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    Direct,
    SuperSafe,
    Walking,
}

pub type Tags = Vec<(String, String)>;

/// A drawn map: letters are OSM nodes, digits are waypoints that are no node.
#[derive(Default)]
pub struct Map {
    pub city: String,
    pub min_island_nodes: usize,
    pub positions: BTreeMap<char, [f64; 2]>,
    /// The letters a way runs through, and its tags.
    pub ways: Vec<(String, Tags)>,
    pub nodes: Vec<(char, Tags)>,
    /// Tags, then members as (role, way letters or node letter).
    pub relations: Vec<(Tags, Tags)>,
}

/// A route's steps as a rider hears them, one entry per step (arrive included).
pub struct Heard {
    pub names: Vec<String>,
    pub turns: Vec<String>,
    pub modes: Vec<String>,
    pub metres: f64,
}

/// Writes the map as an OSM XML file: letters become nodes, ways and relations get ids in the
/// order written.
pub fn to_osm(map: &Map) -> Result<String, String> {
    let node_id = |c: char| -> Result<i64, String> {
        map.positions
            .keys()
            .position(|&k| k == c)
            .map(|p| p as i64 + 1)
            .ok_or_else(|| format!("node '{c}' is not on the map"))
    };
    let way_id = |key: &str| -> Result<i64, String> {
        map.ways
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
    for (&c, p) in &map.positions {
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
        for (n, tags) in &map.nodes {
            if *n == c {
                for (k, v) in tags {
                    write!(x, "<tag k=\"{}\" v=\"{}\"/>", esc(k), esc(v)).unwrap();
                }
            }
        }
        x.push_str("</node>\n");
    }
    for (key, tags) in &map.ways {
        write!(x, "<way id=\"{}\" version=\"1\">", way_id(key)?).unwrap();
        for c in key.chars() {
            write!(x, "<nd ref=\"{}\"/>", node_id(c)?).unwrap();
        }
        for (k, v) in tags {
            write!(x, "<tag k=\"{}\" v=\"{}\"/>", esc(k), esc(v)).unwrap();
        }
        x.push_str("</way>\n");
    }
    for (i, (tags, members)) in map.relations.iter().enumerate() {
        write!(x, "<relation id=\"{}\" version=\"1\">", 1001 + i).unwrap();
        for (role, m) in members {
            if m.chars().count() == 1 {
                let c = m.chars().next().unwrap();
                write!(
                    x,
                    "<member type=\"node\" ref=\"{}\" role=\"{}\"/>",
                    node_id(c)?,
                    esc(role)
                )
                .unwrap();
            } else {
                write!(
                    x,
                    "<member type=\"way\" ref=\"{}\" role=\"{}\"/>",
                    way_id(m)?,
                    esc(role)
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

/// Builds the map with the pipeline and loads it into the engine.
pub fn build_city(map: &Map, name: &str, dir: &Path) -> Result<City, String> {
    let file = dir.join(format!("{name}.osm"));
    std::fs::write(&file, to_osm(map)?).map_err(|e| e.to_string())?;
    let cities = load_cities(None)?;
    let config = cities
        .get(&map.city)
        .cloned()
        .ok_or_else(|| format!("unknown city {}", map.city))?;
    // The coverage is the map's own box, a kilometre round it.
    let (mut w, mut s, mut e, mut n) = (180.0f64, 90.0f64, -180.0f64, -90.0f64);
    for p in map.positions.values() {
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
        city_id: map.city.clone(),
        city: config,
        osm: vec![file],
        dem: None,
        areas: vec![CoverageArea {
            name: "scenario".into(),
            polygons: vec![vec![ring]],
        }],
        sources: vec![],
        min_component_nodes: map.min_island_nodes,
    };
    let (graph, _) = build(&input, &Progress::new(true))?;
    City::from_graph(graph, "scenario".into(), None)
}

/// A step's maneuver in the suite's words: `depart`, `turn left`, `roundabout exit 2`, …
pub fn turn_of(s: &Step) -> String {
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

/// The steps of the route through `waypoints`, or `None` when there is no route.
pub fn route(city: &City, waypoints: &[[f64; 2]], mode: Mode) -> Result<Option<Heard>, String> {
    let profile = if mode == Mode::Walking {
        Profile::Walking
    } else {
        Profile::Cycling
    };
    let req = RouteRequest {
        waypoints: waypoints.to_vec(),
        profile,
        supersafe: mode == Mode::SuperSafe,
        night: false,
        bearing: None,
        departure: None,
    };
    let Some(route) = city.route(&req).map_err(|e| format!("{e:?}"))? else {
        return Ok(None);
    };
    let g = &city.graph;
    let mut heard = Heard {
        names: vec![],
        turns: vec![],
        modes: vec![],
        metres: 0.0,
    };
    for (i, leg) in route.legs.iter().enumerate() {
        let w = &route.waypoints[i];
        let (steps, _) = city.guidance(leg, [w.lon, w.lat], profile, false);
        for s in &steps {
            heard.metres += s.distance_m;
            heard.names.push(s.name.clone());
            heard.turns.push(turn_of(s));
            let ferry = s
                .arcs
                .iter()
                .any(|&a| g.way_flags[g.arc_way(a) as usize] & way_flags::FERRY != 0);
            // Arriving is no change of mode: the arrive step keeps the mode it arrives in.
            if s.kind == StepKind::Arrive {
                let last = heard.modes.last().cloned().unwrap_or_default();
                heard.modes.push(last);
                continue;
            }
            heard.modes.push(
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
    Ok(Some(heard))
}
