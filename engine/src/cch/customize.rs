//! Customization: basic (every shortcut weight from the input weights, bottom up over the
//! elimination tree, subtrees in parallel) and partial (a few changed input arcs re-customize only
//! what they affect).

use super::cow::CowVec;
use super::{Cch, INF_WEIGHT, IdHash, PARALLEL_NODES, PrunedGraph, SCRATCH, Weight, add};
use crate::graph::ArcId;

impl Cch {
    /// Respects one input arc's weight on its CCH arc (the minimum over parallel arcs wins).
    #[inline]
    fn seed(&self, input: usize, w: Weight, m: &mut CustomizedMetric) {
        let arc = self.input_cch_arc[input];
        if arc == u32::MAX {
            return;
        }
        let a = arc as usize;
        if self.input_upward[input] {
            if w < m.fw[a] {
                m.fw.set(a, w);
            }
        } else if w < m.bw[a] {
            m.bw.set(a, w);
        }
    }

    /// Basic customization: input weights (one per input arc, INF = impassable) → shortcut weights.
    /// Independent elimination subtrees are customized in parallel.
    pub fn customize(&self, input_weights: &[Weight]) -> CustomizedMetric {
        let m = self.arc_count();
        let (mut fw, mut bw) = (vec![INF_WEIGHT; m], vec![INF_WEIGHT; m]);
        for (i, &w) in input_weights.iter().enumerate() {
            let arc = self.input_cch_arc[i];
            if arc == u32::MAX {
                continue;
            }
            let weight = if self.input_upward[i] {
                &mut fw[arc as usize]
            } else {
                &mut bw[arc as usize]
            };
            *weight = (*weight).min(w);
        }
        let raw = RawMetric {
            fw: fw.as_mut_ptr(),
            bw: bw.as_mut_ptr(),
        };
        let roots = self.roots();
        rayon::scope(|s| {
            for &r in &roots {
                let raw = &raw;
                s.spawn(move |_| self.customize_subtree(r, raw));
            }
        });
        // Stored in shared chunks, so the metrics derived from this one by live changes copy only
        // what they change (crate::cch::cow).
        let (fw, bw) = rayon::join(|| CowVec::from_slice(&fw), || CowVec::from_slice(&bw));
        CustomizedMetric {
            fw,
            bw,
            input_weights: CowVec::from_slice(input_weights),
            pruned: std::sync::OnceLock::new(),
            uses: Default::default(),
        }
    }

    /// Customizes the subtree below and including `root`: children's subtrees first (in parallel when
    /// large), then the chain up to `root`. Subtrees are disjoint rank ranges, hence disjoint arc ranges.
    fn customize_subtree(&self, root: u32, raw: &RawMetric) {
        let lo = root + 1 - self.subtree_size[root as usize];
        if self.subtree_size[root as usize] < PARALLEL_NODES {
            self.relax_ranks(lo, root, raw);
            return;
        }
        // Children first, in parallel; then the chain from the branching node up to `root`.
        let (x, kids) = self.branching_below(root);
        rayon::scope(|s| {
            for &c in kids {
                s.spawn(move |_| self.customize_subtree(c, raw));
            }
        });
        self.relax_ranks(x, root, raw);
    }

    /// Relaxes the lower triangles of every arc whose lower endpoint lies in `lo..=hi`, in order.
    /// Per lower endpoint `y`: each arc `(x, y)` below it forms a triangle with every later arc
    /// `(x, z)` of `x`'s upward list, and `(y, z)` is found through a scratch map from `z` to the
    /// arc, so the work is one step per triangle with no triangle list read from memory.
    fn relax_ranks(&self, lo: u32, hi: u32, raw: &RawMetric) {
        SCRATCH.with(|cell| {
            let mut pos = cell.borrow_mut();
            if pos.len() < self.node_count() {
                pos.resize(self.node_count(), 0);
            }
            for y in lo..=hi {
                // SAFETY: tasks own disjoint rank ranges; every arc this touches (the arcs of y and
                // the arcs of the x below y) has its lower endpoint in this task's subtree, so no
                // two threads write or read-while-writing the same element.
                unsafe { self.relax_node(y as usize, raw, &mut pos) };
            }
        })
    }

