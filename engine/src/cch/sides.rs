//! Which sides of a hierarchy's arcs can ever be finite, and where each such side's weight lies in
//! a metric's weights.
//!
//! On a turn graph most arcs can be travelled one way only (a turn's reverse is no turn), and a
//! restricted hierarchy keeps only the arcs finite on some side for the metrics it serves: on the
//! 4 × 4 tiling of New York, of 18.2 M arcs 7.6 M can be finite forward only, 8.8 M backward only
//! and 1.8 M both ways. A metric that kept both sides of every arc spent nearly half its weights
//! on sides that are infinite under any metric. So a metric holds one weight per side that can be
//! finite, in arc order, and finds a side's weight by a rank over that side's bits: a word's count
//! of the sides before it, and a count of the bits below the arc in its word. Loops over a node's
//! arcs (a search on the whole hierarchy, customization's writes to the metric) carry the rank
//! along instead of computing it per arc.

/// Per side (0: forward, `lo → hi`; 1: backward), a bit per arc set where that side can be
/// finite, and the number of set bits before each word: both sides' of 64 arcs side by side, so
/// that an arc's two weights are placed from one cache line (a partial customization reads both
/// sides of the arcs it meets, at random).
#[derive(Clone, Debug, PartialEq)]
pub struct Sides {
    words: Vec<Word>,
    arcs: usize,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
struct Word {
    bits: [u64; 2],
    before: [u32; 2],
}

/// The position of a side that cannot be finite ([`Sides::slots`]).
pub const NO_SIDE: usize = usize::MAX;

/// No arcs.
impl Default for Sides {
    fn default() -> Sides {
        Sides::from_bits([vec![], vec![]], 0)
    }
}

impl Sides {
    /// Both sides of every one of `arcs` arcs.
    pub fn all(arcs: usize) -> Sides {
        let words = arcs.div_ceil(64);
        let mut bits = vec![u64::MAX; words];
        if arcs % 64 != 0 {
            bits[words - 1] = u64::MAX >> (64 - arcs % 64);
        }
        Sides::from_bits([bits.clone(), bits], arcs)
    }

    /// The sides set in `bits` (per side, a word per 64 arcs).
    pub fn from_bits(bits: [Vec<u64>; 2], arcs: usize) -> Sides {
        let n = arcs.div_ceil(64);
        assert!(
            bits.iter().all(|b| b.len() == n),
            "a side's bits for {arcs} arcs"
        );
        let mut words = Vec::with_capacity(n + 1);
        let mut before = [0u32; 2];
        for w in 0..n {
            let word = Word {
                bits: [bits[0][w], bits[1][w]],
                before,
            };
            for (b, bits) in before.iter_mut().zip(word.bits) {
                *b += bits.count_ones();
            }
            words.push(word);
        }
        // One past the last: the counts of all.
        words.push(Word {
            bits: [0, 0],
            before,
        });
        Sides { words, arcs }
    }

    /// The bits, forward then backward (what a graph file stores).
    pub fn to_words(&self) -> Vec<u64> {
        let n = self.arcs.div_ceil(64);
        let side = |i: usize| self.words[..n].iter().map(move |w| w.bits[i]);
        side(0).chain(side(1)).collect()
    }

    /// The sides of [`Self::to_words`] for `arcs` arcs, if the words fit them.
    pub fn from_words(words: &[u64], arcs: usize) -> Option<Sides> {
        let n = arcs.div_ceil(64);
        if words.len() != 2 * n {
            return None;
        }
        if arcs % 64 != 0 && (words[n - 1] | words[2 * n - 1]) >> (arcs % 64) != 0 {
            return None;
        }
        Some(Sides::from_bits(
            [words[..n].to_vec(), words[n..].to_vec()],
            arcs,
        ))
    }

    pub fn arc_count(&self) -> usize {
        self.arcs
    }

    /// The number of weights a metric holds for `side`.
    pub fn len(&self, side: usize) -> usize {
        self.words.last().map_or(0, |w| w.before[side] as usize)
    }

    /// Whether `side` of arc `a` can be finite.
    #[inline(always)]
    pub fn has(&self, side: usize, a: usize) -> bool {
        // SAFETY: callers pass arcs of the hierarchy (bounds checked in debug builds).
        debug_assert!(a < self.arcs);
        unsafe { self.words.get_unchecked(a >> 6).bits[side] >> (a & 63) & 1 != 0 }
    }

