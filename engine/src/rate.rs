//! Rate arithmetic between frames/s and bit rates.
//!
//! A frame size counts from the destination MAC to the end of the FCS
//! (RFC 1242 §3.5). On the wire each frame also occupies 20 bytes of
//! preamble, start delimiter and inter-frame gap, so at layer 1
//! `fps = bps / (8 × (size + 20))` (RFC 5180 App. A.1); at layer 2 the
//! 20 bytes are not counted. A test frame fragmented at the source puts
//! several wire frames on the link, each with its 20 bytes: the functions
//! take a test frame's bytes at the layer ([`l1_bytes`]).

use crate::wire::L1_OVERHEAD;

/// Layer-1 bytes of `frames` wire frames that hold `l2_bytes` in all
/// (each with its own preamble, delimiter and gap).
pub fn l1_bytes(l2_bytes: f64, frames: f64) -> f64 {
    l2_bytes + L1_OVERHEAD as f64 * frames
}

/// Layer-1 bit rate of `fps` frames/s of `l1_bytes` each.
pub fn l1_bps(fps: f64, l1_bytes: f64) -> f64 {
    fps * 8.0 * l1_bytes
}

/// Layer-2 bit rate of `fps` frames/s of `l2_bytes` each.
pub fn l2_bps(fps: f64, l2_bytes: f64) -> f64 {
    fps * 8.0 * l2_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc5180_line_rates() {
        // Reference figures: 10 Gb/s is 14,880,952 fps at 64 B and 812,743 at 1518 B: those rates fill it.
        assert!((l1_bps(14_880_952.38, l1_bytes(64.0, 1.0)) / 10e9 - 1.0).abs() < 1e-8);
        assert!((l1_bps(812_743.82, l1_bytes(1518.0, 1.0)) / 10e9 - 1.0).abs() < 1e-8);
    }

    #[test]
    fn bit_rates_count_each_wire_frame() {
        assert_eq!(l2_bps(1000.0, 64.0), 512_000.0);
        assert_eq!(l1_bps(1000.0, l1_bytes(64.0, 1.0)), 672_000.0);
        // A test frame in four fragments: four preambles and gaps at layer 1.
        assert_eq!(l1_bytes(1632.0, 4.0), 1712.0);
    }
}
