//! Nested-dissection orders, the metric-independent first phase of the customizable contraction
//! hierarchy.
//!
//! Turn graphs ([`cycling_order`], what cycling routes on; [`turn_graph_order`]) are ordered by
//! edge cuts of the junction graph: inertial flow cutting (Gottesbüren, Hamann, Uhl & Wagner 2019)
//! on cells of 50 junctions and more, the quartile cut of inertial flow (Schild & Sommer 2015)
//! below that.
//!
//! Node graphs ([`order_for`]: the junctions walking routes on, the benchmark maps) are cut by projecting their nodes on four
//! directions; for each, the first and last quarter become source and sink, and a max flow with unit
//! node capacities finds the smallest node separator between them (half the fill-in of taking one
//! side of an edge cut). Separators get the highest ranks; both halves are ordered recursively (in
//! parallel) and small cells by ascending degree.

use crate::graph::turns::TurnGraph;
use crate::graph::{CityGraph, NodeId};

/// The junctions' order (rank → node: `order[r]` is the node contracted r-th, the top of the
/// hierarchy last), for walking's hierarchy on junctions: a node graph, cut by [`order_for`].
pub fn nested_dissection_order(g: &CityGraph) -> Vec<NodeId> {
    let coords = junction_coords(g);
    let mut pairs = edge_pairs(&g.edge_tail, &g.edge_head);
    order_for(g.node_count(), &mut pairs, &coords)
}

/// The undirected node pairs `(low id, high id)` of edges, loops left out: what the ordering needs.
pub fn edge_pairs(tails: &[NodeId], heads: &[NodeId]) -> Vec<(u32, u32)> {
    tails
        .iter()
        .zip(heads)
        .filter(|(t, h)| t != h)
        .map(|(&t, &h)| (t.min(h), t.max(h)))
        .collect()
}

/// Nested-dissection order of any undirected graph with node coordinates.
///
/// Nodes of degree one and two go first, and the dissection cuts the *core* that is left: a tree
/// hanging off the graph is eliminated from its leaves up, which adds no arc, and a chain of nodes
/// of degree two between two core nodes from one end to the other, which adds the one arc between
/// its ends that the core then carries as an edge. So every separator of the core separates the
/// whole graph, and cuts are found on the core alone (about three in five of a city's junctions
/// for walking).
pub fn order_for(n: usize, edges: &mut Vec<(u32, u32)>, coords: &[[f64; 2]]) -> Vec<NodeId> {
    edges.sort_unstable();
    edges.dedup();
    let all = Cell::from_edges(n, edges, (0..n as u32).collect(), coords);
    let mut order = Vec::with_capacity(n);
    let (core, core_edges) = fold_trees_and_chains(&all, &mut order);
    drop(all);
    let local = |v: u32| core.binary_search(&v).expect("a core node") as u32;
    let core_edges: Vec<(u32, u32)> = core_edges
        .iter()
        .map(|&(a, b)| (local(a), local(b)))
        .collect();
    let cell = Cell::from_edges(core.len(), &core_edges, core, coords);
    dissect(cell, &mut order);
    debug_assert_eq!(order.len(), n);
    order
}

/// A graph's trees and chains, folded away before it is cut ([`fold`]).
struct Folded {
    /// The nodes peeled as trees, leaves first: (node, the node it hung on, the edge between).
    peeled: Vec<(u32, u32, u32)>,
    /// Chains of degree-two nodes between core nodes, each once: (lower end, other end, the
    /// nodes between from the first end, the edges from the first end: one more than nodes). A
    /// chain back to its start has the same two ends.
    chains: Vec<(u32, u32, Vec<u32>, Vec<u32>)>,
    is_core: Vec<bool>,
}

/// Folds a graph of `n` nodes, given each node's distinct neighbours with an id of the edge to
/// each: peels nodes of one neighbour (trees) from the leaves up, then walks from each core node
/// (a node left with other than two neighbours) along its edges to the next core node. A ring of
/// degree-two nodes makes one of them core.
fn fold<'n>(n: usize, neighbours: impl Fn(u32) -> &'n [(u32, u32)]) -> Folded {
    let mut deg: Vec<u32> = (0..n as u32).map(|v| neighbours(v).len() as u32).collect();
    let mut removed = vec![false; n];
    let mut peeled = Vec::new();
    let mut queue: Vec<u32> = (0..n as u32).filter(|&v| deg[v as usize] == 1).collect();
    while let Some(v) = queue.pop() {
        if removed[v as usize] || deg[v as usize] != 1 {
            continue;
        }
        let &(u, e) = neighbours(v)
            .iter()
            .find(|(u, _)| !removed[*u as usize])
            .expect("a node of degree one has a neighbour");
        removed[v as usize] = true;
        peeled.push((v, u, e));
        deg[u as usize] -= 1;
        if deg[u as usize] == 1 {
            queue.push(u);
        }
    }
    let mut is_core: Vec<bool> = (0..n).map(|v| !removed[v] && deg[v] != 2).collect();
    let mut on_chain = vec![false; n];
    let mut chains = Vec::new();
    let walk = |u: u32, is_core: &[bool], on_chain: &mut [bool], chains: &mut Vec<_>| {
        for &(x, e) in neighbours(u) {
            if removed[x as usize] {
                continue;
            }
            let (mut prev, mut cur, mut nodes, mut edges) = (u, x, Vec::new(), vec![e]);
            while !is_core[cur as usize] {
                nodes.push(cur);
                let &(next, f) = neighbours(cur)
                    .iter()
                    .find(|(w, _)| !removed[*w as usize] && *w != prev)
                    .expect("a chain node has two neighbours");
                edges.push(f);
                (prev, cur) = (cur, next);
            }
            // Met from both ends: kept from its lower end, or, back to where it started, from its
            // lower first node.
            let keep = if cur != u {
                u < cur
            } else {
                nodes.first() < nodes.last()
            };
            if keep {
                nodes.iter().for_each(|&c| on_chain[c as usize] = true);
                chains.push((u, cur, nodes, edges));
            }
        }
    };
    for u in 0..n as u32 {
        if is_core[u as usize] {
            walk(u, &is_core, &mut on_chain, &mut chains);
        }
    }
    for v in 0..n as u32 {
        if !removed[v as usize] && !is_core[v as usize] && !on_chain[v as usize] {
            is_core[v as usize] = true;
            walk(v, &is_core, &mut on_chain, &mut chains);
        }
    }
    Folded {
        peeled,
        chains,
        is_core,
    }
}

/// Emits the nodes of `cell`'s trees (leaves first) and of its chains (from one end), and returns
/// the core left (ascending ids) with its edges: those between core nodes and one for each chain
/// between two distinct core nodes (sorted, deduplicated).
fn fold_trees_and_chains(cell: &Cell, order: &mut Vec<NodeId>) -> (Vec<u32>, Vec<(u32, u32)>) {
    let adjacency: Vec<(u32, u32)> = cell.adj.iter().map(|&w| (w, 0)).collect();
    let folded = fold(cell.n(), |v| {
        &adjacency[cell.first[v as usize] as usize..cell.first[v as usize + 1] as usize]
    });
    order.extend(folded.peeled.iter().map(|&(v, _, _)| v));
    let mut edges = Vec::new();
    for (u, w, nodes, _) in folded.chains {
        order.extend(nodes);
        if u != w {
            edges.push((u, w));
        }
    }
    edges.sort_unstable();
    edges.dedup();
    let core = (0..cell.n() as u32)
        .filter(|&v| folded.is_core[v as usize])
        .collect();
    (core, edges)
}

