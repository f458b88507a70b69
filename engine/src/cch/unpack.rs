//! Unpacking: a path of hierarchy arcs → the input arcs it stands for, in travel order.
//!
//! On a pruned query graph each kept arc carries its entry (see [`PrunedGraph`]), so a shortcut
//! unpacks with one read per arc. A metric without one (fresh from a live change, or used too
//! seldom to prune) stores no entries: each shortcut's lower triangle is found again by its weight
//! ([`Cch::find_lower_triangle_of`] over the downward lists of its two ends). Customization then writes
//! weights only, and a metric costs no entries for the four fifths of its arcs no query uses.

use super::{Cch, CustomizedMetric, INF_WEIGHT, PrunedGraph, add};
use crate::graph::ArcId;

/// Marks an unpacking entry that is an input arc.
pub const INPUT_BIT: u32 = 1 << 31;
/// No entry (yet).
pub(super) const NO_ENTRY: u32 = u32::MAX;

/// How one arc, travelled one way, unpacks.
enum Unpacked {
    /// It is this input arc.
    Input(ArcId),
    /// Down the first arc (its `bw` side), then up the second (its `fw` side), with the
    /// triangle's lowest node (the tail of both, where the caller tracks tails).
    Triangle(u32, u32, u32),
    /// Impassable: nothing to unpack.
    Nothing,
}

/// Appends the input arcs of arc `a` (whose tail is `tail`, where the caller tracks tails)
/// travelled upward (`fw`) or downward, in travel order, taking each arc apart with `split`: a loop
/// with a reused stack, not a recursion, as a path unpacks one arc after another.
fn unpack_with(
    (a, tail): (u32, u32),
    upward: bool,
    out: &mut Vec<ArcId>,
    stack: &mut Vec<(u32, bool, u32)>,
    mut split: impl FnMut(u32, bool, u32) -> Unpacked,
) {
    stack.clear();
    stack.push((a, upward, tail));
    while let Some((a, up, tail)) = stack.pop() {
        match split(a, up, tail) {
            Unpacked::Input(i) => out.push(i),
            Unpacked::Triangle(down, up, x) => {
                // The stack pops the last pushed first.
                stack.push((up, true, x));
                stack.push((down, false, x));
            }
            Unpacked::Nothing => {}
        }
    }
}

impl PrunedGraph {
    /// Appends the input arcs of kept arc `k`, travelled upward (its `fw` list) or downward
    /// (`bw`), in travel order, from the kept arcs' entries.
    pub(super) fn unpack(
        &self,
        k: u32,
        upward: bool,
        out: &mut Vec<ArcId>,
        stack: &mut Vec<(u32, bool, u32)>,
    ) {
        unpack_with((k, 0), upward, out, stack, |k, up, _| {
            let [first, second] = self.entry(k as usize, up);
            if first & INPUT_BIT != 0 {
                Unpacked::Input(first & !INPUT_BIT)
            } else {
                Unpacked::Triangle(first, second, 0)
            }
        });
    }
}

impl Cch {
    /// Appends the input arcs of CCH arc `a` travelled upward (`fw`) or downward, in travel order,
    /// finding how each weight arose: an input arc mapped onto the arc with that weight, else a
    /// lower triangle summing to it (partial and basic customization leave every arc at the
    /// minimum over both, so one of them matches).
    /// `tail` is `a`'s lower endpoint; each triangle found gives its two arcs' (the lowest node),
    /// so no arc's tail is searched for.
    pub(super) fn unpack_searched(
        &self,
        metric: &CustomizedMetric,
        (a, tail): (u32, u32),
        upward: bool,
        out: &mut Vec<ArcId>,
        stack: &mut Vec<(u32, bool, u32)>,
    ) {
        unpack_with((a, tail), upward, out, stack, |a, up, tail| {
            let au = a as usize;
            let w = if up { metric.fw(au) } else { metric.bw(au) };
            if w >= INF_WEIGHT {
                return Unpacked::Nothing;
            }
            if let Some((i, _)) = self
                .inputs_of
                .of(au)
                .find(|&(i, upward)| upward == up && metric.input_weights[i as usize] == w)
            {
                return Unpacked::Input(i);
            }
            // Upward y → x → z is (x, y) down then (x, z) up; downward z → x → y the reverse.
            let found = self.find_lower_triangle_of(a, tail as usize, |xy, xz| {
                let (xy, xz) = (xy as usize, xz as usize);
                if up {
                    add(metric.bw(xy), metric.fw(xz)) == w
                } else {
                    add(metric.bw(xz), metric.fw(xy)) == w
                }
            });
            match found {
                Some((xy, xz, x)) if up => Unpacked::Triangle(xy, xz, x),
                Some((xy, xz, x)) => Unpacked::Triangle(xz, xy, x),
                None => {
                    debug_assert!(false, "arc {a}: no input arc or triangle gives its weight");
                    Unpacked::Nothing
                }
            }
        });
    }
}
