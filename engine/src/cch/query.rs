//! Point-to-point queries on a customized CCH by elimination-tree search: both sides walk up the
//! elimination tree from their seeds in rank order, relaxing upward arcs, with no priority queue.
//! Each thread owns a [`CchQuery`] whose labels are reset lazily: a label stamped by an earlier query
//! counts as untouched, so starting a query writes nothing.
//!
//! ```ignore
//! let mut q = CchQuery::new(&cch);
//! q.reset().add_source(s, 0).add_target(t, 0).run(&cch, &metric);
//! let d = q.distance();
//! let path = q.arc_path(&cch, &metric);
//! ```

use crate::cch::{Cch, CustomizedMetric, INF_WEIGHT, PrunedGraph, Weight, add};
use crate::graph::{ArcId, NodeId};

/// Forward side (from the sources) and backward side (to the targets) in [`Label`]'s pairs.
const FW: usize = 0;
const BW: usize = 1;
/// A label's predecessor when its node is not on that side's elimination-tree paths.
const OFF_PATH: u32 = u32::MAX;
/// A label's predecessor when its node is on that side's paths but not reached from below (seeds,
/// and nodes no arc improved).
const NO_PRED: u32 = u32::MAX - 1;

/// One node's search state on both sides, in 16 bytes: a query touches a few hundred nodes spread
/// over arrays of a quarter million, so the node's distances, predecessors and path marks share
/// one cache line instead of six.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Label {
    dist: [Weight; 2],
    /// How `dist` was last improved: by a CCH arc, or on a pruned graph (`on_pruned`) from a
    /// predecessor node, whose kept arc a path looks up in lists the search has just read (cheaper
    /// than reading a stored tail per arc from a cold array). [`OFF_PATH`] or [`NO_PRED`] else.
    pred: [u32; 2],
}

const UNTOUCHED: Label = Label {
    dist: [INF_WEIGHT; 2],
    pred: [OFF_PATH; 2],
};

pub struct CchQuery {
    labels: Vec<Label>,
    /// The query each label was last written for (`now` is this one's): an older stamp reads as
    /// [`UNTOUCHED`], so a new query does not reset the last one's labels (cold lines by then).
    stamp: Vec<u32>,
    now: u32,
    sources: Vec<(u32, Weight)>,
    targets: Vec<(u32, Weight)>,
    fwd_path: Vec<u32>,
    bwd_path: Vec<u32>,
    /// Scratch for merging the seeds' elimination-tree paths.
    merged: Vec<u32>,
    best: Weight,
    meeting: u32,
    /// Whether the last search ran on the metric's pruned graph (what `pf`/`pb` name).
    on_pruned: bool,
}

impl CchQuery {
    pub fn new(cch: &Cch) -> CchQuery {
        let n = cch.node_count();
        CchQuery {
            labels: vec![UNTOUCHED; n],
            stamp: vec![0; n],
            now: 1,
            sources: Vec::new(),
            targets: Vec::new(),
            fwd_path: Vec::with_capacity(1024),
            bwd_path: Vec::with_capacity(1024),
            merged: Vec::with_capacity(1024),
            best: INF_WEIGHT,
            meeting: u32::MAX,
            on_pruned: false,
        }
    }

    /// Forgets the previous query: O(1), its labels are left to read as untouched.
    pub fn reset(&mut self) -> &mut Self {
        self.now = self.now.wrapping_add(1);
        if self.now == 0 {
            // Once in four billion queries: no stamp may match the new one.
            self.stamp.fill(0);
            self.now = 1;
        }
        self.sources.clear();
        self.targets.clear();
        self.best = INF_WEIGHT;
        self.meeting = u32::MAX;
        self
    }

    /// A source node (graph node id) with an initial distance (e.g. the rest of a snapped arc).
    pub fn add_source(&mut self, node: NodeId, dist: Weight, cch: &Cch) -> &mut Self {
        self.sources.push((cch.rank[node as usize], dist));
        self
    }
    pub fn add_target(&mut self, node: NodeId, dist: Weight, cch: &Cch) -> &mut Self {
        self.targets.push((cch.rank[node as usize], dist));
        self
    }

    /// Collects the union of the seeds' elimination-tree paths, ascending. The first seed's path
    /// ascends to the root; each later seed adds the ascending run below where it meets a path
    /// already walked, so only those few are sorted and then merged in (a leg's ends seed a
    /// dozen routing nodes, whose paths share most of their length).
    fn collect_path(
        cch: &Cch,
        seeds: &[(u32, Weight)],
        labels: &mut [Label],
        side: usize,
        (stamp, now): (&mut [u32], u32),
        out: &mut Vec<u32>,
        merged: &mut Vec<u32>,
    ) {
        out.clear();
        let mut first = 0;
        for (i, &(s, _)) in seeds.iter().enumerate() {
            let mut x = s;
            while x != u32::MAX {
                let xu = x as usize;
                if stamp[xu] != now {
                    stamp[xu] = now;
                    labels[xu] = UNTOUCHED;
                } else if labels[xu].pred[side] != OFF_PATH {
                    break;
                }
                labels[xu].pred[side] = NO_PRED;
                out.push(x);
                x = cch.etree_parent[x as usize];
            }
            if i == 0 {
                first = out.len();
            }
        }
        if out.len() > first {
            out[first..].sort_unstable();
            merged.clear();
            let (a, b) = out.split_at(first);
            let (mut i, mut j) = (0, 0);
            while i < a.len() && j < b.len() {
                if a[i] < b[j] {
                    merged.push(a[i]);
                    i += 1;
                } else {
                    merged.push(b[j]);
                    j += 1;
                }
            }
            merged.extend_from_slice(&a[i..]);
            merged.extend_from_slice(&b[j..]);
            std::mem::swap(out, merged);
        }
    }

