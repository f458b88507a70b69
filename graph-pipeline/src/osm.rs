//! Reading OSM extracts: PBF (streamed, blobs decoded in parallel) and XML (`.osm`, `.osm.bz2`).
//!
//! Two passes keep memory to what routing needs: the first keeps candidate ways and the relations
//! that matter (cycle routes, turn restrictions); the second keeps only the nodes those ways use,
//! plus bicycle-parking nodes. Nothing else is held, so a 200 MB extract never puts the planet's
//! worth of nodes in memory.

use crate::progress::Progress;
use osmpbf::{BlobDecode, BlobReader, Element, RelMemberType};
use rayon::prelude::*;
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

pub type Tags = Vec<(String, String)>;

#[derive(Clone, Debug, Default)]
pub struct RawWay {
    pub id: i64,
    /// OSM version: merged extracts may hold an element twice; the newest wins.
    pub version: i32,
    pub refs: Vec<i64>,
    pub tags: Tags,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberKind {
    Node,
    Way,
    Relation,
}

#[derive(Clone, Debug, Default)]
pub struct RawRelation {
    pub id: i64,
    pub version: i32,
    pub members: Vec<(MemberKind, i64, String)>,
    pub tags: Tags,
}

#[derive(Clone, Debug, Default)]
pub struct RawNode {
    pub id: i64,
    pub version: i32,
    pub lon: i32,
    pub lat: i32,
    pub tags: Tags,
}

/// How many entities of each kind a pass looked at.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    pub nodes: u64,
    pub ways: u64,
    pub relations: u64,
}

impl Counts {
    pub fn total(&self) -> u64 {
        self.nodes + self.ways + self.relations
    }
    fn add(&mut self, o: Counts) {
        self.nodes += o.nodes;
        self.ways += o.ways;
        self.relations += o.relations;
    }
}

/// Sorts by id and keeps one element per id, the newest version (merged extracts of different dates
/// hold some elements twice); the result does not depend on the order blobs were decoded in.
pub fn newest<T>(items: &mut Vec<T>, key: impl Fn(&T) -> (i64, i32)) {
    items.sort_unstable_by(|a, b| {
        let (ia, va) = key(a);
        let (ib, vb) = key(b);
        ia.cmp(&ib).then(vb.cmp(&va))
    });
    items.dedup_by(|later, first| key(later).0 == key(first).0);
}

pub fn tag<'a>(tags: &'a Tags, key: &str) -> Option<&'a str> {
    tags.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// Ways the pipeline may use: streets, paths, ferries, bicycle-parking areas, and the ways without
/// a highway tag riders use all the same (`rules::highway_of_untagged`: piers, movable bridges,
/// platforms, car parks).
pub fn is_candidate_way(tags: &Tags) -> bool {
    tags.iter().any(|(k, v)| {
        k == "highway"
            || (k == "route" && v == "ferry")
            || (k == "amenity" && matches!(v.as_str(), "bicycle_parking" | "parking"))
            || (k == "man_made" && v == "pier")
            || (k == "bridge" && v == "movable")
            || (k == "railway" && v == "platform")
    })
}

/// Relations the pipeline uses: signed bicycle routes and turn restrictions.
pub fn is_candidate_relation(tags: &Tags) -> bool {
    match tag(tags, "type") {
        Some("restriction") => true,
        Some(t) if t.starts_with("restriction:") => true,
        Some("route") => tag(tags, "route") == Some("bicycle"),
        _ => false,
    }
}

/// A node is kept when a kept way uses it, or when it is bicycle parking.
pub fn is_parking_node(tags: &Tags) -> bool {
    tag(tags, "amenity") == Some("bicycle_parking")
}

pub enum Format {
    Pbf,
    Xml,
    XmlBz2,
}

