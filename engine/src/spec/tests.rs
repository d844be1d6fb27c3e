//! Validation of the trial spec: plans, limits, and errors that name the field.

use super::*;
use std::net::IpAddr;

fn spec(json: serde_json::Value) -> Result<Plan, String> {
    TrialSpec::from_json(&json.to_string())?.validate()
}

fn base() -> serde_json::Value {
    serde_json::json!({
        "spec_version": 3,
        "netns_prefix": "ns",
        "duration_s": 2.0,
        "ports": [
            {"name": "a", "interface": "t1", "netns": "ns1", "ipv4": "198.18.0.2/24", "ipv6": "2001:2::2/64",
             "gateway_ipv4": "198.18.0.1", "gateway_ipv6": "2001:2::1", "tx_rate": {"fps": 1000}},
            {"name": "b", "interface": "t2", "netns": "ns2", "ipv4": "198.19.0.2/24", "ipv6": "2001:2:0:1::2/64"}
        ],
        "streams": [
            {"tx_port": "a", "rx_port": "b", "ip_version": 4, "frame_size": 64, "share": 90},
            {"tx_port": "a", "rx_port": "b", "ip_version": 6, "frame_size": 84, "share": 10}
        ]
    })
}

#[test]
fn valid_spec_plans_counts() {
    let p = spec(base()).unwrap();
    let tx = p.ports[0].tx.as_ref().unwrap();
    assert_eq!(tx.frames, 2000);
    assert_eq!(p.streams[0].frames, 1800);
    assert_eq!(p.streams[1].frames, 200);
    assert_eq!(p.streams[0].dst_ip, "198.19.0.2".parse::<IpAddr>().unwrap());
    assert_eq!(p.streams[1].src_port, DEFAULT_SRC_PORT);
}

#[test]
fn the_receive_priority_is_a_fifo_priority() {
    let mut s = base();
    assert_eq!(spec(s.clone()).unwrap().rx_priority, None, "an ordinary thread by default");
    s["rx_priority"] = serde_json::json!(1);
    assert_eq!(spec(s.clone()).unwrap().rx_priority, Some(1));
    s["rx_priority"] = serde_json::json!(99);
    assert_eq!(spec(s.clone()).unwrap().rx_priority, Some(99));
    s["rx_priority"] = serde_json::json!(0);
    assert!(spec(s.clone()).unwrap_err().starts_with("rx_priority: must be a SCHED_FIFO priority"));
    s["rx_priority"] = serde_json::json!(100);
    assert!(spec(s.clone()).unwrap_err().starts_with("rx_priority"));
    s["rx_priority"] = serde_json::json!(-1);
    assert!(spec(s).is_err(), "not a u8");
}

#[test]
fn a_slip_comes_at_half_the_backlog_limit() {
    let mut s = base();
    assert_eq!(spec(s.clone()).unwrap().slip_after_frames, None, "catch_up by default");
    s["after_stall"] = serde_json::json!("slip");
    s["tester_limited_backlog_frames"] = serde_json::json!(256);
    let p = spec(s.clone()).unwrap();
    assert_eq!((p.slip_after_frames, p.tester_limited_slip_ratio), (Some(128), 0.005));
    s["tester_limited_backlog_frames"] = serde_json::json!(1);
    assert_eq!(spec(s.clone()).unwrap().slip_after_frames, Some(1));
    s["tester_limited_slip_ratio"] = serde_json::json!(1.0);
    assert!(spec(s.clone()).unwrap_err().starts_with("tester_limited_slip_ratio"));
    s["after_stall"] = serde_json::json!("skip");
    assert!(spec(s).is_err());
}

