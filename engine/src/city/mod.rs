//! A loaded city: graph, hierarchy, snapping index and the live metrics. All methods take `&self`
//! and may run concurrently: metrics are immutable `Arc`s swapped under a briefly held lock, so
//! queries never wait for a customization.

use crate::cch::cow::CowVec;
use crate::cch::query::CchQuery;
use crate::cch::{Cch, CustomizedMetric, INF_WEIGHT, Weight, add};
use crate::dijkstra::{Adjacency, Dijkstra};
use crate::graph::format;
use crate::graph::turns::TurnGraph;
use crate::graph::{ArcId, CityGraph, NodeId};
use crate::metric::avoid::{Avoidance, Severity};
use crate::metric::{MetricKind, WeightingModel};
use crate::snap::{Snap, SnapIndex};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

pub mod directions;
mod live;
mod route;
mod summary;

pub use summary::LegSummary;

/// How far a waypoint may be from the nearest usable road.
pub const MAX_SNAP_M: f64 = 1000.0;
/// A trip's ends may start or end on a road this much farther from the point than the nearest one.
pub const SNAP_SLACK_M: f64 = 12.0;
/// At most this many positions per end.
const SNAP_CANDIDATES: usize = 4;
/// A trip's end whose nearest way can only be pushed may start or end on a way it can ride this
/// much farther from the point (see `City::snap_candidates`).
pub const RIDE_SLACK_M: f64 = 100.0;
/// How much farther than the nearest road (metres) a trip may start or end on the other side of
/// the same named road (see `City::snap_candidates`).
const SAME_ROAD_SLACK_M: f64 = 25.0;
/// Metrics with turn-backs priced kept for reuse (each shares all but the chunks its few priced
/// turns changed with its base metric).
const TURN_BACK_CACHE: usize = 32;
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
    /// Turn-backs across a divided road the search found and priced away (see
    /// [`City::without_turn_backs`]): when not 0, `weight` is in the metric with those turns
    /// priced, and the leg is not the metric's plain shortest one.
    pub turn_backs_priced: u32,
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
/// hierarchy customized with the turn weights built from them (for walking, with the arc weights
/// themselves: see [`CityMetric::on_junctions`]).
#[derive(Clone)]
pub struct CityMetric {
    pub arc_weights: CowVec<Weight>,
    pub hierarchy: CustomizedMetric,
    /// The hierarchy `hierarchy` is customized on: the cycling one ([`City::cch`]) for cycling
    /// metrics; for walking, whose metric keeps only its pruned query graph, the nodes alone
    /// ([`Cch::lean`]) of its hierarchy on junctions.
    pub cch: Arc<Cch>,
    /// Whether the hierarchy ranks junctions (graph nodes) and its input arcs are the graph's arcs,
    /// without the turn model: walking's, which has no turn costs or turn restrictions, so a
    /// search over junctions finds the same walks on a graph a third the size (see
    /// [`City::leg_between`]).
    pub on_junctions: bool,
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

    /// The routing node an input arc of this metric's hierarchy leads from and to: a turn's arcs
    /// on the turn model, an arc's junctions on junctions.
    pub fn input_ends(&self, g: &CityGraph, turns: &TurnGraph, input: u32) -> (u32, u32) {
        if self.on_junctions {
            (g.arc_tail(input), g.arc_head(input))
        } else {
            let t = input as usize;
            (turns.turn_from[t], turns.turn_to[t])
        }
    }
}

