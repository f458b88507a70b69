//! Guidance on small hand-drawn maps: a few named nodes placed in metres, ways through them, a leg
//! along them, and the steps a rider should hear. One test (or a few) per pass.

use super::{Step, StepKind};
use crate::city::{ArcPiece, City, Leg, Profile};
use crate::graph::{
    ArcAttrs, BikeAccess, CityGraph, CityInfo, NodeId, SafetyClass, StringTableBuilder, to_fixed,
    way_flags,
};
use std::collections::HashMap;

const LAT0: f64 = 40.75;
const LON0: f64 = -73.99;
const M_PER_DEG: f64 = 111_195.0;

#[derive(Clone, Copy)]
struct WayOpts {
    oneway: bool,
    ring: bool,
    bike: BikeAccess,
    /// `highway=service`.
    service: bool,
}

const ROAD: WayOpts = WayOpts {
    oneway: false,
    ring: false,
    bike: BikeAccess::Ride,
    service: false,
};

struct Map {
    g: CityGraph,
    strings: StringTableBuilder,
    nodes: HashMap<&'static str, NodeId>,
}

impl Map {
    fn new() -> Map {
        Map {
            g: CityGraph {
                city: Some(CityInfo {
                    id: "test".into(),
                    name: "Test".into(),
                    timezone: "America/New_York".into(),
                    has_lighting_data: false,
                    elevation_known: false,
                    areas: vec![],
                    drives_on_left: false,
                    sources: vec![],
                }),
                edge_geom_first: vec![0],
                route_set_first: vec![0, 0],
                ..Default::default()
            },
            strings: StringTableBuilder::new(),
            nodes: HashMap::new(),
        }
    }

    /// A node `x` metres east and `y` metres north of the map's origin.
    fn node(&mut self, name: &'static str, x: f64, y: f64) -> &mut Self {
        let g = &mut self.g;
        let lat = LAT0 + y / M_PER_DEG;
        let lon = LON0 + x / (M_PER_DEG * LAT0.to_radians().cos());
        self.nodes.insert(name, g.node_lon.len() as NodeId);
        g.node_lon.push(to_fixed(lon));
        g.node_lat.push(to_fixed(lat));
        g.node_elevation.push(f32::NAN);
        g.node_osm_id.push(g.node_osm_id.len() as i64 + 1);
        g.node_control.push(0);
        self
    }

    fn way(&mut self, name: &str, nodes: &[&str]) -> &mut Self {
        self.way_with(name, nodes, ROAD)
    }

    fn way_with(&mut self, name: &str, nodes: &[&str], o: WayOpts) -> &mut Self {
        let w = self.g.way_osm_id.len() as u32;
        let name_id = self.strings.intern(name);
        let g = &mut self.g;
        g.way_osm_id.push(w as i64 + 1);
        g.way_name.push(name_id);
        g.way_ref.push(0);
        let ring = if o.ring { way_flags::ROUNDABOUT } else { 0 };
        let service = if o.service { way_flags::SERVICE } else { 0 };
        g.way_flags.push(ring | service);
        g.way_route_set.push(0);
        for pair in nodes.windows(2) {
            let (t, h) = (self.nodes[pair[0]], self.nodes[pair[1]]);
            let (a, b) = (g.node_lon_lat(t), g.node_lon_lat(h));
            let len = crate::geo::haversine_m(
                crate::geo::LonLat::new(a[0], a[1]),
                crate::geo::LonLat::new(b[0], b[1]),
            );
            g.edge_tail.push(t);
            g.edge_head.push(h);
            g.edge_way.push(w);
            g.edge_length_m.push(len as f32);
            g.edge_climb_fwd_m.push(0.0);
            g.edge_climb_bwd_m.push(0.0);
            g.edge_bearing_start.push(0);
            g.edge_bearing_end.push(0);
            g.edge_geom_first.push(g.geom_lon.len() as u32);
            let fwd = ArcAttrs::new(SafetyClass::Quiet, o.bike, true);
            let back = if o.oneway || o.ring {
                ArcAttrs::new(SafetyClass::Quiet, BikeAccess::No, true)
            } else {
                fwd
            };
            g.arc_attrs.push(fwd);
            g.arc_attrs.push(back);
        }
        self
    }

