//! A fixed-length array stored as shared chunks, copied on write: cloning it copies one pointer per
//! chunk, and writing to an element copies only that element's chunk if another clone still shares
//! it. A metric changed by an avoidance or a few live arcs is a clone of the base metric with a few
//! arcs re-customized, so it costs the chunks it touches instead of a copy of every array (66 MB for
//! the New York extract), and the cached variants share the rest with the base.
//!
//! An array starts as one block, the memory it was made in (a customization's working arrays
//! become the metric without a copy). A chunk written while other clones read it from that block
//! moves to a copy of its own; the block counts, per chunk, the arrays that still read it there,
//! and hands the pages of a chunk no array reads back to the system, so a long run of live
//! changes, each metric a clone of the one before, holds no more memory than the arrays it serves.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// log2 of the elements per chunk. Small chunks keep a change that ripples through scattered arcs
/// (a turn priced for one leg: `City::without_turn_backs`) from copying megabytes: with 16,384
/// entries a chunk, one priced turn cost about 2 ms, most of it copying; with 2,048, a quarter of
/// that. A clone copies a pointer per chunk (about 1,300 per array on New York).
const CHUNK_BITS: u32 = 11;
const CHUNK: usize = 1 << CHUNK_BITS;
const MASK: usize = CHUNK - 1;
const PAGE: usize = 4096;

/// One allocation of elements, shared by the arrays that read it and written, through raw pointers
/// only, by an array that alone reads the chunk written.
pub struct Block<T> {
    ptr: *mut T,
    len: usize,
    /// The capacity of the vector the block was taken from.
    cap: usize,
    /// Per chunk: how many arrays read the chunk here (the others have copies of their own).
    readers: Box<[AtomicU32]>,
    /// Chunks no array reads, not yet given back (a count towards the next sweep).
    dead: AtomicUsize,
}

/// A chunk's readers once its pages have gone back to the system.
const RELEASED: u32 = u32::MAX;

impl<T> Block<T> {
    fn new(v: Vec<T>) -> Block<T> {
        let mut v = std::mem::ManuallyDrop::new(v);
        Block {
            ptr: v.as_mut_ptr(),
            len: v.len(),
            cap: v.capacity(),
            readers: Box::new([]),
            dead: Default::default(),
        }
    }

    /// Uninitialized room for `len` elements, to be written whole before it is read
    /// ([`CowVec::from_block`]): a customization's working arrays, which become the metric.
    pub fn for_writing(len: usize) -> Block<T> {
        let mut block = Block::new(Vec::with_capacity(len));
        block.len = len;
        block
    }

    /// The first element.
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr
    }

    /// One array no longer reads chunk `c` here. Chunks no array reads go back to the system in
    /// sweeps, each once a quarter of the chunks has died since the last, rather than with a
    /// system call (and a TLB flush on every core) for each chunk as it dies, on the path of a
    /// live change.
    fn leave(&self, c: usize) {
        if self.readers[c].fetch_sub(1, Ordering::AcqRel) == 1
            && self.dead.fetch_add(1, Ordering::AcqRel) + 1 == self.readers.len().div_ceil(4)
        {
            self.dead
                .fetch_sub(self.readers.len().div_ceil(4), Ordering::AcqRel);
            self.sweep();
        }
    }

    /// Gives back the pages of every chunk no array reads (once each), a run of chunks at a time.
    fn sweep(&self) {
        let mut c = 0;
        while c < self.readers.len() {
            let start = c;
            while c < self.readers.len()
                && self.readers[c]
                    .compare_exchange(0, RELEASED, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
            {
                c += 1;
            }
            if c > start {
                self.release(start, c);
            } else {
                c += 1;
            }
        }
    }

    /// The whole pages of chunks `from..to` back to the system: nothing reads them again.
    fn release(&self, from: usize, to: usize) {
        #[cfg(unix)]
        {
            let size = std::mem::size_of::<T>();
            let start = self.ptr as usize + from * CHUNK * size;
            let end = self.ptr as usize + self.len.min(to * CHUNK) * size;
            let (start, end) = (start.next_multiple_of(PAGE), end / PAGE * PAGE);
            if start < end {
                // SAFETY: whole pages within the allocation that nothing reads again (an allocator
                // keeps its bookkeeping outside them, and rewrites what it needs on free).
                unsafe {
                    libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
                }
            }
        }
        #[cfg(not(unix))]
        let _ = (from, to);
    }
}

