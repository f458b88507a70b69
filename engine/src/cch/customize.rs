//! Customization: basic (every shortcut weight from the input weights, bottom up over the
//! elimination tree, subtrees in parallel) and partial (a few changed input arcs re-customize only
//! what they affect).

use super::cow::{Block, CowVec, CowWriter};
use super::sides::NO_SIDE;
use super::{Cch, INF_WEIGHT, IdHash, PARALLEL_NODES, PrunedGraph, SCRATCH, Sides, Weight, add};
use crate::graph::ArcId;
use std::sync::Arc;

impl Cch {
    /// Basic customization: input weights (one per input arc, INF = impassable) → shortcut weights.
    /// Independent elimination subtrees are customized in parallel. Each arc starts from its input
    /// arcs' weights when its lower endpoint's turn comes (in the subtree's task), not in a pass of
    /// its own before: that pass (two array fills, then scattered writes, on one thread) took 13.5
    /// of New York's 45 ms. In alternated runs, 42-44 ms p50 instead of 44-52 (the fresh arrays'
    /// page faults, about a microsecond each here, now fall in the parallel tasks).
    ///
    /// A triangle improves one side of an arc only through arcs finite on that side, and on a
    /// cycling metric most are not: a turn's reverse is no turn, and half of New York's arcs belong
    /// to the walking network. Bit sets of the finite arcs (set as each node's arcs are finished)
    /// let the loops skip the rest without reading their weights: 38.8 M steps become 12.3 M, and
    /// `cust` alternated read 35-37 ms p50 against 43-46 before (with the lower endpoints read
    /// from the downward lists instead of `arc_tail`).
    pub fn customize(&self, input_weights: &[Weight]) -> CustomizedMetric {
        self.customize_owned(input_weights.to_vec())
    }

    /// [`Cch::customize`], keeping the input weights as the metric's own without a copy (1.2 MB
    /// on New York, and its fresh pages: about 300 page faults).
    pub fn customize_owned(&self, input_weights: Vec<Weight>) -> CustomizedMetric {
        self.customize_with(input_weights, &mut Default::default())
    }

    /// [`Cch::customize_owned`] of several metrics, one after another on one pair of working
    /// arrays. Customized side by side, each metric faulted in arrays of its own (146 MB for the
    /// three a 4 x 4 tiling of New York loads with, which also raised the load's peak by as much);
    /// one at a time, each uses both cores already but for the top of the hierarchy.
    pub fn customize_each_owned(&self, inputs: Vec<Vec<Weight>>) -> Vec<CustomizedMetric> {
        let mut work = Default::default();
        inputs
            .into_iter()
            .map(|i| self.customize_with(i, &mut work))
            .collect()
    }

    /// The metric of `input_weights` from weights customized before (stored with the hierarchy
    /// in a graph file): per side, those of the sides that can be finite. An error if they do not fit
    /// this hierarchy's sides (the input weights given back then).
    pub fn stored_metric(
        &self,
        input_weights: Vec<Weight>,
        [fw, bw]: [Vec<Weight>; 2],
    ) -> Result<CustomizedMetric, Vec<Weight>> {
        if input_weights.len() != self.input_count()
            || fw.len() != self.sides.len(0)
            || bw.len() != self.sides.len(1)
        {
            return Err(input_weights);
        }
        Ok(CustomizedMetric {
            weights: [CowVec::from_vec(fw), CowVec::from_vec(bw)],
            sides: self.sides.clone(),
            input_weights: CowVec::from_vec(input_weights),
            pruned: std::sync::OnceLock::new(),
            uses: Default::default(),
        })
    }

    /// Customizes `input_weights` with `work` as the working arrays (grown as needed).
    pub fn customize_with(
        &self,
        input_weights: Vec<Weight>,
        work: &mut (Vec<Weight>, Vec<Weight>),
    ) -> CustomizedMetric {
        assert_eq!(input_weights.len(), self.input_count());
        let _bulk = crate::BulkWork::begin();
        let m = self.arc_count();
        let sides = &*self.sides;
        assert_eq!(sides.arc_count(), m, "the sides of another hierarchy");
        // Both sides of every arc in working arrays, which triangles read and write, and only the
        // sides that can be finite in the metric's own arrays, written as each node's arcs are
        // final: customizing in the metric's own layout (a rank over bits at every triangle to
        // find where a weight lies) took 31 ms on New York against 23.5, and the working arrays
        // live for a customization only. Every element is written before it is read.
        let (fw, bw) = work;
        fw.clear();
        fw.reserve(m);
        bw.clear();
        bw.reserve(m);
        let (mut out_fw, mut out_bw) = (
            Block::for_writing(sides.len(0)),
            Block::for_writing(sides.len(1)),
        );
        let raw = RawMetric {
            fw: fw.as_mut_ptr(),
            bw: bw.as_mut_ptr(),
            out: [out_fw.as_mut_ptr(), out_bw.as_mut_ptr()],
            sides,
            inputs: input_weights.as_ptr(),
            finite: [AtomicBits::new(m), AtomicBits::new(m)],
        };
        self.for_each_root(|r| self.customize_subtree(r, &raw));
        // The metric's arrays, in chunks that the metrics derived from this one by live changes
        // share, copying only those they change (crate::cch::cow).
        // SAFETY: every side that can be finite belongs to one arc, and every arc to one lower
        // endpoint, whose relaxation wrote its weights.
        let (fw, bw) = unsafe { (CowVec::from_block(out_fw), CowVec::from_block(out_bw)) };
        CustomizedMetric {
            weights: [fw, bw],
            sides: self.sides.clone(),
            input_weights: CowVec::from_vec(input_weights),
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
            unsafe {
                *m.fw.add(a) = INF_WEIGHT;
                *m.bw.add(a) = INF_WEIGHT;
            }
        }
        // The arc's own weight: the least of its input arcs' (parallel arcs, both directions).
        self.inputs_of.for_each_entry(s, e, m.inputs, |a, entry| {
            let (i, upward) = decode(entry);
            // SAFETY: input arc ids index the input weights (checked length); a is y's.
            unsafe {
                let w = *m.inputs.add(i as usize);
                let side = if upward { m.fw.add(a) } else { m.bw.add(a) };
                *side = (*side).min(w);
            }
        });
        let (ds, de) = (self.down_first[y] as usize, self.down_first[y + 1] as usize);
        unsafe {
            for (&off, &x) in self
                .down_off
                .get_unchecked(ds..de)
                .iter()
                .zip(self.down_tail.get_unchecked(ds..de))
            {
                let x = x as usize;
                let xy = *self.up_first.get_unchecked(x) + u32::from(off);
                // Half of the arcs below are impassable both ways for a cycling metric (the
                // walking network's sidewalks and crossings): the bits, a fraction of the size of
                // the weights, tell without reading them.
                if !m.finite[0].get(xy) && !m.finite[1].get(xy) {
                    continue;
                }
                let (fxy, bxy) = (*m.fw.add(xy as usize), *m.bw.add(xy as usize));
                let xe = *self.up_first.get_unchecked(x + 1) as usize;
                // On a turn graph most arcs can be travelled one way only (a turn's reverse is
                // no turn), and cycling cannot use many turns at all: a triangle improves a side
                // only through arcs finite on that side, so only those are visited (a third of
                // all the steps on New York). x's arcs are final: their bits are set.
                // In a restricted hierarchy, (y, z) exists wherever both arcs at x are finite
                // on the sides summed (else it would have been finite, hence kept).
                if fxy < INF_WEIGHT {
                    // z → x → y: (x, z) downward, then (x, y) upward.
                    m.finite[1].for_each_in(xy as usize + 1, xe, |k| {
                        let b =
                            *pos.get_unchecked(*self.up_head.get_unchecked(k) as usize) as usize;
                        let r = add(*m.bw.add(k), fxy);
                        // The minimum written every time: with only finite sides visited,
                        // improvements are frequent enough that a branch on them mispredicted
                        // (19.2-19.5 ms against 15.1-15.4 in alternated runs on New York).
                        *m.bw.add(b) = r.min(*m.bw.add(b));
                    });
                }
                if bxy < INF_WEIGHT {
                    // y → x → z.
                    m.finite[0].for_each_in(xy as usize + 1, xe, |k| {
                        let b =
                            *pos.get_unchecked(*self.up_head.get_unchecked(k) as usize) as usize;
                        let f = add(bxy, *m.fw.add(k));
                        *m.fw.add(b) = f.min(*m.fw.add(b));
                    });
                }
            }
            // y's arcs are final: the sides that can be finite go to the metric.
            m.finite[0].set_where(s, e, |a| *m.fw.add(a) < INF_WEIGHT);
            m.finite[1].set_where(s, e, |a| *m.bw.add(a) < INF_WEIGHT);
            for (side, all) in [m.fw, m.bw].into_iter().enumerate() {
                let out = m.out[side];
                m.sides
                    .for_each(side, s, e, |a, k| *out.add(k) = *all.add(a));
            }
        }
    }