    fn city(mut self) -> (City, HashMap<&'static str, NodeId>) {
        self.g.string_first = self.strings.first.clone();
        self.g.string_bytes = self.strings.bytes.clone();
        let city = City::from_graph(self.g, "test".into(), None).expect("a valid map");
        (city, self.nodes)
    }
}

/// The arc from `a` to `b`.
fn arc(city: &City, nodes: &HashMap<&str, NodeId>, a: &str, b: &str) -> u32 {
    let g = &city.graph;
    let (a, b) = (nodes[a], nodes[b]);
    (0..g.edge_count() as u32)
        .find_map(|e| {
            if g.edge_tail[e as usize] == a && g.edge_head[e as usize] == b {
                Some(2 * e)
            } else if g.edge_head[e as usize] == a && g.edge_tail[e as usize] == b {
                Some(2 * e + 1)
            } else {
                None
            }
        })
        .unwrap_or_else(|| panic!("no edge between the nodes"))
}

/// A leg through the named nodes; the first and last arcs ridden from `start` and to `end` (0–1).
fn leg_partial(
    city: &City,
    nodes: &HashMap<&str, NodeId>,
    path: &[&str],
    start: f64,
    end: f64,
) -> Leg {
    let n = path.len() - 1;
    let pieces = (0..n)
        .map(|i| ArcPiece {
            arc: arc(city, nodes, path[i], path[i + 1]),
            from: if i == 0 { start } else { 0.0 },
            to: if i + 1 == n { end } else { 1.0 },
        })
        .collect();
    Leg {
        pieces,
        weight: 0,
        snap_extra: 0,
        turn_backs_priced: 0,
    }
}

fn guide(city: &City, leg: &Leg, profile: Profile) -> Vec<Step> {
    let g = &city.graph;
    let first = leg.pieces[0];
    let mut pts = Vec::new();
    city.piece_geometry(&first, &mut pts);
    let _ = g;
    city.guidance(leg, pts[0], profile, false).0
}

fn ride(city: &City, nodes: &HashMap<&str, NodeId>, path: &[&str]) -> Vec<Step> {
    guide(
        city,
        &leg_partial(city, nodes, path, 0.0, 1.0),
        Profile::Cycling,
    )
}

/// Steps as `kind modifier name` lines, for readable assertions.
fn said(steps: &[Step]) -> Vec<String> {
    steps
        .iter()
        .map(|s| {
            let mut t = s.kind.name().to_string();
            if let Some(m) = s.modifier {
                t.push(' ');
                t.push_str(m);
            }
            if let Some(e) = s.exit {
                t.push_str(&format!(" exit {e}"));
            }
            t.push_str(": ");
            t.push_str(&s.name);
            t
        })
        .collect()
}

fn check_distances(steps: &[Step]) {
    for s in &steps[..steps.len() - 1] {
        assert!(
            s.distance_m > 0.5,
            "a step of {} m: {:?}",
            s.distance_m,
            said(steps)
        );
    }
}

#[test]
fn a_bend_and_a_split_way_on_the_same_road_are_one_step() {
    let mut m = Map::new();
    m.node("a", 0.0, 0.0)
        .node("b", 0.0, 100.0)
        .node("c", 0.0, 200.0)
        .node("d", -60.0, 240.0)
        .node("s", 80.0, 200.0);
    // Main Street is two OSM ways; it bends left at c, where Side Street leaves to the right.
    m.way("Main Street", &["a", "b"])
        .way("Main Street", &["b", "c", "d"])
        .way("Side Street", &["c", "s"]);
    let (city, n) = m.city();
    let steps = ride(&city, &n, &["a", "b", "c", "d"]);
    assert_eq!(said(&steps), ["depart: Main Street", "arrive: Main Street"]);
}

