//! Reassembly accounting: which fragmented datagrams arrived whole.
//!
//! A fragmented test frame (fragmented by the engine at the source, or by
//! a router on the way, RFC 791 §2.3) counts as received only once every
//! byte of it has arrived. Fragments are grouped by source, destination
//! and Identification (RFC 791 §3.2; RFC 8200 §4.5); the first fragment
//! carries the UDP header and the signature, which names the stream. The
//! receiver keeps counts, never the payload: a datagram is whole when the
//! last fragment (M = 0) has given its length and the fragments received
//! cover it without overlap.
//!
//! A datagram still incomplete `TIMEOUT_NS` after its first fragment
//! arrived is given up and counted incomplete. The timeout is far longer
//! than fragments of one datagram take to arrive one after another (they
//! are sent back to back) and short enough that a 16-bit IPv4
//! Identification does not come round again within it below about
//! 300 000 datagrams/s to one destination. At most `MAX_PENDING`
//! datagrams are held; beyond that the oldest is given up.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;

/// Longest wait for a datagram's remaining fragments [ns].
pub const TIMEOUT_NS: u64 = 200_000_000;
/// Incomplete datagrams held at most.
pub const MAX_PENDING: usize = 65_536;

/// What identifies the fragments of one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub id: u32,
}

/// One fragment: where its data lies in the datagram [bytes], and whether
/// more follow.
#[derive(Debug, Clone, Copy)]
pub struct Piece {
    pub offset: usize,
    pub len: usize,
    pub more: bool,
}

/// A datagram's fragments so far; `T` is what the first fragment said.
#[derive(Debug)]
struct Partial<T> {
    first: Option<T>,
    /// (offset, end) of every fragment held.
    held: Vec<(usize, usize)>,
    got: usize,
    /// Data length, once the last fragment has arrived.
    total: Option<usize>,
    started_ns: u64,
}

/// A datagram the reassembler is done with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done<T> {
    /// What its first fragment said; none if that fragment never arrived.
    pub first: Option<T>,
    /// Fragments it was received in.
    pub fragments: u32,
}

/// What adding a fragment did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added<T> {
    /// Held; the datagram is not whole yet.
    Pending,
    /// It repeats or overlaps a fragment already held: ignored.
    Duplicate,
    /// The datagram is whole.
    Complete(Done<T>),
}

/// Datagrams being reassembled, keyed by `Key`.
pub struct Reassembler<T> {
    pending: HashMap<Key, Partial<T>>,
    /// Keys by the arrival of their first fragment, for timeouts; a key
    /// completed since (or started again) is skipped.
    order: VecDeque<(u64, Key)>,
    /// Datagrams given up (timed out, pushed out, or superseded).
    given_up: Vec<Done<T>>,
}

impl<T: Copy> Default for Reassembler<T> {
    fn default() -> Self {
        Reassembler { pending: HashMap::new(), order: VecDeque::new(), given_up: Vec::new() }
    }
}

impl<T: Copy> Reassembler<T> {
    /// Adds fragment `p` of datagram `key`, received at `rx_ns`; `first`
    /// is what the fragment at offset 0 says (ignored for the others).
    pub fn add(&mut self, key: Key, p: Piece, first: Option<T>, rx_ns: u64) -> Added<T> {
        let end = p.offset + p.len;
        if let Some(old) = self.pending.get(&key) {
            // A second last fragment with another length, or a fragment
            // past the end: a new datagram with a reused Identification.
            let reused = old.total.is_some_and(|t| end > t || (!p.more && end != t));
            if reused {
                self.give_up(key);
            }
        }
        if !self.pending.contains_key(&key) {
            if self.pending.len() >= MAX_PENDING {
                self.expire(u64::MAX, 1);
            }
            self.pending.insert(key, Partial { first: None, held: Vec::new(), got: 0, total: None, started_ns: rx_ns });
            self.order.push_back((rx_ns, key));
        }
        let d = self.pending.get_mut(&key).expect("inserted above");
        if d.held.iter().any(|&(a, b)| p.offset < b && a < end) || (p.len == 0 && p.more) {
            return Added::Duplicate;
        }
        d.held.push((p.offset, end));
        d.got += p.len;
        if p.offset == 0 {
            d.first = first;
        }
        if !p.more {
            d.total = Some(end);
        }
        if d.total == Some(d.got) {
            let d = self.pending.remove(&key).expect("present");
            return Added::Complete(Done { first: d.first, fragments: d.held.len() as u32 });
        }
        Added::Pending
    }

