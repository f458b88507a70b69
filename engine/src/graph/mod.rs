//! The city graph: what the pipeline writes and the engine loads. Structure of arrays, 32-bit ids.
//!
//! Nodes are the routable junctions of the street network (way ends, shared nodes, traffic-control
//! nodes, and clones made for turn restrictions). An *edge* is one stretch of one OSM way between two
//! nodes, with its geometry; it carries two directed *arcs*, `2e` (tail→head) and `2e+1` (head→tail),
//! each with its own access, safety class and flags. The hierarchy is built on the undirected edges and
//! customized with per-arc weights, so one topology serves every metric.

use serde::{Deserialize, Serialize};

pub mod format;
pub mod turns;

pub type NodeId = u32;
pub type EdgeId = u32;
pub type ArcId = u32;
pub const INVALID_ID: u32 = u32::MAX;

/// Coordinates are stored as OSM does: 1e-7 degrees in an i32.
pub const COORD_SCALE: f64 = 1e7;

pub fn to_fixed(deg: f64) -> i32 {
    (deg * COORD_SCALE).round() as i32
}
pub fn from_fixed(v: i32) -> f64 {
    v as f64 / COORD_SCALE
}

/// Safety class of a directed arc, best first. `VeryBusy` only steers routing; the API reports it as
/// `busy`.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SafetyClass {
    Cycleway = 0,
    Quiet = 1,
    Shared = 2,
    Moderate = 3,
    Busy = 4,
    VeryBusy = 5,
}

impl SafetyClass {
    pub const ALL: [SafetyClass; 6] = [
        SafetyClass::Cycleway,
        SafetyClass::Quiet,
        SafetyClass::Shared,
        SafetyClass::Moderate,
        SafetyClass::Busy,
        SafetyClass::VeryBusy,
    ];

    pub fn from_u8(v: u8) -> SafetyClass {
        Self::ALL[(v as usize).min(5)]
    }

    /// The internal name (includes `very_busy`).
    pub fn name(self) -> &'static str {
        match self {
            SafetyClass::Cycleway => "cycleway",
            SafetyClass::Quiet => "quiet",
            SafetyClass::Shared => "shared",
            SafetyClass::Moderate => "moderate",
            SafetyClass::Busy => "busy",
            SafetyClass::VeryBusy => "very_busy",
        }
    }

    /// The spec's `safety_classification`: five output classes, `very_busy` reported as `busy`.
    pub fn api_name(self) -> &'static str {
        match self {
            SafetyClass::VeryBusy => "busy",
            other => other.name(),
        }
    }

    /// The deprecated numeric `safety_code`: 0 and 1 quiet, 2 moderate, 3 busy.
    pub fn safety_code(self) -> u8 {
        match self {
            SafetyClass::Cycleway => 0,
            SafetyClass::Quiet | SafetyClass::Shared => 1,
            SafetyClass::Moderate => 2,
            SafetyClass::Busy | SafetyClass::VeryBusy => 3,
        }
    }
}

/// How a bicycle may use an arc.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BikeAccess {
    No = 0,
    Ride = 1,
    /// `bicycle=dismount` and footways: pushed at walking speed.
    Push = 2,
}

/// Per-arc attributes packed in a u16: safety class, bicycle access, foot access and flags.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ArcAttrs(pub u16);

impl ArcAttrs {
    const CLASS_MASK: u16 = 0b111;
    const BIKE_SHIFT: u16 = 3;
    const FOOT: u16 = 1 << 5;
    /// Riding against the way's oneway direction on a contraflow lane or `oneway:bicycle=no`.
    const CONTRAFLOW: u16 = 1 << 6;
    /// A stop sign or give-way at the head node applies to traffic on this arc.
    const HEAD_CONTROL: u16 = 1 << 7;

