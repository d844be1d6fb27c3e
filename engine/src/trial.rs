//! One trial: open the ports, learn, send, drain, count (RFC 2544 §23).

use crate::assemble::{self, Opened, Timing};
use crate::clock;
use crate::frame::Template;
use crate::learn;
use crate::mix::{Lane, LaneOf};
use crate::live::{self, LiveJob};
use crate::netns;
use crate::result::TrialResult;
use crate::ring::Ring;
use crate::rx::{Receiver, RxQueue, RxState, Shared, StreamKey};
use crate::rxport::{LabNets, PortRxCounters, RxPort};
use crate::sock::{self, IfCounters, IfInfo};
use crate::spec::{Backend, Plan};
use crate::stats::StreamCounters;
use crate::tx::{self, TxJob, TxReport};
use crate::txstamp;
use crate::xsk::{self, XskMode, XskTx};
use crate::wire::ethernet::{self, Mac};
use crate::wire::FCS_LEN;
use std::os::unix::io::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Lead time between starting the senders and the first frame [ns]: more
/// than the in-kernel sender's start takes (`live.rs`: an RCU grace period,
/// 12–24 ms measured on the 2-vCPU lab machine).
const START_LEAD_NS: u64 = 60_000_000;

/// An opened port.
struct OpenPort {
    info: IfInfo,
    mac: Mac,
    /// The packet socket: test frames on af_packet; ARP, ND and echo replies on both backends.
    tx: OwnedFd,
    rx: Option<RxQueue>,
    /// The AF_XDP transmit halves (af_xdp), one a sender, taken by the senders.
    xsk_tx: Vec<XskTx>,
    /// The backend in use (never `Auto`), and why `auto` did not take its first choice.
    backend: Backend,
    backend_note: Option<String>,
    xsk_mode: Option<XskMode>,
    counters_before: Option<IfCounters>,
    /// Sender threads (lanes) of a sending port: its `tx_queues`, or 1
    /// where `auto` did not take af_xdp; 0 on a port that does not send.
    senders: u64,
}

/// The largest MTU at which a veth takes a single-buffer XDP program:
/// a page less the XDP headroom, the Ethernet header and the skb's shared
/// info (drivers/net/veth.c, `veth_xdp_set`; x86-64, 4-KiB pages).
const VETH_XDP_MAX_MTU: usize = 4096 - 256 - 14 - 320;

/// The backend `auto` takes on an interface: AF_XDP on veth, where it is
/// the faster (`docs/performance.md`), when single-buffer XDP and the
/// socket's buffers carry the interface's MTU and its frames and no transmit-stamp check is asked for
/// (AF_XDP has no kernel transmit stamps); AF_PACKET otherwise. A backend
/// asked for by name is taken as it is.
fn choose_backend(asked: Backend, info: &IfInfo, max_frame_size: usize, stamp_check: bool) -> Backend {
    match asked {
        Backend::Auto if info.driver.as_deref() == Some("veth")
            && info.mtu <= VETH_XDP_MAX_MTU.min(xsk::MAX_FRAME - ethernet::HEADER_LEN)
            && max_frame_size <= xsk::MAX_FRAME + FCS_LEN
            && !stamp_check =>
        {
            Backend::AfXdp
        }
        Backend::Auto => Backend::AfPacket,
        b => b,
    }
}