/// Nested-dissection order of a graph without coordinates (benchmark graphs in arc-list form):
/// pseudo-coordinates from breadth-first distances to far-apart landmarks stand in for geography.
pub fn order_without_coordinates(n: usize, edges: &mut Vec<(u32, u32)>) -> Vec<NodeId> {
    edges.sort_unstable();
    edges.dedup();
    let cell = Cell::from_edges(n, edges, (0..n as u32).collect(), &vec![[0.0; 2]; n]);
    let mut coords = vec![[0.0f64; 2]; n];
    let mut dist = vec![u32::MAX; n];
    let bfs = |from: u32, dist: &mut Vec<u32>| -> u32 {
        let mut queue = std::collections::VecDeque::from([from]);
        dist[from as usize] = 0;
        let mut last = from;
        while let Some(v) = queue.pop_front() {
            last = v;
            for &w in cell.neighbors(v) {
                if dist[w as usize] == u32::MAX {
                    dist[w as usize] = dist[v as usize] + 1;
                    queue.push_back(w);
                }
            }
        }
        last
    };
    for comp in cell.components() {
        let reset = |d: &mut Vec<u32>| comp.iter().for_each(|&v| d[v as usize] = u32::MAX);
        let a = bfs(comp[0], &mut dist);
        reset(&mut dist);
        let b = bfs(a, &mut dist);
        let da: Vec<u32> = comp.iter().map(|&v| dist[v as usize]).collect();
        reset(&mut dist);
        bfs(b, &mut dist);
        let db: Vec<u32> = comp.iter().map(|&v| dist[v as usize]).collect();
        // A third landmark far from both spans the second axis.
        let c = comp[(0..comp.len())
            .max_by_key(|&i| da[i].min(db[i]))
            .unwrap_or(0)];
        reset(&mut dist);
        bfs(c, &mut dist);
        for (i, &v) in comp.iter().enumerate() {
            let (x, y, z) = (da[i] as f64, db[i] as f64, dist[v as usize] as f64);
            coords[v as usize] = [x - y, z - (x + y) / 2.0];
        }
    }
    order_for(n, edges, &coords)
}

const LEAF_SIZE: usize = 48;
/// Base nodes of the smallest cell an edge-cut dissection splits further.
const LINE_LEAF_SIZE: usize = 4;
const PARALLEL_SIZE: usize = 4096;
const BALANCE: f64 = 0.25;

/// A subgraph in CSR form with local ids.
struct Cell {
    first: Vec<u32>,
    adj: Vec<u32>,
    global: Vec<u32>,
    coords: Vec<[f64; 2]>,
}

impl Cell {
    fn from_edges(n: usize, edges: &[(u32, u32)], global: Vec<u32>, coords: &[[f64; 2]]) -> Cell {
        let mut deg = vec![0u32; n + 1];
        for &(a, b) in edges {
            deg[a as usize] += 1;
            deg[b as usize] += 1;
        }
        let mut first = vec![0u32; n + 1];
        for v in 0..n {
            first[v + 1] = first[v] + deg[v];
        }
        let mut pos = first.clone();
        let mut adj = vec![0u32; first[n] as usize];
        for &(a, b) in edges {
            adj[pos[a as usize] as usize] = b;
            pos[a as usize] += 1;
            adj[pos[b as usize] as usize] = a;
            pos[b as usize] += 1;
        }
        let coords = global
            .iter()
            .map(|&v| coords[v as usize])
            .collect::<Vec<_>>();
        let coords = if coords.len() == n {
            coords
        } else {
            vec![[0.0; 2]; n]
        };
        Cell {
            first,
            adj,
            global,
            coords,
        }
    }

    fn n(&self) -> usize {
        self.global.len()
    }
    fn neighbors(&self, v: u32) -> &[u32] {
        &self.adj[self.first[v as usize] as usize..self.first[v as usize + 1] as usize]
    }

    /// The induced subgraph on `keep` (local ids of this cell).
    fn sub(&self, keep: &[u32]) -> Cell {
        let mut local = vec![u32::MAX; self.n()];
        for (i, &v) in keep.iter().enumerate() {
            local[v as usize] = i as u32;
        }
        let mut first = Vec::with_capacity(keep.len() + 1);
        let mut adj = Vec::new();
        first.push(0);
        for &v in keep {
            for &w in self.neighbors(v) {
                if local[w as usize] != u32::MAX {
                    adj.push(local[w as usize]);
                }
            }
            first.push(adj.len() as u32);
        }
        Cell {
            first,
            adj,
            global: keep.iter().map(|&v| self.global[v as usize]).collect(),
            coords: keep.iter().map(|&v| self.coords[v as usize]).collect(),
        }
    }

    /// Each adjacency entry's reverse entry (`v → w` to `w → v`), for the max flows.
    fn reverse_entries(&self) -> Vec<u32> {
        let mut rev = vec![u32::MAX; self.adj.len()];
        for v in 0..self.n() as u32 {
            for i in self.first[v as usize]..self.first[v as usize + 1] {
                let w = self.adj[i as usize];
                if w > v {
                    // Adjacency lists are sorted only by construction order, so search w's list.
                    let j = (self.first[w as usize]..self.first[w as usize + 1])
                        .find(|&j| self.adj[j as usize] == v && rev[j as usize] == u32::MAX)
                        .expect("symmetric adjacency");
                    rev[i as usize] = j;
                    rev[j as usize] = i;
                }
            }
        }
        rev
    }

    fn components(&self) -> Vec<Vec<u32>> {
        let n = self.n();
        let mut comp = vec![u32::MAX; n];
        let mut out = Vec::new();
        let mut stack = Vec::new();
        for s in 0..n as u32 {
            if comp[s as usize] != u32::MAX {
                continue;
            }
            let id = out.len() as u32;
            let mut members = vec![s];
            comp[s as usize] = id;
            stack.push(s);
            while let Some(v) = stack.pop() {
                for &w in self.neighbors(v) {
                    if comp[w as usize] == u32::MAX {
                        comp[w as usize] = id;
                        members.push(w);
                        stack.push(w);
                    }
                }
            }
            out.push(members);
        }
        out
    }
}

