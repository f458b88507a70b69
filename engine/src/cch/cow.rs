//! A fixed-length array stored as shared chunks, copied on write: cloning it copies one pointer per
//! chunk, and writing to an element copies only that element's chunk if another clone still shares
//! it. A metric changed by an avoidance or a few live arcs is a clone of the base metric with a few
//! arcs re-customized, so it costs the chunks it touches instead of a copy of every array (66 MB for
//! the New York extract), and the cached variants share the rest with the base.

use std::sync::Arc;

/// log2 of the elements per chunk. Small chunks keep a change that ripples through scattered arcs
/// (a turn priced for one leg: `City::without_turn_backs`) from copying megabytes: with 16,384
/// entries a chunk, one priced turn cost about 2 ms, most of it copying; with 2,048, a quarter of
/// that. A clone copies a pointer per chunk (about 1,300 per array on New York).
const CHUNK_BITS: u32 = 11;
const CHUNK: usize = 1 << CHUNK_BITS;
const MASK: usize = CHUNK - 1;

#[derive(Clone)]
pub struct CowVec<T> {
    chunks: Vec<Arc<[T]>>,
    len: usize,
}

impl<T: Copy + Send + Sync> CowVec<T> {
    /// Chunks the elements of a slice (one copy).
    pub fn from_slice(v: &[T]) -> CowVec<T> {
        CowVec {
            chunks: v.chunks(CHUNK).map(Arc::from).collect(),
            len: v.len(),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// # Safety
    /// `i < self.len()`.
    #[inline(always)]
    pub unsafe fn get_unchecked(&self, i: usize) -> T {
        unsafe {
            *self
                .chunks
                .get_unchecked(i >> CHUNK_BITS)
                .get_unchecked(i & MASK)
        }
    }

    /// Writes one element, first copying its chunk if another clone shares it.
    #[inline]
    pub fn set(&mut self, i: usize, v: T) {
        let chunk = &mut self.chunks[i >> CHUNK_BITS];
        Arc::make_mut(chunk)[i & MASK] = v;
    }

    /// The elements in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.chunks.iter().flat_map(|c| c.iter())
    }

    pub fn to_vec(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len);
        for c in &self.chunks {
            out.extend_from_slice(c);
        }
        out
    }

    /// Bytes of the elements.
    pub fn memory_bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// Bytes of the chunks this array shares with `other` (the same allocation).
    pub fn shared_bytes(&self, other: &CowVec<T>) -> usize {
        self.chunks
            .iter()
            .zip(&other.chunks)
            .filter(|(a, b)| Arc::ptr_eq(a, b))
            .map(|(a, _)| a.len() * std::mem::size_of::<T>())
            .sum()
    }
}

impl<T: Copy + Send + Sync> CowVec<T> {
    /// A view through which several threads write disjoint elements (a partial customization's
    /// tasks, each over its own range of arcs). `shared_chunks` are the chunks that more than one
    /// task may write (those holding the ends of the tasks' ranges): they are unshared here, and
    /// written directly; every other chunk is copied on first write by the one task whose range
    /// holds it.
    pub fn writer(&mut self, shared_chunks: &[usize]) -> CowWriter<'_, T> {
        let mut direct = vec![std::ptr::null_mut(); self.chunks.len()];
        for &c in shared_chunks {
            direct[c] = Arc::make_mut(&mut self.chunks[c]).as_mut_ptr();
        }
        CowWriter {
            chunks: self.chunks.as_mut_ptr(),
            direct,
            _vec: std::marker::PhantomData,
        }
    }

    /// The chunk holding element `i`.
    pub fn chunk_of(i: usize) -> usize {
        i >> CHUNK_BITS
    }
}

/// See [`CowVec::writer`].
pub struct CowWriter<'a, T> {
    chunks: *mut Arc<[T]>,
    /// Per chunk: its elements, if several tasks write it (already unshared), else null.
    direct: Vec<*mut T>,
    _vec: std::marker::PhantomData<&'a mut CowVec<T>>,
}

// SAFETY: see the contracts of `get` and `set`.
unsafe impl<T: Send + Sync> Sync for CowWriter<'_, T> {}
unsafe impl<T: Send + Sync> Send for CowWriter<'_, T> {}

impl<T: Copy + Send + Sync> CowWriter<'_, T> {
    /// # Safety
    /// `i` is in bounds, and no other thread writes element `i` meanwhile, nor (unless its chunk
    /// was named shared) any element of its chunk.
    #[inline(always)]
    pub unsafe fn get(&self, i: usize) -> T {
        // Through raw pointers only: another thread may be writing another element of a shared
        // chunk.
        unsafe {
            let chunk = Arc::as_ptr(&*self.chunks.add(i >> CHUNK_BITS)) as *const T;
            chunk.add(i & MASK).read()
        }
    }

    /// # Safety
    /// `i` is in bounds; only this thread reads or writes element `i` meanwhile, and if its chunk
    /// was not named shared, only this thread touches the chunk.
    #[inline(always)]
    pub unsafe fn set(&self, i: usize, v: T) {
        let c = i >> CHUNK_BITS;
        unsafe {
            let p = *self.direct.get_unchecked(c);
            if p.is_null() {
                Arc::make_mut(&mut *self.chunks.add(c))[i & MASK] = v;
            } else {
                *p.add(i & MASK) = v;
            }
        }
    }
}

impl<T> std::ops::Index<usize> for CowVec<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        &self.chunks[i >> CHUNK_BITS][i & MASK]
    }
}

impl<T: PartialEq> PartialEq for CowVec<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len
            && self
                .chunks
                .iter()
                .zip(&other.chunks)
                .all(|(a, b)| Arc::ptr_eq(a, b) || a[..] == b[..])
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for CowVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.chunks.iter().flat_map(|c| c.iter()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_shares_until_written_and_a_write_copies_one_chunk() {
        let v: Vec<u32> = (0..(3 * CHUNK + 5) as u32).collect();
        let a = CowVec::from_slice(&v);
        assert_eq!(a.len(), v.len());
        assert_eq!(a.to_vec(), v);
        let mut b = a.clone();
        assert_eq!(b.shared_bytes(&a), a.memory_bytes());
        b.set(CHUNK + 7, 1);
        assert_eq!(b[CHUNK + 7], 1);
        assert_eq!(
            a[CHUNK + 7],
            (CHUNK + 7) as u32,
            "the original is untouched"
        );
        assert_eq!(b.shared_bytes(&a), a.memory_bytes() - 4 * CHUNK);
        assert_ne!(a, b);
        b.set(CHUNK + 7, (CHUNK + 7) as u32);
        assert_eq!(a, b, "equal by content");
        let last = v.len() - 1;
        b.set(last, 9);
        assert_eq!(unsafe { b.get_unchecked(last) }, 9);
    }
}
