//! Assembles a city graph from OSM: ways split into edges at junctions, per-arc access and safety,
//! signed cycle routes, elevation, junction facts, turn restrictions and bicycle parking.

use crate::city::CityConfig;
use crate::dem::DemSet;
use crate::osm::{self, Counts, MemberKind, RawNode, RawRelation, RawWay, Tags, tag};
use crate::progress::Progress;
use crate::rules::{self, WayProfile};
use quietway_engine::geo::{LonLat, bearing_deg, haversine_m, multipolygon_contains};
use quietway_engine::graph::{
    ArcAttrs, BikeAccess, BikeParking, CityGraph, CityInfo, CoverageArea, NodeId, SafetyClass,
    StringTableBuilder, TrafficControl, from_fixed, way_flags,
};
use quietway_engine::turns::TurnRestriction;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

pub struct BuildInput {
    pub city_id: String,
    pub city: CityConfig,
    pub osm: Vec<PathBuf>,
    pub dem: Option<DemSet>,
    pub areas: Vec<CoverageArea>,
    pub sources: Vec<String>,
    /// Components with fewer nodes are dropped (islands a waypoint should never snap to).
    pub min_component_nodes: usize,
}

#[derive(Debug, Default, Clone)]
pub struct BuildReport {
    pub counts: Counts,
    pub nodes: usize,
    pub edges: usize,
    pub arcs: usize,
    pub bike_arcs: usize,
    pub foot_arcs: usize,
    /// Kilometres of rideable directed arcs per safety class (indexed by SafetyClass).
    pub km_per_class: [f64; 6],
    pub restrictions_applied: usize,
    pub restrictions_ignored: usize,
    pub dropped_components: usize,
    pub dropped_nodes: usize,
    pub parking: usize,
    pub nodes_inside_coverage: usize,
    /// Unnamed sidewalks named after the street beside them, of all unnamed sidewalks.
    pub sidewalks_named: usize,
    pub sidewalks_unnamed: usize,
}

struct KeptWay {
    id: i64,
    refs: Vec<i64>,
    profile: WayProfile,
    name: String,
    reference: String,
    /// A ferry's tagged crossing time.
    duration_s: Option<f64>,
    /// A named street a sidewalk may take its name from.
    street: bool,
    /// A sidewalk mapped as a way of its own, without a name.
    unnamed_sidewalk: bool,
    /// Named after the street beside it (`way_flags::NAME_BESIDE`).
    name_beside: bool,
}

fn control_of(tags: &Tags) -> (TrafficControl, Option<bool>) {
    let control = match tag(tags, "highway") {
        Some("traffic_signals") => TrafficControl::Signals,
        Some("stop") => TrafficControl::Stop,
        Some("give_way") => TrafficControl::GiveWay,
        Some("crossing") if tag(tags, "crossing") == Some("traffic_signals") => {
            TrafficControl::Signals
        }
        _ => TrafficControl::None,
    };
    let dir = tag(tags, "direction")
        .or_else(|| tag(tags, "traffic_signals:direction"))
        .and_then(|d| match d {
            "forward" => Some(true),
            "backward" => Some(false),
            _ => None,
        });
    (control, dir)
}

/// A turn restriction that binds bicycles, as tagged.
struct Restriction {
    from_ways: Vec<i64>,
    /// A via node, or the via ways in order.
    via_node: Option<i64>,
    via_ways: Vec<i64>,
    to_ways: Vec<i64>,
    only: bool,
    /// The turn the restriction names (`left`, `right`, `straight_on`, `u`), to pick the right
    /// arc when the to-way passes through the via node.
    turn: String,
}

/// Parses a turn restriction that binds bicycles (`restriction:bicycle` wins over `restriction`; an
/// `except` listing bicycle exempts them); `Err(())` when its members do not make a restriction.
fn parse_restriction(r: &RawRelation) -> Option<Result<Restriction, ()>> {
    let value = tag(&r.tags, "restriction:bicycle").or_else(|| {
        // `except` lists vehicles split by `;` (OSM) or `,` (seen in data, and read by OSRM).
        if tag(&r.tags, "except")
            .is_some_and(|e| e.split([';', ',']).any(|x| x.trim() == "bicycle"))
        {
            return None;
        }
        tag(&r.tags, "restriction")
    })?;
    let only = value.starts_with("only_");
    // `no_turn_on_red`, `no_right_turn_on_red`: a rule for the red light, not a banned turn.
    if (!only && !value.starts_with("no_")) || value.ends_with("_on_red") {
        return None;
    }
    let members = |role: &str, kind: MemberKind| -> Vec<i64> {
        r.members
            .iter()
            .filter(|(k, _, ro)| ro == role && *k == kind)
            .map(|(_, id, _)| *id)
            .collect()
    };
    let from_ways = members("from", MemberKind::Way);
    let to_ways = members("to", MemberKind::Way);
    let via_nodes = members("via", MemberKind::Node);
    let via_ways = members("via", MemberKind::Way);
    // Several from-ways only for `no_entry`, several to-ways only for `no_exit` (as OSM defines
    // them and OSRM reads them): a `no_right_turn` from two ways names no one turn.
    let well_formed = !from_ways.is_empty()
        && !to_ways.is_empty()
        && (from_ways.len() == 1 || value == "no_entry")
        && (to_ways.len() == 1 || value == "no_exit")
        && ((via_nodes.len() == 1 && via_ways.is_empty())
            || (via_nodes.is_empty() && !via_ways.is_empty()));
    if !well_formed {
        return Some(Err(()));
    }
    Some(Ok(Restriction {
        from_ways,
        via_node: via_nodes.first().copied(),
        via_ways,
        to_ways,
        only,
        turn: value
            .trim_start_matches("only_")
            .trim_start_matches("no_")
            .replace("_turn", ""),
    }))
}

