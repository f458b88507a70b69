//! The weighting model: per-city data (JSON) that turns arc attributes into weights for each of the
//! engine's metrics. Changing it is a re-customization, never a rebuild.

use crate::cch::{INF_WEIGHT, Weight, add};
use crate::graph::turns::{TurnGraph, turn_flags};
use crate::graph::{ArcId, BikeAccess, CityGraph, NodeId, SafetyClass, TrafficControl, way_flags};
use serde::{Deserialize, Serialize};

pub mod avoid;

/// Weights are tenths of a (penalised) second.
pub const WEIGHT_PER_SECOND: f64 = 10.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricKind {
    SuperSafeDay = 0,
    SuperSafeNight = 1,
    DirectDay = 2,
    DirectNight = 3,
    Walking = 4,
    /// SuperSafe's gentler weighting, ridden when the full one's detour is over budget
    /// (`DetourBudget`).
    SuperSafeGentleDay = 5,
    SuperSafeGentleNight = 6,
}

impl MetricKind {
    pub const ALL: [MetricKind; 7] = [
        MetricKind::SuperSafeDay,
        MetricKind::SuperSafeNight,
        MetricKind::DirectDay,
        MetricKind::DirectNight,
        MetricKind::Walking,
        MetricKind::SuperSafeGentleDay,
        MetricKind::SuperSafeGentleNight,
    ];
    pub fn cycling(supersafe: bool, night: bool) -> MetricKind {
        match (supersafe, night) {
            (true, false) => MetricKind::SuperSafeDay,
            (true, true) => MetricKind::SuperSafeNight,
            (false, false) => MetricKind::DirectDay,
            (false, true) => MetricKind::DirectNight,
        }
    }
    pub fn is_cycling(self) -> bool {
        self != MetricKind::Walking
    }
    pub fn is_night(self) -> bool {
        matches!(
            self,
            MetricKind::SuperSafeNight | MetricKind::DirectNight | MetricKind::SuperSafeGentleNight
        )
    }
    /// The gentler SuperSafe weighting of the same time of day.
    pub fn gentle(self) -> MetricKind {
        if self.is_night() {
            MetricKind::SuperSafeGentleNight
        } else {
            MetricKind::SuperSafeGentleDay
        }
    }
    /// Direct of the same time of day.
    pub fn direct(self) -> MetricKind {
        MetricKind::cycling(false, self.is_night())
    }
    pub fn name(self) -> &'static str {
        match self {
            MetricKind::SuperSafeDay => "supersafe_day",
            MetricKind::SuperSafeNight => "supersafe_night",
            MetricKind::DirectDay => "direct_day",
            MetricKind::DirectNight => "direct_night",
            MetricKind::Walking => "walking",
            MetricKind::SuperSafeGentleDay => "supersafe_gentle_day",
            MetricKind::SuperSafeGentleNight => "supersafe_gentle_night",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ClassFactors {
    pub cycleway: f64,
    pub quiet: f64,
    pub shared: f64,
    pub moderate: f64,
    pub busy: f64,
    pub very_busy: f64,
}

impl ClassFactors {
    fn get(&self, c: SafetyClass) -> f64 {
        match c {
            SafetyClass::Cycleway => self.cycleway,
            SafetyClass::Quiet => self.quiet,
            SafetyClass::Shared => self.shared,
            SafetyClass::Moderate => self.moderate,
            SafetyClass::Busy => self.busy,
            SafetyClass::VeryBusy => self.very_busy,
        }
    }
}

/// Turn costs of a cycling metric, in seconds (see docs/safety-rules.md for the reason of each).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TurnCosts {
    /// Turns within this many degrees of straight on cost nothing.
    pub straight_degrees: f64,
    /// A turn to the kerb side (right where traffic keeps right, left in London).
    pub near_side_seconds: f64,
    /// A turn across the oncoming lanes.
    pub far_side_seconds: f64,
    /// A turn sharper than 150° onto another road.
    pub sharp_seconds: f64,
    /// Turning back at a dead end (elsewhere a U-turn is never taken).
    pub u_turn_seconds: f64,
    /// Turning back across a divided road: entering a crossover that leads only back along the other
    /// carriageway (`turn_flags::TURN_BACK`).
    #[serde(default = "default_turn_back_seconds")]
    pub turn_back_seconds: f64,
    /// Passing a junction with traffic signals (the average wait).
    pub signal_seconds: f64,
    /// A stop sign or give-way that applies to the arc arriving.
    pub stop_seconds: f64,
    /// Crossing a road of this class (straight across, or a far-side turn) at a junction without
    /// signals.
    pub cross_moderate_seconds: f64,
    pub cross_busy_seconds: f64,
    pub cross_very_busy_seconds: f64,
}

fn default_turn_back_seconds() -> f64 {
    60.0
}

impl Default for TurnCosts {
    fn default() -> Self {
        TurnCosts {
            straight_degrees: 35.0,
            near_side_seconds: 2.0,
            far_side_seconds: 5.0,
            sharp_seconds: 8.0,
            u_turn_seconds: 15.0,
            turn_back_seconds: default_turn_back_seconds(),
            signal_seconds: 8.0,
            stop_seconds: 3.0,
            cross_moderate_seconds: 0.0,
            cross_busy_seconds: 3.0,
            cross_very_busy_seconds: 6.0,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CyclingWeights {
    pub class_factor: ClassFactors,
    /// The discomfort of a pushed metre, on top of its walking time (three times a ridden
    /// metre's): it takes the place of the class factor, since a rider on foot meets no traffic
    /// but is off the bike among pedestrians (docs/safety-rules.md, "Pushing").
    pub push_factor: f64,
    pub cobbles_factor: f64,
    pub rough_factor: f64,
    pub contraflow_factor: f64,
    pub climb_seconds_per_metre: f64,
    pub unlit_factor_at_night: f64,
    #[serde(default)]
    pub turns: TurnCosts,
}

/// SuperSafe with a bounded detour: the spec's busy roads are "used only when it meaningfully
/// shortens the route" and very busy ones "avoided unless no way around". A leg rides the full
/// SuperSafe weighting when its length and its duration are within the budget over Direct's, else
/// the gentler one (each class factor and crossing cost `gentle_share` of the way from 1 and 0),
/// else, when even that is more than `max_ratio` times Direct's length or duration, Direct's own
/// route. The duration counts what walking the bike costs: a route as long as Direct's that walks
/// much of it takes up to three times as long. And the full weighting may walk the bike at most
/// `extra_pushed_m` (or `extra_pushed_share` of Direct's length) more than Direct: a short walk
/// that saves a busy road is SuperSafe's, a kilometre along a busy road's pavement is not.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DetourBudget {
    pub gentle_share: f64,
    /// Within budget: at most `ratio` × Direct's length, or Direct's length plus `extra_m`; and at
    /// most `ratio` × Direct's duration, or Direct's duration plus `extra_s`.
    pub ratio: f64,
    pub extra_m: f64,
    #[serde(default = "default_extra_s")]
    pub extra_s: f64,
    /// Within budget: pushed metres at most Direct's plus `extra_pushed_m`, or plus
    /// `extra_pushed_share` × Direct's length.
    #[serde(default = "default_extra_pushed_m")]
    pub extra_pushed_m: f64,
    #[serde(default = "default_extra_pushed_share")]
    pub extra_pushed_share: f64,
    pub max_ratio: f64,
}

fn default_extra_pushed_m() -> f64 {
    200.0
}

fn default_extra_pushed_share() -> f64 {
    0.1
}

/// `extra_m` ridden at 15 km/h.
fn default_extra_s() -> f64 {
    36.0
}

impl Default for DetourBudget {
    fn default() -> Self {
        DetourBudget {
            gentle_share: 0.3,
            ratio: 1.3,
            extra_m: 150.0,
            extra_s: default_extra_s(),
            extra_pushed_m: default_extra_pushed_m(),
            extra_pushed_share: default_extra_pushed_share(),
            max_ratio: 1.6,
        }
    }
}

/// A leg's length (m), duration (s) and metres pushed, as the detour budget compares them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LegCost {
    pub length_m: f64,
    pub duration_s: f64,
    pub pushed_m: f64,
}

impl DetourBudget {
    /// Whether a leg is within budget over Direct's.
    pub fn within(&self, leg: LegCost, direct: LegCost) -> bool {
        leg.length_m <= (direct.length_m * self.ratio).max(direct.length_m + self.extra_m)
            && leg.duration_s
                <= (direct.duration_s * self.ratio).max(direct.duration_s + self.extra_s)
            && leg.pushed_m
                <= direct.pushed_m
                    + self
                        .extra_pushed_m
                        .max(self.extra_pushed_share * direct.length_m)
    }

