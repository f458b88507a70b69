//! Customizable contraction hierarchy (Dibbelt, Strasser & Wagner), after RoutingKit's CCH.
//!
//! Three phases: [`Cch::new`] builds the metric-independent topology from a nested-dissection order
//! (the chordal supergraph in rank space, its elimination tree and each node's downward arcs, from
//! which lower triangles are enumerated when needed rather than stored);
//! [`Cch::customize`] turns per-input-arc weights into a [`CustomizedMetric`] in milliseconds;
//! [`CustomizedMetric::update`] re-customizes only what a few changed arcs affect. Queries live in
//! `query.rs`.
//!
//! Ids: nodes are ranks (`rank[node]`); a CCH arc `(x, y)` with `x < y` is stored once in `x`'s upward
//! list; `fw` is the weight of travelling `x → y`, `bw` of `y → x`.

use crate::cow::CowVec;
use crate::graph::{ArcId, NodeId};

pub type Weight = u32;
pub const INF_WEIGHT: Weight = u32::MAX / 2;

/// Subtrees smaller than this are customized by one task.
const PARALLEL_NODES: u32 = 2048;

/// Saturating addition that keeps INF at INF.
#[inline(always)]
pub fn add(a: Weight, b: Weight) -> Weight {
    a.saturating_add(b).min(INF_WEIGHT)
}

pub struct Cch {
    /// rank → node and node → rank.
    pub order: Vec<NodeId>,
    pub rank: Vec<u32>,
    /// Upward adjacency in rank space (CSR), heads sorted ascending.
    pub up_first: Vec<u32>,
    pub up_head: Vec<u32>,
    /// Elimination-tree parent of each rank (`u32::MAX` for roots).
    pub etree_parent: Vec<u32>,
    /// Downward adjacency (CSR by upper endpoint): the arcs `(x, y)` into each `y`, ascending `x`.
    /// The lower triangles of arc `(y, z)` are the `x` below `y` whose upward list holds `z`; they
    /// are enumerated from here instead of stored (a stored triangle list is eight bytes a triangle,
    /// 30 times the arcs on a turn graph, and customization is bound by reading it).
    pub down_first: Vec<u32>,
    pub down_arc: Vec<u32>,
    /// The lower endpoint `x` of each `down_arc` entry (lists are intersected by it).
    pub down_tail: Vec<u32>,
    /// The number of lower triangles (for statistics).
    triangles: usize,
    /// Input arc → CCH arc and whether the input arc runs upward (`lo → hi`). `u32::MAX` for loops.
    pub input_cch_arc: Vec<u32>,
    pub input_upward: Vec<bool>,
    /// CCH arc → lower endpoint (rank), for partial customization.
    pub arc_tail: Vec<u32>,
    /// Elimination tree: subtree sizes and children (CSR), for parallel customization.
    pub subtree_size: Vec<u32>,
    child_first: Vec<u32>,
    child: Vec<u32>,
}

impl Cch {
    /// Builds the topology. `tails`/`heads` are the input graph's edges (one per undirected edge);
    /// input arc `2e` runs tail→head, `2e+1` head→tail. The order is first renumbered to a postorder
    /// of its elimination tree (same fill-in), so every subtree is a contiguous range of ranks and
    /// subtrees can be customized in parallel.
    pub fn new(node_count: usize, tails: &[NodeId], heads: &[NodeId], order: &[NodeId]) -> Cch {
        let first = Cch::build(node_count, tails, heads, order);
        let n = node_count;
        let children = first.children();
        let mut post = Vec::with_capacity(n);
        let mut stack: Vec<(u32, bool)> = Vec::new();
        for root in (0..n as u32).filter(|&x| first.etree_parent[x as usize] == u32::MAX) {
            stack.push((root, false));
            while let Some((x, expanded)) = stack.pop() {
                if expanded {
                    post.push(first.order[x as usize]);
                } else {
                    stack.push((x, true));
                    for &c in children.1
                        [children.0[x as usize] as usize..children.0[x as usize + 1] as usize]
                        .iter()
                        .rev()
                    {
                        stack.push((c, false));
                    }
                }
            }
        }
        Cch::build(node_count, tails, heads, &post)
    }