impl<T> Drop for Block<T> {
    fn drop(&mut self) {
        // SAFETY: the parts `new` took apart. Elements are `Copy` (every `CowVec`'s are):
        // nothing to drop but the memory.
        drop(unsafe { Vec::from_raw_parts(self.ptr, 0, self.cap) });
    }
}

// SAFETY: a block owns its elements as a Vec does; `CowVec` says who writes them when.
unsafe impl<T: Send> Send for Block<T> {}
unsafe impl<T: Sync> Sync for Block<T> {}

pub struct CowVec<T> {
    /// Per chunk: its first element, in `first` or in the chunk's own copy.
    ptrs: Vec<*mut T>,
    /// Per chunk: its own copy, once it has one (shared by clones, counted by its `Arc`); `None`
    /// while it is read from `first`.
    own: Vec<Option<Arc<[T]>>>,
    /// The block the array was made in.
    first: Arc<Block<T>>,
    len: usize,
}

// SAFETY: the pointers point into blocks the array holds; see `Block`.
unsafe impl<T: Send + Sync> Send for CowVec<T> {}
unsafe impl<T: Send + Sync> Sync for CowVec<T> {}

impl<T> Clone for CowVec<T> {
    fn clone(&self) -> CowVec<T> {
        for (c, own) in self.own.iter().enumerate() {
            if own.is_none() {
                self.first.readers[c].fetch_add(1, Ordering::Relaxed);
            }
        }
        CowVec {
            ptrs: self.ptrs.clone(),
            own: self.own.clone(),
            first: self.first.clone(),
            len: self.len,
        }
    }
}

impl<T> Drop for CowVec<T> {
    fn drop(&mut self) {
        // The last array to hold the block frees it whole.
        if Arc::strong_count(&self.first) == 1 {
            return;
        }
        for (c, own) in self.own.iter().enumerate() {
            if own.is_none() {
                self.first.leave(c);
            }
        }
    }
}

impl<T: Copy + Send + Sync> CowVec<T> {
    /// The elements of a vector, without copying them.
    pub fn from_vec(v: Vec<T>) -> CowVec<T> {
        // SAFETY: a vector's elements are initialized.
        unsafe { CowVec::from_block(Block::new(v)) }
    }

    /// The elements of a block, without copying them.
    ///
    /// # Safety
    /// Every element of the block has been written.
    pub unsafe fn from_block(mut block: Block<T>) -> CowVec<T> {
        let (len, chunks) = (block.len, block.len.div_ceil(CHUNK));
        block.readers = (0..chunks).map(|_| AtomicU32::new(1)).collect();
        // SAFETY: every chunk's first element is within the block.
        let ptrs = (0..chunks)
            .map(|c| unsafe { block.ptr.add(c * CHUNK) })
            .collect::<Vec<_>>();
        CowVec {
            own: vec![None; chunks],
            ptrs,
            first: Arc::new(block),
            len,
        }
    }

    /// The elements as a vector: the block's own memory when this array alone reads it and has
    /// no chunk of its own (a metric just customized), else a copy.
    pub fn into_vec(mut self) -> Vec<T> {
        if self.own.iter().all(Option::is_none)
            && let Some(block) = Arc::get_mut(&mut self.first)
        {
            let (ptr, len, cap) = (block.ptr, block.len, block.cap);
            // The block lets go of its memory: it frees nothing when dropped.
            block.ptr = std::ptr::NonNull::dangling().as_ptr();
            block.len = 0;
            block.cap = 0;
            // SAFETY: the parts of the vector the block was made of (`Block::new`), every element
            // written (`from_block`), and no other array reads them.
            return unsafe { Vec::from_raw_parts(ptr, len, cap) };
        }
        self.to_vec()
    }