    /// Whether a leg is at most `max_ratio` times Direct's, in length and in duration.
    pub fn within_max(&self, leg: LegCost, direct: LegCost) -> bool {
        leg.length_m <= self.max_ratio * direct.length_m
            && leg.duration_s <= self.max_ratio * direct.duration_s
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WalkingWeights {
    pub steps_factor: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct AvoidWeights {
    /// An `avoid` avoidance multiplies the arc's weight by this and adds the penalty.
    pub factor: f64,
    pub penalty_seconds: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WeightingModel {
    pub cycling_speed_kmh: f64,
    pub ebike_speed_kmh: f64,
    pub walking_speed_kmh: f64,
    pub supersafe: CyclingWeights,
    pub direct: CyclingWeights,
    pub walking: WalkingWeights,
    pub avoid: AvoidWeights,
    #[serde(default)]
    pub supersafe_detour: DetourBudget,
}

pub const DEFAULT_MODEL_JSON: &str = include_str!("../../weighting.json");

impl Default for WeightingModel {
    fn default() -> Self {
        serde_json::from_str(DEFAULT_MODEL_JSON).expect("embedded weighting model is valid")
    }
}

impl WeightingModel {
    pub fn from_json(s: &str) -> Result<WeightingModel, String> {
        let m: WeightingModel =
            serde_json::from_str(s).map_err(|e| format!("weighting model: {e}"))?;
        m.validate()?;
        Ok(m)
    }

    pub fn validate(&self) -> Result<(), String> {
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("weighting model: {name} must be positive"))
            }
        };
        positive("cycling_speed_kmh", self.cycling_speed_kmh)?;
        positive("ebike_speed_kmh", self.ebike_speed_kmh)?;
        positive("walking_speed_kmh", self.walking_speed_kmh)?;
        for (n, w) in [("supersafe", &self.supersafe), ("direct", &self.direct)] {
            let c = &w.class_factor;
            for (k, v) in [
                ("cycleway", c.cycleway),
                ("quiet", c.quiet),
                ("shared", c.shared),
                ("moderate", c.moderate),
                ("busy", c.busy),
                ("very_busy", c.very_busy),
                ("push_factor", w.push_factor),
                ("cobbles_factor", w.cobbles_factor),
                ("rough_factor", w.rough_factor),
                ("contraflow_factor", w.contraflow_factor),
                ("unlit_factor_at_night", w.unlit_factor_at_night),
            ] {
                positive(&format!("{n}.{k}"), v)?;
            }
            let t = &w.turns;
            for (k, v) in [
                ("straight_degrees", t.straight_degrees),
                ("near_side_seconds", t.near_side_seconds),
                ("far_side_seconds", t.far_side_seconds),
                ("sharp_seconds", t.sharp_seconds),
                ("u_turn_seconds", t.u_turn_seconds),
                ("turn_back_seconds", t.turn_back_seconds),
                ("signal_seconds", t.signal_seconds),
                ("stop_seconds", t.stop_seconds),
                ("cross_moderate_seconds", t.cross_moderate_seconds),
                ("cross_busy_seconds", t.cross_busy_seconds),
                ("cross_very_busy_seconds", t.cross_very_busy_seconds),
            ] {
                if !v.is_finite() || v < 0.0 {
                    return Err(format!("weighting model: {n}.turns.{k} must be ≥ 0"));
                }
            }
            if w.climb_seconds_per_metre.is_nan() || w.climb_seconds_per_metre < 0.0 {
                return Err(format!(
                    "weighting model: {n}.climb_seconds_per_metre must be ≥ 0"
                ));
            }
        }
        positive("walking.steps_factor", self.walking.steps_factor)?;
        let d = &self.supersafe_detour;
        if !(0.0..=1.0).contains(&d.gentle_share) {
            return Err(
                "weighting model: supersafe_detour.gentle_share must be within 0..1".into(),
            );
        }
        if !(d.ratio >= 1.0
            && d.max_ratio >= d.ratio
            && d.extra_m >= 0.0
            && d.extra_s >= 0.0
            && d.extra_pushed_m >= 0.0
            && d.extra_pushed_share >= 0.0)
        {
            return Err(
                "weighting model: supersafe_detour needs ratio ≥ 1, max_ratio ≥ ratio, and extra_m, extra_s, extra_pushed_m, extra_pushed_share ≥ 0"
                    .into(),
            );
        }
        positive("avoid.factor", self.avoid.factor)?;
        Ok(())
    }

    /// Travel time of an arc in seconds for a profile (pushing is at walking speed).
    pub fn duration_s(&self, g: &CityGraph, arc: ArcId, cycling: bool, ebike: bool) -> f64 {
        // A ferry takes its timetable's time (`duration`), whoever rides it.
        if let Some(d) = g.arc_fixed_duration_s(arc) {
            return d;
        }
        let len = g.arc_length_m(arc) as f64;
        let attrs = g.arc_attrs[arc as usize];
        let kmh = if !cycling || attrs.bike() == BikeAccess::Push {
            self.walking_speed_kmh
        } else if ebike {
            self.ebike_speed_kmh
        } else {
            self.cycling_speed_kmh
        };
        len / (kmh / 3.6)
    }

    /// The weight of one arc in one metric (INF when the profile may not use it).
    pub fn arc_weight(&self, g: &CityGraph, arc: ArcId, kind: MetricKind) -> Weight {
        let attrs = g.arc_attrs[arc as usize];
        let flags = g.way_flags[g.arc_way(arc) as usize];
        let seconds = if kind == MetricKind::Walking {
            if !attrs.foot() {
                return INF_WEIGHT;
            }
            let mut s = self.duration_s(g, arc, false, false);
            if flags & way_flags::STEPS != 0 {
                s *= self.walking.steps_factor;
            }
            s
        } else {
            if attrs.bike() == BikeAccess::No {
                return INF_WEIGHT;
            }
            let w = self.cycling_weights(kind);
            let mut s = self.duration_s(g, arc, true, false);
            let pushed = attrs.bike() == BikeAccess::Push;
            if pushed {
                // Walking time (three times riding's) with the push's own discomfort, whatever the
                // road beside: the pavement of a busy road is walked, not ridden quietly.
                s *= w.push_factor;
                // Carrying a bike up or down steps is slower than walking them, less so on a
                // wheeling ramp.
                if flags & way_flags::STEPS != 0 {
                    s *= if flags & way_flags::BICYCLE_RAMP != 0 {
                        self.walking.steps_factor
                    } else {
                        2.0 * self.walking.steps_factor
                    };
                }
            } else {
                s *= w.class_factor.get(attrs.safety_class());
            }
            if flags & way_flags::COBBLES != 0 {
                s *= w.cobbles_factor;
            }
            if flags & way_flags::ROUGH != 0 {
                s *= w.rough_factor;
            }
            if attrs.contraflow() && !pushed {
                s *= w.contraflow_factor;
            }
            if kind.is_night() && flags & way_flags::LIT == 0 {
                s *= w.unlit_factor_at_night;
            }
            s + w.climb_seconds_per_metre * g.arc_climb_m(arc) as f64
        };
        ((seconds * WEIGHT_PER_SECOND).round() as Weight).clamp(1, INF_WEIGHT - 1)
    }

    /// The weight `turn_back_seconds` adds to a turn in a cycling metric.
    pub fn turn_back_weight(&self, kind: MetricKind) -> Weight {
        (self.cycling_weights(kind).turns.turn_back_seconds * WEIGHT_PER_SECOND).round() as Weight
    }

    fn cycling_weights(&self, kind: MetricKind) -> std::borrow::Cow<'_, CyclingWeights> {
        use std::borrow::Cow;
        match kind {
            MetricKind::SuperSafeDay | MetricKind::SuperSafeNight => Cow::Borrowed(&self.supersafe),
            MetricKind::SuperSafeGentleDay | MetricKind::SuperSafeGentleNight => {
                Cow::Owned(self.gentle_supersafe())
            }
            _ => Cow::Borrowed(&self.direct),
        }
    }