#[test]
fn runs_keep_each_streams_count_and_need_a_sending_port() {
    let mut s = base();
    s["ports"][0]["tx_run_frames"] = serde_json::json!(100);
    let p = spec(s.clone()).unwrap();
    let tx = p.ports[0].tx.as_ref().unwrap();
    assert_eq!(tx.run_frames, Some(100));
    assert_eq!(tx.schedule.window(), 1000); // 90/10 reduces to 9:1: 900 IPv4 frames, then 100 IPv6
    assert_eq!((p.streams[0].frames, p.streams[1].frames), (1800, 200));
    s["ports"][0]["tx_run_frames"] = serde_json::json!(0);
    assert!(spec(s.clone()).unwrap_err().starts_with("ports[0]: tx_run_frames must be at least 1"));
    s["ports"][0]["tx_run_frames"] = serde_json::json!(1_000_000);
    assert!(spec(s.clone()).unwrap_err().contains("above 4000000 frames"));
    s["ports"][0].as_object_mut().unwrap().remove("tx_run_frames");
    s["ports"][1]["tx_run_frames"] = serde_json::json!(100);
    assert!(spec(s).unwrap_err().contains("tx_run_frames need"));
}

#[test]
fn rate_step_plans_both_phases() {
    let mut s = base();
    s["ports"][0]["rate_step"] = serde_json::json!({"after_s": 1.0, "fps": 500});
    let p = spec(s.clone()).unwrap();
    let tx = p.ports[0].tx.as_ref().unwrap();
    let per_s = tx.rate_fps as u64;
    assert_eq!(tx.frames, per_s + 500);
    assert_eq!(tx.pace.step.unwrap().at_frame, per_s);
    s["ports"][0]["rate_step"] = serde_json::json!({"after_s": 2.0, "fps": 500});
    assert!(spec(s.clone()).unwrap_err().starts_with("ports[0].rate_step.after_s"));
    s["ports"][0]["rate_step"] = serde_json::json!({"after_s": 1.0, "fps": 0});
    assert!(spec(s).unwrap_err().starts_with("ports[0].rate_step.fps"));
}

#[test]
fn rates_are_frames_per_second() {
    // What a percentage or a bit rate means is the caller's (v6bench's core/rates.py): the engine takes frames/s.
    let mut s = base();
    s["ports"][0]["tx_rate"] = serde_json::json!({"fps": 1000});
    s["streams"] = serde_json::json!([{"tx_port": "a", "rx_port": "b", "ip_version": 4, "frame_size": 64}]);
    assert!((spec(s.clone()).unwrap().ports[0].tx.as_ref().unwrap().rate_fps - 1000.0).abs() < 1e-9);
    for other in [serde_json::json!({"percent_of_line": 10, "line_rate_bps": 1e9}), serde_json::json!({"l1_bps": 672000}),
                  serde_json::json!({"l2_bps": 512000}), serde_json::json!({"fps": 1000, "l1_bps": 5})] {
        s["ports"][0]["tx_rate"] = other;
        assert!(spec(s.clone()).unwrap_err().contains("unknown field"));
    }
    s["ports"][0]["tx_rate"] = serde_json::json!({"fps": 0});
    assert!(spec(s).unwrap_err().contains("tx_rate.fps"));
}

