//! Access and safety rules: OSM tags of a way → per-direction bicycle and foot access and a safety
//! class. The safety class follows Level of Traffic Stress (Mekuria, Furth & Nixon 2012) as BikeOttawa's
//! stressmodel and Conveyal R5's labeller implement it; `docs/safety-rules.md` is the readable table and
//! the tests in `tests/rules.rs` pin every row.

use crate::osm::{Tags, tag};
use quietway_engine::graph::{ArcAttrs, BikeAccess, SafetyClass, way_flags};
use serde::{Deserialize, Serialize};

/// Per-city defaults the tags leave open.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CityRules {
    /// UK-style traffic: `cycleway:left` serves the forward direction of a two-way road.
    pub drives_on_left: bool,
    /// Default speed limit in mph by highway class when `maxspeed` is absent ("*" for the rest).
    pub default_speed_mph: std::collections::BTreeMap<String, f64>,
    /// Whether the city's law lets adults ride on sidewalks (`footway=sidewalk`); where it does not,
    /// a bicycle is walked there. `docs/safety-rules.md` cites each city's rule.
    pub sidewalk_riding: bool,
    /// Whether bicycles may ride `highway=trunk` roads unless tagged otherwise.
    pub trunk_riding: bool,
}

impl CityRules {
    pub fn default_speed(&self, highway: &str) -> f64 {
        let base = highway.trim_end_matches("_link");
        self.default_speed_mph
            .get(base)
            .or_else(|| self.default_speed_mph.get("*"))
            .copied()
            .unwrap_or(25.0)
    }
}

/// What the rules say about one way.
#[derive(Clone, Debug, PartialEq)]
pub struct WayProfile {
    pub forward: ArcAttrs,
    pub backward: ArcAttrs,
    pub flags: u16,
    /// Level of traffic stress per direction (1–4), before the signed-route upgrade; 0 for paths.
    pub lts_forward: u8,
    pub lts_backward: u8,
}

const ROAD_CLASSES: &[&str] = &[
    "trunk",
    "trunk_link",
    "primary",
    "primary_link",
    "secondary",
    "secondary_link",
    "tertiary",
    "tertiary_link",
    "unclassified",
    "residential",
    "living_street",
    "service",
    "road",
    "busway",
];
const PATH_CLASSES: &[&str] = &[
    "cycleway",
    "path",
    "footway",
    "pedestrian",
    "bridleway",
    "track",
    "steps",
];

fn yes(v: Option<&str>) -> bool {
    matches!(
        v,
        Some("yes" | "designated" | "permissive" | "destination" | "official" | "true" | "1")
    )
}
fn no(v: Option<&str>) -> bool {
    matches!(
        v,
        Some(
            "no" | "private"
                | "customers"
                | "delivery"
                | "agricultural"
                | "forestry"
                | "discouraged_no"
        )
    )
}

/// What the access hierarchy says for a bicycle: the most specific of `bicycle`, `vehicle`, `access`
/// that is tagged with a value we understand wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Said {
    Yes,
    No,
    Dismount,
}

fn said(v: Option<&str>) -> Option<Said> {
    if yes(v) {
        Some(Said::Yes)
    } else if no(v) {
        Some(Said::No)
    } else if v == Some("dismount") {
        Some(Said::Dismount)
    } else {
        None
    }
}

/// The bicycle's word from the tags, most specific first: `(said, by the bicycle key itself)`.
fn bicycle_said(tags: &Tags) -> Option<(Said, bool)> {
    if let Some(s) = said(tag(tags, "bicycle")) {
        return Some((s, true));
    }
    ["vehicle", "access"]
        .iter()
        .find_map(|k| said(tag(tags, k)).filter(|s| *s != Said::Dismount))
        .map(|s| (s, false))
}

/// The pedestrian's word from the `foot` key alone.
fn foot_said_own(tags: &Tags) -> Option<Said> {
    said(tag(tags, "foot"))
}

