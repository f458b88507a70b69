//! The weighting model: per-city data (JSON) that turns arc attributes into weights for each of the
//! engine's metrics. Changing it is a re-customization, never a rebuild.

use crate::cch::{INF_WEIGHT, Weight};
use crate::graph::{ArcId, BikeAccess, CityGraph, SafetyClass, way_flags};
use serde::{Deserialize, Serialize};

/// Weights are tenths of a (penalised) second.
pub const WEIGHT_PER_SECOND: f64 = 10.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricKind {
    SuperSafeDay = 0,
    SuperSafeNight = 1,
    DirectDay = 2,
    DirectNight = 3,
    Walking = 4,
}

impl MetricKind {
    pub const ALL: [MetricKind; 5] = [
        MetricKind::SuperSafeDay,
        MetricKind::SuperSafeNight,
        MetricKind::DirectDay,
        MetricKind::DirectNight,
        MetricKind::Walking,
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
    pub fn name(self) -> &'static str {
        match self {
            MetricKind::SuperSafeDay => "supersafe_day",
            MetricKind::SuperSafeNight => "supersafe_night",
            MetricKind::DirectDay => "direct_day",
            MetricKind::DirectNight => "direct_night",
            MetricKind::Walking => "walking",
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

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CyclingWeights {
    pub class_factor: ClassFactors,
    pub push_factor: f64,
    pub cobbles_factor: f64,
    pub rough_factor: f64,
    pub contraflow_factor: f64,
    pub climb_seconds_per_metre: f64,
    pub unlit_factor_at_night: f64,
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
}

pub const DEFAULT_MODEL_JSON: &str = include_str!("../weighting.json");

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
            if w.climb_seconds_per_metre.is_nan() || w.climb_seconds_per_metre < 0.0 {
                return Err(format!(
                    "weighting model: {n}.climb_seconds_per_metre must be ≥ 0"
                ));
            }
        }
        positive("walking.steps_factor", self.walking.steps_factor)?;
        positive("avoid.factor", self.avoid.factor)?;
        Ok(())
    }

    /// Travel time of an arc in seconds for a profile (pushing is at walking speed).
    pub fn duration_s(&self, g: &CityGraph, arc: ArcId, cycling: bool, ebike: bool) -> f64 {
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
            if !attrs.foot() || attrs.restriction_clone() {
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
            let w = match kind {
                MetricKind::SuperSafeDay | MetricKind::SuperSafeNight => &self.supersafe,
                _ => &self.direct,
            };
            let mut s = self.duration_s(g, arc, true, false);
            s *= w.class_factor.get(attrs.safety_class());
            if attrs.bike() == BikeAccess::Push {
                s *= w.push_factor;
            }
            if flags & way_flags::COBBLES != 0 {
                s *= w.cobbles_factor;
            }
            if flags & way_flags::ROUGH != 0 {
                s *= w.rough_factor;
            }
            if attrs.contraflow() {
                s *= w.contraflow_factor;
            }
            if matches!(kind, MetricKind::SuperSafeNight | MetricKind::DirectNight)
                && flags & way_flags::LIT == 0
            {
                s *= w.unlit_factor_at_night;
            }
            s + w.climb_seconds_per_metre * g.arc_climb_m(arc) as f64
        };
        ((seconds * WEIGHT_PER_SECOND).round() as Weight).clamp(1, INF_WEIGHT - 1)
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
