//! The turn model: the graph the hierarchy runs on. Every directed arc of the city graph is a routing
//! node, and every movement from one arc into the next at their shared junction (a *turn*) is an input
//! arc of the CCH, weighted by the arc it enters plus the turn's cost in the metric. This is OSRM's
//! edge-based graph; a customizable CH works on it unchanged (Buchhold, Wagner, Zeitz & Zündorf,
//! "Customizable Contraction Hierarchies with Turn Costs", ATMOS 2020): the order is computed once on
//! this graph, turn costs are part of the metric, and partial customization updates a turn like an arc.
//!
//! Routing node ids: `0..arc_count` are the city graph's arcs themselves; the rest are copies of arcs
//! made for via-way restrictions. A via-node restriction only flags turns as closed to bicycles. A
//! via-way restriction (from, via…, to) copies the via arcs: the turn out of the from-arc enters the
//! copy, and the copy leaves by every turn of the original except the restricted one (or only by the
//! permitted one), so the search itself never checks a restriction and a trip that merely starts on the
//! via way is not bound by it. Walking ignores restrictions: a copy walks like its original.
//!
//! A U-turn is a turn like any other; the metric prices it so it is taken only where the arc offers
//! no other way on (a dead end), never mid-route.
//!
//! Turning back across a divided road (along one carriageway, through a short crossover, back along
//! the other carriageway of the same name) is two ordinary turns, so neither shows it alone. But where
//! the crossover leads nowhere else, entering it from the carriageway can only end in turning back:
//! that first turn carries [`turn_flags::TURN_BACK`] and the metric prices it like a U-turn. A
//! crossover that also reaches a side street (a left turn across the median into it) is left alone,
//! and the same crossover entered from a cross street costs nothing extra. The flag needs no copies
//! of arcs, so the hierarchy is unchanged (a rule over turn pairs would need them: an earlier try
//! copied the crossovers and took the New York hierarchy from 2.6 M to 11.8 M arcs).

use crate::graph::{ArcId, CityGraph, NodeId};
use std::collections::{HashMap, HashSet};

/// Flags of a turn.
pub mod turn_flags {
    /// Back along the same road segment.
    pub const U_TURN: u8 = 1;
    /// Forbidden to bicycles by a turn restriction.
    pub const NO_BIKE: u8 = 2;
    /// Into a crossover from a carriageway of a divided road where the crossover only leads back
    /// along the other carriageway of the same name (module docs).
    pub const TURN_BACK: u8 = 4;
}

/// The longest crossover (metres) across which turning back counts as a U-turn.
pub const CROSSOVER_MAX_M: f32 = 40.0;
/// The most arcs a crossover has (crossings split it at their nodes).
pub const CROSSOVER_MAX_ARCS: usize = 4;
/// How far from straight on (degrees) the carriageway left must run to count as turning back, for
/// the flag on a crossover that leads only back.
const TURN_BACK_MIN_DEG: i32 = 150;
/// The same for a turn-back a leg rides (`City::turn_backs`): looser, as a road that bends at the
/// crossover still has the rider heading back.
pub const TURN_BACK_RIDDEN_DEG: i32 = 135;

/// A turn restriction for bicycles as a sequence of arcs: the from-arc, the via arcs (none for a
/// via-node restriction) and the to-arc. `only` restrictions permit, at the end of the via part, only
/// their to-arcs (several `only` restrictions of one approach permit the union).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnRestriction {
    pub arcs: Vec<ArcId>,
    pub only: bool,
}

pub struct TurnGraph {
    /// Routing node → the city arc it travels.
    pub node_arc: Vec<ArcId>,
    /// Turns: from routing node, to routing node, flags. Grouped by via junction (`via_first`), and
    /// within a junction by from-node.
    /// (Shared with the cycling hierarchy, which finds a changed turn's arc from its ends.)
    pub turn_from: std::sync::Arc<[u32]>,
    pub turn_to: std::sync::Arc<[u32]>,
    pub turn_flags: Vec<u8>,
    /// Junction → its turns (CSR over graph nodes).
    pub via_first: Vec<u32>,
    /// Routing node → the turns out of it: `out_start[x]..out_start[x] + out_len[x]`. A routing
    /// node enters one junction, whose turns are made from one incoming node after another, so
    /// its turns are consecutive (checked as they are made): 6 bytes a routing node where a
    /// list of every turn by node took 4 a turn and 4 a node (33 MB on the 4 × 4 tiling of
    /// New York against 11).
    out_start: Vec<u32>,
    out_len: Vec<u16>,
    /// City arc → its copies (sorted pairs), for targets on a restricted via way.
    copies: Vec<(ArcId, u32)>,
    pub restrictions_applied: usize,
    pub restrictions_ignored: usize,
}

