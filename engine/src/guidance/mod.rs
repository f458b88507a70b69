//! Turn-by-turn guidance for a planned leg, apart from the search (after OSRM's guidance, which
//! keeps its `guidance/` apart from the routing core). Three stages, each in its own file:
//!
//! 1. **Maneuvers** (here): the travelled arcs become pieces on one leg-long polyline
//!    ([`geometry::Line`]), and the leg is cut at every junction that might need words: a change of
//!    road name, a turn at a junction where the road taken is not the obvious way on, a reversal, a
//!    roundabout's entry and exit. Headings are read over 15 m of road either side of a junction.
//! 2. **Collapse passes** ([`passes`]): small named passes over the cut list, each with its reason in
//!    docs/guidance.md, fold what a rider would not hear as a maneuver: a waypoint on a junction, short
//!    unnamed links (crossings, slip lanes, sidewalk hops), other very short stretches (staggered
//!    junctions), staying on the same road, obvious name changes and short new-name stretches.
//! 3. **Steps** (here): each remaining stretch gets its maneuver (type, modifier from the turn angle,
//!    bearings; a U-turn only where the rider really turns back), its geometry and the attributes the
//!    API reports; roundabout exits are counted as a rider counts them ([`roundabout`]).
//!
//! [`words`] writes the steps as the API's instructions, voice and banners.

pub mod geometry;
pub(crate) mod passes;
pub(crate) use passes::COMPASS_WORDS;
mod roundabout;
#[cfg(test)]
mod tests;
pub mod words;

pub use geometry::{modifier, turn_angle};

use crate::city::{City, Leg, Profile};
use crate::graph::{ArcId, BikeAccess, SafetyClass, TrafficControl, way_flags};
use geometry::{Line, Plane};
use passes::Seg;

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
    /// Whether the step crosses on a ferry (`route=ferry`).
    pub ferry: bool,
    /// Whether the step keeps to the named road of the step before: a corner where the road turns
    /// and another way runs straight on, worded "Turn left to stay on …" (type `Continue`), never
    /// "turn onto" the road already ridden.
    pub same_road: bool,
    pub arcs: Vec<ArcId>,
}

impl Step {
    /// The road as the words name it: its name, else its ref ("" when it has neither).
    pub fn road(&self) -> &str {
        if self.name.is_empty() {
            &self.r#ref
        } else {
            &self.name
        }
    }

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
            ferry: false,
            same_road: false,
            arcs: vec![],
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stop {
    pub control: TrafficControl,
    pub location: [f64; 2],
}

/// One travelled piece with what the passes and the step builder need.
pub(crate) struct Piece {
    arc: ArcId,
    /// The piece's positions: a range of the leg's line (the first one shared with the piece before).
    span: std::ops::Range<usize>,
    distance: f64,
    duration: f64,
    delta_elevation: f64,
    gain: f64,
    loss: f64,
    way: u32,
    /// The road as a rider reads it on the sign: the way's name (string id) and 0, or for an unnamed
    /// way 0 and its ref. A ref that comes and goes along a named street is the same street.
    name: (u32, u32),
    ring: bool,
    class: SafetyClass,
    lit: bool,
    push: bool,
    ferry: bool,
    /// Whether the piece ends at its arc's head (a junction), not inside the arc.
    reaches_head: bool,
}

/// What the junction before a piece offers (unused on the first piece). Worked out only where the
/// cut needs it: a turn of the same road.
#[derive(Clone, Copy)]
pub(crate) struct Junction {
    /// The turn taken, degrees, positive to the right (headings over 15 m either side).
    angle: f64,
    /// The path turns back along the arc it came on.
    reversal: bool,
    /// The way taken is the way on a rider would take without being told: no other way the profile
    /// may use is as straight.
    obvious: bool,
    /// At a fork (the way taken and another both lie ahead, within [`passes::FORK_DEG`] of straight
    /// on, and neither keeps the road's name), which branch is taken: `slight left` for the
    /// leftmost, `slight right` for the rightmost, `straight` for one between them.
    pub(crate) fork: Option<&'static str>,
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
        let plane = Plane::at(origin[1]);
        let (pieces, line) = self.pieces(leg, plane, profile, ebike);
        let junctions = self.junctions(&pieces, &line, profile);
        let segs = passes::run(
            cut(&pieces, &junctions),
            &pieces,
            &junctions,
            &line,
            &self.graph,
            &self.adjacency,
        );
        let mut steps = self.steps(&segs, &pieces, &junctions, &line, profile);