#[test]
fn a_road_that_turns_where_another_goes_straight_on_is_a_turn() {
    let mut m = Map::new();
    m.node("a", 0.0, 0.0)
        .node("b", 0.0, 100.0)
        .node("c", -100.0, 100.0)
        .node("n", 0.0, 200.0);
    m.way("Main Street", &["a", "b", "c"])
        .way("Park Avenue", &["b", "n"]);
    let (city, n) = m.city();
    let steps = ride(&city, &n, &["a", "b", "c"]);
    // A real maneuver on the road already ridden: a `Continue` with its direction, worded "Turn
    // left to stay on Main Street", never "turn onto" it.
    assert_eq!(
        said(&steps),
        [
            "depart: Main Street",
            "continue left: Main Street",
            "arrive: Main Street"
        ]
    );
    let v = route_value(&steps, Profile::Cycling);
    assert_eq!(
        v["steps"][1]["maneuver"]["instruction"],
        "Turn left to stay on Main Street"
    );
    assert_eq!(v["steps"][1]["maneuver"]["type"], "Continue");
    assert_eq!(v["steps"][1]["maneuver"]["modifier"], "left");
    let cue = v["steps"][0]["voice_instructions"]
        .as_array()
        .and_then(|c| c.last())
        .expect("a cue");
    assert_eq!(cue["announcement"], "Turn left to stay on Main Street");
}

#[test]
fn a_short_unnamed_link_folds_into_the_turn_it_serves() {
    let mut m = Map::new();
    // First Avenue north; a 10 m unnamed slip east at b; Second Street on east from c.
    m.node("a", 0.0, 0.0)
        .node("b", 0.0, 100.0)
        .node("n", 0.0, 200.0)
        .node("c", 7.0, 107.0)
        .node("d", 107.0, 107.0);
    m.way("First Avenue", &["a", "b", "n"])
        .way("", &["b", "c"])
        .way("Second Street", &["c", "d"]);
    let (city, n) = m.city();
    let steps = ride(&city, &n, &["a", "b", "c", "d"]);
    assert_eq!(
        said(&steps),
        [
            "depart: First Avenue",
            "turn right: Second Street",
            "arrive: Second Street"
        ]
    );
    // The maneuver is where the link begins, and the step carries the link.
    assert!((steps[1].distance_m - 110.0).abs() < 2.0);
    check_distances(&steps);
}

#[test]
fn crossings_jogs_opening_stretches_and_unnamed_paths_are_not_steps_of_their_own() {
    let mut m = Map::new();
    // Oak Street runs north to b; a 25 m unnamed crossing bears right across a wide road to c;
    // Pine Street bears left from c and on north to d; from d an unnamed path straight on to e.
    m.node("o", 0.0, -8.0)
        .node("a", 0.0, 0.0)
        .node("b", 0.0, 100.0)
        .node("c", 15.0, 120.0)
        .node("d", 15.0, 220.0)
        .node("e", 15.0, 420.0)
        .node("w", -100.0, 0.0)
        .node("x", 100.0, 110.0)
        .node("y", -100.0, 110.0)
        .node("z", 100.0, 220.0);
    m.way("Mill Road", &["w", "a"])
        .way("Oak Street", &["o", "a", "b"])
        .way("Wide Road", &["y", "b", "x"])
        .way("", &["b", "c"])
        .way("Pine Street", &["c", "d"])
        .way("Cross Street", &["d", "z"])
        .way("", &["d", "e"]);
    let (city, n) = m.city();
    // Starting 4 m before the corner on Mill Road (no 4 m opening step), across the road by the
    // crossing (one maneuver, read from Oak Street to Pine Street: straight on), then straight on
    // along the path (no bare "continue").
    let leg = leg_partial(&city, &n, &["w", "a", "b", "c", "d", "e"], 0.96, 1.0);
    let steps = guide(&city, &leg, Profile::Cycling);
    assert_eq!(
        said(&steps),
        [
            "depart: Oak Street",
            "continue straight: Pine Street",
            "arrive: Pine Street"
        ],
        "{:?}",
        steps.iter().map(|s| s.distance_m).collect::<Vec<_>>()
    );
    // Starting 8 m before the corner, the corner is a turn the rider must hear (as OSRM says it).
    let leg = leg_partial(&city, &n, &["w", "a", "b", "c", "d", "e"], 0.92, 1.0);
    let steps = guide(&city, &leg, Profile::Cycling);
    assert_eq!(
        said(&steps),
        [
            "depart: Mill Road",
            "turn left: Oak Street",
            "continue straight: Pine Street",
            "arrive: Pine Street"
        ]
    );
    check_distances(&steps);
}

