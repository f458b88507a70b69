//! N-API binding of `quietway-engine`. Thin on purpose: `#[napi(object)]` data types, conversions to
//! engine types with argument checks on the JS thread, routing work in `Task::compute` on the libuv
//! pool, and the engine held in an `Arc` so in-flight tasks keep it alive.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use quietway_engine::avoid::{Avoidance, Schedule, Severity};
use quietway_engine::city::{ArcChange, City, Profile, RouteRequest};
use quietway_engine::geo::{LonLat, haversine_m};
use quietway_engine::graph::TrafficControl;
use quietway_engine::graph::{ArcAttrs, BikeAccess, CityGraph, SafetyClass, way_flags};
use quietway_engine::metric::{MetricKind, WeightingModel};
use std::sync::Arc;

/// The native engine's version.
#[napi]
pub fn engine_version() -> String {
    quietway_engine::VERSION.to_string()
}

/// Great-circle distance in metres between two `[lon, lat]` positions.
#[napi]
pub fn haversine_meters(from: Vec<f64>, to: Vec<f64>) -> Result<f64> {
    Ok(haversine_m(
        to_lon_lat(&from, "from")?,
        to_lon_lat(&to, "to")?,
    ))
}

fn invalid(msg: impl Into<String>) -> Error {
    Error::new(Status::InvalidArg, msg.into())
}

fn to_lon_lat(v: &[f64], what: &str) -> Result<LonLat> {
    match v {
        [lon, lat] if (-180.0..=180.0).contains(lon) && (-90.0..=90.0).contains(lat) => {
            Ok(LonLat::new(*lon, *lat))
        }
        _ => Err(invalid(format!(
            "{what} must be a [longitude, latitude] pair in range"
        ))),
    }
}

/// A route request.
#[napi(object)]
pub struct RouteInput {
    /// 2 to 25 `[lon, lat]` waypoints.
    pub coordinates: Vec<Vec<f64>>,
    /// `cycling` or `walking`.
    pub profile: String,
    /// SuperSafe (safety-biased) or Direct cycling; default true.
    pub supersafe: Option<bool>,
    /// Night metric (unlit roads penalised); the caller decides whether night applies.
    pub night: Option<bool>,
    /// Degrees [0, 360) the route must leave the first waypoint in.
    pub bearing: Option<f64>,
    /// Departure as minutes since 1970-01-01 00:00 on the city's wall clock; selects avoidances.
    pub departure_local_minutes: Option<i64>,
    /// Time cycling legs at e-bike speed.
    pub ebike: Option<bool>,
    /// Include per-arc details (`legs[].arcs`); off by default, as they cost more to hand over than
    /// the route costs to compute.
    pub arc_details: Option<bool>,
    /// `routeJson`: also hand back the route's flat geometry (off by default).
    pub with_geometry: Option<bool>,
    /// `routeJson`: also hand back the directed arcs travelled (off by default).
    pub with_arc_ids: Option<bool>,
}

/// One travelled arc of a leg, with what guidance and the API need to know about it.
#[napi(object)]
pub struct RouteArc {
    pub arc: u32,
    pub way_id: i64,
    pub name: String,
    pub r#ref: String,
    /// `cycleway`, `quiet`, `shared`, `moderate`, `busy` or `very_busy`.
    pub safety_class: String,
    pub lit: bool,
    pub cycle_routes: Vec<String>,
    pub distance: f64,
}

/// One guidance step (engine/src/guidance.rs): maneuver, geometry and attributes; the server words it.
#[napi(object)]
pub struct RouteStep {
    /// `depart`, `turn`, `continue`, `roundabout`, `uturn` or `arrive`.
    pub kind: String,
    /// `straight`, `slight left`, `left`, `sharp left`, `uturn`, … (absent on depart and arrive).
    pub modifier: Option<String>,
    pub location: Vec<f64>,
    pub bearing_before: f64,
    pub bearing_after: f64,
    /// Flat `[lon, lat, lon, lat, …]` (one typed array crosses N-API far faster than nested arrays).
    pub geometry: Float64Array,
    pub distance: f64,
    pub duration: f64,
    pub delta_elevation: f64,
    pub name: String,
    pub r#ref: String,
    /// API safety classification: `cycleway`, `quiet`, `shared`, `moderate`, `busy`.
    pub safety_class: String,
    /// Deprecated numeric code: 0 and 1 quiet, 2 moderate, 3 busy.
    pub safety_code: u32,
    pub cycle_routes: Vec<String>,
    pub lit: bool,
    /// Roundabout exit number, 1-based.
    pub exit: Option<u32>,
    /// Part of the step is walked, pushing the bike.
    pub push: bool,
    /// The step's arcs.
    pub arcs: Uint32Array,
}

