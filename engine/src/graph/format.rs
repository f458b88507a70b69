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

/// The sections of [`CityGraph::cycling_metric_weights`]: each stored metric's forward and
/// backward weights.
const METRIC_SECTIONS: [&str; 8] = [
    "cycling_metric_0_fw",
    "cycling_metric_0_bw",
    "cycling_metric_1_fw",
    "cycling_metric_1_bw",
    "cycling_metric_2_fw",
    "cycling_metric_2_bw",
    "cycling_metric_3_fw",
    "cycling_metric_3_bw",
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

/// Where a graph file's bytes are read from: the file, a section at a time, or bytes in memory.
trait Source {
    fn len(&self) -> usize;
    fn read_at(&self, off: usize, buf: &mut [u8]) -> Result<(), FormatError>;
}

impl Source for [u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
    fn read_at(&self, off: usize, buf: &mut [u8]) -> Result<(), FormatError> {
        buf.copy_from_slice(&self[off..off + buf.len()]);
        Ok(())
    }
}

struct FileSource<'a> {
    file: std::fs::File,
    len: usize,
    path: &'a Path,
}

impl<'a> FileSource<'a> {
    fn open(path: &'a Path) -> Result<Self, FormatError> {
        let file = std::fs::File::open(path).map_err(|e| cannot_read(path, e))?;
        let len = file.metadata().map_err(|e| cannot_read(path, e))?.len() as usize;
        Ok(FileSource { file, len, path })
    }
}

fn cannot_read(path: &Path, e: std::io::Error) -> FormatError {
    FormatError::Invalid(format!("cannot read {}: {e}", path.display()))
}

impl Source for FileSource<'_> {
    fn len(&self) -> usize {
        self.len
    }
    fn read_at(&self, off: usize, buf: &mut [u8]) -> Result<(), FormatError> {
        let cannot = |e| cannot_read(self.path, e);
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, off as u64).map_err(cannot)
        }
        #[cfg(not(unix))]
        {
            use std::io::{Read, Seek};
            let mut f = &self.file;
            f.seek(std::io::SeekFrom::Start(off as u64))
                .and_then(|_| f.read_exact(buf))
                .map_err(cannot)
        }
    }
}

/// A section of the table: its element size, count, offset and length in bytes.
struct Entry {
    elem: u32,
    count: u64,
    off: usize,
    len: usize,
}

/// A graph file's sections, read one at a time straight into the arrays that keep them, each
/// summed as it is read: a file read whole was held beside the graph copied out of it (a city's
/// file is 328 MB), and a section not asked for is only summed.
struct Reader<'a, S: Source + ?Sized> {
    src: &'a S,
    entries: Vec<Entry>,
    by_name: std::collections::HashMap<String, usize>,
    /// Each section's checksum once it is read.
    sums: std::cell::RefCell<Vec<Option<crc32fast::Hasher>>>,
    crc_expected: u32,
}

impl<'a, S: Source + ?Sized> Reader<'a, S> {
    /// Checks the header and the section table against the file's length.
    fn open(src: &'a S) -> Result<Self, FormatError> {
        let len = src.len();
        if len < HEADER_LEN {
            return invalid("not a Quietway graph file (bad magic number)");
        }
        let mut head = vec![0u8; HEADER_LEN];
        src.read_at(0, &mut head)?;
        if &head[0..8] != MAGIC {
            return invalid("not a Quietway graph file (bad magic number)");
        }
        let version = u32_at(&head, 8);
        if version != FORMAT_VERSION {
            return invalid(format!(
                "graph format version {version} is not supported (this engine reads version {FORMAT_VERSION}); rebuild the graph"
            ));
        }
        let count = u32_at(&head, 12) as usize;
        if count > 1000 || HEADER_LEN + count * ENTRY_LEN > len {
            return invalid("graph file is truncated (section table)");
        }
        let mut table = vec![0u8; count * ENTRY_LEN];
        src.read_at(HEADER_LEN, &mut table)?;
        let mut entries = Vec::with_capacity(count);
        let mut by_name = std::collections::HashMap::new();
        for i in 0..count {
            let e = i * ENTRY_LEN;
            let name_raw = &table[e..e + NAME_LEN];
            let name = String::from_utf8_lossy(name_raw.split(|&c| c == 0).next().unwrap_or(&[]))
                .to_string();
            let elem = u32_at(&table, e + NAME_LEN);
            let n = u64_at(&table, e + NAME_LEN + 8);
            let off = u64_at(&table, e + NAME_LEN + 16) as usize;
            let bytes = (elem as u64).checked_mul(n).map(|x| x as usize);
            match bytes {
                Some(l) if off.checked_add(l).is_some_and(|end| end <= len) => {
                    entries.push(Entry {
                        elem,
                        count: n,
                        off,
                        len: l,
                    })
                }
                _ => return invalid(format!("graph file is truncated (section {name})")),
            }
            by_name.insert(name, i);
        }
        Ok(Reader {
            src,
            sums: std::cell::RefCell::new((0..count).map(|_| None).collect()),
            entries,
            by_name,
            crc_expected: u32_at(&head, 16),
        })
    }