#[test]
fn a_staggered_junction_is_ridden_straight_on() {
    let mut m = Map::new();
    // Elm Street jogs 10 m east along Cross Street and goes on north.
    m.node("a", 0.0, 0.0)
        .node("b", 0.0, 100.0)
        .node("c", 10.0, 100.0)
        .node("d", 10.0, 200.0)
        .node("w", -100.0, 100.0)
        .node("e", 110.0, 100.0)
        .node("s", 10.0, 0.0);
    m.way("Elm Street", &["a", "b"])
        .way("Cross Street", &["w", "b", "c", "e"])
        .way("Elm Street", &["s", "c", "d"]);
    let (city, n) = m.city();
    let steps = ride(&city, &n, &["a", "b", "c", "d"]);
    assert_eq!(said(&steps), ["depart: Elm Street", "arrive: Elm Street"]);
}

#[test]
fn u_turns_only_where_the_rider_turns_back() {
    let mut m = Map::new();
    // Broadway's two carriageways joined by a short unnamed crossing; Hill Road leaves at a 170°.
    m.node("a", 0.0, 0.0)
        .node("b", 0.0, 100.0)
        .node("c", -12.0, 100.0)
        .node("d", -12.0, 0.0)
        .node("n", 0.0, 200.0)
        .node("h", -20.0, 0.0)
        .node("x", 0.0, 300.0);
    m.way_with(
        "Broadway",
        &["a", "b", "n"],
        WayOpts {
            oneway: true,
            ..ROAD
        },
    )
    .way("", &["b", "c"])
    .way_with(
        "Broadway",
        &["c", "d"],
        WayOpts {
            oneway: true,
            ..ROAD
        },
    )
    .way("Hill Road", &["n", "h"])
    .way("Top Road", &["n", "x"]);
    let (city, n) = m.city();
    // Over the crossing onto the other carriageway of the same road: a real U-turn.
    let steps = ride(&city, &n, &["a", "b", "c", "d"]);
    assert_eq!(
        said(&steps),
        [
            "depart: Broadway",
            "uturn uturn: Broadway",
            "arrive: Broadway"
        ]
    );
    // Doubling back onto another road: a sharp turn, not a U-turn.
    let steps = ride(&city, &n, &["a", "b", "n", "h"]);
    assert_eq!(
        said(&steps),
        [
            "depart: Broadway",
            "turn sharp left: Hill Road",
            "arrive: Hill Road"
        ]
    );
    // Back along the arc ridden: a U-turn whatever the angle.
    let steps = ride(&city, &n, &["x", "n", "x"]);
    assert_eq!(
        said(&steps),
        [
            "depart: Top Road",
            "uturn uturn: Top Road",
            "arrive: Top Road"
        ]
    );
}

