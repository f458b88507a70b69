//! A loaded city: graph, hierarchy, snapping index and the live metrics. All methods take `&self`
//! and may run concurrently: metrics are immutable `Arc`s swapped under a briefly held lock, so
//! queries never wait for a customization.

use crate::avoid::{Avoidance, Severity};
use crate::cch::{Cch, CustomizedMetric, INF_WEIGHT, Weight, add};
use crate::dijkstra::{Adjacency, Dijkstra};
use crate::format;
use crate::graph::{ArcId, CityGraph, NodeId};
use crate::metric::{MetricKind, WeightingModel};
use crate::query::CchQuery;
use crate::snap::{Snap, SnapIndex};
use crate::turns::TurnGraph;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

/// How far a waypoint may be from the nearest usable road.
pub const MAX_SNAP_M: f64 = 1000.0;
/// A trip's ends may start or end on a road this much farther from the point than the nearest one.
pub const SNAP_SLACK_M: f64 = 12.0;
/// At most this many positions per end.
const SNAP_CANDIDATES: usize = 4;
/// How far from parallel (degrees) another candidate's road may run from the nearest one's.
const ALONGSIDE_DEG: f64 = 30.0;
/// The first waypoint's bearing considers roads this close, within this tolerance.
pub const BEARING_RADIUS_M: f64 = 80.0;
pub const BEARING_TOLERANCE_DEG: f64 = 45.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Cycling,
    Walking,
}

#[derive(Clone, Debug)]
pub struct RouteRequest {
    pub waypoints: Vec<[f64; 2]>,
    pub profile: Profile,
    pub supersafe: bool,
    pub night: bool,
    /// Degrees [0, 360) the route must leave the first waypoint in.
    pub bearing: Option<f64>,
    /// Local minutes of the departure (see `avoid`); `None` applies only always-on avoidances.
    pub departure: Option<i64>,
}

/// Part of an arc travelled: fractions along the arc's own direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArcPiece {
    pub arc: ArcId,
    pub from: f64,
    pub to: f64,
}

#[derive(Clone, Debug)]
pub struct Leg {
    pub pieces: Vec<ArcPiece>,
    pub weight: Weight,
    /// The part of `weight` paid for starting or ending on a snapping candidate other than the
    /// nearest (see [`City::leg_between`]); 0 otherwise.
    pub snap_extra: Weight,
}

#[derive(Clone, Debug)]
pub struct Route {
    pub legs: Vec<Leg>,
    pub waypoints: Vec<Snap>,
    pub metric: MetricKind,
}

#[derive(Debug, PartialEq)]
pub enum RouteError {
    /// Fewer than 2 or more than 25 waypoints, or a coordinate out of range.
    InvalidRequest(String),
}

/// A permanent change to one arc for cycling (accepted rider reports): multiply its weight, close it,
/// or restore the model's weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArcChange {
    Factor(f64),
    Closed,
    Reset,
}

/// A metric in force: the weight of every arc (snapping, the ends of a leg, one-to-many) and the
/// hierarchy customized with the turn weights built from them.
#[derive(Clone)]
pub struct CityMetric {
    pub arc_weights: Vec<Weight>,
    pub hierarchy: CustomizedMetric,
}

impl std::ops::Deref for CityMetric {
    type Target = CustomizedMetric;
    fn deref(&self) -> &CustomizedMetric {
        &self.hierarchy
    }
}

impl CityMetric {
    pub fn memory_bytes(&self) -> usize {
        self.hierarchy.memory_bytes() + 4 * self.arc_weights.len()
    }
}

struct State {
    /// Shared, so a route reads it without copying the model.
    model: Arc<WeightingModel>,
    /// Base metrics (model weights with permanent arc changes), indexed by MetricKind.
    base: Vec<Arc<CityMetric>>,
    arc_changes: HashMap<ArcId, ArcChange>,
    /// Turns banned for cycling by accepted reports (turn ids of the turn model).
    turn_bans: std::collections::HashSet<u32>,
    avoidances: BTreeMap<String, Avoidance>,
    /// Metrics with avoidances applied, by kind and active avoidance ids.
    cache: HashMap<(MetricKind, Vec<String>), Arc<CityMetric>>,
}

pub struct City {
    pub graph: CityGraph,
    pub graph_version: String,
    /// The turn model the hierarchy runs on (routing node = arc, input arc = turn).
    pub turns: TurnGraph,
    pub cch: Arc<Cch>,
    inputs_of: Vec<Vec<u32>>,
    pub adjacency: Adjacency,
    pub snap_index: SnapIndex,
    /// Per edge and profile (cycling, walking): whether it lies in a large strongly connected part of
    /// the network. Waypoints snap to those first, so a point beside a cut-off fragment (a one-way
    /// trap at the extract's edge, a courtyard path) still gets a route.
    well_connected: [Vec<bool>; 2],
    /// Arcs per way (CSR over way indices), for avoidances and reports that name OSM ways.
    way_arcs: (Vec<u32>, Vec<ArcId>),
    state: RwLock<State>,
    queries: Mutex<Vec<CchQuery>>,
    dijkstras: Mutex<Vec<Dijkstra>>,
    /// Serializes writers (arc updates, model swaps), so none loses another's change; queries
    /// never take it.
    writer: Mutex<()>,
}

const CACHE_LIMIT: usize = 64;
/// Queries on a metric after which its pruned query graph is built.
const PRUNE_AFTER_USES: u32 = 16;

impl City {
    pub fn load(path: &Path, model: Option<WeightingModel>) -> Result<City, String> {
        let (graph, version) = format::read_file(path).map_err(|e| e.to_string())?;
        City::from_graph(graph, version, model)
    }