fn dissect(cell: Cell, order: &mut Vec<NodeId>) {
    let n = cell.n();
    if n <= LEAF_SIZE {
        // Small cells: lowest degree first approximates a minimum-degree elimination.
        let mut vs: Vec<u32> = (0..n as u32).collect();
        vs.sort_by_key(|&v| cell.neighbors(v).len());
        order.extend(vs.iter().map(|&v| cell.global[v as usize]));
        return;
    }
    let comps = cell.components();
    if comps.len() > 1 {
        for c in comps {
            let sub = cell.sub(&c);
            dissect(sub, order);
        }
        return;
    }
    let (left, right, separator) = inertial_flow_cut(&cell);
    if separator.is_empty() || left.is_empty() || right.is_empty() {
        // No useful cut (tiny or degenerate cell): fall back to degree order.
        let mut vs: Vec<u32> = (0..n as u32).collect();
        vs.sort_by_key(|&v| cell.neighbors(v).len());
        order.extend(vs.iter().map(|&v| cell.global[v as usize]));
        return;
    }
    let (lc, rc) = (cell.sub(&left), cell.sub(&right));
    if n >= PARALLEL_SIZE {
        let (mut lo, mut ro) = (
            Vec::with_capacity(left.len()),
            Vec::with_capacity(right.len()),
        );
        rayon::join(|| dissect(lc, &mut lo), || dissect(rc, &mut ro));
        order.extend(lo);
        order.extend(ro);
    } else {
        dissect(lc, order);
        dissect(rc, order);
    }
    order.extend(separator.iter().map(|&v| cell.global[v as usize]));
}

/// Returns (left, right, separator) as local ids: the smallest node separator over the directions,
/// ties broken by balance.
fn inertial_flow_cut(cell: &Cell) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    const DIRECTIONS: [[f64; 2]; 4] = [[1.0, 0.0], [0.0, 1.0], [0.707, 0.707], [0.707, -0.707]];
    let results: Vec<Cut> = if cell.n() >= PARALLEL_SIZE {
        use rayon::prelude::*;
        DIRECTIONS.par_iter().map(|d| min_cut(cell, *d)).collect()
    } else {
        DIRECTIONS.iter().map(|d| min_cut(cell, *d)).collect()
    };
    let best = results
        .into_iter()
        .min_by_key(|c| (c.sep.len(), c.left.len().abs_diff(c.right.len())))
        .unwrap();
    (best.left, best.right, best.sep)
}

struct Cut {
    left: Vec<u32>,
    right: Vec<u32>,
    sep: Vec<u32>,
}

/// Minimum node separator between the first and the last `BALANCE` share of nodes along `dir`, by
/// unit node capacities (each node split into an in and an out half) and breadth-first augmenting
/// paths. A path ends by passing through a sink node, so the separator may hold sink nodes (when
/// sources and sinks touch) but never a source node.
fn min_cut(cell: &Cell, dir: [f64; 2]) -> Cut {
    let n = cell.n();
    let mut by_proj: Vec<u32> = (0..n as u32).collect();
    let proj = |v: u32| cell.coords[v as usize][0] * dir[0] + cell.coords[v as usize][1] * dir[1];
    by_proj.sort_by(|&a, &b| proj(a).total_cmp(&proj(b)));
    let k = ((n as f64 * BALANCE) as usize).max(1);
    // 0 = free, 1 = source, 2 = sink.
    let mut role = vec![0u8; n];
    for &v in &by_proj[..k] {
        role[v as usize] = 1;
    }
    for &v in &by_proj[n - k..] {
        role[v as usize] = 2;
    }
    // Flow on adjacency entry i (out(v) → in(adj[i])), antisymmetric with its reverse entry; and
    // whether a unit passes through node v (in(v) → out(v)).
    let mut flow = vec![0i32; cell.adj.len()];
    let mut node_flow = vec![false; n];
    let rev = cell.reverse_entries();
    // Search states: 2v = in(v), 2v + 1 = out(v). parent = (previous state, adjacency entry or
    // u32::MAX for the node's own in/out arc).
    let mut parent = vec![(u32::MAX, u32::MAX); 2 * n];
    let mut visited = vec![0u32; 2 * n];
    let mut stamp = 0u32;
    let mut queue = std::collections::VecDeque::new();
    let mut cut = 0usize;
    // Every source's out-state is reached from the start, but a search grows only from those next
    // to a non-source: no path runs on through another source, and the rest, a quarter of the
    // cell, were searched through at every augmenting path for nothing.
    let boundary: Vec<u32> = by_proj[..k]
        .iter()
        .copied()
        .filter(|&v| cell.neighbors(v).iter().any(|&w| role[w as usize] != 1))
        .collect();
    loop {
        stamp += 1;
        queue.clear();
        for &v in &by_proj[..k] {
            visited[2 * v as usize + 1] = stamp;
        }
        for &v in &boundary {
            let s = 2 * v + 1;
            visited[s as usize] = stamp;
            parent[s as usize] = (u32::MAX, u32::MAX);
            queue.push_back(s);
        }
        let mut reached = None;
        'bfs: while let Some(s) = queue.pop_front() {
            let v = s / 2;
            let mut visit = |t: u32, via: u32, queue: &mut std::collections::VecDeque<u32>| {
                if visited[t as usize] != stamp {
                    visited[t as usize] = stamp;
                    parent[t as usize] = (s, via);
                    queue.push_back(t);
                    true
                } else {
                    false
                }
            };
            if s % 2 == 1 {
                // out(v): every neighbour's in (unbounded), and back to in(v) if a unit passes v.
                for i in cell.first[v as usize]..cell.first[v as usize + 1] {
                    let w = cell.adj[i as usize];
                    visit(2 * w, i, &mut queue);
                }
                if node_flow[v as usize] && role[v as usize] != 1 {
                    visit(2 * v, u32::MAX, &mut queue);
                }
            } else {
                // in(v): through the node when it has capacity left, and back along flow that
                // entered v from a neighbour u (to out(u)).
                if !node_flow[v as usize]
                    && visit(2 * v + 1, u32::MAX, &mut queue)
                    && role[v as usize] == 2
                {
                    reached = Some(2 * v + 1);
                    break 'bfs;
                }
                for i in cell.first[v as usize]..cell.first[v as usize + 1] {
                    if flow[rev[i as usize] as usize] > 0 {
                        let u = cell.adj[i as usize];
                        visit(2 * u + 1, rev[i as usize], &mut queue);
                    }
                }
            }
        }
        let Some(mut t) = reached else { break };
        cut += 1;
        loop {
            let (p, via) = parent[t as usize];
            if p == u32::MAX {
                break;
            }
            if via == u32::MAX {
                // Node arc: in → out adds a unit, out → in cancels one.
                node_flow[(p / 2) as usize] = p % 2 == 0;
            } else if p % 2 == 1 {
                // out(u) → in(w) along entry via (u's entry): push one unit.
                flow[via as usize] += 1;
                flow[rev[via as usize] as usize] -= 1;
            } else {
                // in(v) → out(u) against the flow on entry via (u → v): cancel one unit.
                flow[via as usize] -= 1;
                flow[rev[via as usize] as usize] += 1;
            }
            t = p;
        }
        if cut > n {
            break;
        }
    }
    // Last search found no path: out(v) reached → left, only in(v) reached → separator.
    let (mut left, mut right, mut sep) = (vec![], vec![], vec![]);
    for v in 0..n as u32 {
        let (i, o) = (
            visited[2 * v as usize] == stamp,
            visited[2 * v as usize + 1] == stamp,
        );
        if o {
            left.push(v);
        } else if i {
            sep.push(v);
        } else {
            right.push(v);
        }
    }
    Cut { left, right, sep }
}