#[test]
fn several_senders_get_one_cpu_each_and_need_af_xdp() {
    let with = |queues: serde_json::Value, cpu: serde_json::Value, backend: &str| {
        let mut s = base();
        s["ports"][0]["tx_queues"] = queues;
        s["ports"][0]["tx_cpu"] = cpu;
        s["ports"][0]["backend"] = serde_json::json!(backend);
        spec(s)
    };
    let p = with(serde_json::json!(2), serde_json::json!([0, 1]), "af_xdp").unwrap();
    assert_eq!(p.ports[0].tx.as_ref().unwrap().cpus, vec![Some(0), Some(1)]);
    let p = with(serde_json::json!(3), serde_json::json!(1), "auto").unwrap();
    assert_eq!(p.ports[0].tx.as_ref().unwrap().cpus, vec![Some(1); 3], "one CPU for all");
    let p = with(serde_json::Value::Null, serde_json::Value::Null, "auto").unwrap();
    assert_eq!(p.ports[0].tx.as_ref().unwrap().queues(), 1);
    let e = with(serde_json::json!(2), serde_json::json!([0]), "af_xdp").unwrap_err();
    assert!(e.starts_with("ports[0].tx_cpu: 1 CPUs for 2 sender(s)"), "{e}");
    let e = with(serde_json::json!(0), serde_json::Value::Null, "af_xdp").unwrap_err();
    assert!(e.starts_with("ports[0].tx_queues: must be 1..=64"), "{e}");
    for backend in ["af_packet", "xdp_live"] {
        let e = with(serde_json::json!(2), serde_json::Value::Null, backend).unwrap_err();
        assert!(e.starts_with("ports[0].tx_queues: 2 senders need the af_xdp backend"), "{e}");
    }
    let mut s = base();
    s["ports"][1]["tx_queues"] = serde_json::json!(2);
    assert!(spec(s).unwrap_err().contains("need a port that sends"));
}

#[test]
fn errors_name_the_field() {
    let mut s = base();
    s["streams"][1]["frame_size"] = serde_json::json!(80);
    let e = spec(s).unwrap_err();
    assert!(e.starts_with("streams[1].frame_size"), "{e}");
    assert!(e.contains("84"), "{e}");

    let mut s = base();
    s["streams"][0]["rx_port"] = serde_json::json!("zz");
    assert!(spec(s).unwrap_err().starts_with("streams[0].rx_port: no port named"));

    let mut s = base();
    s["ports"][0]["gateway_ipv6"] = serde_json::Value::Null;
    assert!(spec(s).unwrap_err().contains("gateway_ipv6"));

    let mut s = base();
    s["bogus"] = serde_json::json!(1);
    assert!(spec(s).unwrap_err().contains("unknown field"));

    let mut s = base();
    s["frame_count"] = serde_json::json!(10);
    assert!(spec(s).unwrap_err().contains("exactly one of duration_s"));

    assert!(TrialSpec::from_json("{not json").unwrap_err().starts_with("trial spec:"));
}

#[test]
fn af_xdp_is_refused_where_it_cannot_serve() {
    let mut s = base();
    assert_eq!(spec(s.clone()).unwrap().ports[0].backend, Backend::Auto, "auto unless asked");
    s["ports"][0]["backend"] = serde_json::json!("af_xdp");
    assert_eq!(spec(s.clone()).unwrap().ports[0].backend, Backend::AfXdp);
    s["tx_stamp_check"] = serde_json::json!(true);
    assert!(spec(s.clone()).unwrap_err().starts_with("ports[0].backend: tx_stamp_check needs the af_packet backend"));
    let mut s = base();
    s["ports"][0]["backend"] = serde_json::json!("af_xdp");
    s["streams"][0]["frame_size"] = serde_json::json!(9000);
    s["streams"][1]["frame_size"] = serde_json::json!(9000);
    let e = spec(s).unwrap_err();
    assert!(e.starts_with("ports[0].backend: af_xdp carries frames of at most 1796 bytes"), "{e}");
    let mut s = base();
    s["ports"][0]["backend"] = serde_json::json!("xdp");
    assert!(spec(s).unwrap_err().contains("unknown variant"));
}

