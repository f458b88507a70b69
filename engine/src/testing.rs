//! Test-only helpers: a textbook Dijkstra as the reference every hierarchy query is compared with,
//! and random graphs. Compiled only for tests.

use crate::cch::{INF_WEIGHT, Weight};
use crate::graph::NodeId;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Distances from `sources` (node, initial distance) over arcs `2e` tail→head and `2e+1` head→tail.
pub fn reference_dijkstra(
    n: usize,
    tails: &[NodeId],
    heads: &[NodeId],
    weights: &[Weight],
    sources: &[(NodeId, Weight)],
) -> Vec<Weight> {
    let mut out: Vec<Vec<(NodeId, Weight)>> = vec![Vec::new(); n];
    for (e, (&t, &h)) in tails.iter().zip(heads).enumerate() {
        if weights[2 * e] < INF_WEIGHT {
            out[t as usize].push((h, weights[2 * e]));
        }
        if weights[2 * e + 1] < INF_WEIGHT {
            out[h as usize].push((t, weights[2 * e + 1]));
        }
    }
    let mut dist = vec![INF_WEIGHT; n];
    let mut heap = BinaryHeap::new();
    for &(s, d) in sources {
        if d < dist[s as usize] {
            dist[s as usize] = d;
            heap.push(Reverse((d, s)));
        }
    }
    while let Some(Reverse((d, v))) = heap.pop() {
        if d > dist[v as usize] {
            continue;
        }
        for &(w, c) in &out[v as usize] {
            let nd = d.saturating_add(c).min(INF_WEIGHT);
            if nd < dist[w as usize] {
                dist[w as usize] = nd;
                heap.push(Reverse((nd, w)));
            }
        }
    }
    dist
}

/// A small deterministic PRNG (splitmix64) so failing seeds reproduce exactly.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A random geometric graph: points in the unit square, each joined to a few near neighbours,
/// with random per-direction weights (some directions impassable).
pub struct RandomGraph {
    pub tails: Vec<NodeId>,
    pub heads: Vec<NodeId>,
    pub coords: Vec<[f64; 2]>,
    pub weights: Vec<Weight>,
}

pub fn random_graph(rng: &mut Rng, n: usize) -> RandomGraph {
    let coords: Vec<[f64; 2]> = (0..n).map(|_| [rng.unit(), rng.unit()]).collect();
    let mut tails = Vec::new();
    let mut heads = Vec::new();
    for v in 0..n {
        let mut near: Vec<(f64, usize)> = (0..n)
            .filter(|&w| w != v)
            .map(|w| {
                (
                    (coords[v][0] - coords[w][0]).powi(2) + (coords[v][1] - coords[w][1]).powi(2),
                    w,
                )
            })
            .collect();
        near.sort_by(|a, b| a.0.total_cmp(&b.0));
        for &(_, w) in near.iter().take(1 + rng.below(3) as usize) {
            tails.push(v as NodeId);
            heads.push(w as NodeId);
        }
    }
    let mut weights = Vec::with_capacity(2 * tails.len());
    for _ in 0..tails.len() {
        for _ in 0..2 {
            weights.push(if rng.below(8) == 0 {
                INF_WEIGHT
            } else {
                1 + rng.below(1000) as Weight
            });
        }
    }
    RandomGraph {
        tails,
        heads,
        coords,
        weights,
    }
}