/// A traffic-control point on the route.
#[napi(object)]
pub struct RouteStop {
    /// `traffic_signal`, `stop_sign` or `give_way`.
    pub stop_type: String,
    pub location: Vec<f64>,
}

#[napi(object)]
pub struct RouteLeg {
    pub distance: f64,
    pub duration: f64,
    pub elevation_gain: f64,
    pub elevation_loss: f64,
    /// Flat `[lon, lat, lon, lat, …]` positions.
    pub geometry: Float64Array,
    /// The directed arcs travelled (the v1 `edge_ids`).
    pub arc_ids: Uint32Array,
    /// Per-arc details, when asked for (`arcDetails`).
    pub arcs: Vec<RouteArc>,
    pub steps: Vec<RouteStep>,
    pub stops: Vec<RouteStop>,
}

#[napi(object)]
pub struct SnappedWaypoint {
    pub location: Vec<f64>,
    /// Metres between the requested and the snapped position.
    pub distance: f64,
    pub name: String,
}

#[napi(object)]
pub struct RouteOutput {
    pub legs: Vec<RouteLeg>,
    pub waypoints: Vec<SnappedWaypoint>,
    /// The metric used: `supersafe_day`, `supersafe_night`, `direct_day`, `direct_night`, `walking`.
    pub metric: String,
}

fn json_extras(input: &RouteInput) -> JsonExtras {
    JsonExtras {
        geometry: input.with_geometry.unwrap_or(false),
        arc_ids: input.with_arc_ids.unwrap_or(false),
    }
}

fn to_request(input: RouteInput) -> Result<(RouteRequest, bool)> {
    let profile = match input.profile.as_str() {
        "cycling" => Profile::Cycling,
        "walking" => Profile::Walking,
        other => {
            return Err(invalid(format!(
                "profile must be cycling or walking, not '{other}'"
            )));
        }
    };
    if !(2..=25).contains(&input.coordinates.len()) {
        return Err(invalid("coordinates must hold 2 to 25 waypoints"));
    }
    let mut waypoints = Vec::with_capacity(input.coordinates.len());
    for (i, c) in input.coordinates.iter().enumerate() {
        let p = to_lon_lat(c, &format!("coordinates[{i}]"))?;
        waypoints.push([p.lon, p.lat]);
    }
    if let Some(b) = input.bearing
        && !(0.0..360.0).contains(&b)
    {
        return Err(invalid("bearing must be in [0, 360)"));
    }
    Ok((
        RouteRequest {
            waypoints,
            profile,
            supersafe: input.supersafe.unwrap_or(true),
            night: input.night.unwrap_or(false),
            bearing: input.bearing.map(|b| b.round() % 360.0),
            departure: input.departure_local_minutes,
        },
        input.ebike.unwrap_or(false),
    ))
}

fn describe(
    city: &City,
    req: &RouteRequest,
    ebike: bool,
    details: bool,
) -> std::result::Result<Option<RouteOutput>, String> {
    let route = match city.route(req) {
        Ok(Some(r)) => r,
        Ok(None) => return Ok(None),
        Err(quietway_engine::city::RouteError::InvalidRequest(m)) => return Err(m),
    };
    let g = &city.graph;
    let legs = route
        .legs
        .iter()
        .enumerate()
        .map(|(i, leg)| {
            let s = city.summarize_leg(leg, req.profile, ebike);
            let arc_ids: Vec<u32> = leg.pieces.iter().map(|p| p.arc).collect();
            let arcs = leg
                .pieces
                .iter()
                .filter(|_| details)
                .map(|p| {
                    let way = g.arc_way(p.arc);
                    let attrs = g.arc_attrs[p.arc as usize];
                    let flags = g.way_flags[way as usize];
                    RouteArc {
                        arc: p.arc,
                        way_id: g.way_osm_id[way as usize],
                        name: g.string(g.way_name[way as usize]).to_string(),
                        r#ref: g.string(g.way_ref[way as usize]).to_string(),
                        safety_class: attrs.safety_class().name().to_string(),
                        lit: flags & quietway_engine::graph::way_flags::LIT != 0,
                        cycle_routes: g.route_names(way).map(str::to_string).collect(),
                        distance: g.arc_length_m(p.arc) as f64 * (p.to - p.from),
                    }
                })
                .collect();
            let w = &route.waypoints[i];
            let (steps, stops) = city.guidance(leg, [w.lon, w.lat], req.profile, ebike);
            let steps = steps
                .into_iter()
                .map(|st| RouteStep {
                    kind: st.kind.name().to_string(),
                    modifier: st.modifier.map(str::to_string),
                    location: st.location.to_vec(),
                    bearing_before: st.bearing_before,
                    bearing_after: st.bearing_after,
                    geometry: Float64Array::new(st.geometry.concat()),
                    distance: st.distance_m,
                    duration: st.duration_s,
                    delta_elevation: st.delta_elevation_m,
                    name: st.name,
                    r#ref: st.r#ref,
                    safety_class: st.safety_class.api_name().to_string(),
                    safety_code: st.safety_class.safety_code() as u32,
                    cycle_routes: st.cycle_routes,
                    lit: st.lit,
                    exit: st.exit,
                    push: st.push,
                    arcs: Uint32Array::new(st.arcs),
                })
                .collect();
            let stops = stops
                .into_iter()
                .map(|st| RouteStop {
                    stop_type: match st.control {
                        TrafficControl::Signals => "traffic_signal",
                        TrafficControl::Stop => "stop_sign",
                        _ => "give_way",
                    }
                    .to_string(),
                    location: st.location.to_vec(),
                })
                .collect();
            RouteLeg {
                distance: s.distance_m,
                duration: s.duration_s,
                elevation_gain: s.elevation_gain_m,
                elevation_loss: s.elevation_loss_m,
                geometry: Float64Array::new(s.geometry.concat()),
                arc_ids: Uint32Array::new(arc_ids),
                arcs,
                steps,
                stops,
            }
        })
        .collect();
    let waypoints = route
        .waypoints
        .iter()
        .map(|w| {
            let e = w.edge;
            let way = g.edge_way[e as usize];
            SnappedWaypoint {
                location: vec![w.lon, w.lat],
                distance: w.distance_m,
                name: g.string(g.way_name[way as usize]).to_string(),
            }
        })
        .collect();
    Ok(Some(RouteOutput {
        legs,
        waypoints,
        metric: route.metric.name().to_string(),
    }))
}