    /// CCH arc → the input arcs mapped onto it (for partial customization and unpacking).
    pub(super) fn inputs_by_arc(&self) -> InputsByArc {
        InputsByArc::new(self.arc_count(), &self.input_cch_arc, &self.input_upward)
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
    ///
    /// An arc only influences arcs whose lower endpoint is an ancestor of its own in the
    /// elimination tree, so disjoint subtrees are updated in parallel, as in basic customization.
    /// A task writes only the arcs of its own ranks; what it finds for an arc of an ancestor is
    /// handed up as an [`Announcement`] and applied by the ancestor's task before it starts. The
    /// task judges such an arc by its own view of it: its weight before the update (nothing has
    /// written it yet), lowered by what the task found earlier. Announcements of several tasks
    /// merge: a recomputation covers any lowering, and lowerings take their minimum. (A lowering
    /// from one task rests on arcs of that task only, so no other task's triangle can be tight
    /// with it.) On New York, 100 changed turns took 5.3 ms in one task and 3.2 ms on two cores.
    pub fn update(&self, metric: &mut CustomizedMetric, changes: &[(ArcId, Weight)]) {
        let split = (changes.len() >= PARALLEL_CHANGES)
            .then(|| (self.node_count() as u32 / UPDATE_TASKS).max(PARALLEL_NODES));
        self.update_in_tasks(metric, changes, split);
    }

    /// [`Self::update`], in one task, or with subtrees of `split` ranks and more split.
    pub(crate) fn update_in_tasks(
        &self,
        metric: &mut CustomizedMetric,
        changes: &[(ArcId, Weight)],
        split: Option<u32>,
    ) {
        assert!(
            metric.has_shortcut_weights(),
            "a query-only metric cannot be updated"
        );
        if changes.is_empty() {
            return;
        }
        let _bulk = crate::BulkWork::begin();
        metric.pruned = std::sync::OnceLock::new();
        let bits = self.marks.take(self.arc_count());
        let mut seeded = vec![];
        for &(input, w) in changes {
            metric.input_weights.set(input as usize, w);
            let a = self.input_arc(input as usize);
            if a != u32::MAX {
                bits.mark_pending(a);
                bits.recompute.set(a);
                seeded.push(a);
            }
        }
        seeded.sort_unstable();
        let n = self.node_count() as u32;
        let Some(split) = split else {
            // One task over every rank from the first change's: nothing to hand up, no chunk
            // shared between tasks.
            let Some(&first) = seeded.first() else {
                self.marks.give_back(bits);
                return;
            };
            let sides = &*metric.sides;
            let [fw, bw] = &mut metric.weights;
            let ctx = UpdateContext {
                weights: ArcWeights::new(fw.writer(&[]), bw.writer(&[]), sides),
                inputs: &metric.input_weights,
                bits,
                seeded,
            };
            let out = self.update_ranks(self.arc_tail(first), n - 1, &ctx, vec![]);
            debug_assert!(out.is_empty());
            self.marks.give_back(ctx.bits);
            return;
        };
        // Tasks: each root's subtree, split below every branching node of a large subtree into its
        // children's subtrees and the chain above them. Roots of small components are done first,
        // on this thread.
        // The roots of small subtrees holding a change, found from the changes: a city's cycling
        // hierarchy has hundreds of thousands of roots (every routing node no bicycle can use is
        // a component of its own), and a look at each took a fifth of a live change's time.
        let roots = self.roots();
        let mut small: Vec<u32> = vec![];
        for &a in &seeded {
            let t = self.arc_tail(a);
            // Components are consecutive rank ranges, each ending at its root.
            let r = roots[roots.partition_point(|&r| r < t)];
            if self.subtree_size[r as usize] < split && small.last() != Some(&r) {
                small.push(r);
            }
        }
        let large: Vec<u32> = if split >= PARALLEL_NODES {
            self.large_roots()
                .iter()
                .copied()
                .filter(|&r| self.subtree_size[r as usize] >= split)
                .collect()
        } else {
            roots
                .iter()
                .copied()
                .filter(|&r| self.subtree_size[r as usize] >= split)
                .collect()
        };
        // Per side, the chunks of weights that hold two tasks' arcs.
        let sides = &*metric.sides;
        let mut shared = [vec![], vec![]];
        for &r in &large {
            self.update_tasks(r, split, &seeded, &mut |lo, hi| {
                let (s, e) = self.arc_range(lo, hi);
                for (side, chunks) in shared.iter_mut().enumerate() {
                    let (ks, ke) = (sides.rank(side, s), sides.rank(side, e));
                    if ks < ke {
                        chunks.push(CowVec::<Weight>::chunk_of(ks));
                        chunks.push(CowVec::<Weight>::chunk_of(ke - 1));
                    }
                }
            });
        }
        let [fw, bw] = &mut metric.weights;
        let ctx = UpdateContext {
            weights: ArcWeights::new(fw.writer(&shared[0]), bw.writer(&shared[1]), sides),
            inputs: &metric.input_weights,
            bits,
            seeded,
        };
        for &r in &small {
            let lo = r + 1 - self.subtree_size[r as usize];
            let out = self.update_ranks(lo, r, &ctx, vec![]);
            debug_assert!(out.is_empty());
        }
        let shared = &ctx;
        rayon::scope(|s| {
            for &r in &large {
                s.spawn(move |_| {
                    let out = self.update_subtree(r, split, shared);
                    debug_assert!(out.is_empty());
                });
            }
        });
        let UpdateContext { bits, .. } = ctx;
        self.marks.give_back(bits);
    }

    /// The arcs whose lower endpoint lies in ranks `lo..=hi`.
    fn arc_range(&self, lo: u32, hi: u32) -> (usize, usize) {
        (
            self.up_first[lo as usize] as usize,
            self.up_first[hi as usize + 1] as usize,
        )
    }

    /// Calls `task(lo, hi)` for the rank range of each task [`Self::update_subtree`] runs below
    /// `root`.
    fn update_tasks(&self, root: u32, split: u32, seeded: &[u32], task: &mut impl FnMut(u32, u32)) {
        let lo = root + 1 - self.subtree_size[root as usize];
        if !seeded_in(seeded, self.arc_range(lo, root)) {
            return;
        }
        if self.subtree_size[root as usize] < split {
            task(lo, root);
            return;
        }
        let (x, kids) = self.branching_below(root);
        for &c in kids {
            self.update_tasks(c, split, seeded, task);
        }
        task(x, root);
    }

    /// Updates the subtree below and including `root` (children's subtrees in parallel, then the
    /// chain above them); returns what it found for arcs of `root`'s ancestors.
    fn update_subtree(&self, root: u32, split: u32, ctx: &UpdateContext) -> Vec<Announcement> {
        let lo = root + 1 - self.subtree_size[root as usize];
        if !seeded_in(&ctx.seeded, self.arc_range(lo, root)) {
            return vec![];
        }
        if self.subtree_size[root as usize] < split {
            return self.update_ranks(lo, root, ctx, vec![]);
        }
        let (x, kids) = self.branching_below(root);
        let found = std::sync::Mutex::new(vec![]);
        rayon::scope(|s| {
            for &c in kids {
                let found = &found;
                s.spawn(move |_| {
                    let out = self.update_subtree(c, split, ctx);
                    found.lock().unwrap().extend(out);
                });
            }
        });
        let (s, e) = self.arc_range(x, root);
        let (here, up): (Vec<_>, Vec<_>) = found
            .into_inner()
            .unwrap()
            .into_iter()
            .partition(|an: &Announcement| (s..e).contains(&(an.arc as usize)));
        let mut out = self.update_ranks(x, root, ctx, here);
        out.extend(up);
        out
    }

    /// Processes the pending arcs whose lower endpoint lies in ranks `lo..=hi`, in ascending id,
    /// after applying `incoming` (what tasks below found for these arcs). Returns what it found
    /// for arcs above the range.
    fn update_ranks(
        &self,
        lo: u32,
        hi: u32,
        ctx: &UpdateContext,
        incoming: Vec<Announcement>,
    ) -> Vec<Announcement> {
        let (s, e) = self.arc_range(lo, hi);
        if s == e {
            return vec![];
        }
        let UpdateContext {
            weights: arc_weights,
            bits,
            ..
        } = ctx;
        // SAFETY (every `get`/`set` below): this task alone writes the arcs in s..e; it reads
        // those, arcs of its subtree's lower ranks (whose tasks have ended) and arcs above the
        // range (whose tasks have not started).
        let weights = |a: usize| unsafe { arc_weights.get(a) };
        // Weights of arcs changed before their turn, as they were (`modified` marks the keys, so
        // the common case, an untouched arc, costs one bit test). All are arcs of this range.
        let mut old: std::collections::HashMap<u32, (Weight, Weight), IdHash> = Default::default();
        // This task's view of the ancestors' arcs it found something for (see below).
        let mut outside: std::collections::HashMap<u32, Announcement, IdHash> = Default::default();
        // Takes what was found for arc b of this range, whose weights are (cf, cb) now: keeps
        // those for its partners, then marks it for recomputation or lowers it to (nf, nb), and
        // marks it pending.
        let take = |old: &mut std::collections::HashMap<u32, (Weight, Weight), IdHash>,
                    b: u32,
                    (cf, cb): (Weight, Weight),
                    recompute: bool,
                    (nf, nb): (Weight, Weight)| {
            if !bits.modified.get(b) {
                bits.modified.set(b);
                old.insert(b, (cf, cb));
            }
            if recompute {
                bits.recompute.set(b);
            } else {
                unsafe {
                    if nf < cf {
                        arc_weights.set(b as usize, 0, nf);
                    }
                    if nb < cb {
                        arc_weights.set(b as usize, 1, nb);
                    }
                }
            }
            bits.mark_pending(b);
        };
        for an in incoming {
            let b = an.arc;
            if bits.recompute.get(b) {
                continue;
            }
            let (cf, cb) = weights(b as usize);
            if an.recompute || an.fw < cf || an.bw < cb {
                take(&mut old, b, (cf, cb), an.recompute, (an.fw, an.bw));
            }
        }
        let mut x = lo as usize;
        let (first_word, last_word) = (s >> 6, (e - 1) >> 6);
        let mut next = first_word;
        // The words with a pending arc, ascending: arcs are marked pending only ahead of the one
        // being processed, so one pass finds them all.
        while let Some(word) = bits.pending_words.next_set(next, last_word) {
            next = word + 1;
            // Only this range's bits of a word it shares with a neighbour's range.
            let lo_bit = if word == s >> 6 { s & 63 } else { 0 };
            let hi_bit = if word == (e - 1) >> 6 {
                (e - 1) & 63
            } else {
                63
            };
            let mask = (u64::MAX >> (63 - hi_bit)) & (u64::MAX << lo_bit);
            loop {
                let todo = bits.pending.word(word) & mask;
                if todo == 0 {
                    break;
                }
                let a = (word << 6) as u32 | todo.trailing_zeros();
                bits.pending.clear(a);
                let au = a as usize;
                // The arc's lower endpoint: arcs come in ascending order, so x only moves up.
                if self.up_first[x + 1] as usize <= au {
                    x = self.tail_from(x + 1, a) as usize;
                }
                let (ofw, obw) = if bits.modified.get(a) {
                    old[&a]
                } else {
                    weights(au)
                };
                if bits.recompute.get(a) {
                    self.recompute(au, x, ctx);
                }
                let (nfw, nbw) = weights(au);
                if nfw == ofw && nbw == obw {
                    continue;
                }
                // Arc a = (x, y) forms the lower triangle of arc (min(y,z), max(y,z)) with (x, z),
                // for every other z in up(x).
                let y = self.up_head[au];
                let (ys, ye) = (
                    self.up_first[y as usize] as usize,
                    self.up_first[y as usize + 1] as usize,
                );
                let mut yp = ys;
                // (z, y) for z below y: in y's downward list, ascending by z like up(x). Both
                // walks gallop: near the top of a city's hierarchy y's lists run to thousands of
                // arcs, against tens in up(x), and a step at a time walked them whole for every
                // changed arc below y.
                let (mut dp, de) = (
                    self.down_first[y as usize] as usize,
                    self.down_first[y as usize + 1] as usize,
                );
                let a_sides = arc_weights.sides.ranks(au).0;
                for i in self.up_first[x] as usize..self.up_first[x + 1] as usize {
                    let z = self.up_head[i];
                    if z == y {
                        continue;
                    }
                    // A triangle whose sums cannot be finite on either side changes nothing (on a
                    // turn graph most arcs go one way): its arc is not looked for.
                    let i_sides = arc_weights.sides.ranks(i).0;
                    let ([lf, lb], [hf, hb]) = if z > y {
                        (a_sides, i_sides)
                    } else {
                        (i_sides, a_sides)
                    };
                    if !((lb && hf) || (hb && lf)) {
                        continue;
                    }
                    // The triangle's arcs at x to the lower and the higher endpoint of b.
                    let (b, lo, hi) = if z > y {
                        // (y, z) in up(y): both lists ascend, so one forward walk finds them all.
                        yp = gallop(&self.up_head[..ye], yp, z);
                        if yp == ye || self.up_head[yp] != z {
                            // Only in a restricted hierarchy, where every sum through the
                            // missing arc is infinite.
                            debug_assert!(self.restricted);
                            continue;
                        }
                        (yp, au, i)
                    } else {
                        // Likewise (z, y) in down(y).
                        dp = gallop(&self.down_tail[..de], dp, z);
                        if dp == de || self.down_tail[dp] != z {
                            debug_assert!(self.restricted);
                            continue;
                        }
                        (self.down_arc(dp) as usize, i, au)
                    };
                    let mine = b < e;
                    // An ancestor's arc is untouched until its task; this task keeps its own view
                    // of it (the sequential order's view: lowered by this task's earlier
                    // triangles, so that a triangle that lowered it and then got dearer is seen
                    // as tight) and hands the result up.
                    let seen = if mine || !bits.announced.get(b as u32) {
                        None
                    } else {
                        outside.get(&(b as u32))
                    };
                    if seen.is_some_and(|v| v.recompute) || (mine && bits.recompute.get(b as u32)) {
                        continue;
                    }
                    // Sums through x with a's new and old weights. The other arc's weight is the
                    // one its partners know: if it is still to come (a higher id) and has already
                    // changed, its change is announced later, against the weight it had before.
                    // (Both arcs at x are this range's.)
                    let (nf, nb, of, ob) = if lo == au {
                        let (hf, hb) = if bits.modified.get(hi as u32) {
                            old[&(hi as u32)]
                        } else {
                            weights(hi)
                        };
                        (add(nbw, hf), add(hb, nfw), add(obw, hf), add(hb, ofw))
                    } else {
                        let (lf, lb) = weights(lo);
                        (add(lb, nfw), add(nbw, lf), add(lb, ofw), add(obw, lf))
                    };
                    let (cf, cb) = seen.map_or_else(|| weights(b), |v| (v.fw, v.bw));
                    let dearer = (of == cf && nf > of) || (ob == cb && nb > ob);
                    let cheaper = nf < cf || nb < cb;
                    if !mine {
                        if dearer || cheaper {
                            if !bits.announced.get(b as u32) {
                                bits.announce(b as u32);
                            }
                            let v = outside.entry(b as u32).or_insert(Announcement {
                                arc: b as u32,
                                fw: cf,
                                bw: cb,
                                recompute: false,
                            });
                            if dearer {
                                v.recompute = true;
                            } else {
                                v.fw = v.fw.min(nf);
                                v.bw = v.bw.min(nb);
                            }
                        }
                        continue;
                    }
                    if dearer || cheaper {
                        take(&mut old, b as u32, (cf, cb), dearer, (nf, nb));
                    }
                }
            }
        }
        outside.into_values().collect()
    }

    /// Recomputes one CCH arc from its input arcs and lower triangles (an arc of the calling
    /// task's range; its triangles' arcs lie below it, where their tasks have ended).
    fn recompute(&self, a: usize, tail: usize, ctx: &UpdateContext) {
        let w = &ctx.weights;
        let (mut f, mut b) = (INF_WEIGHT, INF_WEIGHT);
        for (i, upward) in self.inputs_of.of(a) {
            let w = ctx.inputs[i as usize];
            if upward {
                f = f.min(w);
            } else {
                b = b.min(w);
            }
        }
        // SAFETY: as in `update_ranks`.
        unsafe {
            self.for_each_lower_triangle_of(a as u32, tail, |xy, xz| {
                // Only the sums whose two sides can be finite are read: on a turn graph most
                // arcs go one way, and most triangles give one side of `a` or none.
                let (xy, xz) = (xy as usize, xz as usize);
                let ([fy, by], [fz, bz]) = (w.sides.slots(xy), w.sides.slots(xz));
                if by != NO_SIDE && fz != NO_SIDE {
                    f = f.min(add(w.bw.get(by), w.fw.get(fz)));
                }
                if bz != NO_SIDE && fy != NO_SIDE {
                    b = b.min(add(w.bw.get(bz), w.fw.get(fy)));
                }
            });
            let (fa, ba) = w.get(a);
            if fa != f {
                w.set(a, 0, f);
            }
            if ba != b {
                w.set(a, 1, b);
            }
        }
    }
}

/// Below this many changed arcs a partial customization runs as one task.
const PARALLEL_CHANGES: usize = 16;
/// A partial customization splits subtrees of more than 1/`UPDATE_TASKS` of the ranks (and of
/// [`PARALLEL_NODES`]). New York's update took the same time for 4 to 64, on two cores.
const UPDATE_TASKS: u32 = 16;

/// What a partial customization's task found for an arc of a later task: recompute it, or lower
/// it to at most these weights.
struct Announcement {
    arc: u32,
    fw: Weight,
    bw: Weight,
    recompute: bool,
}

/// One bit per CCH arc, set and cleared by several tasks (each its own arcs; a word may hold two
/// tasks' arcs).
struct AtomicBits(ZeroPages);

impl AtomicBits {
    fn new(bits: usize) -> AtomicBits {
        AtomicBits(ZeroPages::new(bits.div_ceil(64)))
    }
    #[inline(always)]
    fn word(&self, w: usize) -> u64 {
        self.0.words()[w].load(std::sync::atomic::Ordering::Relaxed)
    }
    /// The first set bit in `from..=to`.
    #[inline(always)]
    fn next_set(&self, from: usize, to: usize) -> Option<usize> {
        if from > to {
            return None;
        }
        let mut w = from >> 6;
        let mut bits = self.word(w) & (u64::MAX << (from & 63));
        loop {
            if bits != 0 {
                let i = (w << 6) | bits.trailing_zeros() as usize;
                return (i <= to).then_some(i);
            }
            w += 1;
            if w << 6 > to {
                return None;
            }
            bits = self.word(w);
        }
    }
    #[inline(always)]
    fn get(&self, a: u32) -> bool {
        self.word(a as usize >> 6) & (1 << (a & 63)) != 0
    }
    #[inline(always)]
    fn set(&self, a: u32) {
        self.0.words()[a as usize >> 6]
            .fetch_or(1 << (a & 63), std::sync::atomic::Ordering::Relaxed);
    }
    /// Calls `f` for every set bit in `s..e`, ascending.
    #[inline(always)]
    fn for_each_in(&self, s: usize, e: usize, mut f: impl FnMut(usize)) {
        if s >= e {
            return;
        }
        let (first, last) = (s >> 6, (e - 1) >> 6);
        for w in first..=last {
            let mut bits = self.word(w);
            if w == first {
                bits &= u64::MAX << (s & 63);
            }
            if w == last {
                bits &= u64::MAX >> (63 - ((e - 1) & 63));
            }
            while bits != 0 {
                f((w << 6) | bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
    }
    /// Sets the bits in `s..e` for which `keep` holds (one atomic write per word).
    #[inline(always)]
    fn set_where(&self, s: usize, e: usize, keep: impl Fn(usize) -> bool) {
        let mut a = s;
        while a < e {
            let w = a >> 6;
            let end = e.min((w + 1) << 6);
            let mut bits = 0u64;
            for i in a..end {
                bits |= u64::from(keep(i)) << (i & 63);
            }
            if bits != 0 {
                self.0.words()[w].fetch_or(bits, std::sync::atomic::Ordering::Relaxed);
            }
            a = end;
        }
    }
    fn zero_word(&self, w: usize) {
        self.0.words()[w].store(0, std::sync::atomic::Ordering::Relaxed);
    }
    #[inline(always)]
    fn clear(&self, a: u32) {
        self.0.words()[a as usize >> 6]
            .fetch_and(!(1 << (a & 63)), std::sync::atomic::Ordering::Relaxed);
    }
}

/// Zeroed words in pages of their own, mapped from the system: a page is zeroed when a bit on it is
/// first touched, and given back whole. A partial customization touches a few pages of its marks
/// (2.3 MB each on a whole city's 18 M arcs); zeroed by the allocator, which hands out such blocks
/// from memory it must clear, the four of them took 0.34 ms of every live change on such a city.
struct ZeroPages {
    ptr: std::ptr::NonNull<std::sync::atomic::AtomicU64>,
    len: usize,
}

// SAFETY: the words are atomics, owned by this value alone.
unsafe impl Send for ZeroPages {}
unsafe impl Sync for ZeroPages {}

impl ZeroPages {
    fn new(len: usize) -> ZeroPages {
        if len == 0 {
            return ZeroPages {
                ptr: std::ptr::NonNull::dangling(),
                len,
            };
        }
        #[cfg(unix)]
        {
            // SAFETY: a fresh private anonymous mapping, read as zeroed words (the all-zero bit
            // pattern is a valid AtomicU64), page-aligned.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len * 8,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            assert!(
                p != libc::MAP_FAILED,
                "out of memory for {} bytes of marks",
                len * 8
            );
            ZeroPages {
                ptr: std::ptr::NonNull::new(p.cast()).expect("mapped"),
                len,
            }
        }
        #[cfg(not(unix))]
        {
            let layout = std::alloc::Layout::array::<u64>(len).expect("marks fit memory");
            // SAFETY: a non-zero layout; zeroed memory is valid AtomicU64s.
            let p = unsafe { std::alloc::alloc_zeroed(layout) };
            ZeroPages {
                ptr: std::ptr::NonNull::new(p.cast()).expect("out of memory for marks"),
                len,
            }
        }
    }

    #[inline(always)]
    fn words(&self) -> &[std::sync::atomic::AtomicU64] {
        // SAFETY: `len` initialized (zeroed) words live at `ptr` while `self` does.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for ZeroPages {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        #[cfg(unix)]
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len * 8);
        }
        #[cfg(not(unix))]
        // SAFETY: the allocation made in `new` with this layout.
        unsafe {
            std::alloc::dealloc(
                self.ptr.as_ptr().cast(),
                std::alloc::Layout::array::<u64>(self.len).unwrap(),
            );
        }
    }
}

/// The marks of a partial customization: arcs still to process, arcs to recompute from all their
/// triangles, arcs whose weight changed before their turn (their old weight is in their task's map).
struct UpdateBits {
    pending: AtomicBits,
    recompute: AtomicBits,
    modified: AtomicBits,
    /// Arcs some task holds a view of (only those are looked up in its map).
    announced: AtomicBits,
    /// A bit per word of `pending` that may have a bit set, so that a pass skips the rest: a few
    /// changes on a whole city mark a few thousand of its 18 M arcs, whose pending words took
    /// a scan of 284 k words to find. `recompute` and `modified` are set only on arcs marked
    /// pending, so these words are all three marks touched.
    pending_words: AtomicBits,
    /// The same for `announced`.
    announced_words: AtomicBits,
    arcs: usize,
}

impl UpdateBits {
    fn new(arcs: usize) -> UpdateBits {
        UpdateBits {
            arcs,
            announced_words: AtomicBits::new(arcs.div_ceil(64)),
            pending_words: AtomicBits::new(arcs.div_ceil(64)),
            pending: AtomicBits::new(arcs),
            recompute: AtomicBits::new(arcs),
            modified: AtomicBits::new(arcs),
            announced: AtomicBits::new(arcs),
        }
    }

