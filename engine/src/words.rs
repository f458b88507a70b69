//! Words for guidance steps and the directions v2 `route` object, written as JSON in one pass:
//! maneuver instructions, voice instructions and banners per the interface spec's rules (English).
//! Building the response here rather than in JavaScript keeps the server's single thread free:
//! the route object is by far the largest part of a directions response.
//!
//! Rules (see docs/api.md): voice cues far to near, the first 25 m into the step, one half-way on
//! steps over 1 km, the imminent one at 40 m; one cue on short steps; compound announcements and
//! banner `sub` previews when the maneuver after the next follows within 30 m; none on arrival.

use crate::city::Profile;
use crate::graph::TrafficControl;
use crate::guidance::{Step, StepKind, Stop};
use serde::Serialize;

/// A maneuver that follows within this many metres is announced with the one before it.
pub const COMPOUND_M: f64 = 30.0;
const IMMINENT_M: f64 = 40.0;
const FIRST_CUE_INTO_APPROACH_M: f64 = 25.0;
const LONG_APPROACH_M: f64 = 1000.0;

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Coordinates to 1e-6° (about 0.1 m; OSM's own precision is 1e-7).
fn r6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

fn point(p: [f64; 2]) -> [f64; 2] {
    [r6(p[0]), r6(p[1])]
}

const COMPASS: [&str; 8] = [
    "north",
    "northeast",
    "east",
    "southeast",
    "south",
    "southwest",
    "west",
    "northwest",
];

fn compass(bearing: f64) -> &'static str {
    COMPASS[((bearing.rem_euclid(360.0) / 45.0).round() as usize) % 8]
}

fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

fn road(s: &Step) -> &str {
    if s.name.is_empty() { &s.r#ref } else { &s.name }
}

/// The spec's maneuver type names.
pub fn maneuver_type(kind: StepKind) -> &'static str {
    match kind {
        StepKind::Depart => "Start",
        StepKind::Turn => "Turn",
        StepKind::Continue => "Continue",
        StepKind::Roundabout => "roundabout",
        StepKind::UTurn => "U-turn",
        StepKind::Arrive => "Arrive",
    }
}

/// The action of a step's maneuver without the road ("turn left", "bear right").
fn action(s: &Step) -> String {
    let m = s.modifier.unwrap_or("straight");
    match s.kind {
        StepKind::Depart => format!("head {}", compass(s.bearing_after)),
        StepKind::UTurn => "make a U-turn".into(),
        StepKind::Roundabout => format!(
            "at the roundabout, take the {} exit",
            ordinal(s.exit.unwrap_or(1))
        ),
        StepKind::Continue => "continue".into(),
        _ => {
            if let Some(side) = m.strip_prefix("slight ") {
                format!("bear {side}")
            } else if m == "straight" {
                "continue straight".into()
            } else {
                format!("turn {m}")
            }
        }
    }
}

/// "turn left onto Main Street" — the road is named except on roundabouts (the next step names it).
fn phrase(s: &Step, arrive: &str) -> String {
    if s.kind == StepKind::Arrive {
        return arrive.to_string();
    }
    let a = action(s);
    let r = road(s);
    if s.kind == StepKind::Roundabout || r.is_empty() {
        a
    } else if s.kind == StepKind::Depart {
        format!("{a} on {r}")
    } else {
        format!("{a} onto {r}")
    }
}