/// Bytes handed to JavaScript as a `Buffer` copied into V8's heap. A `Buffer` made from a `Vec`
/// is external: its memory returns to the allocator only when V8 collects it, and under load the
/// allocator keeps growing into fresh pages meanwhile (page faults were a tenth of a routing call).
pub struct CopiedBuffer(Vec<u8>);

impl ToNapiValue for CopiedBuffer {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let (mut data, mut out) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: `val.0` is alive for the call; N-API copies `len` bytes from it.
        check_status!(unsafe {
            sys::napi_create_buffer_copy(
                env,
                val.0.len(),
                val.0.as_ptr().cast(),
                &mut data,
                &mut out,
            )
        })?;
        Ok(out)
    }
}

impl TypeName for CopiedBuffer {
    fn type_name() -> &'static str {
        "Buffer"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

/// Numbers handed to JavaScript as a typed array in V8's heap (copied, like [`CopiedBuffer`]):
/// `CopiedArray<f64>` is a `Float64Array`, `CopiedArray<u32>` a `Uint32Array`. (napi-rs's own
/// `copy_from` for typed arrays sizes the buffer in elements, not bytes, and copies nothing.)
pub struct CopiedArray<T>(Vec<T>);

/// The typed-array kind of an element type.
pub trait TypedElement: Copy {
    const KIND: sys::napi_typedarray_type;
}

impl TypedElement for f64 {
    const KIND: sys::napi_typedarray_type = sys::TypedarrayType::float64_array;
}

impl TypedElement for u32 {
    const KIND: sys::napi_typedarray_type = sys::TypedarrayType::uint32_array;
}

impl<T: TypedElement> ToNapiValue for CopiedArray<T> {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let (mut data, mut buffer, mut out) = (
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        let len = val.0.len();
        // SAFETY: N-API allocates `len` elements' bytes at `data`, which are filled before use.
        unsafe {
            check_status!(sys::napi_create_arraybuffer(
                env,
                std::mem::size_of::<T>() * len,
                &mut data,
                &mut buffer
            ))?;
            if len > 0 {
                std::ptr::copy_nonoverlapping(val.0.as_ptr(), data.cast::<T>(), len);
            }
            check_status!(sys::napi_create_typedarray(
                env,
                T::KIND,
                len,
                buffer,
                0,
                &mut out
            ))?;
        }
        Ok(out)
    }
}

/// A planned route in the directions v2 shape: the `route` object as JSON (guidance worded by the
/// engine), plus what the server needs beside it.
#[napi(object, object_from_js = false)]
pub struct RouteJsonOutput {
    /// The v2 `route` object, serialized as UTF-8 JSON.
    #[napi(ts_type = "Buffer")]
    pub route_json: CopiedBuffer,
    /// The route's geometry, flat `[lon, lat, …]`, when asked for (`withGeometry`).
    #[napi(ts_type = "Float64Array")]
    pub geometry: Option<CopiedArray<f64>>,
    /// The directed arcs travelled (the v1 `edge_ids`), when asked for (`withArcIds`).
    #[napi(ts_type = "Uint32Array")]
    pub arc_ids: Option<CopiedArray<u32>>,
    pub waypoints: Vec<SnappedWaypoint>,
    pub metric: String,
}

/// What `routeJson` hands back beside the route object.
#[derive(Clone, Copy, Default)]
struct JsonExtras {
    geometry: bool,
    arc_ids: bool,
}

fn describe_json(
    city: &City,
    req: &RouteRequest,
    ebike: bool,
    extras: JsonExtras,
) -> std::result::Result<Option<RouteJsonOutput>, String> {
    let d = match city.directions(req, ebike) {
        Ok(Some(d)) => d,
        Ok(None) => return Ok(None),
        Err(quietway_engine::city::RouteError::InvalidRequest(m)) => return Err(m),
    };
    Ok(Some(RouteJsonOutput {
        route_json: CopiedBuffer(d.route_json.into_bytes()),
        geometry: extras.geometry.then_some(CopiedArray(d.geometry)),
        arc_ids: extras.arc_ids.then_some(CopiedArray(d.arc_ids)),
        waypoints: d
            .waypoints
            .into_iter()
            .map(|w| SnappedWaypoint {
                location: w.location.to_vec(),
                distance: w.distance_m,
                name: w.name,
            })
            .collect(),
        metric: d.metric.to_string(),
    }))
}

pub struct RouteJsonTask {
    city: Arc<City>,
    req: RouteRequest,
    ebike: bool,
    extras: JsonExtras,
}

impl Task for RouteJsonTask {
    type Output = Option<RouteJsonOutput>;
    type JsValue = Option<RouteJsonOutput>;

