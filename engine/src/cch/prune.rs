//! The pruned query graph: perfect customization, then the arcs no path through higher nodes
//! undercuts.

use super::cow::CowVec;
use super::{Cch, CustomizedMetric, INF_WEIGHT, PARALLEL_NODES, SCRATCH, Weight, add};

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

struct RawPair {
    fw: *mut Weight,
    bw: *mut Weight,
}
// SAFETY: shared only inside `prune`, where tasks touch disjoint arc ranges.
unsafe impl Sync for RawPair {}
unsafe impl Send for RawPair {}