    /// Runs the search on the metric's pruned query graph when it has one, else on the full
    /// hierarchy.
    pub fn run(&mut self, cch: &Cch, metric: &CustomizedMetric) -> &mut Self {
        match metric.pruned.get() {
            Some(p) => self.run_pruned(cch, p),
            None => self.run_full(cch, metric),
        }
    }

    fn seed_and_collect(&mut self, cch: &Cch) -> (Vec<u32>, Vec<u32>) {
        // One query serves hierarchies of several sizes (a city's cycling one, walking's on
        // junctions): it grows to the largest.
        let n = cch.node_count();
        if self.labels.len() < n {
            self.labels.resize(n, UNTOUCHED);
            self.stamp.resize(n, 0);
        }
        let mut fwd = std::mem::take(&mut self.fwd_path);
        let mut bwd = std::mem::take(&mut self.bwd_path);
        Self::collect_path(
            cch,
            &self.sources,
            &mut self.labels,
            FW,
            (&mut self.stamp, self.now),
            &mut fwd,
            &mut self.merged,
        );
        Self::collect_path(
            cch,
            &self.targets,
            &mut self.labels,
            BW,
            (&mut self.stamp, self.now),
            &mut bwd,
            &mut self.merged,
        );
        for &(s, d) in &self.sources {
            if d < self.labels[s as usize].dist[FW] {
                self.labels[s as usize].dist[FW] = d;
            }
        }
        for &(t, d) in &self.targets {
            if d < self.labels[t as usize].dist[BW] {
                self.labels[t as usize].dist[BW] = d;
            }
        }
        (fwd, bwd)
    }

    /// The search on a pruned query graph: the same walk up the elimination tree, relaxing only
    /// the arcs perfect customization kept, stored as (head, weight) pairs.
    pub fn run_pruned(&mut self, cch: &Cch, p: &PrunedGraph) -> &mut Self {
        self.on_pruned = true;
        let (fwd, bwd) = self.seed_and_collect(cch);
        for (x, on_f, on_b) in merged(&fwd, &bwd) {
            if on_f && on_b {
                self.meet(x);
            }
            if on_f {
                relax_pruned::<FW>(x, self.best, &mut self.labels, p, &p.fw_arcs);
            }
            if on_b {
                relax_pruned::<BW>(x, self.best, &mut self.labels, p, p.bw_arcs());
            }
        }
        self.fwd_path = fwd;
        self.bwd_path = bwd;
        self
    }

    pub fn run_full(&mut self, cch: &Cch, metric: &CustomizedMetric) -> &mut Self {
        // Every arc below is < up_first[n] = arc_count, and every position the sides give is
        // below their count, so the weights are read unchecked.
        let sides = &*metric.sides;
        assert!(sides.arc_count() == cch.arc_count());
        assert!((0..2).all(|side| metric.weights[side].len() == sides.len(side)));
        self.on_pruned = false;
        let (fwd, bwd) = self.seed_and_collect(cch);
        // Relax each node's upward arcs on the sides it belongs to: only those that can be
        // finite (on a cycling metric, fewer than half of each side's).
        let (up_first, up_head) = (&cch.up_first, &cch.up_head);
        for (x, on_f, on_b) in merged(&fwd, &bwd) {
            if on_f && on_b {
                self.meet(x);
            }
            let xu = x as usize;
            let (s, e) = (up_first[xu] as usize, up_first[xu + 1] as usize);
            for (side, on) in [(FW, on_f), (BW, on_b)] {
                if !on {
                    continue;
                }
                let dx = self.labels[xu].dist[side];
                if dx >= self.best {
                    continue;
                }
                let weights = &metric.weights[side];
                let labels = &mut self.labels;
                sides.for_each(side, s, e, |a, k| {
                    // SAFETY: a < arc_count and k < the side's count (asserted above).
                    let (y, w) =
                        unsafe { (*up_head.get_unchecked(a) as usize, weights.get_unchecked(k)) };
                    let y = &mut labels[y];
                    let d = dx.saturating_add(w);
                    if d < y.dist[side] {
                        y.dist[side] = d;
                        y.pred[side] = a as u32;
                    }
                });
            }
        }
        self.fwd_path = fwd;
        self.bwd_path = bwd;
        self
    }

    /// A node on both sides' paths: the best meeting point so far?
    fn meet(&mut self, x: NodeId) {
        let [f, b] = self.labels[x as usize].dist;
        let d = add(f, b);
        if d < self.best {
            self.best = d;
            self.meeting = x;
        }
    }