#[test]
fn xdp_live_takes_one_whole_udp_stream_at_one_rate() {
    let live = |mut s: serde_json::Value| {
        s["ports"][0]["backend"] = serde_json::json!("xdp_live");
        spec(s)
    };
    let e = live(base()).unwrap_err();
    assert_eq!(e, "ports[0].backend: xdp_live sends one stream a port, this port sends 2");
    let mut one = base();
    one["streams"].as_array_mut().unwrap().pop();
    assert_eq!(live(one.clone()).unwrap().ports[0].backend, Backend::XdpLive);
    let mut s = one.clone();
    s["streams"][0]["protocol"] = serde_json::json!("icmp_echo");
    s["streams"][0]["rx_port"] = serde_json::json!("a");
    s["streams"][0]["dst_ip"] = serde_json::json!("198.18.0.1");
    assert!(live(s).unwrap_err().starts_with("ports[0].backend: xdp_live sends UDP frames whole"));
    let mut s = one.clone();
    s["streams"][0]["frame_size"] = serde_json::json!(1518);
    s["streams"][0]["fragment_mtu"] = serde_json::json!(576);
    assert!(live(s).unwrap_err().starts_with("ports[0].backend: xdp_live sends UDP frames whole"));
    let mut s = one.clone();
    s["ports"][0]["rate_step"] = serde_json::json!({"after_s": 1.0, "fps": 500});
    assert_eq!(live(s).unwrap_err(), "ports[0].backend: xdp_live sends at one constant rate (no rate_step)");
    let mut s = one;
    s["tx_stamp_check"] = serde_json::json!(true);
    assert!(live(s).unwrap_err().contains("xdp_live has no kernel transmit stamps"));
}

#[test]
fn refuses_non_benchmarking_addresses_by_default() {
    let mut s = base();
    s["streams"][0]["dst_ip"] = serde_json::json!("192.168.1.1");
    assert!(spec(s.clone()).unwrap_err().contains("benchmarking blocks"));
    s["allow_non_benchmarking_addresses"] = serde_json::json!(true);
    assert!(spec(s).is_ok());
    assert!(is_benchmarking(&"198.19.255.255".parse().unwrap()));
    assert!(!is_benchmarking(&"198.20.0.1".parse().unwrap()));
    assert!(is_benchmarking(&"2001:2:0:ffff::1".parse().unwrap()));
    assert!(!is_benchmarking(&"2001:2:1::1".parse().unwrap()));
}

#[test]
fn fragmented_streams_count_every_wire_frame_in_bit_rates() {
    let mut s = base();
    s["ports"][0]["tx_rate"] = serde_json::json!({"fps": 1e6 / (8.0 * (1632.0 + 80.0))});  // 1 Mb/s at layer 1
    s["streams"] = serde_json::json!([{"tx_port": "a", "rx_port": "b", "ip_version": 4, "frame_size": 1518, "fragment_mtu": 500}]);
    let p = spec(s.clone()).unwrap();
    // 1480 data bytes in 480 + 480 + 480 + 40: frames of 518, 518, 518, 78.
    assert_eq!(p.streams[0].wire_frame_sizes(), vec![518, 518, 518, 78]);
    let tx = p.ports[0].tx.as_ref().unwrap();
    // The result's bit rates (assemble.rs) count the four wire frames, each with its 20 bytes at layer 1.
    assert_eq!((tx.mean_wire_bytes, tx.mean_wire_frames), (1632.0, 4.0));
    assert!((crate::rate::l1_bps(tx.rate_fps, crate::rate::l1_bytes(tx.mean_wire_bytes, tx.mean_wire_frames)) - 1e6).abs() < 1e-6);
    assert_eq!(p.ports[0].max_frame_size, 518);
    assert_eq!(p.ports[1].max_frame_size, 0, "IPv4 may be fragmented again on the way");
    s["streams"][0]["fragment_mtu"] = serde_json::json!(67);
    assert!(spec(s.clone()).unwrap_err().starts_with("streams[0].fragment_mtu: must be 68..="));
    s["streams"][0]["ip_version"] = serde_json::json!(6);
    s["streams"][0]["fragment_mtu"] = serde_json::json!(1000);
    assert!(spec(s.clone()).unwrap_err().contains("1280"));
    s["streams"][0]["fragment_mtu"] = serde_json::json!(1280);
    s["streams"][0]["ipv6_ext_headers"] = serde_json::json!([{"kind": "hop_by_hop"}]);
    assert!(spec(s).unwrap_err().contains("not fragmented at the source"));
}