    #[inline(always)]
    fn mark_pending(&self, a: u32) {
        self.pending.set(a);
        self.pending_words.set(a >> 6);
    }

    #[inline(always)]
    fn announce(&self, a: u32) {
        self.announced.set(a);
        self.announced_words.set(a >> 6);
    }

    /// Every mark cleared, by the words the last update touched.
    fn clear(&self) {
        let words = self.arcs.div_ceil(64);
        if words == 0 {
            return;
        }
        for (summary, marks) in [
            (
                &self.pending_words,
                [&self.pending, &self.recompute, &self.modified],
            ),
            (&self.announced_words, [&self.announced; 3]),
        ] {
            summary.for_each_in(0, words, |w| {
                for m in marks {
                    m.zero_word(w);
                }
            });
            summary.for_each_in(0, words, |w| summary.zero_word(w >> 6));
        }
    }
}

/// A hierarchy's marks for partial customization, kept between updates: made afresh for each, the
/// four 2.3 MB sets of a whole city cost more than a live change of a few arcs (zeroed by the
/// allocator, or their pages faulted in one by one); given back, they are cleared by the words the
/// update touched. One set per update running at once.
#[derive(Default)]
pub(crate) struct MarksPool(std::sync::Mutex<Vec<UpdateBits>>);

impl Clone for MarksPool {
    fn clone(&self) -> Self {
        MarksPool::default()
    }
}

impl MarksPool {
    fn take(&self, arcs: usize) -> UpdateBits {
        let kept = self.0.lock().unwrap().pop();
        let bits = kept
            .filter(|b| b.arcs == arcs)
            .unwrap_or_else(|| UpdateBits::new(arcs));
        debug_assert!(
            [
                &bits.pending,
                &bits.recompute,
                &bits.modified,
                &bits.announced,
                &bits.pending_words,
                &bits.announced_words
            ]
            .iter()
            .all(|m| m
                .0
                .words()
                .iter()
                .all(|w| w.load(std::sync::atomic::Ordering::Relaxed) == 0)),
            "marks given back uncleared"
        );
        bits
    }

