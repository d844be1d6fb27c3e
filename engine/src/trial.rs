//! One trial: open the ports, learn, send, drain, count (RFC 2544 §23).

use crate::clock;
use crate::frame::Template;
use crate::learn;
use crate::mix::{Lane, LaneOf};
use crate::live::{self, LiveJob};
use crate::netns;
use crate::rate;
use crate::result::{self, FrameCounts, Fragments, LossWindow, PortResult, PortTx, StreamResult, Totals, TrialResult};
use crate::ring::Ring;
use crate::rx::{PortRxCounters, Receiver, RxPort, RxQueue, RxState, Shared, StreamKey};
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
        let probe = sock::packet_socket()?;
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
            Backend::AfXdp | Backend::XdpLive => match xsk::open(info.index, info.rx_queues, if backend == Backend::AfXdp { lanes } else { 0 }) {
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
    let mut open = Vec::with_capacity(plan.ports.len());
    for i in 0..plan.ports.len() {
        open.push(open_port(plan, i)?);
    }
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        counting_from_ns: AtomicU64::new(u64::MAX),
        learned: Mutex::new(vec![(None, None); plan.ports.len()]),
    });
    let receiver = Receiver {
        rings: open.iter_mut().map(|o| o.rx.take().expect("receive queue opened once")).collect(),
        state: RxState::new(
            plan
                .ports
                .iter()
                .zip(&open)
                .map(|(p, o)| RxPort {
                    tx_fd: o.tx.as_raw_fd(),
                    mac: o.mac,
                    ipv4: p.ipv4.map(|a| a.addr),
                    ipv6: p.ipv6.map(|a| a.addr),
                    gateway_ipv4: p.gateway_ipv4,
                    gateway_ipv6: p.gateway_ipv6,
                    counters: PortRxCounters::default(),
                    ring_stats: Default::default(),
                })
                .collect(),
            plan.streams.iter().map(|s| StreamKey { rx_port: s.rx_port, ip_version: s.ip_version(), echo: s.protocol == crate::spec::Protocol::IcmpEcho }).collect(),
            plan.streams.iter().map(|s| StreamCounters::new(s.frames, lanes_of(plan, &open, s))).collect(),
        ),
        fifo_priority: None,
    };
    let rx_shared = Arc::clone(&shared);
    let (rx_cpu, rx_priority) = (plan.rx_cpu, plan.rx_priority);
    let rx_thread = std::thread::Builder::new().name("rx".into()).spawn(move || receiver.run(rx_shared, rx_cpu, rx_priority)).map_err(|e| format!("cannot start receive thread: {e}"))?;
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

    // Jobs.
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
        // One sender a lane: on af_xdp each with its own transmit queue's socket.
        let mut xsk_tx = std::mem::take(&mut open[pi].xsk_tx).into_iter();
        let refused_is_loss = open[pi].info.driver.as_deref() == Some("veth");
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
    let intended_duration_s = plan.ports.iter().filter_map(|p| p.tx.as_ref()).map(|t| t.pace.span_s(t.frames)).fold(0.0, f64::max);

    // Traffic.
    let t0 = clock::monotonic_ns() + START_LEAD_NS;
    let started_at_unix_ns = clock::realtime_ns() + START_LEAD_NS;
    let deadline = t0 + ((intended_duration_s * 1.1 + 1.0) * 1e9) as u64;
    shared.counting_from_ns.store(clock::realtime_ns(), Ordering::Release);
    let reports: Vec<(usize, TxReport)> = std::thread::scope(|sc| {
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
    let traffic_s = reports.iter().map(|(_, r)| r.send_span_ns).max().unwrap_or(0) as f64 / 1e9;

    // Drain (RFC 2544 §23), then count.
    let drain_end = Instant::now() + Duration::from_secs_f64(plan.drain_s);
    while Instant::now() < drain_end && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20).min(drain_end.saturating_duration_since(Instant::now())));
    }
    stop_rx(&shared);
    let receiver = rx_thread.join().map_err(|_| "receive thread panicked".to_string())??;
    let mut counters_after = Vec::with_capacity(open.len());
    for p in &plan.ports {
        counters_after.push(netns::within(p.netns.as_deref(), || Ok(IfCounters::read(&p.interface)))?);
    }
    let interrupted = stop.load(Ordering::Relaxed);
    Ok(assemble(plan, &open, &hops, &reports, receiver, counters_after, Assembly { started_at_unix_ns, learning_s, intended_duration_s, traffic_s, interrupted }))
}