/// The pedestrian's word: `foot` over `access`.
fn foot_said(tags: &Tags) -> Option<Said> {
    ["foot", "access"]
        .iter()
        .find_map(|k| said(tag(tags, k)).filter(|s| *s != Said::Dismount))
}

/// Who may pass a node (a barrier, or a node with access tags): `None` when anyone who may use the
/// ways may pass. Walls and fences stop everyone; stiles and turnstiles stop bicycles; gates,
/// bollards, cycle barriers and the rest stay passable unless `locked=yes` or an access tag closes
/// them (most specific wins: `bicycle` > `vehicle` > `access`, `foot` > `access`).
pub fn node_passage(tags: &Tags) -> Option<(BikeAccess, bool)> {
    let barrier = tag(tags, "barrier");
    let has_access = ["access", "vehicle", "bicycle", "foot", "locked"]
        .iter()
        .any(|k| tag(tags, k).is_some());
    if barrier.is_none() && !has_access {
        return None;
    }
    let (mut bike, mut foot) = match barrier {
        Some(
            "wall" | "fence" | "hedge" | "retaining_wall" | "city_wall" | "wire_fence"
            | "wood_fence" | "railing" | "guard_rail" | "jersey_barrier" | "ditch" | "yes"
            | "debris" | "log",
        ) => (BikeAccess::No, false),
        Some("stile" | "turnstile" | "full-height_turnstile" | "kissing_gate") => {
            (BikeAccess::No, true)
        }
        _ => (BikeAccess::Ride, true),
    };
    if tag(tags, "locked") == Some("yes") {
        bike = BikeAccess::No;
        foot = false;
    }
    match bicycle_said(tags) {
        Some((Said::Yes, _)) => bike = BikeAccess::Ride,
        // On a crossing node, `bicycle=no` says "not ridden across": the rider walks across, as
        // at `bicycle=dismount`, where OSRM ignores the tag and a closed crossing would cut the
        // network. Elsewhere a node closed to bicycles does not let one through.
        Some((Said::No, _)) if barrier.is_none() && tag(tags, "highway") == Some("crossing") => {
            bike = BikeAccess::Push
        }
        Some((Said::No, _)) => bike = BikeAccess::No,
        Some((Said::Dismount, _)) => bike = BikeAccess::Push,
        None => {}
    }
    match foot_said(tags) {
        Some(Said::Yes) => foot = true,
        Some(Said::No) => foot = false,
        _ => {}
    }
    if bike == BikeAccess::Push && !foot {
        bike = BikeAccess::No;
    }
    if bike == BikeAccess::Ride && foot {
        None
    } else {
        Some((bike, foot))
    }
}

/// A ferry's crossing time from its `duration` tag (`HH:MM`, `HH:MM:SS`, minutes, or ISO 8601
/// `PT1H20M`), in seconds.
pub fn ferry_duration_s(tags: &Tags) -> Option<f64> {
    let v = tag(tags, "duration")?.trim();
    let seconds = if let Some(iso) = v.strip_prefix("PT") {
        let mut total = 0.0;
        let mut number = String::new();
        for c in iso.chars() {
            match c {
                '0'..='9' | '.' => number.push(c),
                'H' | 'M' | 'S' => {
                    let n: f64 = number.parse().ok()?;
                    total += n * match c {
                        'H' => 3600.0,
                        'M' => 60.0,
                        _ => 1.0,
                    };
                    number.clear();
                }
                _ => return None,
            }
        }
        total
    } else {
        let parts: Vec<f64> = v
            .split(':')
            .map(|p| p.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .ok()?;
        match parts.as_slice() {
            [m] => m * 60.0,
            [h, m] => h * 3600.0 + m * 60.0,
            [h, m, s] => h * 3600.0 + m * 60.0 + s,
            _ => return None,
        }
    };
    (seconds.is_finite() && seconds > 0.0).then_some(seconds)
}

/// Infrastructure for cyclists in one direction of a road.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Infra {
    None,
    SharedLane,
    Lane,
    BufferedLane,
    Track,
}

