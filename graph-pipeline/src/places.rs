//! The place index written beside a city graph (`<city>.places.ndjson`): named streets (the ways of
//! one street grouped into one entry), named points of interest and places (`place=*`), each with
//! its alternative names (`alt_name`, `official_name`, `short_name`, `loc_name`), a position, an
//! address where tagged and an importance. The server indexes it for place search (the `local`
//! provider). It reads the extracts on its own, in three short passes (named ways and areas; the
//! outer ways of named multipolygons; the nodes), so it stays apart from the routing graph build.

use crate::osm::{self, MemberKind, RawNode, RawRelation, RawWay, Tags, tag};
use crate::progress::Progress;
use osmpbf::{BlobDecode, BlobReader, Element};
use quietway_engine::geo::{LonLat, haversine_m, multipolygon_contains};
use quietway_engine::graph::{CoverageArea, from_fixed};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Written in the file's first line; the server refuses a version it does not know.
pub const FORMAT_VERSION: u32 = 1;

/// Tags whose values are the other names people search a feature by.
const ALT_NAME_KEYS: [&str; 4] = ["alt_name", "official_name", "short_name", "loc_name"];

/// Keys that make a named feature a point of interest, in the order that names its category.
const POI_KEYS: [&str; 14] = [
    "railway",
    "public_transport",
    "amenity",
    "shop",
    "tourism",
    "leisure",
    "historic",
    "office",
    "craft",
    "aeroway",
    "natural",
    "waterway",
    "man_made",
    "building",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PlaceKind {
    Street,
    Poi,
    Place,
}

#[derive(Clone, Debug, Serialize)]
pub struct PlaceEntry {
    /// The OSM element: `n<id>`, `w<id>` (a street: its longest way) or `r<id>`.
    pub id: String,
    pub kind: PlaceKind,
    pub name: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alt_names: Vec<String>,
    /// The tag that says what it is, e.g. `highway=cycleway`, `amenity=cafe`, `place=suburb`.
    pub category: String,
    pub lon: f64,
    pub lat: f64,
    /// `addr:housenumber addr:street`, when tagged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// `addr:city`, else the city's name when inside its coverage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locality: Option<String>,
    /// The nearest neighbourhood or suburb (`place=*` node) within `DISTRICT_RADIUS_M`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub district: Option<String>,
    /// 0–1: how likely a rider means this one among equal text matches (a street's length, a
    /// place's rank, a point of interest with a Wikidata entry).
    pub importance: f64,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct PlaceReport {
    pub streets: usize,
    pub pois: usize,
    pub places: usize,
}

impl PlaceReport {
    pub fn total(&self) -> usize {
        self.streets + self.pois + self.places
    }
}

fn has_name(tags: &Tags) -> bool {
    tag(tags, "name").is_some_and(|n| !n.trim().is_empty())
}

fn alt_names(tags: &Tags, name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for key in ALT_NAME_KEYS {
        for v in tag(tags, key).unwrap_or("").split(';') {
            let v = v.trim();
            if !v.is_empty() && v != name && !out.iter().any(|o| o == v) {
                out.push(v.to_string());
            }
        }
    }
    out
}

/// A named way or node that is a street (not a platform or a stop).
fn street_category(tags: &Tags) -> Option<String> {
    let h = tag(tags, "highway")?;
    if matches!(
        h,
        "platform" | "bus_stop" | "elevator" | "street_lamp" | "proposed" | "construction"
    ) {
        return None;
    }
    Some(format!("highway={h}"))
}

fn poi_category(tags: &Tags) -> Option<String> {
    for key in POI_KEYS {
        if let Some(v) = tag(tags, key) {
            if v == "no" {
                continue;
            }
            if key == "railway" && !matches!(v, "station" | "halt" | "tram_stop") {
                continue;
            }
            if key == "public_transport" && v != "station" {
                continue;
            }
            return Some(format!("{key}={v}"));
        }
    }
    None
}

fn place_category(tags: &Tags) -> Option<String> {
    tag(tags, "place").map(|v| format!("place={v}"))
}

fn address(tags: &Tags) -> Option<String> {
    let street = tag(tags, "addr:street")?;
    Some(match tag(tags, "addr:housenumber") {
        Some(n) => format!("{n} {street}"),
        None => street.to_string(),
    })
}

fn place_importance(category: &str) -> f64 {
    match category.trim_start_matches("place=") {
        "city" | "town" => 1.0,
        "borough" | "suburb" => 0.8,
        "neighbourhood" | "quarter" => 0.65,
        "village" | "hamlet" | "locality" => 0.5,
        "square" => 0.5,
        _ => 0.4,
    }
}

fn poi_importance(tags: &Tags, category: &str) -> f64 {
    let mut i: f64 = 0.2;
    if tag(tags, "wikidata").is_some() || tag(tags, "wikipedia").is_some() {
        i += 0.3;
    }
    if category.starts_with("railway=") || category.starts_with("public_transport=") {
        i += 0.15;
    }
    if category == "leisure=park" || category.starts_with("tourism=") {
        i += 0.1;
    }
    i.min(1.0)
}

fn street_importance(category: &str, length_m: f64, wikidata: bool) -> f64 {
    let class = match category.trim_start_matches("highway=") {
        "trunk" | "primary" => 0.15,
        "secondary" | "tertiary" => 0.1,
        "cycleway" => 0.12,
        "residential" | "living_street" | "unclassified" => 0.05,
        _ => 0.0,
    };
    let length = 0.35 * (length_m / 5000.0).min(1.0);
    let wiki = if wikidata { 0.15 } else { 0.0 };
    (0.25 + class + length + wiki).min(1.0)
}

/// What one pass keeps of an extract.
#[derive(Default)]
struct Kept {
    nodes: Vec<RawNode>,
    ways: Vec<RawWay>,
    relations: Vec<RawRelation>,
}

/// Keeps the elements the predicates accept (`(id, has a name)`); tags are copied only for those.
fn scan(
    path: &Path,
    progress: &Progress,
    keep_node: &(dyn Fn(i64, bool) -> bool + Sync),
    keep_way: &(dyn Fn(i64, bool) -> bool + Sync),
    keep_relation: &(dyn Fn(i64, bool) -> bool + Sync),
) -> Result<Kept, String> {
    let owned = |it: &mut dyn Iterator<Item = (&str, &str)>| -> Tags {
        it.map(|(k, v)| (k.to_string(), v.to_string())).collect()
    };
    let named = |it: &mut dyn Iterator<Item = (&str, &str)>| {
        for (k, _) in it {
            if k == "name" {
                return true;
            }
        }
        false
    };
    let mut kept = match osm::detect_format(path)? {
        osm::Format::Pbf => {
            let reader =
                BlobReader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let parts: Result<Vec<Kept>, String> = reader
                .par_bridge()
                .map(|blob| {
                    let err = |e: osmpbf::Error| {
                        format!("{}: not a readable OSM PBF file ({e})", path.display())
                    };
                    let blob = blob.map_err(err)?;
                    let mut k = Kept::default();
                    if let BlobDecode::OsmData(block) = blob.decode().map_err(err)? {
                        block.for_each_element(|el| match el {
                            Element::DenseNode(n) => {
                                if keep_node(n.id(), named(&mut n.tags())) {
                                    k.nodes.push(RawNode {
                                        id: n.id(),
                                        version: n.info().map(|i| i.version()).unwrap_or(0),
                                        lon: n.decimicro_lon(),
                                        lat: n.decimicro_lat(),
                                        tags: owned(&mut n.tags()),
                                    });
                                }
                            }
                            Element::Node(n) => {
                                if keep_node(n.id(), named(&mut n.tags())) {
                                    k.nodes.push(RawNode {
                                        id: n.id(),
                                        version: n.info().version().unwrap_or(0),
                                        lon: n.decimicro_lon(),
                                        lat: n.decimicro_lat(),
                                        tags: owned(&mut n.tags()),
                                    });
                                }
                            }
                            Element::Way(w) => {
                                if keep_way(w.id(), named(&mut w.tags())) {
                                    k.ways.push(RawWay {
                                        id: w.id(),
                                        version: w.info().version().unwrap_or(0),
                                        refs: w.refs().collect(),
                                        tags: owned(&mut w.tags()),
                                    });
                                }
                            }
                            Element::Relation(r) => {
                                if keep_relation(r.id(), named(&mut r.tags())) {
                                    let members = r
                                        .members()
                                        .map(|m| {
                                            let kind = match m.member_type {
                                                osmpbf::RelMemberType::Node => MemberKind::Node,
                                                osmpbf::RelMemberType::Way => MemberKind::Way,
                                                osmpbf::RelMemberType::Relation => {
                                                    MemberKind::Relation
                                                }
                                            };
                                            (kind, m.member_id, m.role().unwrap_or("").to_string())
                                        })
                                        .collect();
                                    k.relations.push(RawRelation {
                                        id: r.id(),
                                        version: r.info().version().unwrap_or(0),
                                        members,
                                        tags: owned(&mut r.tags()),
                                    });
                                }
                            }
                        });
                    }
                    Ok(k)
                })
                .collect();
            let mut all = Kept::default();
            for k in parts? {
                all.nodes.extend(k.nodes);
                all.ways.extend(k.ways);
                all.relations.extend(k.relations);
            }
            all
        }
        _ => {
            let mut k = Kept::default();
            osm::read_xml(path, progress, &mut |e| match e {
                osm::XmlEntity::Node(n) => {
                    if keep_node(n.id, has_name(&n.tags)) {
                        k.nodes.push(n)
                    }
                }
                osm::XmlEntity::Way(w) => {
                    if keep_way(w.id, has_name(&w.tags)) {
                        k.ways.push(w)
                    }
                }
                osm::XmlEntity::Relation(r) => {
                    if keep_relation(r.id, has_name(&r.tags)) {
                        k.relations.push(r)
                    }
                }
            })?;
            k
        }
    };
    osm::newest(&mut kept.nodes, |n| (n.id, n.version));
    osm::newest(&mut kept.ways, |w| (w.id, w.version));
    osm::newest(&mut kept.relations, |r| (r.id, r.version));
    Ok(kept)
}

/// Reads every extract once per pass and merges (the newest version of an element wins).
fn scan_all(
    files: &[PathBuf],
    progress: &Progress,
    keep_node: &(dyn Fn(i64, bool) -> bool + Sync),
    keep_way: &(dyn Fn(i64, bool) -> bool + Sync),
    keep_relation: &(dyn Fn(i64, bool) -> bool + Sync),
) -> Result<Kept, String> {
    let mut all = Kept::default();
    for f in files {
        let k = scan(f, progress, keep_node, keep_way, keep_relation)?;
        all.nodes.extend(k.nodes);
        all.ways.extend(k.ways);
        all.relations.extend(k.relations);
    }
    osm::newest(&mut all.nodes, |n| (n.id, n.version));
    osm::newest(&mut all.ways, |w| (w.id, w.version));
    osm::newest(&mut all.relations, |r| (r.id, r.version));
    Ok(all)
}

fn is_wanted_way(tags: &Tags) -> bool {
    street_category(tags).is_some()
        || poi_category(tags).is_some()
        || place_category(tags).is_some()
}

fn is_wanted_area_relation(tags: &Tags) -> bool {
    matches!(tag(tags, "type"), Some("multipolygon"))
        && (poi_category(tags).is_some() || place_category(tags).is_some())
}

fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

fn round3(v: f64) -> f64 {
    (v * 1e3).round() / 1e3
}

/// How far a neighbourhood's node may be from a feature it names.
const DISTRICT_RADIUS_M: f64 = 2000.0;

/// Sets each entry's district: the nearest neighbourhood-like place within `DISTRICT_RADIUS_M`.
fn assign_districts(entries: &mut [PlaceEntry]) {
    let districts: Vec<(LonLat, String)> = entries
        .iter()
        .filter(|e| {
            e.kind == PlaceKind::Place
                && matches!(
                    e.category.as_str(),
                    "place=neighbourhood" | "place=suburb" | "place=quarter" | "place=borough"
                )
        })
        .map(|e| (LonLat::new(e.lon, e.lat), e.name.clone()))
        .collect();
    entries.par_iter_mut().for_each(|e| {
        if e.kind == PlaceKind::Place {
            return;
        }
        let p = LonLat::new(e.lon, e.lat);
        e.district = districts
            .iter()
            .map(|(q, name)| (haversine_m(p, *q), name))
            .filter(|(d, _)| *d <= DISTRICT_RADIUS_M)
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, n)| n.clone());
    });
}

