//! [`TrialSpec::validate`]: the spec checked part by part into a [`Plan`].
//! Each part has its function: the trial as a whole, each port, each
//! stream (its shape, then its addresses), each sender (rate, count,
//! CPUs) and each port's backend. Errors name the field.

use super::plan::*;
use super::types::*;
use crate::mix::Schedule;
use crate::pace::Pace;
use crate::wire::ext::ExtHeader;
use crate::wire::{ethernet::Mac, signature, FCS_LEN};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

impl TrialSpec {
    /// Checks every field and computes the plan.
    pub fn validate(&self) -> Result<Plan, String> {
        self.check_trial()?;
        let mut ports: Vec<PortPlan> = Vec::with_capacity(self.ports.len());
        for (i, p) in self.ports.iter().enumerate() {
            if p.name.is_empty() || ports.iter().any(|q| q.name == p.name) {
                return Err(format!("ports[{i}].name: must be non-empty and unique, got {:?}", p.name));
            }
            ports.push(port_plan(&format!("ports[{i}]"), p, self.netns_prefix.as_deref())?);
        }
        let mut streams: Vec<StreamPlan> = Vec::with_capacity(self.streams.len());
        for (i, s) in self.streams.iter().enumerate() {
            let stream = self.stream_plan(i, s, &ports)?;
            if streams.iter().any(|t| t.name == stream.name) {
                return Err(format!("streams[{i}].name: {:?} is used twice", stream.name));
            }
            streams.push(stream);
        }
        note_what_ports_carry(&mut ports, &streams);
        for (pi, p) in ports.iter_mut().enumerate() {
            p.tx = self.tx_plan(&format!("ports[{pi}]"), pi, &p.name, &mut streams)?;
        }
        if let Some(s) = streams.iter().find(|s| s.learn_tuples && s.frames > crate::walk::MAX_VALUES) {
            return Err(format!("streams[{}].learn_tuples: the stream sends {} frames, more than the {} records a walk replies to", s.index, s.frames, crate::walk::MAX_VALUES));
        }
        for (pi, p) in ports.iter().enumerate() {
            self.check_backend(&format!("ports[{pi}]"), p, &streams)?;
        }
        Ok(Plan {
            ports,
            streams,
            drain_s: self.drain_s,
            drain_until_received: self.drain_until_received,
            learning: self.learning.clone(),
            rx_cpu: self.rx_cpu,
            rx_priority: self.rx_priority,
            export_histograms: self.export_histograms,
            tx_stamp_check: self.tx_stamp_check,
            tester_limited_shortfall: self.tester_limited_shortfall,
            tester_limited_backlog_frames: self.tester_limited_backlog_frames,
            slip_after_frames: (self.after_stall == AfterStall::Slip).then(|| (self.tester_limited_backlog_frames / 2).max(1)),
            tester_limited_slip_ratio: self.tester_limited_slip_ratio,
            allow_root_netns: self.allow_root_netns,
        })
    }