fn open_port(plan: &Plan, i: usize) -> Result<OpenPort, String> {
    let p = &plan.ports[i];
    let what = format!("port {:?} ({}{})", p.name, p.interface, p.netns.as_deref().map(|n| format!(" in netns {n}")).unwrap_or_default());
    if netns::is_root(p.netns.as_deref()) && !plan.allow_root_netns {
        return Err(format!("{what}: is in the root network namespace; the engine sends only inside lab namespaces (set allow_root_netns to override)"));
    }
    netns::within(p.netns.as_deref(), || {
        let probe = sock::ioctl_socket()?;
        let info = sock::if_info(probe.as_raw_fd(), &p.interface).map_err(|e| format!("{what}: {e}"))?;
        if !info.up {
            return Err(format!("{what}: interface is down or has no carrier"));
        }
        let needed_mtu = p.max_frame_size.saturating_sub(FCS_LEN + ethernet::HEADER_LEN);
        if needed_mtu > info.mtu {
            return Err(format!("{what}: {}-byte frames need an MTU of {needed_mtu} bytes, the interface has {}", p.max_frame_size, info.mtu));
        }
        let tx = sock::tx_socket(info.index).map_err(|e| format!("{what}: {e}"))?;
        if plan.tx_stamp_check {
            txstamp::enable(tx.as_raw_fd()).map_err(|e| format!("{what}: {e}"))?;
        }
        let mac = p.mac.resolve(info.mac);
        let mut backend = choose_backend(p.backend, &info, p.max_frame_size, plan.tx_stamp_check);
        let mut backend_note = None;
        if backend == Backend::XdpLive && info.driver.as_deref() != Some("veth") {
            // Its refused frames are counted from veth's own statistics (`live.rs`).
            return Err(format!("{what}: xdp_live runs on veth ports only, this one's driver is {}", info.driver.as_deref().unwrap_or("unknown")));
        }
        let lanes = p.tx.as_ref().map_or(0, |t| t.queues()) as u32;
        if lanes > 1 && backend == Backend::AfXdp {
            if info.tx_queues < lanes || info.rx_queues < lanes {
                return Err(format!(
                    "{what}: tx_queues {lanes} needs {lanes} transmit and receive queues, the interface has {} and {} (veth: numtxqueues and numrxqueues when it is created)",
                    info.tx_queues, info.rx_queues
                ));
            }
        }
        let xsk = match backend {
            Backend::AfXdp | Backend::XdpLive => match xsk::open(info.index, info.rx_queues, if backend == Backend::AfXdp { lanes } else { 0 }, mac.0) {
                Ok(x) => Some(x),
                Err(e) if p.backend == Backend::Auto => {
                    backend = Backend::AfPacket;
                    backend_note = Some(format!("auto: af_xdp could not be opened, af_packet used: {e}"));
                    None
                }
                Err(e) => return Err(format!("{what}: af_xdp: {e}")),
            },
            _ => None,
        };
        let (rx, xsk_tx, xsk_mode, member_fd) = match xsk {
            Some((rx, xtx, mode)) => (RxQueue::Xdp(rx), xtx, Some(mode), tx.as_raw_fd()),
            None => {
                let ring = Ring::open(info.index).map_err(|e| format!("{what}: {e}"))?;
                let fd = ring.fd();
                (RxQueue::Packet(ring), Vec::new(), None, fd)
            }
        };
        // Several senders need af_xdp; where auto took af_packet the port has one (validation refused the rest).
        let senders = if backend == Backend::AfXdp { lanes } else { lanes.min(1) };
        if senders < lanes {
            let why = format!("auto took af_packet: one sender for tx_queues {lanes}");
            backend_note = Some(backend_note.map_or(why.clone(), |n| format!("{n}; {why}")));
        }
        let counters_before = IfCounters::read(&p.interface);
        if mac != info.mac {
            // The interface must pass frames for the engine's MAC up; the
            // membership ends when the socket closes.
            sock::promiscuous(member_fd, info.index).map_err(|e| format!("{what}: {e}"))?;
        }
        Ok(OpenPort { mac, info, tx, rx: Some(rx), xsk_tx, backend, backend_note, xsk_mode, counters_before, senders: u64::from(senders) })
    })
}

/// A port's sender: paced from user space (`tx.rs`) or in the kernel (`live.rs`).
enum Job {
    Paced(TxJob),
    Live(LiveJob),
}

