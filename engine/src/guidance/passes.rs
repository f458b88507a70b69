//! Collapse passes over a leg cut into stretches (after OSRM's guidance post-processing): each pass
//! is small, named after what it detects, and folds stretches a rider would not hear as a maneuver
//! into their neighbours. docs/guidance.md gives each pass its reason.
//!
//! A stretch ([`Seg`]) is a run of pieces whose maneuver sits where its first piece begins. Folding a
//! stretch *forward* moves the next maneuver back to its start (a link folded into the turn it
//! serves); folding it *back* drops its maneuver (the rider just rides on). A pass never folds into
//! or out of a roundabout, and never hides a reversal.

use super::geometry::{Line, turn_angle};
use super::{Junction, Piece, StepKind};
use crate::dijkstra::Adjacency;
use crate::graph::{CityGraph, way_flags};

/// A turn smaller than this keeps a step going on the same road.
pub const SAME_ROAD_TURN_DEG: f64 = 45.0;
/// Sharper than this onto the same road (its other carriageway) is a U-turn; onto another road it
/// is a sharp turn.
pub const UTURN_DEG: f64 = 165.0;
/// Up to this the maneuver reads as straight on.
pub const STRAIGHT_DEG: f64 = 20.0;
/// Ways within this of straight on are the branches of a fork (the end of the `slight` band, OSRM's
/// `NARROW_TURN_ANGLE`).
pub const FORK_DEG: f64 = 40.0;
/// Up to this a turn is gentle enough for the jog and rejoin passes (wider than the `slight` band of
/// `geometry::modifier_of_angle`, which ends at OSRM's 40°).
const BEAR_DEG: f64 = 50.0;
/// A first or last stretch shorter than this comes from a waypoint on (or a snap beside) a junction.
pub const WAYPOINT_ON_JUNCTION_M: f64 = 3.0;
/// A stretch shorter than this between two maneuvers is part of one of them: a crossing, a slip
/// lane, a sidewalk hop, the offset of a staggered junction.
pub const SHORT_STRETCH_M: f64 = 15.0;
/// A first stretch shorter than this is part of the departure: a start on a junction or snapped a
/// few metres from it. A start further before a corner keeps the turn (OSRM says it).
pub const OPENING_STRETCH_M: f64 = 5.0;
/// An unnamed stretch shorter than this between two maneuvers (a crossing, a sidewalk hop), or a
/// jog this short that turns one way and then the other (bear left, bear right across a wide
/// road), is part of the maneuver after it: OSRM's `MAX_COLLAPSE_DISTANCE`.
pub const COLLAPSE_M: f64 = 30.0;
/// An unnamed link shorter than this between two bears the same way (bear left onto a link, bear
/// left off it onto the road) is part of the turn after it, as OSRM merges a sliproad into its
/// turn: the rider makes one turn through a small junction island (Hatton Garden to Charterhouse
/// Street: "Bear left", 34 m, "Bear left onto Charterhouse Street" is "Turn left onto Charterhouse
/// Street").
pub const SLIP_LINK_M: f64 = 60.0;
/// A link of its own name (or none) shorter than this, between two turns the same way, that cuts
/// the corner of a triangle (the road before goes on and meets the road after within
/// [`SLIP_TRIANGLE_M`]) is a sliproad: part of the turn after it, as OSRM finds a sliproad by the
/// triangle it cuts.
pub const SLIP_ROAD_M: f64 = 100.0;
/// How far along the road before a sliproad its corner is looked for.
pub const SLIP_TRIANGLE_M: f64 = 100.0;
/// A sliproad's two turns together may turn this far (a sliproad onto a road met at an acute angle).
const SLIP_ROAD_TURN_DEG: f64 = 150.0;
/// ... unless the two maneuvers together turn further than this: two turns the same way round a
/// block or a square are said as two turns, not one U-turn.
const COLLAPSE_TURN_DEG: f64 = 120.0;
/// A turn onto a road and a U-turn onto its other carriageway less than this further on (through
/// a median opening, or at the far carriageway's junction) is one turn across the road: the width
/// of a divided road's junction with a little to spare (Park Row at Centre Street: 30 m).
pub const MEDIAN_OPENING_M: f64 = 40.0;
/// A new name ridden straight through for less than this, back onto the name before it
/// (`A → B → A`), is not announced: OSRM's `NAME_SEGMENT_CUTOFF_LENGTH` (100 m, and 5 more so that
/// a stretch of exactly 100 m does not flip between the two).
pub const SHORT_NAME_BETWEEN_M: f64 = 105.0;
/// A new name ridden straight through for less than this into yet another name is not announced.
/// Shorter than OSRM's cutoff: folded into a short turn before it, a longer new name would name
/// that turn's step and read as a turn onto the road just left.
pub const SHORT_NAME_M: f64 = 50.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Seg {
    /// Pieces `first..end`.
    pub first: usize,
    pub end: usize,
    /// `Depart` and `Roundabout` are kept as they are; any other maneuver is decided from the turn
    /// when the step is built.
    pub kind: StepKind,
    /// The piece where the road the maneuver leads onto begins (later than `first` when a link was
    /// folded into the maneuver).
    pub onto: usize,
}

