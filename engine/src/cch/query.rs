//! Point-to-point queries on a customized CCH by elimination-tree search: both sides walk up the
//! elimination tree from their seeds in rank order, relaxing upward arcs, with no priority queue.
//! Each thread owns a [`CchQuery`] whose arrays are reset lazily (only what the last query touched).
//!
//! ```ignore
//! let mut q = CchQuery::new(&cch);
//! q.reset().add_source(s, 0).add_target(t, 0).run(&cch, &metric);
//! let d = q.distance();
//! let path = q.arc_path(&cch, &metric);
//! ```

use crate::cch::{Cch, CustomizedMetric, INF_WEIGHT, PrunedGraph, Weight, add};
use crate::graph::{ArcId, NodeId};

pub struct CchQuery {
    df: Vec<Weight>,
    db: Vec<Weight>,
    /// How df/db was last improved (`u32::MAX` at seeds): by a CCH arc, or on a pruned graph
    /// (`on_pruned`) from a predecessor node, whose kept arc a path looks up in lists the search
    /// has just read (cheaper than reading a stored tail per arc from a cold array).
    pf: Vec<u32>,
    pb: Vec<u32>,
    touched: Vec<u32>,
    sources: Vec<(u32, Weight)>,
    targets: Vec<(u32, Weight)>,
    fwd_path: Vec<u32>,
    bwd_path: Vec<u32>,
    /// Scratch for merging the seeds' elimination-tree paths.
    merged: Vec<u32>,
    best: Weight,
    meeting: u32,
    in_f: Vec<bool>,
    in_b: Vec<bool>,
    /// Whether the last search ran on the metric's pruned graph (what `pf`/`pb` name).
    on_pruned: bool,
}

impl CchQuery {
    pub fn new(cch: &Cch) -> CchQuery {
        let n = cch.node_count();
        CchQuery {
            df: vec![INF_WEIGHT; n],
            db: vec![INF_WEIGHT; n],
            pf: vec![u32::MAX; n],
            pb: vec![u32::MAX; n],
            touched: Vec::with_capacity(1024),
            sources: Vec::new(),
            targets: Vec::new(),
            fwd_path: Vec::with_capacity(1024),
            bwd_path: Vec::with_capacity(1024),
            merged: Vec::with_capacity(1024),
            best: INF_WEIGHT,
            meeting: u32::MAX,
            in_f: vec![false; n],
            in_b: vec![false; n],
            on_pruned: false,
        }
    }

