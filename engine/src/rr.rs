//! UDP request/response through the hosts' own stacks (`v6bench-engine rr`):
//! seed 004 §2.1's ping-pong benchmark.
//!
//! A client socket in one namespace sends a datagram to a server socket in
//! another and waits for it to come back; the server echoes every datagram
//! it receives. One request is outstanding at a time. The round-trip time
//! of each exchange is taken with CLOCK_MONOTONIC just before `send` and
//! just after `recv` returns, so it includes both hosts' stacks (system
//! calls, wake-ups) as well as the path; a baseline over a direct link,
//! measured the same way, takes those out (the caller's job).
//!
//! Unlike `run`, these are kernel sockets with kernel addresses, not the
//! engine's AF_PACKET ports. The same safety rules hold: both namespaces
//! must be named ones other than the root namespace, both addresses must lie
//! in the benchmarking blocks, and the exchange loop stops by itself at
//! `duration_s` (or `max_exchanges`), whatever the network does.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::spec::is_benchmarking;
use crate::stats::{Distribution, Summary};
use crate::{clock, netns};

pub const RR_VERSION: u32 = 2;
/// IP payload limits [bytes]: the UDP header alone, up to a jumbo frame's IP MTU.
pub const MIN_PAYLOAD: usize = 8;
pub const MAX_PAYLOAD: usize = 9000;
const UDP_HEADER: usize = 8;
/// Bytes of the data that carry the exchange number, when there is room.
const SEQ_BYTES: usize = 8;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct End {
    pub netns: String,
    pub address: IpAddr,
    #[serde(default)]
    pub cpu: Option<usize>,
}