fn infra_of(value: &str) -> Option<Infra> {
    Some(match value {
        "track" | "opposite_track" => Infra::Track,
        "lane" | "opposite_lane" | "share_busway" | "opposite_share_busway" => Infra::Lane,
        "shared_lane" | "shared" => Infra::SharedLane,
        _ => return None,
    })
}

/// Per side: its infrastructure and which directions it serves.
fn side_infra(tags: &Tags, side: &str) -> Option<(Infra, String)> {
    let v = tag(tags, &format!("cycleway:{side}"))
        .or_else(|| tag(tags, "cycleway:both"))
        .or_else(|| tag(tags, "cycleway"))?;
    let mut infra = infra_of(v)?;
    let sub = |k: &str| {
        tag(tags, &format!("cycleway:{side}:{k}"))
            .or_else(|| tag(tags, &format!("cycleway:both:{k}")))
            .or_else(|| tag(tags, &format!("cycleway:{k}")))
    };
    if infra == Infra::Lane {
        // Physical separation makes a painted lane a protected one; a buffer makes it better.
        let separation = sub("separation")
            .or_else(|| sub("separation:left"))
            .or_else(|| sub("separation:right"));
        if matches!(
            separation,
            Some(
                "flex_post"
                    | "bollard"
                    | "kerb"
                    | "planter"
                    | "parking_lane"
                    | "guard_rail"
                    | "jersey_barrier"
                    | "concrete"
                    | "fence"
                    | "separation_kerb"
                    | "vertical_panel"
            )
        ) {
            infra = Infra::Track;
        } else if sub("buffer").is_some_and(|b| b != "no" && b != "0")
            || sub("lane") == Some("buffered")
        {
            infra = Infra::BufferedLane;
        }
    }
    Some((infra, sub("oneway").unwrap_or("").to_string()))
}

fn parse_speed_mph(v: &str) -> Option<f64> {
    let v = v.trim();
    if let Some(n) = v.strip_suffix("mph") {
        return n.trim().parse().ok();
    }
    if let Some(n) = v.strip_suffix("km/h").or_else(|| v.strip_suffix("kmh")) {
        return n.trim().parse::<f64>().ok().map(|k| k / 1.609_344);
    }
    v.parse::<f64>().ok().map(|k| k / 1.609_344)
}

fn lanes_per_direction(tags: &Tags, highway: &str, oneway: bool, forward: bool) -> f64 {
    let dir_key = if forward {
        "lanes:forward"
    } else {
        "lanes:backward"
    };
    if let Some(n) = tag(tags, dir_key).and_then(|v| v.parse::<f64>().ok()) {
        return n;
    }
    if let Some(n) = tag(tags, "lanes").and_then(|v| v.parse::<f64>().ok()) {
        return if oneway { n } else { (n / 2.0).ceil() };
    }
    match highway.trim_end_matches("_link") {
        "trunk" | "primary" => 2.0,
        _ => 1.0,
    }
}

fn has_parking(tags: &Tags, side: &str) -> bool {
    let parked = |v: Option<&str>| {
        matches!(
            v,
            Some(
                "lane"
                    | "parallel"
                    | "diagonal"
                    | "perpendicular"
                    | "on_street"
                    | "street_side"
                    | "half_on_kerb"
                    | "marked"
            )
        )
    };
    parked(tag(tags, &format!("parking:lane:{side}")))
        || parked(tag(tags, "parking:lane:both"))
        || parked(tag(tags, &format!("parking:{side}")))
        || parked(tag(tags, "parking:both"))
}