/// Unnamed sidewalks take the name of the street they run beside (crate::sidewalks); how many did.
fn name_sidewalks(ways: &mut [KeptWay], point: impl Fn(i64) -> Option<LonLat>) -> usize {
    let points = |w: &KeptWay| w.refs.iter().filter_map(|&r| point(r)).collect::<Vec<_>>();
    let streets: Vec<(Vec<LonLat>, &str)> = ways
        .iter()
        .filter(|w| w.street)
        .map(|w| (points(w), w.name.as_str()))
        .collect();
    let sidewalks: Vec<usize> = (0..ways.len())
        .filter(|&i| ways[i].unnamed_sidewalk)
        .collect();
    let lines: Vec<Vec<LonLat>> = sidewalks.iter().map(|&i| points(&ways[i])).collect();
    let names = crate::sidewalks::street_names_beside(&streets, &lines);
    drop(streets);
    let mut named = 0;
    for (i, name) in sidewalks.into_iter().zip(names) {
        if let Some(name) = name {
            ways[i].name = name;
            ways[i].name_beside = true;
            named += 1;
        }
    }
    named
}

fn route_name(r: &RawRelation) -> String {
    if let Some(n) = tag(&r.tags, "name") {
        return n.to_string();
    }
    if let Some(rf) = tag(&r.tags, "ref") {
        return match tag(&r.tags, "network") {
            Some("ncn") => format!("National Cycle Route {rf}"),
            _ => format!("Cycle Route {rf}"),
        };
    }
    match tag(&r.tags, "network") {
        Some("icn") => "International cycle route",
        Some("ncn") => "National cycle route",
        Some("rcn") => "Regional cycle route",
        _ => "Local cycle route",
    }
    .to_string()
}

fn way_route_tag_names(tags: &Tags) -> Vec<String> {
    let mut out = Vec::new();
    for (net, label) in [
        ("icn", "International cycle route"),
        ("ncn", "National cycle route"),
        ("rcn", "Regional cycle route"),
        ("lcn", "Local cycle route"),
    ] {
        if matches!(tag(tags, net), Some("yes" | "designated")) {
            out.push(
                tag(tags, &format!("{net}_ref"))
                    .map(|r| format!("Cycle Route {r}"))
                    .unwrap_or_else(|| label.to_string()),
            );
        }
    }
    out
}