impl Seg {
    pub fn new(first: usize, end: usize, kind: StepKind) -> Seg {
        Seg {
            first,
            end,
            kind,
            onto: first,
        }
    }

    /// Whether the maneuver turns back along the arc it came on (at its start or inside a link
    /// folded into it).
    pub fn reversal(&self, pieces: &[Piece]) -> bool {
        (self.first.max(1)..=self.onto.min(self.end - 1))
            .any(|k| pieces[k].arc == pieces[k - 1].arc ^ 1)
    }
}

/// Index (within `run`) of the piece that names the road a stretch is on: the longest piece of the
/// named road (name and ref) ridden furthest in the stretch (30 m or more of it), else of the road
/// or unnamed way ridden furthest. Ways are split at every junction and
/// restriction, so one long piece of a short name change folded into a stretch must not name it.
pub fn longest(run: &[Piece]) -> usize {
    let total = |name: (u32, u32)| -> f64 {
        run.iter()
            .filter(|p| p.name == name)
            .map(|p| p.distance)
            .sum()
    };
    // A named road ridden for 30 m or more names the stretch before any unnamed way (a path, a
    // crossing) in it; a few metres of a street do not name a sidewalk hop.
    let rank = |p: &Piece, t: f64| (p.name != (0, 0) && t >= COLLAPSE_M, t);
    let mut best = 0;
    let mut best_total = total(run[0].name);
    for (i, p) in run.iter().enumerate().skip(1) {
        if p.name == run[best].name {
            if p.distance > run[best].distance {
                best = i;
            }
            continue;
        }
        let t = total(p.name);
        if rank(p, t) > rank(&run[best], best_total) {
            best = i;
            best_total = t;
        }
    }
    best
}

/// The name and ref of a stretch's road: the road its maneuver leads onto (past any link folded
/// into it).
pub fn name_key(pieces: &[Piece], s: &Seg) -> (u32, u32) {
    let run = &pieces[s.onto..s.end];
    run[longest(run)].name
}

struct Cx<'a> {
    pieces: &'a [Piece],
    junctions: &'a [Junction],
    line: &'a Line,
    graph: &'a CityGraph,
    adjacency: &'a Adjacency,
}