    pub fn from_graph(
        mut graph: CityGraph,
        graph_version: String,
        model: Option<WeightingModel>,
    ) -> Result<City, String> {
        graph.validate()?;
        if graph.city.is_none() {
            return Err("graph has no city section".into());
        }
        let turns = TurnGraph::new(&graph, &crate::turns::stored_restrictions(&graph));
        if graph.order.len() != turns.node_count() {
            graph.order = turns.order(&graph);
        }
        let model = model.unwrap_or_default();
        model.validate()?;
        let cch = Arc::new(Cch::new(
            turns.node_count(),
            &turns.turn_from,
            &turns.turn_to,
            &graph.order,
        ));
        let inputs_of = cch.inputs_by_arc();
        let adjacency = Adjacency::new(graph.node_count(), &graph.edge_tail, &graph.edge_head);
        let snap_index = SnapIndex::new(&graph);
        let way_arcs = arcs_by_way(&graph);
        let arc_changes = HashMap::new();
        let turn_bans = std::collections::HashSet::new();
        let base = customize_all(&graph, &turns, &cch, &model, &arc_changes, &turn_bans);
        let well_connected = [
            well_connected_by_turns(&graph, &turns, &base[MetricKind::DirectDay as usize]),
            well_connected_edges(&graph, &adjacency, |a| graph.arc_attrs[a as usize].foot()),
        ];
        Ok(City {
            graph,
            graph_version,
            turns,
            cch,
            inputs_of,
            adjacency,
            snap_index,
            way_arcs,
            well_connected,
            state: RwLock::new(State {
                model: Arc::new(model),
                base,
                arc_changes,
                turn_bans,
                avoidances: BTreeMap::new(),
                cache: HashMap::new(),
            }),
            queries: Mutex::new(Vec::new()),
            dijkstras: Mutex::new(Vec::new()),
            writer: Mutex::new(()),
        })
    }

    /// Whether an edge lies in the large strongly connected network of a profile.
    pub fn is_well_connected(&self, edge: u32, walking: bool) -> bool {
        self.well_connected[usize::from(walking)][edge as usize]
    }

    pub fn id(&self) -> &str {
        &self.graph.city.as_ref().unwrap().id
    }

    pub fn model(&self) -> Arc<WeightingModel> {
        self.state.read().unwrap().model.clone()
    }

    /// Replaces the weighting model: a full re-customization of every metric, swapped in at once.
    pub fn set_model(&self, model: WeightingModel) -> Result<(), String> {
        model.validate()?;
        let _writer = self.writer.lock().unwrap();
        let (changes, bans) = {
            let st = self.state.read().unwrap();
            (st.arc_changes.clone(), st.turn_bans.clone())
        };
        let base = customize_all(&self.graph, &self.turns, &self.cch, &model, &changes, &bans);
        let mut st = self.state.write().unwrap();
        st.model = Arc::new(model);
        st.base = base;
        st.cache.clear();
        Ok(())
    }

    /// Full re-customization of one metric from its current input weights (for benchmarks).
    pub fn recustomize(&self, kind: MetricKind) {
        let old = self.state.read().unwrap().base[kind as usize].clone();
        let m = Arc::new(CityMetric {
            arc_weights: old.arc_weights.clone(),
            hierarchy: self.cch.customize(&old.input_weights),
        });
        self.state.write().unwrap().base[kind as usize] = m;
    }

    /// Counts a query on a metric; the query that makes it a metric in steady use (base metrics after
    /// an update, avoidance metrics during their window) builds its pruned query graph on the
    /// thread pool. Until then, and while that runs, queries use the full hierarchy, so a new
    /// metric is live at once and one used once or twice costs no pruning.
    fn note_use(&self, m: &Arc<CityMetric>) {
        if m.pruned.get().is_none()
            && m.uses.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == PRUNE_AFTER_USES
        {
            let (cch, m) = (self.cch.clone(), m.clone());
            rayon::spawn(move || {
                m.prepare_queries(&cch);
            });
        }
    }

    /// Waits until every base metric has its pruned query graph (benchmarks, tests).
    pub fn prepare_base_metrics(&self) {
        let base = self.state.read().unwrap().base.clone();
        for m in base {
            m.prepare_queries(&self.cch);
        }
    }

    /// Applies permanent changes to cycling arcs: each cycling base metric is copied, partially
    /// re-customized and swapped in; cached avoidance metrics are dropped.
    pub fn update_arcs(&self, changes: &[(ArcId, ArcChange)]) -> Result<(), String> {
        if let Some((a, _)) = changes
            .iter()
            .find(|(a, _)| *a as usize >= self.graph.arc_count())
        {
            return Err(format!("arc {a} does not exist"));
        }
        let _writer = self.writer.lock().unwrap();
        let (model, old_base, mut all_changes, bans) = {
            let st = self.state.read().unwrap();
            (
                st.model.clone(),
                st.base.clone(),
                st.arc_changes.clone(),
                st.turn_bans.clone(),
            )
        };
        for &(a, c) in changes {
            if c == ArcChange::Reset {
                all_changes.remove(&a);
            } else {
                all_changes.insert(a, c);
            }
        }
        // The four cycling metrics are independent: update copies of them in parallel.
        use rayon::prelude::*;
        let updated: Vec<(MetricKind, Arc<CityMetric>)> = MetricKind::ALL
            .into_par_iter()
            .filter(|k| k.is_cycling())
            .map(|kind| {
                let arc_updates: Vec<(ArcId, Weight)> = changes
                    .iter()
                    .map(|&(a, _)| {
                        (
                            a,
                            changed_weight(&self.graph, &model, kind, a, all_changes.get(&a)),
                        )
                    })
                    .collect();
                let m = self.updated_metric(
                    &old_base[kind as usize],
                    &model,
                    kind,
                    &arc_updates,
                    &[],
                    &bans,
                );
                (kind, Arc::new(m))
            })
            .collect();
        let mut new_base = old_base.clone();
        for (kind, m) in updated {
            new_base[kind as usize] = m;
        }
        let mut st = self.state.write().unwrap();
        st.base = new_base;
        st.arc_changes = all_changes;
        st.cache.clear();
        Ok(())
    }