pub fn build(input: &BuildInput, progress: &Progress) -> Result<(CityGraph, BuildReport), String> {
    let mut report = BuildReport::default();
    let rules_cfg = input.city.rules();

    // ---- pass 1: ways and relations ----
    let mut raw_ways: Vec<RawWay> = Vec::new();
    let mut relations: Vec<RawRelation> = Vec::new();
    for path in &input.osm {
        let size = std::fs::metadata(path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len();
        progress.phase(
            &format!("reading ways and relations of {}", file_name(path)),
            size,
        );
        let (w, r, c) = osm::read_ways_and_relations(path, progress)?;
        raw_ways.extend(w);
        relations.extend(r);
        report.counts.ways += c.ways;
        report.counts.relations += c.relations;
        report.counts.nodes += c.nodes;
    }
    osm::newest(&mut raw_ways, |w| (w.id, w.version));
    osm::newest(&mut relations, |r| (r.id, r.version));

    progress.phase("classifying ways", 0);
    let mut ways: Vec<KeptWay> = Vec::new();
    let mut parking_ways: Vec<RawWay> = Vec::new();
    // Signed cycle routes: lcn/rcn/ncn/icn way tags here, relation names below.
    let mut way_routes: HashMap<i64, BTreeSet<String>> = HashMap::new();
    // Each way is classified on its own (on the thread pool), then sorted into the lists in order.
    enum Read {
        Parking(RawWay),
        Kept(KeptWay, Vec<String>),
        Skipped,
    }
    use rayon::prelude::*;
    let read: Vec<Read> = raw_ways
        .into_par_iter()
        .map(|w| {
            if osm::is_parking_node(&w.tags) && tag(&w.tags, "highway").is_none() {
                return Read::Parking(w);
            }
            if w.refs.len() < 2 {
                return Read::Skipped;
            }
            // A way without a highway tag that riders use all the same is read as that highway.
            let closed = w.refs.len() > 2 && w.refs.first() == w.refs.last();
            let mut w = w;
            let untagged = rules::highway_of_untagged(&w.tags, closed);
            // An area's outline (a square, a car park) names no sidewalk beside it.
            let outline = untagged.is_some() || tag(&w.tags, "area") == Some("yes");
            if let Some(highway) = untagged {
                w.tags.push(("highway".into(), highway.into()));
                if closed {
                    w.tags.push(("area".into(), "yes".into()));
                }
            }
            let Some(profile) = rules::classify(&w.tags, &rules_cfg) else {
                return Read::Skipped;
            };
            let name = tag(&w.tags, "name").unwrap_or("").to_string();
            let reference = tag(&w.tags, "ref").unwrap_or("").to_string();
            let highway = tag(&w.tags, "highway").unwrap_or("");
            let street = !name.is_empty()
                && !outline
                && matches!(
                    highway.trim_end_matches("_link"),
                    "motorway"
                        | "trunk"
                        | "primary"
                        | "secondary"
                        | "tertiary"
                        | "unclassified"
                        | "residential"
                        | "living_street"
                        | "pedestrian"
                        | "service"
                );
            let unnamed_sidewalk = name.is_empty()
                && highway == "footway"
                && tag(&w.tags, "footway") == Some("sidewalk");
            let routes = way_route_tag_names(&w.tags);
            Read::Kept(
                KeptWay {
                    id: w.id,
                    duration_s: rules::ferry_duration_s(&w.tags)
                        .filter(|_| profile.flags & way_flags::FERRY != 0),
                    refs: w.refs,
                    profile,
                    name,
                    reference,
                    street,
                    unnamed_sidewalk,
                    name_beside: false,
                },
                routes,
            )
        })
        .collect();
    for r in read {
        match r {
            Read::Parking(w) => parking_ways.push(w),
            Read::Kept(w, routes) => {
                if !routes.is_empty() {
                    way_routes.entry(w.id).or_default().extend(routes);
                }
                ways.push(w);
            }
            Read::Skipped => {}
        }
    }
    if ways.is_empty() {
        return Err(
            "the extract contains no streets or paths a bicycle or pedestrian may use".into(),
        );
    }

    let mut restrictions = Vec::new();
    for r in &relations {
        if tag(&r.tags, "type") == Some("route") {
            let name = route_name(r);
            for (kind, id, _) in &r.members {
                if *kind == MemberKind::Way {
                    way_routes.entry(*id).or_default().insert(name.clone());
                }
            }
        } else {
            match parse_restriction(r) {
                Some(Ok(x)) => restrictions.push(x),
                Some(Err(())) => report.restrictions_ignored += 1,
                None => {}
            }
        }
    }

    // ---- pass 2: the nodes the kept ways use ----
    let mut wanted: HashSet<i64> = HashSet::with_capacity(ways.iter().map(|w| w.refs.len()).sum());
    for w in &ways {
        wanted.extend(w.refs.iter().copied());
    }
    for w in &parking_ways {
        wanted.extend(w.refs.iter().copied());
    }
    let mut raw_nodes: Vec<RawNode> = Vec::new();
    for path in &input.osm {
        let size = std::fs::metadata(path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len();
        progress.phase(&format!("reading nodes of {}", file_name(path)), size);
        raw_nodes.extend(osm::read_nodes(path, &wanted, progress)?);
    }
    osm::newest(&mut raw_nodes, |n| (n.id, n.version));
    drop(wanted);
    let node_index: HashMap<i64, usize> = raw_nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id, i))
        .collect();

    progress.phase("naming sidewalks after their streets", 0);
    report.sidewalks_unnamed = ways.iter().filter(|w| w.unnamed_sidewalk).count();
    report.sidewalks_named = name_sidewalks(&mut ways, |r| {
        node_index
            .get(&r)
            .map(|&k| LonLat::new(from_fixed(raw_nodes[k].lon), from_fixed(raw_nodes[k].lat)))
    });

    progress.phase("splitting ways into edges", 0);
    // A node becomes a graph node when it ends a way, is shared by ways, or controls traffic.
    let mut uses: Vec<u8> = vec![0; raw_nodes.len()];
    for w in &ways {
        for (i, r) in w.refs.iter().enumerate() {
            if let Some(&k) = node_index.get(r) {
                let bump = if i == 0 || i + 1 == w.refs.len() {
                    2
                } else {
                    1
                };
                uses[k] = uses[k].saturating_add(bump);
            }
        }
    }
    let controls: Vec<(TrafficControl, Option<bool>)> =
        raw_nodes.iter().map(|n| control_of(&n.tags)).collect();
    // Nodes not everyone may pass (walls, locked gates, `access=no`…): they become graph nodes, and
    // below each way through one gets its own copy of the node, joined only for those who may pass.
    let passages: Vec<Option<(BikeAccess, bool)>> = raw_nodes
        .iter()
        .map(|n| rules::node_passage(&n.tags))
        .collect();
    let mut graph_id: Vec<u32> = vec![u32::MAX; raw_nodes.len()];
    let mut g = CityGraph::default();
    let mut add_node = |k: usize, g: &mut CityGraph| -> u32 {
        if graph_id[k] == u32::MAX {
            graph_id[k] = g.node_lon.len() as u32;
            let n = &raw_nodes[k];
            g.node_lon.push(n.lon);
            g.node_lat.push(n.lat);
            g.node_osm_id.push(n.id);
            g.node_control.push(controls[k].0 as u8);
        }
        graph_id[k]
    };

    let mut strings = StringTableBuilder::new();
    let mut route_sets: HashMap<Vec<u32>, u32> = HashMap::new();
    let mut route_set_first = vec![0u32, 0u32]; // set 0: empty
    let mut route_set_names: Vec<u32> = Vec::new();
    // Per edge: the raw node index sequence, kept for elevation and bearings.
    let mut edge_points: Vec<Vec<usize>> = Vec::new();
    let mut way_index_of: HashMap<i64, u32> = HashMap::new();

    for w in &ways {
        let way_idx = g.way_osm_id.len() as u32;
        way_index_of.insert(w.id, way_idx);
        g.way_osm_id.push(w.id);
        g.way_name.push(strings.intern(&w.name));
        g.way_ref.push(strings.intern(&w.reference));
        let mut flags = w.profile.flags;
        if w.name_beside {
            flags |= way_flags::NAME_BESIDE;
        }
        let (mut fwd, mut bwd) = (w.profile.forward, w.profile.backward);
        let set = match way_routes.get(&w.id) {
            Some(names) if !names.is_empty() => {
                flags |= way_flags::CYCLE_ROUTE;
                let ids: Vec<u32> = names.iter().map(|n| strings.intern(n)).collect();
                let next = route_sets.len() as u32 + 1;
                *route_sets.entry(ids.clone()).or_insert_with(|| {
                    route_set_names.extend_from_slice(&ids);
                    route_set_first.push(route_set_names.len() as u32);
                    next
                })
            }
            _ => 0,
        };
        if flags & way_flags::CYCLE_ROUTE != 0 {
            fwd = rules::upgrade_for_route(fwd);
            bwd = rules::upgrade_for_route(bwd);
        }
        g.way_flags.push(flags);
        g.way_route_set.push(set);

        // Split at graph nodes; a missing node (clipped extract) ends the current piece.
        let mut piece: Vec<usize> = Vec::new();
        let mut flush = |piece: &mut Vec<usize>, g: &mut CityGraph| {
            // A piece that comes back to where it started (a closed ring with one junction, or
            // none) is cut in two at its middle point, so the loop is an edge pair like any other.
            let halves: Vec<Vec<usize>> = if piece.len() >= 3 && piece[0] == piece[piece.len() - 1]
            {
                let mid = piece.len() / 2;
                vec![piece[..=mid].to_vec(), piece[mid..].to_vec()]
            } else {
                vec![std::mem::take(piece)]
            };
            for part in halves {
                if part.len() >= 2 && part[0] != part[part.len() - 1] {
                    let t = add_node(part[0], g);
                    let h = add_node(part[part.len() - 1], g);
                    g.edge_tail.push(t);
                    g.edge_head.push(h);
                    g.edge_way.push(way_idx);
                    g.arc_attrs.push(fwd);
                    g.arc_attrs.push(bwd);
                    edge_points.push(part);
                }
            }
            piece.clear();
        };
        let mut prev: Option<usize> = None;
        for (i, r) in w.refs.iter().enumerate() {
            let Some(&k) = node_index.get(r) else {
                flush(&mut piece, &mut g);
                prev = None;
                continue;
            };
            if prev == Some(k) {
                continue; // repeated node
            }
            prev = Some(k);
            piece.push(k);
            let is_graph_node = uses[k] >= 2
                || controls[k].0 != TrafficControl::None
                || passages[k].is_some()
                || i + 1 == w.refs.len();
            if is_graph_node && piece.len() >= 2 {
                flush(&mut piece, &mut g);
                piece.push(k);
            }
        }
        flush(&mut piece, &mut g);
    }

    // Geometry, lengths, bearings, head-control flags.
    let elevation_at = |k: usize| -> f32 {
        match &input.dem {
            Some(dem) => dem
                .elevation(from_fixed(raw_nodes[k].lon), from_fixed(raw_nodes[k].lat))
                .unwrap_or(f32::NAN),
            None => f32::NAN,
        }
    };
    g.edge_geom_first.push(0);
    for (e, pts) in edge_points.iter().enumerate() {
        let ll = |k: usize| LonLat::new(from_fixed(raw_nodes[k].lon), from_fixed(raw_nodes[k].lat));
        let mut len = 0.0;
        for p in pts.windows(2) {
            len += haversine_m(ll(p[0]), ll(p[1]));
        }
        g.edge_length_m.push(len.max(0.01) as f32);
        for &k in &pts[1..pts.len() - 1] {
            g.geom_lon.push(raw_nodes[k].lon);
            g.geom_lat.push(raw_nodes[k].lat);
        }
        g.edge_geom_first.push(g.geom_lon.len() as u32);
        let b0 = bearing_deg(ll(pts[0]), ll(pts[1]));
        let b1 = bearing_deg(ll(pts[pts.len() - 2]), ll(pts[pts.len() - 1]));
        g.edge_bearing_start.push((b0.round() as u16) % 360);
        g.edge_bearing_end.push((b1.round() as u16) % 360);
        let (mut up, mut down) = (0.0f32, 0.0f32);
        if input.dem.is_some() {
            let el: Vec<f32> = pts.iter().map(|&k| elevation_at(k)).collect();
            for p in el.windows(2) {
                let d = p[1] - p[0];
                if d.is_finite() {
                    if d > 0.0 { up += d } else { down -= d }
                }
            }
        }
        g.edge_climb_fwd_m.push(up);
        g.edge_climb_bwd_m.push(down);
        // Stop signs and give-ways apply to traffic entering the node, in the tagged direction
        // relative to the way where one is given.
        for (arc, node_k, along_way) in [
            (2 * e, pts[pts.len() - 1], true),
            (2 * e + 1, pts[0], false),
        ] {
            let (c, dir) = controls[node_k];
            if matches!(c, TrafficControl::Stop | TrafficControl::GiveWay)
                && dir.is_none_or(|d| d == along_way)
            {
                g.arc_attrs[arc] = g.arc_attrs[arc].with_head_control(true);
            }
        }
    }
    g.node_elevation = (0..g.node_lon.len()).map(|_| f32::NAN).collect();
    if input.dem.is_some() {
        for (k, &id) in graph_id.iter().enumerate() {
            if id != u32::MAX {
                g.node_elevation[id as usize] = elevation_at(k);
            }
        }
    }

    // Barriers: the ways meeting at a node not everyone may pass each get their own copy of it,
    // joined by a zero-length link open only to those who may pass.
    let barriers: Vec<(NodeId, (BikeAccess, bool))> = passages
        .iter()
        .enumerate()
        .filter_map(|(k, p)| Some((graph_id[k], (*p)?)))
        .filter(|(id, _)| *id != u32::MAX)
        .collect();
    split_at_barriers(&mut g, &barriers);

    // Turn restrictions for bicycles, as arc sequences for the turn model.
    progress.phase("applying turn restrictions", 0);
    let osm_to_graph = |osm_id: i64| {
        node_index
            .get(&osm_id)
            .map(|&k| graph_id[k])
            .filter(|&v| v != u32::MAX)
    };
    let mut turn_restrictions = Vec::new();
    report.restrictions_applied = compile_restrictions(
        &g,
        &restrictions,
        &way_index_of,
        osm_to_graph,
        &mut report.restrictions_ignored,
        &mut turn_restrictions,
    );

    // Ferries that lead nowhere in the extract (to a pier beyond its edge, clipped with whole ways)
    // are dropped: they would only stretch the graph over the water.
    drop_dead_end_ferries(&mut g);

    // Drop small islands.
    progress.phase("removing disconnected islands", 0);
    let usable_edges = (0..g.edge_count())
        .filter(|&e| {
            [2 * e, 2 * e + 1]
                .iter()
                .any(|&a| g.arc_attrs[a].bike() != BikeAccess::No || g.arc_attrs[a].foot())
        })
        .count();
    let (kept, dropped_components, dropped_nodes) = keep_components(&g, input.min_component_nodes);
    report.dropped_components = dropped_components;
    report.dropped_nodes = dropped_nodes;
    g = compact(g, &kept, &turn_restrictions);
    // Ferry crossing times, shared among each ferry's edges by length.
    let mut way_length = vec![0.0f64; g.way_count()];
    for e in 0..g.edge_count() {
        way_length[g.edge_way[e] as usize] += g.edge_length_m[e] as f64;
    }
    let way_duration: HashMap<u32, f64> = ways
        .iter()
        .filter_map(|w| Some((way_index_of[&w.id], w.duration_s?)))
        .collect();
    g.edge_duration_s = (0..g.edge_count())
        .map(|e| {
            let w = g.edge_way[e];
            match way_duration.get(&w) {
                Some(d) if way_length[w as usize] > 0.0 => {
                    (d * g.edge_length_m[e] as f64 / way_length[w as usize]) as f32
                }
                _ => 0.0,
            }
        })
        .collect();

    // Bicycle parking.
    for n in &raw_nodes {
        if osm::is_parking_node(&n.tags) {
            g.parking
                .push(parking_of(n.id, n.lon, n.lat, &n.tags, false));
        }
    }
    for w in &parking_ways {
        let pts: Vec<&RawNode> = w
            .refs
            .iter()
            .filter_map(|r| node_index.get(r).map(|&k| &raw_nodes[k]))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let lon = pts.iter().map(|n| n.lon as i64).sum::<i64>() / pts.len() as i64;
        let lat = pts.iter().map(|n| n.lat as i64).sum::<i64>() / pts.len() as i64;
        g.parking
            .push(parking_of(w.id, lon as i32, lat as i32, &w.tags, true));
    }
    report.parking = g.parking.len();

    g.string_first = strings.first;
    g.string_bytes = strings.bytes;
    g.route_set_first = route_set_first;
    g.route_set_names = route_set_names;

    if g.edge_count() == 0 {
        return Err(if usable_edges == 0 {
            "the extract has no street a bicycle or pedestrian may use between two of its nodes"
                .into()
        } else {
            "the extract has no connected street network left after removing islands".into()
        });
    }

    // Coverage.
    let all_polygons: Vec<Vec<Vec<[f64; 2]>>> = input
        .areas
        .iter()
        .flat_map(|a| a.polygons.iter().cloned())
        .collect();
    let step = (g.node_count() / 2000).max(1);
    let sampled = (0..g.node_count()).step_by(step).count();
    let inside = (0..g.node_count())
        .step_by(step)
        .filter(|&v| {
            let [lon, lat] = g.node_lon_lat(v as NodeId);
            multipolygon_contains(&all_polygons, lon, lat)
        })
        .count();
    report.nodes_inside_coverage = inside * step;
    if inside == 0 {
        return Err(format!(
            "the extract lies outside {}'s coverage polygon (none of {sampled} sampled nodes is inside)",
            input.city.name
        ));
    }

    g.city = Some(CityInfo {
        id: input.city_id.clone(),
        name: input.city.name.clone(),
        timezone: input.city.timezone.clone(),
        has_lighting_data: input.city.has_lighting_data,
        elevation_known: input.dem.is_some(),
        areas: input.areas.clone(),
        drives_on_left: input.city.drives_on_left,
        sources: input.sources.clone(),
    });

    report.nodes = g.node_count();
    report.edges = g.edge_count();
    report.arcs = g.arc_count();
    for (a, attrs) in g.arc_attrs.iter().enumerate() {
        if attrs.bike() != BikeAccess::No {
            report.bike_arcs += 1;
            report.km_per_class[attrs.safety_class() as usize] +=
                g.edge_length_m[a / 2] as f64 / 1000.0;
        }
        if attrs.foot() {
            report.foot_arcs += 1;
        }
    }
    g.validate()?;
    Ok((g, report))
}