    /// The trial as a whole: version, length, phases, limits, and that it has ports and streams.
    fn check_trial(&self) -> Result<(), String> {
        if let Some(pre) = self.netns_prefix.as_ref().filter(|pre| pre.is_empty() || pre.contains('/') || pre.len() > 200) {
            return Err(format!("netns_prefix: {pre:?} is not the start of a namespace name"));
        }
        if self.spec_version != SPEC_VERSION {
            return Err(format!("spec_version: this engine reads version {SPEC_VERSION}, got {}", self.spec_version));
        }
        match (self.duration_s, self.frame_count) {
            (Some(d), None) if !(d.is_finite() && d > 0.0 && d <= MAX_DURATION_S) => {
                return Err(format!("duration_s: must be in (0, {MAX_DURATION_S}], got {d}"));
            }
            (None, Some(n)) if n == 0 || n > MAX_FRAMES_PER_PORT => {
                return Err(format!("frame_count: must be 1..={MAX_FRAMES_PER_PORT}, got {n}"));
            }
            (Some(_), None) | (None, Some(_)) => {}
            _ => return Err("give exactly one of duration_s and frame_count".into()),
        }
        if !(self.drain_s.is_finite() && (0.0..=600.0).contains(&self.drain_s)) {
            return Err(format!("drain_s: must be 0..=600 s, got {}", self.drain_s));
        }
        if !(self.learning.timeout_s.is_finite() && self.learning.timeout_s > 0.0 && self.learning.timeout_s <= 60.0) {
            return Err("learning.timeout_s: must be in (0, 60] s".into());
        }
        if !(self.learning.settle_s.is_finite() && (0.0..=60.0).contains(&self.learning.settle_s)) {
            return Err("learning.settle_s: must be 0..=60 s".into());
        }
        if !(self.tester_limited_shortfall.is_finite() && (0.0..1.0).contains(&self.tester_limited_shortfall)) {
            return Err("tester_limited_shortfall: must be a ratio in [0, 1)".into());
        }
        if self.tester_limited_backlog_frames == 0 {
            return Err("tester_limited_backlog_frames: must be at least 1".into());
        }
        if !(self.tester_limited_slip_ratio.is_finite() && (0.0..1.0).contains(&self.tester_limited_slip_ratio)) {
            return Err("tester_limited_slip_ratio: must be a ratio in [0, 1)".into());
        }
        if let Some(p) = self.rx_priority.filter(|p| !(1..=99).contains(p)) {
            return Err(format!("rx_priority: must be a SCHED_FIFO priority 1..=99, got {p}"));
        }
        if self.ports.is_empty() {
            return Err("ports: at least one port is needed".into());
        }
        if self.streams.is_empty() {
            return Err("streams: at least one stream is needed".into());
        }
        if self.streams.len() > usize::from(u16::MAX) {
            return Err(format!("streams: at most {} streams", u16::MAX));
        }
        Ok(())
    }

    /// Stream `i`: its shape, its ports, and its addresses.
    fn stream_plan(&self, i: usize, s: &StreamSpec, ports: &[PortPlan]) -> Result<StreamPlan, String> {
        let f = format!("streams[{i}]");
        let port_index = |field: &str, name: &str| -> Result<usize, String> {
            ports.iter().position(|p| p.name == name).ok_or_else(|| format!("{f}.{field}: no port named {name:?}"))
        };
        let tx = port_index("tx_port", &s.tx_port)?;
        let rx = port_index("rx_port", &s.rx_port)?;
        check_stream_shape(&f, s)?;
        let (mut src_ip, mut dst_ip) = self.stream_addresses(&f, s, &ports[tx], &ports[rx])?;
        let walk = self.stream_walk(&f, s)?;
        let (mut src_port, mut dst_port) = (s.src_port.unwrap_or(DEFAULT_SRC_PORT), s.dst_port.unwrap_or(DEFAULT_DST_PORT));
        if let Some(w) = &walk {
            use crate::walk::Kind;
            src_ip = w.field(Kind::SrcIp).map_or(src_ip, |x| x.first_ip());
            dst_ip = w.field(Kind::DstIp).map_or(dst_ip, |x| x.first_ip());
            src_port = w.field(Kind::SrcPort).map_or(src_port, |x| x.first_port());
            dst_port = w.field(Kind::DstPort).map_or(dst_port, |x| x.first_port());
        }
        let plan = StreamPlan {
            index: i as u16,
            name: s.name.clone().unwrap_or_else(|| format!("ipv{}-{}-{}-{i}", s.ip_version, s.tx_port, s.rx_port)),
            tx_port: tx,
            rx_port: rx,
            src_ip,
            dst_ip,
            src_port,
            dst_port,
            frame_size: s.frame_size,
            share: s.share,
            frames: 0,
            ext_headers: s.ipv6_ext_headers.clone(),
            fragment_mtu: s.fragment_mtu,
            protocol: s.protocol,
            walk: walk.map(std::sync::Arc::new),
            rx_ip_version: s.rx_ip_version.unwrap_or(s.ip_version),
            learn_tuples: s.learn_tuples,
        };
        if plan.learn_tuples && !plan.fragments().1.is_empty() {
            return Err(format!("{f}.learn_tuples: learns frames sent whole, and fragment_mtu cuts these"));
        }
        let pieces = plan.wire_frame_sizes().len();
        if pieces > super::fragment::MAX_FRAGMENTS {
            return Err(format!("{f}.fragment_mtu: {}-byte frames would be cut into {pieces} fragments, more than {}", s.frame_size, super::fragment::MAX_FRAGMENTS));
        }
        Ok(plan)
    }