    pub fn add_avoidance(&self, a: Avoidance) -> Result<(), String> {
        a.schedule.validate()?;
        if let Some(bad) = a
            .arcs
            .iter()
            .find(|&&x| x as usize >= self.graph.arc_count())
        {
            return Err(format!("arc {bad} does not exist"));
        }
        let mut st = self.state.write().unwrap();
        st.cache.retain(|(_, ids), _| !ids.contains(&a.id));
        st.avoidances.insert(a.id.clone(), a);
        Ok(())
    }

    pub fn remove_avoidance(&self, id: &str) -> bool {
        let mut st = self.state.write().unwrap();
        st.cache.retain(|(_, ids), _| !ids.iter().any(|x| x == id));
        st.avoidances.remove(id).is_some()
    }

    pub fn avoidances(&self) -> Vec<Avoidance> {
        self.state
            .read()
            .unwrap()
            .avoidances
            .values()
            .cloned()
            .collect()
    }

    /// Ids of the avoidances in force at a local time.
    pub fn active_avoidances(&self, departure: Option<i64>) -> Vec<String> {
        let st = self.state.read().unwrap();
        active_ids(&st, departure)
    }

    /// The metric in force for a kind at a departure time.
    pub fn metric(&self, kind: MetricKind, departure: Option<i64>) -> Arc<CityMetric> {
        let (base, active, model, avoid_list, bans) = {
            let st = self.state.read().unwrap();
            let base = st.base[kind as usize].clone();
            if !kind.is_cycling() {
                return base;
            }
            let active = active_ids(&st, departure);
            if active.is_empty() {
                return base;
            }
            if let Some(m) = st.cache.get(&(kind, active.clone())) {
                return m.clone();
            }
            let list: Vec<Avoidance> = active.iter().map(|id| st.avoidances[id].clone()).collect();
            (base, active, st.model.clone(), list, st.turn_bans.clone())
        };
        // Build outside the lock: queries keep running on what they hold.
        let mut updates: HashMap<ArcId, Weight> = HashMap::new();
        for av in &avoid_list {
            for &a in &av.arcs {
                let w = match av.severity {
                    Severity::Closed => INF_WEIGHT,
                    Severity::Avoid => model.avoided(base.arc_weights[a as usize]),
                };
                let e = updates.entry(a).or_insert(w);
                *e = (*e).max(w);
            }
        }
        let updates: Vec<(ArcId, Weight)> = updates.into_iter().collect();
        let m = Arc::new(self.updated_metric(&base, &model, kind, &updates, &[], &bans));
        let mut st = self.state.write().unwrap();
        if st.cache.len() >= CACHE_LIMIT {
            st.cache.clear();
        }
        st.cache.insert((kind, active), m.clone());
        m
    }

    /// Snaps a point for a metric; `bearing` restricts direction (first waypoint only).
    pub fn snap(
        &self,
        lon: f64,
        lat: f64,
        kind: MetricKind,
        metric: &CityMetric,
        bearing: Option<f64>,
    ) -> Option<Snap> {
        self.snap_candidates(lon, lat, kind, metric, bearing, 0.0)
            .into_iter()
            .next()
    }

    /// The nearest snap and the positions on other edges within `slack_m` more of the point (see
    /// [`SnapIndex::candidates`]), on the well-connected network when it has any within reach.
    pub fn snap_candidates(
        &self,
        lon: f64,
        lat: f64,
        kind: MetricKind,
        metric: &CityMetric,
        bearing: Option<f64>,
        slack_m: f64,
    ) -> Vec<Snap> {
        let w = &metric.arc_weights;
        let connected = &self.well_connected[usize::from(kind == MetricKind::Walking)];
        let bearing = bearing.map(|b| (b, BEARING_TOLERANCE_DEG, BEARING_RADIUS_M));
        let g = &self.graph;
        let cycling = kind.is_cycling();
        let usable = |e: u32| {
            // A crossing is walked across on the way; a ride does not start or end on one.
            if cycling
                && g.way_flags[g.arc_way(2 * e) as usize] & crate::graph::way_flags::CROSSING != 0
            {
                return (false, false);
            }
            (
                w[2 * e as usize] < INF_WEIGHT,
                w[2 * e as usize + 1] < INF_WEIGHT,
            )
        };
        let n = if slack_m > 0.0 { SNAP_CANDIDATES } else { 1 };
        let on_connected = self.snap_index.candidates(
            &self.graph,
            lon,
            lat,
            MAX_SNAP_M,
            bearing,
            |e| {
                if connected[e as usize] {
                    usable(e)
                } else {
                    (false, false)
                }
            },
            slack_m,
            n,
        );
        let mut found = if on_connected.is_empty() {
            self.snap_index.candidates(
                &self.graph,
                lon,
                lat,
                MAX_SNAP_M,
                bearing,
                usable,
                slack_m,
                n,
            )
        } else {
            on_connected
        };
        // Another candidate must run alongside the nearest (the other carriageway, a cycle track
        // beside the road), not meet it: a road that joins the nearest one at a node is reached
        // through that junction, as riders do.
        if let Some(&first) = found.first() {
            let g = &self.graph;
            let ends = |e: u32| [g.arc_tail(2 * e), g.arc_head(2 * e)];
            let fe = ends(first.edge);
            found.retain(|c| {
                if c.edge == first.edge {
                    return true;
                }
                let d = (c.heading_deg - first.heading_deg).rem_euclid(180.0);
                let parallel = d.min(180.0 - d) <= ALONGSIDE_DEG;
                parallel && !ends(c.edge).iter().any(|v| fe.contains(v))
            });
        }
        found
    }