fn default_port() -> u16 {
    7
}
fn default_timeout_ms() -> u64 {
    100
}
fn default_warmup() -> u64 {
    100
}
fn default_max() -> u64 {
    10_000_000
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RrSpec {
    pub rr_version: u32,
    /// The lab's namespaces: both ends' must start with this.
    pub netns_prefix: String,
    pub client: End,
    pub server: End,
    #[serde(default = "default_port")]
    pub server_port: u16,
    /// IP payload: UDP header plus data (seed 004 Table 1's "payload").
    pub payload_bytes: usize,
    pub duration_s: f64,
    #[serde(default = "default_max")]
    pub max_exchanges: u64,
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Exchanges before counting starts (neighbour resolution, caches).
    #[serde(default = "default_warmup")]
    pub warmup_exchanges: u64,
}

impl RrSpec {
    pub fn from_json(text: &str) -> Result<RrSpec, String> {
        serde_json::from_str(text).map_err(|e| format!("rr spec: {e}"))
    }

    pub fn validate(self) -> Result<RrSpec, String> {
        if self.rr_version != RR_VERSION {
            return Err(format!("rr_version: {} is not supported (this engine reads {RR_VERSION})", self.rr_version));
        }
        if self.client.address.is_ipv4() != self.server.address.is_ipv4() {
            return Err("client.address and server.address: one IP version for both".into());
        }
        for (f, a) in [("client.address", &self.client.address), ("server.address", &self.server.address)] {
            if !is_benchmarking(a) {
                return Err(format!("{f}: {a} is outside the benchmarking blocks 198.18.0.0/15 and 2001:2::/48"));
            }
        }
        for (f, e) in [("client.netns", &self.client), ("server.netns", &self.server)] {
            if e.netns.is_empty() || e.netns.contains('/') {
                return Err(format!("{f}: {:?} is not a namespace name", e.netns));
            }
            netns::check_in_lab(f, &e.netns, Some(&self.netns_prefix))?;
            if netns::is_root(Some(&e.netns)) {
                return Err(format!("{f}: {:?} is the root network namespace; rr runs only between lab namespaces", e.netns));
            }
        }
        if !(MIN_PAYLOAD..=MAX_PAYLOAD).contains(&self.payload_bytes) {
            return Err(format!("payload_bytes: {} is outside {MIN_PAYLOAD}..={MAX_PAYLOAD} (IP payload: UDP header and data)", self.payload_bytes));
        }
        if !(self.duration_s > 0.0 && self.duration_s <= 3600.0) {
            return Err(format!("duration_s: {} is outside (0, 3600]", self.duration_s));
        }
        if !(1..=10_000).contains(&self.timeout_ms) {
            return Err(format!("timeout_ms: {} is outside 1..=10000", self.timeout_ms));
        }
        if self.max_exchanges == 0 {
            return Err("max_exchanges: must be at least 1".into());
        }
        if self.server_port == 0 {
            return Err("server_port: must be 1..=65535".into());
        }
        Ok(self)
    }

    fn data_bytes(&self) -> usize {
        self.payload_bytes - UDP_HEADER
    }
}

#[derive(Debug, Serialize)]
pub struct RrResult {
    pub result_kind: &'static str,
    pub rr_version: u32,
    pub engine_version: &'static str,
    pub ip_version: u8,
    pub client_address: String,
    pub server_address: String,
    pub payload_bytes: usize,
    pub udp_data_bytes: usize,
    pub duration_s: f64,
    /// Counted exchanges (after the warm-up) that came back in time.
    pub exchanges: u64,
    /// Requests whose response did not come back within `timeout_ms`.
    pub timeouts: u64,
    pub warmup_exchanges: u64,
    /// Responses that arrived after their exchange was given up (discarded).
    pub stale_responses: u64,
    /// Counted time / exchanges / 2: seed 004's one-way delay [ns].
    pub one_way_mean_ns: Option<f64>,
    pub rtt_ns: Option<Summary>,
    pub server_echoed: u64,
}

/// Echoes datagrams until `stop`; returns how many it echoed.
fn serve(sock: UdpSocket, stop: Arc<AtomicBool>) -> u64 {
    let mut buf = vec![0u8; 65536];
    let mut echoed = 0;
    while !stop.load(Ordering::Relaxed) {
        match sock.recv_from(&mut buf) {
            Ok((n, from)) => {
                if sock.send_to(&buf[..n], from).is_ok() {
                    echoed += 1;
                }
            }
            Err(_) => continue, // the read timeout: look at `stop` again
        }
    }
    echoed
}

fn bind_in(ns: &str, addr: SocketAddr) -> Result<UdpSocket, String> {
    netns::within(Some(ns), || UdpSocket::bind(addr).map_err(|e| format!("cannot bind UDP {addr} in namespace {ns:?}: {e}")))
}

pub fn run(spec: &RrSpec, stop_signal: &AtomicBool) -> Result<RrResult, String> {
    let server_addr = SocketAddr::new(spec.server.address, spec.server_port);
    let server = bind_in(&spec.server.netns, server_addr)?;
    server.set_read_timeout(Some(Duration::from_millis(20))).map_err(|e| e.to_string())?;
    let client = bind_in(&spec.client.netns, SocketAddr::new(spec.client.address, 0))?;
    client.connect(server_addr).map_err(|e| format!("cannot connect to {server_addr}: {e}"))?;
    let timeout = Duration::from_millis(spec.timeout_ms);
    client.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;

    let stop = Arc::new(AtomicBool::new(false));
    let server_cpu = spec.server.cpu;
    let server_stop = stop.clone();
    let handle = std::thread::spawn(move || {
        if let Some(c) = server_cpu {
            let _ = clock::pin_to_cpu(c);
        }
        serve(server, server_stop)
    });
    if let Some(c) = spec.client.cpu {
        clock::pin_to_cpu(c)?;
    }
    let outcome = exchange(spec, &client, timeout, stop_signal);
    stop.store(true, Ordering::Relaxed);
    let echoed = handle.join().map_err(|_| "the rr server thread failed".to_string())?;
    let (rtt, timeouts, stale, counted_ns) = outcome?;
    let n = rtt.count();
    Ok(RrResult {
        result_kind: "v6bench-rr",
        rr_version: RR_VERSION,
        engine_version: env!("CARGO_PKG_VERSION"),
        ip_version: if spec.client.address.is_ipv4() { 4 } else { 6 },
        client_address: spec.client.address.to_string(),
        server_address: spec.server.address.to_string(),
        payload_bytes: spec.payload_bytes,
        udp_data_bytes: spec.data_bytes(),
        duration_s: spec.duration_s,
        exchanges: n,
        timeouts,
        warmup_exchanges: spec.warmup_exchanges,
        stale_responses: stale,
        one_way_mean_ns: (n > 0).then(|| counted_ns as f64 / n as f64 / 2.0),
        rtt_ns: rtt.summary(),
        server_echoed: echoed,
    })
}

/// The client's loop: bounded by `duration_s` after the warm-up, by
/// `max_exchanges`, and by a signal. Returns the round trips, timeouts,
/// stale responses, and the summed round-trip time of counted exchanges.
fn exchange(spec: &RrSpec, client: &UdpSocket, timeout: Duration, stop: &AtomicBool) -> Result<(Distribution, u64, u64, u64), String> {
    let mut req = vec![0u8; spec.data_bytes()];
    let mut resp = vec![0u8; spec.data_bytes() + 1];
    let numbered = req.len() >= SEQ_BYTES;
    let mut rtt = Distribution::default();
    let (mut timeouts, mut stale, mut total_ns) = (0u64, 0u64, 0u64);
    let warmup_deadline = Instant::now() + Duration::from_secs(3);
    let mut counting_until: Option<Instant> = None;
    let mut seq: u64 = 0;
    loop {
        let now = Instant::now();
        match counting_until {
            None if seq >= spec.warmup_exchanges || now > warmup_deadline => counting_until = Some(now + Duration::from_secs_f64(spec.duration_s)),
            Some(end) if now >= end => break,
            _ => {}
        }
        if stop.load(Ordering::Relaxed) || rtt.count() + timeouts >= spec.max_exchanges {
            break;
        }
        if numbered {
            req[..SEQ_BYTES].copy_from_slice(&seq.to_be_bytes());
        }
        let t0 = Instant::now();
        client.send(&req).map_err(|e| format!("send: {e}"))?;
        let answered = loop {
            match client.recv(&mut resp) {
                Ok(n) if numbered && (n < SEQ_BYTES || resp[..SEQ_BYTES] != req[..SEQ_BYTES]) => {
                    stale += 1; // a late answer to an exchange already given up
                    if t0.elapsed() >= timeout {
                        break false;
                    }
                }
                Ok(_) => break true,
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => break false,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                    if stop.load(Ordering::Relaxed) {
                        break false;
                    }
                }
                Err(e) => return Err(format!("recv: {e}")),
            }
        };
        let took = t0.elapsed().as_nanos() as u64;
        if counting_until.is_some() {
            if answered {
                rtt.add(took);
                total_ns += took;
            } else {
                timeouts += 1;
            }
        }
        if !answered && !numbered {
            // Without a number, a late answer would pass for the next
            // one's: wait out another timeout and discard what comes.
            while client.recv(&mut resp).is_ok() {
                stale += 1;
            }
        }
        seq += 1;
    }
    Ok((rtt, timeouts, stale, total_ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(payload: usize) -> RrSpec {
        RrSpec::from_json(&format!(
            r#"{{"rr_version":2,"netns_prefix":"v6b-","client":{{"netns":"v6b-a","address":"198.18.0.102"}},"server":{{"netns":"v6b-b","address":"198.19.0.102"}},"payload_bytes":{payload},"duration_s":1}}"#
        ))
        .unwrap()
    }

    #[test]
    fn payload_is_udp_header_plus_data() {
        assert_eq!(spec(8).data_bytes(), 0);
        assert_eq!(spec(1480).data_bytes(), 1472);
    }

    #[test]
    fn refuses_bad_specs_naming_the_field() {
        assert!(spec(7).validate().unwrap_err().starts_with("payload_bytes"));
        let mut s = spec(64);
        s.server.address = "10.0.0.1".parse().unwrap();
        assert!(s.validate().unwrap_err().starts_with("server.address"));
        let mut s = spec(64);
        s.server.address = "2001:2::1".parse().unwrap();
        assert!(s.validate().unwrap_err().contains("one IP version"));
        assert!(RrSpec::from_json(r#"{"rr_version":1,"bogus":1}"#).unwrap_err().contains("bogus"));
        let mut s = spec(64);
        s.server.netns = "elsewhere".into();
        assert!(s.validate().unwrap_err().starts_with("server.netns: \"elsewhere\" is not one of the lab's namespaces"));
    }
}