    fn give_back(&self, bits: UpdateBits) {
        bits.clear();
        self.0.lock().unwrap().push(bits);
    }
}

/// What a partial customization's tasks share.
struct UpdateContext<'a> {
    weights: ArcWeights<'a>,
    inputs: &'a CowVec<Weight>,
    bits: UpdateBits,
    /// The CCH arcs of the changed input arcs, ascending.
    seeded: Vec<u32>,
}

/// A metric's weights in a partial customization, by arc: a side that cannot be finite reads as
/// infinite and is never written anything else. Both sides are placed from one word of the
/// hierarchy's [`Sides`].
struct ArcWeights<'a> {
    fw: CowWriter<'a, Weight>,
    bw: CowWriter<'a, Weight>,
    sides: &'a Sides,
    /// Per side, the last position (or `None` for a side without weights), to which a read of
    /// a side that cannot be finite is clamped before its weight is discarded.
    last: [Option<usize>; 2],
}

impl ArcWeights<'_> {
    fn new<'a>(
        fw: CowWriter<'a, Weight>,
        bw: CowWriter<'a, Weight>,
        sides: &'a Sides,
    ) -> ArcWeights<'a> {
        let last = [0, 1].map(|side| sides.len(side).checked_sub(1));
        ArcWeights {
            fw,
            bw,
            sides,
            last,
        }
    }

    /// # Safety
    /// As [`CowWriter::get`], for the weights of arc `a`.
    #[inline(always)]
    unsafe fn get(&self, a: usize) -> (Weight, Weight) {
        let (has, at) = self.sides.ranks(a);
        let [Some(lf), Some(lb)] = self.last else {
            let [f, b] = self.sides.slots(a);
            // SAFETY: positions of sides that can be finite.
            return unsafe {
                (
                    if f != NO_SIDE {
                        self.fw.get(f)
                    } else {
                        INF_WEIGHT
                    },
                    if b != NO_SIDE {
                        self.bw.get(b)
                    } else {
                        INF_WEIGHT
                    },
                )
            };
        };
        // Both sides read (a side that cannot be finite reads its neighbour's, in bounds), the
        // weights of those that cannot be finite discarded without a branch.
        // SAFETY: positions clamped to the last.
        let (f, b) = unsafe { (self.fw.get(at[0].min(lf)), self.bw.get(at[1].min(lb))) };
        (select(has[0], f), select(has[1], b))
    }
    /// # Safety
    /// As [`CowWriter::set`], for the weight of arc `a` on `side`.
    #[inline(always)]
    unsafe fn set(&self, a: usize, side: usize, w: Weight) {
        match self.sides.slot(side, a) {
            Some(k) if side == 0 => unsafe { self.fw.set(k, w) },
            Some(k) => unsafe { self.bw.set(k, w) },
            None => debug_assert!(w >= INF_WEIGHT, "arc {a}: finite on a side that cannot be"),
        }
    }
}