/// Builds the entries of a city's place index from its extracts.
pub fn build_places(
    files: &[PathBuf],
    city_name: &str,
    areas: &[CoverageArea],
    progress: &Progress,
) -> Result<Vec<PlaceEntry>, String> {
    // Pass 1: named ways (streets, areas) and named multipolygons.
    progress.phase("place index: reading named ways and areas", 0);
    let pass1 = scan_all(
        files,
        progress,
        &|_, _| false,
        &|_, named| named,
        &|_, named| named,
    )?;
    let ways: Vec<RawWay> = pass1
        .ways
        .into_iter()
        .filter(|w| w.refs.len() >= 2 && is_wanted_way(&w.tags))
        .collect();
    let relations: Vec<RawRelation> = pass1
        .relations
        .into_iter()
        .filter(|r| is_wanted_area_relation(&r.tags))
        .collect();

    // Pass 2: the outer ways of those multipolygons (usually untagged).
    let have: HashSet<i64> = ways.iter().map(|w| w.id).collect();
    let member_ids: HashSet<i64> = relations
        .iter()
        .flat_map(|r| r.members.iter())
        .filter(|(k, id, role)| {
            *k == MemberKind::Way && (role == "outer" || role.is_empty()) && !have.contains(id)
        })
        .map(|(_, id, _)| *id)
        .collect();
    let mut member_refs: HashMap<i64, Vec<i64>> = HashMap::new();
    if !member_ids.is_empty() {
        progress.phase("place index: reading area outlines", 0);
        let pass2 = scan_all(
            files,
            progress,
            &|_, _| false,
            &|id, _| member_ids.contains(&id),
            &|_, _| false,
        )?;
        member_refs.extend(pass2.ways.into_iter().map(|w| (w.id, w.refs)));
    }
    for w in &ways {
        member_refs.insert(w.id, w.refs.clone());
    }

    // Pass 3: named nodes, and the positions of every node the ways above use.
    let mut wanted_nodes: HashSet<i64> = HashSet::new();
    for refs in member_refs.values() {
        wanted_nodes.extend(refs.iter().copied());
    }
    progress.phase("place index: reading nodes", 0);
    let pass3 = scan_all(
        files,
        progress,
        &|id, named| named || wanted_nodes.contains(&id),
        &|_, _| false,
        &|_, _| false,
    )?;
    let position: HashMap<i64, LonLat> = pass3
        .nodes
        .iter()
        .map(|n| (n.id, LonLat::new(from_fixed(n.lon), from_fixed(n.lat))))
        .collect();

    progress.phase("place index: grouping streets", 0);
    // Points cluster: the coverage test is cached per cell of about 50 m.
    let inside_cache: std::sync::Mutex<HashMap<(i32, i32), bool>> = Default::default();
    let locality_of = |tags: &Tags, p: LonLat| -> Option<String> {
        if let Some(c) = tag(tags, "addr:city") {
            return Some(c.to_string());
        }
        let cell = ((p.lon * 2000.0) as i32, (p.lat * 2000.0) as i32);
        let cached = inside_cache.lock().unwrap().get(&cell).copied();
        let inside = cached.unwrap_or_else(|| {
            let inside = areas
                .iter()
                .any(|a| multipolygon_contains(&a.polygons, p.lon, p.lat));
            inside_cache.lock().unwrap().insert(cell, inside);
            inside
        });
        inside.then(|| city_name.to_string())
    };
    let mut entries: Vec<PlaceEntry> = Vec::new();
    let entry = |id: String, kind, tags: &Tags, category: String, p: LonLat, importance| {
        let name = tag(tags, "name").unwrap_or("").trim().to_string();
        PlaceEntry {
            id,
            kind,
            alt_names: alt_names(tags, &name),
            name,
            category,
            lon: round6(p.lon),
            lat: round6(p.lat),
            address: address(tags),
            locality: locality_of(tags, p),
            district: None,
            importance: round3(importance),
        }
    };

    // Named nodes: places first, then points of interest.
    for n in pass3.nodes.iter().filter(|n| has_name(&n.tags)) {
        let p = LonLat::new(from_fixed(n.lon), from_fixed(n.lat));
        if let Some(c) = place_category(&n.tags) {
            let imp = place_importance(&c);
            entries.push(entry(
                format!("n{}", n.id),
                PlaceKind::Place,
                &n.tags,
                c,
                p,
                imp,
            ));
        } else if let Some(c) = poi_category(&n.tags) {
            let imp = poi_importance(&n.tags, &c);
            entries.push(entry(
                format!("n{}", n.id),
                PlaceKind::Poi,
                &n.tags,
                c,
                p,
                imp,
            ));
        }
    }

    // Areas (closed ways and multipolygons that are points of interest or places): their centre.
    let centre = |refs: &[i64]| -> Option<LonLat> {
        let pts: Vec<LonLat> = refs
            .iter()
            .filter_map(|r| position.get(r).copied())
            .collect();
        if pts.is_empty() {
            return None;
        }
        let n = pts.len() as f64;
        Some(LonLat::new(
            pts.iter().map(|p| p.lon).sum::<f64>() / n,
            pts.iter().map(|p| p.lat).sum::<f64>() / n,
        ))
    };
    for w in &ways {
        if street_category(&w.tags).is_some() {
            continue;
        }
        let Some(p) = centre(&w.refs) else { continue };
        if let Some(c) = place_category(&w.tags) {
            let imp = place_importance(&c);
            entries.push(entry(
                format!("w{}", w.id),
                PlaceKind::Place,
                &w.tags,
                c,
                p,
                imp,
            ));
        } else if let Some(c) = poi_category(&w.tags) {
            let imp = poi_importance(&w.tags, &c);
            entries.push(entry(
                format!("w{}", w.id),
                PlaceKind::Poi,
                &w.tags,
                c,
                p,
                imp,
            ));
        }
    }
    for r in &relations {
        let refs: Vec<i64> = r
            .members
            .iter()
            .filter(|(k, _, role)| *k == MemberKind::Way && (role == "outer" || role.is_empty()))
            .filter_map(|(_, id, _)| member_refs.get(id))
            .flatten()
            .copied()
            .collect();
        let Some(p) = centre(&refs) else { continue };
        if let Some(c) = place_category(&r.tags) {
            let imp = place_importance(&c);
            entries.push(entry(
                format!("r{}", r.id),
                PlaceKind::Place,
                &r.tags,
                c,
                p,
                imp,
            ));
        } else if let Some(c) = poi_category(&r.tags) {
            let imp = poi_importance(&r.tags, &c) + 0.1;
            entries.push(entry(
                format!("r{}", r.id),
                PlaceKind::Poi,
                &r.tags,
                c,
                p,
                imp,
            ));
        }
    }

    entries.extend(group_streets(&ways, &position, &locality_of));
    entries.sort_by(|a, b| a.id.cmp(&b.id));
    entries.dedup_by(|a, b| a.id == b.id);
    assign_districts(&mut entries);
    Ok(entries)
}