    /// SuperSafe's gentler weighting: class factors and crossing costs `gentle_share` of the way
    /// from neutral (factor 1, no cost) to SuperSafe's.
    pub fn gentle_supersafe(&self) -> CyclingWeights {
        let k = self.supersafe_detour.gentle_share;
        let f = |x: f64| 1.0 + (x - 1.0) * k;
        let mut w = self.supersafe.clone();
        let c = &mut w.class_factor;
        for x in [
            &mut c.cycleway,
            &mut c.quiet,
            &mut c.shared,
            &mut c.moderate,
            &mut c.busy,
            &mut c.very_busy,
        ] {
            *x = f(*x);
        }
        let t = &mut w.turns;
        for x in [
            &mut t.cross_moderate_seconds,
            &mut t.cross_busy_seconds,
            &mut t.cross_very_busy_seconds,
        ] {
            *x *= k;
        }
        w
    }

    /// Weights of the turns at one junction (`out[i]` for turn `turns.turns_at(v).start + i`): the
    /// weight of the arc entered plus the turn's cost; INF where the arc is closed to the profile,
    /// a restriction forbids the turn (cycling), or it is a U-turn and the arc arriving offers any
    /// other way on.
    pub fn turn_weights_at(
        &self,
        g: &CityGraph,
        turns: &TurnGraph,
        v: NodeId,
        kind: MetricKind,
        arc_w: &(impl std::ops::Index<usize, Output = Weight> + ?Sized),
        out: &mut [Weight],
    ) {
        let range = turns.turns_at(v);
        let start = range.start;
        if range.is_empty() {
            return;
        }
        let cycling = kind.is_cycling();
        let weights = self.cycling_weights(kind);
        let costs = &weights.turns;
        let secs = |s: f64| (s * WEIGHT_PER_SECOND).round() as Weight;
        let signals = g.node_control[v as usize] == TrafficControl::Signals as u8;
        let keep_left = g.city.as_ref().is_some_and(|c| c.drives_on_left);
        // The arcs leaving v: the targets of the first arriving node's turns.
        let first_from = turns.turn_from[start];
        let leaving: Vec<ArcId> = range
            .clone()
            .take_while(|&t| turns.turn_from[t] == first_from)
            .map(|t| turns.node_arc[turns.turn_to[t] as usize])
            .collect();
        let edge_class = |b: ArcId| {
            g.arc_attrs[b as usize]
                .safety_class()
                .max(g.arc_attrs[(b ^ 1) as usize].safety_class())
        };
        let mut i = start;
        while i < range.end {
            let x = turns.turn_from[i];
            let mut j = i;
            while j < range.end && turns.turn_from[j] == x {
                j += 1;
            }
            let a = turns.node_arc[x as usize];
            let mut any_way_on = false;
            for t in i..j {
                let flags = turns.turn_flags[t];
                let b = turns.node_arc[turns.turn_to[t] as usize];
                let wb = arc_w[b as usize];
                out[t - start] = if wb >= INF_WEIGHT
                    || (cycling && flags & turn_flags::NO_BIKE != 0)
                    || flags & turn_flags::U_TURN != 0
                {
                    INF_WEIGHT
                } else {
                    any_way_on = true;
                    if !cycling {
                        wb
                    } else {
                        let mut c = 0.0;
                        let angle = crate::graph::turns::turn_angle(g, a, b) as f64;
                        let straight = angle.abs() <= costs.straight_degrees;
                        let near_side = if keep_left { angle < 0.0 } else { angle > 0.0 };
                        if !straight {
                            c += if angle.abs() > 150.0 {
                                costs.sharp_seconds
                            } else if near_side {
                                costs.near_side_seconds
                            } else {
                                costs.far_side_seconds
                            };
                        }
                        if signals {
                            c += costs.signal_seconds;
                        } else if straight || !near_side {
                            // Crossing the other roads at the junction with no signal to help.
                            let crossed = leaving
                                .iter()
                                .filter(|&&o| o >> 1 != a >> 1 && o >> 1 != b >> 1)
                                .map(|&o| edge_class(o))
                                .max();
                            c += match crossed {
                                Some(SafetyClass::VeryBusy) => costs.cross_very_busy_seconds,
                                Some(SafetyClass::Busy) => costs.cross_busy_seconds,
                                Some(SafetyClass::Moderate) => costs.cross_moderate_seconds,
                                _ => 0.0,
                            };
                        }
                        if g.arc_attrs[a as usize].head_control() {
                            c += costs.stop_seconds;
                        }
                        if flags & turn_flags::TURN_BACK != 0 {
                            c += costs.turn_back_seconds;
                        }
                        add(wb, secs(c))
                    }
                };
            }
            if !any_way_on {
                // A dead end for this profile: turning back is the way on.
                for t in i..j {
                    let flags = turns.turn_flags[t];
                    let b = turns.node_arc[turns.turn_to[t] as usize];
                    if flags & turn_flags::U_TURN != 0
                        && arc_w[b as usize] < INF_WEIGHT
                        && !(cycling && flags & turn_flags::NO_BIKE != 0)
                    {
                        let c = if cycling {
                            secs(costs.u_turn_seconds)
                        } else {
                            0
                        };
                        out[t - start] = add(arc_w[b as usize], c);
                    }
                }
            }
            i = j;
        }
    }