/// `w` if `keep`, else infinity, by a mask rather than a branch.
#[inline(always)]
fn select(keep: bool, w: Weight) -> Weight {
    let mask = 0u32.wrapping_sub(u32::from(keep));
    (w & mask) | (INF_WEIGHT & !mask)
}

/// The first position at or after `from` whose value is at least `z` (`list.len()` if none), in
/// a list ascending from `from`: a galloping search, doubling its step from `from`, then halving.
#[inline]
fn gallop(list: &[u32], from: usize, z: u32) -> usize {
    if from >= list.len() || list[from] >= z {
        return from;
    }
    // list[lo] < z throughout.
    let (mut lo, mut step) = (from, 1);
    while lo + step < list.len() && list[lo + step] < z {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(list.len());
    lo + 1 + list[lo + 1..hi].partition_point(|&v| v < z)
}

/// Whether a changed input arc lies on an arc in `s..e` (a subtree's arcs: else nothing there
/// changes). `seeded` ascends.
fn seeded_in(seeded: &[u32], (s, e): (usize, usize)) -> bool {
    let i = seeded.partition_point(|&a| (a as usize) < s);
    i < seeded.len() && (seeded[i] as usize) < e
}

/// Marks an input arc that runs upward in [`InputsByArc`]'s entries.
const UPWARD_BIT: u32 = 1 << 31;

/// CCH arc → the input arcs mapped onto it: the entries sorted by arc, found through a block of
/// 64 arcs (where its entries start) and each entry's arc within the block (a byte). Most arcs of
/// a hierarchy are shortcuts with no input arc: a start per arc (CSR) was 4 bytes an arc, 73 MB of
/// the 93 this map took on a whole city's 18 M arcs; this is 26 MB. Each entry carries whether its
/// input arc runs upward, so seeding an arc reads its inputs' weights and nothing else at their
/// scattered ids.
#[derive(Clone, Default)]
pub struct InputsByArc {
    /// Per block of 64 arcs, the index of its first entry (one more for the end).
    block_first: Vec<u32>,
    /// Per entry, its arc's place in the block (`arc % 64`), ascending within a block.
    offset: Vec<u8>,
    /// Per entry, the input arc, with [`UPWARD_BIT`] if it runs upward.
    inputs: Vec<u32>,
}

impl InputsByArc {
    /// The map of `arcs` hierarchy arcs whose input arc `i` lies on `input_arc[i]` (`u32::MAX`
    /// for none), running upward where `upward[i]`.
    pub fn new(arcs: usize, input_arc: &[u32], upward: &[bool]) -> InputsByArc {
        let blocks = arcs.div_ceil(64);
        // A counting sort by arc: per arc's count, then starts.
        let mut count = vec![0u32; arcs + 1];
        for &a in input_arc {
            if a != u32::MAX {
                count[a as usize + 1] += 1;
            }
        }
        for a in 0..arcs {
            count[a + 1] += count[a];
        }
        let total = count[arcs] as usize;
        let mut inputs = vec![0u32; total];
        let mut offset = vec![0u8; total];
        for (i, &a) in input_arc.iter().enumerate() {
            if a != u32::MAX {
                let k = count[a as usize] as usize;
                count[a as usize] += 1;
                inputs[k] = i as u32 | if upward[i] { UPWARD_BIT } else { 0 };
                offset[k] = (a % 64) as u8;
            }
        }
        // `count[a]` is now the end of arc a's entries, the start of arc a + 1's.
        let block_first = (0..=blocks)
            .map(|b| {
                if b == 0 {
                    0
                } else {
                    count[(64 * b).min(arcs) - 1]
                }
            })
            .collect();
        InputsByArc {
            block_first,
            offset,
            inputs,
        }
    }

    /// The entries of arc `a`.
    #[inline]
    fn range(&self, a: usize) -> (usize, usize) {
        let b = a / 64;
        let (s, e) = (
            self.block_first[b] as usize,
            self.block_first[b + 1] as usize,
        );
        let o = (a % 64) as u8;
        let block = &self.offset[s..e];
        let lo = block.partition_point(|&x| x < o);
        let hi = lo + block[lo..].partition_point(|&x| x == o);
        (s + lo, s + hi)
    }

    /// The input arcs mapped onto CCH arc `a`, each with whether it runs upward.
    #[inline]
    pub fn of(&self, a: usize) -> impl Iterator<Item = (u32, bool)> + '_ {
        let (s, e) = self.range(a);
        self.inputs[s..e].iter().map(|&e| decode(e))
    }

    /// Every entry of the arcs `s..e`, in order: `f(arc, entry)`, with the weight of the input
    /// arc [`PREFETCH_INPUTS`] entries ahead in `weights` asked into the cache meanwhile. A pass
    /// over the entries alone: most arcs have none.
    #[inline(always)]
    fn for_each_entry(
        &self,
        s: usize,
        e: usize,
        weights: *const Weight,
        mut f: impl FnMut(usize, u32),
    ) {
        if s == e {
            return;
        }
        let mut k = self.range(s).0;
        let mut block = s / 64;
        let mut block_end = self.block_first[block + 1] as usize;
        let stop = self.range(e - 1).1;
        while k < stop {
            while k >= block_end {
                block += 1;
                block_end = self.block_first[block + 1] as usize;
            }
            self.prefetch(k + PREFETCH_INPUTS, weights);
            f(64 * block + self.offset[k] as usize, self.inputs[k]);
            k += 1;
        }
    }

    /// Asks for the weight of entry `k`'s input arc to be brought into the cache: input arcs are
    /// numbered by junction, not in the order customization meets them, and their weights are
    /// read at random. With 32 entries ahead, `cust` alternated read 13.9-14.2 ms at best against
    /// 14.4-14.7 without (16 and 64 ahead did about as well).
    #[inline(always)]
    fn prefetch(&self, k: usize, weights: *const Weight) {
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(&e) = self.inputs.get(k) {
                // SAFETY: an input arc id indexes the input weights; a prefetch reads nothing.
                unsafe {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                        weights.add((e & !UPWARD_BIT) as usize).cast(),
                    );
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (k, weights);
    }

    pub fn memory_bytes(&self) -> usize {
        4 * (self.block_first.len() + self.inputs.len()) + self.offset.len()
    }
}

/// An entry of [`InputsByArc`]: the input arc and whether it runs upward.
#[inline(always)]
fn decode(e: u32) -> (u32, bool) {
    (e & !UPWARD_BIT, e & UPWARD_BIT != 0)
}

/// How many entries ahead [`InputsByArc::for_each_in`] asks for an input arc's weight.
const PREFETCH_INPUTS: usize = 32;

/// Raw views of a metric's arrays for the parallel customization.
struct RawMetric<'a> {
    /// Working arrays: both sides of every arc.
    fw: *mut Weight,
    bw: *mut Weight,
    /// The metric's weights, per side: those of the sides that can be finite (see `sides`).
    out: [*mut Weight; 2],
    sides: &'a Sides,
    /// The input weights (read only).
    inputs: *const Weight,
    /// Per side (fw, bw): the arcs whose final weight is finite, set as each node's arcs are
    /// finished (see `relax_node`).
    finite: [AtomicBits; 2],
}
// SAFETY: shared only inside `customize`, where tasks touch disjoint arc ranges.
unsafe impl Sync for RawMetric<'_> {}
unsafe impl Send for RawMetric<'_> {}