#[test]
fn minimum_frames() {
    assert_eq!(min_frame_size(4), 64);
    assert_eq!(min_frame_size(6), 84);
}

#[test]
fn ports_open_only_in_the_labs_namespaces() {
    let mut s = base();
    s["ports"][1]["netns"] = serde_json::json!("other");
    assert_eq!(spec(s.clone()).unwrap_err(), "ports[1].netns: \"other\" is not one of the lab's namespaces (names starting with \"ns\")");
    s["ports"][1]["netns"] = serde_json::json!("ns2");
    s.as_object_mut().unwrap().remove("netns_prefix");
    assert!(spec(s.clone()).unwrap_err().starts_with("ports[0].netns: \"ns1\" needs the spec's netns_prefix"));
    s["netns_prefix"] = serde_json::json!("");
    assert!(spec(s.clone()).unwrap_err().starts_with("netns_prefix:"));
    let mut s = base();
    for p in s["ports"].as_array_mut().unwrap() {
        p.as_object_mut().unwrap().remove("netns");
    }
    s.as_object_mut().unwrap().remove("netns_prefix");
    assert!(spec(s).is_ok(), "ports in the engine's own namespace need no prefix (allow_root_netns guards the root one)");
}

/// Arbitrary JSON in place of any part of a valid spec is refused with a
/// message or planned (what `check` does before anything is sent); it
/// never panics. (`v6bench-engine frames` builds a planned spec's frames:
/// tests/unit/test_engine_cli.py feeds it mutated specs.)
#[test]
fn arbitrary_spec_json_never_panics() {
    let mut rng = crate::fuzz::XorShift::for_test(0x2545_f491_4f6c_dd1d);
    let mut next = move || rng.next();
    let values = |r: u64| -> serde_json::Value {
        match r % 14 {
            0 => serde_json::Value::Null,
            1 => serde_json::json!(true),
            2 => serde_json::json!(-1),
            3 => serde_json::json!(0),
            4 => serde_json::json!(u64::MAX),
            5 => serde_json::json!(1e308),
            6 => serde_json::json!(-0.0),
            7 => serde_json::json!(""),
            8 => serde_json::json!("x/../y"),
            9 => serde_json::json!([]),
            10 => serde_json::json!({}),
            11 => serde_json::json!(65_536),
            12 => serde_json::json!(9_000),
            _ => serde_json::json!("2001:2::ffff"),
        }
    };
    let (mut planned, mut refused) = (0, 0);
    for _ in 0..crate::fuzz::cases(20_000) {
        let mut s = base();
        for _ in 0..1 + next() % 3 {
            // A random place: the top level, a port or a stream, then a key that is there or not.
            let r = next();
            let part = ["", "ports", "streams"][(r % 3) as usize];
            let i = (r / 3 % 2) as usize;
            let inner = !part.is_empty() && s.get(part).and_then(|v| v.get(i)).is_some_and(|v| v.is_object());
            let target = if inner { &mut s[part][i] } else { &mut s };
            let Some(obj) = target.as_object_mut() else { continue };
            let keys: Vec<String> = obj.keys().cloned().collect();
            let extra = ["tx_rate", "frame_count", "fragment_mtu", "ipv6_ext_headers", "protocol", "rx_cpu", "mac", "backend", "tx_queues", "learning"];
            let key = if next() % 2 == 0 { keys[(next() % keys.len() as u64) as usize].clone() } else { extra[(next() % extra.len() as u64) as usize].to_string() };
            obj.insert(key, values(next()));
        }
        match spec(s) {
            Ok(_) => planned += 1,
            Err(e) => {
                refused += 1;
                assert!(!e.is_empty());
            }
        }
    }
    assert!(planned > 0 && refused > 0, "both kinds seen: {planned} planned, {refused} refused");
}