/// Nested-dissection order of a line graph (the turn graph): its nodes are the arcs of a base graph
/// with coordinates, `node_pair[x]` the base nodes (low, high) of the arc node `x` travels. The
/// dissection cuts the *base* graph by minimum edge cuts; the arcs of the cut edges separate the line
/// graph, since a path of turns from an arc on one side to an arc on the other must travel a cut edge.
/// That keeps a junction's turns (a biclique of its in- and out-arcs) whole inside one cell, where a
/// node separator of the line graph itself would split them and fill the hierarchy with their
/// shortcuts (Buchhold, Wagner, Zeitz & Zündorf, ATMOS 2020, order turn graphs the same way).
/// `line_degree[x]` (turns in and out of x) orders the nodes of small cells.
pub fn order_line_graph(
    base_n: usize,
    coords: &[[f64; 2]],
    node_pair: &[(u32, u32)],
    line_degree: &[u32],
) -> Vec<u32> {
    let lines = LineNodes::new(base_n, node_pair, line_degree);
    let mut order = Vec::with_capacity(node_pair.len());
    let cell = Cell::from_edges(
        lines.core.len(),
        &lines.core_edges(),
        lines.core.clone(),
        coords,
    );
    dissect_edges(cell, &lines, Vec::new(), &mut order);
    debug_assert_eq!(order.len(), node_pair.len());
    order
}

/// The junction graph the edge-cut dissection cuts, with its trees and chains folded away. A
/// junction with one neighbour left (a dead end, a spur, a driveway stub) can never take part in a
/// cut worth making: it is removed, and its edges' routing nodes hang on the junction it leads to,
/// ordered with that junction. A junction with two neighbours (a way split between crossings, a
/// signal mid-block) lies on a chain between two *core* junctions, which the cells see as one
/// edge whose capacity is the chain's narrowest piece: where the cutter cuts that edge, the chain
/// is cut at its narrowest piece and its other pieces go with the side they lie on. Every cut on
/// the core is a cut of the whole graph of the same capacity, and the core is about half the
/// junctions a bicycle can use.
struct LineNodes<'a> {
    /// Core junctions (base ids, ascending).
    core: Vec<u32>,
    /// Core pairs (low, high base id), sorted, each with its bundles `pair_first[i]..pair_first[i+1]`.
    pairs: Vec<(u32, u32)>,
    pair_first: Vec<u32>,
    /// A bundle: the pieces `bundle_first[b]..bundle_first[b+1]`, from the pair's low end; even
    /// pieces are the routing nodes of the edges between two consecutive junctions of the chain, odd
    /// ones what hangs on the chain's junction between them.
    bundle_first: Vec<u32>,
    /// A piece: `piece_first[p]..piece_first[p+1]` in `nodes`.
    piece_first: Vec<u32>,
    nodes: Vec<u32>,
    /// What a core junction carries with it (its loops, its trees, loops of chains back to it):
    /// `at_first[v]..at_first[v+1]` in `at_nodes`, by base id.
    at_first: Vec<u32>,
    at_nodes: Vec<u32>,
    line_degree: &'a [u32],
}

impl<'a> LineNodes<'a> {
    fn new(base_n: usize, node_pair: &[(u32, u32)], line_degree: &'a [u32]) -> LineNodes<'a> {
        // Line-graph nodes grouped by base edge (loops included as (v, v)).
        let mut by_pair: Vec<u32> = (0..node_pair.len() as u32).collect();
        by_pair.sort_unstable_by_key(|&x| node_pair[x as usize]);
        let mut base_pairs: Vec<(u32, u32)> = Vec::new();
        let mut base_first: Vec<u32> = Vec::new();
        for (i, &x) in by_pair.iter().enumerate() {
            let p = node_pair[x as usize];
            if base_pairs.last() != Some(&p) {
                base_pairs.push(p);
                base_first.push(i as u32);
            }
        }
        base_first.push(by_pair.len() as u32);
        let of = |i: usize| &by_pair[base_first[i] as usize..base_first[i + 1] as usize];
        // Adjacency by distinct neighbour: (neighbour, base pair index).
        let mut deg = vec![0u32; base_n];
        for &(a, b) in &base_pairs {
            if a != b {
                deg[a as usize] += 1;
                deg[b as usize] += 1;
            }
        }
        let mut first = vec![0u32; base_n + 1];
        for v in 0..base_n {
            first[v + 1] = first[v] + deg[v];
        }
        let mut pos = first.clone();
        let mut adj = vec![(0u32, 0u32); first[base_n] as usize];
        let mut hang: Vec<Vec<u32>> = vec![Vec::new(); base_n];
        for (i, &(a, b)) in base_pairs.iter().enumerate() {
            if a == b {
                hang[a as usize].extend_from_slice(of(i));
                continue;
            }
            adj[pos[a as usize] as usize] = (b, i as u32);
            pos[a as usize] += 1;
            adj[pos[b as usize] as usize] = (a, i as u32);
            pos[b as usize] += 1;
        }
        let folded = fold(base_n, |v| {
            &adj[first[v as usize] as usize..first[v as usize + 1] as usize]
        });
        // A tree's routing nodes (its loops, edges and what hangs on it) hang on the junction it
        // leads to.
        for &(v, u, e) in &folded.peeled {
            let mut carried = std::mem::take(&mut hang[v as usize]);
            carried.extend_from_slice(of(e as usize));
            hang[u as usize].extend(carried);
        }
        // A chain's pieces from its first end: its edges' routing nodes, and between them what
        // hangs on the junction there. One back to its start hangs on it whole.
        let mut chains: Vec<(u32, u32, Vec<Vec<u32>>)> = Vec::new();
        for (u, w, nodes, edges) in folded.chains {
            let mut pieces = vec![of(edges[0] as usize).to_vec()];
            for (&c, &e) in nodes.iter().zip(&edges[1..]) {
                pieces.push(std::mem::take(&mut hang[c as usize]));
                pieces.push(of(e as usize).to_vec());
            }
            if u == w {
                let h = &mut hang[u as usize];
                pieces.iter().for_each(|p| h.extend_from_slice(p));
            } else {
                chains.push((u, w, pieces));
            }
        }
        chains.sort_by_key(|c| (c.0, c.1));
        let is_core = folded.is_core;

        let core: Vec<u32> = (0..base_n as u32)
            .filter(|&v| is_core[v as usize])
            .collect();
        let mut at_first = Vec::with_capacity(base_n + 1);
        let mut at_nodes = Vec::new();
        at_first.push(0);
        for v in 0..base_n {
            if is_core[v] {
                at_nodes.extend_from_slice(&hang[v]);
            }
            at_first.push(at_nodes.len() as u32);
        }
        drop(hang);
        let (mut pairs, mut pair_first, mut bundle_first, mut piece_first, mut nodes) =
            (Vec::new(), Vec::new(), Vec::new(), vec![0u32], Vec::new());
        for (u, w, pieces) in chains {
            if pairs.last() != Some(&(u, w)) {
                pairs.push((u, w));
                pair_first.push(bundle_first.len() as u32);
            }
            bundle_first.push(piece_first.len() as u32 - 1);
            for p in pieces {
                nodes.extend(p);
                piece_first.push(nodes.len() as u32);
            }
        }
        pair_first.push(bundle_first.len() as u32);
        bundle_first.push(piece_first.len() as u32 - 1);
        LineNodes {
            core,
            pairs,
            pair_first,
            bundle_first,
            piece_first,
            nodes,
            at_first,
            at_nodes,
            line_degree,
        }
    }

    /// The core's edges in core-local ids (`core` is ascending).
    fn core_edges(&self) -> Vec<(u32, u32)> {
        let local = |v: u32| self.core.binary_search(&v).expect("a core junction") as u32;
        self.pairs
            .iter()
            .map(|&(a, b)| (local(a), local(b)))
            .collect()
    }

    /// What core junction `v` carries.
    fn at(&self, v: u32) -> &[u32] {
        &self.at_nodes[self.at_first[v as usize] as usize..self.at_first[v as usize + 1] as usize]
    }

    fn piece(&self, p: u32) -> &[u32] {
        &self.nodes
            [self.piece_first[p as usize] as usize..self.piece_first[p as usize + 1] as usize]
    }

    /// The bundles of core pair (a, b), a ≠ b, as piece ranges.
    fn bundles(&self, a: u32, b: u32) -> impl Iterator<Item = std::ops::Range<u32>> + '_ {
        let range = match self.pairs.binary_search(&(a.min(b), a.max(b))) {
            Ok(i) => self.pair_first[i]..self.pair_first[i + 1],
            Err(_) => 0..0,
        };
        range.map(|k| self.bundle_first[k as usize]..self.bundle_first[k as usize + 1])
    }

