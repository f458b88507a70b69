//! Turn-by-turn guidance for a planned leg, apart from the search (after OSRM's guidance): the
//! travelled arcs are cut into steps where the road's name changes, where the rider turns at a
//! junction that offers a choice, at roundabouts (one step for the whole ring, with the exit
//! number counted from the ring's junctions) and at U-turns; each step carries its maneuver
//! (type, modifier, bearings), its geometry and the attributes the API reports. Words (instructions,
//! voice and banners) are the server's business.

use crate::city::{ArcPiece, City, Leg, Profile};
use crate::geo::EARTH_RADIUS_M;
use crate::graph::{ArcId, BikeAccess, SafetyClass, TrafficControl, way_flags};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    Depart,
    Turn,
    Continue,
    Roundabout,
    UTurn,
    Arrive,
}

impl StepKind {
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Depart => "depart",
            StepKind::Turn => "turn",
            StepKind::Continue => "continue",
            StepKind::Roundabout => "roundabout",
            StepKind::UTurn => "uturn",
            StepKind::Arrive => "arrive",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Step {
    pub kind: StepKind,
    /// `straight`, `slight left`, `left`, `sharp left`, … `uturn`; `None` when the maneuver has no
    /// direction (depart, arrive).
    pub modifier: Option<&'static str>,
    pub location: [f64; 2],
    /// Heading at the end of the previous step's geometry (0 on the depart step).
    pub bearing_before: f64,
    /// Heading at the start of this step's geometry (0 on the arrive step).
    pub bearing_after: f64,
    pub geometry: Vec<[f64; 2]>,
    pub distance_m: f64,
    pub duration_s: f64,
    pub delta_elevation_m: f64,
    /// Metres climbed and descended along the step (0 without elevation data).
    pub gain_m: f64,
    pub loss_m: f64,
    pub name: String,
    pub r#ref: String,
    /// Dominant safety class by distance (cycling steps).
    pub safety_class: SafetyClass,
    pub cycle_routes: Vec<String>,
    /// Whether most of the step's length is lit.
    pub lit: bool,
    /// Roundabout exit number (1-based).
    pub exit: Option<u32>,
    /// Whether part of the step is walked (pushing the bike).
    pub push: bool,
    pub arcs: Vec<ArcId>,
}

impl Step {
    /// A step of no length at a point (a departure that goes nowhere, an arrival).
    fn standing(kind: StepKind, at: [f64; 2]) -> Step {
        Step {
            kind,
            modifier: None,
            location: at,
            bearing_before: 0.0,
            bearing_after: 0.0,
            geometry: vec![at, at],
            distance_m: 0.0,
            duration_s: 0.0,
            delta_elevation_m: 0.0,
            gain_m: 0.0,
            loss_m: 0.0,
            name: String::new(),
            r#ref: String::new(),
            safety_class: SafetyClass::Shared,
            cycle_routes: vec![],
            lit: false,
            exit: None,
            push: false,
            arcs: vec![],
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stop {
    pub control: TrafficControl,
    pub location: [f64; 2],
}

/// A turn smaller than this keeps a step going on the same road.
const SAME_ROAD_TURN_DEG: f64 = 45.0;

/// The modifier of a turn from one heading to another.
pub fn modifier(before: f64, after: f64) -> &'static str {
    let d = turn_angle(before, after);
    let a = d.abs();
    let side = |l: &'static str, r: &'static str| if d < 0.0 { l } else { r };
    if a <= 20.0 {
        "straight"
    } else if a <= 50.0 {
        side("slight left", "slight right")
    } else if a <= 125.0 {
        side("left", "right")
    } else if a <= 165.0 {
        side("sharp left", "sharp right")
    } else {
        "uturn"
    }
}

/// Signed turn in degrees, (-180, 180], positive to the right.
pub fn turn_angle(before: f64, after: f64) -> f64 {
    let mut d = (after - before) % 360.0;
    if d > 180.0 {
        d -= 360.0;
    } else if d <= -180.0 {
        d += 360.0;
    }
    d
}

/// Headings and lengths at street scale in a local equirectangular plane (one cosine per leg, no
/// trigonometry per segment); within a city this differs from the great-circle initial bearing by
/// far less than the degree the API rounds bearings to.
#[derive(Clone, Copy)]
struct Plane {
    /// Metres per degree of longitude and of latitude.
    mx: f64,
    my: f64,
}

impl Plane {
    fn at(lat: f64) -> Plane {
        let my = EARTH_RADIUS_M * std::f64::consts::PI / 180.0;
        Plane {
            mx: my * lat.to_radians().cos(),
            my,
        }
    }

    fn delta(self, a: [f64; 2], b: [f64; 2]) -> (f64, f64) {
        ((b[0] - a[0]) * self.mx, (b[1] - a[1]) * self.my)
    }

    /// Heading from `a` to `b`, degrees [0, 360).
    fn bearing(self, a: [f64; 2], b: [f64; 2]) -> f64 {
        let (dx, dy) = self.delta(a, b);
        let deg = dx.atan2(dy).to_degrees();
        if deg < 0.0 { deg + 360.0 } else { deg }
    }

    fn longer_than_a_metre(self, a: [f64; 2], b: [f64; 2]) -> bool {
        let (dx, dy) = self.delta(a, b);
        dx * dx + dy * dy > 1.0
    }

    /// Heading of a polyline's start (first segment longer than a metre, else the first).
    fn start_bearing(self, pts: &[[f64; 2]]) -> f64 {
        for w in pts.windows(2) {
            if self.longer_than_a_metre(w[0], w[1]) {
                return self.bearing(w[0], w[1]);
            }
        }
        match pts {
            [a, b, ..] => self.bearing(*a, *b),
            _ => 0.0,
        }
    }

    /// Heading of a polyline's end (last segment longer than a metre, else the last).
    fn end_bearing(self, pts: &[[f64; 2]]) -> f64 {
        for w in pts.windows(2).rev() {
            if self.longer_than_a_metre(w[0], w[1]) {
                return self.bearing(w[0], w[1]);
            }
        }
        match pts {
            [.., a, b] => self.bearing(*a, *b),
            _ => 0.0,
        }
    }
}

/// One travelled piece with what the step builder needs.
struct Piece {
    arc: ArcId,
    /// The piece's positions: a range of the leg's shared position buffer.
    geometry: std::ops::Range<usize>,
    distance: f64,
    duration: f64,
    delta_elevation: f64,
    gain: f64,
    loss: f64,
    way: u32,
    ring: bool,
    class: SafetyClass,
    lit: bool,
    push: bool,
    /// Whether the piece ends at its arc's head (a junction), not inside the arc.
    reaches_head: bool,
}

impl City {
    fn usable(&self, arc: ArcId, profile: Profile) -> bool {
        let a = self.graph.arc_attrs[arc as usize];
        match profile {
            Profile::Cycling => a.bike() != BikeAccess::No,
            Profile::Walking => a.foot(),
        }
    }

    /// Arcs leaving `arc`'s head that the profile may take, other than going back.
    fn choices_after(&self, arc: ArcId, profile: Profile) -> impl Iterator<Item = ArcId> + '_ {
        let head = self.graph.arc_head(arc) as usize;
        let adj = &self.adjacency;
        (adj.first_out[head]..adj.first_out[head + 1])
            .map(move |i| adj.arc[i as usize])
            .filter(move |&a| a ^ 1 != arc && self.usable(a, profile))
    }

    /// Steps and traffic-control stops of a leg from `origin` (the snapped waypoint); the first step
    /// departs (a zero-length one when the leg has no length), the last arrives.
    pub fn guidance(
        &self,
        leg: &Leg,
        origin: [f64; 2],
        profile: Profile,
        ebike: bool,
    ) -> (Vec<Step>, Vec<Stop>) {
        let g = &self.graph;
        let model = self.model();
        let elevation = g.city.as_ref().is_some_and(|c| c.elevation_known);
        let plane = Plane::at(origin[1]);
        // Every piece's positions go into one buffer (a range each): no allocation per piece.
        let mut shape: Vec<[f64; 2]> = Vec::with_capacity(leg.pieces.len() * 4);
        let mut scratch = Vec::with_capacity(16);
        let pieces: Vec<Piece> = leg
            .pieces
            .iter()
            .filter(|p| p.to > p.from)
            .map(|p: &ArcPiece| {
                let frac = p.to - p.from;
                let from = shape.len();
                self.append_piece_geometry(p, &mut scratch, &mut shape, from);
                let way = g.arc_way(p.arc);
                let attrs = g.arc_attrs[p.arc as usize];
                let (tail, head) = (g.arc_tail(p.arc), g.arc_head(p.arc));
                let (et, eh) = (
                    g.node_elevation[tail as usize],
                    g.node_elevation[head as usize],
                );
                Piece {
                    arc: p.arc,
                    geometry: from..shape.len(),
                    distance: g.arc_length_m(p.arc) as f64 * frac,
                    duration: model.duration_s(g, p.arc, profile == Profile::Cycling, ebike) * frac,
                    delta_elevation: if elevation && et.is_finite() && eh.is_finite() {
                        (eh - et) as f64 * frac
                    } else {
                        0.0
                    },
                    gain: if elevation {
                        g.arc_climb_m(p.arc) as f64 * frac
                    } else {
                        0.0
                    },
                    loss: if elevation {
                        g.arc_descent_m(p.arc) as f64 * frac
                    } else {
                        0.0
                    },
                    way,
                    ring: g.way_flags[way as usize] & way_flags::ROUNDABOUT != 0,
                    class: attrs.safety_class(),
                    lit: g.way_flags[way as usize] & way_flags::LIT != 0,
                    push: profile == Profile::Cycling && attrs.bike() == BikeAccess::Push,
                    reaches_head: p.to >= 1.0,
                }
            })
            .collect();
        let geo = |p: &Piece| &shape[p.geometry.clone()];
        let name_of = |w: u32| {
            (
                g.string(g.way_name[w as usize]).to_string(),
                g.string(g.way_ref[w as usize]).to_string(),
            )
        };

        // Cut the pieces into runs: [start, end) with the kind of maneuver that starts each.
        let mut runs: Vec<(usize, usize, StepKind)> = Vec::new();
        let mut start = 0;
        let mut kind = StepKind::Depart;
        for i in 1..pieces.len() {
            let (prev, cur) = (&pieces[i - 1], &pieces[i]);
            let boundary = if cur.ring != prev.ring {
                // Entering a roundabout starts its step; leaving it starts the road taken.
                Some(if cur.ring {
                    StepKind::Roundabout
                } else {
                    StepKind::Continue
                })
            } else if cur.ring {
                None
            } else {
                let angle = turn_angle(plane.end_bearing(geo(prev)), plane.start_bearing(geo(cur)));
                let renamed = (g.way_name[prev.way as usize], g.way_ref[prev.way as usize])
                    != (g.way_name[cur.way as usize], g.way_ref[cur.way as usize]);
                if cur.arc == prev.arc ^ 1 || angle.abs() > 165.0 {
                    Some(StepKind::UTurn)
                } else if renamed {
                    Some(StepKind::Turn)
                } else if angle.abs() >= SAME_ROAD_TURN_DEG
                    && self.choices_after(prev.arc, profile).count() > 1
                {
                    // The same road bends at a junction with other ways on: say so.
                    Some(StepKind::Turn)
                } else {
                    None
                }
            };
            if let Some(k) = boundary {
                runs.push((start, i, kind));
                start = i;
                kind = k;
            }
        }
        if !pieces.is_empty() {
            runs.push((start, pieces.len(), kind));
        }

        let mut steps: Vec<Step> = Vec::with_capacity(runs.len() + 1);
        for (ri, &(s, e, kind)) in runs.iter().enumerate() {
            let run = &pieces[s..e];
            let mut geometry: Vec<[f64; 2]> =
                Vec::with_capacity(run.iter().map(|p| p.geometry.len()).sum::<usize>() + 1);
            for p in run {
                for &q in geo(p) {
                    if geometry.last() != Some(&q) {
                        geometry.push(q);
                    }
                }
            }
            if geometry.len() == 1 {
                geometry.push(geometry[0]);
            }
            // Attributes: those of the longest way in the run (the road the step is on); on a
            // roundabout, the road taken is named by the next step, so the step names the ring.
            let mut by_class = [0.0f64; 6];
            let (mut lit_m, mut total) = (0.0, 0.0);
            let mut longest = (0.0, run[0].way);
            for p in run {
                by_class[p.class as usize] += p.distance;
                total += p.distance;
                if p.lit {
                    lit_m += p.distance;
                }
                if p.distance > longest.0 {
                    longest = (p.distance, p.way);
                }
            }
            let class = SafetyClass::ALL
                .into_iter()
                .max_by(|a, b| by_class[*a as usize].total_cmp(&by_class[*b as usize]))
                .unwrap_or(SafetyClass::Shared);
            let (name, r#ref) = name_of(longest.1);
            let bearing_before = if ri == 0 {
                0.0
            } else {
                plane.end_bearing(&steps[ri - 1].geometry)
            };
            let bearing_after = plane.start_bearing(&geometry);
            let (kind, modifier) = match kind {
                StepKind::Depart => (kind, None),
                StepKind::UTurn => (kind, Some("uturn")),
                StepKind::Roundabout => {
                    // The exit direction: from the heading entering the ring to the heading
                    // leaving it (the start of the next run).
                    let leave = runs
                        .get(ri + 1)
                        .map(|&(ns, _, _)| plane.start_bearing(geo(&pieces[ns])))
                        .unwrap_or_else(|| plane.end_bearing(&geometry));
                    (kind, Some(modifier(bearing_before, leave)))
                }
                _ => {
                    let m = modifier(bearing_before, bearing_after);
                    let k = if m == "straight" {
                        StepKind::Continue
                    } else if m == "uturn" {
                        StepKind::UTurn
                    } else {
                        StepKind::Turn
                    };
                    (k, Some(m))
                }
            };
            let exit = (kind == StepKind::Roundabout).then(|| {
                // Junctions passed on the ring that offer a way off it, plus the one taken.
                let passed = run[..run.len() - 1]
                    .iter()
                    .filter(|p| p.reaches_head)
                    .filter(|p| {
                        self.choices_after(p.arc, profile).any(|a| {
                            g.way_flags[g.arc_way(a) as usize] & way_flags::ROUNDABOUT == 0
                        })
                    })
                    .count();
                passed as u32 + 1
            });
            steps.push(Step {
                kind,
                modifier,
                location: geometry[0],
                bearing_before,
                bearing_after,
                distance_m: total,
                duration_s: run.iter().map(|p| p.duration).sum(),
                delta_elevation_m: run.iter().map(|p| p.delta_elevation).sum(),
                gain_m: run.iter().map(|p| p.gain).sum(),
                loss_m: run.iter().map(|p| p.loss).sum(),
                name,
                r#ref,
                safety_class: class,
                cycle_routes: g.route_names(longest.1).map(str::to_string).collect(),
                lit: total > 0.0 && lit_m * 2.0 >= total,
                exit,
                push: run.iter().any(|p| p.push),
                arcs: run.iter().map(|p| p.arc).collect(),
                geometry,
            });
        }

        if steps.is_empty() {
            // Start and end snapped to the same place: depart and arrive there.
            let first = leg.pieces.first();
            let (name, r#ref) = first.map(|p| name_of(g.arc_way(p.arc))).unwrap_or_default();
            steps.push(Step {
                name,
                r#ref,
                safety_class: first.map_or(SafetyClass::Shared, |p| {
                    g.arc_attrs[p.arc as usize].safety_class()
                }),
                ..Step::standing(StepKind::Depart, origin)
            });
        }
        // Arrival: on the last step's road, where its geometry ends.
        let prev = steps.last().expect("a departure step exists");
        let last = *prev.geometry.last().unwrap_or(&prev.location);
        let arrive = Step {
            bearing_before: plane.end_bearing(&prev.geometry),
            name: prev.name.clone(),
            r#ref: prev.r#ref.clone(),
            safety_class: prev.safety_class,
            cycle_routes: prev.cycle_routes.clone(),
            lit: prev.lit,
            ..Step::standing(StepKind::Arrive, last)
        };
        steps.push(arrive);

        // Stops: traffic control met on the way, where it applies to the direction travelled.
        let mut stops = Vec::new();
        for p in &pieces {
            if !p.reaches_head || !g.arc_attrs[p.arc as usize].head_control() {
                continue;
            }
            let head = g.arc_head(p.arc);
            let control = TrafficControl::from_u8(g.node_control[head as usize]);
            if control != TrafficControl::None {
                stops.push(Stop {
                    control,
                    location: g.node_lon_lat(head),
                });
            }
        }
        (steps, stops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modifiers_follow_the_turn_angle() {
        assert_eq!(modifier(0.0, 5.0), "straight");
        assert_eq!(modifier(350.0, 10.0), "straight");
        assert_eq!(modifier(0.0, 90.0), "right");
        assert_eq!(modifier(90.0, 0.0), "left");
        assert_eq!(modifier(0.0, 40.0), "slight right");
        assert_eq!(modifier(0.0, 220.0), "sharp left");
        assert_eq!(modifier(10.0, 185.0), "uturn");
        assert!((turn_angle(350.0, 10.0) - 20.0).abs() < 1e-9);
        assert!((turn_angle(10.0, 350.0) + 20.0).abs() < 1e-9);
    }
}