fn capital(t: &str) -> String {
    let mut c = t.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn lower_first(t: &str) -> String {
    let mut c = t.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

fn instruction(s: &Step, arrive: &str) -> String {
    let mut t = capital(&phrase(s, arrive));
    if s.push && s.kind != StepKind::Arrive {
        t.push_str(" and walk your bike");
    }
    t
}

#[derive(Serialize)]
struct Component {
    text: String,
    r#type: &'static str,
}

#[derive(Serialize)]
struct BannerText {
    text: String,
    components: Vec<Component>,
    r#type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    modifier: Option<&'static str>,
}

fn banner_for(s: &Step, arrive: &str) -> BannerText {
    let r = road(s);
    let named = s.kind != StepKind::Arrive && s.kind != StepKind::Roundabout && !r.is_empty();
    let text = if s.kind == StepKind::Arrive {
        arrive.to_string()
    } else if named {
        r.to_string()
    } else {
        capital(&action(s))
    };
    BannerText {
        components: vec![Component {
            text: text.clone(),
            r#type: if named { "road-name" } else { "text" },
        }],
        text,
        r#type: maneuver_type(s.kind),
        modifier: s.modifier,
    }
}

/// Voice cue distances for an approach of `length` metres, far to near.
pub fn cue_distances(length: f64) -> Vec<f64> {
    let first = length - FIRST_CUE_INTO_APPROACH_M;
    if first <= IMMINENT_M + 20.0 {
        return vec![round1(IMMINENT_M.min(length))];
    }
    let mut out = vec![round1(first)];
    if length > LONG_APPROACH_M {
        out.push(round1((first + IMMINENT_M) / 2.0));
    }
    out.push(IMMINENT_M);
    out
}

/// Voice instructions carry plain text; the spec's optional `ssml_announcement` is not sent (it
/// would add a third to the response for a wrapper any client can add).
#[derive(Serialize)]
struct Voice {
    distance_along_geometry: f64,
    announcement: String,
}

#[derive(Serialize)]
struct Banner {
    distance_along_geometry: f64,
    primary: BannerText,
    #[serde(skip_serializing_if = "Option::is_none")]
    secondary: Option<BannerText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sub: Option<BannerText>,
}

#[derive(Serialize)]
struct Line {
    r#type: &'static str,
    coordinates: Vec<[f64; 2]>,
}

#[derive(Serialize)]
struct Maneuver {
    r#type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    modifier: Option<&'static str>,
    instruction: String,
    location: [f64; 2],
    bearing_before: i64,
    bearing_after: i64,
}

#[derive(Serialize)]
struct ApiStep {
    distance: f64,
    duration: f64,
    delta_elevation: f64,
    geometry: Line,
    name: String,
    mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    safety_code: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    safety_classification: Option<&'static str>,
    exits: String,
    maneuver: Maneuver,
    cycle_routes: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lit: Option<bool>,
    voice_instructions: Vec<Voice>,
    banner_instructions: Vec<Banner>,
}

fn word_steps(steps: &[Step], profile: Profile, arrive: &str, out: &mut Vec<ApiStep>) {
    let cycling = profile == Profile::Cycling;
    let mode = if cycling { "cycling" } else { "walking" };
    for (i, s) in steps.iter().enumerate() {
        let next = steps.get(i + 1);
        let after = steps.get(i + 2);
        let compound = matches!((next, after), (Some(n), Some(a))
            if n.kind != StepKind::Arrive && a.kind != StepKind::Arrive && round1(n.distance_m) < COMPOUND_M);
        let mut voice = Vec::new();
        let mut banners = Vec::new();
        if let Some(n) = next {
            let announce = capital(&if compound {
                format!(
                    "{}, then {}",
                    phrase(n, arrive),
                    phrase(after.expect("compound has a follow-up"), arrive)
                )
            } else {
                phrase(n, arrive)
            });
            let cues = cue_distances(s.distance_m);
            let several = cues.len() > 1;
            for (k, &d) in cues.iter().enumerate() {
                let text = if several && k == 0 && n.kind != StepKind::Arrive {
                    let r = road(s);
                    let lead = if r.is_empty() {
                        "Continue".to_string()
                    } else {
                        format!("Continue on {r}")
                    };
                    format!("{lead}, then {}", lower_first(&announce))
                } else {
                    announce.clone()
                };
                voice.push(Voice {
                    distance_along_geometry: d,
                    announcement: text,
                });
            }
            let secondary = (n.kind != StepKind::Arrive
                && !n.r#ref.is_empty()
                && !n.name.is_empty()
                && n.r#ref != n.name)
                .then(|| BannerText {
                    text: n.r#ref.clone(),
                    components: vec![Component {
                        text: n.r#ref.clone(),
                        r#type: "text",
                    }],
                    r#type: maneuver_type(n.kind),
                    modifier: None,
                });
            banners.push(Banner {
                distance_along_geometry: round1(s.distance_m),
                primary: banner_for(n, arrive),
                secondary,
                sub: if compound {
                    after.map(|a| banner_for(a, arrive))
                } else {
                    None
                },
            });
        }
        let arrival = s.kind == StepKind::Arrive;
        out.push(ApiStep {
            distance: round1(s.distance_m),
            duration: round1(s.duration_s),
            delta_elevation: round1(s.delta_elevation_m),
            geometry: Line {
                r#type: "LineString",
                coordinates: s.geometry.iter().map(|&p| point(p)).collect(),
            },
            name: road(s).to_string(),
            mode,
            safety_code: cycling.then(|| s.safety_class.safety_code()),
            safety_classification: (cycling && !arrival).then(|| s.safety_class.api_name()),
            exits: match (s.kind, s.exit) {
                (StepKind::Roundabout, Some(e)) => e.to_string(),
                _ => String::new(),
            },
            maneuver: Maneuver {
                r#type: maneuver_type(s.kind),
                modifier: s.modifier,
                instruction: instruction(s, arrive),
                location: point(s.location),
                bearing_before: s.bearing_before.round() as i64,
                bearing_after: s.bearing_after.round() as i64,
            },
            cycle_routes: (!s.cycle_routes.is_empty()).then(|| s.cycle_routes.clone()),
            lit: cycling.then_some(s.lit),
            voice_instructions: voice,
            banner_instructions: banners,
        });
    }
}

#[derive(Serialize)]
struct ApiStop {
    stop_type: &'static str,
    location: [f64; 2],
}

#[derive(Serialize)]
struct ApiRoute {
    distance: f64,
    duration: f64,
    elevation_gain: f64,
    elevation_loss: f64,
    safety_code: f64,
    geometry: Line,
    steps: Vec<ApiStep>,
    stops: Vec<ApiStop>,
}

/// One leg as guidance produced it, with its totals.
pub struct WordedLeg<'a> {
    pub steps: &'a [Step],
    pub stops: &'a [Stop],
    pub distance_m: f64,
    pub duration_s: f64,
    pub elevation_gain_m: f64,
    pub elevation_loss_m: f64,
    pub geometry: &'a [[f64; 2]],
}

/// The directions v2 `route` object as JSON. Each leg but the last ends "Arrive at waypoint <n>".
pub fn route_json(legs: &[WordedLeg], profile: Profile) -> String {
    let mut steps = Vec::new();
    for (i, leg) in legs.iter().enumerate() {
        let arrive = if i + 1 == legs.len() {
            "Arrive at destination".to_string()
        } else {
            format!("Arrive at waypoint {}", i + 2)
        };
        word_steps(leg.steps, profile, &arrive, &mut steps);
    }
    let codes: Vec<f64> = steps
        .iter()
        .filter(|s| s.maneuver.r#type != "Arrive")
        .filter_map(|s| s.safety_code.map(f64::from))
        .collect();
    let mut coordinates: Vec<[f64; 2]> = Vec::new();
    for leg in legs {
        for &p in leg.geometry {
            let q = point(p);
            if coordinates.last() != Some(&q) {
                coordinates.push(q);
            }
        }
    }
    if coordinates.len() == 1 {
        coordinates.push(coordinates[0]);
    }
    let sum = |f: fn(&WordedLeg) -> f64| legs.iter().map(f).sum::<f64>();
    let route = ApiRoute {
        distance: round1(sum(|l| l.distance_m)),
        duration: round1(sum(|l| l.duration_s)),
        elevation_gain: round1(sum(|l| l.elevation_gain_m)),
        elevation_loss: round1(sum(|l| l.elevation_loss_m)),
        safety_code: if codes.is_empty() {
            0.0
        } else {
            round1(codes.iter().sum::<f64>() / codes.len() as f64)
        },
        geometry: Line {
            r#type: "LineString",
            coordinates,
        },
        steps,
        stops: legs
            .iter()
            .flat_map(|l| l.stops.iter())
            .map(|s| ApiStop {
                stop_type: match s.control {
                    TrafficControl::Signals => "traffic_signal",
                    TrafficControl::Stop => "stop_sign",
                    _ => "give_way",
                },
                location: point(s.location),
            })
            .collect(),
    };
    serde_json::to_string(&route).expect("route serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cues_far_to_near() {
        assert_eq!(cue_distances(30.0), vec![30.0]);
        assert_eq!(cue_distances(70.0), vec![40.0]);
        assert_eq!(cue_distances(200.0), vec![175.0, 40.0]);
        assert_eq!(cue_distances(2000.0), vec![1975.0, 1007.5, 40.0]);
    }

    #[test]
    fn ordinals_and_compass() {
        assert_eq!(ordinal(1), "1st");
        assert_eq!(ordinal(2), "2nd");
        assert_eq!(ordinal(3), "3rd");
        assert_eq!(ordinal(4), "4th");
        assert_eq!(ordinal(11), "11th");
        assert_eq!(ordinal(22), "22nd");
        assert_eq!(compass(0.0), "north");
        assert_eq!(compass(359.0), "north");
        assert_eq!(compass(135.0), "southeast");
    }
}
