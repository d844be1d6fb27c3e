//! Clocks, sleeping and CPU placement.
//!
//! Pacing runs on CLOCK_MONOTONIC. Transmit timestamps in the signature use
//! CLOCK_REALTIME because that is the clock of the kernel's receive
//! timestamps on packet sockets, so latency = receive − transmit compares
//! like with like on one host.

fn now(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; clock ids used here always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC in ns.
#[inline]
pub fn monotonic_ns() -> u64 {
    now(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME in ns since the Unix epoch.
#[inline]
pub fn realtime_ns() -> u64 {
    now(libc::CLOCK_REALTIME)
}

/// CLOCK_REALTIME − CLOCK_MONOTONIC [ns], to move a monotonic stamp (an XDP
/// program's) onto the transmit stamps' clock. The realtime read is
/// bracketed by two monotonic reads and taken against their midpoint, so
/// its error is at most half the bracket; of up to `OFFSET_TRIES` tries the
/// tightest counts, and a bracket under `OFFSET_GOOD_NS` ends the search.
/// Two plain reads in a row would be off by however long the thread was
/// preempted between them, and every frame stamped with that offset would
/// look that much earlier (seen: 11 frames "received before sent").
pub fn realtime_minus_monotonic_ns() -> i64 {
    let mut best = (u64::MAX, 0i64);
    for _ in 0..OFFSET_TRIES {
        let m1 = monotonic_ns();
        let r = realtime_ns();
        let m2 = monotonic_ns();
        let bracket = m2.saturating_sub(m1);
        if bracket < best.0 {
            best = (bracket, r as i64 - (m1 + bracket / 2) as i64);
        }
        if bracket < OFFSET_GOOD_NS {
            break;
        }
    }
    best.1
}

const OFFSET_TRIES: usize = 8;
const OFFSET_GOOD_NS: u64 = 2_000;

/// Sleeps until CLOCK_MONOTONIC reads `deadline_ns` (returns early on a signal).
pub fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec { tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t, tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long };
    // SAFETY: `ts` is a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
}

/// Pins the calling thread to `cpu`.
pub fn pin_to_cpu(cpu: usize) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data; CPU_SET checks nothing, so bound `cpu` first.
    unsafe {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(format!("cpu {cpu} is out of range"));
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(format!("cannot pin to cpu {cpu}: {}", std::io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// Sets the calling thread's nice value.
pub fn set_nice(nice: i32) -> Result<(), String> {
    // SAFETY: gettid and setpriority on this thread only.
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, nice) };
    if r != 0 {
        return Err(format!("cannot set nice {nice}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Puts the calling thread in SCHED_FIFO at `priority` (1..=99).
pub fn set_fifo(priority: u8) -> Result<(), String> {
    let param = libc::sched_param { sched_priority: i32::from(priority) };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
        return Err(format!("cannot run the receive thread at SCHED_FIFO {priority}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Asks for 1 ns timer slack so sleeps end when asked (default is 50 µs).
pub fn tight_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and affects only this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn realtime_offset_moves_a_monotonic_stamp_onto_realtime() {
        let offset = realtime_minus_monotonic_ns();
        let (m, r) = (monotonic_ns() as i64, realtime_ns() as i64);
        // The realtime read comes after the monotonic one: the moved stamp is at most that gap earlier.
        let moved = m + offset;
        assert!(moved <= r + 2_000, "moved {moved} vs realtime {r}");
        assert!(r - moved < 1_000_000, "offset off by {} ns", r - moved);
    }
}