    /// A stream's source and destination: given, or its ports' (an SRH's
    /// active segment for IPv6); both of its family, and inside the
    /// benchmarking blocks unless the spec allows others.
    fn stream_addresses(&self, f: &str, s: &StreamSpec, tp: &PortPlan, rp: &PortPlan) -> Result<(IpAddr, IpAddr), String> {
        // An SRH sends the frame to its active segment.
        let srh_dst = s.ipv6_ext_headers.iter().find_map(|h| match h {
            ExtHeader::Srh { segments, segments_left } => Some(IpAddr::V6(segments[usize::from(*segments_left)])),
            _ => None,
        });
        let (src_ip, dst_ip) = if s.ip_version == 4 {
            (s.src_ip.or(tp.ipv4.map(|a| IpAddr::V4(a.addr))), s.dst_ip.or(rp.ipv4.map(|a| IpAddr::V4(a.addr))))
        } else {
            (s.src_ip.or(tp.ipv6.map(|a| IpAddr::V6(a.addr))), s.dst_ip.or(srh_dst).or(rp.ipv6.map(|a| IpAddr::V6(a.addr))))
        };
        let src_ip = src_ip.ok_or_else(|| format!("{f}.src_ip: not given and port {:?} has no IPv{} address", tp.name, s.ip_version))?;
        let dst_ip = dst_ip.ok_or_else(|| format!("{f}.dst_ip: not given and port {:?} has no IPv{} address", rp.name, s.ip_version))?;
        if (s.ip_version == 4) != (src_ip.is_ipv4() && dst_ip.is_ipv4()) || (s.ip_version == 6) != (src_ip.is_ipv6() && dst_ip.is_ipv6()) {
            return Err(format!("{f}: src_ip and dst_ip must both be IPv{}", s.ip_version));
        }
        let hops = s.ipv6_ext_headers.iter().flat_map(|h| match h {
            ExtHeader::Srh { segments, .. } => segments.clone(),
            ExtHeader::Routing0 { addresses, .. } => addresses.clone(),
            _ => vec![],
        });
        if let Some(a) = hops.map(IpAddr::V6).find(|a| !is_benchmarking(a)) {
            if !self.allow_non_benchmarking_addresses {
                return Err(format!("{f}.ipv6_ext_headers: {a} leaves the benchmarking block 2001:2::/48"));
            }
        }
        if !(self.allow_non_benchmarking_addresses || is_benchmarking(&dst_ip) && is_benchmarking(&src_ip)) {
            return Err(format!(
                "{f}: {src_ip} -> {dst_ip} leaves the benchmarking blocks 198.18.0.0/15 and 2001:2::/48; set allow_non_benchmarking_addresses to send there"
            ));
        }
        Ok((src_ip, dst_ip))
    }

    /// A stream's walk (`walk.rs`): UDP only; a field walked is not also
    /// given as the stream's own; no walked destination behind a routing
    /// header (the UDP checksum would need the header's last address).
    fn stream_walk(&self, f: &str, s: &StreamSpec) -> Result<Option<crate::walk::Walk>, String> {
        let Some(spec) = &s.walk else { return Ok(None) };
        if s.protocol != Protocol::Udp {
            return Err(format!("{f}.walk: only udp streams walk"));
        }
        let fw = format!("{f}.walk");
        let w = spec.plan(&fw, s.ip_version, |a| self.allow_non_benchmarking_addresses || is_benchmarking(a))?;
        use crate::walk::Kind;
        for (kind, own) in [(Kind::SrcIp, s.src_ip.is_some()), (Kind::DstIp, s.dst_ip.is_some()), (Kind::SrcPort, s.src_port.is_some()), (Kind::DstPort, s.dst_port.is_some())] {
            if own && w.field(kind).is_some() {
                return Err(format!("{f}: give {0} or walk.{0}, not both", kind.name()));
            }
        }
        if w.field(Kind::DstIp).is_some() && s.ipv6_ext_headers.iter().any(|h| matches!(h, ExtHeader::Srh { .. } | ExtHeader::Routing0 { .. })) {
            return Err(format!("{fw}.dst_ip: a stream with a routing header is sent to its segments, not walked"));
        }
        Ok(Some(w))
    }