    /// Forgets the previous query: O(nodes it touched).
    pub fn reset(&mut self) -> &mut Self {
        for &r in &self.touched {
            let r = r as usize;
            self.df[r] = INF_WEIGHT;
            self.db[r] = INF_WEIGHT;
            self.pf[r] = u32::MAX;
            self.pb[r] = u32::MAX;
            self.in_f[r] = false;
            self.in_b[r] = false;
        }
        self.touched.clear();
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
        mark: &mut [bool],
        touched: &mut Vec<u32>,
        out: &mut Vec<u32>,
        merged: &mut Vec<u32>,
    ) {
        out.clear();
        let mut first = 0;
        for (i, &(s, _)) in seeds.iter().enumerate() {
            let mut x = s;
            while x != u32::MAX && !mark[x as usize] {
                mark[x as usize] = true;
                touched.push(x);
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
        let mut fwd = std::mem::take(&mut self.fwd_path);
        let mut bwd = std::mem::take(&mut self.bwd_path);
        Self::collect_path(
            cch,
            &self.sources,
            &mut self.in_f,
            &mut self.touched,
            &mut fwd,
            &mut self.merged,
        );
        Self::collect_path(
            cch,
            &self.targets,
            &mut self.in_b,
            &mut self.touched,
            &mut bwd,
            &mut self.merged,
        );
        for &(s, d) in &self.sources {
            if d < self.df[s as usize] {
                self.df[s as usize] = d;
            }
        }
        for &(t, d) in &self.targets {
            if d < self.db[t as usize] {
                self.db[t as usize] = d;
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
                relax_pruned(
                    x,
                    self.best,
                    &mut self.df,
                    &mut self.pf,
                    &p.fw_first,
                    &p.fw_arcs,
                );
            }
            if on_b {
                relax_pruned(
                    x,
                    self.best,
                    &mut self.db,
                    &mut self.pb,
                    &p.bw_first,
                    &p.bw_arcs,
                );
            }
        }
        self.fwd_path = fwd;
        self.bwd_path = bwd;
        self
    }

    // Arc ids index several parallel arrays (heads, weights, predecessors).
    #[allow(clippy::needless_range_loop)]
    pub fn run_full(&mut self, cch: &Cch, metric: &CustomizedMetric) -> &mut Self {
        // Every arc below is < up_first[n] = arc_count, so the weights are read unchecked.
        assert!(metric.fw.len() == cch.arc_count() && metric.bw.len() == cch.arc_count());
        self.on_pruned = false;
        let (fwd, bwd) = self.seed_and_collect(cch);
        // Relax each node's upward arcs on the sides it belongs to.
        let (up_first, up_head) = (&cch.up_first, &cch.up_head);
        for (x, on_f, on_b) in merged(&fwd, &bwd) {
            if on_f && on_b {
                self.meet(x);
            }
            let xu = x as usize;
            let (s, e) = (up_first[xu] as usize, up_first[xu + 1] as usize);
            if on_f {
                let dx = self.df[xu];
                if dx < self.best {
                    for a in s..e {
                        let y = up_head[a] as usize;
                        // SAFETY: a < arc_count (asserted above).
                        let d = dx.saturating_add(unsafe { metric.fw.get_unchecked(a) });
                        if d < self.df[y] {
                            self.df[y] = d;
                            self.pf[y] = a as u32;
                        }
                    }
                }
            }
            if on_b {
                let dx = self.db[xu];
                if dx < self.best {
                    for a in s..e {
                        let y = up_head[a] as usize;
                        // SAFETY: as above.
                        let d = dx.saturating_add(unsafe { metric.bw.get_unchecked(a) });
                        if d < self.db[y] {
                            self.db[y] = d;
                            self.pb[y] = a as u32;
                        }
                    }
                }
            }
        }
        self.fwd_path = fwd;
        self.bwd_path = bwd;
        self
    }

    /// A node on both sides' paths: the best meeting point so far?
    fn meet(&mut self, x: NodeId) {
        let d = add(self.df[x as usize], self.db[x as usize]);
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
        let a = if fw {
            self.pf[y as usize]
        } else {
            self.pb[y as usize]
        };
        if a == u32::MAX {
            None
        } else if self.on_pruned {
            Some(a)
        } else {
            Some(cch.arc_tail[a as usize])
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
            None => (
                x,
                if fw {
                    self.pf[y as usize]
                } else {
                    self.pb[y as usize]
                },
            ),
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
        let mut unpack = |a: u32, fw: bool, out: &mut Vec<ArcId>| match p {
            Some(p) => p.unpack(a, fw, out, &mut stack),
            None => cch.unpack_searched(metric, a, fw, out, &mut stack),
        };
        // Room for a typical city path: growing the vector would cost more than the unpacking.
        let mut out = Vec::with_capacity(512);
        // Forward half: from the meeting node down to the source, then unpack in travel order.
        let mut up_arcs = Vec::with_capacity(64);
        let mut x = self.meeting;
        while let Some((t, a)) = self.pred(cch, p, x, true) {
            up_arcs.push(a);
            x = t;
        }
        for &a in up_arcs.iter().rev() {
            unpack(a, true, &mut out);
        }
        let mut y = self.meeting;
        while let Some((t, a)) = self.pred(cch, p, y, false) {
            unpack(a, false, &mut out);
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
fn relax_pruned(
    x: u32,
    best: Weight,
    dist: &mut [Weight],
    pred: &mut [u32],
    first: &[u32],
    arcs: &[[u32; 2]],
) {
    let xu = x as usize;
    let dx = dist[xu];
    if dx >= best {
        return;
    }
    let (s, e) = (first[xu] as usize, first[xu + 1] as usize);
    for &[y, w] in &arcs[s..e] {
        let d = dx + w;
        if d < dist[y as usize] {
            dist[y as usize] = d;
            pred[y as usize] = x;
        }
    }
}