impl Cx<'_> {
    fn distance(&self, s: &Seg) -> f64 {
        self.pieces[s.first..s.end].iter().map(|p| p.distance).sum()
    }

    fn name(&self, s: &Seg) -> (u32, u32) {
        name_key(self.pieces, s)
    }

    /// The turn of a stretch's maneuver: the heading into its start to the heading out of the road
    /// it leads onto.
    fn angle(&self, s: &Seg) -> f64 {
        let at = |k: usize| self.pieces[k].span.start;
        turn_angle(
            self.line.heading_into(at(s.first)),
            self.line.heading_out_of(at(s.onto)),
        )
    }

    /// The turn from the heading into stretch `s` to the heading out of the road `next` leads onto:
    /// the maneuver `s` and `next` make together.
    fn through(&self, s: &Seg, next: &Seg) -> f64 {
        let at = |k: usize| self.pieces[k].span.start;
        turn_angle(
            self.line.heading_into(at(s.first)),
            self.line.heading_out_of(at(next.onto)),
        )
    }

    /// Whether any of a stretch is walked.
    fn push(&self, s: &Seg) -> bool {
        self.pieces[s.first..s.end].iter().any(|p| p.push)
    }

    /// Whether a stretch's maneuver takes a branch of a fork (and no link was folded into it).
    fn fork(&self, s: &Seg) -> bool {
        s.first == s.onto && self.junctions[s.first].fork.is_some()
    }

    /// A maneuver that only rides on: straight, no reversal, not a branch of a fork.
    fn straight_on(&self, s: &Seg) -> bool {
        !s.reversal(self.pieces) && self.angle(s).abs() <= STRAIGHT_DEG && !self.fork(s)
    }

    /// The ref of the way that names a stretch (a named way's too, which its name key leaves out).
    fn way_ref(&self, s: &Seg) -> &str {
        let run = &self.pieces[s.first..s.end];
        let way = run[longest(run)].way as usize;
        self.graph.string(self.graph.way_ref[way])
    }

    /// Whether two stretches are on one road to a rider: their names are ([`Cx::same_road_name`]),
    /// or one of them has no name and their refs share a route (`US 75` and `US 69;US 75`, a named
    /// expressway and its unnamed piece signed `US 75`).
    fn same_road(&self, a: &Seg, b: &Seg) -> bool {
        let (na, nb) = (self.name(a), self.name(b));
        if self.same_road_name(na, nb) {
            return true;
        }
        if (na.0 == 0 || nb.0 == 0) && refs_share(self.way_ref(a), self.way_ref(b)) {
            return true;
        }
        let g = self.graph;
        let structure = |s: &Seg| {
            let run = &self.pieces[s.onto..s.end];
            let flags = g.way_flags[run[longest(run)].way as usize];
            flags & (way_flags::BRIDGE | way_flags::TUNNEL) != 0
        };
        (structure(a) || structure(b)) && named_after(g.string(na.0), g.string(nb.0))
    }

    /// Whether two names are one road to a rider: equal names with another ref, or names that
    /// differ only by a compass word (`West 4th Street` / `East 4th Street`, `Main Street North`,
    /// `42 N` / `42 S`), or an unnamed road that keeps the ref.
    fn same_road_name(&self, a: (u32, u32), b: (u32, u32)) -> bool {
        if a == b {
            return true;
        }
        let g = self.graph;
        let (na, nb) = (g.string(a.0), g.string(b.0));
        if na.is_empty() || nb.is_empty() {
            return a.1 == b.1 && a.1 != 0;
        }
        na == nb || strip_compass(na).eq_ignore_ascii_case(strip_compass(nb))
    }
}

/// Whether two roads, by name and ref, are one road to a rider whose steps do not announce the
/// change: names that differ by a compass word, a road without a name whose ref shares a route
/// with the other's, or (where one of them is a bridge or a tunnel, `structure`) a bridge named
/// after the road it carries.
pub(crate) fn same_road_named(
    name_a: &str,
    ref_a: &str,
    name_b: &str,
    ref_b: &str,
    structure: bool,
) -> bool {
    if name_a.is_empty() || name_b.is_empty() {
        return refs_share(ref_a, ref_b);
    }
    name_a == name_b
        || strip_compass(name_a).eq_ignore_ascii_case(strip_compass(name_b))
        || (structure && named_after(name_a, name_b))
}

/// Whether one name is the other with more after it: a bridge or a tunnel named after the road it
/// carries (`Hauptstraßenbrücke` on `Hauptstraße`, `Main Street Bridge` on `Main Street`).
fn named_after(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let (short, long) = (short.to_lowercase(), long.to_lowercase());
    !short.is_empty() && long.len() > short.len() && long.starts_with(&short)
}