    /// Port `pi`'s sender, if it sends: its rate, frame count, pace and
    /// CPUs; shares each of its streams' frames out (`frames`).
    fn tx_plan(&self, f: &str, pi: usize, name: &str, streams: &mut [StreamPlan]) -> Result<Option<TxPlan>, String> {
        let mine: Vec<usize> = streams.iter().filter(|s| s.tx_port == pi).map(|s| usize::from(s.index)).collect();
        let spec = &self.ports[pi];
        if mine.is_empty() {
            if spec.tx_rate.is_some() {
                return Err(format!("{f}.tx_rate: port {name:?} sends no stream"));
            }
            if spec.tx_cpu.is_some() || spec.tx_nice.is_some() || spec.rate_step.is_some() || spec.tx_queues.is_some() || spec.tx_run_frames.is_some() {
                return Err(format!("{f}: tx_cpu, tx_nice, tx_queues, rate_step and tx_run_frames need a port that sends, and {name:?} sends no stream"));
            }
            return Ok(None);
        }
        let rate = spec.tx_rate.as_ref().ok_or_else(|| format!("{f}.tx_rate: port {name:?} sends streams and needs a rate"))?;
        let shares: Vec<u64> = mine.iter().map(|&s| streams[s].share).collect();
        let total: f64 = shares.iter().map(|&s| s as f64).sum(); // weights only: never wraps (the schedule checks the shares)
        let mean = |x: &dyn Fn(&StreamPlan) -> f64| mine.iter().map(|&s| x(&streams[s]) * streams[s].share as f64).sum::<f64>() / total;
        let mean_frame_size = mean(&|s| s.frame_size as f64);
        let mean_wire_frames = mean(&|s| s.wire_frame_sizes().len() as f64);
        let mean_wire_bytes = mean(&|s| s.wire_frame_sizes().iter().sum::<usize>() as f64);
        let rate_fps = rate.to_fps(&format!("{f}.tx_rate"))?;
        let schedule = match spec.tx_run_frames {
            None => Schedule::new(&shares),
            Some(run) => Schedule::runs(&shares, run),
        }
        .map_err(|e| format!("{f}: {e}"))?;
        let (frames, pace) = self.frames_and_pace(f, rate_fps, spec.rate_step.as_ref())?;
        for (k, &si) in mine.iter().enumerate() {
            streams[si].frames = schedule.frames_of(k, frames);
        }
        if let Some(n) = spec.tx_nice.filter(|n| !(-20..=19).contains(n)) {
            return Err(format!("{f}.tx_nice: must be -20..=19, got {n}"));
        }
        let cpus = sender_cpus(f, spec)?;
        Ok(Some(TxPlan { rate_fps, pace, mean_frame_size, mean_wire_frames, mean_wire_bytes, frames, streams: mine, schedule, run_frames: spec.tx_run_frames, cpus, nice: spec.tx_nice }))
    }