    #[inline(always)]
    unsafe fn relax_node(&self, y: usize, m: &RawMetric, pos: &mut [u32]) {
        let (s, e) = (self.up_first[y] as usize, self.up_first[y + 1] as usize);
        if s == e {
            return;
        }
        for a in s..e {
            pos[self.up_head[a] as usize] = a as u32;
        }
        let (ds, de) = (self.down_first[y] as usize, self.down_first[y + 1] as usize);
        unsafe {
            for &xy in self.down_arc.get_unchecked(ds..de) {
                let x = *self.arc_tail.get_unchecked(xy as usize) as usize;
                let (fxy, bxy) = (*m.fw.add(xy as usize), *m.bw.add(xy as usize));
                if fxy >= INF_WEIGHT && bxy >= INF_WEIGHT {
                    continue;
                }
                let xe = *self.up_first.get_unchecked(x + 1) as usize;
                for k in xy as usize + 1..xe {
                    let b = *pos.get_unchecked(*self.up_head.get_unchecked(k) as usize) as usize;
                    // Improvements are rare: a predicted branch beats writing every minimum.
                    let f = add(bxy, *m.fw.add(k));
                    if f < *m.fw.add(b) {
                        *m.fw.add(b) = f;
                    }
                    let r = add(*m.bw.add(k), fxy);
                    if r < *m.bw.add(b) {
                        *m.bw.add(b) = r;
                    }
                }
            }
        }
    }

    /// Relaxes the lower triangles of one arc (partial customization).
    fn relax_triangles(&self, b: usize, metric: &mut CustomizedMetric) {
        let (mut fw, mut bw) = (metric.fw[b], metric.bw[b]);
        self.for_each_lower_triangle(b as u32, |xy, xz| {
            let (xy, xz) = (xy as usize, xz as usize);
            fw = fw.min(add(metric.bw[xy], metric.fw[xz]));
            bw = bw.min(add(metric.bw[xz], metric.fw[xy]));
        });
        metric.fw.set(b, fw);
        metric.bw.set(b, bw);
    }

    /// Recomputes one CCH arc from its input arcs and lower triangles.
    fn recompute(&self, a: usize, metric: &mut CustomizedMetric) {
        metric.fw.set(a, INF_WEIGHT);
        metric.bw.set(a, INF_WEIGHT);
        for &i in self.inputs_of.of(a) {
            let w = metric.input_weights[i as usize];
            self.seed(i as usize, w, metric);
        }
        self.relax_triangles(a, metric);
    }

    /// CCH arc → the input arcs mapped onto it (for partial customization and unpacking).
    pub(super) fn inputs_by_arc(&self) -> InputsByArc {
        let mut first = vec![0u32; self.arc_count() + 1];
        for &a in &self.input_cch_arc {
            if a != u32::MAX {
                first[a as usize + 1] += 1;
            }
        }
        for a in 0..self.arc_count() {
            first[a + 1] += first[a];
        }
        let mut next = first.clone();
        let mut inputs = vec![0u32; first[self.arc_count()] as usize];
        for (i, &a) in self.input_cch_arc.iter().enumerate() {
            if a != u32::MAX {
                inputs[next[a as usize] as usize] = i as u32;
                next[a as usize] += 1;
            }
        }
        InputsByArc { first, inputs }
    }