/// Whether two refs (`;`-separated lists) share a route.
fn refs_share(a: &str, b: &str) -> bool {
    let routes = |r: &str| {
        r.split(';')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let ra = routes(a);
    routes(b).iter().any(|x| ra.contains(x))
}

/// A street name without a leading or trailing compass word (kept when the rest is a single word
/// without a digit: `West Broadway` is not `Broadway`, `North Street` not `South Street`; a numbered
/// road keeps its number: `42 N`, `West 42` and `42` are one road).
/// Compass words, lower case, as street names carry them.
pub(crate) const COMPASS_WORDS: [&str; 16] = [
    "north",
    "south",
    "east",
    "west",
    "n",
    "s",
    "e",
    "w",
    "northeast",
    "northwest",
    "southeast",
    "southwest",
    "ne",
    "nw",
    "se",
    "sw",
];

fn strip_compass(name: &str) -> &str {
    let is_compass = |w: &str| {
        COMPASS_WORDS
            .iter()
            .any(|c| c.eq_ignore_ascii_case(w.trim_end_matches('.')))
    };
    // What is left must still name a road: several words, or a number.
    let names_a_road = |rest: &str| rest.contains(' ') || rest.chars().any(|c| c.is_ascii_digit());
    let mut s = name.trim();
    if let Some((first, rest)) = s.split_once(' ')
        && is_compass(first)
        && names_a_road(rest)
    {
        s = rest;
    }
    if let Some((rest, last)) = s.rsplit_once(' ')
        && is_compass(last)
        && names_a_road(rest)
    {
        s = rest;
    }
    s
}

/// Stretch `i` and the one after it become one, with the maneuver at `i`'s start and the road of
/// the one after.
fn fold_forward(segs: &mut Vec<Seg>, i: usize) {
    let (a, b) = (segs[i], segs[i + 1]);
    segs[i + 1] = Seg {
        first: a.first,
        end: b.end,
        kind: if a.kind == StepKind::Depart {
            StepKind::Depart
        } else {
            StepKind::Turn
        },
        onto: b.onto,
    };
    segs.remove(i);
}

/// Stretch `i` joins the one before it: its maneuver is dropped.
fn fold_back(segs: &mut Vec<Seg>, i: usize) {
    segs[i - 1].end = segs[i].end;
    segs.remove(i);
}

fn ring(s: &Seg) -> bool {
    s.kind == StepKind::Roundabout
}

/// Runs every pass in order.
pub(crate) fn run(
    mut segs: Vec<Seg>,
    pieces: &[Piece],
    junctions: &[Junction],
    line: &Line,
    graph: &CityGraph,
    adjacency: &Adjacency,
) -> Vec<Seg> {
    let cx = Cx {
        pieces,
        junctions,
        line,
        graph,
        adjacency,
    };
    waypoint_on_junction(&mut segs, &cx);
    short_stretches(&mut segs, &cx);
    turn_across(&mut segs, &cx);
    same_road(&mut segs, &cx);
    name_changes(&mut segs, &cx);
    same_road(&mut segs, &cx);
    unnamed_jogs(&mut segs, &cx);
    segs
}

/// A waypoint on a junction (or snapped a metre or two before one) leaves a stretch of almost no
/// length at the start or end of the leg: the departure takes the road the trip continues on, the
/// arrival the road it came on.
fn waypoint_on_junction(segs: &mut Vec<Seg>, cx: &Cx) {
    // A first stretch shorter than a link (a start a few metres before a corner) is no step of its
    // own either: "a 4 m opening step" helps no rider.
    if segs.len() >= 2 && cx.distance(&segs[0]) < OPENING_STRETCH_M && !ring(&segs[1]) {
        fold_forward(segs, 0);
    }
    let n = segs.len();
    if n >= 2
        && cx.distance(&segs[n - 1]) < WAYPOINT_ON_JUNCTION_M
        && !ring(&segs[n - 2])
        && segs[n - 1].kind != StepKind::Depart
    {
        fold_back(segs, n - 1);
    }
}

/// A stretch shorter than [`SHORT_STRETCH_M`] between two maneuvers (a crossing, a slip lane, a
/// sidewalk hop, a staggered junction's offset) folds into the maneuver after it, which then
/// reads the turn from the road before to the road after; before a roundabout it joins the road
/// before instead. Between two roundabouts it stays (it is the road between them).
fn short_stretches(segs: &mut Vec<Seg>, cx: &Cx) {
    let mut i = 1;
    while i + 1 < segs.len() {
        let s = segs[i];
        let d = cx.distance(&s);
        let link = d < SHORT_STRETCH_M
            || (d < COLLAPSE_M && crossover(cx, &segs[i - 1], &s, &segs[i + 1]))
            || (d < COLLAPSE_M
                && !ring(&segs[i + 1])
                && (cx.name(&s) == (0, 0) || zigzag(cx, &segs[i - 1], &s, &segs[i + 1]))
                && cx.through(&s, &segs[i + 1]).abs() <= COLLAPSE_TURN_DEG)
            || (d < SLIP_LINK_M
                && !ring(&segs[i + 1])
                && cx.name(&s) == (0, 0)
                && bears_one_way(cx, &s, &segs[i + 1])
                && cx.through(&s, &segs[i + 1]).abs() <= COLLAPSE_TURN_DEG)
            || (d < SLIP_ROAD_M && sliproad(cx, &segs[i - 1], &s, &segs[i + 1]));
        if ring(&s) || s.kind == StepKind::Depart || !link {
            i += 1;
        } else if !ring(&segs[i + 1]) {
            fold_forward(segs, i);
        } else if !ring(&segs[i - 1]) {
            fold_back(segs, i);
        } else {
            i += 1;
        }
    }
}

/// A turn onto a named road and, less than [`MEDIAN_OPENING_M`] on, a U-turn onto its other
/// carriageway is one maneuver: a turn across the road onto its far side, read from the road before
/// to the far carriageway (OSRM collapses a turn and a U-turn on a short segment the same way). The
/// rider sees one junction; the few metres out and back stay in the step's geometry and distance.
/// A real reversal (back along the arc ridden) and a U-turn after a longer stretch stay U-turns.
fn turn_across(segs: &mut Vec<Seg>, cx: &Cx) {
    let mut i = 1;
    while i + 1 < segs.len() {
        let (prev, s, next) = (segs[i - 1], segs[i], segs[i + 1]);
        let road = cx.name(&s);
        if !ring(&prev)
            && !ring(&s)
            && !ring(&next)
            && s.kind != StepKind::Depart
            && road != (0, 0)
            && cx.name(&prev) != road
            && cx.name(&next) == road
            && cx.distance(&s) < MEDIAN_OPENING_M
            && cx.angle(&next).abs() >= UTURN_DEG
            && !s.reversal(cx.pieces)
            && !next.reversal(cx.pieces)
        {
            fold_forward(segs, i);
        } else {
            i += 1;
        }
    }
}

/// Whether `s` is a sliproad from the road of `prev` to the road of `next`: a link of a name of its
/// own (or none), entered and left by turns to the same side, that cuts a corner: the road before
/// goes on from where the link leaves it and meets the road after within [`SLIP_TRIANGLE_M`]. The
/// rider makes one turn from the one road onto the other, taken early, as OSRM merges a sliproad
/// into its turn; a short street between two turns the same way that cuts no corner (round a
/// block) stays two turns.
fn sliproad(cx: &Cx, prev: &Seg, s: &Seg, next: &Seg) -> bool {
    let (road, link, onto) = (cx.name(prev), cx.name(s), cx.name(next));
    if ring(prev)
        || ring(next)
        || road == (0, 0)
        || onto == (0, 0)
        || link == road
        || link == onto
        || road == onto
        || s.reversal(cx.pieces)
        || next.reversal(cx.pieces)
    {
        return false;
    }
    let (a, b) = (cx.angle(s), cx.angle(next));
    let turns = |x: f64| x.abs() > STRAIGHT_DEG;
    if !turns(a) || !turns(b) || a.signum() != b.signum() {
        return false;
    }
    if cx.through(s, next).abs() > SLIP_ROAD_TURN_DEG {
        return false;
    }
    let last = &cx.pieces[s.first - 1];
    let link_end = &cx.pieces[s.end - 1];
    if !last.reaches_head || !link_end.reaches_head {
        return false;
    }
    let g = cx.graph;
    let adj = cx.adjacency;
    let name_of = |a: u32| {
        let w = g.arc_way(a) as usize;
        match (g.way_name[w], g.way_ref[w]) {
            (0, r) => (0, r),
            (n, _) => (n, 0),
        }
    };
    // The link ends on the road after: a street that goes on past it is no sliproad.
    let end = g.arc_head(link_end.arc) as usize;
    if (adj.first_out[end]..adj.first_out[end + 1])
        .map(|k| adj.arc[k as usize])
        .any(|x| x ^ 1 != link_end.arc && name_of(x) == link)
    {
        return false;
    }
    // Along the road before, from the junction where the link leaves it.
    let mut arc = last.arc;
    let mut along = 0.0;
    for hop in 0..16 {
        let head = g.arc_head(arc) as usize;
        let mut on = None;
        for k in adj.first_out[head]..adj.first_out[head + 1] {
            let x = adj.arc[k as usize];
            if x ^ 1 == arc {
                continue;
            }
            let name = name_of(x);
            if hop > 0 && name == onto {
                return true;
            }
            if name == road && on.is_none() {
                on = Some(x);
            }
        }
        let Some(x) = on else { return false };
        along += g.arc_length_m(x) as f64;
        if along > SLIP_TRIANGLE_M {
            return false;
        }
        arc = x;
    }
    false
}

/// Whether a stretch's maneuver and the next are both bears the same way (see [`SLIP_LINK_M`]).
fn bears_one_way(cx: &Cx, s: &Seg, next: &Seg) -> bool {
    let (a, b) = (cx.angle(s), cx.angle(next));
    let bear = |x: f64| x.abs() > STRAIGHT_DEG && x.abs() <= BEAR_DEG;
    bear(a)
        && bear(b)
        && a.signum() == b.signum()
        && !s.reversal(cx.pieces)
        && !next.reversal(cx.pieces)
}

/// Whether a stretch's maneuver turns one way and the next one the other as a jog: bearing across
/// a wide road, or turning off a road and back onto it (a staggered crossing of the same road). Two
/// real corners (a 20 m side street between a right and a left) stay two turns.
/// The crossover of a divided road: a short stretch that carries the name of one of the roads it
/// joins, ridden across between a turn and a straight-on (turn left off the near carriageway, cross
/// the median, straight on into the side road; or straight on from the side road across the near
/// carriageway, then left onto the far one). The rider makes one turn there, as OSRM collapses a
/// segregated intersection.
fn crossover(cx: &Cx, prev: &Seg, s: &Seg, next: &Seg) -> bool {
    let (a, b) = (cx.angle(s), cx.angle(next));
    let here = cx.name(s);
    if here == (0, 0)
        || ring(prev)
        || ring(next)
        || s.reversal(cx.pieces)
        || next.reversal(cx.pieces)
    {
        return false;
    }
    let turn_then_straight = here == cx.name(prev)
        && here != cx.name(next)
        && a.abs() > STRAIGHT_DEG
        && b.abs() <= STRAIGHT_DEG;
    let straight_then_turn = here == cx.name(next)
        && here != cx.name(prev)
        && a.abs() <= STRAIGHT_DEG
        && b.abs() > STRAIGHT_DEG;
    (turn_then_straight || straight_then_turn) && cx.through(s, next).abs() <= COLLAPSE_TURN_DEG
}

fn zigzag(cx: &Cx, prev: &Seg, s: &Seg, next: &Seg) -> bool {
    let (a, b) = (cx.angle(s), cx.angle(next));
    let turns = |x: f64| x.abs() > STRAIGHT_DEG;
    let bear = |x: f64| turns(x) && x.abs() <= BEAR_DEG;
    let here = cx.name(s);
    let same_road = here != (0, 0) && (here == cx.name(prev) || here == cx.name(next));
    turns(a)
        && turns(b)
        && ((bear(a) && bear(b)) || same_road)
        && a.signum() != b.signum()
        && !s.reversal(cx.pieces)
        && !next.reversal(cx.pieces)
}

/// Staying on the same road: a stretch on the road of the one before, reached by less than
/// [`SAME_ROAD_TURN_DEG`] (a split way, a bend, a staggered crossing folded above), is the same step.
fn same_road(segs: &mut Vec<Seg>, cx: &Cx) {
    let mut i = 1;
    while i < segs.len() {
        let (prev, s) = (segs[i - 1], segs[i]);
        if !ring(&prev)
            && !ring(&s)
            && s.kind != StepKind::Depart
            && !s.reversal(cx.pieces)
            && cx.name(&prev) == cx.name(&s)
            && cx.angle(&s).abs() < SAME_ROAD_TURN_DEG
            && !cx.fork(&s)
        {
            fold_back(segs, i);
        } else {
            i += 1;
        }
    }
}

/// Name changes ridden straight through (OSRM's obvious continuations and short name segments): a
/// new name that is the same road to a rider (a compass word, a ref), a short stretch of another
/// name between two of the same (`A → B → A`), a short new name followed straight on by yet another,
/// and a short unnamed stretch are not announced.
fn name_changes(segs: &mut Vec<Seg>, cx: &Cx) {
    let mut i = 1;
    while i < segs.len() {
        let (prev, s) = (segs[i - 1], segs[i]);
        if ring(&prev) || ring(&s) || s.kind == StepKind::Depart || !cx.straight_on(&s) {
            i += 1;
            continue;
        }
        let (before, here) = (cx.name(&prev), cx.name(&s));
        let short = cx.distance(&s) < SHORT_NAME_M;
        let next = segs.get(i + 1).filter(|n| !ring(n) && cx.straight_on(n));
        if cx.same_road(&prev, &s) {
            fold_back(segs, i);
        } else if cx.distance(&s) < SHORT_NAME_BETWEEN_M
            && next.is_some_and(|n| cx.name(n) == before)
        {
            // A → B → A: B is a crossing of another name, or a mapping slip.
            fold_back(segs, i);
            fold_back(segs, i);
        } else if (short && next.is_some()) || (here == (0, 0) && cx.push(&s) == cx.push(&prev)) {
            // A short new name ridden straight into yet another, or an unnamed way ridden straight
            // on (a path, a crossing: a bare "Continue" names nothing to look for) unless the bike
            // is walked from there.
            fold_back(segs, i);
        } else {
            i += 1;
        }
    }
}

/// A bear off a road onto an unnamed way (a path across a plaza, a crossing of a wide street)
/// that gently rejoins the same road within [`SHORT_NAME_BETWEEN_M`] is one maneuver: the bear,
/// keeping to the road ("Bear left to stay on West Marble Place"), not a bear onto nothing and then
/// "Continue onto" the road just left. Only when the two maneuvers together ride straight on: a
/// jog. A rejoin that turns (a corner) stays a step of its own, and the walked parts keep their
/// steps, since the bear is folded forward into the road after it. Run last: the bear it leaves is
/// a turn on the same road that `same_road` would otherwise take for a bend.
fn unnamed_jogs(segs: &mut Vec<Seg>, cx: &Cx) {
    let mut i = 1;
    while i + 1 < segs.len() {
        let (prev, s, next) = (segs[i - 1], segs[i], segs[i + 1]);
        let gentle = |x: f64| x.abs() <= BEAR_DEG;
        let road = cx.name(&prev);
        if !ring(&prev)
            && !ring(&s)
            && !ring(&next)
            && s.kind != StepKind::Depart
            && road != (0, 0)
            && cx.name(&s) == (0, 0)
            && cx.same_road(&prev, &next)
            && cx.distance(&s) < SHORT_NAME_BETWEEN_M
            && cx.push(&s) == cx.push(&next)
            && gentle(cx.angle(&s))
            && gentle(cx.angle(&next))
            && cx.through(&s, &next).abs() <= STRAIGHT_DEG
            && !s.reversal(cx.pieces)
            && !next.reversal(cx.pieces)
        {
            fold_forward(segs, i);
            // The maneuver is the bear itself, not the jog's way back onto the road.
            segs[i].onto = s.onto;
        } else {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::strip_compass;

    #[test]
    fn compass_words_are_not_part_of_the_road() {
        assert_eq!(strip_compass("West 4th Street"), "4th Street");
        assert_eq!(strip_compass("E. 4th Street"), "4th Street");
        assert_eq!(strip_compass("Main Street North"), "Main Street");
        assert_eq!(strip_compass("North"), "North");
        assert_eq!(strip_compass("North Street"), "North Street");
        assert_eq!(strip_compass("West Broadway"), "West Broadway");
        assert_eq!(strip_compass("Broadway"), "Broadway");
        assert_eq!(strip_compass("42 N"), "42");
        assert_eq!(strip_compass("West 42"), "42");
        assert_eq!(strip_compass("W 4th"), "4th");
    }

    #[test]
    fn refs_share_a_route() {
        assert!(super::refs_share("US 75;US 69", "US 75"));
        assert!(super::refs_share("US 69", "US 75; US 69"));
        assert!(!super::refs_share("US 69", "US 75"));
        assert!(!super::refs_share("", ""));
        assert!(super::named_after("Hauptstraße", "Hauptstraßenbrücke"));
        assert!(super::named_after("Main Street Bridge", "Main Street"));
        assert!(!super::named_after("Main Street", "Main Street"));
        assert!(!super::named_after("Brooklyn Bridge", "Centre Street"));
    }
}