impl TurnGraph {
    pub fn new(g: &CityGraph, restrictions: &[TurnRestriction]) -> TurnGraph {
        let n = g.node_count();
        let arc_count = g.arc_count();
        let (out_first, out_arc) = arcs_out(g);
        let outs = |v: NodeId| {
            &out_arc[out_first[v as usize] as usize..out_first[v as usize + 1] as usize]
        };

        let mut node_arc: Vec<ArcId> = (0..arc_count as ArcId).collect();
        let mut forbid: HashSet<(u32, ArcId)> = HashSet::new();
        let mut only: HashMap<u32, Vec<ArcId>> = HashMap::new();
        let mut redirect: HashMap<(u32, ArcId), u32> = HashMap::new();
        let (mut applied, mut ignored) = (0, 0);
        // Via-way restrictions first: they create the copies that via-node rules then also bind.
        let mut sorted: Vec<&TurnRestriction> = restrictions.iter().collect();
        sorted.sort_by_key(|r| std::cmp::Reverse(r.arcs.len()));
        for r in sorted {
            let valid = r.arcs.len() >= 2
                && r.arcs.iter().all(|&a| (a as usize) < arc_count)
                && r.arcs
                    .windows(2)
                    .all(|p| g.arc_head(p[0]) == g.arc_tail(p[1]));
            if !valid {
                ignored += 1;
                continue;
            }
            applied += 1;
            let (from, rest) = (r.arcs[0], &r.arcs[1..]);
            let (via, to) = rest.split_at(rest.len() - 1);
            let mut cur = from;
            for (i, &w) in via.iter().enumerate() {
                let next = *redirect.entry((cur, w)).or_insert_with(|| {
                    node_arc.push(w);
                    (node_arc.len() - 1) as u32
                });
                if r.only && i + 1 < via.len() {
                    // Entered from the from-way, the rider must stay on the via way.
                    only.entry(next).or_default().push(via[i + 1]);
                }
                cur = next;
            }
            if r.only {
                only.entry(cur).or_default().push(to[0]);
            } else {
                forbid.insert((cur, to[0]));
            }
        }
        // Copies by the junction they arrive at.
        let mut copies: Vec<(ArcId, u32)> = (arc_count..node_arc.len())
            .map(|x| (node_arc[x], x as u32))
            .collect();
        copies.sort_unstable();
        let mut arriving_copies: HashMap<NodeId, Vec<u32>> = HashMap::new();
        for &(a, x) in &copies {
            arriving_copies.entry(g.arc_head(a)).or_default().push(x);
        }
        // A rule on an arc binds its copies too (a copy is the same road travelled).
        let forbidden = |x: u32, b: ArcId| {
            forbid.contains(&(x, b))
                || (x as usize >= arc_count && forbid.contains(&(node_arc[x as usize], b)))
        };
        let permitted_only = |x: u32| {
            only.get(&x).or_else(|| {
                if x as usize >= arc_count {
                    only.get(&node_arc[x as usize])
                } else {
                    None
                }
            })
        };

        let turn_back = stored_turn_backs(g).unwrap_or_else(|| turn_back_entries(g, &outs));
        // The junctions where a rule, a copy's way on or a turn-back applies: the only ones whose
        // turns are looked up in the maps above (hashing each of a whole city's 5 M turns four
        // times took most of the turn model's time).
        let mut special = vec![false; n];
        for &(_, b) in redirect.keys().chain(forbid.iter()).chain(turn_back.iter()) {
            special[g.arc_tail(b) as usize] = true;
        }
        for &x in only.keys() {
            special[g.arc_head(node_arc[x as usize]) as usize] = true;
        }
        for &(a, _) in &copies {
            special[g.arc_head(a) as usize] = true;
        }

        let turns: usize = (0..n as NodeId)
            .map(|v| outs(v).len() * outs(v).len())
            .sum::<usize>()
            + copies.len() * 4;
        let mut turn_from = Vec::with_capacity(turns);
        let mut turn_to = Vec::with_capacity(turns);
        let mut turn_flags = Vec::with_capacity(turns);
        let mut via_first = Vec::with_capacity(n + 1);
        via_first.push(0u32);
        let mut incoming: Vec<u32> = Vec::new();
        for v in 0..n as NodeId {
            incoming.clear();
            incoming.extend(outs(v).iter().map(|&b| b ^ 1));
            let special = special[v as usize];
            if special {
                if let Some(c) = arriving_copies.get(&v) {
                    incoming.extend_from_slice(c);
                }
            }
            for &x in &incoming {
                let a = node_arc[x as usize];
                if !special {
                    for &b in outs(v) {
                        turn_from.push(x);
                        turn_to.push(b);
                        turn_flags.push(if b == a ^ 1 { turn_flags::U_TURN } else { 0 });
                    }
                    continue;
                }
                let allowed = permitted_only(x);
                for &b in outs(v) {
                    let to = redirect.get(&(x, b)).copied().unwrap_or(b);
                    let mut flags = 0;
                    if b == a ^ 1 {
                        flags |= turn_flags::U_TURN;
                    }
                    if forbidden(x, b) || allowed.is_some_and(|ok| !ok.contains(&b)) {
                        flags |= turn_flags::NO_BIKE;
                    }
                    if turn_back.contains(&(a, b)) {
                        flags |= turn_flags::TURN_BACK;
                    }
                    turn_from.push(x);
                    turn_to.push(to);
                    turn_flags.push(flags);
                }
            }
            via_first.push(turn_from.len() as u32);
        }
        // Sized for every pair of arcs at each junction, which rules and copies change.
        turn_from.shrink_to_fit();
        turn_to.shrink_to_fit();
        turn_flags.shrink_to_fit();
        // Turns out of each routing node: a range of consecutive turns.
        let nodes = node_arc.len();
        let (mut out_start, mut out_len) = (vec![0u32; nodes], vec![0u16; nodes]);
        let mut t = 0;
        while t < turn_from.len() {
            let x = turn_from[t] as usize;
            let e = t + turn_from[t..]
                .iter()
                .take_while(|&&y| y as usize == x)
                .count();
            assert!(
                out_len[x] == 0,
                "routing node {x}: turns out of it are not consecutive"
            );
            out_start[x] = t as u32;
            out_len[x] = u16::try_from(e - t).expect("fewer than 65,536 turns out of a node");
            t = e;
        }
        TurnGraph {
            node_arc,
            turn_from: turn_from.into(),
            turn_to: turn_to.into(),
            turn_flags,
            via_first,
            out_start,
            out_len,
            copies,
            restrictions_applied: applied,
            restrictions_ignored: ignored,
        }
    }