/// Shortcut weights of one metric: per side (0 forward, 1 backward), one weight for each arc whose
/// side can be finite ([`Sides`], the hierarchy's), in arc order. How a weight arises is not
/// stored: a path is unpacked from the pruned query graph's entries once that exists, and by
/// searching for the triangle whose sum gave each weight until then (see `unpack.rs`).
pub struct CustomizedMetric {
    pub weights: [CowVec<Weight>; 2],
    /// The hierarchy's sides, which place the weights.
    pub sides: Arc<Sides>,
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
            weights: self.weights.clone(),
            sides: self.sides.clone(),
            input_weights: self.input_weights.clone(),
            pruned: std::sync::OnceLock::new(),
            uses: Default::default(),
        }
    }
    fn clone_from(&mut self, source: &Self) {
        let [f, b] = &mut self.weights;
        f.clone_from(&source.weights[0]);
        b.clone_from(&source.weights[1]);
        self.sides = source.sides.clone();
        self.input_weights.clone_from(&source.input_weights);
        self.pruned = std::sync::OnceLock::new();
        self.uses = Default::default();
    }
}

impl CustomizedMetric {
    pub fn memory_bytes(&self) -> usize {
        4 * (self.weights[0].len() + self.weights[1].len() + self.input_weights.len())
            + self.pruned.get().map_or(0, PrunedGraph::memory_bytes)
    }

