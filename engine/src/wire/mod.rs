//! Wire formats, one protocol per module.
//!
//! Each module exposes named field offsets and small `emit`/`parse` helpers
//! that work on byte slices in place. Parsers never panic on short or
//! malformed input: they return `None` and the caller counts the frame as
//! foreign.

pub mod arp;
pub mod checksum;
pub mod echo;
pub mod ethernet;
pub mod ext;
pub mod icmpv6;
pub mod ipv4;
pub mod ipv6;
pub mod signature;
pub mod udp;

/// Bytes of Ethernet frame check sequence. A frame size (RFC 1242 §3.5)
/// includes it, but the kernel (or NIC) appends it, so the engine hands the
/// kernel `frame_size - FCS_LEN` bytes.
pub const FCS_LEN: usize = 4;

/// Per-frame overhead on the wire besides the frame itself: preamble and
/// start-of-frame delimiter (8 bytes) plus the minimum inter-frame gap
/// (12 bytes), RFC 5180 App. A.1.
pub const L1_OVERHEAD: usize = 20;
