//! Plain Dijkstra on the input graph: one-to-many searches (nearest stations, parking) where the
//! targets are close, and a reference for tests.

use crate::cch::{INF_WEIGHT, Weight};
use crate::graph::{ArcId, NodeId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Outgoing arcs per node (CSR) of a graph whose arc `2e` runs tail→head and `2e+1` head→tail.
pub struct Adjacency {
    pub first_out: Vec<u32>,
    pub arc: Vec<ArcId>,
    pub head: Vec<NodeId>,
}

impl Adjacency {
    pub fn new(node_count: usize, tails: &[NodeId], heads: &[NodeId]) -> Adjacency {
        let mut deg = vec![0u32; node_count + 1];
        for (&t, &h) in tails.iter().zip(heads) {
            deg[t as usize] += 1;
            deg[h as usize] += 1;
        }
        let mut first_out = vec![0u32; node_count + 1];
        for v in 0..node_count {
            first_out[v + 1] = first_out[v] + deg[v];
        }
        let mut pos = first_out.clone();
        let mut arc = vec![0; first_out[node_count] as usize];
        let mut head = vec![0; first_out[node_count] as usize];
        for (e, (&t, &h)) in tails.iter().zip(heads).enumerate() {
            let p = pos[t as usize] as usize;
            arc[p] = 2 * e as u32;
            head[p] = h;
            pos[t as usize] += 1;
            let p = pos[h as usize] as usize;
            arc[p] = 2 * e as u32 + 1;
            head[p] = t;
            pos[h as usize] += 1;
        }
        Adjacency {
            first_out,
            arc,
            head,
        }
    }
}

/// A reusable Dijkstra with timestamped distance labels.
pub struct Dijkstra {
    pub dist: Vec<Weight>,
    pub pred: Vec<ArcId>,
    stamp: Vec<u32>,
    now: u32,
    heap: BinaryHeap<Reverse<(Weight, NodeId)>>,
}

impl Dijkstra {
    pub fn new(n: usize) -> Dijkstra {
        Dijkstra {
            dist: vec![INF_WEIGHT; n],
            pred: vec![u32::MAX; n],
            stamp: vec![0; n],
            now: 0,
            heap: BinaryHeap::new(),
        }
    }

    pub fn distance(&self, v: NodeId) -> Weight {
        if self.stamp[v as usize] == self.now {
            self.dist[v as usize]
        } else {
            INF_WEIGHT
        }
    }

    fn relax(&mut self, v: NodeId, d: Weight, pred: ArcId) {
        let vi = v as usize;
        if self.stamp[vi] != self.now || d < self.dist[vi] {
            self.stamp[vi] = self.now;
            self.dist[vi] = d;
            self.pred[vi] = pred;
            self.heap.push(Reverse((d, v)));
        }
    }

    /// Runs from `sources` (node, initial distance) until `stop(node, dist)` returns true for a
    /// settled node or `max_dist` is exceeded.
    pub fn run(
        &mut self,
        adj: &Adjacency,
        weights: &(impl std::ops::Index<usize, Output = Weight> + ?Sized),
        sources: &[(NodeId, Weight)],
        max_dist: Weight,
        mut stop: impl FnMut(NodeId, Weight) -> bool,
    ) {
        self.now = self.now.wrapping_add(1);
        if self.now == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.now = 1;
        }
        self.heap.clear();
        for &(s, d) in sources {
            self.relax(s, d, u32::MAX);
        }
        while let Some(Reverse((d, v))) = self.heap.pop() {
            if d > self.dist[v as usize] {
                continue;
            }
            if d > max_dist || stop(v, d) {
                break;
            }
            for i in adj.first_out[v as usize] as usize..adj.first_out[v as usize + 1] as usize {
                let w = weights[adj.arc[i] as usize];
                if w >= INF_WEIGHT {
                    continue;
                }
                self.relax(adj.head[i], d.saturating_add(w), adj.arc[i]);
            }
        }
    }
}

/// Strongly connected components of the arcs `usable` allows (Tarjan, iterative). Returns the
/// component id of every node and each component's size.
pub fn strongly_connected(adj: &Adjacency, usable: impl Fn(ArcId) -> bool) -> (Vec<u32>, Vec<u32>) {
    let n = adj.first_out.len() - 1;
    let mut index = vec![u32::MAX; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![u32::MAX; n];
    let mut sizes = Vec::new();
    let mut stack: Vec<u32> = Vec::new();
    let mut call: Vec<(u32, u32)> = Vec::new(); // (node, next adjacency position)
    let mut next_index = 0u32;
    for root in 0..n as u32 {
        if index[root as usize] != u32::MAX {
            continue;
        }
        call.push((root, adj.first_out[root as usize]));
        index[root as usize] = next_index;
        low[root as usize] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (v, ref mut pos)) = call.last_mut() {
            let end = adj.first_out[v as usize + 1];
            if *pos < end {
                let i = *pos as usize;
                *pos += 1;
                if !usable(adj.arc[i]) {
                    continue;
                }
                let w = adj.head[i];
                if index[w as usize] == u32::MAX {
                    index[w as usize] = next_index;
                    low[w as usize] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    call.push((w, adj.first_out[w as usize]));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
            } else {
                call.pop();
                if let Some(&(parent, _)) = call.last() {
                    low[parent as usize] = low[parent as usize].min(low[v as usize]);
                }
                if low[v as usize] == index[v as usize] {
                    let id = sizes.len() as u32;
                    let mut size = 0;
                    loop {
                        let w = stack.pop().unwrap();
                        on_stack[w as usize] = false;
                        comp[w as usize] = id;
                        size += 1;
                        if w == v {
                            break;
                        }
                    }
                    sizes.push(size);
                }
            }
        }
    }
    (comp, sizes)
}