#[test]
fn a_turn_across_a_divided_road_through_its_median_is_one_turn() {
    let mut m = Map::new();
    // Park Row's two one-way carriageways 12 m apart (traffic keeps right: the near one, west, runs
    // south), joined by median openings 25 m and 100 m south of where Centre Street meets the near
    // one from the west.
    m.node("w", -100.0, 0.0)
        .node("n", 0.0, 200.0)
        .node("p", 0.0, 0.0)
        .node("o", 0.0, -25.0)
        .node("t", 0.0, -100.0)
        .node("a", 0.0, -200.0)
        .node("e", 12.0, -200.0)
        .node("u", 12.0, -100.0)
        .node("f", 12.0, -25.0)
        .node("s", 12.0, 200.0);
    let oneway = WayOpts {
        oneway: true,
        ..ROAD
    };
    m.way("Centre Street", &["w", "p"])
        .way_with("Park Row", &["n", "p", "o", "t", "a"], oneway)
        .way_with("Park Row", &["e", "u", "f", "s"], oneway)
        .way("", &["o", "f"])
        .way("", &["t", "u"]);
    let (city, n) = m.city();
    // Right onto the near carriageway, back north through the opening 25 m on: a left turn.
    let steps = ride(&city, &n, &["w", "p", "o", "f", "s"]);
    assert_eq!(
        said(&steps),
        [
            "depart: Centre Street",
            "turn left: Park Row",
            "arrive: Park Row"
        ]
    );
    check_distances(&steps);
    // Through the opening 100 m on: the rider rode Park Row and turns back, a real U-turn.
    let steps = ride(&city, &n, &["w", "p", "o", "t", "u", "f", "s"]);
    assert_eq!(
        said(&steps),
        [
            "depart: Centre Street",
            "turn right: Park Row",
            "uturn uturn: Park Row",
            "arrive: Park Row"
        ]
    );
}

#[test]
fn obvious_name_changes_and_short_name_stretches_are_not_announced() {
    let mut m = Map::new();
    let names = [
        ("a", 0.0),
        ("b", 200.0),
        ("c", 400.0),
        ("d", 430.0),
        ("e", 630.0),
        ("f", 660.0),
        ("g", 860.0),
    ];
    for (k, y) in names {
        m.node(k, 0.0, y);
    }
    for (k, y) in [
        ("bx", 200.0),
        ("cx", 400.0),
        ("dx", 430.0),
        ("ex", 630.0),
        ("fx", 660.0),
    ] {
        m.node(k, 100.0, y);
    }
    m.way("West 4th Street", &["a", "b"])
        .way("East 4th Street", &["b", "c"])
        .way("Short Lane", &["c", "d"])
        .way("East 4th Street", &["d", "e"])
        .way("Brief Row", &["e", "f"])
        .way("Long Road", &["f", "g"]);
    // A side street at every junction, so each is a junction with a choice.
    for (k, x) in [
        ("b", "bx"),
        ("c", "cx"),
        ("d", "dx"),
        ("e", "ex"),
        ("f", "fx"),
    ] {
        m.way("Side", &[k, x]);
    }
    let (city, n) = m.city();
    let steps = ride(&city, &n, &["a", "b", "c", "d", "e", "f", "g"]);
    // West→East 4th is one road; Short Lane (30 m between two stretches of East 4th) is a
    // crossing; Brief Row (30 m, straight on into Long Road) is not worth a step. The departure
    // is named by the variant it starts on, the sign there.
    assert_eq!(
        said(&steps),
        [
            "depart: West 4th Street",
            "continue straight: Long Road",
            "arrive: Long Road"
        ]
    );
}

#[test]
fn a_real_name_change_straight_on_is_a_continue_step() {
    let mut m = Map::new();
    m.node("a", 0.0, 0.0)
        .node("b", 0.0, 200.0)
        .node("c", 0.0, 400.0)
        .node("x", 100.0, 200.0);
    m.way("Main Street", &["a", "b"])
        .way("Oak Street", &["b", "c"])
        .way("Side", &["b", "x"]);
    let (city, n) = m.city();
    let steps = ride(&city, &n, &["a", "b", "c"]);
    assert_eq!(
        said(&steps),
        [
            "depart: Main Street",
            "continue straight: Oak Street",
            "arrive: Oak Street"
        ]
    );
}

#[test]
fn bearings_are_read_over_the_road_not_the_last_metre() {
    let mut m = Map::new();
    // Main Street runs north and its last node sits 1 m east, a metre before the junction.
    m.node("a", 0.0, 0.0)
        .node("b", 0.0, 99.0)
        .node("c", 1.0, 100.0)
        .node("d", 1.0, 300.0)
        .node("x", 100.0, 100.0);
    m.way("Main Street", &["a", "b", "c"])
        .way("Oak Street", &["c", "d"])
        .way("Side", &["c", "x"]);
    let (city, n) = m.city();
    let steps = ride(&city, &n, &["a", "b", "c", "d"]);
    assert_eq!(steps[1].modifier, Some("straight"));
    assert!(
        steps[1].bearing_before < 5.0 || steps[1].bearing_before > 355.0,
        "{}",
        steps[1].bearing_before
    );
}