    pub fn new(class: SafetyClass, bike: BikeAccess, foot: bool) -> Self {
        let mut v = class as u16 | ((bike as u16) << Self::BIKE_SHIFT);
        if foot {
            v |= Self::FOOT;
        }
        ArcAttrs(v)
    }
    pub fn safety_class(self) -> SafetyClass {
        SafetyClass::from_u8((self.0 & Self::CLASS_MASK) as u8)
    }
    pub fn bike(self) -> BikeAccess {
        match (self.0 >> Self::BIKE_SHIFT) & 0b11 {
            1 => BikeAccess::Ride,
            2 => BikeAccess::Push,
            _ => BikeAccess::No,
        }
    }
    pub fn foot(self) -> bool {
        self.0 & Self::FOOT != 0
    }
    pub fn contraflow(self) -> bool {
        self.0 & Self::CONTRAFLOW != 0
    }
    pub fn head_control(self) -> bool {
        self.0 & Self::HEAD_CONTROL != 0
    }
    pub fn with_bike(self, bike: BikeAccess) -> Self {
        ArcAttrs((self.0 & !(0b11 << Self::BIKE_SHIFT)) | ((bike as u16) << Self::BIKE_SHIFT))
    }
    pub fn with_foot(self, foot: bool) -> Self {
        ArcAttrs(if foot {
            self.0 | Self::FOOT
        } else {
            self.0 & !Self::FOOT
        })
    }
    pub fn with_contraflow(self, on: bool) -> Self {
        self.set(Self::CONTRAFLOW, on)
    }
    pub fn with_head_control(self, on: bool) -> Self {
        self.set(Self::HEAD_CONTROL, on)
    }
    fn set(self, bit: u16, on: bool) -> Self {
        ArcAttrs(if on { self.0 | bit } else { self.0 & !bit })
    }
}

/// Way-level flags (same in both directions).
pub mod way_flags {
    pub const LIT: u16 = 1 << 0;
    pub const COBBLES: u16 = 1 << 1;
    pub const ROUGH: u16 = 1 << 2;
    pub const ROUNDABOUT: u16 = 1 << 3;
    /// On a signed cycle route (route=bicycle relation or lcn/rcn/ncn/icn tags).
    pub const CYCLE_ROUTE: u16 = 1 << 4;
    pub const BRIDGE: u16 = 1 << 5;
    pub const TUNNEL: u16 = 1 << 6;
    /// `lit` was tagged explicitly (yes or no); without it the way counts as unlit.
    pub const LIT_TAGGED: u16 = 1 << 7;
    pub const STEPS: u16 = 1 << 8;
    /// A `route=ferry` way: the crossing is made aboard (guidance says so).
    pub const FERRY: u16 = 1 << 9;
    /// Steps with a `ramp:bicycle` to wheel the bike on.
    pub const BICYCLE_RAMP: u16 = 1 << 10;
    /// A mapped pedestrian crossing (or the island in it): the bike is walked across, and a cycling
    /// waypoint never snaps onto it.
    pub const CROSSING: u16 = 1 << 11;
    /// A `highway=service` way (a driveway, a parking aisle, an access road): not a roundabout exit
    /// a rider counts. Graphs built before this flag have it unset everywhere.
    pub const SERVICE: u16 = 1 << 12;
    /// An unnamed sidewalk named after the street it runs beside (graph-pipeline's `sidewalks`):
    /// the name is for guidance only. Routing (snapping's same-road rule, turn-backs and
    /// crossovers) takes the way as unnamed (`CityGraph::routing_name`).
    pub const NAME_BESIDE: u16 = 1 << 13;
}

/// Traffic control at a node (`highway=traffic_signals|stop|give_way`).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrafficControl {
    None = 0,
    Signals = 1,
    Stop = 2,
    GiveWay = 3,
}

impl TrafficControl {
    pub fn from_u8(v: u8) -> Self {
        match v {
            1 => Self::Signals,
            2 => Self::Stop,
            3 => Self::GiveWay,
            _ => Self::None,
        }
    }
    pub fn stop_type(self) -> Option<&'static str> {
        match self {
            Self::Signals => Some("traffic_signal"),
            Self::Stop => Some("stop_sign"),
            Self::GiveWay => Some("give_way"),
            Self::None => None,
        }
    }
}

/// A bicycle parking place (`amenity=bicycle_parking`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct BikeParking {
    pub osm_id: i64,
    pub lon: i32,
    pub lat: i32,
    /// 0 when untagged.
    pub capacity: u32,
    /// 0 unknown, 1 covered, 2 not covered.
    pub covered: u8,
    /// 1 for an OSM way (area), 0 for a node.
    pub is_way: u8,
    pub _pad: [u8; 2],
}