    /// Every routing node of the edges and chains between core junctions a and b.
    fn extend_all(&self, a: u32, b: u32, out: &mut Vec<u32>) {
        for pieces in self.bundles(a, b) {
            for p in pieces {
                out.extend_from_slice(self.piece(p));
            }
        }
    }

    /// The routing nodes cutting between a and b separates: each bundle's narrowest piece.
    fn capacity(&self, a: u32, b: u32) -> usize {
        self.bundles(a, b)
            .map(|pieces| {
                pieces
                    .step_by(2)
                    .map(|p| self.piece(p).len())
                    .min()
                    .unwrap_or(0)
            })
            .sum()
    }

    /// Cuts between `left` and `right`: each bundle's narrowest piece to `separator`, the pieces
    /// before it to the side of the end they lie at.
    fn cut(
        &self,
        left: u32,
        right: u32,
        separator: &mut Vec<u32>,
        to_left: &mut Vec<u32>,
        to_right: &mut Vec<u32>,
    ) {
        let left_is_low = left < right;
        for pieces in self.bundles(left, right) {
            let narrowest = pieces
                .clone()
                .step_by(2)
                .min_by_key(|&p| self.piece(p).len())
                .expect("a bundle has a piece");
            for p in pieces {
                let out = if p == narrowest {
                    &mut *separator
                } else if (p < narrowest) == left_is_low {
                    &mut *to_left
                } else {
                    &mut *to_right
                };
                out.extend_from_slice(self.piece(p));
            }
        }
    }
}

/// Emits the line-graph nodes of every edge inside `cell` (and what its junctions carry), `extra`
/// first (the pieces of chains cut above that lie in this cell), small cells by ascending line
/// degree, large ones by recursion with the cut edges' nodes last.
fn dissect_edges(cell: Cell, lines: &LineNodes, extra: Vec<u32>, order: &mut Vec<u32>) {
    order.extend(extra);
    let n = cell.n();
    let emit_all = |cell: &Cell, order: &mut Vec<u32>| {
        let mut xs: Vec<u32> = Vec::new();
        for v in 0..n as u32 {
            let gv = cell.global[v as usize];
            xs.extend_from_slice(lines.at(gv));
            for &w in cell.neighbors(v) {
                let gw = cell.global[w as usize];
                if gw > gv {
                    lines.extend_all(gv, gw, &mut xs);
                }
            }
        }
        xs.sort_by_key(|&x| lines.line_degree[x as usize]);
        order.extend(xs);
    };
    if n <= LINE_LEAF_SIZE {
        emit_all(&cell, order);
        return;
    }
    let comps = cell.components();
    if comps.len() > 1 {
        for c in comps {
            dissect_edges(cell.sub(&c), lines, Vec::new(), order);
        }
        return;
    }
    let (left, right) = inertial_edge_cut(&cell, lines);
    if left.is_empty() || right.is_empty() {
        emit_all(&cell, order);
        return;
    }
    let mut side = vec![false; n];
    for &v in &left {
        side[v as usize] = true;
    }
    let (mut separator, mut to_left, mut to_right) = (Vec::new(), Vec::new(), Vec::new());
    for &v in &left {
        let gv = cell.global[v as usize];
        for &w in cell.neighbors(v) {
            if !side[w as usize] {
                let gw = cell.global[w as usize];
                lines.cut(gv, gw, &mut separator, &mut to_left, &mut to_right);
            }
        }
    }
    let (lc, rc) = (cell.sub(&left), cell.sub(&right));
    if n >= PARALLEL_SIZE / 4 {
        let (mut lo, mut ro) = (Vec::new(), Vec::new());
        rayon::join(
            || dissect_edges(lc, lines, to_left, &mut lo),
            || dissect_edges(rc, lines, to_right, &mut ro),
        );
        order.extend(lo);
        order.extend(ro);
    } else {
        dissect_edges(lc, lines, to_left, order);
        dissect_edges(rc, lines, to_right, order);
    }
    separator.sort_by_key(|&x| lines.line_degree[x as usize]);
    order.extend(separator);
}

/// Share of a cell's junctions, from each end of the projection, that start as source and sink.
const CUTTER_SEED: f64 = 0.05;
/// Cuts with a smaller side under this share of the cell are not taken.
const CUTTER_MIN_SIDE: f64 = 0.1;
/// The cutter stops once both reachable sides hold this share of the cell.
const CUTTER_STOP: f64 = 0.45;

/// Cells of fewer junctions are cut between the first and last quarter along each direction
/// instead of by the flow cutter.
const CUTTER_MIN_CELL: usize = 50;

/// The best edge cut of a cell over four projection directions: (left, right) local ids, an empty
/// side when there is none. An edge's capacity is the number of routing nodes it carries (one for a
/// one-way street), which is what cutting it adds to the separator.
///
/// Cells of `CUTTER_MIN_CELL` junctions and more are cut by inertial flow cutting (Gottesbüren,
/// Hamann, Uhl & Wagner 2019: FlowCutter seeded and pierced in the order of a projection), taking
/// the cut of lowest expansion (capacity cut per junction of the smaller side). Smaller cells take
/// the smallest cut between the first and the last quarter of junctions along each direction (Schild
/// & Sommer's inertial flow), ties broken by balance: the flow cutter's cuts of small cells gave
/// fewer triangles but a customization 20 % slower on two threads (alternated runs on New York).
fn inertial_edge_cut(cell: &Cell, lines: &LineNodes) -> (Vec<u32>, Vec<u32>) {
    const DIRECTIONS: [[f64; 2]; 4] = [[1.0, 0.0], [0.0, 1.0], [0.707, 0.707], [0.707, -0.707]];
    let capacity: Vec<i32> = (0..cell.n() as u32)
        .flat_map(|v| cell.neighbors(v).iter().map(move |&w| (v, w)))
        .map(|(v, w)| {
            let (gv, gw) = (cell.global[v as usize], cell.global[w as usize]);
            lines.capacity(gv, gw).max(1) as i32
        })
        .collect();
    // Each entry's reverse, found once for the cell's four directions and both runs of each.
    let edges = CellEdges {
        capacity,
        reverse: cell.reverse_entries(),
    };
    let cut = |dir: &[f64; 2]| best_cut(cell, *dir, &edges);
    let cuts: Vec<Option<(f64, Vec<u32>)>> = if cell.n() < CUTTER_MIN_CELL {
        vec![]
    } else if cell.n() >= PARALLEL_SIZE {
        use rayon::prelude::*;
        DIRECTIONS.par_iter().map(cut).collect()
    } else {
        DIRECTIONS.iter().map(cut).collect()
    };
    let left = match cuts
        .into_iter()
        .flatten()
        .min_by(|a, b| a.0.total_cmp(&b.0))
    {
        Some((_, left)) => left,
        // Small cells, and any cell where no cut had a side of CUTTER_MIN_SIDE.
        None => DIRECTIONS
            .iter()
            .map(|d| quartile_edge_cut(cell, *d, &edges))
            .min_by_key(|(cut, l)| (*cut, l.len().abs_diff(cell.n() - l.len())))
            .map(|(_, l)| l)
            .unwrap(),
    };
    let mut is_left = vec![false; cell.n()];
    for &v in &left {
        is_left[v as usize] = true;
    }
    let right = (0..cell.n() as u32)
        .filter(|&v| !is_left[v as usize])
        .collect();
    (left, right)
}