    /// Elimination-tree children (CSR): (first, child ranks).
    fn children(&self) -> (Vec<u32>, Vec<u32>) {
        let n = self.node_count();
        let mut first = vec![0u32; n + 1];
        for &p in &self.etree_parent {
            if p != u32::MAX {
                first[p as usize + 1] += 1;
            }
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut fill = first.clone();
        let mut kids = vec![0u32; first[n] as usize];
        for (x, &p) in self.etree_parent.iter().enumerate() {
            if p != u32::MAX {
                kids[fill[p as usize] as usize] = x as u32;
                fill[p as usize] += 1;
            }
        }
        (first, kids)
    }

    fn build(node_count: usize, tails: &[NodeId], heads: &[NodeId], order: &[NodeId]) -> Cch {
        let n = node_count;
        assert_eq!(order.len(), n, "order must be a permutation of the nodes");
        let mut rank = vec![0u32; n];
        for (r, &v) in order.iter().enumerate() {
            rank[v as usize] = r as u32;
        }
        // Upward neighbour sets of the input graph in rank space.
        let mut up: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (&t, &h) in tails.iter().zip(heads) {
            let (a, b) = (rank[t as usize], rank[h as usize]);
            if a != b {
                up[a.min(b) as usize].push(a.max(b));
            }
        }
        // Chordal completion along the elimination tree: the upward neighbours of x form a clique,
        // which it suffices to pass on to x's lowest upward neighbour (its parent).
        let mut etree_parent = vec![u32::MAX; n];
        for x in 0..n {
            let mut list = std::mem::take(&mut up[x]);
            list.sort_unstable();
            list.dedup();
            if let Some((&p, rest)) = list.split_first() {
                etree_parent[x] = p;
                if !rest.is_empty() {
                    let parent_list = &mut up[p as usize];
                    parent_list.extend_from_slice(rest);
                }
            }
            up[x] = list;
        }
        let mut up_first = Vec::with_capacity(n + 1);
        up_first.push(0u32);
        let mut up_head = Vec::new();
        for list in &up {
            up_head.extend_from_slice(list);
            up_first.push(up_head.len() as u32);
        }
        drop(up);
        let m = up_head.len();
        let mut arc_tail = vec![0u32; m];
        for x in 0..n {
            for a in up_first[x]..up_first[x + 1] {
                arc_tail[a as usize] = x as u32;
            }
        }
        let find_arc = |lo: u32, hi: u32| -> u32 {
            let (s, e) = (
                up_first[lo as usize] as usize,
                up_first[lo as usize + 1] as usize,
            );
            s as u32
                + up_head[s..e]
                    .binary_search(&hi)
                    .expect("chordal supergraph arc") as u32
        };
        // Downward arcs per upper endpoint; filling in arc order sorts each list by lower endpoint.
        let mut down_first = vec![0u32; n + 1];
        for &y in &up_head {
            down_first[y as usize + 1] += 1;
        }
        for y in 0..n {
            down_first[y + 1] += down_first[y];
        }
        let mut fill = down_first.clone();
        let mut down_arc = vec![0u32; m];
        let mut down_tail = vec![0u32; m];
        for (a, &y) in up_head.iter().enumerate() {
            down_arc[fill[y as usize] as usize] = a as u32;
            down_tail[fill[y as usize] as usize] = arc_tail[a];
            fill[y as usize] += 1;
        }
        drop(fill);
        let triangles = (0..n)
            .map(|x| {
                let k = (up_first[x + 1] - up_first[x]) as usize;
                k * k.saturating_sub(1) / 2
            })
            .sum();
        let mut input_cch_arc = vec![u32::MAX; 2 * tails.len()];
        let mut input_upward = vec![false; 2 * tails.len()];
        for (e, (&t, &h)) in tails.iter().zip(heads).enumerate() {
            let (a, b) = (rank[t as usize], rank[h as usize]);
            if a == b {
                continue;
            }
            let arc = find_arc(a.min(b), a.max(b));
            input_cch_arc[2 * e] = arc;
            input_cch_arc[2 * e + 1] = arc;
            input_upward[2 * e] = a < b;
            input_upward[2 * e + 1] = b < a;
        }
        let mut subtree_size = vec![1u32; n];
        for x in 0..n {
            let p = etree_parent[x];
            if p != u32::MAX {
                subtree_size[p as usize] += subtree_size[x];
            }
        }
        let mut cch = Cch {
            order: order.to_vec(),
            rank,
            up_first,
            up_head,
            etree_parent,
            down_first,
            down_arc,
            down_tail,
            triangles,
            input_cch_arc,
            input_upward,
            arc_tail,
            subtree_size,
            child_first: vec![],
            child: vec![],
        };
        let (cf, c) = cch.children();
        cch.child_first = cf;
        cch.child = c;
        cch
    }

    pub fn node_count(&self) -> usize {
        self.rank.len()
    }
    pub fn arc_count(&self) -> usize {
        self.up_head.len()
    }
    pub fn triangle_count(&self) -> usize {
        self.triangles
    }

    /// The lower triangles of arc `b = (y, z)`: pairs of arcs `(x, y)`, `(x, z)`, ascending `x`
    /// (the nodes below both ends: the shorter downward list searched in the longer).
    pub fn lower_triangles(&self, b: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let (y, z) = (
            self.arc_tail[b as usize] as usize,
            self.up_head[b as usize] as usize,
        );
        let range = |v: usize| self.down_first[v] as usize..self.down_first[v + 1] as usize;
        let (ry, rz) = (range(y), range(z));
        let y_shorter = ry.len() <= rz.len();
        let (short, long) = if y_shorter { (ry, rz) } else { (rz, ry) };
        let long_tails = &self.down_tail[long.clone()];
        short.filter_map(move |i| {
            let x = self.down_tail[i];
            let j = long.start + long_tails.binary_search(&x).ok()?;
            let (xs, xl) = (self.down_arc[i], self.down_arc[j]);
            Some(if y_shorter { (xs, xl) } else { (xl, xs) })
        })
    }

    /// Bytes held by the topology.
    pub fn memory_bytes(&self) -> usize {
        4 * (self.order.len()
            + self.rank.len()
            + self.up_first.len()
            + self.up_head.len()
            + self.etree_parent.len()
            + self.down_first.len()
            + self.down_arc.len()
            + self.down_tail.len()
            + self.input_cch_arc.len()
            + self.arc_tail.len())
            + self.input_upward.len()
    }

    fn find_arc(&self, lo: u32, hi: u32) -> Option<u32> {
        let (s, e) = (
            self.up_first[lo as usize] as usize,
            self.up_first[lo as usize + 1] as usize,
        );
        self.up_head[s..e]
            .binary_search(&hi)
            .ok()
            .map(|i| (s + i) as u32)
    }

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
                m.fw_via.set(a, [input as u32 | INPUT_BIT, u32::MAX]);
            }
        } else if w < m.bw[a] {
            m.bw.set(a, w);
            m.bw_via.set(a, [input as u32 | INPUT_BIT, u32::MAX]);
        }
    }

    /// Basic customization: input weights (one per input arc, INF = impassable) → shortcut weights.
    /// Independent elimination subtrees are customized in parallel.
    pub fn customize(&self, input_weights: &[Weight]) -> CustomizedMetric {
        let m = self.arc_count();
        let (mut fw, mut bw) = (vec![INF_WEIGHT; m], vec![INF_WEIGHT; m]);
        let (mut fw_via, mut bw_via) = (vec![NO_VIA; m], vec![NO_VIA; m]);
        for (i, &w) in input_weights.iter().enumerate() {
            let arc = self.input_cch_arc[i];
            if arc == u32::MAX {
                continue;
            }
            let a = arc as usize;
            let (weight, via) = if self.input_upward[i] {
                (&mut fw[a], &mut fw_via[a])
            } else {
                (&mut bw[a], &mut bw_via[a])
            };
            if w < *weight {
                *weight = w;
                *via = [i as u32 | INPUT_BIT, u32::MAX];
            }
        }
        let raw = RawMetric {
            fw: fw.as_mut_ptr(),
            bw: bw.as_mut_ptr(),
            fw_via: fw_via.as_mut_ptr(),
            bw_via: bw_via.as_mut_ptr(),
        };
        let roots = self.roots();
        rayon::scope(|s| {
            for &r in &roots {
                let raw = &raw;
                s.spawn(move |_| self.customize_subtree(r, raw));
            }
        });
        // Stored in shared chunks, so the metrics derived from this one by live changes copy only
        // what they change (crate::cow).
        let ((fw, bw), (fw_via, bw_via)) = rayon::join(
            || rayon::join(|| CowVec::from_slice(&fw), || CowVec::from_slice(&bw)),
            || {
                rayon::join(
                    || CowVec::from_slice(&fw_via),
                    || CowVec::from_slice(&bw_via),
                )
            },
        );
        CustomizedMetric {
            fw,
            bw,
            fw_via,
            bw_via,
            input_weights: input_weights.to_vec(),
            pruned: std::sync::OnceLock::new(),
            uses: Default::default(),
        }
    }

    /// Roots of the elimination forest.
    fn roots(&self) -> Vec<u32> {
        (0..self.node_count() as u32)
            .filter(|&x| self.etree_parent[x as usize] == u32::MAX)
            .collect()
    }

    /// Follows the single-child chain down from `root` to the first node with several children (or
    /// none); returns it and its children. The chain is the rank range `x..=root` (postorder).
    fn branching_below(&self, root: u32) -> (u32, &[u32]) {
        let mut x = root;
        loop {
            let kids = &self.child
                [self.child_first[x as usize] as usize..self.child_first[x as usize + 1] as usize];
            if kids.len() != 1 {
                return (x, kids);
            }
            x = kids[0];
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
                    let f = add(bxy, *m.fw.add(k));
                    if f < *m.fw.add(b) {
                        *m.fw.add(b) = f;
                        *m.fw_via.add(b) = [xy, k as u32];
                    }
                    let r = add(*m.bw.add(k), fxy);
                    if r < *m.bw.add(b) {
                        *m.bw.add(b) = r;
                        *m.bw_via.add(b) = [xy, k as u32];
                    }
                }
            }
        }
    }

    /// Relaxes the lower triangles of one arc (partial customization).
    fn relax_triangles(&self, b: usize, metric: &mut CustomizedMetric) {
        let (mut fw, mut bw) = (metric.fw[b], metric.bw[b]);
        let (mut fv, mut bv) = (metric.fw_via[b], metric.bw_via[b]);
        for (xy, xz) in self.lower_triangles(b as u32) {
            let (xy, xz) = (xy as usize, xz as usize);
            let f = add(metric.bw[xy], metric.fw[xz]);
            if f < fw {
                fw = f;
                fv = [xy as u32, xz as u32];
            }
            let r = add(metric.bw[xz], metric.fw[xy]);
            if r < bw {
                bw = r;
                bv = [xy as u32, xz as u32];
            }
        }
        metric.fw.set(b, fw);
        metric.bw.set(b, bw);
        metric.fw_via.set(b, fv);
        metric.bw_via.set(b, bv);
    }

    /// Recomputes one CCH arc from its input arcs and lower triangles.
    fn recompute(&self, a: usize, metric: &mut CustomizedMetric, inputs_of: &[Vec<u32>]) {
        metric.fw.set(a, INF_WEIGHT);
        metric.bw.set(a, INF_WEIGHT);
        metric.fw_via.set(a, NO_VIA);
        metric.bw_via.set(a, NO_VIA);
        for &i in &inputs_of[a] {
            let w = metric.input_weights[i as usize];
            self.seed(i as usize, w, metric);
        }
        self.relax_triangles(a, metric);
    }

    /// CCH arc → the input arcs mapped onto it (for partial customization).
    pub fn inputs_by_arc(&self) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new(); self.arc_count()];
        for (i, &a) in self.input_cch_arc.iter().enumerate() {
            if a != u32::MAX {
                out[a as usize].push(i as u32);
            }
        }
        out
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
    pub fn update(
        &self,
        metric: &mut CustomizedMetric,
        changes: &[(ArcId, Weight)],
        inputs_of: &[Vec<u32>],
    ) {
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
            metric.input_weights[input as usize] = w;
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
                    self.recompute(au, metric, inputs_of);
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
                        let Some(b) = self.find_arc(z, y) else {
                            unreachable!("chordal supergraph arc ({z}, {y})")
                        };
                        (b as usize, i, au)
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
                        let t = [lo as u32, hi as u32];
                        if nf < cf {
                            metric.fw.set(b, nf);
                            metric.fw_via.set(b, t);
                        }
                        if nb < cb {
                            metric.bw.set(b, nb);
                            metric.bw_via.set(b, t);
                        }
                        set(&mut pending, b as u32);
                    }
                }
            }
        }
    }

    /// Checks the hierarchy's invariants: chordality along the elimination tree, sorted upward
    /// lists, parents above children, and (given a metric) the triangle inequality on every lower
    /// triangle. Returns the first violation.
    pub fn check(&self, metric: Option<&CustomizedMetric>) -> Result<(), String> {
        use rayon::prelude::*;
        let n = self.node_count();
        (0..n).into_par_iter().try_for_each(|x| {
            let list = &self.up_head[self.up_first[x] as usize..self.up_first[x + 1] as usize];
            if list.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!("upward list of rank {x} is not strictly sorted"));
            }
            if list.iter().any(|&y| y as usize <= x) {
                return Err(format!("rank {x} has a non-upward arc"));
            }
            match list.first() {
                Some(&p) if self.etree_parent[x] != p => {
                    return Err(format!("rank {x}: wrong parent"));
                }
                None if self.etree_parent[x] != u32::MAX => {
                    return Err(format!("rank {x}: parent without arcs"));
                }
                _ => {}
            }
            for (i, &y) in list.iter().enumerate() {
                for &z in &list[i + 1..] {
                    if self.find_arc(y, z).is_none() {
                        return Err(format!("missing fill-in arc ({y}, {z}) below rank {x}"));
                    }
                }
            }
            Ok(())
        })?;
        match metric {
            Some(m) => self.check_triangles(m),
            None => Ok(()),
        }
    }

    /// The metric's half of [`Self::check`]: every lower triangle satisfies the triangle inequality.
    pub fn check_triangles(&self, m: &CustomizedMetric) -> Result<(), String> {
        use rayon::prelude::*;
        (0..self.arc_count()).into_par_iter().try_for_each(|a| {
            for (xy, xz) in self.lower_triangles(a as u32) {
                let (xy, xz) = (xy as usize, xz as usize);
                if add(m.bw[xy], m.fw[xz]) < m.fw[a] || add(m.bw[xz], m.fw[xy]) < m.bw[a] {
                    return Err(format!("arc {a} violates the triangle inequality"));
                }
            }
            Ok(())
        })
    }
}