    fn with_query<T>(&self, f: impl FnOnce(&mut CchQuery) -> T) -> T {
        let mut q = self
            .queries
            .lock()
            .unwrap()
            .pop()
            .unwrap_or_else(|| CchQuery::new(&self.cch));
        let out = f(&mut q);
        self.queries.lock().unwrap().push(q);
        out
    }

    /// Plans a route; `Ok(None)` when no route exists (a waypoint cannot be snapped or a leg has no path).
    pub fn route(&self, req: &RouteRequest) -> Result<Option<Route>, RouteError> {
        if !(2..=25).contains(&req.waypoints.len()) {
            return Err(RouteError::InvalidRequest(
                "between 2 and 25 waypoints are required".into(),
            ));
        }
        for p in &req.waypoints {
            if !(-180.0..=180.0).contains(&p[0]) || !(-90.0..=90.0).contains(&p[1]) {
                return Err(RouteError::InvalidRequest(
                    "coordinates must be [longitude, latitude] in range".into(),
                ));
            }
        }
        let kind = match req.profile {
            Profile::Walking => MetricKind::Walking,
            Profile::Cycling => MetricKind::cycling(req.supersafe, req.night),
        };
        let metric = self.metric(
            kind,
            if kind.is_cycling() {
                req.departure
            } else {
                None
            },
        );
        self.note_use(&metric);
        // The trip's two ends may start or end on any road within a few metres more than the
        // nearest (the other carriageway of a divided road, the cycle track beside it); a via point
        // keeps one position, so that the legs it joins meet.
        let last = req.waypoints.len() - 1;
        let mut cands: Vec<Vec<Snap>> = Vec::with_capacity(req.waypoints.len());
        for (i, p) in req.waypoints.iter().enumerate() {
            let bearing = if i == 0 && req.profile == Profile::Cycling {
                req.bearing
            } else {
                None
            };
            let slack = if i == 0 || i == last {
                SNAP_SLACK_M
            } else {
                0.0
            };
            let c = self.snap_candidates(p[0], p[1], kind, &metric, bearing, slack);
            if c.is_empty() {
                return Ok(None);
            }
            cands.push(c);
        }
        // SuperSafe with a bounded detour: each leg also asks Direct and, when the full weighting's
        // detour is over budget, the gentler one (see `DetourBudget`).
        let bounded = (kind.is_cycling() && req.supersafe).then(|| {
            let (direct, gentle) = (
                self.metric(kind.direct(), req.departure),
                self.metric(kind.gentle(), req.departure),
            );
            self.note_use(&direct);
            self.note_use(&gentle);
            (direct, gentle)
        });
        let budget = bounded
            .is_some()
            .then(|| self.model().supersafe_detour.clone());
        let mut legs = Vec::with_capacity(last);
        let mut snaps: Vec<Snap> = cands.iter().map(|c| c[0]).collect();
        for (k, pair) in cands.windows(2).enumerate() {
            let leg = self.with_query(|q| {
                let full = self.leg_between(q, &metric, &pair[0], &pair[1])?;
                let (Some((direct, gentle)), Some(budget)) = (&bounded, &budget) else {
                    return Some(full);
                };
                let Some(shortest) = self.leg_between(q, direct, &pair[0], &pair[1]) else {
                    return Some(full);
                };
                let direct_m = self.leg_length_m(&shortest.0);
                if budget.within(self.leg_length_m(&full.0), direct_m) {
                    return Some(full);
                }
                match self.leg_between(q, gentle, &pair[0], &pair[1]) {
                    Some(g) if self.leg_length_m(&g.0) <= budget.max_ratio * direct_m => Some(g),
                    _ => Some(shortest),
                }
            });
            match leg {
                Some((leg, i, j)) => {
                    snaps[k] = pair[0][i];
                    snaps[k + 1] = pair[1][j];
                    legs.push(leg);
                }
                None => return Ok(None),
            }
        }
        Ok(Some(Route {
            legs,
            waypoints: snaps,
            metric: kind,
        }))
    }