pub fn detect_format(path: &Path) -> Result<Format, String> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if name.ends_with(".osm.pbf") || name.ends_with(".pbf") {
        Ok(Format::Pbf)
    } else if name.ends_with(".osm.bz2") || name.ends_with(".bz2") {
        Ok(Format::XmlBz2)
    } else if name.ends_with(".osm") || name.ends_with(".xml") {
        Ok(Format::Xml)
    } else {
        Err(format!(
            "{}: unknown file type (expected .osm.pbf, .osm or .osm.bz2)",
            path.display()
        ))
    }
}

fn owned_tags<'a>(it: impl Iterator<Item = (&'a str, &'a str)>) -> Tags {
    it.map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn pbf_error(path: &Path, e: osmpbf::Error) -> String {
    format!("{}: not a readable OSM PBF file ({e})", path.display())
}

/// Pass 1: candidate ways and relations.
pub fn read_ways_and_relations(
    path: &Path,
    progress: &Progress,
) -> Result<(Vec<RawWay>, Vec<RawRelation>, Counts), String> {
    match detect_format(path)? {
        Format::Pbf => {
            let reader = pbf_reader(path, progress)?;
            let parts: Result<Vec<_>, String> = reader
                .par_bridge()
                .map(|blob| {
                    let blob = blob.map_err(|e| pbf_error(path, e))?;
                    let mut ways = Vec::new();
                    let mut rels = Vec::new();
                    let mut counts = Counts::default();
                    if let BlobDecode::OsmData(block) =
                        blob.decode().map_err(|e| pbf_error(path, e))?
                    {
                        block.for_each_element(|el| match el {
                            Element::Node(_) | Element::DenseNode(_) => counts.nodes += 1,
                            Element::Way(w) => {
                                counts.ways += 1;
                                let tags = owned_tags(w.tags());
                                if is_candidate_way(&tags) {
                                    ways.push(RawWay {
                                        id: w.id(),
                                        version: w.info().version().unwrap_or(0),
                                        refs: w.refs().collect(),
                                        tags,
                                    });
                                }
                            }
                            Element::Relation(r) => {
                                counts.relations += 1;
                                let tags = owned_tags(r.tags());
                                if is_candidate_relation(&tags) {
                                    let members = r
                                        .members()
                                        .map(|m| {
                                            let kind = match m.member_type {
                                                RelMemberType::Node => MemberKind::Node,
                                                RelMemberType::Way => MemberKind::Way,
                                                RelMemberType::Relation => MemberKind::Relation,
                                            };
                                            (kind, m.member_id, m.role().unwrap_or("").to_string())
                                        })
                                        .collect();
                                    rels.push(RawRelation {
                                        id: r.id(),
                                        version: r.info().version().unwrap_or(0),
                                        members,
                                        tags,
                                    });
                                }
                            }
                        });
                    }
                    Ok((ways, rels, counts))
                })
                .collect();
            let mut ways = Vec::new();
            let mut rels = Vec::new();
            let mut counts = Counts::default();
            for (w, r, c) in parts? {
                ways.extend(w);
                rels.extend(r);
                counts.add(c);
            }
            newest(&mut ways, |w| (w.id, w.version));
            newest(&mut rels, |r| (r.id, r.version));
            Ok((ways, rels, counts))
        }
        _ => {
            let mut ways = Vec::new();
            let mut rels = Vec::new();
            let counts = read_xml(path, progress, &mut |e| match e {
                XmlEntity::Way(w) if is_candidate_way(&w.tags) => ways.push(w),
                XmlEntity::Relation(r) if is_candidate_relation(&r.tags) => rels.push(r),
                _ => {}
            })?;
            newest(&mut ways, |w| (w.id, w.version));
            newest(&mut rels, |r| (r.id, r.version));
            Ok((ways, rels, counts))
        }
    }
}