    fn compute(&mut self) -> Result<Self::Output> {
        describe_json(&self.city, &self.req, self.ebike, self.extras).map_err(invalid)
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(output)
    }
}

pub struct ResponseTask {
    city: Arc<City>,
    req: RouteRequest,
    ebike: bool,
    tail: String,
}

impl Task for ResponseTask {
    type Output = Option<CopiedBuffer>;
    type JsValue = Option<CopiedBuffer>;

    fn compute(&mut self) -> Result<Self::Output> {
        match self
            .city
            .directions_response(&self.req, self.ebike, &self.tail)
        {
            Ok(body) => Ok(body.map(CopiedBuffer)),
            Err(quietway_engine::city::RouteError::InvalidRequest(m)) => Err(invalid(m)),
        }
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(output)
    }
}

pub struct RouteTask {
    city: Arc<City>,
    req: RouteRequest,
    ebike: bool,
    details: bool,
}

impl Task for RouteTask {
    type Output = Option<RouteOutput>;
    type JsValue = Option<RouteOutput>;

    fn compute(&mut self) -> Result<Self::Output> {
        describe(&self.city, &self.req, self.ebike, self.details).map_err(invalid)
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(output)
    }
}

/// One-to-many request: the `k` nearest of `targets` from `origin` by network cost.
#[napi(object)]
pub struct OneToManyInput {
    pub origin: Vec<f64>,
    pub targets: Vec<Vec<f64>>,
    pub k: u32,
    /// `cycling` or `walking`.
    pub profile: String,
    pub supersafe: Option<bool>,
    pub night: Option<bool>,
    pub departure_local_minutes: Option<i64>,
    /// Give up beyond this many (penalised) seconds; default one hour.
    pub max_seconds: Option<f64>,
}

#[napi(object)]
pub struct NearestTarget {
    /// Index into `targets`.
    pub index: u32,
    /// Network cost in (penalised) seconds.
    pub cost: f64,
}

pub struct OneToManyTask {
    city: Arc<City>,
    origin: [f64; 2],
    targets: Vec<[f64; 2]>,
    k: usize,
    kind: MetricKind,
    departure: Option<i64>,
    max_seconds: f64,
}

impl Task for OneToManyTask {
    type Output = Vec<NearestTarget>;
    type JsValue = Vec<NearestTarget>;