    /// A sending port's frame count and pace at `rate_fps`: for the
    /// trial's duration (with a `rate_step`, two rates) or its frame count.
    fn frames_and_pace(&self, f: &str, rate_fps: f64, step: Option<&RateStepSpec>) -> Result<(u64, Pace), String> {
        let (frames, pace) = match (self.duration_s, self.frame_count, step) {
            (Some(d), _, None) => ((d * rate_fps).round().max(1.0) as u64, Pace::constant(rate_fps)),
            (Some(d), _, Some(st)) => {
                if !(st.after_s.is_finite() && st.after_s > 0.0 && st.after_s < d) {
                    return Err(format!("{f}.rate_step.after_s: must be inside the traffic (0, {d}) s, got {}", st.after_s));
                }
                if !(st.fps.is_finite() && st.fps > 0.0 && st.fps <= MAX_RATE_FPS) {
                    return Err(format!("{f}.rate_step.fps: must be in (0, {MAX_RATE_FPS}] frames/s, got {}", st.fps));
                }
                let at = (st.after_s * rate_fps).round().max(1.0) as u64;
                (at + ((d - st.after_s) * st.fps).round().max(1.0) as u64, Pace::stepped(rate_fps, at, st.fps))
            }
            (_, Some(_), Some(_)) => return Err(format!("{f}.rate_step: needs duration_s, not frame_count")),
            (_, Some(n), None) => (n, Pace::constant(rate_fps)),
            _ => unreachable!("checked by check_trial"),
        };
        if frames > MAX_FRAMES_PER_PORT {
            return Err(format!("{f}: {frames} frames at {rate_fps:.0} frames/s is more than the {MAX_FRAMES_PER_PORT} a port may send in one trial"));
        }
        if self.duration_s.is_none() && frames as f64 / rate_fps > MAX_DURATION_S {
            return Err(format!("{f}: {frames} frames at {rate_fps:.0} frames/s would take longer than {MAX_DURATION_S} s"));
        }
        Ok((frames, pace))
    }

    /// What a port's backend can do: AF_XDP's frame size and transmit
    /// stamps, several senders, the in-kernel sender's one whole UDP
    /// stream at one rate; and a sending port's next hops.
    fn check_backend(&self, f: &str, p: &PortPlan, streams: &[StreamPlan]) -> Result<(), String> {
        if matches!(p.backend, Backend::AfXdp | Backend::XdpLive) {
            let name = if p.backend == Backend::AfXdp { "af_xdp" } else { "xdp_live" };
            if self.tx_stamp_check {
                return Err(format!("{f}.backend: tx_stamp_check needs the af_packet backend ({name} has no kernel transmit stamps)"));
            }
            if p.max_frame_size > crate::xsk::MAX_FRAME + FCS_LEN {
                return Err(format!("{f}.backend: {name} carries frames of at most {} bytes, this port has {}", crate::xsk::MAX_FRAME + FCS_LEN, p.max_frame_size));
            }
        }
        if let Some(t) = p.tx.as_ref().filter(|t| t.queues() > 1) {
            if matches!(p.backend, Backend::AfPacket | Backend::XdpLive) {
                return Err(format!(
                    "{f}.tx_queues: {} senders need the af_xdp backend, or auto (which sends with one where it takes af_packet): only an AF_XDP socket is bound to a transmit queue",
                    t.queues()
                ));
            }
        }
        if let (Backend::XdpLive, Some(t)) = (p.backend, &p.tx) {
            if t.streams.len() != 1 {
                return Err(format!("{f}.backend: xdp_live sends one stream a port, this port sends {}", t.streams.len()));
            }
            let s = &streams[t.streams[0]];
            if s.protocol != Protocol::Udp || !s.fragments().1.is_empty() || s.walk.is_some() {
                return Err(format!("{f}.backend: xdp_live sends UDP frames whole from one template (no ICMP Echo, no fragmenting at the source, no walk)"));
            }
            if t.pace.step.is_some() {
                return Err(format!("{f}.backend: xdp_live sends at one constant rate (no rate_step)"));
            }
        }
        if p.tx.is_some() && p.next_hop_mac.is_none() {
            if p.sends_ipv4 && (p.ipv4.is_none() || p.gateway_ipv4.is_none()) {
                return Err(format!("{f}: sends IPv4 and needs ipv4 and gateway_ipv4 to resolve its next hop, or next_hop_mac"));
            }
            if p.sends_ipv6 && (p.ipv6.is_none() || p.gateway_ipv6.is_none()) {
                return Err(format!("{f}: sends IPv6 and needs ipv6 and gateway_ipv6 to resolve its next hop, or next_hop_mac"));
            }
        }
        Ok(())
    }
}