/// Pass 2: the nodes in `wanted`, and every bicycle-parking node.
pub fn read_nodes(
    path: &Path,
    wanted: &HashSet<i64>,
    progress: &Progress,
) -> Result<Vec<RawNode>, String> {
    let keep = |id: i64, tags_fn: &mut dyn FnMut() -> Tags| -> Option<Tags> {
        let tags = tags_fn();
        if wanted.contains(&id) || is_parking_node(&tags) {
            Some(tags)
        } else {
            None
        }
    };
    match detect_format(path)? {
        Format::Pbf => {
            let reader = pbf_reader(path, progress)?;
            let parts: Result<Vec<Vec<RawNode>>, String> = reader
                .par_bridge()
                .map(|blob| {
                    let blob = blob.map_err(|e| pbf_error(path, e))?;
                    let mut nodes = Vec::new();
                    if let BlobDecode::OsmData(block) =
                        blob.decode().map_err(|e| pbf_error(path, e))?
                    {
                        block.for_each_element(|el| {
                            let (id, version, lon, lat, tags) = match el {
                                Element::DenseNode(n) => {
                                    let Some(t) = keep(n.id(), &mut || owned_tags(n.tags())) else {
                                        return;
                                    };
                                    let version = n.info().map(|i| i.version()).unwrap_or(0);
                                    (n.id(), version, n.decimicro_lon(), n.decimicro_lat(), t)
                                }
                                Element::Node(n) => {
                                    let Some(t) = keep(n.id(), &mut || owned_tags(n.tags())) else {
                                        return;
                                    };
                                    let version = n.info().version().unwrap_or(0);
                                    (n.id(), version, n.decimicro_lon(), n.decimicro_lat(), t)
                                }
                                _ => return,
                            };
                            nodes.push(RawNode {
                                id,
                                version,
                                lon,
                                lat,
                                tags,
                            });
                        });
                    }
                    Ok(nodes)
                })
                .collect();
            let mut nodes: Vec<RawNode> = parts?.into_iter().flatten().collect();
            newest(&mut nodes, |n| (n.id, n.version));
            Ok(nodes)
        }
        _ => {
            let mut nodes = Vec::new();
            read_xml(path, progress, &mut |e| {
                if let XmlEntity::Node(n) = e {
                    let tags = n.tags;
                    if wanted.contains(&n.id) || is_parking_node(&tags) {
                        nodes.push(RawNode { tags, ..n });
                    }
                }
            })?;
            newest(&mut nodes, |n| (n.id, n.version));
            Ok(nodes)
        }
    }
}

fn pbf_reader<'a>(
    path: &Path,
    progress: &'a Progress,
) -> Result<BlobReader<CountingReader<'a, BufReader<std::fs::File>>>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(BlobReader::new(CountingReader {
        inner: BufReader::with_capacity(1 << 20, file),
        progress,
    }))
}

pub(crate) enum XmlEntity {
    Node(RawNode),
    Way(RawWay),
    Relation(RawRelation),
}

/// Counts the compressed bytes read, for the progress display.
struct CountingReader<'a, R> {
    inner: R,
    progress: &'a Progress,
}

impl<R: Read> Read for CountingReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.advance(n as u64);
        Ok(n)
    }
}

pub(crate) fn read_xml(
    path: &Path,
    progress: &Progress,
    sink: &mut dyn FnMut(XmlEntity),
) -> Result<Counts, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let counting = CountingReader {
        inner: file,
        progress,
    };
    let reader: Box<dyn BufRead + '_> = match detect_format(path)? {
        Format::XmlBz2 => Box::new(BufReader::new(bzip2::read::MultiBzDecoder::new(counting))),
        _ => Box::new(BufReader::new(counting)),
    };
    parse_xml(reader, sink)
        .map_err(|e| format!("{}: not a readable OSM XML file ({e})", path.display()))
}

fn attr(e: &quick_xml::events::BytesStart, name: &[u8]) -> Result<Option<String>, String> {
    for a in e.attributes() {
        let a = a.map_err(|e| e.to_string())?;
        if a.key.as_ref() == name {
            return Ok(Some(
                a.unescape_value().map_err(|e| e.to_string())?.into_owned(),
            ));
        }
    }
    Ok(None)
}

fn parse_i64(v: Option<String>, what: &str) -> Result<i64, String> {
    v.ok_or_else(|| format!("missing {what}"))?
        .parse()
        .map_err(|_| format!("bad {what}"))
}

