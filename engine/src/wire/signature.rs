//! The v6bench test-frame signature, placed right after the UDP header
//! (RFC 8219 §7.2, RFC 2889 §4 style). 18 bytes, so that a 64-byte IPv4
//! frame holds it (14 + 20 + 8 + 18 + 4 FCS = 64) and the minimum IPv6
//! frame is 84 bytes (14 + 40 + 8 + 18 + 4).
//!
//! Layout, all big-endian:
//!
//! | bytes  | field                                               |
//! |--------|-----------------------------------------------------|
//! | 0..2   | magic 0x7636 ("v6")                                 |
//! | 2..4   | stream index in the trial spec                      |
//! | 4..10  | sequence number within the stream (48 bits)         |
//! | 10..18 | transmit timestamp, ns since the Unix epoch (CLOCK_REALTIME) |

pub const LEN: usize = 18;
pub const MAGIC: u16 = 0x7636;
pub const STREAM: std::ops::Range<usize> = 2..4;
pub const SEQ: std::ops::Range<usize> = 4..10;
pub const TX_NS: std::ops::Range<usize> = 10..18;
/// Largest sequence number that fits the 48-bit field.
pub const MAX_SEQ: u64 = (1 << 48) - 1;

/// Signature fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    pub stream: u16,
    pub seq: u64,
    pub tx_ns: u64,
}

/// Writes a signature into `buf[..18]`.
pub fn emit(buf: &mut [u8], sig: Signature) {
    buf[0..2].copy_from_slice(&MAGIC.to_be_bytes());
    buf[STREAM].copy_from_slice(&sig.stream.to_be_bytes());
    buf[SEQ].copy_from_slice(&sig.seq.to_be_bytes()[2..8]);
    buf[TX_NS].copy_from_slice(&sig.tx_ns.to_be_bytes());
}

/// Reads a signature; `None` if short or the magic does not match.
pub fn parse(buf: &[u8]) -> Option<Signature> {
    let b = buf.get(..LEN)?;
    if u16::from_be_bytes([b[0], b[1]]) != MAGIC {
        return None;
    }
    let mut seq = [0u8; 8];
    seq[2..8].copy_from_slice(&b[SEQ]);
    Some(Signature {
        stream: u16::from_be_bytes([b[2], b[3]]),
        seq: u64::from_be_bytes(seq),
        tx_ns: u64::from_be_bytes(b[TX_NS].try_into().ok()?),
    })
}

/// Fills `buf` with the alternating 0x55/0xAA padding pattern, starting
/// with 0x55 at the first padding byte.
pub fn pad(buf: &mut [u8]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = if i % 2 == 0 { 0x55 } else { 0xaa };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let s = Signature { stream: 513, seq: MAX_SEQ, tx_ns: 1_700_000_000_123_456_789 };
        let mut b = [0xa5u8; LEN];
        emit(&mut b, s);
        assert_eq!(parse(&b), Some(s));
        assert!(parse(&b[..LEN - 1]).is_none());
        b[0] = 0;
        assert!(parse(&b).is_none());
    }
}