/// Runs the trial. `stop` ends the traffic and the drain early (a signal);
/// the result then says "interrupted".
pub fn run(plan: &Plan, stop: &AtomicBool) -> Result<TrialResult, String> {
    // The ports open side by side, as they close (`close_all`): an XDP program's attachment and a socket's
    // set-up wait on the kernel, port by port.
    let mut open = std::thread::scope(|s| {
        let opening: Vec<_> = (0..plan.ports.len()).map(|i| s.spawn(move || open_port(plan, i))).collect();
        opening.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a port's opening thread panicked".to_string()))).collect::<Result<Vec<OpenPort>, String>>()
    })?;
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        counting_from_ns: AtomicU64::new(u64::MAX),
        awaited: std::sync::OnceLock::new(),
        all_received: AtomicBool::new(false),
        learned: Mutex::new(vec![(None, None); plan.ports.len()]),
    });
    let rx_thread = start_receiver(plan, &mut open, Arc::clone(&shared))?;
    let stop_rx = |shared: &Shared| shared.stop.store(true, Ordering::Release);

    // Learning.
    let learn_start = Instant::now();
    let fds: Vec<_> = open.iter().map(|o| o.tx.as_raw_fd()).collect();
    let macs: Vec<Mac> = open.iter().map(|o| o.mac).collect();
    let hops = match learn::resolve(&plan.ports, &fds, &macs, &shared, Duration::from_secs_f64(plan.learning.timeout_s), stop) {
        Ok(h) => h,
        Err(e) => {
            stop_rx(&shared);
            let _ = rx_thread.join();
            return Err(e);
        }
    };
    std::thread::sleep(Duration::from_secs_f64(plan.learning.settle_s));
    let learning_s = learn_start.elapsed().as_secs_f64();

    let jobs = jobs(plan, &mut open, &hops);
    let intended_duration_s = plan.ports.iter().filter_map(|p| p.tx.as_ref()).map(|t| t.pace.span_s(t.frames)).fold(0.0, f64::max);
    let (started_at_unix_ns, reports) = send(plan, jobs, intended_duration_s, &shared, stop);
    let traffic_s = reports.iter().map(|(_, r)| r.send_span_ns).max().unwrap_or(0) as f64 / 1e9;

    // Drain (RFC 2544 §23), then count: at most `drain_s`, ended as soon as
    // every frame offered has arrived where the spec asks (nothing is late).
    let drain_start = Instant::now();
    let drain_end = drain_start + Duration::from_secs_f64(plan.drain_s);
    if plan.drain_until_received {
        let _ = shared.awaited.set(awaited_per_stream(plan, &reports));
    }
    while Instant::now() < drain_end && !stop.load(Ordering::Relaxed) && !shared.all_received.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(2).min(drain_end.saturating_duration_since(Instant::now())));
    }
    let drained_s = drain_start.elapsed().as_secs_f64();
    stop_rx(&shared);
    let receiver = rx_thread.join().map_err(|_| "receive thread panicked".to_string())??;
    let mut counters_after = Vec::with_capacity(open.len());
    for p in &plan.ports {
        counters_after.push(netns::within(p.netns.as_deref(), || Ok(IfCounters::read(&p.interface)))?);
    }
    let ports: Vec<Opened> = open
        .iter()
        .zip(counters_after)
        .map(|(o, after)| Opened {
            mac: o.mac,
            info: o.info.clone(),
            backend: o.backend,
            backend_note: o.backend_note.clone(),
            xsk_mode: o.xsk_mode,
            senders: o.senders,
            counters: match (&o.counters_before, &after) {
                (Some(b), Some(a)) => Some(a.since(b)),
                _ => None,
            },
        })
        .collect();
    let interrupted = stop.load(Ordering::Relaxed);
    let mut receiver = receiver;
    let rings = std::mem::take(&mut receiver.rings);
    let result = assemble::result(plan, &ports, &hops, &reports, receiver, Timing { started_at_unix_ns, learning_s, intended_duration_s, traffic_s, drained_s, interrupted });
    close_all(rings, open);
    Ok(result)
}

/// Closes the ports' sockets, XDP links and rings side by side: each close
/// of an AF_XDP or packet socket and each XDP link's release waits for an
/// RCU grace period (about 10 ms each), which one after another made up
/// most of a trial's 80 ms of teardown; on threads of their own the
/// waits overlap. Returns once everything is closed, so that the next
/// trial finds the interfaces free.
fn close_all(rings: Vec<RxQueue>, open: Vec<OpenPort>) {
    std::thread::scope(|s| {
        for ring in rings {
            s.spawn(move || drop(ring));
        }
        for port in open {
            s.spawn(move || drop(port));
        }
    });
}

