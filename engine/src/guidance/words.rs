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

/// A maneuver that follows within this many metres is announced with the one before it.
pub const COMPOUND_M: f64 = 30.0;
const IMMINENT_M: f64 = 40.0;
const FIRST_CUE_INTO_APPROACH_M: f64 = 25.0;
const LONG_APPROACH_M: f64 = 1000.0;

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
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

/// Appends `1st`, `2nd`, `3rd`, `4th`, … `11th`, `22nd`.
fn ordinal_into(t: &mut String, n: u32) {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    let mut digits = Vec::with_capacity(4);
    json::uint(&mut digits, n as u64);
    t.extend(digits.iter().map(|&d| char::from(d)));
    t.push_str(suffix);
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

// Words are appended to a buffer the caller reuses, so wording a route allocates almost nothing.

/// Appends the action of a step's maneuver without the road ("turn left", "bear right").
fn action_into(t: &mut String, s: &Step) {
    let m = s.modifier.unwrap_or("straight");
    match s.kind {
        StepKind::Depart => {
            t.push_str("head ");
            t.push_str(compass(s.bearing_after));
        }
        StepKind::UTurn => t.push_str("make a U-turn"),
        StepKind::Roundabout => {
            t.push_str("at the roundabout, take the ");
            ordinal_into(t, s.exit.unwrap_or(1));
            t.push_str(" exit");
        }
        StepKind::Continue if m == "straight" => t.push_str("continue"),
        _ => {
            if let Some(side) = m.strip_prefix("slight ") {
                t.push_str("bear ");
                t.push_str(side);
            } else if m == "straight" {
                t.push_str("continue straight");
            } else {
                t.push_str("turn ");
                t.push_str(m);
            }
        }
    }
}

/// Appends "turn left onto Main Street": the road is named except on roundabouts (the next step
/// names it).
fn phrase_into(t: &mut String, s: &Step, arrive: &str) {
    if s.kind == StepKind::Arrive {
        t.push_str(arrive);
        return;
    }
    action_into(t, s);
    let r = s.road();
    if s.kind == StepKind::Roundabout || r.is_empty() {
        return;
    }
    t.push_str(if s.kind == StepKind::Depart {
        " on "
    } else if s.same_road {
        // The road turns and the step keeps to it ("turn left to stay on …"), or it runs on.
        if s.modifier.unwrap_or("straight") == "straight" {
            " on "
        } else {
            " to stay on "
        }
    } else {
        " onto "
    });
    t.push_str(r);
}

/// Upper-cases the first character of `t[from..]`.
fn capitalize_from(t: &mut String, from: usize) {
    let Some(c) = t[from..].chars().next() else {
        return;
    };
    if c.is_ascii() {
        t[from..from + 1].make_ascii_uppercase();
    } else if c.is_lowercase() {
        let upper: String = c.to_uppercase().collect();
        t.replace_range(from..from + c.len_utf8(), &upper);
    }
}

/// Appends a copy of `t[..len]` to `t`.
fn repeat_prefix(t: &mut String, len: usize) {
    let mut i = 0;
    while i < len {
        let c = t[i..].chars().next().expect("inside the prefix");
        t.push(c);
        i += c.len_utf8();
    }
}

/// Writes the maneuver instruction of a step as a JSON string ("Turn left onto Main Street").
fn write_instruction(out: &mut Out, t: &mut String, s: &Step, arrive: &str) {
    t.clear();
    if s.ferry && s.kind != StepKind::Arrive {
        // The spec's modes are cycling and walking: the words say it is a ferry.
        t.push_str("Take the ferry");
        let r = s.road();
        if !r.is_empty() {
            t.push_str(" (");
            t.push_str(r);
            t.push(')');
        }
        json::string(out, t);
        return;
    }
    phrase_into(t, s, arrive);
    capitalize_from(t, 0);
    if s.push && s.kind != StepKind::Arrive {
        t.push_str(" and walk your bike");
    }
    json::string(out, t);
}

/// The JSON writer: numbers in the API's precisions, escaped strings, no intermediate values;
/// it writes bytes (the route object is only ever ASCII punctuation around UTF-8 strings).
mod json {
    pub type Out = Vec<u8>;

    /// A JSON string, escaped.
    pub fn string(out: &mut Out, s: &str) {
        out.push(b'"');
        let bytes = s.as_bytes();
        let mut from = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let esc: &[u8] = match b {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0..=0x1f => b"",
                _ => continue,
            };
            out.extend_from_slice(&bytes[from..i]);
            if esc.is_empty() {
                out.extend_from_slice(b"\\u00");
                out.push(b"0123456789abcdef"[(b >> 4) as usize]);
                out.push(b"0123456789abcdef"[(b & 15) as usize]);
            } else {
                out.extend_from_slice(esc);
            }
            from = i + 1;
        }
        out.extend_from_slice(&bytes[from..]);
        out.push(b'"');
    }

    /// A literal (a key, punctuation, a keyword).
    pub fn raw(out: &mut Out, s: &str) {
        out.extend_from_slice(s.as_bytes());
    }

    /// Two-digit decimal strings `00` … `99`.
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";

    /// Writes `n` in decimal ending at `buf[end]` (exclusive); returns where it starts.
    fn digits_into(buf: &mut [u8], mut end: usize, mut n: u64) -> usize {
        while n >= 100 {
            let p = (n % 100) as usize * 2;
            n /= 100;
            end -= 2;
            buf[end..end + 2].copy_from_slice(&PAIRS[p..p + 2]);
        }
        if n >= 10 {
            end -= 2;
            buf[end..end + 2].copy_from_slice(&PAIRS[n as usize * 2..n as usize * 2 + 2]);
        } else {
            end -= 1;
            buf[end] = b'0' + n as u8;
        }
        end
    }

    pub fn uint(out: &mut Out, n: u64) {
        let mut buf = [0u8; 20];
        let start = digits_into(&mut buf, 20, n);
        out.extend_from_slice(&buf[start..]);
    }

    pub fn int(out: &mut Out, n: i64) {
        if n < 0 {
            out.push(b'-');
        }
        uint(out, n.unsigned_abs());
    }

    /// `x` rounded half away from zero (a conversion, not a libm call).
    pub fn round_i64(x: f64) -> i64 {
        if x >= 0.0 {
            (x + 0.5) as i64
        } else {
            (x - 0.5) as i64
        }
    }

    /// A number with `D` decimal places at most (`SCALE` = 10^D), trailing zeros dropped (one kept:
    /// `40.0`).
    fn fixed<const D: usize, const SCALE: u64>(out: &mut Out, x: f64) {
        let scaled = x * SCALE as f64;
        if !scaled.is_finite() || scaled.abs() >= 9.0e15 {
            out.extend_from_slice(b"0.0");
            return;
        }
        let v = round_i64(scaled);
        let (whole, mut frac) = (v.unsigned_abs() / SCALE, v.unsigned_abs() % SCALE);
        // Built right to left in one buffer and copied out once: sign, whole part, point, decimals
        // (trailing zeros dropped, one kept).
        let mut buf = [0u8; 40];
        let mut end = 40 - D;
        for i in (end..40).rev() {
            buf[i] = b'0' + (frac % 10) as u8;
            frac /= 10;
        }
        let mut last = 40;
        while last > end + 1 && buf[last - 1] == b'0' {
            last -= 1;
        }
        end -= 1;
        buf[end] = b'.';
        let mut start = digits_into(&mut buf, end, whole);
        if v < 0 {
            start -= 1;
            buf[start] = b'-';
        }
        out.extend_from_slice(&buf[start..last]);
    }

    /// Distances, durations, elevations: to 0.1.
    pub fn num1(out: &mut Out, x: f64) {
        fixed::<1, 10>(out, x);
    }

    /// A `[lon, lat]` position to 1e-6° (about 0.1 m; OSM's own precision is 1e-7).
    pub fn point(out: &mut Out, p: [f64; 2]) {
        out.push(b'[');
        fixed::<6, 1_000_000>(out, p[0]);
        out.push(b',');
        fixed::<6, 1_000_000>(out, p[1]);
        out.push(b']');
    }

    /// A GeoJSON LineString; consecutive positions equal at 1e-6° are written once (a line keeps
    /// two positions at least).
    pub fn line(out: &mut Out, pts: &[[f64; 2]]) {
        out.extend_from_slice(br#"{"type":"LineString","coordinates":["#);
        let key = |p: [f64; 2]| (round_i64(p[0] * 1e6), round_i64(p[1] * 1e6));
        let mut last = None;
        let mut written = 0;
        for &p in pts {
            let k = key(p);
            if last == Some(k) {
                continue;
            }
            if written > 0 {
                out.push(b',');
            }
            point(out, p);
            last = Some(k);
            written += 1;
        }
        if written == 1 {
            out.push(b',');
            point(out, pts[0]);
        }
        out.extend_from_slice(b"]}");
    }

    /// `"key":` (keys are plain ASCII), with the comma before it unless it opens the object.
    pub fn key(out: &mut Out, k: &str) {
        if out.last() != Some(&b'{') {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(k.as_bytes());
        out.extend_from_slice(b"\":");
    }
}

use json::{Out, key, raw};

/// A banner's text block: `{"text", "components", "type", "modifier"?}`.
fn banner_text(
    out: &mut Out,
    text: &str,
    component_type: &str,
    r#type: &str,
    modifier: Option<&str>,
) {
    out.push(b'{');
    key(out, "text");
    json::string(out, text);
    key(out, "components");
    raw(out, "[{");
    key(out, "text");
    json::string(out, text);
    key(out, "type");
    json::string(out, component_type);
    raw(out, "}]");
    key(out, "type");
    json::string(out, r#type);
    if let Some(m) = modifier {
        key(out, "modifier");
        json::string(out, m);
    }
    out.push(b'}');
}

/// The primary (or `sub`) banner for the maneuver of step `s`.
fn banner_for(out: &mut Out, t: &mut String, s: &Step, arrive: &str) {
    let r = s.road();
    let named = s.kind != StepKind::Arrive && s.kind != StepKind::Roundabout && !r.is_empty();
    let text = if s.kind == StepKind::Arrive {
        arrive
    } else if named {
        r
    } else {
        t.clear();
        action_into(t, s);
        capitalize_from(t, 0);
        t.as_str()
    };
    banner_text(
        out,
        text,
        if named { "road-name" } else { "text" },
        maneuver_type(s.kind),
        s.modifier,
    );
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

/// Writes one step: maneuver, geometry, attributes, voice and banner instructions. Voice
/// instructions carry plain text; the spec's optional `ssml_announcement` is not sent (it would add a
/// third to the response for a wrapper any client can add).
fn write_step(
    out: &mut Out,
    t: &mut String,
    steps: &[Step],
    i: usize,
    profile: Profile,
    arrive: &str,
) {
    let cycling = profile == Profile::Cycling;
    let s = &steps[i];
    let next = steps.get(i + 1);
    let after = steps.get(i + 2);
    let compound = matches!((next, after), (Some(n), Some(a))
        if n.kind != StepKind::Arrive && a.kind != StepKind::Arrive && round1(n.distance_m) < COMPOUND_M);
    let arrival = s.kind == StepKind::Arrive;
    out.push(b'{');
    key(out, "distance");
    json::num1(out, s.distance_m);
    key(out, "duration");
    json::num1(out, s.duration_s);
    key(out, "delta_elevation");
    json::num1(out, s.delta_elevation_m);
    key(out, "geometry");
    json::line(out, &s.geometry);
    key(out, "name");
    json::string(out, s.road());
    key(out, "mode");
    raw(
        out,
        if cycling {
            "\"cycling\""
        } else {
            "\"walking\""
        },
    );
    // The deprecated code on every step, walking too; the classification is cycling-only.
    key(out, "safety_code");
    json::uint(out, s.safety_class.safety_code() as u64);
    if cycling && !arrival {
        key(out, "safety_classification");
        json::string(out, s.safety_class.api_name());
    }
    key(out, "exits");
    match (s.kind, s.exit) {
        (StepKind::Roundabout, Some(e)) => {
            out.push(b'"');
            json::uint(out, e as u64);
            out.push(b'"');
        }
        _ => raw(out, "\"\""),
    }
    key(out, "maneuver");
    out.push(b'{');
    key(out, "type");
    json::string(out, maneuver_type(s.kind));
    if let Some(m) = s.modifier {
        key(out, "modifier");
        json::string(out, m);
    }
    key(out, "instruction");
    write_instruction(out, t, s, arrive);
    key(out, "location");
    json::point(out, s.location);
    key(out, "bearing_before");
    json::int(out, s.bearing_before.round() as i64);
    key(out, "bearing_after");
    json::int(out, s.bearing_after.round() as i64);
    out.push(b'}');
    key(out, "cycle_routes");
    if s.cycle_routes.is_empty() {
        raw(out, "null");
    } else {
        out.push(b'[');
        for (k, r) in s.cycle_routes.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            json::string(out, r);
        }
        out.push(b']');
    }
    if cycling {
        key(out, "lit");
        raw(out, if s.lit { "true" } else { "false" });
    }
    key(out, "voice_instructions");
    out.push(b'[');
    if let Some(n) = next {
        // The announcement: the next maneuver, and the one after it when that follows closely.
        // The plain phrase is built in the buffer; each cue's text is built after it and written
        // from there.
        t.clear();
        phrase_into(t, n, arrive);
        if compound {
            t.push_str(", then ");
            phrase_into(t, after.expect("compound has a follow-up"), arrive);
        }
        let plain = t.len();
        let cues = cue_distances(s.distance_m);
        let several = cues.len() > 1;
        for (k, &d) in cues.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            out.push(b'{');
            key(out, "distance_along_geometry");
            json::num1(out, d);
            key(out, "announcement");
            t.truncate(plain);
            if several && k == 0 && n.kind != StepKind::Arrive {
                // "Continue on Park Row, then turn left onto …".
                let r = s.road();
                t.push_str(if r.is_empty() {
                    "Continue"
                } else {
                    "Continue on "
                });
                t.push_str(r);
                t.push_str(", then ");
                repeat_prefix(t, plain);
            } else {
                repeat_prefix(t, plain);
                capitalize_from(t, t.len() - plain);
            }
            json::string(out, &t[plain..]);
            out.push(b'}');
        }
    }
    out.push(b']');
    key(out, "banner_instructions");
    out.push(b'[');
    if let Some(n) = next {
        out.push(b'{');
        key(out, "distance_along_geometry");
        json::num1(out, s.distance_m);
        key(out, "primary");
        banner_for(out, t, n, arrive);
        if n.kind != StepKind::Arrive
            && !n.r#ref.is_empty()
            && !n.name.is_empty()
            && n.r#ref != n.name
        {
            key(out, "secondary");
            banner_text(out, &n.r#ref, "text", maneuver_type(n.kind), None);
        }
        if compound && let Some(a) = after {
            key(out, "sub");
            banner_for(out, t, a, arrive);
        }
        out.push(b'}');
    }
    out.push(b']');
    out.push(b'}');
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
    let mut out: Out = Vec::with_capacity(route_size_hint(legs));
    write_route(&mut out, legs, profile);
    // Every byte written is ASCII or comes whole from a `&str`.
    String::from_utf8(out).expect("the route JSON is UTF-8")
}

/// About how many bytes a route object takes (about 1 kB a step and 40 bytes a position), to size
/// a buffer once.
pub fn route_size_hint(legs: &[WordedLeg]) -> usize {
    512 + legs
        .iter()
        .map(|l| {
            l.steps.len() * 1024
                + 40 * (l.geometry.len() + l.steps.iter().map(|s| s.geometry.len()).sum::<usize>())
        })
        .sum::<usize>()
}

/// Appends `[{"name": …, "location": [lon, lat]}, …]`: snapped waypoints as the API shows them.
pub fn write_waypoints<'a>(
    out: &mut Vec<u8>,
    waypoints: impl IntoIterator<Item = (&'a str, [f64; 2])>,
) {
    out.push(b'[');
    for (i, (name, location)) in waypoints.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'{');
        key(out, "name");
        json::string(out, name);
        key(out, "location");
        json::point(out, location);
        out.push(b'}');
    }
    out.push(b']');
}

/// Appends the directions v2 `route` object as JSON to `out`.
pub fn write_route(out: &mut Vec<u8>, legs: &[WordedLeg], profile: Profile) {
    let sum = |f: fn(&WordedLeg) -> f64| legs.iter().map(f).sum::<f64>();
    out.push(b'{');
    key(out, "distance");
    json::num1(out, sum(|l| l.distance_m));
    key(out, "duration");
    json::num1(out, sum(|l| l.duration_s));
    key(out, "elevation_gain");
    json::num1(out, sum(|l| l.elevation_gain_m));
    key(out, "elevation_loss");
    json::num1(out, sum(|l| l.elevation_loss_m));
    // Deprecated: the mean code of the steps (arrivals aside).
    let codes: Vec<u8> = legs
        .iter()
        .flat_map(|l| l.steps.iter())
        .filter(|s| s.kind != StepKind::Arrive)
        .map(|s| s.safety_class.safety_code())
        .collect();
    key(out, "safety_code");
    json::num1(
        out,
        if codes.is_empty() {
            0.0
        } else {
            codes.iter().map(|&c| f64::from(c)).sum::<f64>() / codes.len() as f64
        },
    );
    key(out, "geometry");
    let whole: Vec<[f64; 2]>;
    let geometry = if legs.len() == 1 {
        legs[0].geometry
    } else {
        whole = legs
            .iter()
            .flat_map(|l| l.geometry.iter().copied())
            .collect();
        &whole
    };
    if geometry.is_empty() {
        raw(out, r#"{"type":"LineString","coordinates":[]}"#);
    } else {
        json::line(out, geometry);
    }
    key(out, "steps");
    out.push(b'[');
    let mut scratch = String::with_capacity(256);
    let mut first = true;
    for (i, leg) in legs.iter().enumerate() {
        let arrive = if i + 1 == legs.len() {
            "Arrive at destination".to_string()
        } else {
            format!("Arrive at waypoint {}", i + 2)
        };
        for k in 0..leg.steps.len() {
            if !first {
                out.push(b',');
            }
            first = false;
            write_step(out, &mut scratch, leg.steps, k, profile, &arrive);
        }
    }
    out.push(b']');
    key(out, "stops");
    out.push(b'[');
    for (k, st) in legs.iter().flat_map(|l| l.stops.iter()).enumerate() {
        if k > 0 {
            out.push(b',');
        }
        out.push(b'{');
        key(out, "stop_type");
        raw(
            out,
            match st.control {
                TrafficControl::Signals => "\"traffic_signal\"",
                TrafficControl::Stop => "\"stop_sign\"",
                _ => "\"give_way\"",
            },
        );
        key(out, "location");
        json::point(out, st.location);
        out.push(b'}');
    }
    raw(out, "]}");
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
        let ordinal = |n| {
            let mut t = String::new();
            ordinal_into(&mut t, n);
            t
        };
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
