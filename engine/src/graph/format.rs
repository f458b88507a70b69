//! The city graph file: one reader/writer pair, with a magic number, a format version, a section
//! table, a CRC-32 of the payload and a size check, after OSRM's `files.hpp` and RoutingKit's headers.
//!
//! Layout (little endian):
//! ```text
//! magic "QWAYGRPH" | format u32 | section count u32 | payload crc32 u32 | reserved u32
//! section table: count × { name [u8; 24], element size u32, reserved u32, count u64, offset u64 }
//! payload: each section's bytes, 8-byte aligned
//! ```
//! The `graph_version` is derived from the content (the CRC and the sizes), so the same extract built
//! twice yields the same version and any change to the graph yields a new one.

use crate::graph::{ArcAttrs, BikeParking, CityGraph, CityInfo};
use bytemuck::Pod;
use std::io::Write;
use std::path::Path;

pub const MAGIC: &[u8; 8] = b"QWAYGRPH";
/// 2: turn restrictions stored as arc sequences (no node copies); the order ranks the turn model's
/// routing nodes.
pub const FORMAT_VERSION: u32 = 2;
const NAME_LEN: usize = 24;
const HEADER_LEN: usize = 24;
const ENTRY_LEN: usize = NAME_LEN + 4 + 4 + 8 + 8;

#[derive(Debug)]
pub enum FormatError {
    Io(std::io::Error),
    Invalid(String),
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatError::Io(e) => write!(f, "{e}"),
            FormatError::Invalid(s) => write!(f, "{s}"),
        }
    }
}
impl std::error::Error for FormatError {}
impl From<std::io::Error> for FormatError {
    fn from(e: std::io::Error) -> Self {
        FormatError::Io(e)
    }
}

fn invalid<T>(msg: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError::Invalid(msg.into()))
}

/// Every array section of the graph, in file order: one list serves the writer and the reader.
macro_rules! array_sections {
    ($m:ident) => {
        $m!(node_lon, i32);
        $m!(node_lat, i32);
        $m!(node_elevation, f32);
        $m!(node_osm_id, i64);
        $m!(node_control, u8);
        $m!(edge_tail, u32);
        $m!(edge_head, u32);
        $m!(edge_way, u32);
        $m!(edge_length_m, f32);
        $m!(edge_climb_fwd_m, f32);
        $m!(edge_climb_bwd_m, f32);
        $m!(edge_bearing_start, u16);
        $m!(edge_bearing_end, u16);
        $m!(edge_geom_first, u32);
        $m!(geom_lon, i32);
        $m!(geom_lat, i32);
        $m!(arc_attrs, ArcAttrs);
        $m!(way_osm_id, i64);
        $m!(way_name, u32);
        $m!(way_ref, u32);
        $m!(way_flags, u16);
        $m!(way_route_set, u32);
        $m!(route_set_first, u32);
        $m!(route_set_names, u32);
        $m!(string_first, u32);
        $m!(string_bytes, u8);
        $m!(parking, BikeParking);
        $m!(restriction_first, u32);
        $m!(restriction_arcs, u32);
        $m!(restriction_only, u8);
        $m!(order, u32);
        $m!(edge_duration_s, f32);
    };
}

struct Section<'a> {
    name: &'static str,
    elem_size: u32,
    count: u64,
    bytes: &'a [u8],
}

/// An optional section, left out when empty.
fn push_optional<'a, T: bytemuck::Pod>(
    sections: &mut Vec<Section<'a>>,
    name: &'static str,
    v: &'a [T],
) {
    if !v.is_empty() {
        sections.push(Section {
            name,
            elem_size: std::mem::size_of::<T>() as u32,
            count: v.len() as u64,
            bytes: bytemuck::cast_slice::<T, u8>(v),
        });
    }
}

/// The sections of [`CityGraph::cycling_metric_weights`]: each loaded metric's forward and
/// backward weights.
const METRIC_SECTIONS: [&str; 4] = [
    "cycling_metric_0_fw",
    "cycling_metric_0_bw",
    "cycling_metric_1_fw",
    "cycling_metric_1_bw",
];