    /// The CCH input weights of every turn for one metric (input arc `t` is turn `t`).
    pub fn turn_input_weights(
        &self,
        g: &CityGraph,
        turns: &TurnGraph,
        kind: MetricKind,
        arc_w: &[Weight],
    ) -> Vec<Weight> {
        // Junctions in blocks on the thread pool: a junction's turns are contiguous, so a block's
        // are too, and each block fills its own part of the weights.
        use rayon::prelude::*;
        const BLOCK: usize = 4096;
        let n = g.node_count();
        let mut w = vec![INF_WEIGHT; turns.turn_count()];
        let mut parts = Vec::with_capacity(n.div_ceil(BLOCK));
        let mut rest = w.as_mut_slice();
        for v0 in (0..n).step_by(BLOCK) {
            let v1 = (v0 + BLOCK).min(n);
            let len = turns.turns_at((v1 - 1) as NodeId).end - turns.turns_at(v0 as NodeId).start;
            let (part, tail) = rest.split_at_mut(len);
            parts.push((v0, v1, part));
            rest = tail;
        }
        parts.into_par_iter().for_each(|(v0, v1, part)| {
            let base = turns.turns_at(v0 as NodeId).start;
            for v in v0..v1 {
                let r = turns.turns_at(v as NodeId);
                self.turn_weights_at(
                    g,
                    turns,
                    v as NodeId,
                    kind,
                    arc_w,
                    &mut part[r.start - base..r.end - base],
                );
            }
        });
        w
    }

