//! The pruned query graph: perfect customization, then the arcs no path through higher nodes
//! undercuts, each with its unpacking entry.

use super::unpack::{INPUT_BIT, NO_ENTRY};
use super::{Cch, CustomizedMetric, INF_WEIGHT, PARALLEL_NODES, SCRATCH, Weight, add};

/// The upward arcs a query needs under one metric, per direction (CSR by lower endpoint): arcs
/// that are passable and whose weight no path through higher nodes undercuts. Built by perfect
/// customization; queries on it relax a fraction of the arcs of the full hierarchy.
///
/// Each kept arc carries its unpacking entry: the input arc it is (`INPUT_BIT | input`), or the two
/// kept arcs of the lower triangle its weight is the sum of, in travel order (a `bw` arc down to
/// the triangle's lowest node, then a `fw` arc up). Both arcs of such a triangle are kept
/// themselves: the weight of a kept arc is the distance between its ends, so the two arcs that
/// sum to it are shortest paths too, and perfect customization leaves them as they were.
/// Entries are kept only here, for the fifth of the arcs a query can use, rather than for
/// every arc of every metric, and in six bytes where every index fits 24 bits (see [`Entries`]).
///
/// A kept arc's tail is not stored: a search on this graph records each node's predecessor node,
/// and a path's few dozen arcs are looked up in lists the search has just read.
pub struct PrunedGraph {
    /// Where each node's kept arcs start, `[fw, bw]` (node `x`'s end at `x + 1`): both sides'
    /// bounds of a node in one place, since a query reads them for a few hundred scattered nodes.
    pub first: Vec<[u32; 2]>,
    /// (head rank, weight) of each kept arc.
    pub fw_arcs: Vec<[u32; 2]>,
    /// Unpacking entry of each kept arc: `[INPUT_BIT | input, _]` or `[bw arc, fw arc]`.
    pub fw_unpack: Entries,
    pub bw_arcs: Vec<[u32; 2]>,
    pub bw_unpack: Entries,
    /// Whether the `bw` side is the `fw` side's mirror and not stored (`bw_arcs` and `bw_unpack`
    /// empty): a metric the same both ways on a hierarchy of both ways of each edge (walking's)
    /// keeps the same arcs with the same weights on both sides, each shortcut's entry with its
    /// two halves swapped and each input arc's entry the edge's other way (`input ^ 1`). Read
    /// through [`Self::bw_arcs`] and [`Self::entry`]: half the memory (50 MB of walking's 100 on
    /// the 4 × 4 tiling of New York).
    pub mirrored: bool,
}

/// One side's unpacking entries (see [`PrunedGraph`]). Where every kept arc index and input arc
/// fits 24 bits (New York's 0.9 M kept arcs a metric, 0.4 M turns), an entry is two 24-bit fields
/// in three `u16`: the `bw` arc, or all ones for an input arc, then the `fw` arc or the input. That
/// is 6 bytes an arc instead of 8, 12 MB less for New York's seven metrics, read as fast: a
/// triangle's lowest node instead (its two arcs found in its lists) saved twice that, but made a
/// query with its path 5 µs slower. Larger graphs keep eight.
pub enum Entries {
    Narrow(Vec<[u16; 3]>),
    Wide(Vec<[u32; 2]>),
}

/// A narrow entry's first field for an input arc.
const NARROW_INPUT: u32 = 0xff_ffff;

impl Entries {
    /// Narrow entries if `narrow` (every index they hold is below [`NARROW_INPUT`]), else these.
    fn new(wide: Vec<[u32; 2]>, narrow: bool) -> Entries {
        if !narrow {
            return Entries::Wide(wide);
        }
        Entries::Narrow(
            wide.iter()
                .map(|&[a, b]| {
                    let (lo, hi) = if a & INPUT_BIT != 0 {
                        (NARROW_INPUT, a & !INPUT_BIT)
                    } else {
                        (a, b)
                    };
                    debug_assert!(lo <= NARROW_INPUT && hi <= NARROW_INPUT);
                    let w = u64::from(lo) | u64::from(hi) << 24;
                    [w as u16, (w >> 16) as u16, (w >> 32) as u16]
                })
                .collect(),
        )
    }

