//! Minimal pcap writer (nanosecond-resolution classic format, LINKTYPE_ETHERNET),
//! for `v6bench-engine frames` and for tests against independent decoders.

use std::io::{self, Write};

const MAGIC_NS: u32 = 0xa1b2_3c4d;
const LINKTYPE_ETHERNET: u32 = 1;

/// Writes the global header.
pub fn write_header<W: Write>(w: &mut W, snaplen: u32) -> io::Result<()> {
    w.write_all(&MAGIC_NS.to_le_bytes())?;
    w.write_all(&2u16.to_le_bytes())?;
    w.write_all(&4u16.to_le_bytes())?;
    w.write_all(&0i32.to_le_bytes())?;
    w.write_all(&0u32.to_le_bytes())?;
    w.write_all(&snaplen.to_le_bytes())?;
    w.write_all(&LINKTYPE_ETHERNET.to_le_bytes())
}

/// Writes one record stamped `ts_ns` nanoseconds after the epoch.
pub fn write_record<W: Write>(w: &mut W, ts_ns: u64, frame: &[u8]) -> io::Result<()> {
    w.write_all(&((ts_ns / 1_000_000_000) as u32).to_le_bytes())?;
    w.write_all(&((ts_ns % 1_000_000_000) as u32).to_le_bytes())?;
    w.write_all(&(frame.len() as u32).to_le_bytes())?;
    w.write_all(&(frame.len() as u32).to_le_bytes())?;
    w.write_all(frame)
}