/// The minimum cut between the first and the last quarter of junctions along `dir`, by
/// breadth-first augmenting paths: (cut capacity, the side the last search reached).
fn quartile_edge_cut(cell: &Cell, dir: [f64; 2], edges: &CellEdges) -> (usize, Vec<u32>) {
    let mut flow = FlowCutter::new(cell, dir, edges, BALANCE);
    flow.max_flow();
    let left = (0..cell.n() as u32)
        .filter(|&v| flow.reach[v as usize] == SOURCE)
        .collect();
    (flow.flow_value, left)
}

/// One direction's candidate of lowest expansion: (expansion, one side). The cutter keeps a copy
/// of the reachable sets at each improving candidate: a pass over the cell's junctions per
/// improvement, where running the cutter a second time to the best candidate's step (as it did)
/// repeated the max flows up to there.
fn best_cut(cell: &Cell, dir: [f64; 2], edges: &CellEdges) -> Option<(f64, Vec<u32>)> {
    let mut cutter = FlowCutter::new(cell, dir, edges, CUTTER_SEED);
    let (expansion, _, side) = cutter.run(None)?;
    let at_best = &cutter.best_reach;
    let left = (0..cell.n() as u32)
        .filter(|&v| match side {
            SOURCE => at_best[v as usize] == SOURCE,
            _ => at_best[v as usize] != SINK,
        })
        .collect();
    Some((expansion, left))
}

/// A cell's adjacency entries as flow arcs: each one's capacity (the routing nodes of its edge)
/// and its reverse entry.
struct CellEdges {
    capacity: Vec<i32>,
    reverse: Vec<u32>,
}

/// Which side of the flow a junction is on.
const NONE: u8 = 0;
const SOURCE: u8 = 1;
const SINK: u8 = 2;

/// One direction's flow cutter: sources grow from the front of the projection order and sinks from
/// its back. After each max flow, the junctions the sources reach in the residual graph, and those
/// that reach the sinks, each give a minimum cut; the smaller of the two sides is then pierced with
/// its next junction in projection order, and the flow is augmented again if that opened a path.
/// Every cut met on the way is a candidate.
struct FlowCutter<'a> {
    cell: &'a Cell,
    capacity: &'a [i32],
    reverse: &'a [u32],
    by_projection: Vec<u32>,
    /// flow[i] on adjacency entry i (v → adj[i]), antisymmetric; residual capacity - flow.
    flow: Vec<i32>,
    flow_value: usize,
    /// SOURCE or SINK for terminals.
    terminal: Vec<u8>,
    /// SOURCE: reached from the sources; SINK: reaches the sinks (both in the residual graph).
    reach: Vec<u8>,
    parent: Vec<u32>,
    queue: Vec<u32>,
    sizes: [usize; 2],
    front: usize,
    back: usize,
    /// `reach` at the best candidate so far.
    best_reach: Vec<u8>,
}