fn parse_coord(v: Option<String>, what: &str) -> Result<i32, String> {
    let d: f64 = v
        .ok_or_else(|| format!("missing {what}"))?
        .parse()
        .map_err(|_| format!("bad {what}"))?;
    Ok((d * 1e7).round() as i32)
}

fn parse_xml(
    reader: Box<dyn BufRead + '_>,
    sink: &mut dyn FnMut(XmlEntity),
) -> Result<Counts, String> {
    use quick_xml::events::Event;
    let mut xml = quick_xml::Reader::from_reader(reader);
    let mut buf = Vec::new();
    let mut counts = Counts::default();
    let mut current: Option<XmlEntity> = None;
    let mut saw_root = false;
    loop {
        let ev = xml.read_event_into(&mut buf).map_err(|e| e.to_string())?;
        let (e, is_empty) = match &ev {
            Event::Start(e) => (Some(e.clone()), false),
            Event::Empty(e) => (Some(e.clone()), true),
            Event::End(e) => {
                if matches!(e.name().as_ref(), b"node" | b"way" | b"relation") {
                    if let Some(ent) = current.take() {
                        sink(ent);
                    }
                }
                buf.clear();
                continue;
            }
            Event::Eof => break,
            _ => {
                buf.clear();
                continue;
            }
        };
        let e = e.unwrap();
        match e.name().as_ref() {
            b"osm" => saw_root = true,
            b"node" => {
                counts.nodes += 1;
                let n = RawNode {
                    id: parse_i64(attr(&e, b"id")?, "node id")?,
                    version: attr(&e, b"version")?
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0),
                    lon: parse_coord(attr(&e, b"lon")?, "node lon")?,
                    lat: parse_coord(attr(&e, b"lat")?, "node lat")?,
                    tags: vec![],
                };
                if is_empty {
                    sink(XmlEntity::Node(n));
                } else {
                    current = Some(XmlEntity::Node(n));
                }
            }
            b"way" => {
                counts.ways += 1;
                let w = RawWay {
                    id: parse_i64(attr(&e, b"id")?, "way id")?,
                    version: attr(&e, b"version")?
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0),
                    ..Default::default()
                };
                if is_empty {
                    sink(XmlEntity::Way(w));
                } else {
                    current = Some(XmlEntity::Way(w));
                }
            }
            b"relation" => {
                counts.relations += 1;
                let r = RawRelation {
                    id: parse_i64(attr(&e, b"id")?, "relation id")?,
                    version: attr(&e, b"version")?
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0),
                    ..Default::default()
                };
                if is_empty {
                    sink(XmlEntity::Relation(r));
                } else {
                    current = Some(XmlEntity::Relation(r));
                }
            }
            b"tag" => {
                let k = attr(&e, b"k")?.unwrap_or_default();
                let v = attr(&e, b"v")?.unwrap_or_default();
                match &mut current {
                    Some(XmlEntity::Node(n)) => n.tags.push((k, v)),
                    Some(XmlEntity::Way(w)) => w.tags.push((k, v)),
                    Some(XmlEntity::Relation(r)) => r.tags.push((k, v)),
                    None => {}
                }
            }
            b"nd" => {
                if let Some(XmlEntity::Way(w)) = &mut current {
                    w.refs.push(parse_i64(attr(&e, b"ref")?, "nd ref")?);
                }
            }
            b"member" => {
                if let Some(XmlEntity::Relation(r)) = &mut current {
                    let kind = match attr(&e, b"type")?.as_deref() {
                        Some("node") => MemberKind::Node,
                        Some("way") => MemberKind::Way,
                        _ => MemberKind::Relation,
                    };
                    let id = parse_i64(attr(&e, b"ref")?, "member ref")?;
                    r.members
                        .push((kind, id, attr(&e, b"role")?.unwrap_or_default()));
                }
            }
            _ => {}
        }
        buf.clear();
    }
    if !saw_root {
        return Err("no <osm> root element".into());
    }
    Ok(counts)
}
