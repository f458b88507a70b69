//! Unpacking: a path of hierarchy arcs → the input arcs it stands for, in travel order.
//!
//! On a pruned query graph each kept arc carries its entry (see [`PrunedGraph`]), so a shortcut
//! unpacks with one read per arc. A metric without one (fresh from a live change, or used too
//! seldom to prune) stores no entries: each shortcut's lower triangle is found again by its weight,
//! a merge of two downward lists per shortcut. Customization then writes weights only, and a metric
//! costs no entries for the four fifths of its arcs no query uses.

use super::{Cch, CustomizedMetric, INF_WEIGHT, PrunedGraph, add};
use crate::graph::ArcId;

/// Marks an unpacking entry that is an input arc.
pub const INPUT_BIT: u32 = 1 << 31;
/// No entry (yet).
pub(super) const NO_ENTRY: u32 = u32::MAX;

impl Cch {
    /// Appends the input arcs of kept arc `k` of a pruned graph, travelled upward (its `fw` list)
    /// or downward (`bw`), in travel order. `stack` is scratch reused across the arcs of a path.
    pub(super) fn unpack_pruned(
        p: &PrunedGraph,
        k: u32,
        upward: bool,
        out: &mut Vec<ArcId>,
        stack: &mut Vec<(u32, bool)>,
    ) {
        stack.clear();
        stack.push((k, upward));
        while let Some((k, up)) = stack.pop() {
            let [first, second] = if up {
                p.fw_unpack[k as usize]
            } else {
                p.bw_unpack[k as usize]
            };
            if first & INPUT_BIT != 0 {
                out.push(first & !INPUT_BIT);
                continue;
            }
            // Down `first`, then up `second`: the stack pops the last pushed first.
            stack.push((second, true));
            stack.push((first, false));
        }
    }

    /// Appends the input arcs of CCH arc `a` travelled upward (`fw`) or downward, in travel order,
    /// finding how each weight arose: an input arc mapped onto the arc with that weight, else a
    /// lower triangle summing to it (partial and basic customization leave every arc at the
    /// minimum over both, so one of them matches).
    pub(super) fn unpack_searched(
        &self,
        metric: &CustomizedMetric,
        a: u32,
        upward: bool,
        out: &mut Vec<ArcId>,
        stack: &mut Vec<(u32, bool)>,
    ) {
        stack.clear();
        stack.push((a, upward));
        while let Some((a, up)) = stack.pop() {
            let au = a as usize;
            let w = if up { metric.fw[au] } else { metric.bw[au] };
            if w >= INF_WEIGHT {
                continue;
            }
            if let Some(&i) = self.inputs_of.of(au).iter().find(|&&i| {
                self.input_upward[i as usize] == up && metric.input_weights[i as usize] == w
            }) {
                out.push(i);
                continue;
            }
            // Upward y → x → z is (x, y) down then (x, z) up; downward z → x → y the reverse.
            let found = self.find_lower_triangle(a, |xy, xz| {
                let (xy, xz) = (xy as usize, xz as usize);
                if up {
                    add(metric.bw[xy], metric.fw[xz]) == w
                } else {
                    add(metric.bw[xz], metric.fw[xy]) == w
                }
            });
            let Some((xy, xz)) = found else {
                debug_assert!(false, "arc {a}: no input arc or triangle gives its weight");
                continue;
            };
            if up {
                stack.push((xz, true));
                stack.push((xy, false));
            } else {
                stack.push((xy, true));
                stack.push((xz, false));
            }
        }
    }
}
