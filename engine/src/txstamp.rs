//! The check of the transmit timestamps against the kernel's own.
//!
//! A frame carries the CLOCK_REALTIME read as it was built, right before
//! its send call (`tx.rs`). With `tx_stamp_check` in the spec the sending
//! socket also asks the kernel for software transmit timestamps
//! (SO_TIMESTAMPING with SOF_TIMESTAMPING_TX_SOFTWARE, Documentation/
//! networking/timestamping.rst): the driver stamps each frame as it takes
//! it (`skb_tx_timestamp`, called by veth and by NIC drivers in their
//! transmit routine), on the same clock, and the kernel returns a copy of
//! the frame with the stamp on the socket's error queue. The copy holds
//! the frame's signature, so each kernel stamp is matched to the stamp the
//! frame carries without any bookkeeping, and their difference
//! (`kernel − carried`, the *lag*) is how much earlier than the driver's
//! hand-over the carried stamp was taken: the error that stamp adds to a
//! delay.
//!
//! The sender reads the error queue only while it has time to spare before
//! its next frame (`READ_BUDGET_NS` per read) and once after its last
//! frame, so the check does not delay a frame; frames whose stamps did not
//! fit the queue in between (a sender with no time to spare) are not in
//! the check (`stamps` counts those that were). A fragmented frame's pieces carry no whole signature and are
//! left out. The check is for calibration (the self-test's latency trials
//! run it), not for every trial: a copy of every frame comes back.

use crate::frame::Template;
use serde::Serialize;
use std::os::unix::io::RawFd;

/// Time the sender allows per error-queue read when it has time to spare
/// before its next frame [ns] (a read takes about 1–2 µs).
const READ_BUDGET_NS: u64 = 5_000;
/// Lags kept per port at most; later stamps are read and dropped.
const MAX_LAGS: usize = 1 << 20;
/// Receive buffer asked for the error queue [bytes]: room for the copies
/// of a few thousand frames between two reads.
const ERRQUEUE_BYTES: i32 = 8 << 20;

/// What the check found on one port.
#[derive(Debug, Clone, Serialize)]
pub struct StampCheck {
    /// Frames whose kernel stamp was matched to their carried stamp.
    pub stamps: u64,
    /// Kernel transmit stamp minus the frame's carried stamp [ns].
    pub lag_min_ns: i64,
    pub lag_p50_ns: i64,
    pub lag_p99_ns: i64,
    pub lag_max_ns: i64,
    pub lag_mean_ns: f64,
}

/// Asks the kernel for software transmit stamps on `fd`.
pub fn enable(fd: RawFd) -> Result<(), String> {
    let flags = (libc::SOF_TIMESTAMPING_TX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE) as libc::c_int;
    crate::sock::set_opt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPING, &flags, "SO_TIMESTAMPING")?;
    // A larger error queue; the default holds a few hundred copies.
    crate::sock::set_buffer(fd, libc::SO_RCVBUFFORCE, libc::SO_RCVBUF, ERRQUEUE_BYTES, "SO_RCVBUF")
}

/// The lags read so far on one port.
pub struct Reader {
    /// Frames handed to the kernel whose stamps have not been read: a
    /// sender with time to spare reads only these, and no empty queue.
    pending: u64,
    lags_ns: Vec<i64>,
    frame: Vec<u8>,
    control: Vec<u8>,
}

impl Reader {
    /// A reader for frames up to `max_frame_len` bytes.
    pub fn new(max_frame_len: usize) -> Reader {
        Reader { pending: 0, lags_ns: Vec::new(), frame: vec![0; max_frame_len.max(64)], control: vec![0; 512] }
    }

    /// Notes `frames` more handed to the kernel (their stamps will follow).
    pub fn sent(&mut self, frames: u64) {
        self.pending += frames;
    }

    /// How many stamps to read with `spare_ns` before the next frame is
    /// due: what fits at `READ_BUDGET_NS` a read, and no more than the
    /// frames sent since the last read (no read of an empty queue).
    pub fn fits(&self, spare_ns: u64) -> usize {
        (spare_ns / READ_BUDGET_NS).min(self.pending) as usize
    }

    /// Reads up to `most` stamps waiting on `fd`'s error queue, without blocking.
    pub fn drain(&mut self, fd: RawFd, templates: &[Template], most: usize) {
        for _ in 0..most {
            let mut iov = libc::iovec { iov_base: self.frame.as_mut_ptr() as *mut libc::c_void, iov_len: self.frame.len() };
            // SAFETY: msghdr is plain data; all-zero is a valid initial value.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = self.control.as_mut_ptr() as *mut libc::c_void;
            msg.msg_controllen = self.control.len();
            // SAFETY: msg points at buffers that live until the call returns.
            let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
            if n < 0 {
                return; // EAGAIN: the queue is empty
            }
            self.pending = self.pending.saturating_sub(1);
            let Some(kernel_ns) = software_stamp(&msg) else { continue };
            let frame = &self.frame[..(n as usize).min(self.frame.len())];
            let carried = templates.iter().find_map(|t| t.signature_in(frame));
            if let Some(sig) = carried {
                if self.lags_ns.len() < MAX_LAGS {
                    self.lags_ns.push(kernel_ns as i64 - sig.tx_ns as i64);
                }
            }
        }
    }

    /// The lags' summary; none when no stamp was matched.
    pub fn finish(mut self) -> Option<StampCheck> {
        if self.lags_ns.is_empty() {
            return None;
        }
        self.lags_ns.sort_unstable();
        let l = &self.lags_ns;
        Some(StampCheck {
            stamps: l.len() as u64,
            lag_min_ns: l[0],
            lag_p50_ns: nearest_rank(l, 0.50),
            lag_p99_ns: nearest_rank(l, 0.99),
            lag_max_ns: l[l.len() - 1],
            lag_mean_ns: l.iter().map(|&x| x as f64).sum::<f64>() / l.len() as f64,
        })
    }
}

/// The `q`-quantile of sorted, non-empty values by nearest rank.
fn nearest_rank(sorted: &[i64], q: f64) -> i64 {
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// The software stamp of an error-queue message (SCM_TIMESTAMPING's first
/// timespec), in ns since the epoch.
fn software_stamp(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: the CMSG macros walk the control buffer recvmsg filled, within msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPING {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                if ts.tv_sec != 0 || ts.tv_nsec != 0 {
                    return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let v: Vec<i64> = (1..=100).collect();
        assert_eq!(nearest_rank(&v, 0.50), 50);
        assert_eq!(nearest_rank(&v, 0.99), 99);
        assert_eq!(nearest_rank(&[7], 0.99), 7);
    }
}