    /// The weight of arc `a` on `side` (infinite where that side cannot be finite).
    #[inline(always)]
    pub fn weight(&self, side: usize, a: usize) -> Weight {
        match self.sides.slot(side, a) {
            Some(k) => self.weights[side][k],
            None => INF_WEIGHT,
        }
    }

    /// The weight of travelling arc `a` upward.
    #[inline(always)]
    pub fn fw(&self, a: usize) -> Weight {
        self.weight(0, a)
    }

    /// The weight of travelling arc `a` downward.
    #[inline(always)]
    pub fn bw(&self, a: usize) -> Weight {
        self.weight(1, a)
    }

    /// Every arc's weight on `side`, in arc order (infinite where it cannot be finite).
    pub fn side_weights(&self, side: usize) -> Vec<Weight> {
        let mut out = vec![INF_WEIGHT; self.sides.arc_count()];
        self.sides.for_each(side, 0, out.len(), |a, k| {
            out[a] = self.weights[side][k];
        });
        out
    }

    /// Builds the pruned query graph if it is not there yet.
    pub fn prepare_queries(&self, cch: &Cch) -> &PrunedGraph {
        self.pruned.get_or_init(|| {
            let _bulk = crate::BulkWork::begin();
            cch.prune(self)
        })
    }

    /// The metric pruned for queries, without the shortcut weights that only partial
    /// customization and unpacking on the full hierarchy read, nor the input weights, which its
    /// pruned graph's entries stand for: for a metric no live change ever touches (walking's,
    /// whose input weights are its arc weights, kept beside it), 21 MB less on New York. It
    /// routes and unpacks through its pruned graph; it cannot be updated, and a copy of it
    /// carries no weights.
    pub fn query_only(mut self, cch: &Cch) -> CustomizedMetric {
        self.prepare_queries(cch);
        self.weights = [CowVec::from_slice(&[]), CowVec::from_slice(&[])];
        self.sides = Default::default();
        self.input_weights = CowVec::from_slice(&[]);
        self
    }