    /// The elements of a slice (one copy).
    pub fn from_slice(v: &[T]) -> CowVec<T> {
        CowVec::from_vec(v.to_vec())
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
            self.ptrs
                .get_unchecked(i >> CHUNK_BITS)
                .add(i & MASK)
                .read()
        }
    }

    /// Writes one element, first copying its chunk if another clone shares it.
    #[inline]
    pub fn set(&mut self, i: usize, v: T) {
        assert!(i < self.len, "index {i} out of {}", self.len);
        let c = i >> CHUNK_BITS;
        let len = self.chunk_len(c);
        // SAFETY: `c` is a chunk of this array, and `&mut self` excludes every other access.
        unsafe {
            let p = writable(
                self.ptrs.as_mut_ptr().add(c),
                self.own.as_mut_ptr().add(c),
                &self.first,
                c,
                len,
            );
            p.add(i & MASK).write(v);
        }
    }

    fn chunk_len(&self, c: usize) -> usize {
        (self.len - c * CHUNK).min(CHUNK)
    }

    fn chunk(&self, c: usize) -> &[T] {
        // SAFETY: the chunk's elements are initialized, and written only through `&mut self`.
        unsafe { std::slice::from_raw_parts(self.ptrs[c], self.chunk_len(c)) }
    }

    /// The elements in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.ptrs.len()).flat_map(|c| self.chunk(c).iter())
    }

    pub fn to_vec(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len);
        for c in 0..self.ptrs.len() {
            out.extend_from_slice(self.chunk(c));
        }
        out
    }

    /// Bytes of the elements.
    pub fn memory_bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// Bytes of the chunks this array shares with `other` (the same memory).
    pub fn shared_bytes(&self, other: &CowVec<T>) -> usize {
        (0..self.ptrs.len().min(other.ptrs.len()))
            .filter(|&c| self.ptrs[c] == other.ptrs[c])
            .map(|c| self.chunk_len(c) * std::mem::size_of::<T>())
            .sum()
    }
}

/// Chunk `c`'s elements, made writable: in place if no other array reads them, else first copied
/// to a block of the array's own.
///
/// # Safety
/// `ptr` and `own` are chunk `c`'s entries in an array made in `first`, `len` the chunk's length,
/// and no other thread touches those entries or the array's copy of the chunk meanwhile.
#[inline]
unsafe fn writable<T: Copy>(
    ptr: *mut *mut T,
    own: *mut Option<Arc<[T]>>,
    first: &Block<T>,
    c: usize,
    len: usize,
) -> *mut T {
    unsafe {
        match &mut *own {
            Some(b) => {
                if let Some(mine) = Arc::get_mut(b) {
                    *ptr = mine.as_mut_ptr();
                    return *ptr;
                }
            }
            // No other array reads it here, and none can start to: only a clone of this array
            // could, and the caller holds it exclusively.
            None if first.readers[c].load(Ordering::Acquire) == 1 => return *ptr,
            None => {}
        }
        let mut copy: Arc<[T]> = Arc::from(std::slice::from_raw_parts(*ptr, len));
        *ptr = Arc::get_mut(&mut copy).expect("a fresh copy").as_mut_ptr();
        if (*own).replace(copy).is_none() {
            first.leave(c);
        }
        *ptr
    }
}

impl<T: Copy + Send + Sync> CowVec<T> {
    /// A view through which several threads write disjoint elements (a partial customization's
    /// tasks, each over its own range of arcs). `shared_chunks` are the chunks that more than one
    /// task may write (those holding the ends of the tasks' ranges): they are made writable here,
    /// and written directly; every other chunk is made writable (copied if shared) on first write
    /// by the one task whose range holds it.
    pub fn writer(&mut self, shared_chunks: &[usize]) -> CowWriter<'_, T> {
        let mut direct = vec![false; self.ptrs.len()];
        for &c in shared_chunks {
            let len = self.chunk_len(c);
            // SAFETY: `c` is a chunk of this array, and `&mut self` excludes every other access.
            unsafe {
                writable(
                    self.ptrs.as_mut_ptr().add(c),
                    self.own.as_mut_ptr().add(c),
                    &self.first,
                    c,
                    len,
                );
            }
            direct[c] = true;
        }
        CowWriter {
            ptrs: self.ptrs.as_mut_ptr(),
            own: self.own.as_mut_ptr(),
            first: Arc::as_ptr(&self.first),
            len: self.len,
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
    ptrs: *mut *mut T,
    own: *mut Option<Arc<[T]>>,
    first: *const Block<T>,
    len: usize,
    /// Per chunk: whether several tasks write it (made writable already).
    direct: Vec<bool>,
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
        unsafe { (*self.ptrs.add(i >> CHUNK_BITS)).add(i & MASK).read() }
    }

