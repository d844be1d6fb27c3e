//! v6bench-engine: reads a trial spec (JSON) and prints a trial result (JSON).
//!
//! Commands (docs/engine-spec.md):
//!   run    [--spec FILE|-] [--pretty]   run one trial (spec from stdin by default)
//!   check  [--spec FILE|-]              validate a spec and print the plan
//!   frames --spec FILE --out PCAP [--count N] [--timestamp-ns T]
//!                                       write the frames a spec would send
//!   rr     [--spec FILE|-] [--pretty]   UDP request/response between two
//!                                       namespaces' own stacks (src/rr.rs)
//!   version                             print engine and format versions
//!
//! Exit status: 0 success; 2 bad input (usage or spec); 1 the trial could
//! not run (namespace, interface, learning, permissions); 130 interrupted
//! (a result is still printed).

mod assemble;
mod bpf;
mod clock;
mod frame;
#[cfg(test)]
mod fuzz;
mod learn;
mod live;
mod mix;
mod netns;
mod pace;
mod pcap;
mod rate;
mod reassembly;
mod responder;
mod result;
mod ring;
mod rr;
mod rx;
mod rxport;
mod sock;
mod spec;
mod stats;
mod trial;
mod tuples;
mod tx;
mod txstamp;
mod walk;
mod wire;
mod xsk;

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// An error with the exit status it maps to.
struct Failure(i32, String);

fn bad_input(msg: impl Into<String>) -> Failure {
    Failure(2, msg.into())
}

struct Args {
    cmd: String,
    spec: Option<String>,
    out: Option<String>,
    count: u64,
    timestamp_ns: u64,
    pretty: bool,
}

const USAGE: &str = "usage: v6bench-engine run [--spec FILE|-] [--pretty] | rr [--spec FILE|-] [--pretty] | check [--spec FILE|-] | frames --spec FILE --out PCAP [--count N] [--timestamp-ns T] | version";

fn parse_args() -> Result<Args, Failure> {
    let mut it = std::env::args().skip(1);
    let cmd = it.next().ok_or_else(|| bad_input(USAGE))?;
    let mut a = Args { cmd, spec: None, out: None, count: 10, timestamp_ns: 0, pretty: false };
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| bad_input(format!("{name} needs a value")));
        match flag.as_str() {
            "--spec" => a.spec = Some(value("--spec")?),
            "--out" => a.out = Some(value("--out")?),
            "--count" => a.count = value("--count")?.parse().map_err(|_| bad_input("--count needs a whole number"))?,
            "--timestamp-ns" => a.timestamp_ns = value("--timestamp-ns")?.parse().map_err(|_| bad_input("--timestamp-ns needs a whole number"))?,
            "--pretty" => a.pretty = true,
            "-h" | "--help" => return Err(Failure(0, USAGE.into())),
            other => return Err(bad_input(format!("unknown option {other:?}; {USAGE}"))),
        }
    }
    Ok(a)
}

fn read_text(path: Option<&str>) -> Result<String, Failure> {
    Ok(match path {
        None | Some("-") => {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).map_err(|e| bad_input(format!("cannot read the spec from stdin: {e}")))?;
            s
        }
        Some(p) => std::fs::read_to_string(p).map_err(|e| bad_input(format!("cannot read spec file {p}: {e}")))?,
    })
}

fn read_spec(path: Option<&str>) -> Result<spec::Plan, Failure> {
    let text = read_text(path)?;
    spec::TrialSpec::from_json(&text).and_then(|s| s.validate()).map_err(bad_input)
}

fn print_json<T: serde::Serialize>(v: &T, pretty: bool) -> Result<(), Failure> {
    let text = if pretty { serde_json::to_string_pretty(v) } else { serde_json::to_string(v) }.map_err(|e| Failure(1, format!("cannot encode JSON: {e}")))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").map_err(|e| Failure(1, format!("cannot write result: {e}")))
}

/// SIGINT and SIGTERM stop the trial (senders first, then the count);
/// so does the death of the process that started the engine (SIGKILL of
/// `v6bench` included): the engine never sends on for a parent that is gone.
fn catch_signals() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe; prctl and getppid have no
    // memory effects on this process.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong, 0, 0, 0);
        if libc::getppid() == 1 {
            on_signal(libc::SIGTERM); // the parent died before the line above
        }
    }
}

fn cmd_run(a: &Args) -> Result<i32, Failure> {
    let plan = read_spec(a.spec.as_deref())?;
    catch_signals();
    let res = trial::run(&plan, &STOP).map_err(|e| Failure(1, e))?;
    let interrupted = res.status == "interrupted";
    print_json(&res, a.pretty)?;
    Ok(if interrupted { 130 } else { 0 })
}

fn cmd_rr(a: &Args) -> Result<i32, Failure> {
    let spec = rr::RrSpec::from_json(&read_text(a.spec.as_deref())?).and_then(rr::RrSpec::validate).map_err(bad_input)?;
    catch_signals();
    let res = rr::run(&spec, &STOP).map_err(|e| Failure(1, e))?;
    print_json(&res, a.pretty)?;
    Ok(if STOP.load(Ordering::SeqCst) { 130 } else { 0 })
}

#[derive(serde::Serialize)]
struct PlanSummary {
    spec_version: u32,
    /// With `after_stall: slip`, the backlog beyond which a sender slips.
    slip_after_frames: Option<u64>,
    /// The receive thread's SCHED_FIFO priority where every port receives through AF_XDP.
    rx_priority: Option<u8>,
    ports: Vec<PortSummary>,
    streams: Vec<StreamSummary>,
}