    /// Whether the shortcut weights are here (see [`Self::query_only`]).
    pub fn has_shortcut_weights(&self) -> bool {
        self.sides.arc_count() > 0
    }
}

#[cfg(test)]
mod inputs_by_arc_tests {
    use super::*;

    /// The galloping search finds what a walk a step at a time finds.
    #[test]
    fn gallop_finds_what_a_walk_finds() {
        let list: Vec<u32> = (0..300u32).map(|i| i * 3 + (i % 3) / 2).collect();
        for from in [0usize, 1, 5, 100, 299, 300] {
            for z in 0..1000u32 {
                let mut walk = from;
                while walk < list.len() && list[walk] < z {
                    walk += 1;
                }
                assert_eq!(gallop(&list, from, z), walk, "from {from}, z {z}");
            }
        }
    }

    /// The map gives every arc its input arcs, in input order, by a lookup and by a pass.
    #[test]
    fn every_arc_gets_its_inputs() {
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for arcs in [0usize, 1, 63, 64, 65, 200, 1000] {
            let inputs = 3 * arcs + 7;
            let input_arc: Vec<u32> = (0..inputs)
                .map(|_| match (arcs, next() % 4) {
                    (0, _) | (_, 0) => u32::MAX,
                    _ => next() % arcs as u32,
                })
                .collect();
            let upward: Vec<bool> = (0..inputs).map(|_| next() % 2 == 0).collect();
            let map = InputsByArc::new(arcs, &input_arc, &upward);
            let zeros = vec![0 as Weight; inputs];
            let want = |a: usize| -> Vec<(u32, bool)> {
                (0..inputs)
                    .filter(|&i| input_arc[i] == a as u32)
                    .map(|i| (i as u32, upward[i]))
                    .collect()
            };
            for a in 0..arcs {
                assert_eq!(
                    map.of(a).collect::<Vec<_>>(),
                    want(a),
                    "arcs {arcs}, arc {a}"
                );
            }
            for (s, e) in [(0, arcs), (arcs / 3, arcs / 2), (arcs / 2, arcs)] {
                let mut seen = Vec::new();
                map.for_each_entry(s, e, zeros.as_ptr(), |a, entry| seen.push((a, entry)));
                let all: Vec<(usize, u32)> = (s..e)
                    .flat_map(|a| want(a).into_iter().map(move |(i, up)| (a, i, up)))
                    .map(|(a, i, up)| (a, i | if up { UPWARD_BIT } else { 0 }))
                    .collect();
                assert_eq!(seen, all, "arcs {arcs}, pass from {s}");
            }
        }
    }
}