/// Writes a graph in the file format to `out`.
pub fn write_to(g: &CityGraph, out: &mut impl Write) -> Result<(), FormatError> {
    let city_json = serde_json::to_vec(&g.city).map_err(|e| FormatError::Invalid(e.to_string()))?;
    let mut sections: Vec<Section> = vec![Section {
        name: "city",
        elem_size: 1,
        count: city_json.len() as u64,
        bytes: &city_json,
    }];
    macro_rules! push {
        ($field:ident, $ty:ty) => {
            sections.push(Section {
                name: stringify!($field),
                elem_size: std::mem::size_of::<$ty>() as u32,
                count: g.$field.len() as u64,
                bytes: bytemuck::cast_slice::<$ty, u8>(&g.$field),
            });
        };
    }
    array_sections!(push);
    // Optional: a file without them (written before they existed) is still read.
    for (name, order) in [
        ("cycling_order", &g.cycling_order),
        ("walking_order", &g.walking_order),
        ("cycling_cch_order", &g.cycling_cch_order),
        ("cycling_cch_up_first", &g.cycling_cch_up_first),
        ("cycling_cch_up_head", &g.cycling_cch_up_head),
        ("cycling_cch_parent", &g.cycling_cch_parent),
        ("turn_back_pairs", &g.turn_back_pairs),
    ] {
        push_optional(&mut sections, name, order);
    }
    for (name, words) in [
        ("cycling_cch_usable", &g.cycling_cch_usable),
        ("cycling_cch_sides", &g.cycling_cch_sides),
        ("cycling_metric_inputs", &g.cycling_metric_inputs),
    ] {
        push_optional(&mut sections, name, words);
    }
    if g.cycling_metric_weights.len() > METRIC_SECTIONS.len() {
        return Err(FormatError::Invalid(format!(
            "{} stored metric weight arrays, at most {}",
            g.cycling_metric_weights.len(),
            METRIC_SECTIONS.len()
        )));
    }
    for (name, weights) in METRIC_SECTIONS.iter().zip(&g.cycling_metric_weights) {
        push_optional(&mut sections, name, weights);
    }

    if let Some(s) = sections.iter().find(|s| s.name.len() > NAME_LEN) {
        return Err(FormatError::Invalid(format!(
            "section name {} is longer than {NAME_LEN} bytes",
            s.name
        )));
    }
    let table_end = HEADER_LEN + ENTRY_LEN * sections.len();
    let mut offset = align8(table_end);
    let mut offsets = Vec::with_capacity(sections.len());
    for s in &sections {
        offsets.push(offset);
        offset = align8(offset + s.bytes.len());
    }
    let mut crc = crc32fast::Hasher::new();
    for s in &sections {
        crc.update(s.bytes);
    }
    let mut head = vec![0u8; align8(table_end)];
    head[0..8].copy_from_slice(MAGIC);
    head[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    head[12..16].copy_from_slice(&(sections.len() as u32).to_le_bytes());
    head[16..20].copy_from_slice(&crc.finalize().to_le_bytes());
    for (i, (s, &off)) in sections.iter().zip(&offsets).enumerate() {
        let e = HEADER_LEN + i * ENTRY_LEN;
        head[e..e + s.name.len()].copy_from_slice(s.name.as_bytes());
        head[e + NAME_LEN..e + NAME_LEN + 4].copy_from_slice(&s.elem_size.to_le_bytes());
        head[e + NAME_LEN + 8..e + NAME_LEN + 16].copy_from_slice(&s.count.to_le_bytes());
        head[e + NAME_LEN + 16..e + NAME_LEN + 24].copy_from_slice(&(off as u64).to_le_bytes());
    }
    // The sections straight from the graph's arrays, each padded to 8 bytes: a copy of the whole
    // file in memory would add its size to the build's peak.
    out.write_all(&head)?;
    let mut at = head.len();
    for (s, &off) in sections.iter().zip(&offsets) {
        debug_assert_eq!(at, off);
        out.write_all(s.bytes)?;
        let end = align8(off + s.bytes.len());
        out.write_all(&[0u8; 8][..end - off - s.bytes.len()])?;
        at = end;
    }
    Ok(())
}

/// Serialises a graph to bytes.
pub fn to_bytes(g: &CityGraph) -> Result<Vec<u8>, FormatError> {
    let mut out = Vec::new();
    write_to(g, &mut out)?;
    Ok(out)
}

/// Writes the graph next to `path` and renames it into place, so a failed write never replaces a
/// good graph.
pub fn write_file(g: &CityGraph, path: &Path) -> Result<(), FormatError> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        write_to(g, &mut f)?;
        f.flush()?;
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    Ok(())
}