/// Level of traffic stress of riding one direction of a road (1 lowest, 4 highest). Written as the
/// published tables read, one arm per row.
#[allow(clippy::collapsible_match)]
pub fn road_lts(highway: &str, speed_mph: f64, lanes: f64, infra: Infra, parking: bool) -> u8 {
    let base = highway.trim_end_matches("_link");
    match infra {
        Infra::Track => 1,
        Infra::Lane | Infra::BufferedLane => {
            let lts1_speed = if infra == Infra::BufferedLane {
                35.0
            } else if parking {
                25.0
            } else {
                30.0
            };
            if lanes <= 1.0 {
                if speed_mph <= lts1_speed {
                    1
                } else if speed_mph <= 35.0 {
                    2
                } else {
                    3
                }
            } else if lanes <= 2.0 {
                if speed_mph <= 25.0 || (infra == Infra::BufferedLane && speed_mph <= 35.0) {
                    2
                } else {
                    3
                }
            } else if speed_mph <= 35.0 {
                3
            } else {
                4
            }
        }
        Infra::None | Infra::SharedLane => {
            let lts = match base {
                "living_street" => 1,
                "service" | "residential" | "unclassified" | "road" | "busway" if lanes <= 1.0 => {
                    if speed_mph <= 25.0 {
                        1
                    } else if speed_mph <= 30.0 {
                        2
                    } else if speed_mph <= 35.0 {
                        3
                    } else {
                        4
                    }
                }
                "tertiary" | "secondary" if lanes <= 1.0 => {
                    let low = if base == "tertiary" { 30.0 } else { 25.0 };
                    if speed_mph <= low {
                        2
                    } else if speed_mph <= 35.0 {
                        3
                    } else {
                        4
                    }
                }
                "primary" | "trunk" if lanes <= 1.0 => {
                    if speed_mph <= 25.0 {
                        3
                    } else {
                        4
                    }
                }
                _ if lanes <= 2.0 => {
                    if speed_mph <= 25.0 && !matches!(base, "primary" | "trunk") {
                        3
                    } else {
                        4
                    }
                }
                _ => 4,
            };
            if base == "trunk" { lts.max(4) } else { lts }
        }
    }
}

fn lts_class(lts: u8) -> SafetyClass {
    match lts {
        0 | 1 => SafetyClass::Quiet,
        2 => SafetyClass::Moderate,
        3 => SafetyClass::Busy,
        _ => SafetyClass::VeryBusy,
    }
}

/// The highway class a way without a `highway` tag is used as, where riders and walkers can use
/// it all the same (OSRM's bicycle profile routes each of these):
/// - a pier drawn as a line (`man_made=pier`): walked like a footway. A pier drawn as a closed
///   outline is the pier's shape, not a way along it;
/// - a movable bridge (`bridge=movable`) that no railway or waterway carries: a road;
/// - a station platform at ground level (`railway=platform`; not underground, indoors or above the
///   street, where a point on the street would snap to it): walked like a footway;
/// - a surface car park's outline (`amenity=parking`, not a building, garage or underground
///   deck): ridden like a service road round it, as riders cut across car parks.
pub fn highway_of_untagged(tags: &Tags, closed: bool) -> Option<&'static str> {
    if tag(tags, "highway").is_some() || tag(tags, "building").is_some() {
        return None;
    }
    let level_off = |k: &str| {
        tag(tags, k).is_some_and(|v| {
            v.split(';')
                .any(|x| x.trim().parse::<f64>().is_ok_and(|n| n != 0.0))
        })
    };
    let off_ground = level_off("layer")
        || level_off("level")
        || matches!(
            tag(tags, "location"),
            Some("underground" | "roof" | "indoor")
        )
        || matches!(tag(tags, "indoor"), Some(v) if v != "no")
        || tag(tags, "tunnel").is_some_and(|v| v != "no");
    if tag(tags, "man_made") == Some("pier") && !closed && tag(tags, "area") != Some("yes") {
        return Some("footway");
    }
    if tag(tags, "bridge") == Some("movable")
        && tag(tags, "railway").is_none()
        && tag(tags, "waterway").is_none()
        && tag(tags, "man_made").is_none()
        && !closed
    {
        return Some("unclassified");
    }
    if tag(tags, "railway") == Some("platform") && !off_ground {
        return Some("footway");
    }
    if tag(tags, "amenity") == Some("parking")
        && closed
        && matches!(tag(tags, "parking"), None | Some("surface"))
        && !off_ground
        && tag(tags, "access").is_none_or(|a| !matches!(a, "private" | "no"))
    {
        return Some("service");
    }
    None
}