    /// Routing nodes: the arcs and their copies.
    pub fn node_count(&self) -> usize {
        self.node_arc.len()
    }
    pub fn turn_count(&self) -> usize {
        self.turn_from.len()
    }

    /// The turns at a junction.
    pub fn turns_at(&self, v: NodeId) -> std::ops::Range<usize> {
        self.via_first[v as usize] as usize..self.via_first[v as usize + 1] as usize
    }

    /// The turns out of a routing node.
    pub fn turns_out_of(&self, x: u32) -> std::ops::Range<u32> {
        let s = self.out_start[x as usize];
        s..s + u32::from(self.out_len[x as usize])
    }

    /// The routing nodes that travel a city arc: the arc itself and its copies.
    pub fn nodes_of_arc(&self, a: ArcId) -> impl Iterator<Item = u32> + '_ {
        let start = self.copies.partition_point(|&(b, _)| b < a);
        std::iter::once(a).chain(
            self.copies[start..]
                .iter()
                .take_while(move |&&(b, _)| b == a)
                .map(|&(_, x)| x),
        )
    }

    pub fn memory_bytes(&self) -> usize {
        4 * (self.node_arc.len()
            + self.turn_from.len()
            + self.turn_to.len()
            + self.via_first.len()
            + self.out_start.len()
            + 2 * self.copies.len())
            + 2 * self.out_len.len()
            + self.turn_flags.len()
    }
}

/// The signed turn angle from arc `a` into arc `b` in degrees, (-180, 180]: positive to the right.
pub fn turn_angle(g: &CityGraph, a: ArcId, b: ArcId) -> i32 {
    let d = (g.arc_bearing_start(b) as i32 - g.arc_bearing_end(a) as i32).rem_euclid(360);
    if d > 180 { d - 360 } else { d }
}

