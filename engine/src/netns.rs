//! Entering named network namespaces (those made by `ip netns add`, bound
//! at /run/netns/NAME) for the calling thread only.
//!
//! Sockets keep the namespace they were created in, so one engine process
//! opens ports in several namespaces by entering each in turn and coming
//! back to its own.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;

pub const NETNS_DIR: &str = "/run/netns";

fn setns(f: &File) -> std::io::Result<()> {
    // SAFETY: `f` is an open namespace file; setns with CLONE_NEWNET changes only this thread.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Identity (device, inode) of a namespace file.
fn ns_id(path: &str) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// True if the namespace `name` (or, for `None`, this thread's current
/// one) is, or may be, the initial network namespace (the one of PID 1).
///
/// Conservative: where PID 1's namespace cannot be read (a sandbox), the
/// engine's own namespace counts as the root one, so a port there needs
/// `allow_root_netns`.
pub fn is_root(name: Option<&str>) -> bool {
    let own = ns_id("/proc/thread-self/ns/net");
    let target = match name {
        Some(n) => ns_id(&format!("{NETNS_DIR}/{n}")),
        None => own,
    };
    match ns_id("/proc/1/ns/net") {
        Some(root) => target == Some(root),
        None => target == own,
    }
}

/// The rule of the trial and rr specs: a named namespace `ns` is one of
/// the lab's, its name starting with the lab's `prefix` (none given:
/// refused). `field` names it in the error.
pub fn check_in_lab(field: &str, ns: &str, prefix: Option<&str>) -> Result<(), String> {
    match prefix {
        None => Err(format!("{field}: {ns:?} needs the spec's netns_prefix (the lab's namespaces); the engine opens ports only in those")),
        Some(pre) if pre.is_empty() || !ns.starts_with(pre) => Err(format!("{field}: {ns:?} is not one of the lab's namespaces (names starting with {pre:?})")),
        Some(_) => Ok(()),
    }
}

/// Runs `f` inside namespace `name` (or in the current one for `None`) and
/// returns to the original namespace afterwards.
pub fn within<T>(name: Option<&str>, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    let Some(name) = name else { return f() };
    let target = File::open(format!("{NETNS_DIR}/{name}")).map_err(|e| format!("network namespace {name:?} not found ({NETNS_DIR}/{name}: {e})"))?;
    let home = File::open("/proc/thread-self/ns/net").map_err(|e| format!("cannot open own network namespace: {e}"))?;
    setns(&target).map_err(|e| format!("cannot enter network namespace {name:?}: {e}"))?;
    let out = f();
    if let Err(e) = setns(&home) {
        // Continuing in a foreign namespace could open sockets in the wrong place.
        eprintln!("fatal: cannot return from network namespace {name:?}: {e}");
        std::process::abort();
    }
    out
}