    /// Shortest distance, `INF_WEIGHT` when unreachable.
    pub fn distance(&self) -> Weight {
        self.best
    }

    /// The pruned graph the last search ran on, if it did.
    fn pruned_graph<'m>(&self, metric: &'m CustomizedMetric) -> Option<&'m PrunedGraph> {
        if self.on_pruned {
            Some(
                metric
                    .pruned
                    .get()
                    .expect("searched on this metric's pruned graph"),
            )
        } else {
            None
        }
    }

    /// The predecessor node of `y` on the forward (`fw`) or backward side (`None` at a seed).
    #[inline]
    fn pred_node(&self, cch: &Cch, y: u32, fw: bool) -> Option<u32> {
        let a = self.labels[y as usize].pred[if fw { FW } else { BW }];
        if a >= NO_PRED {
            None
        } else if self.on_pruned {
            Some(a)
        } else {
            Some(cch.arc_tail(a))
        }
    }

    /// [`Self::pred_node`] with the arc between the two (a CCH arc, or on a pruned graph the kept
    /// arc's index in its side's list).
    #[inline]
    fn pred(&self, cch: &Cch, p: Option<&PrunedGraph>, y: u32, fw: bool) -> Option<(u32, u32)> {
        let x = self.pred_node(cch, y, fw)?;
        Some(match p {
            Some(p) => (
                x,
                p.find(x, y, fw)
                    .expect("the arc the search relaxed is kept"),
            ),
            None => (x, self.labels[y as usize].pred[if fw { FW } else { BW }]),
        })
    }

    /// The source seed the path starts at and the target seed it ends at (graph node ids).
    pub fn endpoints(&self, cch: &Cch) -> Option<(NodeId, NodeId)> {
        if self.best >= INF_WEIGHT {
            return None;
        }
        let mut x = self.meeting;
        while let Some(t) = self.pred_node(cch, x, true) {
            x = t;
        }
        let mut y = self.meeting;
        while let Some(t) = self.pred_node(cch, y, false) {
            y = t;
        }
        Some((cch.order[x as usize], cch.order[y as usize]))
    }

    /// The shortest path as input arcs, in travel order (empty when source and target coincide).
    /// `metric` is the one the search ran on.
    pub fn arc_path(&self, cch: &Cch, metric: &CustomizedMetric) -> Vec<ArcId> {
        if self.best >= INF_WEIGHT {
            return Vec::new();
        }
        let p = self.pruned_graph(metric);
        let mut stack = Vec::with_capacity(64);
        // `t` is the arc's tail, the lower of its two nodes.
        let mut unpack = |(a, t): (u32, u32), fw: bool, out: &mut Vec<ArcId>| match p {
            Some(p) => p.unpack(a, fw, out, &mut stack),
            None => cch.unpack_searched(metric, (a, t), fw, out, &mut stack),
        };
        // Room for a typical city path: growing the vector would cost more than the unpacking.
        let mut out = Vec::with_capacity(512);
        // Forward half: from the meeting node down to the source, then unpack in travel order.
        let mut up_arcs = Vec::with_capacity(64);
        let mut x = self.meeting;
        while let Some((t, a)) = self.pred(cch, p, x, true) {
            up_arcs.push((a, t));
            x = t;
        }
        for &a in up_arcs.iter().rev() {
            unpack(a, true, &mut out);
        }
        let mut y = self.meeting;
        while let Some((t, a)) = self.pred(cch, p, y, false) {
            unpack((a, t), false, &mut out);
            y = t;
        }
        out
    }
}

/// The nodes of two ascending elimination-tree paths in ascending order, each with whether it lies on
/// the forward path and on the backward one.
fn merged<'a>(
    fwd: &'a [NodeId],
    bwd: &'a [NodeId],
) -> impl Iterator<Item = (NodeId, bool, bool)> + 'a {
    let (mut i, mut j) = (0, 0);
    std::iter::from_fn(move || {
        let (a, b) = (fwd.get(i).copied(), bwd.get(j).copied());
        let x = match (a, b) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => return None,
        };
        let (on_f, on_b) = (a == Some(x), b == Some(x));
        i += usize::from(on_f);
        j += usize::from(on_b);
        Some((x, on_f, on_b))
    })
}

/// Relaxes one search side's kept arcs out of `x` (skipped once `x` cannot beat the best meeting).
#[inline(always)]
fn relax_pruned<const SIDE: usize>(
    x: u32,
    best: Weight,
    labels: &mut [Label],
    p: &PrunedGraph,
    arcs: &[[u32; 2]],
) {
    let xu = x as usize;
    let dx = labels[xu].dist[SIDE];
    if dx >= best {
        return;
    }
    let (s, e) = p.range(x, SIDE);
    for &[y, w] in &arcs[s..e] {
        let d = dx + w;
        let y = &mut labels[y as usize];
        if d < y.dist[SIDE] {
            y.dist[SIDE] = d;
            y.pred[SIDE] = x;
        }
    }
}