    /// Partial customization: applies new weights of a few input arcs and re-customizes only what
    /// they affect. Arcs are processed in ascending id (every arc an arc influences has a larger
    /// lower endpoint, hence a larger id). When an arc's weight changes, each arc it forms a lower
    /// triangle with is fixed in O(1) if the triangle got cheaper, and recomputed from all its
    /// triangles only if its weight came from this triangle and the triangle got dearer.
    ///
    /// Invariant: every arc not marked for recomputation holds the minimum over its input arcs
    /// and its triangles, each triangle summed from the weights its arcs have announced (the
    /// current weight once an arc has been processed, the weight before this update until then).
    pub fn update(&self, metric: &mut CustomizedMetric, changes: &[(ArcId, Weight)]) {
        assert!(
            metric.has_shortcut_weights(),
            "a query-only metric cannot be updated"
        );
        metric.pruned = std::sync::OnceLock::new();
        let words = self.arc_count().div_ceil(64);
        let mut pending = vec![0u64; words];
        let mut recompute = vec![0u64; words];
        let set = |d: &mut [u64], a: u32| d[a as usize >> 6] |= 1 << (a & 63);
        let get = |d: &[u64], a: u32| d[a as usize >> 6] & (1 << (a & 63)) != 0;
        // Weights of arcs changed before their turn, as they were (`modified` marks the keys, so
        // the common case, an untouched arc, costs one bit test).
        let mut old: std::collections::HashMap<u32, (Weight, Weight), IdHash> = Default::default();
        let mut modified = vec![0u64; words];
        let mut first = usize::MAX;
        for &(input, w) in changes {
            metric.input_weights.set(input as usize, w);
            let a = self.input_cch_arc[input as usize];
            if a != u32::MAX {
                set(&mut pending, a);
                set(&mut recompute, a);
                first = first.min(a as usize >> 6);
            }
        }
        if first == usize::MAX {
            return;
        }
        for word in first..words {
            while pending[word] != 0 {
                let bit = pending[word].trailing_zeros();
                pending[word] &= pending[word] - 1;
                let a = (word << 6) as u32 | bit;
                let au = a as usize;
                let (ofw, obw) = if get(&modified, a) {
                    old[&a]
                } else {
                    (metric.fw[au], metric.bw[au])
                };
                if get(&recompute, a) {
                    self.recompute(au, metric);
                }
                let (nfw, nbw) = (metric.fw[au], metric.bw[au]);
                if nfw == ofw && nbw == obw {
                    continue;
                }
                // Arc a = (x, y) forms the lower triangle of arc (min(y,z), max(y,z)) with (x, z),
                // for every other z in up(x).
                let x = self.arc_tail[au] as usize;
                let y = self.up_head[au];
                let (ys, ye) = (
                    self.up_first[y as usize] as usize,
                    self.up_first[y as usize + 1] as usize,
                );
                let mut yp = ys;
                // (z, y) for z below y: in y's downward list, ascending by z like up(x).
                let (mut dp, de) = (
                    self.down_first[y as usize] as usize,
                    self.down_first[y as usize + 1] as usize,
                );
                for i in self.up_first[x] as usize..self.up_first[x + 1] as usize {
                    let z = self.up_head[i];
                    if z == y {
                        continue;
                    }
                    // The triangle's arcs at x to the lower and the higher endpoint of b.
                    let (b, lo, hi) = if z > y {
                        // (y, z) in up(y): both lists ascend, so one forward walk finds them all.
                        while self.up_head[yp] < z {
                            yp += 1;
                        }
                        debug_assert!(yp < ye && self.up_head[yp] == z);
                        (yp, au, i)
                    } else {
                        // Likewise (z, y) in down(y): the chordal supergraph holds it.
                        while self.down_tail[dp] < z {
                            dp += 1;
                        }
                        debug_assert!(dp < de && self.down_tail[dp] == z);
                        (self.down_arc[dp] as usize, i, au)
                    };
                    if get(&recompute, b as u32) {
                        continue;
                    }
                    // Sums through x with a's new and old weights. The other arc's weight is the
                    // one its partners know: if it is still to come (a higher id) and has already
                    // changed, its change is announced later, against the weight it had before.
                    let (nf, nb, of, ob) = if lo == au {
                        let (hf, hb) = if get(&modified, hi as u32) {
                            old[&(hi as u32)]
                        } else {
                            (metric.fw[hi], metric.bw[hi])
                        };
                        (add(nbw, hf), add(hb, nfw), add(obw, hf), add(hb, ofw))
                    } else {
                        let (lf, lb) = (metric.fw[lo], metric.bw[lo]);
                        (add(lb, nfw), add(nbw, lf), add(lb, ofw), add(obw, lf))
                    };
                    let (cf, cb) = (metric.fw[b], metric.bw[b]);
                    if (of == cf && nf > of) || (ob == cb && nb > ob) {
                        if !get(&modified, b as u32) {
                            set(&mut modified, b as u32);
                            old.insert(b as u32, (cf, cb));
                        }
                        set(&mut recompute, b as u32);
                        set(&mut pending, b as u32);
                    } else if nf < cf || nb < cb {
                        if !get(&modified, b as u32) {
                            set(&mut modified, b as u32);
                            old.insert(b as u32, (cf, cb));
                        }
                        if nf < cf {
                            metric.fw.set(b, nf);
                        }
                        if nb < cb {
                            metric.bw.set(b, nb);
                        }
                        set(&mut pending, b as u32);
                    }
                }
            }
        }
    }
}

