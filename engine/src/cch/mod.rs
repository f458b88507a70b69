//! Customizable contraction hierarchy (Dibbelt, Strasser & Wagner), after RoutingKit's CCH.
//!
//! Three phases: [`Cch::new`] builds the metric-independent topology from a nested-dissection order
//! (the chordal supergraph in rank space, its elimination tree and each node's downward arcs, from
//! which lower triangles are enumerated when needed rather than stored);
//! [`Cch::customize`] turns per-input-arc weights into a [`CustomizedMetric`] in milliseconds;
//! [`Cch::update`] re-customizes only what a few changed arcs affect. Queries live in
//! `query.rs`; the order in `order.rs`; customization (basic and partial) in `customize.rs`, the
//! pruned query graph in `prune.rs`, turning a path of shortcuts into input arcs in `unpack.rs`.
//!
//! Ids: nodes are ranks (`rank[node]`); a CCH arc `(x, y)` with `x < y` is stored once in `x`'s upward
//! list; `fw` is the weight of travelling `x → y`, `bw` of `y → x`.

use crate::graph::NodeId;

pub mod cow;
mod customize;
#[cfg(test)]
mod differential_tests;
pub mod order;
mod prune;
pub mod query;
pub mod sides;
mod unpack;

pub use customize::{CustomizedMetric, InputsByArc};
pub use prune::{Entries, PrunedGraph};
pub use sides::Sides;

pub type Weight = u32;
pub const INF_WEIGHT: Weight = u32::MAX / 2;

/// Subtrees smaller than this are customized by one task.
const PARALLEL_NODES: u32 = 2048;

/// Saturating addition that keeps INF at INF.
#[inline(always)]
pub fn add(a: Weight, b: Weight) -> Weight {
    a.saturating_add(b).min(INF_WEIGHT)
}

/// The parts of a restricted hierarchy a graph file stores (see [`Cch::stored_parts`]).
#[derive(Clone, Debug, PartialEq)]
pub struct StoredHierarchy {
    /// Rank → node.
    pub order: Vec<NodeId>,
    /// Each rank's upward arcs: `up_head[up_first[x]..up_first[x + 1]]`, ascending.
    pub up_first: Vec<u32>,
    pub up_head: Vec<u32>,
    /// Each rank's parent in the elimination tree, `u32::MAX` for a root.
    pub parent: Vec<u32>,
    /// Which sides of each arc can be finite ([`Sides::to_words`]); empty if not stored, to be
    /// found again from the usable input arcs.
    pub sides: Vec<u64>,
}

