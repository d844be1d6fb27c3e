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

/// Asks for 1 ns timer slack so sleeps end when asked (default is 50 µs).
pub fn tight_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and affects only this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}