/// The upward arcs a query needs under one metric, per direction (CSR by lower endpoint): arcs
/// that are passable and whose weight no path through higher nodes undercuts. Built by perfect
/// customization; queries on it relax a fraction of the arcs of the full hierarchy.
pub struct PrunedGraph {
    pub fw_first: Vec<u32>,
    /// (head rank, weight) of each kept arc.
    pub fw_arcs: Vec<[u32; 2]>,
    /// The CCH arc each kept arc is (for unpacking).
    pub fw_cch: Vec<u32>,
    pub bw_first: Vec<u32>,
    pub bw_arcs: Vec<[u32; 2]>,
    pub bw_cch: Vec<u32>,
}

impl PrunedGraph {
    pub fn memory_bytes(&self) -> usize {
        4 * (self.fw_first.len()
            + 3 * self.fw_arcs.len()
            + self.bw_first.len()
            + 3 * self.bw_arcs.len())
    }
}

impl Cch {
    /// Perfect customization (every arc's weight becomes the distance between its endpoints), then
    /// the pruned query graph of the arcs it did not improve. Top-down over the elimination tree:
    /// an arc's weight is final once every arc above its lower endpoint is, and disjoint subtrees
    /// run in parallel.
    pub fn prune(&self, metric: &CustomizedMetric) -> PrunedGraph {
        let (mut pf, mut pb) = (metric.fw.to_vec(), metric.bw.to_vec());
        let raw = RawPair {
            fw: pf.as_mut_ptr(),
            bw: pb.as_mut_ptr(),
        };
        let roots = self.roots();
        rayon::scope(|s| {
            for &r in &roots {
                let raw = &raw;
                s.spawn(move |_| self.perfect_subtree(r, raw));
            }
        });
        let n = self.node_count();
        let build = |basic: &CowVec<Weight>, perfect: &[Weight]| {
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
        let (fw_first, fw_arcs, fw_cch) = build(&metric.fw, &pf);
        let (bw_first, bw_arcs, bw_cch) = build(&metric.bw, &pb);
        PrunedGraph {
            fw_first,
            fw_arcs,
            fw_cch,
            bw_first,
            bw_arcs,
            bw_cch,
        }
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
                    for &xy in
                        &self.down_arc[self.down_first[y] as usize..self.down_first[y + 1] as usize]
                    {
                        let xy = xy as usize;
                        let x = *self.arc_tail.get_unchecked(xy) as usize;
                        let xe = *self.up_first.get_unchecked(x + 1) as usize;
                        for xz in xy + 1..xe {
                            let b = *pos.get_unchecked(*self.up_head.get_unchecked(xz) as usize)
                                as usize;
                            let (fb, bb) = (*raw.fw.add(b), *raw.bw.add(b));
                            let (fxy, bxy) = (*raw.fw.add(xy), *raw.bw.add(xy));
                            let (fxz, bxz) = (*raw.fw.add(xz), *raw.bw.add(xz));
                            // x → y → z, z → y → x, x → z → y, y → z → x.
                            *raw.fw.add(xz) = fxz.min(add(fxy, fb));
                            *raw.bw.add(xz) = bxz.min(add(bb, bxy));
                            *raw.fw.add(xy) = fxy.min(add(fxz, bb));
                            *raw.bw.add(xy) = bxy.min(add(fb, bxz));
                        }
                    }
                }
            }
        })
    }
}