impl<'a> FlowCutter<'a> {
    /// Sources and sinks start as the first and last `seed` share of junctions along `dir`.
    fn new(cell: &'a Cell, dir: [f64; 2], edges: &'a CellEdges, seed: f64) -> FlowCutter<'a> {
        let n = cell.n();
        let mut by_projection: Vec<u32> = (0..n as u32).collect();
        let proj =
            |v: u32| cell.coords[v as usize][0] * dir[0] + cell.coords[v as usize][1] * dir[1];
        by_projection.sort_by(|&a, &b| proj(a).total_cmp(&proj(b)));
        let seed = ((n as f64 * seed) as usize).max(1);
        let mut terminal = vec![NONE; n];
        for &v in &by_projection[..seed] {
            terminal[v as usize] = SOURCE;
        }
        for &v in &by_projection[n - seed..] {
            terminal[v as usize] = SINK;
        }
        FlowCutter {
            cell,
            capacity: &edges.capacity,
            reverse: &edges.reverse,
            by_projection,
            flow: vec![0; cell.adj.len()],
            flow_value: 0,
            terminal,
            reach: vec![NONE; n],
            parent: vec![u32::MAX; n],
            queue: Vec::new(),
            sizes: [0; 2],
            front: seed,
            back: n - seed,
            best_reach: Vec::new(),
        }
    }

    /// Cuts until the sides meet, and returns the best candidate as (expansion, step, SOURCE or
    /// SINK: which reachable set is its side); with `stop`, stops at that step, whose reachable sets
    /// then describe the cut.
    fn run(&mut self, stop: Option<usize>) -> Option<(f64, usize, u8)> {
        let n = self.cell.n();
        let min_side = (n as f64 * CUTTER_MIN_SIDE).ceil() as usize;
        let mut best: Option<(f64, usize, u8)> = None;
        let mut step = 0usize;
        loop {
            self.max_flow();
            loop {
                let mut improved = false;
                for side in [SOURCE, SINK] {
                    let size = self.sizes[side as usize - 1];
                    let smaller = size.min(n - size);
                    let expansion = (self.flow_value as f64 + 1.0) / smaller.max(1) as f64;
                    if smaller >= min_side && best.is_none_or(|b| expansion < b.0) {
                        best = Some((expansion, step, side));
                        improved = true;
                    }
                }
                if improved {
                    self.best_reach.clone_from(&self.reach);
                }
                if stop == Some(step) {
                    return best;
                }
                step += 1;
                let [s, t] = self.sizes;
                if s.min(t) as f64 >= n as f64 * CUTTER_STOP {
                    return best;
                }
                let side = if s <= t { SOURCE } else { SINK };
                match self.pierce(side) {
                    None => return best,
                    Some(true) => break, // an augmenting path opened
                    Some(false) => {}
                }
            }
        }
    }

    /// Adds the next junction in projection order, not yet on `side`, to its terminals and grows
    /// the reachable set from it. Some(true) when that opened an augmenting path, which is then
    /// augmented (the max flow that follows searches the rest: most piercings open one path, and
    /// finding it again from every source was a third of the cutter's time); None when the order
    /// is used up.
    fn pierce(&mut self, side: u8) -> Option<bool> {
        let v = loop {
            if self.front >= self.back {
                return None;
            }
            let v = if side == SOURCE {
                self.front += 1;
                self.by_projection[self.front - 1]
            } else {
                self.back -= 1;
                self.by_projection[self.back]
            };
            if self.reach[v as usize] != side {
                break v;
            }
        };
        self.terminal[v as usize] = side;
        if self.reach[v as usize] != NONE {
            // v was reached from the other side: the path runs on from v to that side's
            // terminals, and v is its own end on this side.
            if side == SOURCE {
                self.augment_met(None, None, Some(v));
            } else {
                self.augment_met(Some(v), None, None);
            }
            return Some(true);
        }
        self.reach[v as usize] = side;
        self.parent[v as usize] = u32::MAX;
        self.queue.clear();
        self.queue.push(v);
        if let Some((w, e)) = self.grow(side) {
            // e runs from the source side to the sink side (see `grow_to_meet`).
            let (a, b) = if side == SOURCE {
                (self.cell.adj[self.reverse[e as usize] as usize], w)
            } else {
                (w, self.cell.adj[e as usize])
            };
            self.augment_met(Some(a), Some(e), Some(b));
            return Some(true);
        }
        self.sizes[side as usize - 1] += self.queue.len();
        Some(false)
    }

    /// Breadth-first growth of `side`'s reachable set from the queue (already marked), over
    /// residual capacity (forwards from sources, backwards into sinks), until it meets the other
    /// side: the junction met and the entry that reached it, an entry from the source side to the
    /// sink side. The junction met keeps its parent towards its own side's terminals, so the
    /// augmenting path is read from both sides' parents.
    fn grow(&mut self, side: u8) -> Option<(u32, u32)> {
        let cell = self.cell;
        let mut head = 0;
        while head < self.queue.len() {
            let v = self.queue[head];
            head += 1;
            for i in cell.first[v as usize]..cell.first[v as usize + 1] {
                let w = cell.adj[i as usize];
                let e = if side == SOURCE {
                    i
                } else {
                    self.reverse[i as usize]
                };
                if self.flow[e as usize] >= self.capacity[e as usize]
                    || self.reach[w as usize] == side
                {
                    continue;
                }
                if self.reach[w as usize] != NONE {
                    return Some((w, e));
                }
                self.parent[w as usize] = e;
                self.reach[w as usize] = side;
                self.queue.push(w);
            }
        }
        None
    }

    /// Augments along the residual path from a source terminal to `a` (parents: the entry into
    /// each junction), then `link` (from `a` to `b`), then from `b` to a sink terminal (parents:
    /// the entry out of each junction towards the sinks). A missing end is a terminal of its side:
    /// the other end itself, or the far end of `link`.
    fn augment_met(&mut self, a: Option<u32>, link: Option<u32>, b: Option<u32>) {
        let cell = self.cell;
        let (reverse, parent) = (self.reverse, &self.parent);
        let tail = |e: u32| cell.adj[reverse[e as usize] as usize];
        // The path's entries: the source side's from `a` back, the link, the sink side's from `b`.
        let mut path = Vec::new();
        let mut u = a.unwrap_or(u32::MAX);
        while u != u32::MAX && parent[u as usize] != u32::MAX {
            let e = parent[u as usize];
            path.push(e);
            u = tail(e);
        }
        path.extend(link);
        let mut u = b.unwrap_or(u32::MAX);
        while u != u32::MAX && parent[u as usize] != u32::MAX {
            let e = parent[u as usize];
            path.push(e);
            u = cell.adj[e as usize];
        }
        let bottleneck = path
            .iter()
            .map(|&e| self.capacity[e as usize] - self.flow[e as usize])
            .min()
            .unwrap_or(0);
        debug_assert!(bottleneck > 0, "a residual path from a source to a sink");
        for e in path {
            self.flow[e as usize] += bottleneck;
            self.flow[reverse[e as usize] as usize] -= bottleneck;
        }
        self.flow_value += bottleneck as usize;
    }

    /// Augments along breadth-first paths from the sources to the sinks until none is left, then
    /// marks both reachable sets.
    fn max_flow(&mut self) {
        let cell = self.cell;
        let n = cell.n();
        loop {
            self.reach.fill(NONE);
            self.queue.clear();
            for v in 0..n as u32 {
                match self.terminal[v as usize] {
                    SOURCE => {
                        self.reach[v as usize] = SOURCE;
                        self.parent[v as usize] = u32::MAX;
                        self.queue.push(v);
                    }
                    SINK => self.reach[v as usize] = SINK,
                    _ => {}
                }
            }
            // Only the sink terminals are marked on the sink side: the path ends at the one met.
            let Some((_, e)) = self.grow(SOURCE) else {
                break;
            };
            let from = cell.adj[self.reverse[e as usize] as usize];
            self.augment_met(Some(from), Some(e), None);
        }
        self.sizes[0] = self.queue.len();
        self.queue.clear();
        for v in 0..n as u32 {
            if self.terminal[v as usize] == SINK {
                self.parent[v as usize] = u32::MAX;
                self.queue.push(v);
            }
        }
        let met = self.grow(SINK);
        debug_assert!(met.is_none(), "no augmenting path is left");
        self.sizes[1] = self.queue.len();
    }
}

/// The CCH order of a turn graph's routing nodes: nested dissection of the junction graph by edge
/// cuts ([`order_line_graph`]), which keeps each junction's turns inside one cell. The engine's
/// cycling hierarchy is ordered by [`cycling_order`]; this orders the whole turn graph (the
/// tests' chordal hierarchy on every shared extract).
pub fn turn_graph_order(turns: &TurnGraph, g: &CityGraph) -> Vec<u32> {
    let coords = junction_coords(g);
    let pairs: Vec<(u32, u32)> = turns
        .node_arc
        .iter()
        .map(|&a| {
            let (t, h) = (g.arc_tail(a), g.arc_head(a));
            (t.min(h), t.max(h))
        })
        .collect();
    let mut degree = vec![0u32; turns.node_count()];
    for (&f, &t) in turns.turn_from.iter().zip(turns.turn_to.iter()) {
        degree[f as usize] += 1;
        degree[t as usize] += 1;
    }
    order_line_graph(g.node_count(), &coords, &pairs, &degree)
}

/// Junction coordinates for the dissection (longitude scaled by the cosine of the latitude: a local
/// equirectangular projection keeps the cut directions meaningful).
fn junction_coords(g: &CityGraph) -> Vec<[f64; 2]> {
    (0..g.node_count())
        .map(|v| {
            let [lon, lat] = g.node_lon_lat(v as NodeId);
            [lon * lat.to_radians().cos().max(0.1), lat]
        })
        .collect()
}