/// Two pieces of one street further apart than this are two streets of the same name.
const STREET_GAP_M: f64 = 400.0;

/// One entry per street: the named ways of one name that touch, or whose extents lie within
/// `STREET_GAP_M` of each other (the two carriageways of an avenue share no node).
fn group_streets(
    ways: &[RawWay],
    position: &HashMap<i64, LonLat>,
    locality_of: &dyn Fn(&Tags, LonLat) -> Option<String>,
) -> Vec<PlaceEntry> {
    struct Piece<'a> {
        way: &'a RawWay,
        length_m: f64,
        min: LonLat,
        max: LonLat,
    }
    let mut by_name: HashMap<&str, Vec<Piece>> = HashMap::new();
    for w in ways {
        if street_category(&w.tags).is_none() {
            continue;
        }
        let pts: Vec<LonLat> = w
            .refs
            .iter()
            .filter_map(|r| position.get(r).copied())
            .collect();
        if pts.len() < 2 {
            continue;
        }
        let length_m = pts.windows(2).map(|p| haversine_m(p[0], p[1])).sum();
        let min = LonLat::new(
            pts.iter().map(|p| p.lon).fold(f64::MAX, f64::min),
            pts.iter().map(|p| p.lat).fold(f64::MAX, f64::min),
        );
        let max = LonLat::new(
            pts.iter().map(|p| p.lon).fold(f64::MIN, f64::max),
            pts.iter().map(|p| p.lat).fold(f64::MIN, f64::max),
        );
        let name = tag(&w.tags, "name").unwrap_or("").trim();
        by_name.entry(name).or_default().push(Piece {
            way: w,
            length_m,
            min,
            max,
        });
    }
    // The gap between two extents, in metres (0 when they overlap).
    let gap = |a: &Piece, b: &Piece| -> f64 {
        let dlon = (b.min.lon - a.max.lon).max(a.min.lon - b.max.lon).max(0.0);
        let dlat = (b.min.lat - a.max.lat).max(a.min.lat - b.max.lat).max(0.0);
        let lat = (a.min.lat + a.max.lat) / 2.0;
        haversine_m(LonLat::new(0.0, lat), LonLat::new(dlon, lat + dlat))
    };
    let mut out = Vec::new();
    let mut names: Vec<&&str> = by_name.keys().collect();
    names.sort();
    for name in names {
        let pieces = &by_name[*name];
        // Union-find over the pieces of one name.
        let mut parent: Vec<usize> = (0..pieces.len()).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        let mut first_at: HashMap<i64, usize> = HashMap::new();
        for (i, p) in pieces.iter().enumerate() {
            for r in &p.way.refs {
                if let Some(&j) = first_at.get(r) {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    parent[a] = b;
                } else {
                    first_at.insert(*r, i);
                }
            }
        }
        // Pieces near each other join too; a sweep along longitude keeps this near-linear.
        let mut order: Vec<usize> = (0..pieces.len()).collect();
        order.sort_by(|&a, &b| pieces[a].min.lon.total_cmp(&pieces[b].min.lon));
        let lon_gap = STREET_GAP_M / 111_000.0 / 0.5; // generous at any latitude below 60°
        for (k, &i) in order.iter().enumerate() {
            for &j in &order[k + 1..] {
                if pieces[j].min.lon > pieces[i].max.lon + lon_gap {
                    break;
                }
                if gap(&pieces[i], &pieces[j]) <= STREET_GAP_M {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    parent[a] = b;
                }
            }
        }
        let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
        for i in 0..pieces.len() {
            groups.entry(root(&mut parent, i)).or_default().push(i);
        }
        let mut groups: Vec<Vec<usize>> = groups.into_values().collect();
        groups.sort();
        for g in groups {
            let longest = g
                .iter()
                .copied()
                .max_by(|&a, &b| {
                    pieces[a]
                        .length_m
                        .total_cmp(&pieces[b].length_m)
                        .then(pieces[b].way.id.cmp(&pieces[a].way.id))
                })
                .unwrap();
            let main = &pieces[longest];
            let length: f64 = g.iter().map(|&i| pieces[i].length_m).sum();
            let wikidata = g
                .iter()
                .any(|&i| tag(&pieces[i].way.tags, "wikidata").is_some());
            // The street's category is that of its most important piece.
            let category = street_category(&main.way.tags).unwrap_or_default();
            let mid_ref = main.way.refs[main.way.refs.len() / 2];
            let p = position.get(&mid_ref).copied().unwrap_or(main.min);
            let mut alts: Vec<String> = Vec::new();
            for &i in &g {
                for a in alt_names(&pieces[i].way.tags, name) {
                    if !alts.contains(&a) {
                        alts.push(a);
                    }
                }
            }
            out.push(PlaceEntry {
                id: format!("w{}", main.way.id),
                kind: PlaceKind::Street,
                name: name.to_string(),
                alt_names: alts,
                importance: round3(street_importance(&category, length, wikidata)),
                category,
                lon: round6(p.lon),
                lat: round6(p.lat),
                address: None,
                locality: locality_of(&main.way.tags, p),
                district: None,
            });
        }
    }
    out
}