    /// Gives up datagrams whose first fragment arrived `TIMEOUT_NS` or
    /// more before `now_ns` (at most `limit` of them; `u64::MAX` and any
    /// limit give up the oldest).
    pub fn expire(&mut self, now_ns: u64, limit: usize) {
        let mut n = 0;
        while let Some(&(at, key)) = self.order.front() {
            if n >= limit || now_ns.saturating_sub(at) < TIMEOUT_NS {
                break;
            }
            self.order.pop_front();
            if self.pending.get(&key).is_some_and(|d| d.started_ns == at) {
                self.give_up(key);
                n += 1;
            }
        }
    }

    /// Gives up every datagram still incomplete (the end of a trial).
    pub fn expire_all(&mut self) {
        let keys: Vec<Key> = self.pending.keys().copied().collect();
        for k in keys {
            self.give_up(k);
        }
        self.order.clear();
    }

    /// The datagrams given up since the last call.
    pub fn take_given_up(&mut self) -> Vec<Done<T>> {
        std::mem::take(&mut self.given_up)
    }

    fn give_up(&mut self, key: Key) {
        if let Some(d) = self.pending.remove(&key) {
            self.given_up.push(Done { first: d.first, fragments: d.held.len() as u32 });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: u32) -> Key {
        Key { src: "198.18.0.2".parse().unwrap(), dst: "198.19.0.2".parse().unwrap(), id }
    }

    fn piece(offset: usize, len: usize, more: bool) -> Piece {
        Piece { offset, len, more }
    }

    #[test]
    fn whole_in_any_order_and_duplicates_ignored() {
        let mut r = Reassembler::<u8>::default();
        assert_eq!(r.add(key(1), piece(960, 40, false), None, 0), Added::Pending);
        assert_eq!(r.add(key(1), piece(480, 480, true), None, 1), Added::Pending);
        assert_eq!(r.add(key(1), piece(480, 480, true), None, 2), Added::Duplicate);
        assert_eq!(r.add(key(1), piece(0, 480, true), Some(7), 3), Added::Complete(Done { first: Some(7), fragments: 3 }));
        assert!(r.pending.is_empty());
    }

    #[test]
    fn a_missing_fragment_times_out_as_incomplete() {
        let mut r = Reassembler::<u8>::default();
        r.add(key(1), piece(0, 480, true), Some(7), 1_000);
        r.add(key(2), piece(480, 40, false), None, 2_000);
        r.expire(1_000 + TIMEOUT_NS - 1, usize::MAX);
        assert!(r.take_given_up().is_empty());
        r.expire(1_000 + TIMEOUT_NS, usize::MAX);
        assert_eq!(r.take_given_up(), vec![Done { first: Some(7), fragments: 1 }]);
        r.expire_all();
        assert_eq!(r.take_given_up(), vec![Done { first: None, fragments: 1 }]);
    }

    #[test]
    fn a_reused_identification_starts_a_new_datagram() {
        let mut r = Reassembler::<u8>::default();
        r.add(key(1), piece(0, 480, true), Some(1), 0);
        r.add(key(1), piece(960, 40, false), None, 0); // 480..960 lost
        // The next datagram with this Identification is longer.
        assert_eq!(r.add(key(1), piece(1440, 40, false), None, 5), Added::Pending);
        assert_eq!(r.take_given_up(), vec![Done { first: Some(1), fragments: 2 }]);
    }

    #[test]
    fn pending_datagrams_are_bounded() {
        let mut r = Reassembler::<u8>::default();
        for id in 0..=MAX_PENDING as u32 {
            r.add(key(id), piece(0, 8, true), None, 0);
        }
        assert_eq!(r.pending.len(), MAX_PENDING);
        assert_eq!(r.take_given_up().len(), 1);
    }
}
