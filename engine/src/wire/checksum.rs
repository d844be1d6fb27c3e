//! Internet checksum (RFC 1071), with an unfolded accumulator so that a
//! frame template can be summed once and each frame's changing words added
//! per frame.

/// One's-complement sum of `data` as big-endian 16-bit words, added to
/// `acc` without folding. An odd trailing byte is padded with zero
/// (RFC 1071 §4.1).
pub fn sum(mut acc: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u64::from(*last) << 8;
    }
    acc
}

/// Folds an accumulator to 16 bits (the one's-complement sum).
pub fn fold(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Folds an accumulator to 16 bits and complements it.
pub fn finish(acc: u64) -> u16 {
    !fold(acc)
}

/// The checksum of `data` alone.
pub fn checksum(data: &[u8]) -> u16 {
    finish(sum(0, data))
}

/// UDP transmits an all-zero computed checksum as 0xFFFF (RFC 768; for IPv6
/// a zero checksum is not allowed at all, RFC 8200 §8.1).
pub fn udp_finish(acc: u64) -> u16 {
    match finish(acc) {
        0 => 0xffff,
        c => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3 worked example: the sum of these words is 0xddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(finish(sum(0, &data)), !0xddf2);
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(checksum(&[0x12, 0x34, 0x56]), checksum(&[0x12, 0x34, 0x56, 0x00]));
    }

    #[test]
    fn verifying_a_checksummed_block_gives_zero() {
        let mut data = vec![0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0, 0, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7];
        let c = checksum(&data);
        data[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(c, 0xb861); // the well-known example IPv4 header
        assert_eq!(checksum(&data), 0);
    }
}