struct State {
    /// Shared, so a route reads it without copying the model.
    model: Arc<WeightingModel>,
    /// Base metrics (model weights with permanent arc changes), indexed by MetricKind; `None` for
    /// a metric not built yet (see [`LOADED_METRICS`]): it is customized, with the changes and
    /// bans in force, on first use.
    base: Vec<Option<Arc<CityMetric>>>,
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
    /// The cycling metrics' hierarchy: the turns a bicycle can use ([`crate::metric::cycling_can_use`])
    /// in their own order ([`crate::cch::order::cycling_order`], stored in the graph file), built
    /// on those turns alone ([`Cch::on_inputs`]) and [`Cch::restricted`] to the arcs that can be
    /// finite. Walking's metric is customized on a hierarchy of the junctions
    /// ([`CityMetric::on_junctions`], ordered by `walking_order` of the graph file), built for it
    /// at load and on a model change and then let go (see [`CityMetric::cch`]).
    pub cch: Arc<Cch>,
    pub adjacency: Adjacency,
    pub snap_index: SnapIndex,
    /// Per edge and profile (cycling, walking): whether it lies in a large strongly connected part of
    /// the network. Waypoints snap to those first, so a point beside a cut-off fragment (a one-way
    /// trap at the extract's edge, a courtyard path) still gets a route.
    well_connected: [Vec<bool>; 2],
    /// Arcs per way (CSR over way indices), for avoidances and reports that name OSM ways.
    way_arcs: (Vec<u32>, Vec<ArcId>),
    state: RwLock<State>,
    queries: Mutex<QueryPool>,
    /// Signalled when a query goes back to the pool.
    query_returned: std::sync::Condvar,
    /// Metrics with a leg's turn-backs priced (`City::without_turn_backs`): base metric, the input
    /// arcs priced with their weights, the metric; oldest first.
    #[allow(clippy::type_complexity)]
    turn_back_cache: Mutex<
        Vec<(
            std::sync::Weak<CityMetric>,
            Vec<(ArcId, Weight)>,
            Arc<CityMetric>,
        )>,
    >,
    dijkstras: Mutex<Vec<Dijkstra>>,
    /// Serializes writers (arc updates, model swaps), so none loses another's change; queries
    /// never take it.
    writer: Mutex<()>,
    /// Serializes builds of walking's metric, which no live change touches: they need not hold
    /// `writer` (a live change at start-up would wait a second for walking's build).
    walking_builder: Mutex<()>,
    /// Bytes the cycling metrics' pruned query graphs may hold together (see
    /// [`City::set_query_graph_budget`]).
    query_graph_budget: std::sync::atomic::AtomicUsize,
    /// Bytes reserved by prunings under way (their estimate), so two at once keep to the budget.
    pruning: Arc<std::sync::atomic::AtomicUsize>,
    /// Seconds each step of [`City::from_graph`] took, in order (benchmarks, start-up logs).
    pub load_phases: Vec<(&'static str, f64)>,
}

/// The cycling hierarchy's queries, made as routes need them, up to [`query_limit`].
#[derive(Default)]
struct QueryPool {
    free: Vec<CchQuery>,
    made: usize,
}

/// Queries a city makes at most: one per core (`QUIETWAY_QUERIES` in the environment decides
/// otherwise), at least two.
fn query_limit() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("QUIETWAY_QUERIES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
            .max(2)
    })
}

