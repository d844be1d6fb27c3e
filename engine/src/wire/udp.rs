//! UDP header (RFC 768).

pub const HEADER_LEN: usize = 8;
pub const SRC_PORT: std::ops::Range<usize> = 0..2;
pub const DST_PORT: std::ops::Range<usize> = 2..4;
pub const CHECKSUM: std::ops::Range<usize> = 6..8;

/// Writes the header with a zero checksum into `buf[..8]`; the caller fills
/// the checksum once the payload is in place.
pub fn emit(buf: &mut [u8], src_port: u16, dst_port: u16, udp_len: usize) {
    buf[SRC_PORT].copy_from_slice(&src_port.to_be_bytes());
    buf[DST_PORT].copy_from_slice(&dst_port.to_be_bytes());
    buf[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
    buf[CHECKSUM].copy_from_slice(&[0, 0]);
}

/// (source port, destination port) of a UDP header, or `None` if short.
pub fn ports(seg: &[u8]) -> Option<(u16, u16)> {
    let h = seg.get(..HEADER_LEN)?;
    Some((u16::from_be_bytes([h[0], h[1]]), u16::from_be_bytes([h[2], h[3]])))
}