    /// Replaces the turns banned for cycling (accepted reports): each ban is (from way, via node or
    /// any junction the two ways share, to way) by OSM ids. Every cycling metric is re-weighted at the
    /// junctions whose bans changed and swapped in. Returns how many turns the bans matched.
    pub fn set_turn_bans(&self, bans: &[(i64, Option<i64>, i64)]) -> usize {
        let g = &self.graph;
        let way_of: HashMap<i64, u32> = g
            .way_osm_id
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, i as u32))
            .collect();
        let mut banned = std::collections::HashSet::new();
        for &(from, via, to) in bans {
            let (Some(&fw), Some(&tw)) = (way_of.get(&from), way_of.get(&to)) else {
                continue;
            };
            for v in 0..g.node_count() as NodeId {
                if via.is_some_and(|n| g.node_osm_id[v as usize] != n) {
                    continue;
                }
                for t in self.turns.turns_at(v) {
                    let (a, b) = (
                        self.turns.node_arc[self.turns.turn_from[t] as usize],
                        self.turns.node_arc[self.turns.turn_to[t] as usize],
                    );
                    if g.arc_way(a) == fw
                        && g.arc_way(b) == tw
                        && self.turns.turn_flags[t] & crate::turns::turn_flags::U_TURN == 0
                    {
                        banned.insert(t as u32);
                    }
                }
            }
        }
        let matched = banned.len();
        let _writer = self.writer.lock().unwrap();
        let (model, old_base, old_bans) = {
            let st = self.state.read().unwrap();
            (st.model.clone(), st.base.clone(), st.turn_bans.clone())
        };
        let via_of = |t: u32| (self.turns.via_first.partition_point(|&f| f <= t) - 1) as NodeId;
        let mut junctions: Vec<NodeId> = old_bans
            .symmetric_difference(&banned)
            .map(|&t| via_of(t))
            .collect();
        junctions.sort_unstable();
        junctions.dedup();
        use rayon::prelude::*;
        let updated: Vec<(MetricKind, Arc<CityMetric>)> = MetricKind::ALL
            .into_par_iter()
            .filter(|k| k.is_cycling())
            .map(|kind| {
                let m = self.updated_metric(
                    &old_base[kind as usize],
                    &model,
                    kind,
                    &[],
                    &junctions,
                    &banned,
                );
                (kind, Arc::new(m))
            })
            .collect();
        let mut st = self.state.write().unwrap();
        for (kind, m) in updated {
            st.base[kind as usize] = m;
        }
        st.turn_bans = banned;
        st.cache.clear();
        matched
    }

    /// Metres ridden on a leg.
    pub fn leg_length_m(&self, leg: &Leg) -> f64 {
        leg.pieces
            .iter()
            .map(|p| self.graph.arc_length_m(p.arc) as f64 * (p.to - p.from))
            .sum()
    }

    /// A copy of a metric with new weights for some arcs: the turns at the junctions those arcs
    /// touch are re-weighted (the turns into an arc carry its weight, and closing an arc can make a
    /// dead end where a U-turn becomes the way on), then the hierarchy is partially re-customized.
    fn updated_metric(
        &self,
        old: &CityMetric,
        model: &WeightingModel,
        kind: MetricKind,
        arc_updates: &[(ArcId, Weight)],
        more_junctions: &[NodeId],
        bans: &std::collections::HashSet<u32>,
    ) -> CityMetric {
        let g = &self.graph;
        let mut arc_weights = old.arc_weights.clone();
        let mut junctions: Vec<NodeId> = more_junctions.to_vec();
        for &(a, w) in arc_updates {
            arc_weights[a as usize] = w;
            junctions.push(g.arc_tail(a));
            junctions.push(g.arc_head(a));
        }
        junctions.sort_unstable();
        junctions.dedup();
        let mut updates: Vec<(ArcId, Weight)> = Vec::new();
        let mut buf = Vec::new();
        for &v in &junctions {
            let r = self.turns.turns_at(v);
            buf.clear();
            buf.resize(r.len(), INF_WEIGHT);
            model.turn_weights_at(g, &self.turns, v, kind, &arc_weights, &mut buf);
            for (i, t) in r.enumerate() {
                if kind.is_cycling() && bans.contains(&(t as u32)) {
                    buf[i] = INF_WEIGHT;
                }
                if old.input_weights[2 * t] != buf[i] {
                    updates.push((2 * t as ArcId, buf[i]));
                }
            }
        }
        let mut hierarchy = old.hierarchy.clone();
        self.cch.update(&mut hierarchy, &updates, &self.inputs_of);
        CityMetric {
            arc_weights,
            hierarchy,
        }
    }

    /// One leg between two snapped positions, on the turn model: a routing node stands for a whole
    /// arc travelled, so a source seeds the arcs it starts on with the part still ahead, and a target
    /// takes back the part of its arc beyond the target point (from a common offset, as weights
    /// are unsigned).
    ///
    /// The start and end may each be several candidates (see
    /// [`City::snap_candidates`]): the search picks the pair, each candidate after the first paying
    /// for the metres it lies farther from the point than the first, at its own arc's rate. Returns
    /// the leg and the indices of the candidates it starts and ends at.
    pub fn leg_between(
        &self,
        q: &mut CchQuery,
        metric: &CityMetric,
        a: &[Snap],
        b: &[Snap],
    ) -> Option<(Leg, usize, usize)> {
        let aw = &metric.arc_weights;
        let g = &self.graph;
        let part = |w: Weight, frac: f64| -> Weight {
            (w as f64 * frac.clamp(0.0, 1.0)).round() as Weight
        };
        let usable = |arc: ArcId| aw[arc as usize] < INF_WEIGHT;
        // The extra metres to a candidate beyond the nearest, priced as riding them on its arc.
        let extra = |c: &Snap, first: &Snap, arc: ArcId| -> Weight {
            let m = c.distance_m - first.distance_m;
            let len = g.arc_length_m(arc) as f64;
            if m <= 0.0 || len <= 0.0 || !usable(arc) {
                0
            } else {
                (aw[arc as usize] as f64 * m / len)
                    .round()
                    .min(INF_WEIGHT as f64 / 4.0) as Weight
            }
        };
        // (arc, fraction of it behind the point, usable from here, candidate, extra)
        let mut starts: Vec<(ArcId, f64, bool, usize, Weight)> = Vec::with_capacity(2 * a.len());
        for (i, c) in a.iter().enumerate() {
            for (arc, f, ok) in [
                (2 * c.edge, c.t, c.forward),
                (2 * c.edge + 1, 1.0 - c.t, c.backward),
            ] {
                starts.push((arc, f, ok, i, extra(c, &a[0], arc)));
            }
        }
        // (arc, fraction of it behind the point, candidate, extra)
        let mut ends: Vec<(ArcId, f64, usize, Weight)> = Vec::with_capacity(2 * b.len());
        for (i, c) in b.iter().enumerate() {
            for (arc, f) in [(2 * c.edge, c.t), (2 * c.edge + 1, 1.0 - c.t)] {
                ends.push((arc, f, i, extra(c, &b[0], arc)));
            }
        }
        let offset = ends
            .iter()
            .filter(|e| usable(e.0))
            .map(|e| aw[e.0 as usize])
            .max()?;
        q.reset();
        for &(arc, f, _, x) in &ends {
            if usable(arc) {
                let w = aw[arc as usize];
                let beyond = w - part(w, f);
                for n in self.turns.nodes_of_arc(arc) {
                    q.add_target(n, add(offset - beyond, x), &self.cch);
                }
            }
        }
        // (routing node, distance, arc started on, fraction of it behind, candidate, its extra)
        let mut seeds: Vec<(u32, Weight, ArcId, f64, usize, Weight)> =
            Vec::with_capacity(4 * a.len());
        for &(arc, f, ok, i, x) in &starts {
            if !ok || !usable(arc) {
                continue;
            }
            let ahead = add(part(aw[arc as usize], 1.0 - f), x);
            if ends.iter().any(|e| e.0 == arc && e.1 < f) {
                // A target lies behind on this very arc: leave the arc by a turn first (seeding the
                // arc itself would meet that target at once, as if it lay ahead).
                for &t in self.turns.turns_out_of(arc) {
                    let w = metric.input_weights[2 * t as usize];
                    if w < INF_WEIGHT {
                        seeds.push((self.turns.turn_to[t as usize], add(ahead, w), arc, f, i, x));
                    }
                }
            }
            if ends.iter().all(|e| e.0 != arc || e.1 >= f) {
                seeds.push((arc, ahead, arc, f, i, x));
            }
        }
        for s in &seeds {
            q.add_source(s.0, s.1, &self.cch);
        }
        q.run(&self.cch, &metric.hierarchy);
        let found = q.distance();
        let mut best = if found < INF_WEIGHT {
            found.saturating_sub(offset)
        } else {
            INF_WEIGHT
        };
        // Start and end on the same arc, the end ahead: ridden directly.
        let mut direct: Option<(ArcPiece, usize, usize, Weight)> = None;
        for &(arc, f, ok, i, xs) in &starts {
            for &(e, ef, j, xe) in &ends {
                if ok && e == arc && ef >= f && usable(arc) {
                    let d = add(add(part(aw[arc as usize], ef - f), xs), xe);
                    if d <= best {
                        best = d;
                        direct = Some((
                            ArcPiece {
                                arc,
                                from: f,
                                to: ef,
                            },
                            i,
                            j,
                            add(xs, xe),
                        ));
                    }
                }
            }
        }
        if let Some((p, i, j, snap_extra)) = direct {
            let leg = Leg {
                pieces: vec![p],
                weight: best,
                snap_extra,
            };
            return Some((leg, i, j));
        }
        if best >= INF_WEIGHT {
            return None;
        }
        let (src, tgt) = q.endpoints(&self.cch)?;
        // The seed the search used at the path's first node: the cheapest one there.
        let &(_, _, first_arc, first_from, start_at, start_extra) =
            seeds.iter().filter(|s| s.0 == src).min_by_key(|s| s.1)?;
        let tgt_arc = self.turns.node_arc[tgt as usize];
        // The end on the target's arc the search reached: the cheapest with its extra.
        let &(_, end_f, end_at, end_extra) =
            ends.iter().filter(|e| e.0 == tgt_arc).min_by_key(|e| e.3)?;
        let path = q.arc_path(&self.cch, &metric.hierarchy);
        let mut pieces = Vec::with_capacity(path.len() + 2);
        let node_arc = &self.turns.node_arc;
        if src == first_arc && path.is_empty() {
            // Started and ended on the same arc (a rounding away from the direct case above).
            pieces.push(ArcPiece {
                arc: first_arc,
                from: first_from,
                to: end_f,
            });
        } else {
            pieces.push(ArcPiece {
                arc: first_arc,
                from: first_from,
                to: 1.0,
            });
            let nodes = std::iter::once(src)
                .filter(|&x| x != first_arc)
                .chain(path.iter().map(|&i| self.turns.turn_to[(i >> 1) as usize]));
            let mut nodes = nodes.peekable();
            while let Some(x) = nodes.next() {
                let arc = node_arc[x as usize];
                let to = if nodes.peek().is_none() {
                    debug_assert_eq!(x, tgt);
                    end_f
                } else {
                    1.0
                };
                pieces.push(ArcPiece { arc, from: 0.0, to });
            }
        }
        pieces.retain(|p| p.to > p.from);
        let leg = Leg {
            pieces,
            weight: best,
            snap_extra: add(start_extra, end_extra),
        };
        Some((leg, start_at, end_at))
    }

    /// From one point to the `k` nearest of `targets` by network cost (cycling or walking metric in
    /// force at `departure`), within `max_seconds` of penalised travel. Returns (target index, cost).
    pub fn one_to_many(
        &self,
        from: [f64; 2],
        targets: &[[f64; 2]],
        k: usize,
        kind: MetricKind,
        departure: Option<i64>,
        max_seconds: f64,
    ) -> Vec<(usize, Weight)> {
        let metric = self.metric(kind, departure);
        let w = &metric.arc_weights;
        let Some(src) = self.snap(from[0], from[1], kind, &metric, None) else {
            return vec![];
        };
        // Each target is reached at its edge's tail or head, then along the edge.
        let mut at_node: HashMap<NodeId, Vec<(usize, Weight)>> = HashMap::new();
        for (i, t) in targets.iter().enumerate() {
            let Some(s) = self.snap(t[0], t[1], kind, &metric, None) else {
                continue;
            };
            let e = s.edge as usize;
            if w[2 * e] < INF_WEIGHT {
                at_node
                    .entry(self.graph.edge_tail[e])
                    .or_default()
                    .push((i, (w[2 * e] as f64 * s.t) as Weight));
            }
            if w[2 * e + 1] < INF_WEIGHT {
                at_node
                    .entry(self.graph.edge_head[e])
                    .or_default()
                    .push((i, (w[2 * e + 1] as f64 * (1.0 - s.t)) as Weight));
            }
        }
        let e = src.edge as usize;
        let mut seeds = Vec::new();
        if w[2 * e] < INF_WEIGHT {
            seeds.push((
                self.graph.edge_head[e],
                (w[2 * e] as f64 * (1.0 - src.t)) as Weight,
            ));
        }
        if w[2 * e + 1] < INF_WEIGHT {
            seeds.push((
                self.graph.edge_tail[e],
                (w[2 * e + 1] as f64 * src.t) as Weight,
            ));
        }
        let max = (max_seconds * crate::metric::WEIGHT_PER_SECOND) as Weight;
        let mut best: HashMap<usize, Weight> = HashMap::new();
        let mut d = self
            .dijkstras
            .lock()
            .unwrap()
            .pop()
            .unwrap_or_else(|| Dijkstra::new(self.graph.node_count()));
        d.run(&self.adjacency, w, &seeds, max, |v, dist| {
            if let Some(list) = at_node.get(&v) {
                for &(i, extra) in list {
                    let c = dist.saturating_add(extra);
                    let e = best.entry(i).or_insert(c);
                    *e = (*e).min(c);
                }
            }
            // Stop once k targets are known and no unsettled one can be nearer than the k-th.
            if best.len() >= k {
                let mut costs: Vec<Weight> = best.values().copied().collect();
                costs.sort_unstable();
                return costs[k - 1] <= dist;
            }
            false
        });
        self.dijkstras.lock().unwrap().push(d);
        let mut out: Vec<(usize, Weight)> = best.into_iter().filter(|&(_, c)| c <= max).collect();
        out.sort_by_key(|&(i, c)| (c, i));
        out.truncate(k);
        out
    }

    /// Bytes held by the graph, hierarchy, index and the current metrics.
    pub fn memory_bytes(&self) -> usize {
        self.memory_breakdown().iter().map(|&(_, b)| b).sum()
    }

    /// [`City::memory_bytes`] by part: the graph, the turn model, the hierarchy's topology, the
    /// snapping index, the adjacency, and per loaded metric its weights, its unpacking data (which
    /// triangle gave each weight) and its pruned query graph.
    pub fn memory_breakdown(&self) -> Vec<(String, usize)> {
        let g = &self.graph;
        let graph = 4
            * (g.node_lon.len() * 4
                + g.edge_tail.len() * 8
                + g.geom_lon.len() * 2
                + g.way_osm_id.len() * 6)
            + g.string_bytes.len()
            + g.arc_attrs.len() * 2;
        let mut out = vec![
            ("graph".to_string(), graph),
            ("turn model".to_string(), self.turns.memory_bytes()),
            ("hierarchy topology".to_string(), self.cch.memory_bytes()),
            ("snapping index".to_string(), self.snap_index.memory_bytes()),
            ("adjacency".to_string(), self.adjacency.arc.len() * 8),
        ];
        let st = self.state.read().unwrap();
        let metrics = st.base.iter().chain(st.cache.values());
        let (mut weights, mut via, mut pruned, mut count) = (0, 0, 0, 0);
        for m in metrics {
            let h = &m.hierarchy;
            count += 1;
            weights += 4 * (h.fw.len() + h.bw.len() + h.input_weights.len() + m.arc_weights.len());
            via += 8 * (h.fw_via.len() + h.bw_via.len());
            pruned += h
                .pruned
                .get()
                .map_or(0, crate::cch::PrunedGraph::memory_bytes);
        }
        out.push((format!("{count} metrics: weights"), weights));
        out.push((format!("{count} metrics: unpacking (via)"), via));
        out.push((format!("{count} metrics: pruned query graphs"), pruned));
        out
    }
}