/// The city a graph belongs to.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CityInfo {
    pub id: String,
    pub name: String,
    pub timezone: String,
    /// Whether the city has street-lighting data (night routing).
    pub has_lighting_data: bool,
    /// Whether a DEM was applied; without one elevation is unknown and gain/loss read as zero.
    pub elevation_known: bool,
    /// Coverage: the city's areas (boroughs, neighbourhoods), each a GeoJSON MultiPolygon.
    pub areas: Vec<CoverageArea>,
    /// Countries drive on the right except the UK and a few others; affects cycleway:left/right.
    pub drives_on_left: bool,
    /// The OSM files the graph was built from.
    #[serde(default)]
    pub sources: Vec<String>,
}

/// One named part of a city's coverage (a borough, a neighbourhood).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CoverageArea {
    pub name: String,
    /// MultiPolygon coordinates: polygons → rings (outer first) → [lon, lat].
    pub polygons: Vec<Vec<Vec<[f64; 2]>>>,
}

/// A whole city graph in memory.
#[derive(Clone, Debug, Default)]
pub struct CityGraph {
    pub city: Option<CityInfo>,
    // nodes
    pub node_lon: Vec<i32>,
    pub node_lat: Vec<i32>,
    /// Metres; NaN where unknown.
    pub node_elevation: Vec<f32>,
    pub node_osm_id: Vec<i64>,
    pub node_control: Vec<u8>,
    // edges
    pub edge_tail: Vec<NodeId>,
    pub edge_head: Vec<NodeId>,
    pub edge_way: Vec<u32>,
    pub edge_length_m: Vec<f32>,
    /// Metres climbed travelling tail→head and head→tail.
    pub edge_climb_fwd_m: Vec<f32>,
    pub edge_climb_bwd_m: Vec<f32>,
    /// Heading in whole degrees leaving the tail (along the geometry) and arriving at the head.
    pub edge_bearing_start: Vec<u16>,
    pub edge_bearing_end: Vec<u16>,
    /// `edges + 1` offsets into `geom_lon`/`geom_lat`: the intermediate shape points of each edge.
    pub edge_geom_first: Vec<u32>,
    pub geom_lon: Vec<i32>,
    pub geom_lat: Vec<i32>,
    /// Two per edge: `2e` forward, `2e+1` backward.
    pub arc_attrs: Vec<ArcAttrs>,
    // ways
    pub way_osm_id: Vec<i64>,
    pub way_name: Vec<u32>,
    pub way_ref: Vec<u32>,
    pub way_flags: Vec<u16>,
    /// Index into `route_set_first` (0 = on no named route).
    pub way_route_set: Vec<u32>,
    /// `sets + 1` offsets into `route_set_names` (string ids); set 0 is empty.
    pub route_set_first: Vec<u32>,
    pub route_set_names: Vec<u32>,
    /// String table: offsets (`count + 1`) into UTF-8 bytes; string 0 is "".
    pub string_first: Vec<u32>,
    pub string_bytes: Vec<u8>,
    pub parking: Vec<BikeParking>,
    /// Turn restrictions for bicycles (see `turns::TurnRestriction`): restriction `r` is the arc
    /// sequence `restriction_arcs[restriction_first[r]..restriction_first[r + 1]]` (from, via…, to);
    /// `restriction_only[r]` is 1 for an `only_*` restriction. `restriction_first` is empty or has
    /// `restrictions + 1` entries.
    pub restriction_first: Vec<u32>,
    pub restriction_arcs: Vec<ArcId>,
    pub restriction_only: Vec<u8>,
    /// A nested-dissection order of the whole turn model's routing nodes (rank → routing node, see
    /// `turns`), metric independent; empty if not computed. Files from before the cycling and
    /// walking hierarchies had their own orders carry it; the engine no longer reads it.
    pub order: Vec<NodeId>,
    /// The same for the cycling hierarchy (see `cch::order::cycling_order`): the routing nodes no
    /// cycling turn touches first, then a nested-dissection order of the cycling turn graph; empty
    /// if not computed (a graph file from before it is ordered at load).
    pub cycling_order: Vec<NodeId>,
    /// A nested-dissection order of the junctions (rank → node) for walking's hierarchy, which
    /// has no turn model (see `City`); empty if not computed (ordered at load).
    pub walking_order: Vec<NodeId>,
    /// The cycling hierarchy itself (see [`crate::cch::Cch::stored_parts`]), so that a load need
    /// not build it (2.8 s of a 4.8 s load on a 4 × 4 tiling of New York's sample): its order,
    /// upward arcs and elimination tree, and in `cycling_cch_usable` the fingerprint of the turns a
    /// bicycle may use it was built for ([`crate::cch::usable_fingerprint`]). Empty if not stored,
    /// or ignored if that fingerprint is not the graph's: the hierarchy is built at load then.
    pub cycling_cch_order: Vec<NodeId>,
    pub cycling_cch_up_first: Vec<u32>,
    pub cycling_cch_up_head: Vec<u32>,
    pub cycling_cch_parent: Vec<u32>,
    pub cycling_cch_usable: Vec<u64>,
    /// The sides of its arcs that can be finite ([`crate::cch::Sides::to_words`]): a metric keeps
    /// weights for those only. Empty in a file written before it was stored: found at load then.
    pub cycling_cch_sides: Vec<u64>,
    /// The metrics a city loads with by day ([`crate::city::STORED_METRICS`]), customized on that
    /// hierarchy by the default weighting, so that a load need not customize them (half of a
    /// city's load; a load by night reads none of them): per metric, the weights of the sides that can be finite, forward then
    /// backward ([`crate::cch::CustomizedMetric::weights`]), and in `cycling_metric_inputs` the
    /// fingerprint of the input weights each was customized from ([`crate::cch::weights_fingerprint`]).
    /// A load whose inputs have another fingerprint (another weighting, a newer model) customizes
    /// instead. Empty if not stored.
    pub cycling_metric_weights: Vec<Vec<u32>>,
    pub cycling_metric_inputs: Vec<u64>,
    /// Per edge: the seconds its crossing takes when the map says so (a ferry's `duration`, shared
    /// among the ferry's edges by length), else 0 (timed from length and speed).
    pub edge_duration_s: Vec<f32>,
    /// The turns into a crossover that only leads back (`turn_flags::TURN_BACK`), found by the
    /// pipeline so that a load need not search every arc's crossovers (0.3 s of a whole city's
    /// turn model): the version of the rules that found them, then (arc, crossover arc) pairs,
    /// ascending. Empty if not stored, or ignored if of other rules: the load finds them then.
    pub turn_back_pairs: Vec<u32>,
}