pub fn report(entries: &[PlaceEntry]) -> PlaceReport {
    let mut r = PlaceReport::default();
    for e in entries {
        match e.kind {
            PlaceKind::Street => r.streets += 1,
            PlaceKind::Poi => r.pois += 1,
            PlaceKind::Place => r.places += 1,
        }
    }
    r
}

/// Writes the index as NDJSON: a header line, then one entry per line. Written to a temporary
/// file and renamed, so a failed build never leaves half an index beside a good graph.
pub fn write_places(
    path: &Path,
    city_id: &str,
    city_name: &str,
    entries: &[PlaceEntry],
) -> Result<(), String> {
    let tmp = path.with_extension("ndjson.tmp");
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    {
        let file = std::fs::File::create(&tmp).map_err(io)?;
        let mut out = std::io::BufWriter::new(file);
        let header = serde_json::json!({
            "format": "quietway-places", "version": FORMAT_VERSION,
            "city": city_id, "city_name": city_name, "count": entries.len(),
        });
        writeln!(out, "{header}").map_err(io)?;
        for e in entries {
            serde_json::to_writer(&mut out, e).map_err(|e| format!("{}: {e}", path.display()))?;
            out.write_all(b"\n").map_err(io)?;
        }
        out.flush().map_err(io)?;
    }
    std::fs::rename(&tmp, path).map_err(io)
}