#[test]
fn a_walk_starts_the_stream_at_its_first_values_and_is_refused_where_it_cannot_serve() {
    let mut s = base();
    s["streams"][0]["walk"] = serde_json::json!({"dst_ip": ["198.19.1.0-198.19.1.9"], "dst_port": [9, "100-101"]});
    let p = spec(s).unwrap();
    assert_eq!((p.streams[0].dst_ip, p.streams[0].dst_port), ("198.19.1.0".parse::<IpAddr>().unwrap(), 9));
    assert_eq!(p.streams[0].walk.as_ref().unwrap().fields.len(), 2);
    let with = |stream: usize, walk: serde_json::Value, change: &dyn Fn(&mut serde_json::Value)| {
        let mut s = base();
        s["streams"][stream]["walk"] = walk;
        change(&mut s);
        spec(s)
    };
    let dst = serde_json::json!({"dst_ip": ["198.19.1.0-198.19.1.9"]});
    let e = with(0, dst.clone(), &|s| s["streams"][0]["dst_ip"] = serde_json::json!("198.19.0.7")).unwrap_err();
    assert_eq!(e, "streams[0]: give dst_ip or walk.dst_ip, not both");
    let far = serde_json::json!({"dst_ip": ["203.0.113.1"]});
    let e = with(0, far.clone(), &|_| {}).unwrap_err();
    assert!(e.starts_with("streams[0].walk.dst_ip[0]: 203.0.113.1 leaves the benchmarking blocks"), "{e}");
    assert!(with(0, far, &|s| s["allow_non_benchmarking_addresses"] = serde_json::json!(true)).is_ok());
    let e = with(0, dst.clone(), &|s| {
        s["streams"][0]["protocol"] = serde_json::json!("icmp_echo");
        s["streams"][0]["rx_port"] = serde_json::json!("a");
        s["streams"][0]["dst_ip"] = serde_json::json!("198.18.0.1");
    })
    .unwrap_err();
    assert_eq!(e, "streams[0].walk: only udp streams walk");
    let e = with(1, serde_json::json!({"dst_ip": ["2001:2:0:1::9"]}), &|s| {
        s["streams"][1]["ipv6_ext_headers"] = serde_json::json!([{"kind": "srh", "segments": ["2001:2:0:1::2", "2001:2::1"], "segments_left": 1}]);
        s["streams"][1]["frame_size"] = serde_json::json!(200);
    })
    .unwrap_err();
    assert_eq!(e, "streams[1].walk.dst_ip: a stream with a routing header is sent to its segments, not walked");
    let e = with(0, dst, &|s| {
        s["ports"][0]["backend"] = serde_json::json!("xdp_live");
        s["streams"].as_array_mut().unwrap().pop();
    })
    .unwrap_err();
    assert!(e.starts_with("ports[0].backend: xdp_live sends UDP frames whole from one template") && e.contains("no walk"), "{e}");
    let e = with(0, serde_json::json!({"dst_ip": ["198.19.1.1"], "bogus": 1}), &|_| {}).unwrap_err();
    assert!(e.contains("unknown field `bogus`"), "{e}");
}