    /// # Safety
    /// `i` is in bounds; only this thread reads or writes element `i` meanwhile, and if its chunk
    /// was not named shared, only this thread touches the chunk.
    #[inline(always)]
    pub unsafe fn set(&self, i: usize, v: T) {
        let c = i >> CHUNK_BITS;
        unsafe {
            let p = if *self.direct.get_unchecked(c) {
                *self.ptrs.add(c)
            } else {
                writable(
                    self.ptrs.add(c),
                    self.own.add(c),
                    &*self.first,
                    c,
                    (self.len - c * CHUNK).min(CHUNK),
                )
            };
            p.add(i & MASK).write(v);
        }
    }
}

impl<T> std::ops::Index<usize> for CowVec<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        assert!(i < self.len, "index {i} out of {}", self.len);
        // SAFETY: in bounds; elements are written only through `&mut self`.
        unsafe { &*self.ptrs[i >> CHUNK_BITS].add(i & MASK) }
    }
}

impl<T: Copy + Send + Sync + PartialEq> PartialEq for CowVec<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len
            && (0..self.ptrs.len())
                .all(|c| self.ptrs[c] == other.ptrs[c] || self.chunk(c) == other.chunk(c))
    }
}

impl<T: Copy + Send + Sync + std::fmt::Debug> std::fmt::Debug for CowVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn into_vec_takes_the_block_alone_and_copies_when_shared() {
        let v: Vec<u32> = (0..(2 * CHUNK + 3) as u32).collect();
        let a = CowVec::from_vec(v.clone());
        let ptr = a.ptrs[0];
        let taken = a.into_vec();
        assert_eq!(taken, v);
        assert_eq!(taken.as_ptr(), ptr as *const u32, "no copy");
        let a = CowVec::from_vec(v.clone());
        let mut b = a.clone();
        b.set(1, 7);
        let mut expected = v.clone();
        assert_eq!(a.into_vec(), v, "shared: a copy");
        expected[1] = 7;
        assert_eq!(b.into_vec(), expected, "a chunk of its own: a copy");
    }

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

    #[test]
    fn an_array_alone_is_written_in_place_and_a_writer_copies_what_is_shared() {
        let v: Vec<u32> = (0..(2 * CHUNK + 1) as u32).collect();
        let mut a = CowVec::from_vec(v.clone());
        let first = a.ptrs.clone();
        a.set(3, 7);
        assert_eq!(
            a.ptrs, first,
            "no clone shares it: written where it was made"
        );
        let b = a.clone();
        {
            let w = a.writer(&[1]);
            unsafe {
                w.set(CHUNK + 1, 8);
                w.set(2 * CHUNK, 9);
                assert_eq!(w.get(2 * CHUNK), 9);
            }
        }
        assert_eq!((a[3], a[CHUNK + 1], a[2 * CHUNK]), (7, 8, 9));
        assert_eq!(
            (b[3], b[CHUNK + 1], b[2 * CHUNK]),
            (7, (CHUNK + 1) as u32, 2 * CHUNK as u32)
        );
        assert_eq!(a.shared_bytes(&b), 4 * CHUNK, "chunk 0 is still shared");
        drop(b);
        let moved = a.ptrs.clone();
        a.set(0, 1);
        a.set(CHUNK, 2);
        assert_eq!(a.ptrs, moved, "alone again: chunks write where they are");
        assert_eq!(a.to_vec()[..2], [1, 1]);
    }

    #[test]
    fn a_chunk_no_array_reads_is_given_back_and_a_lone_reader_writes_in_place() {
        let mut a = CowVec::from_slice(&vec![5u32; 3 * CHUNK]);
        let b = a.clone();
        let readers = |v: &CowVec<u32>| -> Vec<u32> {
            v.first
                .readers
                .iter()
                .map(|r| r.load(Ordering::Relaxed))
                .collect()
        };
        assert_eq!(readers(&a), [2, 2, 2]);
        a.set(CHUNK, 1);
        assert_eq!(readers(&a), [2, 1, 2], "a reads chunk 1 from its own copy");
        let c = b.clone();
        assert_eq!(readers(&a), [3, 2, 3]);
        drop(b);
        drop(c);
        // A quarter of three chunks is one: the first dead chunk sweeps.
        assert_eq!(
            readers(&a),
            [1, RELEASED, 1],
            "nobody reads chunk 1 there: given back"
        );
        let before = a.ptrs.clone();
        a.set(0, 2);
        a.set(2 * CHUNK, 3);
        assert_eq!(
            a.ptrs, before,
            "the only reader writes where the chunks are"
        );
        assert_eq!((a[0], a[1], a[CHUNK], a[2 * CHUNK]), (2, 5, 1, 3));
    }
}