    fn compute(&mut self) -> Result<Self::Output> {
        let found = self.city.one_to_many(
            self.origin,
            &self.targets,
            self.k,
            self.kind,
            self.departure,
            self.max_seconds,
        );
        Ok(found
            .into_iter()
            .map(|(i, c)| NearestTarget {
                index: i as u32,
                cost: c as f64 / quietway_engine::metric::WEIGHT_PER_SECOND,
            })
            .collect())
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(output)
    }
}

/// A schedule: `always`, a weekly window, or a one-time range, in the city's local wall-clock time.
#[napi(object)]
pub struct ScheduleInput {
    /// `always`, `weekly` or `once`.
    pub kind: String,
    /// Weekly: bit 0 = Monday … bit 6 = Sunday.
    pub weekdays: Option<u32>,
    /// Weekly: minutes of the day; an end at or before the start runs past midnight.
    pub start_minute: Option<u32>,
    pub end_minute: Option<u32>,
    /// Once: local minutes since 1970-01-01 00:00, `[start, end)`.
    pub start: Option<i64>,
    pub end: Option<i64>,
}

#[napi(object)]
pub struct AvoidanceInput {
    pub id: String,
    /// OSM way ids whose arcs (both directions) the avoidance covers.
    pub way_ids: Option<Vec<i64>>,
    /// Directed arc ids, as returned in routes.
    pub arcs: Option<Vec<u32>>,
    /// `closed` or `avoid`.
    pub severity: String,
    pub schedule: ScheduleInput,
}

fn to_schedule(s: &ScheduleInput) -> Result<Schedule> {
    let need = |v: Option<u32>, what: &str| {
        v.ok_or_else(|| invalid(format!("a weekly schedule needs {what}")))
    };
    let schedule = match s.kind.as_str() {
        "always" => Schedule::Always,
        "weekly" => Schedule::Weekly {
            weekdays: need(s.weekdays, "weekdays")?.min(255) as u8,
            start_minute: need(s.start_minute, "startMinute")?.min(u16::MAX as u32) as u16,
            end_minute: need(s.end_minute, "endMinute")?.min(u16::MAX as u32) as u16,
        },
        "once" => Schedule::Once {
            start: s
                .start
                .ok_or_else(|| invalid("a one-time schedule needs start"))?,
            end: s
                .end
                .ok_or_else(|| invalid("a one-time schedule needs end"))?,
        },
        other => {
            return Err(invalid(format!(
                "schedule kind must be always, weekly or once, not '{other}'"
            )));
        }
    };
    schedule.validate().map_err(invalid)?;
    Ok(schedule)
}

#[napi(object)]
pub struct ArcChangeInput {
    pub arc: u32,
    /// `factor` (multiply the weight), `closed`, or `reset`.
    pub kind: String,
    pub factor: Option<f64>,
}

/// A turn banned for cycling: from one OSM way into another, at one junction or wherever they meet.
#[napi(object)]
pub struct TurnBanInput {
    pub from_way_id: i64,
    pub via_node_id: Option<i64>,
    pub to_way_id: i64,
}

#[napi(object)]
pub struct CityStats {
    pub id: String,
    pub name: String,
    pub timezone: String,
    pub graph_version: String,
    pub has_lighting_data: bool,
    pub elevation_known: bool,
    pub nodes: u32,
    pub edges: u32,
    pub arcs: u32,
    pub cch_arcs: u32,
    pub avoidances: u32,
    pub memory_bytes: f64,
    /// The coverage areas as GeoJSON MultiPolygon coordinate arrays, JSON-encoded.
    pub coverage_json: String,
    pub area_names: Vec<String>,
    /// `[min lon, min lat, max lon, max lat]` of the graph's junctions.
    pub bbox: Vec<f64>,
}

/// One stretch of road (an edge of the graph) for maps and report analysis: both directions'
/// attributes and its shape.
#[napi(object, object_from_js = false)]
pub struct RoadSegment {
    /// The forward arc (tail to head along the way's drawing); the backward arc is `arc + 1`.
    pub arc: u32,
    pub way_id: i64,
    pub name: String,
    pub r#ref: String,
    /// Safety class forward and backward: `cycleway`, `quiet`, `shared`, `moderate`, `busy` or
    /// `very_busy`.
    pub forward_class: String,
    pub backward_class: String,
    /// How a bicycle may use each direction: `ride`, `push` or `no`.
    pub forward_bike: String,
    pub backward_bike: String,
    pub lit: bool,
    pub cycle_routes: Vec<String>,
    pub length: f64,
    /// Flat `[lon, lat, …]`, in the forward direction.
    #[napi(ts_type = "Float64Array")]
    pub geometry: CopiedArray<f64>,
}

fn bike_name(a: ArcAttrs) -> &'static str {
    match a.bike() {
        BikeAccess::Ride => "ride",
        BikeAccess::Push => "push",
        BikeAccess::No => "no",
    }
}

