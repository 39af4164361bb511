//! A vector whose copies share their items until one of them writes.
//!
//! A restarted receiver resumes from a checkpoint by copying its ledger.
//! With plain vectors that copy costs the whole history, at every restart,
//! and a long run with crashes costs the square of its length. Here items
//! live in fixed-size chunks behind reference counts: a copy costs one
//! pointer per chunk, and a write copies only the chunk it lands in, once.
//! Ledgers write almost only to their newest items, so a copy that goes on
//! receiving frames copies a few chunks at most.

use std::ops::{Index, IndexMut};
use std::sync::Arc;

#[derive(Debug, Clone)]
pub(crate) struct SharedVec<T, const CHUNK: usize> {
    chunks: Vec<Arc<Vec<T>>>,
    len: usize,
}

impl<T, const CHUNK: usize> Default for SharedVec<T, CHUNK> {
    fn default() -> Self {
        SharedVec {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Clone, const CHUNK: usize> SharedVec<T, CHUNK> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn push(&mut self, item: T) {
        if self.len % CHUNK == 0 {
            self.chunks.push(Arc::new(Vec::with_capacity(CHUNK)));
        }
        if let Some(last) = self.chunks.last_mut() {
            Arc::make_mut(last).push(item);
        }
        self.len += 1;
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flat_map(|c| c.iter())
    }
}

impl<T, const CHUNK: usize> Index<usize> for SharedVec<T, CHUNK> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        &self.chunks[i / CHUNK][i % CHUNK]
    }
}

impl<T: Clone, const CHUNK: usize> IndexMut<usize> for SharedVec<T, CHUNK> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut Arc::make_mut(&mut self.chunks[i / CHUNK])[i % CHUNK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_diverge_and_share_what_neither_wrote() {
        let mut a: SharedVec<u32, 4> = SharedVec::default();
        for i in 0..10 {
            a.push(i);
        }
        let mut b = a.clone();
        b[9] = 90;
        b.push(10);
        a[0] = 100;
        assert_eq!(
            a.iter().copied().collect::<Vec<_>>(),
            [100, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        );
        assert_eq!(
            b.iter().copied().collect::<Vec<_>>(),
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 90, 10]
        );
        assert_eq!((a.len(), b.len()), (10, 11));
        // The middle chunk was written by neither copy: still one chunk.
        assert!(Arc::ptr_eq(&a.chunks[1], &b.chunks[1]));
        assert!(!Arc::ptr_eq(&a.chunks[0], &b.chunks[0]));
    }
}