fn arcs_by_way(g: &CityGraph) -> (Vec<u32>, Vec<ArcId>) {
    let mut first = vec![0u32; g.way_count() + 1];
    for a in 0..g.arc_count() as ArcId {
        first[g.arc_way(a) as usize + 1] += 1;
    }
    for w in 0..g.way_count() {
        first[w + 1] += first[w];
    }
    let mut fill = first.clone();
    let mut arcs = vec![0; g.arc_count()];
    for a in 0..g.arc_count() as ArcId {
        let w = g.arc_way(a) as usize;
        arcs[fill[w] as usize] = a;
        fill[w] += 1;
    }
    (first, arcs)
}

/// Edges whose both ends lie in one strongly connected component of at least a tenth of the largest
/// (and at least 20 nodes) for a profile.
fn well_connected_edges(
    g: &CityGraph,
    adj: &Adjacency,
    usable: impl Fn(ArcId) -> bool,
) -> Vec<bool> {
    let (comp, sizes) = crate::dijkstra::strongly_connected(adj, usable);
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let big = |v: NodeId| {
        let s = sizes[comp[v as usize] as usize];
        s >= 20 && s * 10 >= largest
    };
    (0..g.edge_count())
        .map(|e| {
            let (t, h) = (g.edge_tail[e], g.edge_head[e]);
            comp[t as usize] == comp[h as usize] && big(t)
        })
        .collect()
}