/// The edges whose shape's bounding box meets `[min lon, min lat, max lon, max lat]` (a long
/// stretch crossing the box with no point inside it counts), at most `limit` of them.
fn roads_in(g: &CityGraph, bbox: [f64; 4], limit: usize) -> Vec<RoadSegment> {
    let mut out = Vec::new();
    let mut pts = Vec::new();
    for e in 0..g.edge_count() as u32 {
        let fwd = 2 * e;
        let (fa, ba) = (g.arc_attrs[fwd as usize], g.arc_attrs[fwd as usize + 1]);
        pts.clear();
        g.arc_geometry(fwd, &mut pts);
        let meets = pts.iter().fold([180.0f64, 90.0, -180.0, -90.0], |b, p| {
            [
                b[0].min(p[0]),
                b[1].min(p[1]),
                b[2].max(p[0]),
                b[3].max(p[1]),
            ]
        });
        if meets[0] > bbox[2] || meets[2] < bbox[0] || meets[1] > bbox[3] || meets[3] < bbox[1] {
            continue;
        }
        if out.len() == limit {
            break;
        }
        let way = g.arc_way(fwd);
        out.push(RoadSegment {
            arc: fwd,
            way_id: g.way_osm_id[way as usize],
            name: g.string(g.way_name[way as usize]).to_string(),
            r#ref: g.string(g.way_ref[way as usize]).to_string(),
            forward_class: fa.safety_class().name().to_string(),
            backward_class: ba.safety_class().name().to_string(),
            forward_bike: bike_name(fa).to_string(),
            backward_bike: bike_name(ba).to_string(),
            lit: g.way_flags[way as usize] & way_flags::LIT != 0,
            cycle_routes: g.route_names(way).map(str::to_string).collect(),
            length: g.edge_length_m[e as usize] as f64,
            geometry: CopiedArray(pts.iter().flat_map(|p| [p[0], p[1]]).collect()),
        });
    }
    out
}

pub struct RoadsTask {
    city: Arc<City>,
    bbox: [f64; 4],
    limit: usize,
}

impl Task for RoadsTask {
    type Output = Vec<RoadSegment>;
    type JsValue = Vec<RoadSegment>;

    fn compute(&mut self) -> Result<Self::Output> {
        Ok(roads_in(&self.city.graph, self.bbox, self.limit))
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(output)
    }
}

/// A loaded city graph.
#[napi]
pub struct Engine {
    city: Arc<City>,
}

pub struct LoadTask {
    path: String,
    weighting: Option<String>,
    query_graph_mb: Option<u32>,
}

impl Task for LoadTask {
    type Output = Arc<City>;
    type JsValue = Engine;

    fn compute(&mut self) -> Result<Self::Output> {
        let model = match &self.weighting {
            Some(json) => Some(WeightingModel::from_json(json).map_err(invalid)?),
            None => None,
        };
        // Transparent huge pages off while the city loads and walking's metric is built after it
        // (`quietway_engine::pause_huge_pages_during_bulk_work`).
        let pause = quietway_engine::BulkWork::begin();
        // With the cycling metrics of the light the city has now: a server started in the
        // evening answers its first night route without customizing them first.
        let city = City::load_now(self.path.as_ref(), model).map_err(|e| {
            Error::new(
                Status::GenericFailure,
                format!("cannot load graph {}: {e}", self.path),
            )
        })?;
        if let Some(mb) = self.query_graph_mb {
            city.set_query_graph_budget((mb as usize) << 20);
        }
        let city = Arc::new(city);
        // Walking's metric is built once the city answers cycling requests (`City::warm`).
        let warm = city.clone();
        std::thread::spawn(move || {
            warm.warm();
            drop(pause);
        });
        Ok(city)
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(Engine { city: output })
    }
}

/// Loads a city graph file (built by `quietway-build-graph`) on the libuv pool. A missing, truncated
/// or corrupt file rejects with a clear message. `weighting` is an optional weighting-model JSON;
/// `queryGraphMb` the megabytes the city's cycling metrics may spend on pruned query graphs (faster
/// queries; the engine's default unless given).
#[napi(ts_return_type = "Promise<Engine>")]
pub fn load_city(
    path: String,
    weighting: Option<String>,
    query_graph_mb: Option<u32>,
) -> AsyncTask<LoadTask> {
    tune_allocator();
    AsyncTask::new(LoadTask {
        path,
        weighting,
        query_graph_mb,
    })
}

fn metric_kind(profile: &str, supersafe: Option<bool>, night: Option<bool>) -> Result<MetricKind> {
    match profile {
        "walking" => Ok(MetricKind::Walking),
        "cycling" => Ok(MetricKind::cycling(
            supersafe.unwrap_or(true),
            night.unwrap_or(false),
        )),
        other => Err(invalid(format!(
            "profile must be cycling or walking, not '{other}'"
        ))),
    }
}

#[napi]
impl Engine {
    /// Plans a route; resolves to `null` when no route exists.
    #[napi(ts_return_type = "Promise<RouteOutput | null>")]
    pub fn route(&self, input: RouteInput) -> Result<AsyncTask<RouteTask>> {
        let details = input.arc_details.unwrap_or(false);
        let (req, ebike) = to_request(input)?;
        Ok(AsyncTask::new(RouteTask {
            city: self.city.clone(),
            req,
            ebike,
            details,
        }))
    }