/// The frames each stream must receive for none to be missing: those its
/// sender offered less those the far end refused (never sent).
fn awaited_per_stream(plan: &Plan, reports: &[(usize, TxReport)]) -> Vec<u64> {
    let mut awaited = vec![0u64; plan.streams.len()];
    for (pi, r) in reports {
        let t = plan.ports[*pi].tx.as_ref().expect("only sending ports have reports");
        for (k, &si) in t.streams.iter().enumerate() {
            let offered = r.stream_offered_frames.get(k).copied().unwrap_or(0);
            awaited[si] = offered.saturating_sub(r.stream_refused_frames.get(k).copied().unwrap_or(0));
        }
    }
    awaited
}

/// Starts the receive thread on every port's receive queue.
fn start_receiver(plan: &Plan, open: &mut [OpenPort], shared: Arc<Shared>) -> Result<std::thread::JoinHandle<Result<Receiver, String>>, String> {
    let lab = LabNets::of(plan);
    let ports = plan
        .ports
        .iter()
        .zip(open.iter())
        .map(|(p, o)| RxPort {
            tx_fd: o.tx.as_raw_fd(),
            mac: o.mac,
            ipv4: p.ipv4.map(|a| a.addr),
            ipv6: p.ipv6.map(|a| a.addr),
            gateway_ipv4: p.gateway_ipv4,
            gateway_ipv6: p.gateway_ipv6,
            lab: lab.clone(),
            counters: PortRxCounters::default(),
            ring_stats: Default::default(),
        })
        .collect();
    let keys = plan.streams.iter().map(|s| StreamKey { rx_port: s.rx_port, ip_version: s.rx_ip_version, echo: s.protocol == crate::spec::Protocol::IcmpEcho, check_checksum: s.translated() }).collect();
    let counters = plan
        .streams
        .iter()
        .map(|s| {
            let mut c = StreamCounters::new(s.frames, lanes_of(plan, open, s));
            c.tuples = s.learn_tuples.then(|| crate::tuples::TupleLog::new(s.frames, s.rx_ip_version));
            c
        })
        .collect();
    let receiver = Receiver {
        rings: open.iter_mut().map(|o| o.rx.take().expect("receive queue opened once")).collect(),
        state: RxState::new(ports, keys, counters),
        fifo_priority: None,
    };
    let (rx_cpu, rx_priority) = (plan.rx_cpu, plan.rx_priority);
    std::thread::Builder::new().name("rx".into()).spawn(move || receiver.run(shared, rx_cpu, rx_priority)).map_err(|e| format!("cannot start receive thread: {e}"))
}

/// Each sending port's senders: one in the kernel (`xdp_live`), or one a
/// lane, on af_xdp each with its own transmit queue's socket.
fn jobs(plan: &Plan, open: &mut [OpenPort], hops: &learn::NextHops) -> Vec<(usize, Job)> {
    let mut jobs: Vec<(usize, Job)> = Vec::new();
    for (pi, p) in plan.ports.iter().enumerate() {
        let Some(t) = &p.tx else { continue };
        let templates: Vec<Template> = t
            .streams
            .iter()
            .map(|&si| {
                let s = &plan.streams[si];
                let hop = if s.ip_version() == 4 { hops[pi].0 } else { hops[pi].1 };
                Template::new(s, open[pi].mac, hop.expect("learning resolved every needed next hop"))
            })
            .collect();
        if open[pi].backend == Backend::XdpLive {
            let template = templates.into_iter().next().expect("validation: one stream a port");
            let job = LiveJob { interface: p.interface.clone(), netns: p.netns.clone(), template, frames: t.frames, rate_fps: t.rate_fps, cpu: t.cpus[0], nice: t.nice, slip_after_frames: plan.slip_after_frames };
            jobs.push((pi, Job::Live(job)));
            continue;
        }
        let mut xsk_tx = std::mem::take(&mut open[pi].xsk_tx).into_iter();
        // veth: the far end is the DUT's interface; tun (a tap): the far end is the
        // process reading the tap, a VM router's NIC (tx.rs).
        let refused_is_loss = matches!(open[pi].info.driver.as_deref(), Some("veth") | Some("tun"));
        let senders = open[pi].senders;
        for (j, &cpu) in t.cpus.iter().take(senders as usize).enumerate() {
            let port = match xsk_tx.next() {
                Some(x) => tx::Handover::Xdp(x),
                None => tx::Handover::Packet(open[pi].tx.as_raw_fd()),
            };
            let lane = Lane { index: j as u64, count: senders };
            let job = TxJob { port, refused_is_loss, templates: templates.clone(), schedule: t.schedule.clone(), frames: t.frames, pace: t.pace, lane, cpu, nice: t.nice, stamp_check: plan.tx_stamp_check, slip_after_frames: plan.slip_after_frames };
            jobs.push((pi, Job::Paced(job)));
        }
    }
    jobs
}