    /// The position among `side`'s weights of the first such side at or after arc `a`: the
    /// weight of arc `a`'s side when it has one.
    #[inline(always)]
    pub fn rank(&self, side: usize, a: usize) -> usize {
        debug_assert!(a <= self.arcs);
        let w = a >> 6;
        // SAFETY: there is a word per 64 arcs and one past the last (whose bits are 0).
        let word = unsafe { self.words.get_unchecked(w) };
        let below = word.bits[side] & ((1u64 << (a & 63)) - 1);
        word.before[side] as usize + below.count_ones() as usize
    }

    /// The position of arc `a`'s `side` among that side's weights, if it can be finite.
    #[inline(always)]
    pub fn slot(&self, side: usize, a: usize) -> Option<usize> {
        self.has(side, a).then(|| self.rank(side, a))
    }

    /// The positions of both sides of arc `a` ([`NO_SIDE`] where a side cannot be finite), from
    /// one word.
    #[inline(always)]
    pub fn slots(&self, a: usize) -> [usize; 2] {
        let (has, at) = self.ranks(a);
        [0, 1].map(|side| if has[side] { at[side] } else { NO_SIDE })
    }

    /// Per side of arc `a`: whether it can be finite, and the position of the first side at or
    /// after it ([`Self::rank`]), without a branch (a partial customization meets arcs at random,
    /// forward or backward about as often, and a branch on it is mispredicted half the time).
    #[inline(always)]
    pub fn ranks(&self, a: usize) -> ([bool; 2], [usize; 2]) {
        debug_assert!(a < self.arcs);
        // SAFETY: a word per 64 arcs.
        let word = unsafe { self.words.get_unchecked(a >> 6) };
        let below = (1u64 << (a & 63)) - 1;
        (
            [0, 1].map(|side| word.bits[side] >> (a & 63) & 1 != 0),
            [0, 1].map(|side| {
                word.before[side] as usize + (word.bits[side] & below).count_ones() as usize
            }),
        )
    }

    /// Calls `f(arc, position)` for every arc in `s..e` whose `side` can be finite, ascending.
    #[inline(always)]
    pub fn for_each(&self, side: usize, s: usize, e: usize, mut f: impl FnMut(usize, usize)) {
        if s >= e {
            return;
        }
        let (first, last) = (s >> 6, (e - 1) >> 6);
        for w in first..=last {
            // SAFETY: words of arcs below `arcs`.
            let word = unsafe { self.words.get_unchecked(w) };
            let (mut bits, base) = (word.bits[side], word.before[side] as usize);
            let all = bits;
            if w == first {
                bits &= u64::MAX << (s & 63);
            }
            if w == last {
                bits &= u64::MAX >> (63 - ((e - 1) & 63));
            }
            while bits != 0 {
                let i = bits.trailing_zeros();
                let below = all & ((1u64 << i) - 1);
                f((w << 6) | i as usize, base + below.count_ones() as usize);
                bits &= bits - 1;
            }
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.words.len() * std::mem::size_of::<Word>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn ranks_count_the_sides_before() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        for arcs in [0usize, 1, 63, 64, 65, 130, 1000] {
            let words = arcs.div_ceil(64);
            let mut bits = [vec![0u64; words], vec![0u64; words]];
            let mut has = [vec![false; arcs], vec![false; arcs]];
            for side in 0..2 {
                for a in 0..arcs {
                    if next() % 3 == 0 {
                        bits[side][a >> 6] |= 1 << (a & 63);
                        has[side][a] = true;
                    }
                }
            }
            let sides = Sides::from_bits(bits, arcs);
            assert_eq!(
                Sides::from_words(&sides.to_words(), arcs),
                Some(sides.clone())
            );
            for side in 0..2 {
                let mut n = 0;
                for a in 0..arcs {
                    assert_eq!(sides.rank(side, a), n);
                    assert_eq!(sides.slot(side, a), has[side][a].then_some(n));
                    assert_eq!(sides.ranks(a).0[side], has[side][a]);
                    assert_eq!(sides.ranks(a).1[side], n);
                    let slot = sides.slots(a)[side];
                    assert_eq!((slot != NO_SIDE).then_some(slot), sides.slot(side, a));
                    n += usize::from(has[side][a]);
                }
                assert_eq!(sides.rank(side, arcs), n);
                assert_eq!(sides.len(side), n);
                for (s, e) in [(0, arcs), (arcs / 3, arcs / 2), (arcs / 2, arcs)] {
                    let mut seen = vec![];
                    sides.for_each(side, s, e, |a, k| seen.push((a, k)));
                    let want: Vec<_> = (s..e)
                        .filter(|&a| has[side][a])
                        .map(|a| (a, sides.rank(side, a)))
                        .collect();
                    assert_eq!(seen, want);
                }
            }
            let all = Sides::all(arcs);
            assert_eq!(all.len(0), arcs);
            assert!((0..arcs).all(|a| all.slot(1, a) == Some(a)));
        }
    }
}