fn align8(x: usize) -> usize {
    (x + 7) & !7
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Reads a graph file; refuses anything that is not a complete, intact, valid graph of this format.
pub fn from_bytes(b: &[u8]) -> Result<(CityGraph, String), FormatError> {
    if b.len() < HEADER_LEN || &b[0..8] != MAGIC {
        return invalid("not a Quietway graph file (bad magic number)");
    }
    let version = u32_at(b, 8);
    if version != FORMAT_VERSION {
        return invalid(format!(
            "graph format version {version} is not supported (this engine reads version {FORMAT_VERSION}); rebuild the graph"
        ));
    }
    let count = u32_at(b, 12) as usize;
    let crc_expected = u32_at(b, 16);
    if count > 1000 || HEADER_LEN + count * ENTRY_LEN > b.len() {
        return invalid("graph file is truncated (section table)");
    }
    let mut payload: Vec<(usize, usize)> = Vec::with_capacity(count);
    let mut table: std::collections::HashMap<String, (u32, u64, usize)> = Default::default();
    for i in 0..count {
        let e = HEADER_LEN + i * ENTRY_LEN;
        let name_raw = &b[e..e + NAME_LEN];
        let name =
            String::from_utf8_lossy(name_raw.split(|&c| c == 0).next().unwrap_or(&[])).to_string();
        let elem = u32_at(b, e + NAME_LEN);
        let n = u64_at(b, e + NAME_LEN + 8);
        let off = u64_at(b, e + NAME_LEN + 16) as usize;
        let len = (elem as u64).checked_mul(n).map(|x| x as usize);
        match len {
            Some(len) if off.checked_add(len).is_some_and(|end| end <= b.len()) => {
                payload.push((off, len));
            }
            _ => return invalid(format!("graph file is truncated (section {name})")),
        }
        table.insert(name, (elem, n, off));
    }
    // The checksum is summed beside the sections' parsing (a whole city's file is 169 MB); a
    // mismatch refuses the file all the same, once both are done.
    let (crc, parsed) = rayon::join(
        || {
            let mut crc = crc32fast::Hasher::new();
            for &(off, len) in &payload {
                crc.update(&b[off..off + len]);
            }
            crc.finalize()
        },
        || parse_sections(b, &table),
    );
    if crc != crc_expected {
        return invalid("graph file is corrupt (checksum mismatch)");
    }
    let g = parsed?;
    let graph_version = format!(
        "{:08x}{:08x}",
        crc,
        (b.len() as u32) ^ (g.arc_count() as u32)
    );
    Ok((g, graph_version))
}

/// The graph in the sections of file `b` (their table checked against its length).
fn parse_sections(
    b: &[u8],
    table: &std::collections::HashMap<String, (u32, u64, usize)>,
) -> Result<CityGraph, FormatError> {
    let section = |name: &str, elem: usize| -> Result<&[u8], FormatError> {
        let Some(&(e, n, off)) = table.get(name) else {
            return invalid(format!("graph file lacks section {name}"));
        };
        if e as usize != elem {
            return invalid(format!(
                "graph section {name} has element size {e}, expected {elem}"
            ));
        }
        Ok(&b[off..off + elem * n as usize])
    };
    fn copy_vec<T: Pod>(bytes: &[u8]) -> Vec<T> {
        // Copy rather than cast: the file buffer is not guaranteed to be aligned for T.
        let n = bytes.len() / std::mem::size_of::<T>();
        let mut v: Vec<T> = vec![T::zeroed(); n];
        bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(bytes);
        v
    }

    let city: Option<CityInfo> = serde_json::from_slice(section("city", 1)?)
        .map_err(|e| FormatError::Invalid(format!("graph city section is invalid: {e}")))?;
    let mut g = CityGraph {
        city,
        ..Default::default()
    };
    macro_rules! read {
        ($field:ident, $ty:ty) => {
            g.$field = copy_vec::<$ty>(section(stringify!($field), std::mem::size_of::<$ty>())?);
        };
    }
    array_sections!(read);
    if table.contains_key("cycling_order") {
        g.cycling_order = copy_vec::<u32>(section("cycling_order", 4)?);
    }
    if table.contains_key("walking_order") {
        g.walking_order = copy_vec::<u32>(section("walking_order", 4)?);
    }
    if table.contains_key("cycling_cch_usable") {
        g.cycling_cch_order = copy_vec::<u32>(section("cycling_cch_order", 4)?);
        g.cycling_cch_up_first = copy_vec::<u32>(section("cycling_cch_up_first", 4)?);
        g.cycling_cch_up_head = copy_vec::<u32>(section("cycling_cch_up_head", 4)?);
        g.cycling_cch_parent = copy_vec::<u32>(section("cycling_cch_parent", 4)?);
        g.cycling_cch_usable = copy_vec::<u64>(section("cycling_cch_usable", 8)?);
        if table.contains_key("cycling_cch_sides") {
            g.cycling_cch_sides = copy_vec::<u64>(section("cycling_cch_sides", 8)?);
        }
    }
    if table.contains_key("cycling_metric_inputs") {
        g.cycling_metric_inputs = copy_vec::<u64>(section("cycling_metric_inputs", 8)?);
        let arrays = 2 * g.cycling_metric_inputs.len();
        if arrays > METRIC_SECTIONS.len() {
            return invalid("graph file stores more metrics than it has sections for");
        }
        for name in &METRIC_SECTIONS[..arrays] {
            g.cycling_metric_weights
                .push(copy_vec::<u32>(section(name, 4)?));
        }
    }
    if table.contains_key("turn_back_pairs") {
        g.turn_back_pairs = copy_vec::<u32>(section("turn_back_pairs", 4)?);
    }
    g.validate()
        .map_err(|e| FormatError::Invalid(format!("graph file is inconsistent: {e}")))?;
    Ok(g)
}

/// Reads and validates a graph file; returns the graph and its `graph_version`.
pub fn read_file(path: &Path) -> Result<(CityGraph, String), FormatError> {
    let bytes = std::fs::read(path)
        .map_err(|e| FormatError::Invalid(format!("cannot read {}: {e}", path.display())))?;
    from_bytes(&bytes)
}

/// Checks a graph file as written without parsing it: its header, section table and checksum, the
/// payload streamed from disk. Returns its `graph_version` (what [`read_file`] would). The pipeline
/// reads back what it wrote this way: parsing a city's file whole would hold the file and the graph
/// in memory at once, the build's peak.
pub fn check_file(path: &Path) -> Result<String, FormatError> {
    use std::io::Read;
    let cannot =
        |e: std::io::Error| FormatError::Invalid(format!("cannot read {}: {e}", path.display()));
    let file_len = std::fs::metadata(path).map_err(cannot)?.len() as usize;
    let mut f =
        std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(path).map_err(cannot)?);
    let mut head = vec![0u8; HEADER_LEN];
    f.read_exact(&mut head).map_err(cannot)?;
    if &head[0..8] != MAGIC || u32_at(&head, 8) != FORMAT_VERSION {
        return invalid("not a Quietway graph file of this format");
    }
    let count = u32_at(&head, 12) as usize;
    if count > 1000 || HEADER_LEN + count * ENTRY_LEN > file_len {
        return invalid("graph file is truncated (section table)");
    }
    let mut table = vec![0u8; count * ENTRY_LEN];
    f.read_exact(&mut table).map_err(cannot)?;
    let mut at = HEADER_LEN + table.len();
    let (mut crc, mut arcs) = (crc32fast::Hasher::new(), 0u64);
    let mut buf = vec![0u8; 1 << 20];
    for i in 0..count {
        let e = i * ENTRY_LEN;
        let name = &table[e..e + NAME_LEN];
        let (elem, n) = (
            u32_at(&table, e + NAME_LEN) as u64,
            u64_at(&table, e + NAME_LEN + 8),
        );
        let off = u64_at(&table, e + NAME_LEN + 16) as usize;
        let len = elem.checked_mul(n).map(|x| x as usize);
        let Some(len) =
            len.filter(|&l| off >= at && off.checked_add(l).is_some_and(|end| end <= file_len))
        else {
            return invalid("graph file is truncated (a section)");
        };
        if name.split(|&c| c == 0).next() == Some(b"arc_attrs".as_slice()) {
            arcs = n;
        }
        std::io::copy(&mut (&mut f).take((off - at) as u64), &mut std::io::sink())
            .map_err(cannot)?;
        let mut left = len;
        while left > 0 {
            let k = left.min(buf.len());
            f.read_exact(&mut buf[..k]).map_err(cannot)?;
            crc.update(&buf[..k]);
            left -= k;
        }
        at = off + len;
    }
    let crc = crc.finalize();
    if crc != u32_at(&head, 16) {
        return invalid("graph file is corrupt (checksum mismatch)");
    }
    Ok(format!(
        "{:08x}{:08x}",
        crc,
        (file_len as u32) ^ (arcs as u32)
    ))
}

/// The `graph_version` a graph would have once written.
pub fn graph_version(g: &CityGraph) -> Result<String, FormatError> {
    let bytes = to_bytes(g)?;
    Ok(from_bytes(&bytes)?.1)
}