/// The traffic: every sender from one common start; returns that start
/// [Unix ns] and one report a sending port, its lanes' merged.
fn send(plan: &Plan, jobs: Vec<(usize, Job)>, intended_duration_s: f64, shared: &Shared, stop: &AtomicBool) -> (u64, Vec<(usize, TxReport)>) {
    let t0 = clock::monotonic_ns() + START_LEAD_NS;
    let started_at_unix_ns = clock::realtime_ns() + START_LEAD_NS;
    let deadline = t0 + ((intended_duration_s * 1.1 + 1.0) * 1e9) as u64;
    shared.counting_from_ns.store(clock::realtime_ns(), Ordering::Release);
    let reports = std::thread::scope(|sc| {
        let handles: Vec<_> = jobs.into_iter().map(|(pi, job)| (pi, sc.spawn(move || match job {
            Job::Paced(j) => tx::run(j, t0, deadline, stop),
            Job::Live(j) => live::run(j, t0, deadline, stop),
        }))).collect();
        // One report a port, its lanes' merged (they were spawned in lane order).
        let mut lanes: Vec<Vec<TxReport>> = vec![Vec::new(); plan.ports.len()];
        for (pi, h) in handles {
            lanes[pi].push(h.join().unwrap_or_else(|_| TxReport { error: Some("sender thread panicked".into()), ..Default::default() }));
        }
        lanes.into_iter().enumerate().filter(|(_, l)| !l.is_empty()).map(|(pi, l)| (pi, tx::merge(l))).collect()
    });
    (started_at_unix_ns, reports)
}

/// Which lane of its port sends each frame of stream `s` (for the
/// receiver's order check, which holds within a lane).
fn lanes_of(plan: &Plan, open: &[OpenPort], s: &crate::spec::StreamPlan) -> LaneOf {
    let t = plan.ports[s.tx_port].tx.as_ref().expect("a stream's tx port sends");
    let k = t.streams.iter().position(|&x| x == usize::from(s.index)).expect("stream is in its port's schedule");
    LaneOf::new(&t.schedule, k, open[s.tx_port].senders)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iface(driver: &str, mtu: usize) -> IfInfo {
        IfInfo { index: 1, mac: Mac([2, 0, 0, 0, 0, 1]), mtu, up: true, driver: Some(driver.into()), rx_queues: 1, tx_queues: 1 }
    }

    #[test]
    fn auto_takes_af_xdp_on_veth_only_where_it_serves() {
        let veth = iface("veth", 1500);
        assert_eq!(choose_backend(Backend::Auto, &veth, 1518, false), Backend::AfXdp);
        assert_eq!(choose_backend(Backend::Auto, &veth, 1518, true), Backend::AfPacket, "no kernel transmit stamps on AF_XDP");
        assert_eq!(choose_backend(Backend::Auto, &iface("veth", 9198), 9216, false), Backend::AfPacket, "beyond single-buffer XDP");
        let largest = xsk::MAX_FRAME - ethernet::HEADER_LEN;
        assert_eq!(choose_backend(Backend::Auto, &iface("veth", largest), 1518, false), Backend::AfXdp);
        assert_eq!(choose_backend(Backend::Auto, &iface("veth", largest + 1), 1518, false), Backend::AfPacket, "frames beyond a buffer");
        assert_eq!(choose_backend(Backend::Auto, &iface("e1000e", 1500), 1518, false), Backend::AfPacket, "not measured on NICs");
        assert_eq!(choose_backend(Backend::AfXdp, &iface("e1000e", 1500), 1518, false), Backend::AfXdp, "asked for by name");
        assert_eq!(choose_backend(Backend::AfPacket, &veth, 64, false), Backend::AfPacket);
    }
}