/// The cycling network's well-connected edges, judged on the turn model with `metric`'s turn weights:
/// an edge is well connected when one of its arcs lies in a large strongly connected set of routing
/// nodes. Junction-level connectivity is not enough: a plaza whose every way out is a turn closed to
/// bicycles (a restriction, a barrier) is one piece of the junction graph but an island for a rider,
/// and a waypoint snapped onto it found no route.
fn well_connected_by_turns(g: &CityGraph, turns: &TurnGraph, metric: &CityMetric) -> Vec<bool> {
    let adj = Adjacency::new(turns.node_count(), &turns.turn_from, &turns.turn_to);
    // Adjacency arc 2t runs along turn t; 2t + 1 is its reverse, which no rider takes.
    let (comp, sizes) = crate::dijkstra::strongly_connected(&adj, |a| {
        a % 2 == 0 && metric.input_weights[a as usize] < INF_WEIGHT
    });
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let big = |x: u32| {
        let s = sizes[comp[x as usize] as usize];
        s >= 40 && s * 10 >= largest
    };
    (0..g.edge_count() as u32)
        .map(|e| big(2 * e) || big(2 * e + 1))
        .collect()
}

fn active_ids(st: &State, departure: Option<i64>) -> Vec<String> {
    st.avoidances
        .values()
        .filter(|a| match departure {
            Some(t) => a.schedule.is_active(t),
            None => a.schedule == crate::avoid::Schedule::Always,
        })
        .map(|a| a.id.clone())
        .collect()
}