#[test]
fn a_waypoint_on_a_junction_gives_no_zero_length_step() {
    let mut m = Map::new();
    m.node("a", 0.0, 0.0)
        .node("b", 0.0, 100.0)
        .node("c", 100.0, 100.0)
        .node("d", 100.0, 200.0)
        .node("n", 0.0, 200.0);
    m.way("Main Street", &["a", "b", "n"])
        .way("Oak Street", &["b", "c"])
        .way("Pine Street", &["c", "d"]);
    let (city, n) = m.city();
    // Starts 0.5 m before b on Main Street, ends 0.5 m into Pine Street.
    let leg = leg_partial(&city, &n, &["a", "b", "c", "d"], 0.995, 0.005);
    let steps = guide(&city, &leg, Profile::Cycling);
    assert_eq!(
        said(&steps),
        ["depart: Oak Street", "arrive: Oak Street"],
        "{:?}",
        steps.iter().map(|s| s.distance_m).collect::<Vec<_>>()
    );
    check_distances(&steps);
    let total: f64 = steps.iter().map(|s| s.distance_m).sum();
    assert!((total - 101.0).abs() < 1.0, "{total}");
}

/// A one-way ring of radius 20 m (anticlockwise) with arms south, east, north and west, a driveway,
/// a named service road (a car park's aisle through to East Road), a footway and a one-way entry
/// (towards the ring) off it.
fn roundabout() -> (City, HashMap<&'static str, NodeId>) {
    let mut m = Map::new();
    m.node("r0", 0.0, -20.0)
        .node("r1", 20.0, 0.0)
        .node("r1b", 14.0, 14.0)
        .node("r2", 0.0, 20.0)
        .node("r2b", -14.0, 14.0)
        .node("r3", -20.0, 0.0)
        .node("S", 0.0, -120.0)
        .node("E", 120.0, 0.0)
        .node("N", 0.0, 120.0)
        .node("W", -120.0, 0.0)
        .node("drive", 30.0, 30.0)
        .node("foot", -60.0, 60.0)
        .node("in", -40.0, 40.0)
        .node("aisle", 60.0, 30.0);
    let ring = WayOpts { ring: true, ..ROAD };
    m.way_with(
        "Grand Circle",
        &["r0", "r1", "r1b", "r2", "r2b", "r3", "r0"],
        ring,
    )
    .way("South Road", &["S", "r0"])
    .way("East Road", &["r1", "E"])
    .way("North Road", &["r2", "N"])
    .way("West Road", &["r3", "W"])
    .way("", &["r1b", "drive"])
    .way_with(
        "Car Park",
        &["r1b", "aisle", "E"],
        WayOpts {
            service: true,
            ..ROAD
        },
    )
    .way_with(
        "Park Path",
        &["r2b", "foot"],
        WayOpts {
            bike: BikeAccess::Push,
            ..ROAD
        },
    )
    .way_with(
        "Entry Lane",
        &["in", "r2b"],
        WayOpts {
            oneway: true,
            ..ROAD
        },
    );
    m.city()
}

#[test]
fn roundabout_exits_are_counted_as_a_rider_counts_them() {
    let (city, n) = roundabout();
    // East and North are passed; the driveway, the car park's service road, the footway and the
    // one-way entry are not exits.
    let steps = ride(&city, &n, &["S", "r0", "r1", "r1b", "r2", "r2b", "r3", "W"]);
    assert_eq!(
        said(&steps),
        [
            "depart: South Road",
            "roundabout left exit 3: Grand Circle",
            "turn right: West Road",
            "arrive: West Road"
        ]
    );
    // All the way round and back out where the rider came in: the 4th exit.
    let steps = ride(
        &city,
        &n,
        &["S", "r0", "r1", "r1b", "r2", "r2b", "r3", "r0", "S"],
    );
    assert_eq!(steps[1].exit, Some(4), "{:?}", said(&steps));
    assert_eq!(steps[1].kind, StepKind::Roundabout);
}