    /// Plans a route and answers it in the directions v2 shape, worded by the engine; resolves to
    /// `null` when no route exists.
    #[napi(ts_return_type = "Promise<RouteJsonOutput | null>")]
    pub fn route_json(&self, input: RouteInput) -> Result<AsyncTask<RouteJsonTask>> {
        let extras = json_extras(&input);
        let (req, ebike) = to_request(input)?;
        Ok(AsyncTask::new(RouteJsonTask {
            city: self.city.clone(),
            req,
            ebike,
            extras,
        }))
    }

    /// Plans a route and answers a whole directions v2 response body (UTF-8 JSON): the route object
    /// and the snapped waypoints, then `tail` (`,"search_id":…}`, the caller's members and the
    /// closing brace); resolves to `null` when no route exists.
    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn directions_response(
        &self,
        input: RouteInput,
        tail: String,
    ) -> Result<AsyncTask<ResponseTask>> {
        if !tail.ends_with('}') {
            return Err(invalid("tail must close the response object"));
        }
        let (req, ebike) = to_request(input)?;
        Ok(AsyncTask::new(ResponseTask {
            city: self.city.clone(),
            req,
            ebike,
            tail,
        }))
    }

    /// The `k` nearest targets by network cost (bike-share stations, parking).
    #[napi(ts_return_type = "Promise<NearestTarget[]>")]
    pub fn one_to_many(&self, input: OneToManyInput) -> Result<AsyncTask<OneToManyTask>> {
        let origin = to_lon_lat(&input.origin, "origin")?;
        let targets = input
            .targets
            .iter()
            .enumerate()
            .map(|(i, t)| to_lon_lat(t, &format!("targets[{i}]")).map(|p| [p.lon, p.lat]))
            .collect::<Result<Vec<_>>>()?;
        if input.k == 0 {
            return Err(invalid("k must be at least 1"));
        }
        Ok(AsyncTask::new(OneToManyTask {
            city: self.city.clone(),
            origin: [origin.lon, origin.lat],
            targets,
            k: input.k as usize,
            kind: metric_kind(&input.profile, input.supersafe, input.night)?,
            departure: input.departure_local_minutes,
            max_seconds: input.max_seconds.unwrap_or(3600.0),
        }))
    }

    /// Adds (or replaces) an avoidance; it applies to cycling routes departing inside its schedule.
    #[napi]
    pub fn add_avoidance(&self, input: AvoidanceInput) -> Result<u32> {
        let severity = match input.severity.as_str() {
            "closed" => Severity::Closed,
            "avoid" => Severity::Avoid,
            other => {
                return Err(invalid(format!(
                    "severity must be closed or avoid, not '{other}'"
                )));
            }
        };
        let mut arcs = input.arcs.unwrap_or_default();
        for w in input.way_ids.unwrap_or_default() {
            arcs.extend(self.city.arcs_of_way(w));
        }
        if arcs.is_empty() {
            return Err(invalid("the avoidance covers no arc of this graph"));
        }
        let count = arcs.len() as u32;
        self.city
            .add_avoidance(Avoidance {
                id: input.id,
                arcs,
                severity,
                schedule: to_schedule(&input.schedule)?,
            })
            .map_err(invalid)?;
        Ok(count)
    }

    /// Removes an avoidance; false when none had that id.
    #[napi]
    pub fn remove_avoidance(&self, id: String) -> bool {
        self.city.remove_avoidance(&id)
    }

    /// The road segments whose shape meets `bbox` (`[min lon, min lat, max lon, max lat]`), at
    /// most `limit` (default 50,000), with both directions' attributes and their shapes: the
    /// safety map and the analysis of rider reports read the graph through this.
    #[napi(ts_return_type = "Promise<RoadSegment[]>")]
    pub fn roads(&self, bbox: Vec<f64>, limit: Option<u32>) -> Result<AsyncTask<RoadsTask>> {
        let bbox: [f64; 4] = match bbox.as_slice() {
            &[a, b, c, d] if a <= c && b <= d && [a, b, c, d].iter().all(|v| v.is_finite()) => {
                [a, b, c, d]
            }
            _ => {
                return Err(invalid(
                    "bbox must be [min lon, min lat, max lon, max lat] with min <= max",
                ));
            }
        };
        Ok(AsyncTask::new(RoadsTask {
            city: self.city.clone(),
            bbox,
            limit: limit.unwrap_or(50_000) as usize,
        }))
    }