thread_local! {
    /// Per-thread map from a node to the arc of the node being customized that reaches it.
    static SCRATCH: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

struct RawPair {
    fw: *mut Weight,
    bw: *mut Weight,
}
// SAFETY: shared only inside `prune`, where tasks touch disjoint arc ranges.
unsafe impl Sync for RawPair {}
unsafe impl Send for RawPair {}

/// Hashing for dense small ids (arcs, edges): one multiplication (SipHash would be the cost centre
/// of a partial update, and of snapping).
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);
impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.0 = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
pub(crate) type IdHash = std::hash::BuildHasherDefault<IdHasher>;

/// Raw views of a metric's arrays for the parallel customization.
struct RawMetric {
    fw: *mut Weight,
    bw: *mut Weight,
    fw_via: *mut Via,
    bw_via: *mut Via,
}
// SAFETY: shared only inside `customize`, where tasks touch disjoint arc ranges.
unsafe impl Sync for RawMetric {}
unsafe impl Send for RawMetric {}

pub const INPUT_BIT: u32 = 1 << 31;
/// How a shortcut weight arises: `[INPUT_BIT | input arc, u32::MAX]`, the two arcs `[(x, y), (x, z)]`
/// of the lower triangle through `x` (for arc `(y, z)`), or `NO_VIA` (impassable). Both arcs are
/// kept so that unpacking a path reads one entry per shortcut.
pub type Via = [u32; 2];
pub const NO_VIA: Via = [u32::MAX, u32::MAX];