    /// Entry `k`: `[INPUT_BIT | input, _]` or `[bw arc, fw arc]`.
    #[inline(always)]
    pub fn get(&self, k: usize) -> [u32; 2] {
        match self {
            Entries::Narrow(v) => {
                let [a, b, c] = v[k];
                let w = u64::from(a) | u64::from(b) << 16 | u64::from(c) << 32;
                let (lo, hi) = (w as u32 & NARROW_INPUT, (w >> 24) as u32);
                if lo == NARROW_INPUT {
                    [INPUT_BIT | hi, NO_ENTRY]
                } else {
                    [lo, hi]
                }
            }
            Entries::Wide(v) => v[k],
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Entries::Narrow(v) => v.len(),
            Entries::Wide(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn memory_bytes(&self) -> usize {
        match self {
            Entries::Narrow(v) => 6 * v.len(),
            Entries::Wide(v) => 8 * v.len(),
        }
    }
}

impl PrunedGraph {
    pub fn memory_bytes(&self) -> usize {
        4 * (2 * self.first.len() + 2 * self.fw_arcs.len() + 2 * self.bw_arcs.len())
            + self.unpacking_bytes()
    }

    /// The `bw` side's kept arcs (the `fw` side's where it is their mirror).
    #[inline(always)]
    pub fn bw_arcs(&self) -> &[[u32; 2]] {
        if self.mirrored {
            &self.fw_arcs
        } else {
            &self.bw_arcs
        }
    }

    /// The unpacking entry of kept arc `k` of the `fw` (`up`) or the `bw` side.
    #[inline(always)]
    pub fn entry(&self, k: usize, up: bool) -> [u32; 2] {
        if up {
            return self.fw_unpack.get(k);
        }
        if !self.mirrored {
            return self.bw_unpack.get(k);
        }
        let [a, b] = self.fw_unpack.get(k);
        if a & INPUT_BIT != 0 {
            [INPUT_BIT | ((a & !INPUT_BIT) ^ 1), NO_ENTRY]
        } else {
            [b, a]
        }
    }

    /// Drops the `bw` side where it is the `fw` side's mirror (see [`Self::mirrored`]), checked
    /// arc by arc.
    fn mirror_if_symmetric(&mut self) {
        let symmetric = self.fw_arcs == self.bw_arcs
            && self.first.iter().all(|f| f[0] == f[1])
            && (0..self.fw_arcs.len()).all(|k| {
                let ([a0, a1], [b0, b1]) = (self.fw_unpack.get(k), self.bw_unpack.get(k));
                if a0 & INPUT_BIT != 0 {
                    b0 & INPUT_BIT != 0 && (a0 & !INPUT_BIT) ^ 1 == b0 & !INPUT_BIT
                } else {
                    b0 & INPUT_BIT == 0 && (a0, a1) == (b1, b0)
                }
            });
        if symmetric {
            self.bw_arcs = Vec::new();
            self.bw_unpack = Entries::Wide(Vec::new());
            self.mirrored = true;
        }
    }

    /// The kept arc `(x, y)` of the `fw` or the `bw` list (lists are sorted by head).
    #[inline]
    pub fn find(&self, x: u32, y: u32, fw: bool) -> Option<u32> {
        let arcs = if fw {
            &self.fw_arcs[..]
        } else {
            self.bw_arcs()
        };
        let (s, e) = self.range(x, usize::from(!fw));
        arcs[s..e]
            .binary_search_by_key(&y, |a| a[0])
            .ok()
            .map(|i| (s + i) as u32)
    }

    /// Node `x`'s kept arcs on side 0 (fw) or 1 (bw): a range of that side's arc lists.
    #[inline(always)]
    pub fn range(&self, x: u32, side: usize) -> (usize, usize) {
        (
            self.first[x as usize][side] as usize,
            self.first[x as usize + 1][side] as usize,
        )
    }

    /// The part of [`Self::memory_bytes`] held by unpacking entries.
    pub fn unpacking_bytes(&self) -> usize {
        self.fw_unpack.memory_bytes() + self.bw_unpack.memory_bytes()
    }
}

impl Cch {
    /// Perfect customization (every arc's weight becomes the distance between its endpoints), then
    /// the pruned query graph of the arcs it did not improve. Top-down over the elimination tree:
    /// an arc's weight is final once every arc above its lower endpoint is, and disjoint subtrees
    /// run in parallel.
    pub fn prune(&self, metric: &CustomizedMetric) -> PrunedGraph {
        let (basic_fw, basic_bw) = (metric.side_weights(0), metric.side_weights(1));
        let (mut pf, mut pb) = (basic_fw.clone(), basic_bw.clone());
        let raw = RawPair {
            fw: pf.as_mut_ptr(),
            bw: pb.as_mut_ptr(),
        };
        self.for_each_root(|r| self.perfect_subtree(r, &raw));
        let n = self.node_count();
        let build = |basic: &[Weight], perfect: &[Weight]| {
            let mut first = Vec::with_capacity(n + 1);
            let (mut arcs, mut ids) = (Vec::new(), Vec::new());
            first.push(0u32);
            for x in 0..n {
                for a in self.up_first[x] as usize..self.up_first[x + 1] as usize {
                    if perfect[a] < INF_WEIGHT && perfect[a] == basic[a] {
                        arcs.push([self.up_head[a], perfect[a]]);
                        ids.push(a as u32);
                    }
                }
                first.push(arcs.len() as u32);
            }
            (first, arcs, ids)
        };
        let (mut fw_first, mut fw_arcs, fw_cch) = build(&basic_fw, &pf);
        let (mut bw_first, mut bw_arcs, bw_cch) = build(&basic_bw, &pb);
        drop((pf, pb));
        let (mut fw_unpack, mut bw_unpack) =
            self.unpacking_entries(metric, &basic_fw, &basic_bw, &fw_cch, &bw_cch);
        if self.restricted {
            drop_unentried(
                [&mut fw_first, &mut bw_first],
                [&mut fw_arcs, &mut bw_arcs],
                [&mut fw_unpack, &mut bw_unpack],
            );
        }
        debug_assert!(
            fw_unpack.iter().chain(&bw_unpack).all(|e| e[0] != NO_ENTRY),
            "a kept arc without an unpacking entry"
        );
        let first = fw_first
            .into_iter()
            .zip(bw_first)
            .map(|(f, b)| [f, b])
            .collect();
        // Grown an arc at a time: up to twice the room they need (a third of walking's query
        // graph on the 4 × 4 tiling of New York), given back.
        fw_arcs.shrink_to_fit();
        bw_arcs.shrink_to_fit();
        let narrow = [fw_arcs.len(), bw_arcs.len(), self.input_count()]
            .iter()
            .all(|&c| c < NARROW_INPUT as usize);
        let mut pruned = PrunedGraph {
            first,
            fw_arcs,
            fw_unpack: Entries::new(fw_unpack, narrow),
            bw_arcs,
            bw_unpack: Entries::new(bw_unpack, narrow),
            mirrored: false,
        };
        pruned.mirror_if_symmetric();
        pruned
    }

    /// The unpacking entry of every kept arc (see [`PrunedGraph`]): the input arc whose weight it
    /// has, else the first lower triangle whose basic weights sum to it. Triangles are enumerated
    /// per lower endpoint as in basic customization, skipping the arcs below that no kept arc can
    /// use.
    fn unpacking_entries(
        &self,
        metric: &CustomizedMetric,
        fw: &[Weight],
        bw: &[Weight],
        fw_cch: &[u32],
        bw_cch: &[u32],
    ) -> (Vec<[u32; 2]>, Vec<[u32; 2]>) {
        let index = |kept: &[u32]| {
            let mut at = vec![NO_ENTRY; self.arc_count()];
            for (k, &a) in kept.iter().enumerate() {
                at[a as usize] = k as u32;
            }
            at
        };
        let (fw_at, bw_at) = (index(fw_cch), index(bw_cch));
        let mut fw_unpack = vec![[NO_ENTRY; 2]; fw_cch.len()];
        let mut bw_unpack = vec![[NO_ENTRY; 2]; bw_cch.len()];
        // By arc, each arc's input arcs in ascending order: the first that gives its weight.
        for a in 0..self.arc_count() {
            for (i, upward) in self.inputs_of.of(a) {
                let w = metric.input_weights[i as usize];
                let (at, weight, unpack) = if upward {
                    (&fw_at, fw, &mut fw_unpack)
                } else {
                    (&bw_at, bw, &mut bw_unpack)
                };
                let k = at[a];
                if k != NO_ENTRY && w == weight[a] && unpack[k as usize][0] == NO_ENTRY {
                    unpack[k as usize] = [INPUT_BIT | i, NO_ENTRY];
                }
            }
        }
        // Arcs (y, z) are written only by the task owning y: chunks of lower endpoints in parallel.
        let out = RawEntries {
            fw: fw_unpack.as_mut_ptr(),
            bw: bw_unpack.as_mut_ptr(),
        };
        use rayon::prelude::*;
        (0..self.node_count())
            .into_par_iter()
            .with_min_len(PARALLEL_NODES as usize)
            .for_each(|y| {
                SCRATCH.with(|cell| {
                    let mut pos = cell.borrow_mut();
                    if pos.len() < self.node_count() {
                        pos.resize(self.node_count(), 0);
                    }
                    let (s, e) = (self.up_first[y] as usize, self.up_first[y + 1] as usize);
                    for a in s..e {
                        pos[self.up_head[a] as usize] = a as u32;
                    }
                    let (ds, de) = (self.down_first[y] as usize, self.down_first[y + 1] as usize);
                    for (&off, &x) in self.down_off[ds..de].iter().zip(&self.down_tail[ds..de]) {
                        let x = x as usize;
                        let xy = self.up_first[x] as usize + off as usize;
                        // (x, y) travelled down (y → x) or up (x → y) in the triangles of y's arcs.
                        let (down, up) = (bw_at[xy], fw_at[xy]);
                        if down == NO_ENTRY && up == NO_ENTRY {
                            continue;
                        }
                        for xz in xy + 1..self.up_first[x + 1] as usize {
                            // y → x → z gives fw of (y, z): (x, y) down, (x, z) up; z → x → y
                            // gives its bw: (x, z) down, (x, y) up. Both arcs must be kept.
                            let (fz, bz) = (fw_at[xz], bw_at[xz]);
                            let via_fw = down != NO_ENTRY && fz != NO_ENTRY;
                            let via_bw = up != NO_ENTRY && bz != NO_ENTRY;
                            if !via_fw && !via_bw {
                                continue;
                            }
                            let Some(b) = self.scratch_arc(&pos, s, e, self.up_head[xz]) else {
                                continue;
                            };
                            // SAFETY: `b` is an arc of `y`, owned by this task; the kept indices
                            // are in bounds of their lists.
                            unsafe {
                                let kb = fw_at[b];
                                if via_fw
                                    && kb != NO_ENTRY
                                    && (*out.fw().add(kb as usize))[0] == NO_ENTRY
                                    && add(bw[xy], fw[xz]) == fw[b]
                                {
                                    *out.fw().add(kb as usize) = [down, fz];
                                }
                                let kb = bw_at[b];
                                if via_bw
                                    && kb != NO_ENTRY
                                    && (*out.bw().add(kb as usize))[0] == NO_ENTRY
                                    && add(bw[xz], fw[xy]) == bw[b]
                                {
                                    *out.bw().add(kb as usize) = [bz, up];
                                }
                            }
                        }
                    }
                })
            });
        (fw_unpack, bw_unpack)
    }

    /// Arc `(y, z)` of the node `y` whose upward arcs are `s..e`, through the scratch map `pos`
    /// filled from them. A restricted hierarchy may lack it; `pos[z]` then holds what was written
    /// there last, an arc of another node or of another hierarchy worked on this thread (walking's
    /// beside cycling's, a full hierarchy beside its restriction), which can fall in `s..e`: the
    /// arc's head is checked too.
    #[inline(always)]
    fn scratch_arc(&self, pos: &[u32], s: usize, e: usize, z: u32) -> Option<usize> {
        let b = pos[z as usize] as usize;
        (b.wrapping_sub(s) < e - s && self.up_head[b] == z).then_some(b)
    }

    fn perfect_subtree(&self, root: u32, raw: &RawPair) {
        let lo = root + 1 - self.subtree_size[root as usize];
        if self.subtree_size[root as usize] < PARALLEL_NODES {
            self.perfect_ranks(lo, root, raw);
            return;
        }
        // Top down: the chain from `root` down to the branching node first, then the children in
        // parallel.
        let (x, kids) = self.branching_below(root);
        self.perfect_ranks(x, root, raw);
        rayon::scope(|s| {
            for &c in kids {
                s.spawn(move |_| self.perfect_subtree(c, raw));
            }
        });
    }

    /// Perfect customization of the arcs whose lower endpoint lies in `lo..=hi`, top down: each
    /// arc (y, z) tightens the two arcs below it in every lower triangle (enumerated per `y` as in
    /// [`Cch::relax_ranks`]).
    fn perfect_ranks(&self, lo: u32, hi: u32, raw: &RawPair) {
        SCRATCH.with(|cell| {
            let mut pos = cell.borrow_mut();
            if pos.len() < self.node_count() {
                pos.resize(self.node_count(), 0);
            }
            for y in (lo as usize..=hi as usize).rev() {
                let (s, e) = (self.up_first[y] as usize, self.up_first[y + 1] as usize);
                if s == e {
                    continue;
                }
                for a in s..e {
                    pos[self.up_head[a] as usize] = a as u32;
                }
                // SAFETY: as in `relax_ranks`, with the roles reversed: this task writes only arcs
                // whose lower endpoint lies in its subtree and reads arcs above them, which are final.
                unsafe {
                    let (ds, de) = (self.down_first[y] as usize, self.down_first[y + 1] as usize);
                    for (&off, &x) in self.down_off[ds..de].iter().zip(&self.down_tail[ds..de]) {
                        let x = x as usize;
                        let xy = *self.up_first.get_unchecked(x) as usize + off as usize;
                        let xe = *self.up_first.get_unchecked(x + 1) as usize;
                        for xz in xy + 1..xe {
                            // A restricted hierarchy may lack (y, z): every sum through it is
                            // infinite then.
                            let Some(b) =
                                self.scratch_arc(&pos, s, e, *self.up_head.get_unchecked(xz))
                            else {
                                continue;
                            };
                            let (fb, bb) = (*raw.fw.add(b), *raw.bw.add(b));
                            let (fxy, bxy) = (*raw.fw.add(xy), *raw.bw.add(xy));
                            let (fxz, bxz) = (*raw.fw.add(xz), *raw.bw.add(xz));
                            // x → y → z, z → y → x, x → z → y, y → z → x. Improvements are
                            // rare: predicted branches beat writing every minimum.
                            let (a, b, c, d) =
                                (add(fxy, fb), add(bb, bxy), add(fxz, bb), add(fb, bxz));
                            if a < fxz {
                                *raw.fw.add(xz) = a;
                            }
                            if b < bxz {
                                *raw.bw.add(xz) = b;
                            }
                            if c < fxy {
                                *raw.fw.add(xy) = c;
                            }
                            if d < bxy {
                                *raw.bw.add(xy) = d;
                            }
                        }
                    }
                }
            }
        })
    }
}

struct RawEntries {
    fw: *mut [u32; 2],
    bw: *mut [u32; 2],
}
impl RawEntries {
    // Methods, so that closures capture the whole (Sync) struct rather than its pointer fields.
    fn fw(&self) -> *mut [u32; 2] {
        self.fw
    }
    fn bw(&self) -> *mut [u32; 2] {
        self.bw
    }
}
// SAFETY: shared only inside `unpacking_entries`, where tasks write the entries of disjoint arcs.
unsafe impl Sync for RawEntries {}
unsafe impl Send for RawEntries {}

struct RawPair {
    fw: *mut Weight,
    bw: *mut Weight,
}
// SAFETY: shared only inside `prune`, where tasks touch disjoint arc ranges.
unsafe impl Sync for RawPair {}
unsafe impl Send for RawPair {}

/// On a restricted hierarchy perfect customization can miss an improvement (through an arc dropped
/// there because it is infinite bottom-up, though not through higher nodes) and keep an arc whose
/// weight exceeds the distance between its ends. Such an arc is on no shortest path (a path through
/// it is longer than one through its ends' distance), and the arcs its weight came from may be
/// gone. The kept arcs without an unpacking entry, and those whose entry names one of them, and so
/// on, are taken out of the lists `[fw, bw]`, and the entries renumbered. An arc of true distance
/// is never among them: its triangle's arcs are of true distance too. (On New York, 0.7 % of the
/// arcs.)
fn drop_unentried(
    first: [&mut Vec<u32>; 2],
    arcs: [&mut Vec<[u32; 2]>; 2],
    unpack: [&mut Vec<[u32; 2]>; 2],
) {
    // A triangle's entry is [bw arc, fw arc]; an input's has the flag bit (NO_ENTRY has it too).
    let triangle = |e: [u32; 2]| e[0] & INPUT_BIT == 0;
    let mut bad: [Vec<bool>; 2] =
        [0, 1].map(|s| unpack[s].iter().map(|e| e[0] == NO_ENTRY).collect());
    loop {
        let mut changed = false;
        for side in 0..2 {
            for k in 0..unpack[side].len() {
                let e = unpack[side][k];
                if !bad[side][k] && triangle(e) && (bad[1][e[0] as usize] || bad[0][e[1] as usize])
                {
                    bad[side][k] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    if bad.iter().all(|b| !b.contains(&true)) {
        return;
    }
    // New index of each kept arc per side (`u32::MAX` if dropped).
    let new_index: [Vec<u32>; 2] = [0, 1].map(|s| {
        let mut next = 0u32;
        bad[s]
            .iter()
            .map(|&b| {
                if b {
                    u32::MAX
                } else {
                    next += 1;
                    next - 1
                }
            })
            .collect()
    });
    let [first_fw, first_bw] = first;
    for (side, first) in [first_fw, first_bw].into_iter().enumerate() {
        let old = first.clone();
        let mut kept = 0u32;
        for x in 0..old.len() - 1 {
            first[x] = kept;
            kept += (old[x]..old[x + 1])
                .filter(|&k| !bad[side][k as usize])
                .count() as u32;
        }
        *first.last_mut().unwrap() = kept;
    }
    let [arcs_fw, arcs_bw] = arcs;
    let [unpack_fw, unpack_bw] = unpack;
    for (side, (arcs, unpack)) in [(arcs_fw, unpack_fw), (arcs_bw, unpack_bw)]
        .into_iter()
        .enumerate()
    {
        let mut k = 0;
        arcs.retain(|_| {
            k += 1;
            !bad[side][k - 1]
        });
        let mut k = 0;
        unpack.retain(|_| {
            k += 1;
            !bad[side][k - 1]
        });
        for e in unpack.iter_mut().filter(|e| triangle(**e)) {
            *e = [new_index[1][e[0] as usize], new_index[0][e[1] as usize]];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Narrow entries read back as the wide ones they were made from: triangles of arcs up to the
    /// largest index a field holds, and input arcs.
    #[test]
    fn narrow_entries_read_as_wide() {
        let mut rng = crate::testing::Rng(7);
        let top = NARROW_INPUT - 1;
        let mut wide = vec![
            [0, 0],
            [top, top],
            [INPUT_BIT, NO_ENTRY],
            [INPUT_BIT | top, NO_ENTRY],
        ];
        for _ in 0..1000 {
            let (a, b) = (
                rng.below(u64::from(NARROW_INPUT)) as u32,
                rng.below(u64::from(NARROW_INPUT)) as u32,
            );
            wide.push(if rng.below(3) == 0 {
                [INPUT_BIT | a, NO_ENTRY]
            } else {
                [a, b]
            });
        }
        for narrow in [true, false] {
            let e = Entries::new(wide.clone(), narrow);
            assert_eq!(e.len(), wide.len());
            assert_eq!(e.memory_bytes(), wide.len() * if narrow { 6 } else { 8 });
            for (k, &w) in wide.iter().enumerate() {
                assert_eq!(e.get(k), w, "entry {k}");
            }
        }
    }
}