/// The model weight of an arc with its permanent change applied.
fn changed_weight(
    g: &CityGraph,
    model: &WeightingModel,
    kind: MetricKind,
    arc: ArcId,
    change: Option<&ArcChange>,
) -> Weight {
    let w = model.arc_weight(g, arc, kind);
    match change {
        _ if !kind.is_cycling() => w,
        Some(ArcChange::Closed) => INF_WEIGHT,
        Some(ArcChange::Factor(f)) if w < INF_WEIGHT => {
            ((w as f64 * f).round() as Weight).clamp(1, INF_WEIGHT - 1)
        }
        _ => w,
    }
}

fn customize_all(
    g: &CityGraph,
    turns: &TurnGraph,
    cch: &Cch,
    model: &WeightingModel,
    changes: &HashMap<ArcId, ArcChange>,
    bans: &std::collections::HashSet<u32>,
) -> Vec<Arc<CityMetric>> {
    use rayon::prelude::*;
    MetricKind::ALL
        .par_iter()
        .map(|&kind| {
            let arc_weights: Vec<Weight> = (0..g.arc_count() as ArcId)
                .map(|a| changed_weight(g, model, kind, a, changes.get(&a)))
                .collect();
            let mut turn_weights = model.turn_input_weights(g, turns, kind, &arc_weights);
            if kind.is_cycling() {
                for &t in bans {
                    turn_weights[2 * t as usize] = INF_WEIGHT;
                }
            }
            let hierarchy = cch.customize(&turn_weights);
            hierarchy.prepare_queries(cch);
            Arc::new(CityMetric {
                arc_weights,
                hierarchy,
            })
        })
        .collect()
}

/// Totals and shape of a leg for a profile.
#[derive(Clone, Debug, Default)]
pub struct LegSummary {
    pub distance_m: f64,
    pub duration_s: f64,
    pub elevation_gain_m: f64,
    pub elevation_loss_m: f64,
    pub geometry: Vec<[f64; 2]>,
}

impl City {
    /// The travelled part of one arc, as a polyline, appended to `out` (a position equal to the
    /// one before it is not repeated).
    pub fn piece_geometry(&self, p: &ArcPiece, out: &mut Vec<[f64; 2]>) {
        self.append_piece_geometry(p, &mut Vec::new(), out, 0);
    }

    /// [`Self::piece_geometry`] with a reusable buffer; positions before `own` in `out` belong to
    /// something else and are not compared with.
    pub(crate) fn append_piece_geometry(
        &self,
        p: &ArcPiece,
        pts: &mut Vec<[f64; 2]>,
        out: &mut Vec<[f64; 2]>,
        own: usize,
    ) {
        let push = |q: [f64; 2], out: &mut Vec<[f64; 2]>| {
            if out.len() == own || out.last() != Some(&q) {
                out.push(q);
            }
        };
        pts.clear();
        self.graph.arc_geometry(p.arc, pts);
        if p.from <= 0.0 && p.to >= 1.0 {
            // A whole arc: its shape as it is (no lengths needed to cut it).
            for &q in pts.iter() {
                push(q, out);
            }
            return;
        }
        let seg: Vec<f64> = pts
            .windows(2)
            .map(|w| {
                crate::geo::haversine_m(
                    crate::geo::LonLat::new(w[0][0], w[0][1]),
                    crate::geo::LonLat::new(w[1][0], w[1][1]),
                )
            })
            .collect();
        let total: f64 = seg.iter().sum();
        let (from, to) = (p.from * total, p.to * total);
        let at = |d: f64| -> [f64; 2] {
            let mut acc = 0.0;
            for (i, &l) in seg.iter().enumerate() {
                if acc + l >= d || i + 1 == seg.len() {
                    let u = if l > 0.0 {
                        ((d - acc) / l).clamp(0.0, 1.0)
                    } else {
                        0.0
                    };
                    return [
                        pts[i][0] + u * (pts[i + 1][0] - pts[i][0]),
                        pts[i][1] + u * (pts[i + 1][1] - pts[i][1]),
                    ];
                }
                acc += l;
            }
            pts[pts.len() - 1]
        };
        push(at(from), out);
        let mut acc = 0.0;
        for (i, &l) in seg.iter().enumerate() {
            acc += l;
            if acc > from && acc < to && i + 1 < pts.len() - 1 {
                push(pts[i + 1], out);
            }
        }
        push(at(to), out);
    }

    /// Distance, duration (cycling at 15 km/h or e-bike 22 km/h, pushing and walking at 5 km/h),
    /// elevation gain and loss, and geometry of a leg.
    pub fn summarize_leg(&self, leg: &Leg, profile: Profile, ebike: bool) -> LegSummary {
        let model = self.model();
        let elevation = self.graph.city.as_ref().is_some_and(|c| c.elevation_known);
        let mut s = LegSummary::default();
        for p in &leg.pieces {
            let frac = p.to - p.from;
            s.distance_m += self.graph.arc_length_m(p.arc) as f64 * frac;
            s.duration_s +=
                model.duration_s(&self.graph, p.arc, profile == Profile::Cycling, ebike) * frac;
            if elevation {
                s.elevation_gain_m += self.graph.arc_climb_m(p.arc) as f64 * frac;
                s.elevation_loss_m += self.graph.arc_descent_m(p.arc) as f64 * frac;
            }
            self.piece_geometry(p, &mut s.geometry);
        }
        if s.geometry.len() == 1 {
            let only = s.geometry[0];
            s.geometry.push(only);
        }
        s
    }

    /// Directed arcs of an OSM way (avoidances and reports name ways).
    pub fn arcs_of_way(&self, way_osm_id: i64) -> Vec<ArcId> {
        let (first, arcs) = &self.way_arcs;
        match self.graph.way_osm_id.binary_search(&way_osm_id) {
            Ok(w) => arcs[first[w] as usize..first[w + 1] as usize].to_vec(),
            Err(_) => Vec::new(),
        }
    }
}