/// Where the crossover a rider on arc `a` enters by arc `c` leads: `None` when `c` enters no
/// crossover (`a` unnamed, `c` back along `a`, named like `a`, or longer than
/// [`CROSSOVER_MAX_M`]); else whether it reaches an arc named like `a` heading back more than
/// `back_deg` from it, and whether it reaches any other way out (a side street, the same road
/// onward, a longer way). The crossover is up to [`CROSSOVER_MAX_ARCS`] arcs and
/// [`CROSSOVER_MAX_M`] together, none named like `a`; `next` gives the arcs a rider may take on from
/// an arc.
pub fn crossover_exits<I: Iterator<Item = ArcId>>(
    g: &CityGraph,
    a: ArcId,
    c: ArcId,
    next: impl Fn(ArcId) -> I,
    back_deg: i32,
) -> Option<(bool, bool)> {
    let name = |x: ArcId| g.routing_name(x);
    let n = name(a);
    let len = g.arc_length_m(c);
    if n == 0 || c == a ^ 1 || name(c) == n || len > CROSSOVER_MAX_M {
        return None;
    }
    let (mut back, mut elsewhere) = (false, false);
    let mut stack = vec![(c, len, 1)];
    while let Some((last, len, arcs)) = stack.pop() {
        for b in next(last) {
            if b == last ^ 1 {
                continue;
            }
            if name(b) == n {
                if turn_angle(g, a, b).abs() > back_deg {
                    back = true;
                    continue;
                }
            } else if arcs < CROSSOVER_MAX_ARCS && len + g.arc_length_m(b) <= CROSSOVER_MAX_M {
                stack.push((b, len + g.arc_length_m(b), arcs + 1));
                continue;
            }
            elsewhere = true;
        }
    }
    Some((back, elsewhere))
}

/// The turns (carriageway arc, crossover arc) into a crossover that only leads back along the
/// other carriageway of the same name (more than [`TURN_BACK_MIN_DEG`] from the first), by the ways
/// a bicycle may take (ridden or pushed; not against a one-way).
fn turn_back_entries<'a>(
    g: &CityGraph,
    outs: &impl Fn(NodeId) -> &'a [ArcId],
) -> HashSet<(ArcId, ArcId)> {
    let rideable = |a: ArcId| g.arc_attrs[a as usize].bike() != crate::graph::BikeAccess::No;
    let next = |x: ArcId| {
        outs(g.arc_head(x))
            .iter()
            .copied()
            .filter(move |&b| rideable(b))
    };
    let mut found = HashSet::new();
    for a in 0..g.arc_count() as ArcId {
        for c in next(a) {
            if crossover_exits(g, a, c, next, TURN_BACK_MIN_DEG) == Some((true, false)) {
                found.insert((a, c));
            }
        }
    }
    found
}

/// The arcs out of each junction (CSR): `out_arc[out_first[v]..out_first[v + 1]]`.
fn arcs_out(g: &CityGraph) -> (Vec<u32>, Vec<ArcId>) {
    let (n, arc_count) = (g.node_count(), g.arc_count());
    let mut out_first = vec![0u32; n + 1];
    for a in 0..arc_count as ArcId {
        out_first[g.arc_tail(a) as usize + 1] += 1;
    }
    for v in 0..n {
        out_first[v + 1] += out_first[v];
    }
    let mut fill = out_first.clone();
    let mut out_arc = vec![0 as ArcId; arc_count];
    for a in 0..arc_count as ArcId {
        let t = g.arc_tail(a) as usize;
        out_arc[fill[t] as usize] = a;
        fill[t] += 1;
    }
    (out_first, out_arc)
}

/// The version of the rules [`turn_back_entries`] follows, stored with the pairs it found
/// ([`CityGraph::turn_back_pairs`]): raise it when they change, so older files are searched again.
const TURN_BACK_RULES: u32 = 1;

/// The turn-back pairs a graph stores, if stored by these rules and well formed.
fn stored_turn_backs(g: &CityGraph) -> Option<HashSet<(ArcId, ArcId)>> {
    let (&rules, pairs) = g.turn_back_pairs.split_first()?;
    let arcs = g.arc_count() as u32;
    if rules != TURN_BACK_RULES || pairs.len() % 2 != 0 || pairs.iter().any(|&a| a >= arcs) {
        return None;
    }
    Some(pairs.chunks_exact(2).map(|p| (p[0], p[1])).collect())
}

/// What [`CityGraph::turn_back_pairs`] stores for a graph: the rules' version and the pairs,
/// ascending (found afresh, whatever the graph stores).
pub fn turn_back_pairs(g: &CityGraph) -> Vec<u32> {
    let (out_first, out_arc) = arcs_out(g);
    let outs =
        |v: NodeId| &out_arc[out_first[v as usize] as usize..out_first[v as usize + 1] as usize];
    let mut pairs: Vec<(ArcId, ArcId)> = turn_back_entries(g, &outs).into_iter().collect();
    pairs.sort_unstable();
    std::iter::once(TURN_BACK_RULES)
        .chain(pairs.into_iter().flat_map(|(a, c)| [a, c]))
        .collect()
}

/// The restrictions stored in a graph.
pub fn stored_restrictions(g: &CityGraph) -> Vec<TurnRestriction> {
    (0..g.restriction_only.len())
        .map(|r| TurnRestriction {
            arcs: g.restriction_arcs
                [g.restriction_first[r] as usize..g.restriction_first[r + 1] as usize]
                .to_vec(),
            only: g.restriction_only[r] != 0,
        })
        .collect()
}