    fn has(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Section `name` as an array of `T`, read into it and summed.
    fn vec<T: Pod>(&self, name: &str) -> Result<Vec<T>, FormatError> {
        let Some(&i) = self.by_name.get(name) else {
            return invalid(format!("graph file lacks section {name}"));
        };
        let e = &self.entries[i];
        let size = std::mem::size_of::<T>();
        if e.elem as usize != size {
            return invalid(format!(
                "graph section {name} has element size {}, expected {size}",
                e.elem
            ));
        }
        let mut v: Vec<T> = vec![T::zeroed(); e.count as usize];
        let bytes = bytemuck::cast_slice_mut::<T, u8>(&mut v);
        self.src.read_at(e.off, bytes)?;
        let mut crc = crc32fast::Hasher::new();
        crc.update(bytes);
        self.sums.borrow_mut()[i] = Some(crc);
        Ok(v)
    }

    /// The file's checksum (the sections not read are summed now), checked: the graph's
    /// `graph_version` part.
    fn finish(self) -> Result<u32, FormatError> {
        let mut sums = self.sums.into_inner();
        let mut buf = vec![0u8; 1 << 20];
        for (e, sum) in self.entries.iter().zip(&mut sums) {
            if sum.is_some() {
                continue;
            }
            let mut crc = crc32fast::Hasher::new();
            let mut at = 0;
            while at < e.len {
                let k = (e.len - at).min(buf.len());
                self.src.read_at(e.off + at, &mut buf[..k])?;
                crc.update(&buf[..k]);
                at += k;
            }
            *sum = Some(crc);
        }
        let mut crc = crc32fast::Hasher::new();
        for sum in sums.iter().flatten() {
            crc.combine(sum);
        }
        let crc = crc.finalize();
        if crc != self.crc_expected {
            return invalid("graph file is corrupt (checksum mismatch)");
        }
        Ok(crc)
    }
}

/// Every metric a file may store (for [`read_file_with`]).
fn every_stored_metric(_: &CityGraph) -> Vec<usize> {
    (0..METRIC_SECTIONS.len() / 2).collect()
}

/// Reads a graph file; refuses anything that is not a complete, intact, valid graph of this format.
pub fn from_bytes(b: &[u8]) -> Result<(CityGraph, String), FormatError> {
    read_from(b, every_stored_metric)
}

/// The graph in the sections of `src`, with the stored metrics whose places `stored_metrics`
/// gives for the graph read so far (every section but those), and its `graph_version`.
fn read_from<S: Source + ?Sized>(
    src: &S,
    stored_metrics: impl FnOnce(&CityGraph) -> Vec<usize>,
) -> Result<(CityGraph, String), FormatError> {
    let r = Reader::open(src)?;
    let parsed = parse_sections(&r, stored_metrics);
    // A damaged file is refused for its checksum first, whatever its parsing met.
    let crc = r.finish()?;
    let g = parsed?;
    let graph_version = format!(
        "{:08x}{:08x}",
        crc,
        (src.len() as u32) ^ (g.arc_count() as u32)
    );
    g.validate()
        .map_err(|e| FormatError::Invalid(format!("graph file is inconsistent: {e}")))?;
    Ok((g, graph_version))
}

/// The graph in the sections of `r`, with the stored metrics that `stored_metrics` names.
fn parse_sections<S: Source + ?Sized>(
    r: &Reader<'_, S>,
    stored_metrics: impl FnOnce(&CityGraph) -> Vec<usize>,
) -> Result<CityGraph, FormatError> {
    let city: Option<CityInfo> = serde_json::from_slice(&r.vec::<u8>("city")?)
        .map_err(|e| FormatError::Invalid(format!("graph city section is invalid: {e}")))?;
    let mut g = CityGraph {
        city,
        ..Default::default()
    };
    macro_rules! read {
        ($field:ident, $ty:ty) => {
            g.$field = r.vec::<$ty>(stringify!($field))?;
        };
    }
    array_sections!(read);
    if r.has("cycling_order") {
        g.cycling_order = r.vec::<u32>("cycling_order")?;
    }
    if r.has("walking_order") {
        g.walking_order = r.vec::<u32>("walking_order")?;
    }
    if r.has("cycling_cch_usable") {
        g.cycling_cch_order = r.vec::<u32>("cycling_cch_order")?;
        g.cycling_cch_up_first = r.vec::<u32>("cycling_cch_up_first")?;
        g.cycling_cch_up_head = r.vec::<u32>("cycling_cch_up_head")?;
        g.cycling_cch_parent = r.vec::<u32>("cycling_cch_parent")?;
        g.cycling_cch_usable = r.vec::<u64>("cycling_cch_usable")?;
        if r.has("cycling_cch_sides") {
            g.cycling_cch_sides = r.vec::<u64>("cycling_cch_sides")?;
        }
    }
    if r.has("cycling_metric_inputs") {
        g.cycling_metric_inputs = r.vec::<u64>("cycling_metric_inputs")?;
        let arrays = 2 * g.cycling_metric_inputs.len();
        if arrays > METRIC_SECTIONS.len() {
            return invalid("graph file stores more metrics than it has sections for");
        }
        // Only the metrics asked for are read (the others' sections are summed, not kept): a load
        // takes the day's or the night's.
        let wanted = stored_metrics(&g);
        for (j, names) in METRIC_SECTIONS[..arrays].chunks(2).enumerate() {
            for name in names {
                g.cycling_metric_weights.push(if wanted.contains(&j) {
                    r.vec::<u32>(name)?
                } else {
                    Vec::new()
                });
            }
        }
    }
    if r.has("turn_back_pairs") {
        g.turn_back_pairs = r.vec::<u32>("turn_back_pairs")?;
    }
    Ok(g)
}

/// Reads and validates a graph file; returns the graph and its `graph_version`.
pub fn read_file(path: &Path) -> Result<(CityGraph, String), FormatError> {
    read_file_with(path, every_stored_metric)
}

/// [`read_file`], reading of the stored metrics only those whose places (in
/// [`CityGraph::cycling_metric_inputs`]) `stored_metrics` gives for the graph read so far; the
/// others' weights are left empty.
pub fn read_file_with(
    path: &Path,
    stored_metrics: impl FnOnce(&CityGraph) -> Vec<usize>,
) -> Result<(CityGraph, String), FormatError> {
    let src = FileSource::open(path)?;
    if !src
        .file
        .metadata()
        .map_err(|e| cannot_read(path, e))?
        .is_file()
    {
        // A pipe or device has no length and cannot be read at an offset: read whole.
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut &src.file, &mut bytes).map_err(|e| cannot_read(path, e))?;
        return read_from(&bytes[..], stored_metrics);
    }
    read_from(&src, stored_metrics)
}