#[test]
fn a_translated_stream_arrives_as_the_other_family() {
    let mut s = base();
    s["streams"][1]["dst_ip"] = serde_json::json!("2001:2:0:6464::c613:2");
    s["streams"][1]["rx_ip_version"] = serde_json::json!(4);
    s["streams"][1]["frame_size"] = serde_json::json!(1518);
    let p = spec(s.clone()).unwrap();
    assert!(p.streams[1].translated() && !p.streams[0].translated());
    assert_eq!((p.streams[1].rx_ip_version, p.streams[1].rx_frame_size()), (4, 1498));
    assert_eq!(p.ports[1].max_frame_size, 0, "an IPv4 frame may arrive in fragments");
    // IPv4 in, IPv6 out: the frame grows by 20 bytes, which the receiving port must take whole.
    s["streams"][0]["rx_ip_version"] = serde_json::json!(6);
    s["streams"][0]["frame_size"] = serde_json::json!(1500);
    s["streams"][1]["rx_ip_version"] = serde_json::json!(6);
    assert_eq!(spec(s.clone()).unwrap().ports[1].max_frame_size, 1520);
    for (key, value) in [("fragment_mtu", serde_json::json!(1280)), ("ipv6_ext_headers", serde_json::json!([{"kind": "hop_by_hop", "len": 8}]))] {
        let mut t = s.clone();
        t["streams"][1]["rx_ip_version"] = serde_json::json!(4);
        t["streams"][1][key] = value;
        let e = spec(t).unwrap_err();
        assert!(e.contains("rx_ip_version: a translated stream carries UDP test frames whole"), "{key}: {e}");
    }
    s["streams"][0]["rx_ip_version"] = serde_json::json!(5);
    assert_eq!(spec(s).unwrap_err(), "streams[0].rx_ip_version: must be 4 or 6, got 5");
}

#[test]
fn learning_and_replying_streams_are_checked() {
    let mut s = base();
    s["streams"][0]["learn_tuples"] = serde_json::json!(true);
    assert!(spec(s.clone()).unwrap().streams[0].learn_tuples);
    s["streams"][0]["protocol"] = serde_json::json!("icmp_echo");
    s["streams"][0]["dst_ip"] = serde_json::json!("198.19.0.2");
    s["streams"][0]["rx_port"] = serde_json::json!("a");
    let e = spec(s).unwrap_err();
    assert!(e.starts_with("streams[0].learn_tuples: learns UDP test frames"), "{e}");
    let mut s = base();
    s["streams"][0]["learn_tuples"] = serde_json::json!(true);
    s["streams"][0]["frame_size"] = serde_json::json!(1518);
    s["streams"][0]["fragment_mtu"] = serde_json::json!(576);
    assert!(spec(s).unwrap_err().starts_with("streams[0].learn_tuples: learns frames sent whole"));
    let mut s = base();
    s["streams"][0]["learn_tuples"] = serde_json::json!(true);
    s["duration_s"] = serde_json::json!(5000.0);
    assert!(spec(s).unwrap_err().starts_with("streams[0].learn_tuples: the stream sends 4500000 frames, more than the 4194304"));
    // 198.19.0.1:40000 -> 198.18.0.2:7, as IPv4 records
    let record = "BMYTAAHGEgACnEAABw==";
    let mut s = base();
    s["streams"][0]["walk"] = serde_json::json!({"reply_to": record});
    let p = spec(s.clone()).unwrap();
    assert_eq!((p.streams[0].dst_ip, p.streams[0].src_ip, p.streams[0].dst_port, p.streams[0].src_port), ("198.19.0.1".parse::<IpAddr>().unwrap(), "198.18.0.2".parse::<IpAddr>().unwrap(), 40000, 7));
    s["streams"][0]["walk"] = serde_json::json!({"reply_to": record, "order": "permuted"});
    assert!(spec(s.clone()).unwrap_err().starts_with("streams[0].walk.reply_to: replies pair each record's fields"));
    s["streams"][0]["walk"] = serde_json::json!({"reply_to": record, "dst_port": [9]});
    assert!(spec(s.clone()).unwrap_err().starts_with("streams[0].walk.reply_to: gives dst_ip, src_ip, dst_port and src_port"));
    s["streams"][0]["walk"] = serde_json::json!({"reply_to": record});
    s["streams"][0]["dst_ip"] = serde_json::json!("198.19.0.2");
    assert!(spec(s.clone()).unwrap_err().starts_with("streams[0]: give dst_ip or walk.dst_ip, not both"));
    s["streams"][0].as_object_mut().unwrap().remove("dst_ip");
    s["streams"][1]["walk"] = serde_json::json!({"reply_to": record});
    assert!(spec(s).unwrap_err().contains("records of IPv4 frames; this stream is IPv6"));
}
