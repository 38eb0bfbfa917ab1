//! Keys hashed once: the table's shard and the shard's slot both come from one hash of the key,
//! computed by the limiter's hasher and handed to `papaya` through a pass-through hasher.

use core::hash::{BuildHasher, Hash, Hasher};

use papaya::Equivalent;

/// A stored key with its hash.
pub(crate) struct Hashed<K> {
    pub(crate) hash: u64,
    pub(crate) key: K,
}

impl<K> Hash for Hashed<K> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl<K: PartialEq> PartialEq for Hashed<K> {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.key == other.key
    }
}

impl<K: Eq> Eq for Hashed<K> {}

/// A lookup: a borrowed key with its hash, so finding a key neither clones nor rehashes it.
pub(crate) struct Probe<'a, K> {
    pub(crate) hash: u64,
    pub(crate) key: &'a K,
}

impl<K> Hash for Probe<'_, K> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl<K: Eq> Equivalent<Hashed<K>> for Probe<'_, K> {
    fn equivalent(&self, stored: &Hashed<K>) -> bool {
        self.hash == stored.hash && *self.key == stored.key
    }
}

/// The hasher of a shard: the hash is the one `u64` written, already computed.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PassThrough;

impl BuildHasher for PassThrough {
    type Hasher = Written;

    fn build_hasher(&self) -> Written {
        Written(0)
    }
}

/// What a [`PassThrough`] hasher was given.
#[derive(Debug)]
pub(crate) struct Written(u64);

impl Hasher for Written {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }

    // Only `write_u64` is ever called (by `Hashed` and `Probe`); folding other bytes in keeps the
    // hasher total rather than wrong if that changes.
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }
}