impl CityGraph {
    pub fn node_count(&self) -> usize {
        self.node_lon.len()
    }
    pub fn edge_count(&self) -> usize {
        self.edge_tail.len()
    }
    pub fn arc_count(&self) -> usize {
        self.arc_attrs.len()
    }
    pub fn way_count(&self) -> usize {
        self.way_osm_id.len()
    }

    pub fn string(&self, id: u32) -> &str {
        let (a, b) = (
            self.string_first[id as usize] as usize,
            self.string_first[id as usize + 1] as usize,
        );
        std::str::from_utf8(&self.string_bytes[a..b]).unwrap_or("")
    }

    /// Names of the signed cycle routes a way belongs to.
    pub fn route_names(&self, way: u32) -> impl Iterator<Item = &str> {
        let set = self.way_route_set[way as usize] as usize;
        let (a, b) = (
            self.route_set_first[set] as usize,
            self.route_set_first[set + 1] as usize,
        );
        self.route_set_names[a..b].iter().map(|&s| self.string(s))
    }

    pub fn arc_edge(arc: ArcId) -> EdgeId {
        arc >> 1
    }
    pub fn arc_is_backward(arc: ArcId) -> bool {
        arc & 1 == 1
    }
    pub fn arc_tail(&self, arc: ArcId) -> NodeId {
        let e = (arc >> 1) as usize;
        if arc & 1 == 0 {
            self.edge_tail[e]
        } else {
            self.edge_head[e]
        }
    }
    pub fn arc_head(&self, arc: ArcId) -> NodeId {
        let e = (arc >> 1) as usize;
        if arc & 1 == 0 {
            self.edge_head[e]
        } else {
            self.edge_tail[e]
        }
    }
    pub fn arc_way(&self, arc: ArcId) -> u32 {
        self.edge_way[(arc >> 1) as usize]
    }
    /// The name routing goes by for arc `a`'s way: none for a sidewalk named only after the
    /// street beside it (`way_flags::NAME_BESIDE`), whose name is guidance's.
    pub fn routing_name(&self, a: ArcId) -> u32 {
        let w = self.arc_way(a) as usize;
        if self.way_flags[w] & way_flags::NAME_BESIDE != 0 {
            0
        } else {
            self.way_name[w]
        }
    }
    pub fn arc_length_m(&self, arc: ArcId) -> f32 {
        self.edge_length_m[(arc >> 1) as usize]
    }
    pub fn arc_climb_m(&self, arc: ArcId) -> f32 {
        let e = (arc >> 1) as usize;
        if arc & 1 == 0 {
            self.edge_climb_fwd_m[e]
        } else {
            self.edge_climb_bwd_m[e]
        }
    }
    pub fn arc_descent_m(&self, arc: ArcId) -> f32 {
        self.arc_climb_m(arc ^ 1)
    }
    /// The arc's own crossing time in seconds where the map gives one (a timed ferry).
    pub fn arc_fixed_duration_s(&self, arc: ArcId) -> Option<f64> {
        let d = *self.edge_duration_s.get((arc >> 1) as usize)?;
        (d > 0.0).then_some(d as f64)
    }

