//! How a test frame is cut at the source (`fragment_mtu`): the data range
//! of each fragment (RFC 791 §2.3 and RFC 8200 §4.5: every fragment but
//! the last carries a multiple of 8 bytes).

use crate::wire::{ipv4, ipv6};
use std::ops::Range;

/// Most wire frames one datagram is cut into.
pub const MAX_FRAGMENTS: usize = 256;

/// How a datagram of `ip_version` whose fragmentable part (after the IP
/// header) is `data_len` bytes is cut for a link of `mtu` bytes: the data
/// range of each fragment. One range (the whole) if it fits.
#[allow(clippy::single_range_in_vec_init)] // one range: the whole datagram
pub fn fragment_ranges(ip_version: u8, data_len: usize, mtu: usize) -> Vec<Range<usize>> {
    let (header, frag_header) = if ip_version == 4 { (ipv4::HEADER_LEN, 0) } else { (ipv6::HEADER_LEN, ipv6::FRAGMENT_HEADER_LEN) };
    if header + data_len <= mtu {
        return vec![0..data_len];
    }
    let step = (mtu.saturating_sub(header + frag_header) / 8 * 8).max(8);
    (0..data_len).step_by(step).map(|o| o..(o + step).min(data_len)).collect()
}