fn file_name(p: &std::path::Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
}

fn parking_of(osm_id: i64, lon: i32, lat: i32, tags: &Tags, is_way: bool) -> BikeParking {
    BikeParking {
        osm_id,
        lon,
        lat,
        capacity: tag(tags, "capacity")
            .and_then(|c| c.trim().parse().ok())
            .unwrap_or(0),
        covered: match tag(tags, "covered") {
            Some("yes") => 1,
            Some("no") => 2,
            _ => 0,
        },
        is_way: is_way as u8,
        _pad: [0; 2],
    }
}

/// Closes ferry edges with an end no other usable edge reaches, repeatedly (a ferry split into
/// several edges is peeled from its loose end).
fn drop_dead_end_ferries(g: &mut CityGraph) {
    let usable = |g: &CityGraph, e: usize| {
        [2 * e, 2 * e + 1]
            .iter()
            .any(|&a| g.arc_attrs[a].bike() != BikeAccess::No || g.arc_attrs[a].foot())
    };
    let ferry =
        |g: &CityGraph, e: usize| g.way_flags[g.edge_way[e] as usize] & way_flags::FERRY != 0;
    let mut degree = vec![0u32; g.node_count()];
    for e in 0..g.edge_count() {
        if usable(g, e) {
            degree[g.edge_tail[e] as usize] += 1;
            degree[g.edge_head[e] as usize] += 1;
        }
    }
    loop {
        let mut changed = false;
        for e in 0..g.edge_count() {
            let (t, h) = (g.edge_tail[e] as usize, g.edge_head[e] as usize);
            if ferry(g, e) && usable(g, e) && (degree[t] <= 1 || degree[h] <= 1) {
                let closed = ArcAttrs::new(SafetyClass::Quiet, BikeAccess::No, false);
                g.arc_attrs[2 * e] = closed;
                g.arc_attrs[2 * e + 1] = closed;
                degree[t] -= 1;
                degree[h] -= 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// Gives each edge at a barrier node after the first its own copy of the node, and joins each copy
/// to the node by a zero-length link that carries only what may pass the barrier (no link when
/// nothing may). Routes then reach the barrier from either side but cross it only where allowed,
/// and the engine needs no notion of node access.
fn split_at_barriers(g: &mut CityGraph, barriers: &[(NodeId, (BikeAccess, bool))]) {
    let index: HashMap<NodeId, usize> = barriers
        .iter()
        .enumerate()
        .map(|(i, (v, _))| (*v, i))
        .collect();
    let mut leaving: Vec<Vec<u32>> = vec![Vec::new(); barriers.len()];
    for e in 0..g.edge_count() {
        if let Some(&i) = index.get(&g.edge_tail[e]) {
            leaving[i].push(2 * e as u32);
        }
        if let Some(&i) = index.get(&g.edge_head[e]) {
            leaving[i].push(2 * e as u32 + 1);
        }
    }
    for (&(v, (bike, foot)), arcs) in barriers.iter().zip(&leaving) {
        let vi = v as usize;
        for &a in arcs.iter().skip(1) {
            let copy = g.node_lon.len() as NodeId;
            g.node_lon.push(g.node_lon[vi]);
            g.node_lat.push(g.node_lat[vi]);
            g.node_osm_id.push(g.node_osm_id[vi]);
            g.node_control.push(g.node_control[vi]);
            g.node_elevation.push(g.node_elevation[vi]);
            let e = (a >> 1) as usize;
            if a & 1 == 0 {
                g.edge_tail[e] = copy;
            } else {
                g.edge_head[e] = copy;
            }
            if bike == BikeAccess::No && !foot {
                continue;
            }
            let class = if bike == BikeAccess::Push {
                SafetyClass::Shared
            } else {
                SafetyClass::Quiet
            };
            let bearing = g.arc_bearing_start(a);
            g.edge_tail.push(v);
            g.edge_head.push(copy);
            g.edge_way.push(g.edge_way[e]);
            g.edge_length_m.push(0.01);
            g.edge_climb_fwd_m.push(0.0);
            g.edge_climb_bwd_m.push(0.0);
            g.edge_bearing_start.push(bearing);
            g.edge_bearing_end.push(bearing);
            g.edge_geom_first.push(g.geom_lon.len() as u32);
            g.arc_attrs.push(ArcAttrs::new(class, bike, foot));
            g.arc_attrs.push(ArcAttrs::new(class, bike, foot));
        }
    }
}

/// Compiles the restrictions into arc sequences for the engine's turn model
/// (`quietway_engine::turns`): one per from-arc and to-arc a restriction names, with the via way's
/// arcs between them for a via-way restriction. Returns how many restrictions were applied.
fn compile_restrictions(
    g: &CityGraph,
    restrictions: &[Restriction],
    way_index_of: &HashMap<i64, u32>,
    osm_to_graph: impl Fn(i64) -> Option<NodeId>,
    ignored: &mut usize,
    out: &mut Vec<TurnRestriction>,
) -> usize {
    let n = g.node_count();
    let mut out_arcs: Vec<Vec<u32>> = vec![Vec::new(); n];
    for e in 0..g.edge_count() {
        out_arcs[g.edge_tail[e] as usize].push(2 * e as u32);
        out_arcs[g.edge_head[e] as usize].push(2 * e as u32 + 1);
    }
    // The edges of each way, in edge order: a via-way restriction starts only from its from-ways'.
    let mut edges_of_way: Vec<Vec<u32>> = vec![Vec::new(); g.way_count()];
    for (e, &w) in g.edge_way.iter().enumerate() {
        edges_of_way[w as usize].push(e as u32);
    }
    let rides = |a: u32| g.arc_attrs[a as usize].bike() != BikeAccess::No;
    let ways_of = |ids: &[i64]| -> Option<Vec<u32>> {
        ids.iter().map(|id| way_index_of.get(id).copied()).collect()
    };
    let mut applied = 0;
    for r in restrictions {
        let (Some(from_ways), Some(to_ways), Some(via_ways)) = (
            ways_of(&r.from_ways),
            ways_of(&r.to_ways),
            ways_of(&r.via_ways),
        ) else {
            *ignored += 1; // a member outside the extract or not routable
            continue;
        };
        let before = out.len();
        match r.via_node {
            Some(via) => {
                let Some(v) = osm_to_graph(via) else {
                    *ignored += 1;
                    continue;
                };
                let to_arcs: Vec<u32> = out_arcs[v as usize]
                    .iter()
                    .copied()
                    .filter(|&a| to_ways.contains(&g.arc_way(a)))
                    .collect();
                for &a in out_arcs[v as usize]
                    .iter()
                    .map(|a| a ^ 1)
                    .collect::<Vec<_>>()
                    .iter()
                {
                    if !from_ways.contains(&g.arc_way(a)) || !rides(a) {
                        continue;
                    }
                    for t in pick_turn_arcs(g, a, &to_arcs, &r.turn) {
                        out.push(TurnRestriction {
                            arcs: vec![a, t],
                            only: r.only,
                        });
                    }
                }
            }
            None => {
                // Via ways: from every arc of a from-way that arrives on the via ways, the shortest
                // run along the via ways to a junction where a to-way leaves.
                let on_via = |a: u32| via_ways.contains(&g.arc_way(a));
                let mut from_edges: Vec<u32> = from_ways
                    .iter()
                    .flat_map(|&w| edges_of_way[w as usize].iter().copied())
                    .collect();
                from_edges.sort_unstable();
                from_edges.dedup();
                for e in from_edges {
                    for a in [2 * e, 2 * e + 1] {
                        if !from_ways.contains(&g.arc_way(a)) || !rides(a) {
                            continue;
                        }
                        let start = g.arc_head(a);
                        if !out_arcs[start as usize].iter().any(|&b| on_via(b)) {
                            continue;
                        }
                        // Breadth-first along the via ways.
                        let mut prev: HashMap<NodeId, u32> = HashMap::new();
                        let mut queue = std::collections::VecDeque::from([start]);
                        let mut seen: HashSet<NodeId> = HashSet::from([start]);
                        let mut ends: Vec<NodeId> = Vec::new();
                        while let Some(x) = queue.pop_front() {
                            if x != start
                                && out_arcs[x as usize]
                                    .iter()
                                    .any(|&b| to_ways.contains(&g.arc_way(b)) && !on_via(b))
                            {
                                ends.push(x);
                                continue;
                            }
                            for &b in &out_arcs[x as usize] {
                                let y = g.arc_head(b);
                                if on_via(b) && rides(b) && seen.insert(y) {
                                    prev.insert(y, b);
                                    queue.push_back(y);
                                }
                            }
                        }
                        for end in ends {
                            let mut via_arcs = Vec::new();
                            let mut x = end;
                            while x != start {
                                let b = prev[&x];
                                via_arcs.push(b);
                                x = g.arc_tail(b);
                            }
                            via_arcs.reverse();
                            let to_arcs: Vec<u32> = out_arcs[end as usize]
                                .iter()
                                .copied()
                                .filter(|&b| to_ways.contains(&g.arc_way(b)) && !on_via(b))
                                .collect();
                            // The named turn (a U-turn, mostly) is the whole manoeuvre's: measured
                            // from the from-arc, not the last via arc.
                            for t in pick_turn_arcs(g, a, &to_arcs, &r.turn) {
                                let mut arcs = vec![a];
                                arcs.extend_from_slice(&via_arcs);
                                arcs.push(t);
                                out.push(TurnRestriction { arcs, only: r.only });
                            }
                        }
                    }
                }
            }
        }
        if out.len() > before {
            applied += 1;
        } else {
            *ignored += 1;
        }
    }
    applied
}

/// The arcs a restriction's to-way means from one incoming arc. When the to-way passes through the via
/// node (two candidate arcs), the named turn picks the arc whose turn angle fits it best.
fn pick_turn_arcs(g: &CityGraph, a_in: u32, to_arcs: &[u32], turn: &str) -> Vec<u32> {
    let candidates: Vec<u32> = to_arcs
        .iter()
        .copied()
        .filter(|&a| a != (a_in ^ 1) || turn == "u")
        .collect();
    let ideal = match turn {
        "left" => 270.0,
        "right" => 90.0,
        "straight_on" => 0.0,
        "u" => 180.0,
        _ => return candidates,
    };
    if candidates.len() <= 1 {
        return candidates;
    }
    let angle_off = |a: u32| {
        let delta =
            (g.arc_bearing_start(a) as f64 - g.arc_bearing_end(a_in) as f64).rem_euclid(360.0);
        let d = (delta - ideal).abs();
        d.min(360.0 - d)
    };
    let best = candidates
        .iter()
        .copied()
        .min_by(|&x, &y| angle_off(x).total_cmp(&angle_off(y)))
        .unwrap();
    vec![best]
}

/// Weakly connected components; returns the keep-mask, dropped components and nodes.
fn keep_components(g: &CityGraph, min_nodes: usize) -> (Vec<bool>, usize, usize) {
    let n = g.node_count();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn find(p: &mut [u32], mut x: u32) -> u32 {
        while p[x as usize] != x {
            p[x as usize] = p[p[x as usize] as usize];
            x = p[x as usize];
        }
        x
    }
    for e in 0..g.edge_count() {
        let usable = [2 * e, 2 * e + 1]
            .iter()
            .any(|&a| g.arc_attrs[a].bike() != BikeAccess::No || g.arc_attrs[a].foot());
        if !usable {
            continue;
        }
        let (a, b) = (
            find(&mut parent, g.edge_tail[e]),
            find(&mut parent, g.edge_head[e]),
        );
        if a != b {
            parent[a as usize] = b;
        }
    }
    let mut size: HashMap<u32, usize> = HashMap::new();
    for v in 0..n as u32 {
        *size.entry(find(&mut parent, v)).or_default() += 1;
    }
    // The largest network is always kept: a small map (a ring, a few streets) is the whole
    // network, not an island of it. Single nodes with no usable edge never count.
    let usable_size = |s: usize| s > 1;
    let largest = size
        .iter()
        .filter(|(_, s)| usable_size(**s))
        .max_by_key(|(r, s)| (**s, std::cmp::Reverse(**r)))
        .map(|(r, _)| *r);
    let min_for = |r: u32, s: usize| {
        if Some(r) == largest { s } else { min_nodes }
    };
    let mut keep = vec![false; n];
    let (mut dropped_c, mut dropped_n) = (0, 0);
    for (&r, &s) in &size {
        if s < min_for(r, s) {
            dropped_c += 1;
            dropped_n += s;
        }
    }
    for v in 0..n as u32 {
        let r = find(&mut parent, v);
        keep[v as usize] = size[&r] >= min_for(r, size[&r]);
    }
    (keep, dropped_c, dropped_n)
}

/// Removes dropped nodes and their edges, renumbering densely.
fn compact(g: CityGraph, keep: &[bool], restrictions: &[TurnRestriction]) -> CityGraph {
    let mut new_id = vec![u32::MAX; g.node_count()];
    let mut new_edge = vec![u32::MAX; g.edge_count()];
    let mut out = CityGraph {
        city: g.city.clone(),
        ..Default::default()
    };
    for v in 0..g.node_count() {
        if keep[v] {
            new_id[v] = out.node_lon.len() as u32;
            out.node_lon.push(g.node_lon[v]);
            out.node_lat.push(g.node_lat[v]);
            out.node_elevation.push(g.node_elevation[v]);
            out.node_osm_id.push(g.node_osm_id[v]);
            out.node_control.push(g.node_control[v]);
        }
    }
    out.edge_geom_first.push(0);
    #[allow(clippy::needless_range_loop)] // e indexes the edge arrays and new_edge alike
    for e in 0..g.edge_count() {
        let (t, h) = (g.edge_tail[e] as usize, g.edge_head[e] as usize);
        let usable = g.arc_attrs[2 * e].bike() != BikeAccess::No
            || g.arc_attrs[2 * e + 1].bike() != BikeAccess::No
            || g.arc_attrs[2 * e].foot()
            || g.arc_attrs[2 * e + 1].foot();
        if !keep[t] || !keep[h] || !usable {
            continue;
        }
        new_edge[e] = out.edge_tail.len() as u32;
        out.edge_tail.push(new_id[t]);
        out.edge_head.push(new_id[h]);
        out.edge_way.push(g.edge_way[e]);
        out.edge_length_m.push(g.edge_length_m[e]);
        out.edge_climb_fwd_m.push(g.edge_climb_fwd_m[e]);
        out.edge_climb_bwd_m.push(g.edge_climb_bwd_m[e]);
        out.edge_bearing_start.push(g.edge_bearing_start[e]);
        out.edge_bearing_end.push(g.edge_bearing_end[e]);
        let (a, b) = (
            g.edge_geom_first[e] as usize,
            g.edge_geom_first[e + 1] as usize,
        );
        out.geom_lon.extend_from_slice(&g.geom_lon[a..b]);
        out.geom_lat.extend_from_slice(&g.geom_lat[a..b]);
        out.edge_geom_first.push(out.geom_lon.len() as u32);
        out.arc_attrs.push(g.arc_attrs[2 * e]);
        out.arc_attrs.push(g.arc_attrs[2 * e + 1]);
    }
    // Restrictions whose arcs all remain, renumbered.
    out.restriction_first.push(0);
    for r in restrictions {
        let arcs: Option<Vec<u32>> = r
            .arcs
            .iter()
            .map(|&a| {
                let e = new_edge[(a >> 1) as usize];
                (e != u32::MAX).then_some(2 * e + (a & 1))
            })
            .collect();
        if let Some(arcs) = arcs {
            out.restriction_arcs.extend(arcs);
            out.restriction_only.push(u8::from(r.only));
            out.restriction_first
                .push(out.restriction_arcs.len() as u32);
        }
    }
    out.way_osm_id = g.way_osm_id;
    out.way_name = g.way_name;
    out.way_ref = g.way_ref;
    out.way_flags = g.way_flags;
    out.way_route_set = g.way_route_set;
    out
}