    pub fn node_lon_lat(&self, n: NodeId) -> [f64; 2] {
        [
            from_fixed(self.node_lon[n as usize]),
            from_fixed(self.node_lat[n as usize]),
        ]
    }

    /// The arc's full shape, tail to head, in degrees.
    pub fn arc_geometry(&self, arc: ArcId, out: &mut Vec<[f64; 2]>) {
        let e = (arc >> 1) as usize;
        let (a, b) = (
            self.edge_geom_first[e] as usize,
            self.edge_geom_first[e + 1] as usize,
        );
        out.push(self.node_lon_lat(self.arc_tail(arc)));
        let mid = (a..b).map(|i| [from_fixed(self.geom_lon[i]), from_fixed(self.geom_lat[i])]);
        if arc & 1 == 0 {
            out.extend(mid);
        } else {
            out.extend(mid.rev());
        }
        out.push(self.node_lon_lat(self.arc_head(arc)));
    }

    /// Heading leaving the arc's tail, degrees.
    pub fn arc_bearing_start(&self, arc: ArcId) -> u16 {
        let e = (arc >> 1) as usize;
        if arc & 1 == 0 {
            self.edge_bearing_start[e]
        } else {
            (self.edge_bearing_end[e] + 180) % 360
        }
    }
    /// Heading arriving at the arc's head, degrees.
    pub fn arc_bearing_end(&self, arc: ArcId) -> u16 {
        let e = (arc >> 1) as usize;
        if arc & 1 == 0 {
            self.edge_bearing_end[e]
        } else {
            (self.edge_bearing_start[e] + 180) % 360
        }
    }