/// The steps of a load, timed.
struct LoadPhases {
    since: std::time::Instant,
    done: Vec<(&'static str, f64)>,
}

impl Default for LoadPhases {
    fn default() -> Self {
        LoadPhases {
            since: std::time::Instant::now(),
            done: Vec::new(),
        }
    }
}

impl LoadPhases {
    fn end(&mut self, step: &'static str) {
        let now = std::time::Instant::now();
        self.done
            .push((step, now.duration_since(self.since).as_secs_f64()));
        self.since = now;
    }
}

const CACHE_LIMIT: usize = 64;
/// The metrics a city customizes as it loads: what a request by day asks for (SuperSafe checks
/// its detour against Direct). Walking's is built just after, by [`City::warm`] in the background
/// (the addon starts it once a city is loaded), so the city answers cycling requests first. The
/// others (by night, SuperSafe's gentler weighting) are customized on first use, so a city answers
/// sooner and holds only the metrics asked for (docs/engine.md, "At city size").
pub const LOADED_METRICS: [MetricKind; 2] = [MetricKind::SuperSafeDay, MetricKind::DirectDay];
/// The metrics the graph file stores customized ([`CityGraph::cycling_metric_weights`], in this
/// order): those a city loads with by day. A load reads those of the light it loads with only (by
/// night, none: the night's are customized as it loads). Storing the night's too was tried: on the
/// 4 × 4 tiling of New York's sample a night load took 1.0 s instead of 1.8, but the build took
/// 3.5 s longer, its peak rose from 1.0 to 1.1 GB (the weights of the metrics customized before the
/// last one held meanwhile) and the file from 328 to 484 MB.
pub const STORED_METRICS: [MetricKind; 2] = LOADED_METRICS;
/// The cycling metrics a city loads with now ([`City::load_now`]): by night, when the sun is more
/// than 6° below the horizon at the middle of the graph (half an hour or so after sunset, when the
/// server's requests ask for the night metrics), SuperSafe's and Direct's night metrics; else
/// [`LOADED_METRICS`].
pub fn metrics_for_now(g: &CityGraph) -> [MetricKind; 2] {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let n = g.node_count().max(1) as f64;
    let (lon, lat) = (0..g.node_count() as NodeId)
        .map(|v| g.node_lon_lat(v))
        .fold((0.0, 0.0), |(x, y), [lon, lat]| (x + lon / n, y + lat / n));
    if crate::geo::sun_altitude_deg(lon, lat, now) < -6.0 {
        [MetricKind::SuperSafeNight, MetricKind::DirectNight]
    } else {
        LOADED_METRICS
    }
}

/// The metrics [`City::warm`] builds once a city is loaded.
pub const WARMED_METRICS: [MetricKind; 1] = [MetricKind::Walking];
/// Queries on a metric after which its pruned query graph is built, budget allowing.
const PRUNE_AFTER_USES: u32 = 16;
/// The bytes a city's cycling metrics may spend on pruned query graphs unless told otherwise
/// ([`City::set_query_graph_budget`]). A pruned graph (the arcs perfect customization keeps, with
/// their unpacking entries) makes a query with its path four to five times faster than the full
/// hierarchy, and costs about 12 bytes a hierarchy arc a metric: 13 MB on a district of 37 k
/// junctions, 216 MB on a city of 600 k, more than the metric's own weights. Within this budget a
/// district prunes every metric it uses, and a city none: it routes on the full hierarchy, its
/// memory the metrics' weights alone (docs/engine.md, "At city size").
pub const DEFAULT_QUERY_GRAPH_BUDGET: usize = 64 << 20;
/// A pruned graph's bytes, estimated before it is built, per arc of its hierarchy (measured: 11-12).
const PRUNED_BYTES_PER_ARC: usize = 12;

impl City {
    pub fn load(path: &Path, model: Option<WeightingModel>) -> Result<City, String> {
        City::load_for(path, model, |_| LOADED_METRICS)
    }

    /// Loads a city with the cycling metrics of the light it has now ([`metrics_for_now`]): by
    /// night SuperSafe's and Direct's night metrics, customized as it loads, so that a server
    /// started in the evening answers its first night route as soon as the city is loaded, not
    /// after customizing them (and the day's, read from the file, are left until asked for).
    pub fn load_now(path: &Path, model: Option<WeightingModel>) -> Result<City, String> {
        City::load_for(path, model, metrics_for_now)
    }

    /// Loads a city with the cycling metrics `loaded` chooses for its graph.
    pub fn load_for(
        path: &Path,
        model: Option<WeightingModel>,
        loaded: impl FnOnce(&CityGraph) -> [MetricKind; 2],
    ) -> Result<City, String> {
        let start = std::time::Instant::now();
        // Of the metrics the file stores, only those of the light loaded are read.
        let mut kinds = LOADED_METRICS;
        let (graph, version) = format::read_file_with(path, |g| {
            kinds = loaded(g);
            kinds
                .iter()
                .filter_map(|k| STORED_METRICS.iter().position(|s| s == k))
                .collect()
        })
        .map_err(|e| e.to_string())?;
        let read_s = start.elapsed().as_secs_f64();
        let mut city = City::from_graph_loading(graph, version, model, kinds)?;
        city.load_phases.insert(0, ("graph file read", read_s));
        Ok(city)
    }

    pub fn from_graph(
        graph: CityGraph,
        graph_version: String,
        model: Option<WeightingModel>,
    ) -> Result<City, String> {
        City::from_graph_loading(graph, graph_version, model, LOADED_METRICS)
    }