    /// Weights of every arc for one metric.
    pub fn weights(&self, g: &CityGraph, kind: MetricKind) -> Vec<Weight> {
        (0..g.arc_count() as ArcId)
            .map(|a| self.arc_weight(g, a, kind))
            .collect()
    }

    /// The weight of an arc under an `avoid` avoidance.
    pub fn avoided(&self, w: Weight) -> Weight {
        if w >= INF_WEIGHT {
            return w;
        }
        let v = w as f64 * self.avoid.factor + self.avoid.penalty_seconds * WEIGHT_PER_SECOND;
        (v.round() as Weight).min(INF_WEIGHT - 1)
    }
}

/// The input arcs (turns) a cycling metric can ever make finite: those into an arc a
/// bicycle may use, ridden or pushed, and not closed to bicycles at the junction, as
/// [`WeightingModel::turn_weights_at`] prices them. U-turns count: closing an arc can make a dead end
/// where turning back becomes the way on. This depends on the graph alone, so the cycling
/// hierarchy restricted to it ([`crate::cch::Cch::restricted`]) serves any model, arc change,
/// ban or avoidance.
pub fn cycling_can_use(g: &CityGraph, turns: &TurnGraph) -> Vec<bool> {
    (0..turns.turn_count())
        .map(|t| {
            let b = turns.node_arc[turns.turn_to[t] as usize];
            g.arc_attrs[b as usize].bike() != BikeAccess::No
                && turns.turn_flags[t] & turn_flags::NO_BIKE == 0
        })
        .collect()
}

#[cfg(test)]
mod detour_budget_tests {
    use super::*;