/// Port `f` as the plan holds it: names, MAC, addresses (what it sends is filled in later).
fn port_plan(f: &str, p: &PortSpec, netns_prefix: Option<&str>) -> Result<PortPlan, String> {
    if p.interface.is_empty() || p.interface.len() > 15 || p.interface.contains('/') {
        return Err(format!("{f}.interface: {:?} is not a valid interface name", p.interface));
    }
    if let Some(ns) = p.netns.as_ref().filter(|ns| ns.is_empty() || ns.contains('/') || *ns == "." || *ns == "..") {
        return Err(format!("{f}.netns: {ns:?} is not a valid namespace name"));
    }
    if let Some(ns) = &p.netns {
        crate::netns::check_in_lab(&format!("{f}.netns"), ns, netns_prefix)?;
    }
    let mac = match p.mac.as_deref() {
        None => MacChoice::Engine,
        Some("interface") => MacChoice::Interface,
        Some(m) => MacChoice::Given(m.parse::<Mac>().map_err(|e| format!("{f}.mac: {e}"))?),
    };
    Ok(PortPlan {
        name: p.name.clone(),
        interface: p.interface.clone(),
        netns: p.netns.clone(),
        mac,
        ipv4: p.ipv4.as_deref().map(|s| parse_prefixed::<Ipv4Addr>(&format!("{f}.ipv4"), s, 32)).transpose()?,
        ipv6: p.ipv6.as_deref().map(|s| parse_prefixed::<Ipv6Addr>(&format!("{f}.ipv6"), s, 128)).transpose()?,
        gateway_ipv4: p.gateway_ipv4,
        gateway_ipv6: p.gateway_ipv6,
        next_hop_mac: p.next_hop_mac.as_deref().map(|m| m.parse::<Mac>().map_err(|e| format!("{f}.next_hop_mac: {e}"))).transpose()?,
        backend: p.backend,
        tx: None,
        max_frame_size: 0,
        sends_ipv4: false,
        sends_ipv6: false,
    })
}

/// A stream's own fields: family, extension headers, frame size, source
/// fragmentation, ICMP echo's constraints, share.
fn check_stream_shape(f: &str, s: &StreamSpec) -> Result<(), String> {
    if s.ip_version != 4 && s.ip_version != 6 {
        return Err(format!("{f}.ip_version: must be 4 or 6, got {}", s.ip_version));
    }
    if s.ip_version == 4 && !s.ipv6_ext_headers.is_empty() {
        return Err(format!("{f}.ipv6_ext_headers: only an IPv6 stream carries them"));
    }
    for (k, h) in s.ipv6_ext_headers.iter().enumerate() {
        h.check(&format!("{f}.ipv6_ext_headers[{k}]"))?;
    }
    let ext_len: usize = s.ipv6_ext_headers.iter().map(ExtHeader::len).sum();
    let min = min_frame_size(s.ip_version) + ext_len;
    if s.frame_size < min || s.frame_size > MAX_FRAME_SIZE {
        return Err(format!(
            "{f}.frame_size: {} bytes does not fit IPv{}/UDP with the {}-byte signature{} (allowed {min}..={MAX_FRAME_SIZE} bytes incl. FCS)",
            s.frame_size,
            s.ip_version,
            signature::LEN,
            if ext_len > 0 { format!(" and {ext_len} bytes of extension headers") } else { String::new() }
        ));
    }
    if let Some(mtu) = s.fragment_mtu {
        let least = if s.ip_version == 4 { 68 } else { 1280 };
        let most = MAX_FRAME_SIZE - crate::wire::ethernet::HEADER_LEN - FCS_LEN;
        if !(least..=most).contains(&mtu) {
            return Err(format!("{f}.fragment_mtu: must be {least}..={most} bytes for IPv{} (RFC {}), got {mtu}", s.ip_version, if s.ip_version == 4 { "791 §3.2" } else { "8200 §5" }));
        }
        if !s.ipv6_ext_headers.is_empty() {
            return Err(format!("{f}.fragment_mtu: a stream with ipv6_ext_headers is not fragmented at the source"));
        }
    }
    if s.protocol == Protocol::IcmpEcho {
        if s.rx_port != s.tx_port {
            return Err(format!("{f}.rx_port: the Echo Replies of an icmp_echo stream come back to its tx_port {:?}", s.tx_port));
        }
        if s.dst_ip.is_none() {
            return Err(format!("{f}.dst_ip: an icmp_echo stream needs the address to ping"));
        }
        if s.src_port.is_some() || s.dst_port.is_some() || !s.ipv6_ext_headers.is_empty() || s.fragment_mtu.is_some() {
            return Err(format!("{f}: src_port, dst_port, ipv6_ext_headers and fragment_mtu are for udp streams"));
        }
    }
    if s.share == 0 {
        return Err(format!("{f}.share: must be at least 1"));
    }
    if s.learn_tuples && s.protocol != Protocol::Udp {
        return Err(format!("{f}.learn_tuples: learns UDP test frames, not icmp_echo"));
    }
    if let Some(v) = s.rx_ip_version {
        if v != 4 && v != 6 {
            return Err(format!("{f}.rx_ip_version: must be 4 or 6, got {v}"));
        }
        if v != s.ip_version && (s.protocol != Protocol::Udp || !s.ipv6_ext_headers.is_empty() || s.fragment_mtu.is_some()) {
            return Err(format!("{f}.rx_ip_version: a translated stream carries UDP test frames whole, without ipv6_ext_headers or fragment_mtu"));
        }
    }
    Ok(())
}