#[test]
fn a_leg_may_start_or_end_on_the_ring() {
    let (city, n) = roundabout();
    // Starting between r0 and r1: the departure rides the ring (past East Road) and the rider
    // turns off it onto North Road; there was no entry, so no roundabout step.
    let leg = leg_partial(&city, &n, &["r0", "r1", "r1b", "r2", "N"], 0.5, 1.0);
    let steps = guide(&city, &leg, Profile::Cycling);
    assert_eq!(
        said(&steps),
        [
            "depart: Grand Circle",
            "turn right: North Road",
            "arrive: North Road"
        ]
    );
    assert!(steps.iter().all(|s| s.exit.is_none()));
    // Starting and ending on the ring: one step along it, however it bends.
    let leg = leg_partial(&city, &n, &["r0", "r1", "r1b", "r2"], 0.5, 0.5);
    let steps = guide(&city, &leg, Profile::Cycling);
    assert_eq!(
        said(&steps),
        ["depart: Grand Circle", "arrive: Grand Circle"]
    );
    // Ending on the ring: a turn onto it, no exit to take.
    let leg = leg_partial(&city, &n, &["S", "r0", "r1", "r1b"], 0.0, 0.5);
    let steps = guide(&city, &leg, Profile::Cycling);
    assert_eq!(
        said(&steps),
        [
            "depart: South Road",
            "turn right: Grand Circle",
            "arrive: Grand Circle"
        ]
    );
}

#[test]
fn walking_steps_carry_a_safety_code() {
    let mut m = Map::new();
    m.node("a", 0.0, 0.0).node("b", 0.0, 100.0);
    m.way("Main Street", &["a", "b"]);
    let (city, n) = m.city();
    let leg = leg_partial(&city, &n, &["a", "b"], 0.0, 1.0);
    let (steps, stops) = city.guidance(&leg, [LON0, LAT0], Profile::Walking, false);
    let json = super::words::route_json(
        &[super::words::WordedLeg {
            steps: &steps,
            stops: &stops,
            distance_m: 100.0,
            duration_s: 72.0,
            elevation_gain_m: 0.0,
            elevation_loss_m: 0.0,
            geometry: &steps[0].geometry,
        }],
        Profile::Walking,
    );
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    for s in v["steps"].as_array().expect("steps") {
        assert_eq!(s["safety_code"], 1, "{s}");
        assert!(s.get("safety_classification").is_none());
        assert!(s.get("lit").is_none());
    }
    assert_eq!(v["safety_code"], 1.0);
}

#[test]
fn a_ref_that_comes_and_goes_and_a_footway_straight_on_do_not_make_a_turn() {
    let mut m = Map::new();
    // Little Britain turns a corner at b; a footway (pushed) goes straight on there, and the
    // street's first part carries a ref.
    m.node("a", 0.0, 0.0)
        .node("b", 0.0, 100.0)
        .node("c", 100.0, 100.0)
        .node("f", 0.0, 200.0);
    m.way("Little Britain", &["a", "b"])
        .way("Little Britain", &["b", "c"])
        .way_with(
            "Bart's Walk",
            &["b", "f"],
            WayOpts {
                bike: BikeAccess::Push,
                ..ROAD
            },
        );
    let w = m.g.way_ref.len() - 3;
    m.g.way_ref[w] = m.strings.intern("A40");
    let (city, n) = m.city();
    let steps = ride(&city, &n, &["a", "b", "c"]);
    assert_eq!(
        said(&steps),
        ["depart: Little Britain", "arrive: Little Britain"]
    );
    // Walking, the footway is a way on: the corner is a turn.
    let leg = leg_partial(&city, &n, &["a", "b", "c"], 0.0, 1.0);
    let steps = guide(&city, &leg, Profile::Walking);
    assert_eq!(
        said(&steps),
        [
            "depart: Little Britain",
            "continue right: Little Britain",
            "arrive: Little Britain"
        ]
    );
    let v = route_value(&steps, Profile::Walking);
    assert_eq!(
        v["steps"][1]["maneuver"]["instruction"],
        "Turn right to stay on Little Britain"
    );
}