#[derive(serde::Serialize)]
struct PortSummary {
    name: String,
    rate_fps: Option<f64>,
    frames: Option<u64>,
    schedule_window: Option<u64>,
}

#[derive(serde::Serialize)]
struct StreamSummary {
    index: u16,
    name: String,
    ip_version: u8,
    src_ip: String,
    dst_ip: String,
    /// The first frame's UDP ports (a walk's first values).
    src_port: u16,
    dst_port: u16,
    frame_size: usize,
    frames: u64,
}

fn cmd_check(a: &Args) -> Result<i32, Failure> {
    let plan = read_spec(a.spec.as_deref())?;
    let summary = PlanSummary {
        spec_version: spec::SPEC_VERSION,
        slip_after_frames: plan.slip_after_frames,
        rx_priority: plan.rx_priority,
        ports: plan
            .ports
            .iter()
            .map(|p| PortSummary { name: p.name.clone(), rate_fps: p.tx.as_ref().map(|t| t.rate_fps), frames: p.tx.as_ref().map(|t| t.frames), schedule_window: p.tx.as_ref().map(|t| t.schedule.window()) })
            .collect(),
        streams: plan
            .streams
            .iter()
            .map(|s| StreamSummary { index: s.index, name: s.name.clone(), ip_version: s.ip_version(), src_ip: s.src_ip.to_string(), dst_ip: s.dst_ip.to_string(), src_port: s.src_port, dst_port: s.dst_port, frame_size: s.frame_size, frames: s.frames })
            .collect(),
    };
    print_json(&summary, true)?;
    Ok(0)
}

fn cmd_frames(a: &Args) -> Result<i32, Failure> {
    let plan = read_spec(a.spec.as_deref())?;
    let out = a.out.as_deref().ok_or_else(|| bad_input("frames needs --out PCAP"))?;
    let mut w = std::io::BufWriter::new(std::fs::File::create(out).map_err(|e| Failure(1, format!("cannot create {out}: {e}")))?);
    pcap::write_header(&mut w, spec::MAX_FRAME_SIZE as u32).map_err(|e| Failure(1, e.to_string()))?;
    for (pi, p) in plan.ports.iter().enumerate() {
        let Some(t) = &p.tx else { continue };
        let (spec::MacChoice::Given(src), Some(dst)) = (p.mac, p.next_hop_mac) else {
            return Err(bad_input(format!("ports[{pi}]: frames needs an explicit mac and next_hop_mac (no interface is opened)")));
        };
        let templates: Vec<frame::Template> = t.streams.iter().map(|&si| frame::Template::new(&plan.streams[si], src, dst)).collect();
        let mut cursor = mix::Cursor::new(&t.schedule);
        let mut slot = vec![0u8; templates.iter().map(frame::Template::wire_len).max().unwrap_or(0)];
        let mut scratch = vec![0u8; spec::MAX_FRAME_SIZE];
        for k in 0..a.count.min(t.frames) {
            let (si, seq) = cursor.next(&t.schedule);
            let ts = a.timestamp_ns + t.pace.due_ns(k) as u64;
            let tpl = &templates[si];
            tpl.write_wire(&mut slot, &mut scratch, seq, ts, k);
            for j in 0..tpl.wire_frames() {
                pcap::write_record(&mut w, ts, &slot[tpl.wire_frame(j)]).map_err(|e| Failure(1, e.to_string()))?;
            }
        }
    }
    w.flush().map_err(|e| Failure(1, e.to_string()))?;
    Ok(0)
}

fn cmd_version() -> Result<i32, Failure> {
    print_json(&serde_json::json!({"engine_version": env!("CARGO_PKG_VERSION"), "spec_version": spec::SPEC_VERSION, "result_version": result::RESULT_VERSION}), false)?;
    Ok(0)
}

fn main() {
    let outcome = parse_args().and_then(|a| match a.cmd.as_str() {
        "run" => cmd_run(&a),
        "rr" => cmd_rr(&a),
        "check" => cmd_check(&a),
        "frames" => cmd_frames(&a),
        "version" | "--version" => cmd_version(),
        "-h" | "--help" | "help" => Err(Failure(0, USAGE.into())),
        other => Err(bad_input(format!("unknown command {other:?}; {USAGE}"))),
    });
    match outcome {
        Ok(code) => std::process::exit(code),
        Err(Failure(0, msg)) => println!("{msg}"),
        Err(Failure(code, msg)) => {
            eprintln!("v6bench-engine: error: {}", one_line(&msg));
            std::process::exit(code);
        }
    }
}

/// An error as the one line the exit statuses promise: control characters
/// and line or paragraph separators an input put in it (a key or value
/// quoted back) are written as escapes.
fn one_line(msg: &str) -> String {
    msg.chars()
        .map(|c| if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') { c.escape_default().to_string() } else { c.to_string() })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_error_is_one_line_whatever_the_input_put_in_it() {
        let line = super::one_line("unknown field `\u{1e}\n\u{85}\u{2028}`, expected `fps`");
        assert_eq!(line, "unknown field `\\u{1e}\\n\\u{85}\\u{2028}`, expected `fps`");
        assert_eq!(line.lines().count(), 1);
    }
}