/// CCH arc → the input arcs mapped onto it, in CSR form: 4 bytes an arc and an input. (A vector per
/// arc took 24 bytes an arc before any input, about 63 MB on New York, which the memory report did
/// not count.)
#[derive(Default)]
pub struct InputsByArc {
    first: Vec<u32>,
    inputs: Vec<u32>,
}

impl InputsByArc {
    /// The input arcs mapped onto CCH arc `a`.
    #[inline]
    pub fn of(&self, a: usize) -> &[u32] {
        &self.inputs[self.first[a] as usize..self.first[a + 1] as usize]
    }

    pub fn memory_bytes(&self) -> usize {
        4 * (self.first.len() + self.inputs.len())
    }
}

/// Raw views of a metric's arrays for the parallel customization.
struct RawMetric {
    fw: *mut Weight,
    bw: *mut Weight,
}
// SAFETY: shared only inside `customize`, where tasks touch disjoint arc ranges.
unsafe impl Sync for RawMetric {}
unsafe impl Send for RawMetric {}

/// Shortcut weights of one metric. How a weight arises is not stored: a path is unpacked from the
/// pruned query graph's entries once that exists, and by searching for the triangle whose sum
/// gave each weight until then (see `unpack.rs`).
pub struct CustomizedMetric {
    pub fw: CowVec<Weight>,
    pub bw: CowVec<Weight>,
    /// The input weights this metric was customized with (shared chunks like the shortcut weights:
    /// a copy made for a live change costs the chunks the change writes, not 5 MB on New York).
    pub input_weights: CowVec<Weight>,
    /// The pruned query graph, once [`Cch::prune`] has run for these weights; queries use it when
    /// present and the full hierarchy until then (a fresh metric is routable at once).
    pub pruned: std::sync::OnceLock<PrunedGraph>,
    /// Queries run on this metric (see `City`), to prune only metrics in steady use.
    pub uses: std::sync::atomic::AtomicU32,
}

/// A copy carries the weights, not the pruned graph: copies are made to be changed.
impl Clone for CustomizedMetric {
    fn clone(&self) -> Self {
        CustomizedMetric {
            fw: self.fw.clone(),
            bw: self.bw.clone(),
            input_weights: self.input_weights.clone(),
            pruned: std::sync::OnceLock::new(),
            uses: Default::default(),
        }
    }
    fn clone_from(&mut self, source: &Self) {
        self.fw.clone_from(&source.fw);
        self.bw.clone_from(&source.bw);
        self.input_weights.clone_from(&source.input_weights);
        self.pruned = std::sync::OnceLock::new();
        self.uses = Default::default();
    }
}

impl CustomizedMetric {
    pub fn memory_bytes(&self) -> usize {
        4 * (self.fw.len() + self.bw.len() + self.input_weights.len())
            + self.pruned.get().map_or(0, PrunedGraph::memory_bytes)
    }

    /// Builds the pruned query graph if it is not there yet.
    pub fn prepare_queries(&self, cch: &Cch) -> &PrunedGraph {
        self.pruned.get_or_init(|| cch.prune(self))
    }

    /// The metric pruned for queries, without the shortcut weights that only partial
    /// customization and unpacking on the full hierarchy read: for a metric no live change ever
    /// touches (walking's), 21 MB less on New York. It routes and unpacks through its pruned
    /// graph; it cannot be updated, and a copy of it carries no weights.
    pub fn query_only(mut self, cch: &Cch) -> CustomizedMetric {
        self.prepare_queries(cch);
        self.fw = CowVec::from_slice(&[]);
        self.bw = CowVec::from_slice(&[]);
        self
    }

    /// Whether the shortcut weights are here (see [`Self::query_only`]).
    pub fn has_shortcut_weights(&self) -> bool {
        !self.fw.is_empty()
    }
}