/// A fingerprint of a set of usable input arcs (FNV-1a over their ids and the count), which a
/// stored hierarchy carries: a graph file's hierarchy is used only for the set it was built for.
pub fn usable_fingerprint(usable: &[bool]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |x: u64| {
        h ^= x;
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    for (i, &u) in usable.iter().enumerate() {
        if u {
            mix(i as u64);
        }
    }
    mix(usable.len() as u64);
    h
}

/// A fingerprint of a metric's input weights (FNV-1a over them and their count): what a graph file
/// stores beside metrics customized at build ([`crate::graph::CityGraph::cycling_metric_inputs`]).
pub fn weights_fingerprint(weights: &[Weight]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &w in weights {
        h ^= w as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^= weights.len() as u64;
    h.wrapping_mul(0x0100_0000_01b3)
}

#[derive(Clone)]
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
    /// Each entry's arc `(x, y)` as its place in `x`'s upward list (the arc is
    /// `up_first[x] + down_off[i]`, [`Self::down_arc`]): two bytes an entry where the arc's id
    /// took four (35 MB less on the 4 × 4 tiling of New York). The loops that read an entry read
    /// `up_first[x + 1]` already, on the same cache line.
    pub down_off: Vec<u16>,
    /// The lower endpoint `x` of each entry (lists are intersected by it).
    pub down_tail: Vec<u32>,
    /// The number of lower triangles (for statistics).
    triangles: usize,
    /// Input arc → CCH arc and whether the input arc runs upward (`lo → hi`). `u32::MAX` for loops.
    /// Empty once a routing hierarchy has let the map go for its inputs' ends (`input_ends`);
    /// read through [`Self::input_arc`].
    pub input_cch_arc: Vec<u32>,
    pub input_upward: Vec<bool>,
    /// The input arcs by their ends, in place of `input_cch_arc` ([`Self::keep_inputs_by_ends`]).
    input_ends: Option<InputEnds>,
    /// Elimination tree: subtree sizes and children (CSR), for parallel customization.
    pub subtree_size: Vec<u32>,
    child_first: Vec<u32>,
    child: Vec<u32>,
    /// The elimination tree's roots (one per component), ascending.
    roots: Vec<u32>,
    /// Those with [`PARALLEL_NODES`] ranks or more below them.
    large_roots: Vec<u32>,
    /// CCH arc → the input arcs mapped onto it (partial customization, unpacking).
    pub inputs_of: InputsByArc,
    /// Whether this is a [`Cch::restricted`] hierarchy: a part of a chordal one, itself not
    /// chordal (an arc can lack a triangle's third arc, where that arc could never be finite).
    restricted: bool,
    /// The sides of each arc that can be finite, which are all a metric keeps weights for
    /// (both sides of every arc but in a restricted hierarchy; see `sides.rs`).
    pub sides: std::sync::Arc<Sides>,
    /// Marks for partial customization, kept between updates.
    marks: customize::MarksPool,
}

/// A routing hierarchy's input arcs by their ends (shared with the graph they come from, the turn
/// model's turns for cycling) and a bit per input arc that maps onto an arc: what live changes
/// need to find a changed input's arc, in place of a map from every input arc to its arc and
/// direction (5 bytes an input arc, 40 MB on the 4 × 4 tiling of New York's sample).
#[derive(Clone)]
struct InputEnds {
    tails: std::sync::Arc<[NodeId]>,
    heads: std::sync::Arc<[NodeId]>,
    mapped: Vec<u64>,
}

/// The input arcs of a graph given by its edges, both ways: edge `e`'s arc `2e` runs tail → head
/// and `2e + 1` head → tail (a road graph's arc ids).
pub fn both_ways(tails: &[NodeId], heads: &[NodeId]) -> (Vec<NodeId>, Vec<NodeId>) {
    let t = tails
        .iter()
        .zip(heads)
        .flat_map(|(&t, &h)| [t, h])
        .collect();
    let h = tails
        .iter()
        .zip(heads)
        .flat_map(|(&t, &h)| [h, t])
        .collect();
    (t, h)
}

/// The elimination tree of the graph of `tails`/`heads` (either direction) contracted in `order`:
/// each rank's parent rank, `u32::MAX` for a root. Liu's algorithm: for each rank `x` in turn,
/// every lower neighbour's current root (found with path compression) becomes a child of `x`.
/// The tree equals the one of the chordal completion, which is not built.
fn elimination_tree(n: usize, tails: &[NodeId], heads: &[NodeId], order: &[NodeId]) -> Vec<u32> {
    let mut rank = vec![0u32; n];
    for (r, &v) in order.iter().enumerate() {
        rank[v as usize] = r as u32;
    }
    // Lower neighbours of each rank (CSR by the higher end).
    let mut first = vec![0u32; n + 1];
    for (&t, &h) in tails.iter().zip(heads) {
        let (a, b) = (rank[t as usize], rank[h as usize]);
        if a != b {
            first[a.max(b) as usize + 1] += 1;
        }
    }
    for i in 0..n {
        first[i + 1] += first[i];
    }
    let mut fill = first.clone();
    let mut lower = vec![0u32; first[n] as usize];
    for (&t, &h) in tails.iter().zip(heads) {
        let (a, b) = (rank[t as usize], rank[h as usize]);
        if a != b {
            let hi = a.max(b) as usize;
            lower[fill[hi] as usize] = a.min(b);
            fill[hi] += 1;
        }
    }
    drop((rank, fill));
    let mut parent = vec![u32::MAX; n];
    let mut ancestor = vec![u32::MAX; n];
    for x in 0..n as u32 {
        for &k in &lower[first[x as usize] as usize..first[x as usize + 1] as usize] {
            let mut r = k;
            while ancestor[r as usize] != u32::MAX && ancestor[r as usize] != x {
                let next = ancestor[r as usize];
                ancestor[r as usize] = x;
                r = next;
            }
            if ancestor[r as usize] == u32::MAX {
                ancestor[r as usize] = x;
                parent[r as usize] = x;
            }
        }
    }
    parent
}

impl Cch {
    /// Builds the topology. `tails`/`heads` are the input graph's arcs: input arc `i` runs
    /// `tails[i]` → `heads[i]` (a road graph's two directions are two input arcs, see
    /// [`both_ways`]; a turn graph's turn is one, its reverse no input at all). The order is first
    /// renumbered to a postorder of its elimination tree (same fill-in), so every subtree is a
    /// contiguous range of ranks and subtrees can be customized in parallel.
    pub fn new(node_count: usize, tails: &[NodeId], heads: &[NodeId], order: &[NodeId]) -> Cch {
        let mut cch = Cch::without_input_map(node_count, tails, heads, order);
        cch.inputs_of = cch.inputs_by_arc();
        cch
    }

    /// [`Cch::new`] without [`Cch::inputs_of`], for a caller that maps input arcs its own way.
    fn without_input_map(
        node_count: usize,
        tails: &[NodeId],
        heads: &[NodeId],
        order: &[NodeId],
    ) -> Cch {
        let n = node_count;
        assert_eq!(order.len(), n, "order must be a permutation of the nodes");
        // The elimination tree of `order` without the chordal completion (Liu's algorithm), then
        // its postorder: the completion is built once, in the postorder, where it was built twice
        // (once to find the tree); 2.3 → 1.2 s at load on a 4 × 4 tiling of New York.
        let parent = elimination_tree(n, tails, heads, order);
        let mut first = vec![0u32; n + 1];
        for &p in &parent {
            if p != u32::MAX {
                first[p as usize + 1] += 1;
            }
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut fill = first.clone();
        let mut kids = vec![0u32; first[n] as usize];
        for (x, &p) in parent.iter().enumerate() {
            if p != u32::MAX {
                kids[fill[p as usize] as usize] = x as u32;
                fill[p as usize] += 1;
            }
        }
        let mut post = Vec::with_capacity(n);
        let mut stack: Vec<(u32, bool)> = Vec::new();
        for root in (0..n as u32).filter(|&x| parent[x as usize] == u32::MAX) {
            stack.push((root, false));
            while let Some((x, expanded)) = stack.pop() {
                if expanded {
                    post.push(order[x as usize]);
                } else {
                    stack.push((x, true));
                    for &c in kids[first[x as usize] as usize..first[x as usize + 1] as usize]
                        .iter()
                        .rev()
                    {
                        stack.push((c, false));
                    }
                }
            }
        }
        drop((parent, first, kids));
        let cch = Cch::build(node_count, tails, heads, &post);
        // Unpacking entries name input arcs below a flag bit.
        assert!(
            cch.input_cch_arc.len() < 1 << 31,
            "more input arcs than unpacking entries can name"
        );
        cch
    }

    /// [`Cch::new`] on the input arcs that are `usable`, in input-arc ids of all of them: the others
    /// map to no arc. The cycling hierarchy is built this way on the turns a bicycle can use, in
    /// its own order.
    pub fn on_inputs(
        node_count: usize,
        tails: &[NodeId],
        heads: &[NodeId],
        order: &[NodeId],
        usable: &[bool],
    ) -> Cch {
        assert_eq!(usable.len(), tails.len());
        let kept: Vec<usize> = (0..tails.len()).filter(|&i| usable[i]).collect();
        let t: Vec<NodeId> = kept.iter().map(|&i| tails[i]).collect();
        let h: Vec<NodeId> = kept.iter().map(|&i| heads[i]).collect();
        let mut cch = Cch::without_input_map(node_count, &t, &h, order);
        drop((t, h));
        let mut input_cch_arc = vec![u32::MAX; usable.len()];
        let mut input_upward = vec![false; usable.len()];
        for (k, &i) in kept.iter().enumerate() {
            input_cch_arc[i] = cch.input_cch_arc[k];
            input_upward[i] = cch.input_upward[k];
        }
        cch.input_cch_arc = input_cch_arc;
        cch.input_upward = input_upward;
        cch.inputs_of = cch.inputs_by_arc();
        cch
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
        // which it suffices to pass on to x's lowest upward neighbour (its parent). A rank's list
        // is final when its turn comes: it goes to the flat arrays then, and its memory (with the
        // room its merged children's lists took before duplicates went) is freed at once, not
        // held to the end (the cycling hierarchy of a 4 × 4 tiling of New York peaked 65 MB
        // lower).
        let mut etree_parent = vec![u32::MAX; n];
        let mut up_first = Vec::with_capacity(n + 1);
        up_first.push(0u32);
        let mut up_head = Vec::new();
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
            up_head.extend_from_slice(&list);
            up_first.push(up_head.len() as u32);
        }
        drop(up);
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
        let mut input_cch_arc = vec![u32::MAX; tails.len()];
        let mut input_upward = vec![false; tails.len()];
        for (i, (&t, &h)) in tails.iter().zip(heads).enumerate() {
            let (a, b) = (rank[t as usize], rank[h as usize]);
            if a != b {
                input_cch_arc[i] = find_arc(a.min(b), a.max(b));
                input_upward[i] = a < b;
            }
        }
        let parts = StoredHierarchy {
            order: order.to_vec(),
            up_first,
            up_head,
            parent: etree_parent,
            sides: vec![],
        };
        Cch::assemble(parts, rank, input_cch_arc, input_upward, false)
    }

    /// A hierarchy of its upward arcs, tree and input map, with what derives from them: the
    /// downward lists, subtree sizes and the tree's children and roots (no input map by arc).
    fn assemble(
        parts: StoredHierarchy,
        rank: Vec<u32>,
        input_cch_arc: Vec<u32>,
        input_upward: Vec<bool>,
        restricted: bool,
    ) -> Cch {
        let StoredHierarchy {
            order,
            up_first,
            up_head,
            parent,
            sides,
        } = parts;
        let n = order.len();
        // Both sides of every arc until a restriction says otherwise (stored sides of the wrong
        // size are found again by `with_stored_inputs`).
        let sides = if sides.is_empty() && !restricted {
            Sides::all(up_head.len())
        } else {
            Sides::from_words(&sides, up_head.len()).unwrap_or_default()
        };
        let mut subtree_size = vec![1u32; n];
        for x in 0..n {
            let p = parent[x];
            if p != u32::MAX {
                subtree_size[p as usize] += subtree_size[x];
            }
        }
        let (down_first, down_off, down_tail) = downward_lists(&up_first, &up_head);
        let triangles = triangle_bound(&up_first);
        let mut cch = Cch {
            order,
            rank,
            up_first,
            up_head,
            etree_parent: parent,
            down_first,
            down_off,
            down_tail,
            triangles,
            input_cch_arc,
            input_upward,
            input_ends: None,
            subtree_size,
            child_first: vec![],
            child: vec![],
            roots: vec![],
            large_roots: vec![],
            inputs_of: InputsByArc::default(),
            restricted,
            sides: std::sync::Arc::new(sides),
            marks: Default::default(),
        };
        (cch.child_first, cch.child) = cch.children();
        cch.roots = (0..n as u32)
            .filter(|&x| cch.etree_parent[x as usize] == u32::MAX)
            .collect();
        cch.large_roots = cch
            .roots
            .iter()
            .copied()
            .filter(|&r| cch.subtree_size[r as usize] >= PARALLEL_NODES)
            .collect();
        cch
    }

    /// What a graph file stores of a restricted hierarchy, so that a load need not build it
    /// ([`Self::from_stored`] derives the rest): its order, its upward arcs (CSR) and its
    /// elimination tree, which is the full hierarchy's.
    pub fn stored_parts(&self) -> StoredHierarchy {
        assert!(self.restricted, "only restricted hierarchies are stored");
        StoredHierarchy {
            order: self.order.clone(),
            up_first: self.up_first.clone(),
            up_head: self.up_head.clone(),
            parent: self.etree_parent.clone(),
            sides: self.sides.to_words(),
        }
    }

    /// The restricted hierarchy [`Self::stored_parts`] gave, on input arcs `tails`/`heads` of
    /// which those marked `usable` may be finite (what it was restricted to). Checked first: an
    /// inconsistent part is an error, not a wrong route.
    pub fn from_stored(
        parts: StoredHierarchy,
        tails: &[NodeId],
        heads: &[NodeId],
        usable: &[bool],
    ) -> Result<Cch, String> {
        Cch::stored_topology(parts)?.with_stored_inputs(tails, heads, usable)
    }

    /// The first half of [`Self::from_stored`], which needs no input arcs: the parts checked and
    /// what derives from them (downward lists, the tree's sizes, children and roots), so a load
    /// makes it while it builds the turn model. Its input arcs are mapped by
    /// [`Self::with_stored_inputs`].
    pub fn stored_topology(parts: StoredHierarchy) -> Result<Cch, String> {
        let n = parts.order.len();
        {
            let StoredHierarchy {
                order,
                up_first,
                up_head,
                parent,
                sides: _,
            } = &parts;
            if !crate::graph::is_permutation(order) || parent.len() != n {
                return Err("stored hierarchy: order or tree of the wrong size".into());
            }
            if up_first.len() != n + 1
                || up_first[0] != 0
                || up_first.windows(2).any(|w| w[0] > w[1])
                || up_first[n] as usize != up_head.len()
            {
                return Err("stored hierarchy: arc lists are inconsistent".into());
            }
            for x in 0..n {
                let heads_of = &up_head[up_first[x] as usize..up_first[x + 1] as usize];
                if heads_of.first().is_some_and(|&h| h as usize <= x)
                    || heads_of.last().is_some_and(|&h| h as usize >= n)
                    || heads_of.windows(2).any(|w| w[0] >= w[1])
                {
                    return Err(format!(
                        "stored hierarchy: rank {x}'s arcs do not go up in order"
                    ));
                }
                let p = parent[x];
                if p != u32::MAX && (p as usize <= x || p as usize >= n) {
                    return Err(format!(
                        "stored hierarchy: rank {x}'s parent is not above it"
                    ));
                }
            }
        }
        let mut rank = vec![0u32; n];
        for (r, &v) in parts.order.iter().enumerate() {
            rank[v as usize] = r as u32;
        }
        let cch = Cch::assemble(parts, rank, vec![], vec![], true);
        if (0..n).any(|x| x + 1 < cch.subtree_size[x] as usize) {
            return Err("stored hierarchy: ranks are not a postorder of the tree".into());
        }
        Ok(cch)
    }

    /// The second half of [`Self::from_stored`]: the input arcs mapped onto the arcs of a
    /// [`Self::stored_topology`].
    pub fn with_stored_inputs(
        mut self,
        tails: &[NodeId],
        heads: &[NodeId],
        usable: &[bool],
    ) -> Result<Cch, String> {
        if tails.len() != heads.len() || tails.len() != usable.len() {
            return Err("stored hierarchy: input arcs of the wrong size".into());
        }
        let n = self.node_count();
        let (up_first, up_head, rank) = (&self.up_first, &self.up_head, &self.rank);
        let mut input_cch_arc = vec![u32::MAX; tails.len()];
        let mut input_upward = vec![false; tails.len()];
        for (i, (&t, &h)) in tails.iter().zip(heads).enumerate() {
            if !usable[i] || t as usize >= n || h as usize >= n {
                continue;
            }
            let (a, b) = (rank[t as usize], rank[h as usize]);
            if a == b {
                continue;
            }
            input_upward[i] = a < b;
            let (lo, hi) = (a.min(b) as usize, a.max(b));
            let (s, e) = (up_first[lo] as usize, up_first[lo + 1] as usize);
            // An arc dropped by the restriction (infinite both ways) maps to none.
            if let Ok(k) = up_head[s..e].binary_search(&hi) {
                input_cch_arc[i] = (s + k) as u32;
            }
        }
        self.inputs_of = InputsByArc::new(self.arc_count(), &input_cch_arc, &input_upward);
        self.input_cch_arc = input_cch_arc;
        self.input_upward = input_upward;
        if self.sides.arc_count() != self.arc_count() {
            // Not stored (an older file): found again, a pass over the triangles.
            let bits = self.finite_sides(usable);
            self.sides = std::sync::Arc::new(Sides::from_bits(bits, self.arc_count()));
        }
        Ok(self)
    }

    /// The part of this hierarchy a class of metrics can use: the arcs that are finite on some
    /// side when exactly the input arcs marked `usable` are (a customization with unit weights
    /// tells), with the same nodes, order and elimination tree. Input arcs not usable map to no
    /// arc, so a metric customized here is finite only where the full hierarchy would let it be,
    /// and its weights equal the full hierarchy's on every arc kept: an arc dropped is infinite
    /// both ways under any such metric, so every triangle through it sums to infinity. The
    /// cycling hierarchy (built in its own order on the turns a bicycle can use) is restricted
    /// so: 1.38 M → 1.13 M arcs on New York, as a turn's reverse is no turn and many arcs can be
    /// travelled neither way.
    ///
    /// The result is not chordal: where the third arc of a triangle was dropped, loops that
    /// look it up skip the triangle. The elimination tree is the full hierarchy's, so every node
    /// a search can reach upward is still an ancestor of its start. Perfect customization can
    /// leave arcs longer than their ends' distance here; pruning takes out those it cannot
    /// unpack (`prune.rs`).
    pub fn restricted(&self, usable: &[bool]) -> Cch {
        self.clone().into_restricted(usable)
    }

    /// [`Self::restricted`], taking this hierarchy apart as it goes: the downward lists and the
    /// input map are let go once the unit customization has read them, and the nodes' arrays
    /// move over, so a load or build that makes the cycling hierarchy peaks lower.
    pub fn into_restricted(mut self, usable: &[bool]) -> Cch {
        self.restrict_arcs(usable);
        (
            (self.down_first, self.down_off, self.down_tail),
            self.inputs_of,
        ) = rayon::join(
            || downward_lists(&self.up_first, &self.up_head),
            || InputsByArc::new(self.up_head.len(), &self.input_cch_arc, &self.input_upward),
        );
        self.triangles = triangle_bound(&self.up_first);
        self.restricted = true;
        self
    }

    /// What a graph file stores of [`Self::restricted`] (see [`Self::stored_parts`]), without
    /// the downward lists and input map a hierarchy that routes needs: the pipeline's build of the
    /// 4 × 4 tiling peaks 0.1 GB lower so.
    /// [`Self::stored_parts`], without copying them.
    pub fn into_stored_parts(self) -> StoredHierarchy {
        assert!(self.restricted, "only restricted hierarchies are stored");
        StoredHierarchy {
            sides: self.sides.to_words(),
            order: self.order,
            up_first: self.up_first,
            up_head: self.up_head,
            parent: self.etree_parent,
        }
    }

    pub fn into_restricted_parts(mut self, usable: &[bool]) -> StoredHierarchy {
        self.restrict_arcs(usable);
        StoredHierarchy {
            order: self.order,
            up_first: self.up_first,
            up_head: self.up_head,
            parent: self.etree_parent,
            sides: self.sides.to_words(),
        }
    }

    /// The upward arcs and the input map of [`Self::restricted`], the downward lists and the
    /// input map by arc let go (to be made again, or not, by the caller).
    fn restrict_arcs(&mut self, usable: &[bool]) {
        assert_eq!(usable.len(), self.input_cch_arc.len());
        let [fw, bw] = self.finite_sides(usable);
        let finite = |a: usize| (fw[a >> 6] | bw[a >> 6]) >> (a & 63) & 1 != 0;
        self.down_first = Vec::new();
        self.down_off = Vec::new();
        self.down_tail = Vec::new();
        self.inputs_of = InputsByArc::default();
        let n = self.node_count();
        let mut new_id = vec![u32::MAX; self.arc_count()];
        let mut up_first = Vec::with_capacity(n + 1);
        up_first.push(0u32);
        let mut up_head = Vec::new();
        // The kept arcs' sides, renumbered with them.
        let mut kept_sides = [Vec::new(), Vec::new()];
        for x in 0..n {
            let (s, e) = (self.up_first[x] as usize, self.up_first[x + 1] as usize);
            for (a, id) in new_id.iter_mut().enumerate().take(e).skip(s) {
                if finite(a) {
                    let k = up_head.len();
                    *id = k as u32;
                    if k % 64 == 0 {
                        kept_sides[0].push(0u64);
                        kept_sides[1].push(0u64);
                    }
                    for (side, bits) in [&fw, &bw].into_iter().enumerate() {
                        kept_sides[side][k >> 6] |= (bits[a >> 6] >> (a & 63) & 1) << (k & 63);
                    }
                    up_head.push(self.up_head[a]);
                }
            }
            up_first.push(up_head.len() as u32);
        }
        drop((fw, bw));
        up_head.shrink_to_fit();
        self.sides = std::sync::Arc::new(Sides::from_bits(kept_sides, up_head.len()));
        self.up_first = up_first;
        self.up_head = up_head;
        for (a, &u) in self.input_cch_arc.iter_mut().zip(usable) {
            *a = if u && *a != u32::MAX {
                new_id[*a as usize]
            } else {
                u32::MAX
            };
        }
    }

    /// Per side (fw, bw), the arcs that are finite when exactly the `usable` input arcs are: a
    /// customization of booleans (a sum through a triangle is finite when both its arcs are, a
    /// minimum when either is), bottom-up on one thread, in bits where a customization with unit
    /// weights held 8 bytes an arc (178 MB more at the peak of building the 4 × 4 tiling's
    /// hierarchy). On a restricted hierarchy too, which has the arc of every triangle whose two
    /// arcs at its lowest node are finite on the sides summed (else it would have been finite,
    /// hence kept), and gives the same bits on the arcs it kept.
    fn finite_sides(&self, usable: &[bool]) -> [Vec<u64>; 2] {
        let words = self.arc_count().div_ceil(64);
        let (mut fw, mut bw) = (vec![0u64; words], vec![0u64; words]);
        let get = |v: &[u64], a: usize| v[a >> 6] >> (a & 63) & 1 != 0;
        for (i, &a) in self.input_cch_arc.iter().enumerate() {
            if a != u32::MAX && usable[i] {
                let side = if self.input_upward[i] {
                    &mut fw
                } else {
                    &mut bw
                };
                side[a as usize >> 6] |= 1 << (a & 63);
            }
        }
        let mut pos = vec![0u32; self.node_count()];
        for y in 0..self.node_count() {
            let (s, e) = (self.up_first[y] as usize, self.up_first[y + 1] as usize);
            for a in s..e {
                pos[self.up_head[a] as usize] = a as u32;
            }
            let (ds, de) = (self.down_first[y] as usize, self.down_first[y + 1] as usize);
            for (&off, &x) in self.down_off[ds..de].iter().zip(&self.down_tail[ds..de]) {
                let x = x as usize;
                let xy = self.up_first[x] as usize + off as usize;
                let (fxy, bxy) = (get(&fw, xy), get(&bw, xy));
                if !fxy && !bxy {
                    continue;
                }
                for xz in xy + 1..self.up_first[x + 1] as usize {
                    // y → x → z is (x, y) down then (x, z) up: fw of (y, z); z → x → y its bw.
                    let z = self.up_head[xz];
                    let b = pos[z as usize] as usize;
                    if !(s..e).contains(&b) || self.up_head[b] != z {
                        // No arc (y, z): only in a restricted hierarchy, where no sum through
                        // it is finite.
                        debug_assert!(self.restricted);
                        continue;
                    }
                    if bxy && get(&fw, xz) {
                        fw[b >> 6] |= 1 << (b & 63);
                    }
                    if fxy && get(&bw, xz) {
                        bw[b >> 6] |= 1 << (b & 63);
                    }
                }
            }
        }
        [fw, bw]
    }

    /// The nodes of this hierarchy without its arcs: what a search on a pruned query graph reads
    /// (ranks and the elimination tree), for a metric that keeps only that graph. It cannot be
    /// customized.
    pub fn lean(&self) -> Cch {
        let n = self.node_count();
        Cch {
            order: self.order.clone(),
            rank: self.rank.clone(),
            up_first: vec![0; n + 1],
            up_head: vec![],
            etree_parent: self.etree_parent.clone(),
            down_first: vec![0; n + 1],
            down_off: vec![],
            down_tail: vec![],
            triangles: 0,
            input_cch_arc: vec![],
            input_upward: vec![],
            input_ends: None,
            subtree_size: vec![],
            child_first: vec![],
            child: vec![],
            roots: vec![],
            large_roots: vec![],
            inputs_of: InputsByArc::default(),
            restricted: true,
            sides: Default::default(),
            marks: Default::default(),
        }
    }

    /// Whether this is a [`Cch::restricted`] hierarchy.
    pub fn is_restricted(&self) -> bool {
        self.restricted
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
    /// (The plain form of [`Self::for_each_lower_triangle`], kept as the tests' reference.)
    #[cfg(test)]
    pub fn lower_triangles(&self, b: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let (y, z) = (self.arc_tail(b) as usize, self.up_head[b as usize] as usize);
        let range = |v: usize| self.down_first[v] as usize..self.down_first[v + 1] as usize;
        let (ry, rz) = (range(y), range(z));
        let y_shorter = ry.len() <= rz.len();
        let (short, long) = if y_shorter { (ry, rz) } else { (rz, ry) };
        let long_tails = &self.down_tail[long.clone()];
        short.filter_map(move |i| {
            let x = self.down_tail[i];
            let j = long.start + long_tails.binary_search(&x).ok()?;
            let (xs, xl) = (self.down_arc(i), self.down_arc(j));
            Some(if y_shorter { (xs, xl) } else { (xl, xs) })
        })
    }

    /// Calls `f` with each lower triangle of arc `b = (y, z)`, as [`Self::lower_triangles`]
    /// yields them, faster: where the two downward lists are of similar length, `y`'s is marked
    /// in a per-thread map from node to position and `z`'s looked up in it, loads that do not wait
    /// on each other (a binary search per entry, or a merge, waits on each comparison before its
    /// next load, and that took most of a partial customization's time); where one list is more
    /// than [`MERGE_RATIO`] times as long, the shorter is searched in the longer.
    #[inline]
    pub fn for_each_lower_triangle(&self, b: u32, f: impl FnMut(u32, u32)) {
        self.for_each_lower_triangle_of(b, self.arc_tail(b) as usize, f);
    }

    /// [`Self::for_each_lower_triangle`] of arc `b` whose lower endpoint `tail` the caller knows.
    #[inline]
    pub fn for_each_lower_triangle_of(&self, b: u32, tail: usize, mut f: impl FnMut(u32, u32)) {
        self.lower_triangles_until(b, tail, |xy, xz, _| {
            f(xy, xz);
            false
        });
    }

    /// The first lower triangle `(xy, xz, x)` of arc `b`, whose lower endpoint `tail` the caller
    /// knows, that `f` accepts (in [`Self::for_each_lower_triangle`]'s order).
    #[inline]
    pub fn find_lower_triangle_of(
        &self,
        b: u32,
        tail: usize,
        mut f: impl FnMut(u32, u32) -> bool,
    ) -> Option<(u32, u32, u32)> {
        let mut found = None;
        self.lower_triangles_until(b, tail, |xy, xz, x| {
            let hit = f(xy, xz);
            if hit {
                found = Some((xy, xz, x));
            }
            hit
        });
        found
    }

    /// The enumeration behind both: calls `f` per lower triangle until it returns true.
    #[inline(always)]
    fn lower_triangles_until(&self, b: u32, y: usize, mut f: impl FnMut(u32, u32, u32) -> bool) {
        let z = self.up_head[b as usize] as usize;
        let range = |v: usize| self.down_first[v] as usize..self.down_first[v + 1] as usize;
        let (ry, rz) = (range(y), range(z));
        let (ty, tz) = (&self.down_tail[ry.clone()], &self.down_tail[rz.clone()]);
        let (ay, az) = (&self.down_off[ry], &self.down_off[rz]);
        let first = &self.up_first;
        // (A mark holds a position in y's list in 16 bits, so longer lists are searched.)
        if ty.len().min(tz.len()) * MERGE_RATIO >= ty.len().max(tz.len()) && ty.len() <= 1 << 16 {
            // y's list marked in a per-thread map from node to position, z's list looked up in it:
            // independent loads, where a merge waits on each comparison before its next load.
            // A mark is a use's stamp and a position in 16 bits each: the map is 4 bytes a node
            // on every thread that unpacks on a whole hierarchy (7.4 MB each on the 4 × 4 tiling
            // of New York, where 8 bytes took 15), cleared once in 65,535 uses.
            MARKS.with(|cell| {
                let mut marks = cell.borrow_mut();
                let (map, stamp) = &mut *marks;
                if map.len() < self.node_count() {
                    map.resize(self.node_count(), 0);
                }
                *stamp = stamp.wrapping_add(1);
                if *stamp == 0 {
                    map.fill(0);
                    *stamp = 1;
                }
                let tag = (*stamp as u32) << 16;
                for (i, &x) in ty.iter().enumerate() {
                    // SAFETY: x < node_count (a rank); i < 2^16 (checked above).
                    unsafe { *map.get_unchecked_mut(x as usize) = tag | i as u32 };
                }
                let y = y as u32;
                for (j, &x) in tz.iter().enumerate() {
                    if x >= y {
                        break;
                    }
                    // SAFETY: as above; a current tag's position is within y's list.
                    let m = unsafe { *map.get_unchecked(x as usize) };
                    if m & !0xffff == tag {
                        // SAFETY: x is a rank, so up_first holds x.
                        let base = unsafe { *first.get_unchecked(x as usize) };
                        let yo = unsafe { *ay.get_unchecked((m & 0xffff) as usize) };
                        if f(base + u32::from(yo), base + u32::from(az[j]), x) {
                            return;
                        }
                    }
                }
            });
            return;
        }
        let y_shorter = ty.len() <= tz.len();
        let (short, long) = if y_shorter { (ty, tz) } else { (tz, ty) };
        for (i, x) in short.iter().enumerate() {
            if let Ok(j) = long.binary_search(x) {
                let (iy, iz) = if y_shorter { (i, j) } else { (j, i) };
                let base = first[*x as usize];
                if f(base + u32::from(ay[iy]), base + u32::from(az[iz]), *x) {
                    return;
                }
            }
        }
    }

    /// Bytes held by the topology (with the elimination tree's subtrees and children, which
    /// customization schedules its tasks by).
    pub fn memory_bytes(&self) -> usize {
        4 * (self.order.len()
            + self.rank.len()
            + self.up_first.len()
            + self.up_head.len()
            + self.etree_parent.len()
            + self.down_first.len()
            + self.down_tail.len()
            + self.input_cch_arc.len()
            + self.subtree_size.len()
            + self.child_first.len()
            + self.child.len()
            + self.roots.len()
            + self.large_roots.len())
            + self.input_upward.len()
            + self.input_ends.as_ref().map_or(0, |e| 8 * e.mapped.len())
            + 2 * self.down_off.len()
            + self.sides.memory_bytes()
    }

    /// The number of input arcs.
    pub fn input_count(&self) -> usize {
        match &self.input_ends {
            Some(ends) => ends.tails.len(),
            None => self.input_cch_arc.len(),
        }
    }

    /// The arc input arc `i` maps onto (`u32::MAX` for none): from the map, or once that is let go,
    /// the arc between its ends' ranks, found in the lower one's upward list.
    #[inline]
    pub fn input_arc(&self, i: usize) -> u32 {
        let Some(ends) = &self.input_ends else {
            return self.input_cch_arc[i];
        };
        if ends.mapped[i >> 6] >> (i & 63) & 1 == 0 {
            return u32::MAX;
        }
        let (a, b) = (
            self.rank[ends.tails[i] as usize],
            self.rank[ends.heads[i] as usize],
        );
        self.find_arc(a.min(b), a.max(b))
            .expect("a mapped input arc's arc is in the hierarchy")
    }

    /// Lets the map from input arcs to arcs go, keeping the inputs' ends (`tails`, `heads`: the
    /// arrays this hierarchy was built from, shared) to find a changed input's arc from: a routing
    /// hierarchy reads the map by input only for live changes, a few arcs at a time, and the map
    /// by arc ([`Self::inputs_of`]) for the rest.
    pub fn keep_inputs_by_ends(
        &mut self,
        tails: std::sync::Arc<[NodeId]>,
        heads: std::sync::Arc<[NodeId]>,
    ) {
        assert!(self.input_ends.is_none(), "the map is already let go");
        assert_eq!(tails.len(), self.input_cch_arc.len());
        assert_eq!(heads.len(), self.input_cch_arc.len());
        let mut mapped = vec![0u64; self.input_cch_arc.len().div_ceil(64)];
        for (i, &a) in self.input_cch_arc.iter().enumerate() {
            if a != u32::MAX {
                mapped[i >> 6] |= 1 << (i & 63);
            }
        }
        let map = std::mem::take(&mut self.input_cch_arc);
        self.input_upward = Vec::new();
        self.input_ends = Some(InputEnds {
            tails,
            heads,
            mapped,
        });
        if cfg!(debug_assertions) {
            for (i, &a) in map.iter().enumerate() {
                debug_assert_eq!(self.input_arc(i), a, "input arc {i}");
            }
        }
    }

    /// The arc of downward-list entry `i`: `(x, y)` for the entry's lower endpoint `x`.
    #[inline]
    pub fn down_arc(&self, i: usize) -> u32 {
        self.up_first[self.down_tail[i] as usize] + u32::from(self.down_off[i])
    }

    /// The lower endpoint (rank) of CCH arc `a`: the node whose upward list holds it (a binary
    /// search; hot loops track it instead, as their arcs come in order).
    pub fn arc_tail(&self, a: u32) -> u32 {
        (self.up_first.partition_point(|&f| f <= a) - 1) as u32
    }

    /// [`Self::arc_tail`] of an arc known to lie at or after node `from`'s upward list: a galloping
    /// search from `from`, a few steps when the tail is near (a partial customization's next arc).
    #[inline]
    pub(crate) fn tail_from(&self, from: usize, a: u32) -> u32 {
        let f = &self.up_first;
        let (mut lo, mut step) = (from, 1);
        let mut hi = lo + 1;
        while hi < f.len() && f[hi] <= a {
            lo = hi;
            hi = lo + step;
            step *= 2;
        }
        let hi = hi.min(f.len());
        (lo + f[lo..hi].partition_point(|&s| s <= a) - 1) as u32
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

    /// Roots of the elimination forest.
    fn roots(&self) -> &[u32] {
        &self.roots
    }

    /// The roots of subtrees of [`PARALLEL_NODES`] ranks or more, ascending (a few of the roots).
    fn large_roots(&self) -> &[u32] {
        &self.large_roots
    }

    /// Calls `f` on every root of the elimination forest, in parallel: a task per root of a large
    /// subtree, and one task for all the small ones (the cycling hierarchy's order puts thousands
    /// of lone nodes first, the routing nodes no cycling turn touches).
    fn for_each_root(&self, f: impl Fn(u32) + Sync) {
        let f = &f;
        let large = |r: u32| self.subtree_size[r as usize] >= PARALLEL_NODES;
        rayon::scope(|s| {
            s.spawn(move |_| {
                for &r in self.roots.iter().filter(|&&r| !large(r)) {
                    f(r);
                }
            });
            for &r in self.roots.iter().filter(|&&r| large(r)) {
                s.spawn(move |_| f(r));
            }
        });
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
            if self.restricted {
                // Neither chordal nor with parents among its arcs: the full hierarchy's are
                // checked where it is built.
                return Ok(());
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
            let mut ok = true;
            self.for_each_lower_triangle(a as u32, |xy, xz| {
                let (xy, xz) = (xy as usize, xz as usize);
                ok &= add(m.bw(xy), m.fw(xz)) >= m.fw(a) && add(m.bw(xz), m.fw(xy)) >= m.bw(a);
            });
            if ok {
                Ok(())
            } else {
                Err(format!("arc {a} violates the triangle inequality"))
            }
        })
    }
}

/// The downward adjacency of an upward one (CSR by upper endpoint): each node's arcs from below,
/// as their places in their lower endpoints' upward lists, and those lower endpoints, ascending
/// (filled in arc order).
fn downward_lists(up_first: &[u32], up_head: &[u32]) -> (Vec<u32>, Vec<u16>, Vec<u32>) {
    let n = up_first.len() - 1;
    let m = up_head.len();
    let mut down_first = vec![0u32; n + 1];
    for &y in up_head {
        down_first[y as usize + 1] += 1;
    }
    for y in 0..n {
        down_first[y + 1] += down_first[y];
    }
    let mut fill = down_first.clone();
    let (mut down_off, mut down_tail) = (vec![0u16; m], vec![0u32; m]);
    for x in 0..n {
        // An upward list is at most as long as its node's path to the root of the elimination
        // tree (a few thousand ranks in a city).
        assert!(
            up_first[x + 1] - up_first[x] <= 1 << 16,
            "rank {x} has more than 65,536 upward arcs"
        );
        for a in up_first[x]..up_first[x + 1] {
            let y = up_head[a as usize] as usize;
            down_off[fill[y] as usize] = (a - up_first[x]) as u16;
            down_tail[fill[y] as usize] = x as u32;
            fill[y] += 1;
        }
    }
    (down_first, down_off, down_tail)
}

/// The lower triangles a chordal hierarchy with these upward lists has (pairs of arcs of a node);
/// a bound for a restricted one.
fn triangle_bound(up_first: &[u32]) -> usize {
    up_first
        .windows(2)
        .map(|w| {
            let k = (w[1] - w[0]) as usize;
            k * k.saturating_sub(1) / 2
        })
        .sum()
}

/// Above this ratio of lengths a lower-triangle enumeration searches the shorter downward list in
/// the longer instead of marking one and looking the other up (16 was quickest for 100 live turns
/// on New York, with a merge then and with the marks now: 4 and 64 were 5-10 % slower).
pub(crate) const MERGE_RATIO: usize = 16;

thread_local! {
    /// Per-thread map from a node to its position in a downward list, tagged with a stamp per use
    /// (see [`Cch::for_each_lower_triangle`]).
    static MARKS: std::cell::RefCell<(Vec<u32>, u16)> = const { std::cell::RefCell::new((Vec::new(), 0)) };
    /// Per-thread map from a node to the arc of the node being customized that reaches it.
    static SCRATCH: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

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