#[test]
fn an_unnamed_jog_off_a_road_and_back_is_said_as_staying_on_it() {
    let mut m = Map::new();
    // Marble Place east to b, where it stops; an unnamed path bears left from b, runs on east and
    // back down to e, where Marble Place goes on east (Chicago's Marble Place across LaSalle
    // Street, from the Willis Tower towards the Art Institute).
    m.node("a", 0.0, 0.0)
        .node("b", 100.0, 0.0)
        .node("c", 117.0, 10.0)
        .node("d", 160.0, 10.0)
        .node("e", 190.0, 0.0)
        .node("f", 300.0, 0.0)
        .node("n", 100.0, 100.0)
        .node("s", 100.0, -100.0);
    m.way("Marble Place", &["a", "b"])
        .way("", &["b", "c", "d", "e"])
        .way("Marble Place", &["e", "f"])
        .way("LaSalle Street", &["s", "b", "n"]);
    let (city, n) = m.city();
    let steps = ride(&city, &n, &["a", "b", "c", "d", "e", "f"]);
    // Not "bear left" onto nothing, then "continue onto Marble Place": the bear is the maneuver,
    // and the road it keeps to is Marble Place.
    assert_eq!(
        said(&steps),
        [
            "depart: Marble Place",
            "continue slight left: Marble Place",
            "arrive: Marble Place"
        ]
    );
    let v = route_value(&steps, Profile::Cycling);
    assert_eq!(
        v["steps"][1]["maneuver"]["instruction"],
        "Bear left to stay on Marble Place"
    );
    check_distances(&steps);
}

#[test]
fn a_few_metres_walked_in_a_long_step_are_not_worded_as_walking_it() {
    let push = WayOpts {
        bike: BikeAccess::Push,
        ..ROAD
    };
    // Main Street east: 300 m ridden, 3 m walked (a barrier's gap), 300 m ridden; then, after a
    // corner, Side Street north: 100 m ridden and 40 m walked.
    let mut m = Map::new();
    m.node("a", 0.0, 0.0)
        .node("b", 300.0, 0.0)
        .node("c", 303.0, 0.0)
        .node("d", 603.0, 0.0)
        .node("e", 603.0, 100.0)
        .node("f", 603.0, 140.0);
    m.way("Main Street", &["a", "b"])
        .way_with("Main Street", &["b", "c"], push)
        .way("Main Street", &["c", "d"])
        .way("Side Street", &["d", "e"])
        .way_with("Side Street", &["e", "f"], push);
    let (city, n) = m.city();
    let steps = ride(&city, &n, &["a", "b", "c", "d", "e", "f"]);
    assert_eq!(
        said(&steps),
        [
            "depart: Main Street",
            "turn left: Side Street",
            "arrive: Side Street"
        ]
    );
    let v = route_value(&steps, Profile::Cycling);
    assert_eq!(
        v["steps"][0]["maneuver"]["instruction"],
        "Head east on Main Street"
    );
    // 40 m walked is worth saying, though most of the step is ridden.
    assert_eq!(
        v["steps"][1]["maneuver"]["instruction"],
        "Turn left onto Side Street and walk your bike"
    );
}

/// The v2 route JSON of one leg's steps, parsed.
fn route_value(steps: &[super::Step], profile: Profile) -> serde_json::Value {
    let json = super::words::route_json(
        &[super::words::WordedLeg {
            steps,
            stops: &[],
            distance_m: steps.iter().map(|s| s.distance_m).sum(),
            duration_s: steps.iter().map(|s| s.duration_s).sum(),
            elevation_gain_m: 0.0,
            elevation_loss_m: 0.0,
            geometry: &steps[0].geometry,
        }],
        profile,
    );
    serde_json::from_str(&json).expect("JSON")
}