/// Each port's largest frame (sent, or received whole: routers do not
/// fragment IPv6, RFC 8200 §5) and the families it sends.
fn note_what_ports_carry(ports: &mut [PortPlan], streams: &[StreamPlan]) {
    for s in streams {
        let largest = s.wire_frame_sizes().into_iter().max().unwrap_or(s.frame_size);
        ports[s.tx_port].max_frame_size = ports[s.tx_port].max_frame_size.max(largest);
        if s.rx_ip_version == 6 {
            let whole = if s.translated() { s.rx_frame_size() } else { largest };
            ports[s.rx_port].max_frame_size = ports[s.rx_port].max_frame_size.max(whole);
        }
        if s.ip_version() == 6 {
            ports[s.tx_port].sends_ipv6 = true;
        } else {
            ports[s.tx_port].sends_ipv4 = true;
        }
    }
}

fn parse_prefixed<A: std::str::FromStr>(field: &str, s: &str, max_len: u8) -> Result<Prefixed<A>, String> {
    let (a, l) = s.split_once('/').ok_or_else(|| format!("{field}: {s:?} needs a prefix length, as in ADDRESS/LEN"))?;
    let addr = a.parse::<A>().map_err(|_| format!("{field}: {a:?} is not a valid address"))?;
    let prefix_len = l.parse::<u8>().ok().filter(|&p| p <= max_len).ok_or_else(|| format!("{field}: prefix length {l:?} must be 0..={max_len}"))?;
    Ok(Prefixed { addr, prefix_len })
}

/// The CPU of each of a sending port's senders (`tx_queues`, `tx_cpu`).
fn sender_cpus(f: &str, spec: &PortSpec) -> Result<Vec<Option<usize>>, String> {
    let queues = spec.tx_queues.unwrap_or(1);
    if !(1..=MAX_TX_QUEUES).contains(&queues) {
        return Err(format!("{f}.tx_queues: must be 1..={MAX_TX_QUEUES}, got {queues}"));
    }
    match &spec.tx_cpu {
        None => Ok(vec![None; queues as usize]),
        Some(CpuChoice::One(c)) => Ok(vec![Some(*c); queues as usize]),
        Some(CpuChoice::Each(list)) if list.len() == queues as usize => Ok(list.iter().map(|&c| Some(c)).collect()),
        Some(CpuChoice::Each(list)) => Err(format!("{f}.tx_cpu: {} CPUs for {queues} sender(s) (tx_queues); give one CPU, or one a sender", list.len())),
    }
}