/// The order of the cycling hierarchy: the routing nodes no turn in `usable` (per turn, see
/// [`crate::metric::cycling_can_use`]) touches first, where they stay without arcs, then
/// [`order_line_graph`] of the turn graph of the usable turns alone. Cut for cycling, its
/// separators count only the routing nodes a bicycle can use (a sidewalk costs a cut nothing),
/// where the whole turn graph's order cuts for walking and cycling at once: on New York the
/// cycling hierarchy has 1.13 M arcs in its own order against 1.32 M in the whole one's, and
/// customizes in 20 ms against 23.
pub fn cycling_order(turns: &TurnGraph, g: &CityGraph, usable: &[bool]) -> Vec<u32> {
    let n = turns.node_count();
    let mut cycling = vec![false; n];
    for t in 0..turns.turn_count() {
        if usable[t] {
            cycling[turns.turn_from[t] as usize] = true;
            cycling[turns.turn_to[t] as usize] = true;
        }
    }
    let ids: Vec<u32> = (0..n as u32).filter(|&x| cycling[x as usize]).collect();
    let mut local = vec![u32::MAX; n];
    for (i, &x) in ids.iter().enumerate() {
        local[x as usize] = i as u32;
    }
    let pairs: Vec<(u32, u32)> = ids
        .iter()
        .map(|&x| {
            let a = turns.node_arc[x as usize];
            let (t, h) = (g.arc_tail(a), g.arc_head(a));
            (t.min(h), t.max(h))
        })
        .collect();
    let mut degree = vec![0u32; ids.len()];
    for t in (0..turns.turn_count()).filter(|&t| usable[t]) {
        degree[local[turns.turn_from[t] as usize] as usize] += 1;
        degree[local[turns.turn_to[t] as usize] as usize] += 1;
    }
    let inner = order_line_graph(g.node_count(), &junction_coords(g), &pairs, &degree);
    let mut order: Vec<u32> = (0..n as u32).filter(|&x| !cycling[x as usize]).collect();
    order.extend(inner.iter().map(|&i| ids[i as usize]));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A city where no turn is usable (a cycling order of a walking-only map): nothing to order,
    /// and a hierarchy on no inputs that customizes to nothing.
    #[test]
    fn an_empty_line_graph_orders_to_nothing() {
        let coords = vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];
        assert!(order_line_graph(3, &coords, &[], &[]).is_empty());
        let cch = crate::cch::Cch::on_inputs(2, &[0], &[1], &[0, 1], &[false]);
        assert_eq!(cch.arc_count(), 0);
        let m = cch.customize(&[5]);
        assert_eq!(m.weights[0].len(), 0);
        m.prepare_queries(&cch);
    }

    /// Three 10×10 grid towns of two-way streets side by side (A, B, C from west to east), joined
    /// by the given streets between the towns' facing edges: (from town, row, two-way). Returns the
    /// order of the line graph and the line nodes of the joining streets.
    fn three_towns(joins: &[(u32, u32, bool)]) -> (Vec<u32>, Vec<u32>) {
        let side = 10u32;
        let id = |town: u32, x: u32, y: u32| town * side * side + y * side + x;
        let mut coords = vec![[0.0; 2]; (3 * side * side) as usize];
        let mut node_pair = vec![];
        for town in 0..3 {
            for y in 0..side {
                for x in 0..side {
                    coords[id(town, x, y) as usize] = [(town * (side + 1) + x) as f64, y as f64];
                    let v = id(town, x, y);
                    for w in [
                        (x + 1 < side).then(|| id(town, x + 1, y)),
                        (y + 1 < side).then(|| id(town, x, y + 1)),
                    ]
                    .into_iter()
                    .flatten()
                    {
                        node_pair.push((v, w));
                        node_pair.push((v, w));
                    }
                }
            }
        }
        let mut joining = vec![];
        for &(town, row, two_way) in joins {
            let (a, b) = (id(town, side - 1, row), id(town + 1, 0, row));
            for _ in 0..if two_way { 2 } else { 1 } {
                joining.push(node_pair.len() as u32);
                node_pair.push((a, b));
            }
        }
        let degree = vec![4; node_pair.len()];
        let order = order_line_graph(coords.len(), &coords, &node_pair, &degree);
        let mut seen = vec![false; node_pair.len()];
        for &x in &order {
            assert!(!seen[x as usize], "line node {x} ordered twice");
            seen[x as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "every line node is ordered");
        (order, joining)
    }

    #[test]
    fn the_turn_graph_order_puts_the_bridge_between_towns_last() {
        // A and B joined by one two-way street, B and C by three: the single street is the cheapest
        // cut, at a balance of a third.
        let (order, joining) =
            three_towns(&[(0, 4, true), (1, 2, true), (1, 5, true), (1, 8, true)]);
        let mut top: Vec<u32> = order[order.len() - 2..].to_vec();
        top.sort_unstable();
        assert_eq!(top, joining[..2]);
    }

    #[test]
    fn the_turn_graph_order_cuts_one_way_streets_before_two_way_ones() {
        // A and B joined by two two-way streets (four routing nodes), B and C by three one-way
        // streets (three): counted by edges the first is the smaller cut, counted by the routing
        // nodes the separator takes the second is.
        let (order, joining) = three_towns(&[
            (0, 3, true),
            (0, 6, true),
            (1, 2, false),
            (1, 5, false),
            (1, 8, false),
        ]);
        let mut top: Vec<u32> = order[order.len() - 3..].to_vec();
        top.sort_unstable();
        assert_eq!(top, joining[4..]);
    }

    #[test]
    fn order_is_a_permutation_with_separator_last_on_a_grid() {
        let (w, h) = (20u32, 20u32);
        let mut edges = vec![];
        let mut coords = vec![];
        for y in 0..h {
            for x in 0..w {
                coords.push([x as f64, y as f64]);
                if x + 1 < w {
                    edges.push((y * w + x, y * w + x + 1));
                }
                if y + 1 < h {
                    edges.push((y * w + x, (y + 1) * w + x));
                }
            }
        }
        let order = order_for((w * h) as usize, &mut edges, &coords);
        let mut seen = vec![false; (w * h) as usize];
        for &v in &order {
            assert!(!seen[v as usize]);
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        // The top separator of a 20×20 grid is a line of at most 20 nodes: removing the last 20
        // nodes of the order splits the grid into large parts.
        let removed: std::collections::HashSet<u32> =
            order[order.len() - 20..].iter().copied().collect();
        let mut comp = vec![u32::MAX; (w * h) as usize];
        let mut sizes = vec![];
        for s in 0..w * h {
            if removed.contains(&s) || comp[s as usize] != u32::MAX {
                continue;
            }
            let id = sizes.len() as u32;
            let mut stack = vec![s];
            comp[s as usize] = id;
            let mut size = 0;
            while let Some(v) = stack.pop() {
                size += 1;
                let (x, y) = (v % w, v / w);
                let mut next = vec![];
                if x > 0 {
                    next.push(v - 1);
                }
                if x + 1 < w {
                    next.push(v + 1);
                }
                if y > 0 {
                    next.push(v - w);
                }
                if y + 1 < h {
                    next.push(v + w);
                }
                for u in next {
                    if !removed.contains(&u) && comp[u as usize] == u32::MAX {
                        comp[u as usize] = id;
                        stack.push(u);
                    }
                }
            }
            sizes.push(size);
        }
        sizes.sort_unstable();
        assert!(
            sizes.len() >= 2 && sizes[sizes.len() - 2] >= 60,
            "{sizes:?}"
        );
    }
}
