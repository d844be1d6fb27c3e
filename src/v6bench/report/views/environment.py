"""What produced the results (docs/results-format.md: every result carries its
configuration): the run, the machine and tools, the lab, the DUT's
configuration with its rule sets and sysctls, and the tester's self-test."""

from __future__ import annotations

import json
import time

from ...core import machine
from ..data import RunData
from ..model import Section, Table


def _when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(t)) if t else "-"


def _lab_rows(env: dict) -> list[tuple]:
    lab = env.get("lab", {})
    dut = env.get("dut", {})
    plan = lab.get("cpu_plan") or {}
    rows = [("topology", lab.get("topology")), ("link speed [b/s]", lab.get("link_speed_bps")), ("MTU", json.dumps(lab.get("mtu"))),
            ("CPU arrangement", plan.get("arrangement")),
            ("tester CPUs (send / receive)", f"{plan.get('tester_tx')} / {plan.get('tester_rx')}"),
            ("DUT CPUs", str(plan.get("dut"))),
            ("tester and DUT share CPUs", "yes" if plan.get("shared") else "no"),
            ("DUT", dut.get("description")), ("DUT configuration", json.dumps(dut.get("config"), sort_keys=True))]
    if "selftest_id" in env:  # the self-test of this lab's CPU arrangement, its trials were checked against
        rows.append(("tester self-test checked against", f"#{env['selftest_id']}" if env["selftest_id"] else "none"))
    for node, ruleset in (dut.get("rulesets") or {}).items():
        rows.append((f"{node} nftables ruleset", ruleset or "(none)"))
    for node, sysctls in (lab.get("sysctls") or {}).items():
        rows.append((f"{node} sysctls", "\n".join(f"{k} = {v}" for k, v in sysctls.items())))
    for node, dp in (dut.get("datapaths") or {}).items():
        rows.append((f"{node} datapath", dp if isinstance(dp, str) else json.dumps(dp, indent=1, sort_keys=True)))
    return rows


def _machine_rows(env: dict) -> list[tuple]:
    """The machine's record beyond its label (docs/compare.md): what a figure from this run holds for."""
    if not isinstance(env.get("host"), dict):
        return [("machine record", "not recorded (a run stored before v6bench recorded the machine)")]
    h = env["host"]
    caches = ", ".join(f"L{c['level']} {c['type'].lower()} {c['size_bytes'] // 1024} KiB" for c in h.get("caches") or [])
    mem = h.get("memory_bytes")
    return [("CPU vendor, family, model, stepping", f"{h.get('vendor')}, {h.get('family')}, {h.get('model')}, {h.get('stepping')}"),
            ("microcode", h.get("microcode")), ("caches (CPU 0)", caches or "-"),
            ("CPUs, cores, threads a core, sockets", f"{h.get('cpus')}, {h.get('cores')}, {h.get('threads_per_core')}, {h.get('sockets')}"),
            ("hypervisor, virtualization", f"{h.get('hypervisor') or 'none'}, {h.get('virtualization') or '-'}"),
            ("memory", f"{mem / 2 ** 30:.1f} GiB" if mem else "-")]


def ports_rows(tests) -> list[tuple]:
    """The UDP ports the run's trials sent (each trial's ``ports`` record),
    counted by scenario and what was used, with the ranges walked."""
    counts: dict[tuple, int] = {}
    for t in tests:
        for tr in t.trials:
            rec = (tr.get("result") or {}).get("ports")
            if not rec:
                continue
            src = ", ".join(f"flow {k}: {lo}-{hi}" for k, (lo, hi) in sorted((rec.get("src") or {}).items()))
            dst = "{}-{}".format(*rec["dst"]) if rec.get("dst") else ""
            key = (t.scenario, rec["used"] + (f" (asked {rec['asked']})" if rec["asked"] not in ("auto", rec["used"]) else ""),
                   src or "-", dst or "-")
            counts[key] = counts.get(key, 0) + 1
    return [(sc, used, n, src, dst) for (sc, used, src, dst), n in sorted(counts.items())]


def environment(data: RunData) -> Section:
    run = data.run
    env = run["environment"]
    eng = env.get("engine") or {}
    tools = env.get("tools") or {}
    rows = [("run", f"{run['id']}: {run['name']} ({run['status']})"), ("command", run["command"]),
            ("campaign file", f"{run.get('campaign_path') or '-'} (sha256 {run.get('campaign_sha256') or '-'})"),
            ("started", _when(run["started_at_unix_s"])), ("finished", _when(run.get("finished_at_unix_s"))),
            ("tests finished", len(data.tests)), ("tests failed or interrupted", data.unfinished),
            ("kernel", env.get("kernel")), ("machine", machine.label(env)), *_machine_rows(env),
            ("tester and DUT on one machine", "yes" if env.get("shared_machine", True) else "no"),
            ("v6bench", env.get("v6bench")), ("engine", eng.get("engine_version")), ("python", env.get("python")),
            ("iperf3", tools.get("iperf3") or "-")]
    if run.get("error"):
        rows.append(("error", run["error"]))
    if env.get("resumed"):
        rows.append(("resumed", ", ".join(e.get("kernel", "?") for e in env["resumed"]) + " (kernel of each resumed session)"))
    blocks = [Table("run", "Run, machine and tools", ("item", "value"), tuple(rows))]
    scenarios = env.get("scenarios") or {"": env}
    for name, senv in scenarios.items():
        title = f"Lab and DUT configuration: scenario {name}" if name else "Lab and DUT configuration"
        blocks.append(Table("lab" + (f"-{name}" if name else ""), title, ("item", "value"), tuple(_lab_rows(senv))))
    st = data.selftest
    if st:
        st_rows = [(fs, c.get("capacity_fps"), "yes" if c.get("capacity_is_link_rate") else "no", c.get("latency_floor_ns"),
                    c.get("latency_stddev_ns"), c.get("tx_stamp_lead_p50_ns"), c.get("tx_stamp_lead_p99_ns"))
                   for fs, c in (st.get("capacity") or {}).items()]
        blocks.append(Table("selftest", f"Tester self-test ({st.get('topology')}, {_when(st.get('created_at_unix_s'))})",
                            ("frame size [B]", "tester capacity [fps]", "capacity is the link rate", "latency floor [ns]",
                             "latency error bar [ns]", "stamp to driver p50 [ns]", "stamp to driver p99 [ns]"),
                            tuple(st_rows), "The tester's own capacity and latency floor, back to back without a DUT. "
                            "Stamp to driver: how much earlier than the kernel's software transmit stamp a frame "
                            "carries its transmit time (docs/engine-spec.md); part of the floor."))
    ports = ports_rows(data.tests)
    if ports:
        blocks.append(Table("ports", "UDP ports of the test frames", ("scenario", "ports", "trials", "source ports",
                                                                      "destination ports"), tuple(ports),
                            "What each trial sent, as it stored it (docs/methods.md, \"UDP ports\"): RFC 4814's "
                            "pseudorandom ports, each flow in its share of the source range, or one fixed 5-tuple a "
                            "stream (through a DUT that keeps state). Trials stored before 2026-11-28 sent fixed "
                            "ports and say nothing."))
    if data.campaign_toml:
        blocks.append(Table("campaign", "Campaign file", ("campaign",), ((data.campaign_toml,),)))
    return Section("environment", "Environment and DUT configuration",
                   "The configuration that produced every result in this report. The tester and the DUT share this "
                   "machine; their CPUs are kept apart where the machine allows (tester and DUT share CPUs: see below).",
                   tuple(blocks))