/// Checks a graph file as written without parsing it: its header, section table and checksum, the
/// payload streamed from disk. Returns its `graph_version` (what [`read_file`] would). The pipeline
/// reads back what it wrote this way: parsing a city's file whole would hold the file and the graph
/// in memory at once, the build's peak.
pub fn check_file(path: &Path) -> Result<String, FormatError> {
    let src = FileSource::open(path)?;
    let r = Reader::open(&src)?;
    let arcs = r
        .by_name
        .get("arc_attrs")
        .map_or(0, |&i| r.entries[i].count);
    // Every section streamed through its checksum, none kept.
    let crc = r.finish()?;
    Ok(format!(
        "{:08x}{:08x}",
        crc,
        (src.len as u32) ^ (arcs as u32)
    ))
}

/// The `graph_version` a graph would have once written.
pub fn graph_version(g: &CityGraph) -> Result<String, FormatError> {
    let bytes = to_bytes(g)?;
    Ok(from_bytes(&bytes)?.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_reads_the_stored_metrics_it_asks_for_and_still_sums_the_others() {
        let g = CityGraph {
            edge_geom_first: vec![0],
            route_set_first: vec![0],
            string_first: vec![0],
            restriction_first: vec![0],
            cycling_metric_inputs: vec![11, 22, 33, 44],
            cycling_metric_weights: (0..8).map(|i| vec![i as u32 * 7; 100 + i]).collect(),
            ..Default::default()
        };
        let bytes = to_bytes(&g).unwrap();
        let (all, version) = from_bytes(&bytes).unwrap();
        assert_eq!(all.cycling_metric_weights, g.cycling_metric_weights);
        // The night's metrics (places 2 and 3) alone: the same graph version, the day's left empty.
        let (night, night_version) = read_from(&bytes[..], |_| vec![2, 3]).unwrap();
        assert_eq!(night_version, version);
        assert_eq!(night.cycling_metric_inputs, g.cycling_metric_inputs);
        assert!(night.cycling_metric_weights[..4].iter().all(Vec::is_empty));
        assert_eq!(
            night.cycling_metric_weights[4..],
            g.cycling_metric_weights[4..]
        );
        // From a file, section by section, as a city loads.
        let dir = std::env::temp_dir().join(format!("qw-format-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g.qwg");
        write_file(&g, &path).unwrap();
        let (day, day_version) = read_file_with(&path, |_| vec![0, 1]).unwrap();
        assert_eq!(day_version, version);
        assert_eq!(
            day.cycling_metric_weights[..4],
            g.cycling_metric_weights[..4]
        );
        assert!(day.cycling_metric_weights[4..].iter().all(Vec::is_empty));
        std::fs::remove_dir_all(&dir).unwrap();
        // A byte changed in a section that is not read is found all the same.
        let off = {
            let r = Reader::open(&bytes[..]).unwrap();
            r.entries[r.by_name["cycling_metric_0_fw"]].off
        };
        let mut bad = bytes.clone();
        bad[off + 5] ^= 1;
        let err = read_from(&bad[..], |_| vec![2, 3]).unwrap_err().to_string();
        assert!(err.contains("checksum"), "{err}");
    }
}