/// Applies the rules to one way; `None` when neither a bicycle nor a pedestrian may use it.
pub fn classify(tags: &Tags, rules: &CityRules) -> Option<WayProfile> {
    if tag(tags, "route") == Some("ferry") {
        return ferry(tags);
    }
    let highway = tag(tags, "highway")?;
    let bicycle = tag(tags, "bicycle");
    let bicycle_word = bicycle_said(tags);
    // A cycle track or lane mapped on the way itself (`cycleway`, `cycleway:left|right|both`)
    // opens it to bicycles whatever its highway class, as OSRM reads it.
    let cycle_facility = [
        "cycleway",
        "cycleway:left",
        "cycleway:right",
        "cycleway:both",
    ]
    .iter()
    .any(|k| {
        tag(tags, k).is_some_and(|v| infra_of(v).is_some() || v == "sharrow" || v == "opposite")
    });
    // Motorways are closed to bicycles unless a `bicycle=yes` opens one (a shoulder some US states
    // allow) or a cycle facility is mapped on it; then they are ridden as trunk roads.
    let motorway = matches!(highway, "motorway" | "motorway_link")
        && (bicycle_word.is_some_and(|(s, own)| own && s == Said::Yes) || cycle_facility);
    // An unknown highway value (a runway, a mistyped class) is ridden as a road where a cycle
    // facility is mapped on it or an access tag opens it to vehicles (`bicycle`, `vehicle` or
    // `access` yes), as OSRM reads it: the tag says the public may use it.
    let closed = [
        "construction",
        "proposed",
        "platform",
        "corridor",
        "abandoned",
        "disused",
        "razed",
        "elevator",
        "bus_stop",
        "services",
        "rest_area",
        "raceway",
        "escape",
        "emergency_bay",
    ];
    let opened = bicycle_word.is_some_and(|(s, _)| s == Said::Yes);
    let unknown_class = !ROAD_CLASSES.contains(&highway)
        && !PATH_CLASSES.contains(&highway)
        && !matches!(highway, "motorway" | "motorway_link")
        && !closed.contains(&highway);
    let unknown_opened = (cycle_facility || opened) && unknown_class;
    // Walkers let onto a way no vehicle may use (`foot=yes` on a motorway, on a runway) may walk
    // a bike along it, as OSRM reads it: a motorway in its own direction only, as the bike is
    // pushed in the traffic's direction on its shoulder; an unknown class as a footway.
    let foot_opened = foot_said_own(tags) == Some(Said::Yes) && !opened && !cycle_facility;
    let walked_motorway = foot_opened && matches!(highway, "motorway" | "motorway_link");
    let walked_unknown = foot_opened && unknown_class;
    let highway = if unknown_opened {
        "road"
    } else if walked_unknown {
        "footway"
    } else {
        highway
    };
    let motorway = motorway || walked_motorway;
    let is_road = ROAD_CLASSES.contains(&highway) || motorway;
    if !is_road && !PATH_CLASSES.contains(&highway) {
        return None; // motorways, construction, proposed, platforms, corridors, ...
    }
    if matches!(tag(tags, "indoor"), Some("yes" | "corridor")) {
        return None;
    }
    let foot = tag(tags, "foot");
    let sidewalk_absent = matches!(tag(tags, "sidewalk"), Some("no" | "none"));

    // --- foot access ---
    let mut walk = match highway {
        "cycleway" => false,
        "trunk" | "trunk_link" => !sidewalk_absent,
        "busway" | "motorway" | "motorway_link" => false,
        _ => true,
    };
    match foot_said(tags) {
        Some(Said::Yes) => walk = true,
        Some(Said::No) => walk = false,
        _ => {}
    }
    if foot == Some("use_sidepath") {
        walk = false;
    }
    // Only `foot` itself lets walkers onto a motorway; `access=yes` there is for vehicles.
    if matches!(highway, "motorway" | "motorway_link") && foot_said_own(tags) != Some(Said::Yes) {
        walk = false;
    }
    // An opened motorway is rated as a trunk road.
    let highway = if motorway { "trunk" } else { highway };

    // --- bicycle access (direction-free): the highway's default, then the access hierarchy ---
    let footway_kind = tag(tags, "footway");
    let mut bike = match highway {
        "cycleway" | "path" | "track" => BikeAccess::Ride,
        // A separately mapped sidewalk is ridden where the city's law allows it. Elsewhere the
        // bike is walked along the pavement on the road's own arcs (against a oneway, below): as
        // a way of its own the sidewalk would capture cycling waypoints (they snap to the nearest
        // usable way) and start routes on the pavement.
        "footway" if footway_kind == Some("sidewalk") && rules.sidewalk_riding => BikeAccess::Ride,
        "footway" if footway_kind == Some("sidewalk") => BikeAccess::No,
        // A crossing (or the island in it) is walked with the bike: it is often the only way
        // between a path network and the streets across a road bikes may not ride (Battery Park
        // City and the Hudson River Greenway across West Street), and a signalled one is where a
        // rider crosses a busy road.
        "footway" if matches!(footway_kind, Some("crossing" | "traffic_island")) => {
            BikeAccess::Push
        }
        "footway" | "pedestrian" => BikeAccess::Push,
        // Steps are carried up and down: pushed at walking speed (a `ramp:bicycle` eases it).
        "steps" => BikeAccess::Push,
        // A bridleway is the horses'; where walkers are let on (`foot=yes`), the bike is walked.
        "bridleway" if foot_said(tags) == Some(Said::Yes) => BikeAccess::Push,
        "bridleway" => BikeAccess::No,
        "trunk" | "trunk_link" if !rules.trunk_riding => BikeAccess::No,
        _ => BikeAccess::Ride,
    };
    if walked_motorway {
        bike = BikeAccess::Push;
    }
    // Pushing is walking: it needs a way a pedestrian may use.
    if bike == BikeAccess::Push && !walk {
        bike = BikeAccess::No;
    }
    match bicycle_word {
        // Only `bicycle=*` itself opens a highway closed to bicycles; `access=yes` or `vehicle=yes`
        // lift a general closure but leave the highway's own default (a footway stays a push).
        Some((Said::Yes, true)) => {
            bike = if highway == "steps" {
                BikeAccess::Push
            } else {
                BikeAccess::Ride
            }
        }
        Some((Said::Yes, false)) => {}
        Some((Said::No, _)) => bike = BikeAccess::No,
        Some((Said::Dismount, _)) => bike = BikeAccess::Push,
        None => {}
    }
    if bicycle == Some("use_sidepath") && highway == "trunk" {
        bike = BikeAccess::No;
    }
    if bike == BikeAccess::No && !walk {
        return None;
    }

    // --- oneway for bicycles ---
    let junction = tag(tags, "junction");
    let roundabout = matches!(junction, Some("roundabout" | "circular"));
    let oneway_tag = tag(tags, "oneway");
    let mut oneway: i8 = match oneway_tag {
        Some("yes" | "true" | "1") => 1,
        Some("-1" | "reverse") => -1,
        Some("no" | "false" | "0") => 0,
        // A motorway (not its link) is one-way unless tagged otherwise.
        _ if roundabout || (motorway && tag(tags, "highway") == Some("motorway")) => 1,
        _ => 0,
    };
    let road_oneway = oneway != 0;
    let cycleway = tag(tags, "cycleway").unwrap_or("");
    let mut contraflow = false;
    match tag(tags, "oneway:bicycle") {
        Some("no") => {
            contraflow = oneway != 0;
            oneway = 0;
        }
        Some("yes") => oneway = 1,
        Some("-1") => oneway = -1,
        _ => {
            let side_contra = ["left", "right", "both"].iter().any(|s| {
                matches!(
                    tag(tags, &format!("cycleway:{s}:oneway")),
                    Some("-1" | "no")
                ) && tag(tags, &format!("cycleway:{s}")).is_some_and(|v| infra_of(v).is_some())
            });
            // `cycleway:left=opposite` (or right, both) is a contraflow facility like `cycleway=opposite`.
            let side_opposite = ["left", "right", "both"].iter().any(|s| {
                tag(tags, &format!("cycleway:{s}")).is_some_and(|v| v.starts_with("opposite"))
            });
            if oneway != 0 && (cycleway.starts_with("opposite") || side_contra || side_opposite) {
                contraflow = true;
                oneway = 0;
            }
        }
    }
    // Against a oneway a rider walks the bike on the pavement, where pedestrians may walk (not
    // round a roundabout, not where `sidewalk=no`); the cost of walking lets it win only where it
    // clearly saves (docs/safety-rules.md).
    let against =
        if bike != BikeAccess::No && walk && !roundabout && !sidewalk_absent && !walked_motorway {
            BikeAccess::Push
        } else {
            BikeAccess::No
        };
    let mut bike_fwd = bike;
    let mut bike_bwd = bike;
    if oneway == 1 {
        bike_bwd = against;
    } else if oneway == -1 {
        bike_fwd = against;
    }

    // --- way flags ---
    let mut flags = 0u16;
    match tag(tags, "lit") {
        Some("no" | "disused" | "off") => flags |= way_flags::LIT_TAGGED,
        Some(_) => flags |= way_flags::LIT | way_flags::LIT_TAGGED,
        None => {}
    }
    match tag(tags, "surface") {
        Some("sett" | "cobblestone" | "unhewn_cobblestone" | "cobblestone:flattened") => {
            flags |= way_flags::COBBLES
        }
        Some(
            "gravel" | "dirt" | "ground" | "unpaved" | "grass" | "sand" | "mud" | "pebblestone"
            | "earth" | "rock" | "woodchips" | "grass_paver",
        ) => flags |= way_flags::ROUGH,
        _ => {}
    }
    if matches!(
        tag(tags, "smoothness"),
        Some("bad" | "very_bad" | "horrible" | "very_horrible" | "impassable")
    ) {
        flags |= way_flags::ROUGH;
    }
    if roundabout {
        flags |= way_flags::ROUNDABOUT;
    }
    if tag(tags, "bridge").is_some_and(|v| v != "no") {
        flags |= way_flags::BRIDGE;
    }
    if tag(tags, "tunnel").is_some_and(|v| v != "no") {
        flags |= way_flags::TUNNEL;
    }
    if highway == "footway" && matches!(footway_kind, Some("crossing" | "traffic_island")) {
        flags |= way_flags::CROSSING;
    }
    if highway == "service" {
        flags |= way_flags::SERVICE;
    }
    if highway == "steps" {
        flags |= way_flags::STEPS;
        if yes(tag(tags, "ramp:bicycle")) {
            flags |= way_flags::BICYCLE_RAMP;
        }
    }
    if ["lcn", "rcn", "ncn", "icn"]
        .iter()
        .any(|k| yes(tag(tags, k)))
    {
        flags |= way_flags::CYCLE_ROUTE;
    }

    // --- safety class per direction ---
    let (mut lts_f, mut lts_b) = (0u8, 0u8);
    let (class_f, class_b) = if !is_road {
        let segregated = tag(tags, "segregated") == Some("yes");
        let with_pedestrians = match highway {
            "cycleway" => matches!(foot, Some("designated" | "yes")) && !segregated,
            _ => walk && !segregated,
        };
        let c = if with_pedestrians {
            SafetyClass::Shared
        } else {
            SafetyClass::Quiet
        };
        (c, c)
    } else {
        let speed = tag(tags, "maxspeed")
            .and_then(parse_speed_mph)
            .unwrap_or_else(|| rules.default_speed(highway));
        // Which side serves which direction: in right-hand traffic the right side carries the
        // forward direction of a two-way road; on a oneway road both sides carry its direction.
        let (near, far) = if rules.drives_on_left {
            ("left", "right")
        } else {
            ("right", "left")
        };
        let mut infra_f = Infra::None;
        let mut infra_b = Infra::None;
        let mut park_f = false;
        let mut park_b = false;
        for side in [near, far] {
            let Some((infra, side_oneway)) = side_infra(tags, side) else {
                continue;
            };
            let serves = |dir_forward: bool| -> bool {
                match side_oneway.as_str() {
                    "no" => true,
                    "-1" => !dir_forward,
                    "yes" => dir_forward,
                    _ => {
                        if cycleway.starts_with("opposite") && side == "both" {
                            !dir_forward
                        } else if road_oneway {
                            // Generic `cycleway=opposite_*` on a oneway road is the contraflow side.
                            let generic_opposite = tag(tags, &format!("cycleway:{side}")).is_none()
                                && tag(tags, "cycleway:both").is_none()
                                && cycleway.starts_with("opposite");
                            if generic_opposite {
                                !dir_forward
                            } else {
                                dir_forward
                            }
                        } else {
                            (side == near) == dir_forward
                        }
                    }
                }
            };
            if serves(true) && infra > infra_f {
                infra_f = infra;
                park_f = has_parking(tags, side);
            }
            if serves(false) && infra > infra_b {
                infra_b = infra;
                park_b = has_parking(tags, side);
            }
        }
        let one = road_oneway;
        lts_f = road_lts(
            highway,
            speed,
            lanes_per_direction(tags, highway, one, true),
            infra_f,
            park_f,
        );
        // Riding against a oneway road: the contraflow rider faces every lane of oncoming traffic.
        let lanes_b = if one {
            lanes_per_direction(tags, highway, true, true)
        } else {
            lanes_per_direction(tags, highway, false, false)
        };
        lts_b = road_lts(highway, speed, lanes_b, infra_b, park_b);
        if bicycle == Some("use_sidepath") {
            lts_f = 4;
            lts_b = 4;
        }
        (lts_class(lts_f), lts_class(lts_b))
    };

    let class_for = |access: BikeAccess, class: SafetyClass| {
        if access == BikeAccess::Push {
            SafetyClass::Shared
        } else {
            class
        }
    };
    let forward = ArcAttrs::new(class_for(bike_fwd, class_f), bike_fwd, walk);
    // Walking the bike against the oneway counts as contraflow too (its small extra cost).
    let forward = forward.with_contraflow(oneway == -1 && bike_fwd == BikeAccess::Push);
    let backward = ArcAttrs::new(class_for(bike_bwd, class_b), bike_bwd, walk)
        .with_contraflow((contraflow || oneway == 1) && bike_bwd != BikeAccess::No);
    Some(WayProfile {
        forward,
        backward,
        flags,
        lts_forward: lts_f,
        lts_backward: lts_b,
    })
}

/// A `route=ferry` way: both directions, bicycles aboard unless `bicycle=no`, flagged so guidance can
/// say so; its crossing time comes from `duration` (see `ferry_duration_s`).
fn ferry(tags: &Tags) -> Option<WayProfile> {
    let bike = match bicycle_said(tags) {
        Some((Said::No, _)) => BikeAccess::No,
        _ => BikeAccess::Ride,
    };
    let walk = foot_said(tags) != Some(Said::No);
    if bike == BikeAccess::No && !walk {
        return None;
    }
    let attrs = ArcAttrs::new(SafetyClass::Quiet, bike, walk);
    Some(WayProfile {
        forward: attrs,
        backward: attrs,
        flags: way_flags::FERRY,
        lts_forward: 0,
        lts_backward: 0,
    })
}

/// Quiet arcs on a signed cycle route become `cycleway`.
pub fn upgrade_for_route(a: ArcAttrs) -> ArcAttrs {
    if a.safety_class() == SafetyClass::Quiet {
        ArcAttrs((a.0 & !0b111) | SafetyClass::Cycleway as u16)
    } else {
        a
    }
}