    /// Checks array lengths and id ranges; a file that passes can be used without panics.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.node_count();
        let m = self.edge_count();
        let w = self.way_count();
        let same = |name: &str, len: usize, want: usize| {
            if len == want {
                Ok(())
            } else {
                Err(format!("{name} has {len} entries, expected {want}"))
            }
        };
        same("node_lat", self.node_lat.len(), n)?;
        same("node_elevation", self.node_elevation.len(), n)?;
        same("node_osm_id", self.node_osm_id.len(), n)?;
        same("node_control", self.node_control.len(), n)?;
        for (name, len) in [
            ("edge_head", self.edge_head.len()),
            ("edge_way", self.edge_way.len()),
            ("edge_length_m", self.edge_length_m.len()),
            ("edge_climb_fwd_m", self.edge_climb_fwd_m.len()),
            ("edge_climb_bwd_m", self.edge_climb_bwd_m.len()),
            ("edge_bearing_start", self.edge_bearing_start.len()),
            ("edge_bearing_end", self.edge_bearing_end.len()),
        ] {
            same(name, len, m)?;
        }
        same("edge_geom_first", self.edge_geom_first.len(), m + 1)?;
        if !self.edge_duration_s.is_empty() {
            // Empty: no fixed crossing times (a graph built in code, not by the pipeline).
            same("edge_duration_s", self.edge_duration_s.len(), m)?;
        }
        same("arc_attrs", self.arc_attrs.len(), 2 * m)?;
        same("geom_lat", self.geom_lat.len(), self.geom_lon.len())?;
        if self.edge_geom_first.last().copied().unwrap_or(0) as usize != self.geom_lon.len()
            || self.edge_geom_first.windows(2).any(|p| p[0] > p[1])
        {
            return Err("edge geometry offsets are inconsistent".into());
        }
        if self
            .edge_tail
            .iter()
            .chain(&self.edge_head)
            .any(|&x| x as usize >= n)
        {
            return Err("an edge refers to a node that does not exist".into());
        }
        if self.edge_way.iter().any(|&x| x as usize >= w) {
            return Err("an edge refers to a way that does not exist".into());
        }
        for (name, len) in [
            ("way_name", self.way_name.len()),
            ("way_ref", self.way_ref.len()),
            ("way_flags", self.way_flags.len()),
            ("way_route_set", self.way_route_set.len()),
        ] {
            same(name, len, w)?;
        }
        if self.way_osm_id.windows(2).any(|p| p[0] >= p[1]) {
            return Err("way ids are not strictly ascending".into());
        }
        let strings = self.string_first.len().saturating_sub(1);
        if self.string_first.is_empty()
            || self.string_first.last().copied().unwrap_or(0) as usize != self.string_bytes.len()
            || self.string_first.windows(2).any(|p| p[0] > p[1])
        {
            return Err("string table is inconsistent".into());
        }
        if self
            .way_name
            .iter()
            .chain(&self.way_ref)
            .chain(&self.route_set_names)
            .any(|&s| s as usize >= strings)
        {
            return Err("a string id is out of range".into());
        }
        let sets = self.route_set_first.len().saturating_sub(1);
        if self.route_set_first.is_empty()
            || self.route_set_first.last().copied().unwrap_or(0) as usize
                != self.route_set_names.len()
            || self.route_set_first.windows(2).any(|p| p[0] > p[1])
            || self.way_route_set.iter().any(|&s| s as usize >= sets)
        {
            return Err("route sets are inconsistent".into());
        }
        let restrictions = self.restriction_only.len();
        if (self.restriction_first.is_empty() && restrictions > 0)
            || (!self.restriction_first.is_empty()
                && (self.restriction_first.len() != restrictions + 1
                    || self.restriction_first[0] != 0
                    || self.restriction_first.windows(2).any(|p| p[0] > p[1])
                    || self.restriction_first[restrictions] as usize
                        != self.restriction_arcs.len()))
            || self
                .restriction_arcs
                .iter()
                .any(|&a| a as usize >= self.arc_count())
        {
            return Err("turn restrictions are inconsistent".into());
        }
        for order in [&self.order, &self.cycling_order] {
            if order.is_empty() {
                continue;
            }
            // Ranks the turn model's routing nodes: every arc, then copies made for restrictions.
            let m = order.len();
            if m < self.arc_count() || (!self.order.is_empty() && m != self.order.len()) {
                return Err("routing node order has the wrong length".into());
            }
            if !is_permutation(order) {
                return Err("routing node order is not a permutation".into());
            }
        }
        if !self.walking_order.is_empty()
            && (self.walking_order.len() != self.node_count()
                || !is_permutation(&self.walking_order))
        {
            return Err("walking's junction order is not a permutation of the nodes".into());
        }
        Ok(())
    }
}

/// Whether `order` holds each of `0..order.len()` once.
pub(crate) fn is_permutation(order: &[NodeId]) -> bool {
    let mut seen = vec![false; order.len()];
    order
        .iter()
        .all(|&v| (v as usize) < order.len() && !std::mem::replace(&mut seen[v as usize], true))
}

/// Builds a string table with de-duplication. String 0 is the empty string.
#[derive(Default)]
pub struct StringTableBuilder {
    index: std::collections::HashMap<String, u32>,
    pub first: Vec<u32>,
    pub bytes: Vec<u8>,
}

impl StringTableBuilder {
    pub fn new() -> Self {
        let mut b = Self {
            index: Default::default(),
            first: vec![0],
            bytes: vec![],
        };
        b.intern("");
        b
    }
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.index.get(s) {
            return id;
        }
        let id = (self.first.len() - 1) as u32;
        self.bytes.extend_from_slice(s.as_bytes());
        self.first.push(self.bytes.len() as u32);
        self.index.insert(s.to_string(), id);
        id
    }
}