/// Which lane of its port sends each frame of stream `s` (for the
/// receiver's order check, which holds within a lane).
fn lanes_of(plan: &Plan, open: &[OpenPort], s: &crate::spec::StreamPlan) -> LaneOf {
    let t = plan.ports[s.tx_port].tx.as_ref().expect("a stream's tx port sends");
    let k = t.streams.iter().position(|&x| x == usize::from(s.index)).expect("stream is in its port's schedule");
    LaneOf::new(&t.schedule, k, open[s.tx_port].senders)
}

struct Assembly {
    started_at_unix_ns: u64,
    learning_s: f64,
    intended_duration_s: f64,
    traffic_s: f64,
    interrupted: bool,
}

fn assemble(plan: &Plan, open: &[OpenPort], hops: &learn::NextHops, reports: &[(usize, TxReport)], rx: Receiver, after: Vec<Option<IfCounters>>, a: Assembly) -> TrialResult {
    let mut reasons = Vec::new();
    if a.interrupted {
        reasons.push("the trial was interrupted".to_string());
    }
    // Frames offered per stream: handed over, or refused by the far end.
    let mut stream_tx = vec![0u64; plan.streams.len()];
    let mut stream_refused = vec![0u64; plan.streams.len()];
    let mut ports = Vec::with_capacity(plan.ports.len());
    for (pi, p) in plan.ports.iter().enumerate() {
        let rxp = &rx.state.ports[pi];
        let tx = reports.iter().find(|(i, _)| *i == pi).map(|(_, r)| {
            let t = p.tx.as_ref().expect("only sending ports have reports");
            for (k, &si) in t.streams.iter().enumerate() {
                stream_tx[si] = r.stream_offered_frames.get(k).copied().unwrap_or(0);
                stream_refused[si] = r.stream_refused_frames.get(k).copied().unwrap_or(0);
            }
            if let Some(e) = &r.error {
                reasons.push(format!("port {:?}: {e}", p.name));
            }
            if r.unsent_frames > 0 {
                reasons.push(format!("port {:?}: {} of {} frames not sent in time", p.name, r.unsent_frames, t.frames));
            }
            let intended_fps = t.pace.mean_fps(t.frames);
            if r.offered_fps < intended_fps * (1.0 - plan.tester_limited_shortfall) {
                reasons.push(format!(
                    "port {:?}: offered {:.1} frames/s, {:.3} % below the intended {:.1}",
                    p.name,
                    r.offered_fps,
                    100.0 * (1.0 - r.offered_fps / intended_fps),
                    intended_fps
                ));
            }
            if r.slipped_ns as f64 > plan.tester_limited_slip_ratio * t.pace.span_s(t.frames) * 1e9 {
                reasons.push(format!(
                    "port {:?}: paused {:.3} ms in {} stall(s), more than {} % of the trial (schedule slipped)",
                    p.name,
                    r.slipped_ns as f64 / 1e6,
                    r.slips,
                    100.0 * plan.tester_limited_slip_ratio
                ));
            }
            if r.max_backlog_frames > plan.tester_limited_backlog_frames {
                reasons.push(format!(
                    "port {:?}: fell {} frames ({:.3} ms) behind schedule and sent them back to back",
                    p.name,
                    r.max_backlog_frames,
                    r.max_lag_ns as f64 / 1e6
                ));
            }
            PortTx {
                intended_fps,
                rate_step: t.pace.step,
                offered_fps: r.offered_fps,
                mean_frame_size: t.mean_frame_size,
                mean_wire_frames: t.mean_wire_frames,
                offered_l1_bps: rate::l1_bps(r.offered_fps, rate::l1_bytes(t.mean_wire_bytes, t.mean_wire_frames)),
                offered_l2_bps: rate::l2_bps(r.offered_fps, t.mean_wire_bytes),
                planned_frames: t.frames,
                tx_frames: r.tx_frames,
                tx_wire_frames: r.tx_wire_frames,
                refused_frames: r.refused_frames,
                unsent_frames: r.unsent_frames,
                send_retries: r.send_retries,
                sendmmsg_calls: r.sendmmsg_calls,
                max_lag_ns: r.max_lag_ns,
                first_lag_ns: r.first_lag_ns,
                tx_stamp_max_error_ns: r.max_send_call_ns,
                tx_stamp_mean_error_ns: if r.sendmmsg_calls > 0 { r.send_call_ns_total as f64 / r.sendmmsg_calls as f64 } else { 0.0 },
                max_backlog_frames: r.max_backlog_frames,
                slips: r.slips,
                slipped_ns: r.slipped_ns,
                max_slip_ns: r.max_slip_ns,
                tx_stamp_check: r.stamp_check.clone(),
                cpu: t.cpus[0],
                queues: open[pi].senders as u32,
                cpus: t.cpus[..open[pi].senders as usize].to_vec(),
            }
        });
        if rxp.ring_stats.drops > 0 {
            reasons.push(format!("port {:?}: the receive ring dropped {} frames", p.name, rxp.ring_stats.drops));
        }
        let interface_counters = match (&open[pi].counters_before, &after[pi]) {
            (Some(b), Some(a)) => Some(a.since(b)),
            _ => None,
        };
        if let Some(c) = &interface_counters {
            if c.rx_dropped > 0 {
                reasons.push(format!("port {:?}: interface {} dropped {} received frames", p.name, p.interface, c.rx_dropped));
            }
        }
        ports.push(PortResult {
            name: p.name.clone(),
            interface: p.interface.clone(),
            netns: p.netns.clone(),
            mac: open[pi].mac.to_string(),
            mtu: open[pi].info.mtu,
            driver: open[pi].info.driver.clone(),
            backend: open[pi].backend,
            backend_note: open[pi].backend_note.clone(),
            xsk_mode: open[pi].xsk_mode,
            next_hop_mac_ipv4: hops[pi].0.map(|m| m.to_string()),
            next_hop_mac_ipv6: hops[pi].1.map(|m| m.to_string()),
            tx,
            rx: rxp.counters,
            rx_ring_drops: rxp.ring_stats.drops,
            interface_counters,
        });
    }
    let mut streams = Vec::with_capacity(plan.streams.len());
    for (si, s) in plan.streams.iter().enumerate() {
        let c = &rx.state.streams[si];
        let t = plan.ports[s.tx_port].tx.as_ref().expect("a stream's tx port sends");
        let share_sum: u64 = t.schedule.shares.iter().sum();
        let k = t.streams.iter().position(|&x| x == si).expect("stream is in its port's schedule");
        streams.push(StreamResult {
            index: s.index,
            name: s.name.clone(),
            ip_version: s.ip_version(),
            tx_port: plan.ports[s.tx_port].name.clone(),
            rx_port: plan.ports[s.rx_port].name.clone(),
            src_ip: s.src_ip.to_string(),
            dst_ip: s.dst_ip.to_string(),
            src_port: s.src_port,
            dst_port: s.dst_port,
            protocol: s.protocol,
            frame_size: s.frame_size,
            share: s.share,
            intended_fps: t.pace.mean_fps(t.frames) * t.schedule.shares[k] as f64 / share_sum as f64,
            loss_window: c.lost_range(stream_tx[si]).map(|(first, last)| {
                let due_s = |seq| t.pace.due_ns(t.schedule.index_of(k, seq)) / 1e9;
                LossWindow { first_seq: first, last_seq: last, first_due_s: due_s(first), last_due_s: due_s(last) }
            }),
            counts: FrameCounts::new(stream_tx[si], c.rx_frames, c.reordered_frames, c.duplicate_frames),
            refused_frames: stream_refused[si],
            negative_latency_frames: c.negative_latency_frames,
            latency_ns: c.latency.summary(),
            pdv_ns: c.pdv(),
            ipdv_ns: c.ipdv(),
            inter_arrival_ns: c.inter_arrival.summary(),
            latency_histogram: plan.export_histograms.then(|| c.latency.export()),
            fragments: {
                let pieces = s.wire_frame_sizes().len() as u64;
                let tx_fragments = if pieces > 1 { stream_tx[si] * pieces } else { 0 };
                (tx_fragments > 0 || c.rx_fragments > 0).then(|| Fragments {
                    tx_fragments,
                    per_frame: pieces,
                    rx_fragments: c.rx_fragments,
                    reassembled_frames: c.reassembled_frames,
                    incomplete_frames: c.incomplete_frames,
                    rx_fragments_per_s: if a.traffic_s > 0.0 { c.rx_fragments as f64 / a.traffic_s } else { 0.0 },
                })
            },
        });
    }
    let totals = Totals {
        counts: FrameCounts::sum(streams.iter().map(|s| &s.counts)),
        intended_fps: ports.iter().filter_map(|p| p.tx.as_ref()).map(|t| t.intended_fps).sum(),
        offered_fps: ports.iter().filter_map(|p| p.tx.as_ref()).map(|t| t.offered_fps).sum(),
    };
    TrialResult {
        result_version: result::RESULT_VERSION,
        engine_version: env!("CARGO_PKG_VERSION"),
        status: if a.interrupted { "interrupted" } else { "completed" },
        started_at_unix_ns: a.started_at_unix_ns,
        learning_s: a.learning_s,
        intended_duration_s: a.intended_duration_s,
        traffic_s: a.traffic_s,
        drain_s: plan.drain_s,
        after_stall: if plan.slip_after_frames.is_some() { "slip" } else { "catch_up" },
        rx_priority: rx.fifo_priority,
        tester_limited: !reasons.is_empty(),
        tester_limited_reasons: reasons,
        totals,
        ports,
        streams,
    }
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
