//! The trial result assembled from what the senders reported, the
//! receiver counted and the interfaces' counters moved (docs/trial-result.md);
//! and every reason the trial was the tester's (`tester_limited`).

use crate::learn::NextHops;
use crate::rate;
use crate::result::{self, FrameCounts, Fragments, LossWindow, PortResult, PortTx, StreamResult, Totals, TrialResult, WalkResult};
use crate::rx::Receiver;
use crate::sock::{IfCounters, IfInfo};
use crate::spec::{Backend, Plan, PortPlan, StreamPlan, TxPlan};
use crate::stats::StreamCounters;
use crate::tx::TxReport;
use crate::wire::ethernet::Mac;
use crate::xsk::XskMode;

/// What the result says of an opened port.
pub struct Opened {
    pub mac: Mac,
    pub info: IfInfo,
    /// The backend in use (never `Auto`), and why `auto` did not take its first choice.
    pub backend: Backend,
    pub backend_note: Option<String>,
    pub xsk_mode: Option<XskMode>,
    /// Sender threads (lanes) of a sending port.
    pub senders: u64,
    /// The interface's counters over the trial, where readable.
    pub counters: Option<IfCounters>,
}

/// When the phases ran.
pub struct Timing {
    pub started_at_unix_ns: u64,
    pub learning_s: f64,
    pub intended_duration_s: f64,
    pub traffic_s: f64,
    pub drained_s: f64,
    pub interrupted: bool,
}

/// The trial result.
pub fn result(plan: &Plan, open: &[Opened], hops: &NextHops, reports: &[(usize, TxReport)], rx: Receiver, a: Timing) -> TrialResult {
    let mut reasons = Vec::new();
    if a.interrupted {
        reasons.push("the trial was interrupted".to_string());
    }
    let (stream_tx, stream_refused) = offered_per_stream(plan, reports);
    let mut ports = Vec::with_capacity(plan.ports.len());
    for (pi, p) in plan.ports.iter().enumerate() {
        let report = reports.iter().find(|(i, _)| *i == pi).map(|(_, r)| r);
        let tx = report.map(|r| {
            let t = p.tx.as_ref().expect("only sending ports have reports");
            reasons.extend(sender_reasons(plan, p, t, r));
            port_tx(t, r, &open[pi])
        });
        let rxp = &rx.state.ports[pi];
        if rxp.ring_stats.drops > 0 {
            reasons.push(format!("port {:?}: the receive ring dropped {} frames", p.name, rxp.ring_stats.drops));
        }
        if let Some(c) = open[pi].counters.as_ref().filter(|c| c.rx_dropped > 0) {
            reasons.push(format!("port {:?}: interface {} dropped {} received frames", p.name, p.interface, c.rx_dropped));
        }
        let o = &open[pi];
        ports.push(PortResult {
            name: p.name.clone(),
            interface: p.interface.clone(),
            netns: p.netns.clone(),
            mac: o.mac.to_string(),
            mtu: o.info.mtu,
            driver: o.info.driver.clone(),
            backend: o.backend,
            backend_note: o.backend_note.clone(),
            xsk_mode: o.xsk_mode,
            next_hop_mac_ipv4: hops[pi].0.map(|m| m.to_string()),
            next_hop_mac_ipv6: hops[pi].1.map(|m| m.to_string()),
            tx,
            rx: rxp.counters,
            rx_ring_drops: rxp.ring_stats.drops,
            interface_counters: o.counters,
        });
    }
    let streams: Vec<StreamResult> = plan
        .streams
        .iter()
        .enumerate()
        .map(|(si, s)| stream_result(plan, s, &rx.state.streams[si], stream_tx[si], stream_refused[si], a.traffic_s))
        .collect();
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
        drained_s: a.drained_s,
        after_stall: if plan.slip_after_frames.is_some() { "slip" } else { "catch_up" },
        rx_priority: rx.fifo_priority,
        tester_limited: !reasons.is_empty(),
        tester_limited_reasons: reasons,
        totals,
        ports,
        streams,
    }
}