        if steps.is_empty() {
            // Start and end snapped to the same place: depart and arrive there.
            let g = &self.graph;
            let first = leg.pieces.first();
            let (name, r#ref) = first
                .map(|p| self.name_of(g.arc_way(p.arc)))
                .unwrap_or_default();
            steps.push(Step {
                name,
                r#ref,
                safety_class: first.map_or(SafetyClass::Shared, |p| {
                    g.arc_attrs[p.arc as usize].safety_class()
                }),
                ..Step::standing(StepKind::Depart, origin)
            });
        }
        // Arrival: on the last step's road, where its geometry ends; named by the last way ridden
        // when that is the step's road under a variant of its name the steps do not announce (`42
        // N` to `42 S`, an unnamed `US 75` into `Central Expressway` signed `US 75`): the
        // destination is on that street.
        let prev = steps.last().expect("a departure step exists");
        let last = *prev.geometry.last().unwrap_or(&prev.location);
        let (mut name, mut r#ref) = (prev.name.clone(), prev.r#ref.clone());
        if let (Some(p), Some(seg)) = (pieces.last(), segs.last()) {
            let (n, r) = self.name_of(p.way);
            let structure = pieces[seg.first..seg.end].iter().any(|q| {
                self.graph.way_flags[q.way as usize] & (way_flags::BRIDGE | way_flags::TUNNEL) != 0
            });
            if !n.is_empty()
                && n != name
                && passes::same_road_named(&name, &r#ref, &n, &r, structure)
            {
                (name, r#ref) = (n, r);
            }
        }
        let arrive = Step {
            bearing_before: plane.end_bearing(&prev.geometry),
            name,
            r#ref,
            safety_class: prev.safety_class,
            cycle_routes: prev.cycle_routes.clone(),
            lit: prev.lit,
            ..Step::standing(StepKind::Arrive, last)
        };
        steps.push(arrive);
        (steps, self.stops(&pieces))
    }

    fn name_of(&self, way: u32) -> (String, String) {
        let g = &self.graph;
        (
            g.string(g.way_name[way as usize]).to_string(),
            g.string(g.way_ref[way as usize]).to_string(),
        )
    }

    /// The leg's travelled pieces (those of some length) and its shape as one line.
    fn pieces(&self, leg: &Leg, plane: Plane, profile: Profile, ebike: bool) -> (Vec<Piece>, Line) {
        let g = &self.graph;
        let model = self.model();
        let elevation = g.city.as_ref().is_some_and(|c| c.elevation_known);
        let mut shape: Vec<[f64; 2]> = Vec::with_capacity(leg.pieces.len() * 4);
        let (mut scratch, mut own) = (Vec::with_capacity(16), Vec::with_capacity(16));
        let mut pieces = Vec::with_capacity(leg.pieces.len());
        for p in leg.pieces.iter().filter(|p| p.to > p.from) {
            let frac = p.to - p.from;
            own.clear();
            self.append_piece_geometry(p, &mut scratch, &mut own, 0);
            let start = match (shape.last(), own.first()) {
                (Some(a), Some(b)) if a == b => shape.len() - 1,
                _ => shape.len(),
            };
            shape.extend(own.iter().skip(shape.len() - start));
            let way = g.arc_way(p.arc);
            let attrs = g.arc_attrs[p.arc as usize];
            let (tail, head) = (g.arc_tail(p.arc), g.arc_head(p.arc));
            let (et, eh) = (
                g.node_elevation[tail as usize],
                g.node_elevation[head as usize],
            );
            let climb = |x: f32| if elevation { x as f64 * frac } else { 0.0 };
            pieces.push(Piece {
                arc: p.arc,
                span: start..shape.len(),
                distance: g.arc_length_m(p.arc) as f64 * frac,
                duration: model.duration_s(g, p.arc, profile == Profile::Cycling, ebike) * frac,
                delta_elevation: if elevation && et.is_finite() && eh.is_finite() {
                    (eh - et) as f64 * frac
                } else {
                    0.0
                },
                gain: climb(g.arc_climb_m(p.arc)),
                loss: climb(g.arc_descent_m(p.arc)),
                way,
                name: match (g.way_name[way as usize], g.way_ref[way as usize]) {
                    (0, r) => (0, r),
                    (n, _) => (n, 0),
                },
                ring: g.way_flags[way as usize] & way_flags::ROUNDABOUT != 0,
                class: attrs.safety_class(),
                lit: g.way_flags[way as usize] & way_flags::LIT != 0,
                push: profile == Profile::Cycling && attrs.bike() == BikeAccess::Push,
                ferry: g.way_flags[way as usize] & way_flags::FERRY != 0,
                reaches_head: p.to >= 1.0,
            });
        }
        (pieces, Line::new(plane, shape))
    }

    /// The junction before each piece: the turn taken and whether it is the obvious way on.
    fn junctions(&self, pieces: &[Piece], line: &Line, profile: Profile) -> Vec<Junction> {
        let mut out = vec![
            Junction {
                angle: 0.0,
                reversal: false,
                obvious: true,
                fork: None,
            };
            pieces.len()
        ];
        let mut shape = Vec::with_capacity(16);
        for i in 1..pieces.len() {
            let (prev, cur) = (&pieces[i - 1], &pieces[i]);
            let reversal = cur.arc == prev.arc ^ 1;
            if reversal {
                out[i].reversal = true;
                continue;
            }
            if !cur.ring && !prev.ring && prev.reaches_head {
                out[i].fork = self.fork(prev, cur, line, profile, &mut shape);
            }
            // Only a turn on the same road needs more (a change of road is cut anyway, a ring is
            // its own step): whether it is a bend to follow or a corner to announce.
            if cur.name != prev.name || cur.ring || prev.ring || !prev.reaches_head {
                continue;
            }
            // riding, a footway the bike would be pushed along is no way on; staying on a named
            // road, an unnamed way (an alley, a path, a driveway) straighter than the road's bend is
            // no way on either: the road is what a rider follows. Nor is a service road (a
            // driveway, a parking aisle) off a road that is not one, named or not, as OSRM leaves
            // low-priority roads out.
            let riding = |a: ArcId| self.graph.arc_attrs[a as usize].bike() == BikeAccess::Ride;
            let rides_on = profile == Profile::Cycling && riding(cur.arc);
            let named = |a: ArcId| {
                let w = self.graph.arc_way(a) as usize;
                self.graph.way_name[w] != 0 || self.graph.way_ref[w] != 0
            };
            let service = |w: u32| self.graph.way_flags[w as usize] & way_flags::SERVICE != 0;
            let on_service = service(prev.way) || service(cur.way);
            let follows_road = cur.name != (0, 0);
            let mut others = self.choices_after(prev.arc, profile).filter(|&a| {
                a != cur.arc
                    && (!rides_on || riding(a))
                    && (!follows_road || named(a))
                    && (on_service || !service(self.graph.arc_way(a)))
            });
            let Some(first_other) = others.next() else {
                // No other way on: a bend, never a maneuver.
                continue;
            };
            let before = line.heading_into(cur.span.start);
            let angle = turn_angle(before, line.heading_out_of(cur.span.start));
            out[i].angle = angle;
            if angle.abs() < passes::SAME_ROAD_TURN_DEG {
                continue;
            }
            // The straightest other way (headings over 15 m of each).
            let straightest_other = std::iter::once(first_other)
                .chain(others)
                .map(|a| {
                    shape.clear();
                    self.graph.arc_geometry(a, &mut shape);
                    turn_angle(before, line.plane.start_bearing(&shape)).abs()
                })
                .fold(f64::INFINITY, f64::min);
            out[i].obvious = angle.abs() < straightest_other;
        }
        out
    }

    /// Which branch of a fork the path takes, if the junction before `cur` is one: the way taken
    /// and at least one other way the rider would ride lie ahead (within [`passes::FORK_DEG`] of
    /// straight on) and none of them keeps the road's name (a road that goes on by name is followed,
    /// and a way off it is a turn by its angle). The branches are told apart by side, as OSRM words
    /// a fork: the leftmost is `slight left`, the rightmost `slight right`, one between `straight`,
    /// whatever their own angles ("continue straight" where two branches lie ahead does not say
    /// which). Service roads do not fork a road that is not one (OSRM leaves low-priority roads out
    /// of forks too), and a ferry's landing or its routes are no fork.
    fn fork(
        &self,
        prev: &Piece,
        cur: &Piece,
        line: &Line,
        profile: Profile,
        shape: &mut Vec<[f64; 2]>,
    ) -> Option<&'static str> {
        let g = &self.graph;
        let road = prev.name;
        if prev.ferry || cur.ferry || (road != (0, 0) && cur.name == road) {
            return None;
        }
        // The heading of a branch that keeps the road's name, if one lies ahead.
        let mut keeper: Option<f64> = None;
        let riding = |a: ArcId| g.arc_attrs[a as usize].bike() == BikeAccess::Ride;
        let rides_on = profile == Profile::Cycling && riding(cur.arc);
        let flag = |w: u32, f: u16| g.way_flags[w as usize] & f != 0;
        let on_service = flag(prev.way, way_flags::SERVICE) || flag(cur.way, way_flags::SERVICE);
        let others: Vec<ArcId> = self
            .choices_after(prev.arc, profile)
            .filter(|&a| a != cur.arc && (!rides_on || riding(a)))
            .filter(|&a| {
                let w = g.arc_way(a);
                (on_service || !flag(w, way_flags::SERVICE)) && !flag(w, way_flags::FERRY)
            })
            .collect();
        if others.is_empty() {
            return None;
        }
        let before = line.heading_into(cur.span.start);
        let taken = turn_angle(before, line.heading_out_of(cur.span.start));
        if taken.abs() > passes::FORK_DEG {
            return None;
        }
        let name_of = |w: u32| match (g.way_name[w as usize], g.way_ref[w as usize]) {
            (0, r) => (0, r),
            (n, _) => (n, 0),
        };
        let (mut left_of, mut right_of) = (0, 0);
        for a in others {
            shape.clear();
            g.arc_geometry(a, shape);
            let angle = turn_angle(before, line.plane.start_bearing(shape));
            if angle.abs() > passes::FORK_DEG {
                continue;
            }
            if road != (0, 0) && name_of(g.arc_way(a)) == road {
                keeper = Some(angle);
                continue;
            }
            if angle < taken {
                left_of += 1;
            } else {
                right_of += 1;
            }
        }
        if let Some(k) = keeper {
            // The road goes on by name: leaving it is a turn by its angle, but a way off it in
            // the straight band, beside a road that runs about as straight (not 20° more bent),
            // is told by its side of the road ("continue straight" would not say which, the road
            // or the way beside it), as OSRM never words the way off an obvious road straight.
            let beside =
                taken.abs() <= passes::STRAIGHT_DEG && k.abs() < taken.abs() + passes::STRAIGHT_DEG;
            return beside.then_some(if taken < k {
                "slight left"
            } else {
                "slight right"
            });
        }
        if left_of + right_of == 0 {
            return None;
        }
        Some(match (left_of, right_of) {
            (0, _) => "slight left",
            (_, 0) => "slight right",
            _ => "straight",
        })
    }

    /// Two ways off one junction to the same side in one band (two rights at 90° and 45°): the
    /// gentler is said one band softer ("slight right", a sharp one "right"), so the rider can tell
    /// which, as OSRM assigns them. Ways the rider would not ride (a footway, riding) do not count.
    fn set_apart(
        &self,
        prev: &Piece,
        cur: &Piece,
        line: &Line,
        angle: f64,
        m: &'static str,
        profile: Profile,
    ) -> &'static str {
        let softer = match m {
            "left" => "slight left",
            "right" => "slight right",
            "sharp left" => "left",
            "sharp right" => "right",
            _ => return m,
        };
        if !prev.reaches_head {
            return m;
        }
        let riding = |a: ArcId| self.graph.arc_attrs[a as usize].bike() == BikeAccess::Ride;
        let rides_on = profile == Profile::Cycling && riding(cur.arc);
        let before = line.heading_into(cur.span.start);
        let mut shape = Vec::with_capacity(16);
        let sharper_alike = self
            .choices_after(prev.arc, profile)
            .filter(|&a| a != cur.arc && (!rides_on || riding(a)))
            .any(|a| {
                shape.clear();
                self.graph.arc_geometry(a, &mut shape);
                let other = turn_angle(before, line.plane.start_bearing(&shape));
                other.signum() == angle.signum()
                    && other.abs() > angle.abs()
                    && geometry::modifier_of_angle(other) == m
            });
        if sharper_alike { softer } else { m }
    }

    /// Traffic control met on the way, where it applies to the direction travelled.
    fn stops(&self, pieces: &[Piece]) -> Vec<Stop> {
        let g = &self.graph;
        let mut stops = Vec::new();
        for p in pieces {
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
        stops
    }

    /// One step per stretch left by the passes.
    fn steps(
        &self,
        segs: &[Seg],
        pieces: &[Piece],
        junctions: &[Junction],
        line: &Line,
        profile: Profile,
    ) -> Vec<Step> {
        let g = &self.graph;
        let plane = line.plane;
        let mut steps: Vec<Step> = Vec::with_capacity(segs.len() + 1);
        for (si, seg) in segs.iter().enumerate() {
            let run = &pieces[seg.first..seg.end];
            let span = run[0].span.start..run[run.len() - 1].span.end;
            let mut geometry: Vec<[f64; 2]> = line.pts[span].to_vec();
            if geometry.len() == 1 {
                geometry.push(geometry[0]);
            }
            // Attributes: those of the road ridden furthest in the run (its longest way); on a
            // roundabout, the road taken is named by the next step, so the step names the ring.
            let mut by_class = [0.0f64; 6];
            let (mut lit_m, mut total) = (0.0, 0.0);
            for p in run {
                by_class[p.class as usize] += p.distance;
                total += p.distance;
                if p.lit {
                    lit_m += p.distance;
                }
            }
            // The road the maneuver leads onto names the step, not a link folded into it.
            let onto_run = &pieces[seg.onto..seg.end];
            let mut main_way = onto_run[passes::longest(onto_run)].way;
            // The road turned onto names the step where the step goes on under an unannounced
            // variant of its name (a bridge named after it, a compass word): the sign at the turn,
            // unless that is the name of the step before.
            let turned_onto = onto_run[0].way;
            if turned_onto != main_way {
                let structure =
                    |w: u32| g.way_flags[w as usize] & (way_flags::BRIDGE | way_flags::TUNNEL) != 0;
                let ((n0, r0), (n1, r1)) = (self.name_of(turned_onto), self.name_of(main_way));
                // Not where the name turned onto is the previous step's (a road that turns a
                // corner and changes its compass word there): the new sign names it.
                if !n0.is_empty()
                    && !n1.is_empty()
                    && n0 != n1
                    && steps.last().is_none_or(|p: &Step| p.name != n0)
                    && passes::same_road_named(
                        &n0,
                        &r0,
                        &n1,
                        &r1,
                        structure(turned_onto) || structure(main_way),
                    )
                {
                    main_way = turned_onto;
                }
            }
            let class = SafetyClass::ALL
                .into_iter()
                .max_by(|a, b| by_class[*a as usize].total_cmp(&by_class[*b as usize]))
                .unwrap_or(SafetyClass::Shared);
            let (name, r#ref) = self.name_of(main_way);
            let bearing_before = match steps.last() {
                Some(prev) => plane.end_bearing(&prev.geometry),
                None => 0.0,
            };
            let bearing_after = plane.start_bearing(&geometry);
            let at = |k: usize| pieces[k].span.start;
            let next = segs.get(si + 1);
            let (kind, modifier) = match seg.kind {
                StepKind::Depart => (StepKind::Depart, None),
                StepKind::Roundabout if next.is_some() => {
                    // The exit direction: from the heading entering the ring to the heading
                    // leaving it.
                    let leave = next.map_or(line.pts.len() - 1, |n| at(n.first));
                    let angle =
                        turn_angle(line.heading_into(at(seg.first)), line.heading_out_of(leave));
                    (
                        StepKind::Roundabout,
                        Some(geometry::modifier_of_angle(angle)),
                    )
                }
                _ => {
                    // A turn onto the road the maneuver leads to (past any link folded into it);
                    // a route that ends on a ring turns onto it.
                    let angle = turn_angle(
                        line.heading_into(at(seg.first)),
                        line.heading_out_of(at(seg.onto)),
                    );
                    let reversal = seg.reversal(pieces);
                    // Back along "the same road" only when it has a name or number to be the same
                    // by: two unnamed paths meeting at a sharp angle are a sharp turn.
                    let onto = onto_run[passes::longest(onto_run)].name;
                    let same_road =
                        si > 0 && onto != (0, 0) && passes::name_key(pieces, &segs[si - 1]) == onto;
                    let fork = (seg.first == seg.onto).then(|| junctions[seg.first].fork);
                    if reversal || (angle.abs() > passes::UTURN_DEG && same_road) {
                        (StepKind::UTurn, Some("uturn"))
                    } else if let Some(Some(m)) = fork {
                        let k = if m == "straight" {
                            StepKind::Continue
                        } else {
                            StepKind::Turn
                        };
                        (k, Some(m))
                    } else {
                        let mut m = geometry::modifier_of_angle(angle);
                        if seg.first == seg.onto && seg.first > 0 {
                            m = self.set_apart(
                                &pieces[seg.first - 1],
                                &pieces[seg.first],
                                line,
                                angle,
                                m,
                                profile,
                            );
                        }
                        let k = if m == "straight" {
                            StepKind::Continue
                        } else {
                            StepKind::Turn
                        };
                        (k, Some(m))
                    }
                }
            };
            let exit = (kind == StepKind::Roundabout)
                .then(|| roundabout::exit_number(self, pieces, seg, profile));
            let mut step = Step {
                kind,
                same_road: false,
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
                cycle_routes: g.route_names(main_way).map(str::to_string).collect(),
                lit: total > 0.0 && lit_m * 2.0 >= total,
                exit,
                push: says_walk(run, total),
                ferry: run.iter().any(|p| p.ferry),
                arcs: run.iter().map(|p| p.arc).collect(),
                geometry,
            };
            // A turn that keeps to the road of the step before, by the name the words give it,
            // is a `Continue` with its direction, as OSRM words it ("Turn left to stay on …").
            if matches!(kind, StepKind::Turn | StepKind::Continue)
                && !step.road().is_empty()
                && steps.last().is_some_and(|p: &Step| p.road() == step.road())
            {
                step.kind = StepKind::Continue;
                step.same_road = true;
            }
            steps.push(step);
        }
        steps
    }
}

/// Walked metres a step's words mention whatever the step's length.
const WALK_WORTH_SAYING_M: f64 = 30.0;

/// Whether a step tells the rider to walk the bike: when the walked part is at least
/// [`WALK_WORTH_SAYING_M`] or half of the step. A few metres walked inside a long step (a crossing,
/// a kerb, a barrier) are plain on the spot; "and walk your bike" on a 1.6 km step of the Chicago
/// Riverwalk because of 2 m of it told the rider to walk the whole way.
fn says_walk(run: &[Piece], total: f64) -> bool {
    let walked: f64 = run.iter().filter(|p| p.push).map(|p| p.distance).sum();
    let any = run.iter().any(|p| p.push);
    any && (walked >= WALK_WORTH_SAYING_M || walked * 2.0 >= total)
}

/// Cuts the leg at every junction that might need words: roundabout entries and exits (a leg that
/// starts on a ring departs along it and turns off it at its exit), reversals, changes of road
/// name, and turns where the road taken is not the obvious way on.
fn cut(pieces: &[Piece], junctions: &[Junction]) -> Vec<Seg> {
    let mut segs = Vec::new();
    let mut start = 0;
    let mut kind = StepKind::Depart;
    for i in 1..pieces.len() {
        let (prev, cur, j) = (&pieces[i - 1], &pieces[i], junctions[i]);
        let boundary = if cur.ring != prev.ring {
            Some(if cur.ring {
                StepKind::Roundabout
            } else {
                StepKind::Turn
            })
        } else if cur.ring {
            // Along the ring: no step (a leg that starts on the ring departs along it and turns
            // off it at its exit; there was no entry to count exits from).
            None
        } else if j.reversal {
            Some(StepKind::UTurn)
        } else if cur.name != prev.name || j.fork.is_some() {
            Some(StepKind::Turn)
        } else if j.angle.abs() >= passes::SAME_ROAD_TURN_DEG && !j.obvious {
            // The same road turns at a junction where another way is straighter: say so.
            Some(StepKind::Turn)
        } else {
            None
        };
        if let Some(k) = boundary {
            segs.push(Seg::new(start, i, kind));
            start = i;
            kind = k;
        }
    }
    if !pieces.is_empty() {
        segs.push(Seg::new(start, pieces.len(), kind));
    }
    segs
}