    /// Directed arc ids of an OSM way.
    #[napi]
    pub fn arcs_of_way(&self, way_id: i64) -> Vec<u32> {
        self.city.arcs_of_way(way_id)
    }

    /// Permanent changes to cycling arcs (accepted reports), live when this returns.
    #[napi]
    pub fn update_arcs(&self, changes: Vec<ArcChangeInput>) -> Result<()> {
        let parsed = changes
            .iter()
            .map(|c| {
                let change = match c.kind.as_str() {
                    "closed" => ArcChange::Closed,
                    "reset" => ArcChange::Reset,
                    "factor" => match c.factor {
                        Some(f) if f.is_finite() && f > 0.0 => ArcChange::Factor(f),
                        _ => return Err(invalid("a factor change needs a positive factor")),
                    },
                    other => {
                        return Err(invalid(format!(
                            "change kind must be factor, closed or reset, not '{other}'"
                        )));
                    }
                };
                Ok((c.arc, change))
            })
            .collect::<Result<Vec<_>>>()?;
        self.city.update_arcs(&parsed).map_err(invalid)
    }

    /// Replaces the turns banned for cycling (accepted reports), live when this returns; the number
    /// of turns the bans matched.
    #[napi]
    pub fn set_turn_bans(&self, bans: Vec<TurnBanInput>) -> u32 {
        let bans: Vec<(i64, Option<i64>, i64)> = bans
            .iter()
            .map(|b| (b.from_way_id, b.via_node_id, b.to_way_id))
            .collect();
        self.city.set_turn_bans(&bans) as u32
    }

    /// Replaces the weighting model (JSON); every metric is re-customized and swapped in.
    #[napi]
    pub fn set_weighting(&self, json: String) -> Result<()> {
        let model = WeightingModel::from_json(&json).map_err(invalid)?;
        self.city.set_model(model).map_err(invalid)
    }

    /// The weighting model in force, as JSON.
    #[napi]
    pub fn weighting(&self) -> String {
        serde_json::to_string(&*self.city.model()).unwrap_or_default()
    }

    #[napi]
    pub fn stats(&self) -> CityStats {
        let g = &self.city.graph;
        let c = g.city.as_ref().expect("validated at load");
        let coverage: Vec<&Vec<Vec<Vec<[f64; 2]>>>> = c.areas.iter().map(|a| &a.polygons).collect();
        CityStats {
            id: c.id.clone(),
            name: c.name.clone(),
            timezone: c.timezone.clone(),
            graph_version: self.city.graph_version.clone(),
            has_lighting_data: c.has_lighting_data,
            elevation_known: c.elevation_known,
            nodes: g.node_count() as u32,
            edges: g.edge_count() as u32,
            arcs: g.arc_count() as u32,
            cch_arcs: self.city.cch.arc_count() as u32,
            avoidances: self.city.avoidances().len() as u32,
            memory_bytes: self.city.memory_bytes() as f64,
            coverage_json: serde_json::to_string(&coverage).unwrap_or_default(),
            area_names: c.areas.iter().map(|a| a.name.clone()).collect(),
            bbox: (0..g.node_count() as u32)
                .map(|v| g.node_lon_lat(v))
                .fold(vec![180.0, 90.0, -180.0, -90.0], |b, [x, y]| {
                    vec![b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)]
                }),
        }
    }
}

/// Safety classes in the order the engine ranks them, best first (for documentation and tests).
#[napi]
pub fn safety_classes() -> Vec<String> {
    SafetyClass::ALL
        .iter()
        .map(|c| c.name().to_string())
        .collect()
}

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

unsafe extern "C" {
    /// mimalloc's run-time options (linked from `libmimalloc-sys`'s build of mimalloc 3).
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}
/// `mi_option_purge_delay` in mimalloc 3's `mi_option_e`.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// Has mimalloc give freed pages back to the system at once. mimalloc 3 delays the purge by a
/// second and runs it when the heap that freed them is active again, and the threads that free a
/// city's large arrays (a load's working arrays, a metric a live change replaced, the customization
/// behind a pruned graph) are pool threads that may not run again for minutes: on the 4 x 4 tiling
/// of New York, 300 routes left the process at 2.7 GB resident for 1.6 GB the engine held, and
/// 1.9 GB with this (or with a delay of 10 ms). `MIMALLOC_PURGE_DELAY` in the environment still
/// decides where it is set.
///
fn tune_allocator() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Bulk work (loads, customization, live changes, pruning) without transparent huge
        // pages, unless `MIMALLOC_ALLOW_THP` in the environment decides.
        if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
            quietway_engine::pause_huge_pages_during_bulk_work();
        }
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            // SAFETY: sets an option; mimalloc reads options at any time.
            unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
        }
    });
}