    fn leg(length_m: f64, duration_s: f64, pushed_m: f64) -> LegCost {
        LegCost {
            length_m,
            duration_s,
            pushed_m,
        }
    }

    #[test]
    fn a_leg_as_long_as_directs_that_walks_is_over_budget_by_its_time_and_its_walk() {
        let b = WeightingModel::default().supersafe_detour;
        // Direct: 2 km ridden in 480 s.
        let direct = leg(2000.0, 480.0, 0.0);
        // The same length with 150 m walked: 108 s on foot instead of 36 s ridden.
        assert!(b.within(leg(2000.0, 552.0, 150.0), direct));
        // With 800 m walked: 1.6 times Direct's time, and 800 m more walking than the budget's 200.
        assert!(!b.within(leg(2000.0, 768.0, 800.0), direct));
        // Within time, yet walking 300 m more than Direct.
        assert!(!b.within(leg(2000.0, 600.0, 300.0), direct));
        // On a short trip the time allowance is Direct's plus 36 s.
        let short = leg(300.0, 72.0, 0.0);
        assert!(b.within(leg(300.0, 100.0, 40.0), short));
        assert!(!b.within(leg(300.0, 120.0, 100.0), short));
        // The gentler weighting's bound: 1.6 times in length and in time.
        assert!(b.within_max(leg(3000.0, 760.0, 0.0), direct));
        assert!(!b.within_max(leg(2000.0, 800.0, 0.0), direct));
    }

    #[test]
    fn the_model_refuses_a_negative_time_allowance() {
        let mut m = WeightingModel::default();
        m.supersafe_detour.extra_s = -1.0;
        assert!(m.validate().is_err());
        let mut m = WeightingModel::default();
        m.supersafe_detour.extra_pushed_share = -0.1;
        assert!(m.validate().is_err());
        // A model written before the duration and push bounds takes their defaults.
        let mut j: serde_json::Value = serde_json::from_str(DEFAULT_MODEL_JSON).unwrap();
        let d = j["supersafe_detour"].as_object_mut().unwrap();
        for k in ["extra_s", "extra_pushed_m", "extra_pushed_share"] {
            d.remove(k);
        }
        let m = WeightingModel::from_json(&j.to_string()).unwrap();
        assert_eq!(m.supersafe_detour, DetourBudget::default());
    }
}