/// Frames offered per stream (handed over, or refused by the far end), and those refused.
fn offered_per_stream(plan: &Plan, reports: &[(usize, TxReport)]) -> (Vec<u64>, Vec<u64>) {
    let mut offered = vec![0u64; plan.streams.len()];
    let mut refused = vec![0u64; plan.streams.len()];
    for (pi, r) in reports {
        let t = plan.ports[*pi].tx.as_ref().expect("only sending ports have reports");
        for (k, &si) in t.streams.iter().enumerate() {
            offered[si] = r.stream_offered_frames.get(k).copied().unwrap_or(0);
            refused[si] = r.stream_refused_frames.get(k).copied().unwrap_or(0);
        }
    }
    (offered, refused)
}

/// Why a sender made the trial the tester's: an error, frames not sent in
/// time, a rate short of the intended, a schedule that slipped too long,
/// a backlog sent back to back.
fn sender_reasons(plan: &Plan, p: &PortPlan, t: &TxPlan, r: &TxReport) -> Vec<String> {
    let mut reasons = Vec::new();
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
    reasons
}

/// A sending port's part of the result.
fn port_tx(t: &TxPlan, r: &TxReport, o: &Opened) -> PortTx {
    PortTx {
        intended_fps: t.pace.mean_fps(t.frames),
        rate_step: t.pace.step,
        run_frames: t.run_frames,
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
        queues: o.senders as u32,
        cpus: t.cpus[..o.senders as usize].to_vec(),
    }
}

/// One stream's part of the result: counts, delays, where its losses fell, fragments.
fn stream_result(plan: &Plan, s: &StreamPlan, c: &StreamCounters, tx_frames: u64, refused: u64, traffic_s: f64) -> StreamResult {
    let t = plan.ports[s.tx_port].tx.as_ref().expect("a stream's tx port sends");
    let share_sum: u64 = t.schedule.shares.iter().sum();
    let k = t.streams.iter().position(|&x| x == usize::from(s.index)).expect("stream is in its port's schedule");
    let pieces = s.wire_frame_sizes().len() as u64;
    let tx_fragments = if pieces > 1 { tx_frames * pieces } else { 0 };
    StreamResult {
        index: s.index,
        name: s.name.clone(),
        ip_version: s.ip_version(),
        rx_ip_version: s.rx_ip_version,
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
        loss_window: c.lost_range(tx_frames).map(|(first, last)| {
            let due_s = |seq| t.pace.due_ns(t.schedule.index_of(k, seq)) / 1e9;
            LossWindow { first_seq: first, last_seq: last, first_due_s: due_s(first), last_due_s: due_s(last) }
        }),
        counts: FrameCounts::new(tx_frames, c.rx_frames, c.reordered_frames, c.duplicate_frames),
        refused_frames: refused,
        negative_latency_frames: c.negative_latency_frames,
        latency_ns: c.latency.summary(),
        pdv_ns: c.pdv(),
        ipdv_ns: c.ipdv(),
        inter_arrival_ns: c.inter_arrival.summary(),
        latency_histogram: plan.export_histograms.then(|| c.latency.export()),
        walk: s.walk.as_deref().map(|w| WalkResult::new(w, tx_frames)),
        learned_tuples: c.tuples.as_ref().map(crate::tuples::TupleLog::result),
        fragments: (tx_fragments > 0 || c.rx_fragments > 0).then(|| Fragments {
            tx_fragments,
            per_frame: pieces,
            rx_fragments: c.rx_fragments,
            reassembled_frames: c.reassembled_frames,
            incomplete_frames: c.incomplete_frames,
            rx_fragments_per_s: if traffic_s > 0.0 { c.rx_fragments as f64 / traffic_s } else { 0.0 },
        }),
    }
}