    /// A city of `graph` loaded with the cycling metrics `loaded` (SuperSafe's and Direct's of one
    /// light: a SuperSafe leg checks its detour against Direct's); the graph file stores those of
    /// the day ([`LOADED_METRICS`]), the others are customized.
    pub fn from_graph_loading(
        mut graph: CityGraph,
        graph_version: String,
        model: Option<WeightingModel>,
        loaded: [MetricKind; 2],
    ) -> Result<City, String> {
        let mut phases = LoadPhases::default();
        graph.validate()?;
        if graph.city.is_none() {
            return Err("graph has no city section".into());
        }
        if graph.walking_order.len() != graph.node_count() {
            graph.walking_order = crate::cch::order::nested_dissection_order(&graph);
        }
        let model = model.unwrap_or_default();
        model.validate()?;
        let arc_changes = HashMap::new();
        let turn_bans = std::collections::HashSet::new();
        // Walking's side (the adjacency, snapping index and walking's well-connected parts) is
        // built beside the cycling side (the turn model, the cycling hierarchy, stored or built,
        // and the metrics loaded with the city): neither needs the other.
        // The stored hierarchy leaves the graph: the city keeps the one made of it.
        let stored = (!graph.cycling_cch_usable.is_empty()).then(|| {
            let parts = crate::cch::StoredHierarchy {
                order: std::mem::take(&mut graph.cycling_cch_order),
                up_first: std::mem::take(&mut graph.cycling_cch_up_first),
                up_head: std::mem::take(&mut graph.cycling_cch_up_head),
                parent: std::mem::take(&mut graph.cycling_cch_parent),
                sides: std::mem::take(&mut graph.cycling_cch_sides),
            };
            (parts, std::mem::take(&mut graph.cycling_cch_usable))
        });
        let mut stored_weights = std::mem::take(&mut graph.cycling_metric_weights);
        let stored_inputs = std::mem::take(&mut graph.cycling_metric_inputs);
        let g = &graph;
        let (walking_side, (turns, order, cch, base, cycling_connected, cycling_steps)) =
            rayon::join(
                || {
                    let start = std::time::Instant::now();
                    let adjacency = Adjacency::new(g.node_count(), &g.edge_tail, &g.edge_head);
                    let snap_index = SnapIndex::new(g);
                    let way_arcs = arcs_by_way(g);
                    let connected =
                        well_connected_edges(g, &adjacency, |a| g.arc_attrs[a as usize].foot());
                    let s = start.elapsed().as_secs_f64();
                    (adjacency, snap_index, way_arcs, connected, s)
                },
                || {
                    let start = std::time::Instant::now();
                    // The stored hierarchy's topology is checked and derived beside the turn
                    // model; its input arcs (turns) are mapped once that is there.
                    let ((turns, usable), stored) = rayon::join(
                        || {
                            let turns =
                                TurnGraph::new(g, &crate::graph::turns::stored_restrictions(g));
                            let usable = crate::metric::cycling_can_use(g, &turns);
                            (turns, usable)
                        },
                        || stored.map(|(parts, usable)| (Cch::stored_topology(parts), usable)),
                    );
                    let model_s = start.elapsed().as_secs_f64();
                    // A graph file from before the cycling order is ordered now.
                    let order = (g.cycling_order.len() != turns.node_count())
                        .then(|| crate::cch::order::cycling_order(&turns, g, &usable));
                    let cycling_order = order.as_deref().unwrap_or(&g.cycling_order);
                    // The loaded metrics' inputs and cycling's well-connected parts (by Direct's
                    // turns, as the model prices them: a city loads with no changes or bans)
                    // beside the hierarchy.
                    let ((cch, how), (inputs, connected)) = rayon::join(
                        || cycling_hierarchy(cycling_order, &turns, &usable, stored),
                        || {
                            let inputs: Vec<(MetricKind, MetricInputs)> = loaded
                                .par_iter()
                                .map(|&k| {
                                    let i = cycling_inputs(
                                        g,
                                        &turns,
                                        &model,
                                        &arc_changes,
                                        &turn_bans,
                                        k,
                                    );
                                    (k, i)
                                })
                                .collect();
                            let direct = inputs
                                .iter()
                                .find(|(k, _)| {
                                    matches!(k, MetricKind::DirectDay | MetricKind::DirectNight)
                                })
                                .expect("Direct loads with the city");
                            let connected = well_connected_by_turns(g, &turns, &direct.1.1);
                            // Which stored metrics these inputs are (none without them).
                            let fingerprints: Vec<u64> = if stored_inputs.is_empty() {
                                vec![]
                            } else {
                                inputs
                                    .par_iter()
                                    .map(|(_, (_, turn_weights))| {
                                        crate::cch::weights_fingerprint(turn_weights)
                                    })
                                    .collect()
                            };
                            (inputs, (connected, fingerprints))
                        },
                    );
                    let (connected, fingerprints) = connected;
                    let cch = Arc::new(cch);
                    let built = start.elapsed().as_secs_f64();
                    // The metrics stored in the file for the same hierarchy and the same inputs
                    // are taken as they are; the others (another weighting, a file without them)
                    // customized.
                    let from_file = how == HIERARCHY_READ;
                    let mut hierarchies: Vec<Option<CustomizedMetric>> = Vec::new();
                    let mut to_customize = Vec::new();
                    let mut arc_weights = Vec::new();
                    let mut kinds = Vec::new();
                    for (i, (k, (arcs, turn_weights))) in inputs.into_iter().enumerate() {
                        kinds.push(k);
                        arc_weights.push(arcs);
                        // The file's metric of this kind, if it holds one of these inputs.
                        let place = STORED_METRICS.iter().position(|&s| s == k).filter(|&j| {
                            from_file
                                && stored_weights.len() >= 2 * j + 2
                                && stored_inputs
                                    .get(j)
                                    .is_some_and(|f| Some(f) == fingerprints.get(i))
                        });
                        let stored = if let Some(j) = place {
                            let w = [
                                std::mem::take(&mut stored_weights[2 * j]),
                                std::mem::take(&mut stored_weights[2 * j + 1]),
                            ];
                            cch.stored_metric(turn_weights, w)
                        } else {
                            Err(turn_weights)
                        };
                        match stored {
                            Ok(m) => hierarchies.push(Some(m)),
                            Err(turn_weights) => {
                                hierarchies.push(None);
                                to_customize.push(turn_weights);
                            }
                        }
                    }
                    drop(stored_weights);
                    let customized_any = !to_customize.is_empty();
                    let mut customized = cch.customize_each_owned(to_customize).into_iter();
                    let mut base: Vec<Option<Arc<CityMetric>>> = vec![None; MetricKind::ALL.len()];
                    for ((k, hierarchy), arc_weights) in
                        kinds.into_iter().zip(hierarchies).zip(arc_weights)
                    {
                        let hierarchy = hierarchy
                            .or_else(|| customized.next())
                            .expect("one customized for each metric not stored");
                        base[k as usize] =
                            Some(Arc::new(cycling_metric(&cch, hierarchy, arc_weights)));
                    }
                    let steps = [
                        (
                            "  of which turn model (and the stored hierarchy's topology beside it)",
                            model_s,
                        ),
                        (how, built - model_s),
                        (
                            if customized_any {
                                "  of which cycling metrics customized"
                            } else {
                                "  of which cycling metrics, read from the file"
                            },
                            start.elapsed().as_secs_f64() - built,
                        ),
                    ];
                    (turns, order, cch, base, connected, steps)
                },
            );
        let (adjacency, snap_index, way_arcs, walking_connected, walking_s) = walking_side;
        if let Some(order) = order {
            graph.cycling_order = order;
        }
        phases.end("turn model, hierarchy and the cycling metrics");
        phases.done.extend([
            cycling_steps[0],
            cycling_steps[1],
            cycling_steps[2],
            (
                "  of which, beside them, snapping index, adjacency, walking's well-connected parts",
                walking_s,
            ),
        ]);
        let well_connected = [cycling_connected, walking_connected];
        Ok(City {
            graph,
            graph_version,
            turns,
            cch,
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
            queries: Mutex::new(QueryPool::default()),
            query_returned: std::sync::Condvar::new(),
            turn_back_cache: Mutex::new(Vec::new()),
            dijkstras: Mutex::new(Vec::new()),
            writer: Mutex::new(()),
            walking_builder: Mutex::new(()),
            query_graph_budget: DEFAULT_QUERY_GRAPH_BUDGET.into(),
            pruning: Default::default(),
            load_phases: phases.done,
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

    /// Bytes held by the graph, hierarchy, index and the current metrics.
    pub fn memory_bytes(&self) -> usize {
        self.memory_breakdown().iter().map(|&(_, b)| b).sum()
    }

    /// [`City::memory_bytes`] by part: the graph, the turn model, the hierarchy's topology and its
    /// map from arcs to input arcs (for live changes), the snapping index, the adjacency, and per
    /// loaded metric its weights, and once pruned, its query graph and the unpacking entries of
    /// the arcs kept there (which input arc or triangle gave each weight).
    pub fn memory_breakdown(&self) -> Vec<(String, usize)> {
        let g = &self.graph;
        let graph = 4
            * (g.node_lon.len() * 4
                + g.edge_tail.len() * 8
                + g.geom_lon.len() * 2
                + g.way_osm_id.len() * 6)
            + g.string_bytes.len()
            + g.arc_attrs.len() * 2;
        let st = self.state.read().unwrap();
        // Walking's metric holds the nodes of its hierarchy (`Cch::lean`), apart from the cycling one.
        let walking_nodes = match &st.base[MetricKind::Walking as usize] {
            Some(w) if !Arc::ptr_eq(&w.cch, &self.cch) => w.cch.memory_bytes(),
            _ => 0,
        };
        let mut out = vec![
            ("graph".to_string(), graph),
            ("turn model".to_string(), self.turns.memory_bytes()),
            (
                "hierarchy topology".to_string(),
                self.cch.memory_bytes() + walking_nodes,
            ),
            (
                "inputs by hierarchy arc".to_string(),
                self.cch.inputs_of.memory_bytes(),
            ),
            ("snapping index".to_string(), self.snap_index.memory_bytes()),
            ("adjacency".to_string(), self.adjacency.arc.len() * 8),
        ];
        let metrics = st.base.iter().flatten().chain(st.cache.values());
        let (mut weights, mut unpacking, mut pruned, mut count) = (0, 0, 0, 0);
        for m in metrics {
            let h = &m.hierarchy;
            count += 1;
            weights += 4
                * (h.weights[0].len()
                    + h.weights[1].len()
                    + h.input_weights.len()
                    + m.arc_weights.len());
            if let Some(p) = h.pruned.get() {
                unpacking += p.unpacking_bytes();
                pruned += p.memory_bytes() - p.unpacking_bytes();
            }
        }
        out.push((format!("{count} metrics: weights"), weights));
        out.push((format!("{count} metrics: unpacking (kept arcs)"), unpacking));
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

/// The cycling network's well-connected edges, judged on the turn model with Direct's turn weights
/// (`turn_weights`):
/// an edge is well connected when one of its arcs lies in a large strongly connected set of routing
/// nodes. Junction-level connectivity is not enough: a plaza whose every way out is a turn closed to
/// bicycles (a restriction, a barrier) is one piece of the junction graph but an island for a rider,
/// and a waypoint snapped onto it found no route.
fn well_connected_by_turns(g: &CityGraph, turns: &TurnGraph, turn_weights: &[Weight]) -> Vec<bool> {
    // The finite turns out of each routing node, from the turn model's own lists.
    let n = turns.node_count();
    let mut adj = Adjacency {
        first_out: Vec::with_capacity(n + 1),
        arc: Vec::new(),
        head: Vec::new(),
    };
    adj.first_out.push(0);
    for x in 0..n as u32 {
        for t in turns.turns_out_of(x) {
            if turn_weights[t as usize] < INF_WEIGHT {
                adj.arc.push(t);
                adj.head.push(turns.turn_to[t as usize]);
            }
        }
        adj.first_out.push(adj.arc.len() as u32);
    }
    let (comp, sizes) = crate::dijkstra::strongly_connected(&adj, |_| true);
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let big = |x: u32| {
        let s = sizes[comp[x as usize] as usize];
        s >= 40 && s * 10 >= largest
    };
    (0..g.edge_count() as u32)
        .map(|e| big(2 * e) || big(2 * e + 1))
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

/// The cycling hierarchy ([`City::cch`]) built from the graph's cycling order: on the turns a
/// bicycle may use, restricted to the arcs that can be finite.
pub fn build_cycling_hierarchy(order: &[NodeId], turns: &TurnGraph, usable: &[bool]) -> Cch {
    cycling_unrestricted(order, turns, usable).into_restricted(usable)
}

/// The hierarchy on the turns a bicycle may use, before its restriction.
fn cycling_unrestricted(order: &[NodeId], turns: &TurnGraph, usable: &[bool]) -> Cch {
    Cch::on_inputs(
        turns.node_count(),
        &turns.turn_from,
        &turns.turn_to,
        order,
        usable,
    )
}

/// Stores the cycling hierarchy in the graph (see [`CityGraph::cycling_cch_order`]), built from
/// its cycling order, and the turn model's turn-backs ([`CityGraph::turn_back_pairs`]): the
/// pipeline does this once so that every load reads them.
pub fn store_cycling_hierarchy(g: &mut CityGraph) {
    // The pipeline's earlier steps leave much memory freed but held by the allocator, and the
    // hierarchy's large arrays are mapped afresh rather than taken from it: given back first, the
    // build of the 4 × 4 tiling peaks at less than the hierarchy alone would add.
    crate::give_back_freed_memory();
    g.turn_back_pairs = crate::graph::turns::turn_back_pairs(g);
    let turns = TurnGraph::new(g, &crate::graph::turns::stored_restrictions(g));
    let usable = crate::metric::cycling_can_use(g, &turns);
    let parts =
        cycling_unrestricted(&g.cycling_order, &turns, &usable).into_restricted_parts(&usable);
    // The loaded metrics are customized on the hierarchy as a load makes it from these parts
    // (lighter than the one they come from, which keeps what restricting it needed).
    let cch = Cch::stored_topology(parts)
        .and_then(|c| c.with_stored_inputs(&turns.turn_from, &turns.turn_to, &usable))
        .expect("a hierarchy just restricted");
    let usable = crate::cch::usable_fingerprint(&usable);
    store_loaded_metrics(g, turns, &cch);
    let parts = cch.into_stored_parts();
    g.cycling_cch_order = parts.order;
    g.cycling_cch_up_first = parts.up_first;
    g.cycling_cch_up_head = parts.up_head;
    g.cycling_cch_parent = parts.parent;
    g.cycling_cch_sides = parts.sides;
    g.cycling_cch_usable = vec![usable];
}

/// Stores the metrics a city loads with by day ([`STORED_METRICS`]), customized on the stored
/// cycling hierarchy by the default weighting, with their inputs' fingerprints
/// ([`CityGraph::cycling_metric_weights`]): a load by that weighting by day reads them instead of
/// customizing them (0.9 of 1.8 s on a 4 × 4 tiling of New York's sample).
fn store_loaded_metrics(g: &mut CityGraph, turns: TurnGraph, cch: &Cch) {
    let model = WeightingModel::default();
    let inputs: Vec<Vec<Weight>> = STORED_METRICS
        .iter()
        .map(|&kind| {
            cycling_inputs(
                g,
                &turns,
                &model,
                &HashMap::new(),
                &Default::default(),
                kind,
            )
            .1
        })
        .collect();
    // The turn model's memory goes before the customizations', which set the build's peak.
    drop(turns);
    g.cycling_metric_inputs = inputs
        .iter()
        .map(|w| crate::cch::weights_fingerprint(w))
        .collect();
    g.cycling_metric_weights.clear();
    let mut work = Default::default();
    for turn_weights in inputs {
        let [fw, bw] = cch.customize_with(turn_weights, &mut work).weights;
        g.cycling_metric_weights.push(fw.into_vec());
        g.cycling_metric_weights.push(bw.into_vec());
    }
}

/// The load phase of a cycling hierarchy read from the graph file.
const HIERARCHY_READ: &str = "  of which cycling hierarchy, read from the file";

/// The graph's stored cycling hierarchy (its topology, [`Cch::stored_topology`], and the usable
/// turns it was built for) if it has one for these usable turns, else one built, with the load
/// phase that says which.
fn cycling_hierarchy(
    order: &[NodeId],
    turns: &TurnGraph,
    usable: &[bool],
    stored: Option<(Result<Cch, String>, Vec<u64>)>,
) -> (Cch, &'static str) {
    let (mut cch, how) = if let Some((Ok(topology), fingerprint)) = stored
        && fingerprint == [crate::cch::usable_fingerprint(usable)]
        && let Ok(cch) = topology.with_stored_inputs(&turns.turn_from, &turns.turn_to, usable)
    {
        (cch, HIERARCHY_READ)
    } else {
        (
            build_cycling_hierarchy(order, turns, usable),
            "  of which cycling hierarchy, built",
        )
    };
    // The turns' own ends, shared, in place of a map from every turn to its arc.
    cch.keep_inputs_by_ends(turns.turn_from.clone(), turns.turn_to.clone());
    (cch, how)
}

/// Walking's hierarchy: the junctions in the graph's `walking_order`, its input arcs the graph's
/// arcs (edge `e`'s arcs `2e` and `2e + 1` are its input arcs `2e` and `2e + 1`), so walking's arc
/// weights are its input weights. Walking's metric is customized on it, then keeps only its nodes.
fn walking_hierarchy(g: &CityGraph) -> Cch {
    let (tails, heads) = crate::cch::both_ways(&g.edge_tail, &g.edge_head);
    Cch::new(g.node_count(), &tails, &heads, &g.walking_order)
}

/// Walking's metric, customized on `walking`, its hierarchy on junctions, which it leaves once
/// its query graph is pruned: walking never changes live (reports and avoidances are for
/// cycling), so it keeps only what queries read, and needs no hierarchy beyond its nodes.
fn walking_metric(g: &CityGraph, walking: &Cch, model: &WeightingModel) -> CityMetric {
    let arc_weights: Vec<Weight> = (0..g.arc_count() as ArcId)
        .map(|a| model.arc_weight(g, a, MetricKind::Walking))
        .collect();
    let hierarchy = walking.customize(&arc_weights).query_only(walking);
    CityMetric {
        arc_weights: CowVec::from_vec(arc_weights),
        hierarchy,
        cch: Arc::new(walking.lean()),
        on_junctions: true,
    }
}

/// The metrics of `kinds` customized (the others `None`): the cycling ones on `cch` (the cycling
/// hierarchy), not yet pruned; walking by [`walking_metric`] on its hierarchy, built here.
fn customize_all(
    g: &CityGraph,
    turns: &TurnGraph,
    cch: &Arc<Cch>,
    model: &WeightingModel,
    changes: &HashMap<ArcId, ArcChange>,
    bans: &std::collections::HashSet<u32>,
    kinds: &[MetricKind],
) -> Vec<Option<Arc<CityMetric>>> {
    use rayon::prelude::*;
    let _bulk = crate::BulkWork::begin();
    MetricKind::ALL
        .par_iter()
        .map(|&kind| {
            if !kinds.contains(&kind) {
                return None;
            }
            if !kind.is_cycling() {
                return Some(Arc::new(walking_metric(g, &walking_hierarchy(g), model)));
            }
            let inputs = cycling_inputs(g, turns, model, changes, bans, kind);
            Some(Arc::new(customized(cch, inputs)))
        })
        .collect()
}

/// A cycling metric's arc weights and turn weights (see [`cycling_inputs`]).
type MetricInputs = (Vec<Weight>, Vec<Weight>);

/// A cycling metric's arc weights (with the permanent changes) and turn weights (the hierarchy's
/// input weights, with the bans).
fn cycling_inputs(
    g: &CityGraph,
    turns: &TurnGraph,
    model: &WeightingModel,
    changes: &HashMap<ArcId, ArcChange>,
    bans: &std::collections::HashSet<u32>,
    kind: MetricKind,
) -> MetricInputs {
    let arc_weights: Vec<Weight> = (0..g.arc_count() as ArcId)
        .map(|a| changed_weight(g, model, kind, a, changes.get(&a)))
        .collect();
    let mut turn_weights = model.turn_input_weights(g, turns, kind, &arc_weights);
    for &t in bans {
        turn_weights[t as usize] = INF_WEIGHT;
    }
    (arc_weights, turn_weights)
}

/// A cycling metric customized on `cch` from its [`cycling_inputs`]. Routable as customized; its
/// pruned query graph is built once it is in steady use (`City::note_use`), so a city answers
/// without waiting for six prunings, and a metric no request asks for holds no query graph
/// (docs/engine.md, "At city size").
fn customized(
    cch: &Arc<Cch>,
    (arc_weights, turn_weights): (Vec<Weight>, Vec<Weight>),
) -> CityMetric {
    cycling_metric(cch, cch.customize_owned(turn_weights), arc_weights)
}

/// A cycling metric of `cch` from its customized weights and its arc weights.
fn cycling_metric(
    cch: &Arc<Cch>,
    hierarchy: CustomizedMetric,
    arc_weights: Vec<Weight>,
) -> CityMetric {
    CityMetric {
        hierarchy,
        arc_weights: CowVec::from_vec(arc_weights),
        cch: cch.clone(),
        on_junctions: false,
    }
}