/// Shortcut weights of one metric, and how to unpack each shortcut.
pub struct CustomizedMetric {
    pub fw: CowVec<Weight>,
    pub bw: CowVec<Weight>,
    /// How each weight arises (see [`Via`]).
    pub fw_via: CowVec<Via>,
    pub bw_via: CowVec<Via>,
    /// The input weights this metric was customized with.
    pub input_weights: Vec<Weight>,
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
            fw_via: self.fw_via.clone(),
            bw_via: self.bw_via.clone(),
            input_weights: self.input_weights.clone(),
            pruned: std::sync::OnceLock::new(),
            uses: Default::default(),
        }
    }
    fn clone_from(&mut self, source: &Self) {
        self.fw.clone_from(&source.fw);
        self.bw.clone_from(&source.bw);
        self.fw_via.clone_from(&source.fw_via);
        self.bw_via.clone_from(&source.bw_via);
        self.input_weights.clone_from(&source.input_weights);
        self.pruned = std::sync::OnceLock::new();
        self.uses = Default::default();
    }
}

impl CustomizedMetric {
    pub fn memory_bytes(&self) -> usize {
        4 * (self.fw.len()
            + self.bw.len()
            + 2 * self.fw_via.len()
            + 2 * self.bw_via.len()
            + self.input_weights.len())
            + self.pruned.get().map_or(0, PrunedGraph::memory_bytes)
    }

    /// Builds the pruned query graph if it is not there yet.
    pub fn prepare_queries(&self, cch: &Cch) -> &PrunedGraph {
        self.pruned.get_or_init(|| cch.prune(self))
    }
}

impl Cch {
    /// Appends the input arcs of CCH arc `a` travelled upward (`fw`) or downward, in travel order.
    pub fn unpack(&self, metric: &CustomizedMetric, a: u32, upward: bool, out: &mut Vec<ArcId>) {
        let vias = if upward {
            &metric.fw_via
        } else {
            &metric.bw_via
        };
        assert!((a as usize) < vias.len());
        // SAFETY: checked above.
        let via = unsafe { vias.get_unchecked(a as usize) };
        let [xy, xz] = via;
        if xz == u32::MAX {
            if xy != u32::MAX {
                out.push(xy & !INPUT_BIT);
            }
            return;
        }
        if upward {
            // y → x → z
            self.unpack(metric, xy, false, out);
            self.unpack(metric, xz, true, out);
        } else {
            // z → x → y
            self.unpack(metric, xz, false, out);
            self.unpack(metric, xy, true, out);
        }
    }
}
