#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The demo's report (demo/run.sh): picks the checkout trace from
kmon-trace's OTLP and draws it (checkout-trace.svg, a waterfall of its
spans, and checkout-trace.json, the trace as written), sums up the load
generator's ground truth and kmond's own cost, and writes index.html,
which shows every picture of the folder together.

  report.py DIR --fault-tier TIER --fault-ms MS --seconds WALL"""
import argparse
import html
import json
import os
import zlib

SERVER, CLIENT = 2, 3


def attrs(obj):
    out = {}
    for a in obj.get("attributes", []):
        v = a["value"]
        out[a["key"]] = next(iter(v.values())) if v else None
    return out


def spans_of(trace):
    """Every span of one OTLP line, with its service and attributes."""
    out = []
    for rs in trace["resourceSpans"]:
        service = attrs(rs["resource"]).get("service.name", "?")
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                out.append(dict(s, service=service, attrs=attrs(s),
                                start=int(s["startTimeUnixNano"]), end=int(s["endTimeUnixNano"])))
    return out


def checkout_trace(path):
    """The successful checkout whose trace reaches the most services (the
    first such one): (OTLP line, its spans)."""
    best = None
    for line in open(path):
        spans = spans_of(json.loads(line))
        root = [s for s in spans if s["service"] == "checkout" and s["kind"] == SERVER
                and s["attrs"].get("http.route", "").startswith("/checkout")
                and s["attrs"].get("http.response.status_code") == "200"]
        if not root:
            continue
        score = len({s["service"] for s in spans})
        if best is None or score > best[0]:
            best = (score, line, spans)
    if best is None:
        raise SystemExit("report: no successful checkout in the traces")
    return best[1], best[2]


def colour(service):
    hue = zlib.crc32(service.encode()) % 360
    return f"hsl({hue},55%,62%)"


def waterfall(spans, title):
    """An SVG of the spans: one row each, in tree order, on a time axis."""
    by_id = {s["spanId"]: s for s in spans}
    children = {}
    for s in spans:
        parent = s.get("parentSpanId")
        children.setdefault(parent if parent in by_id else None, []).append(s)
    rows = []

    def walk(s, depth):
        rows.append((s, depth))
        for c in sorted(children.get(s["spanId"], []), key=lambda c: c["start"]):
            walk(c, depth + 1)

    for root in sorted(children.get(None, []), key=lambda s: s["start"]):
        walk(root, 0)
    t0 = min(s["start"] for s in spans)
    t1 = max(s["end"] for s in spans)
    width, left, row = 1200, 380, 22
    scale = (width - left - 80) / max(1, t1 - t0)  # room for the last label
    height = 50 + row * len(rows) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="22" font-size="15">{html.escape(title)}</text>']
    for i, (s, depth) in enumerate(rows):
        y = 40 + i * row
        a = s["attrs"]
        what = a.get("http.route") or a.get("db.system") or s["name"]
        status = a.get("http.response.status_code") or a.get("db.response.status_code") or ""
        kind = "server" if s["kind"] == SERVER else "client"
        label = f"{s['service']} {kind}: {what} {status}".strip()
        x = left + (s["start"] - t0) * scale
        w = max(1.0, (s["end"] - s["start"]) * scale)
        fill = "#d62728" if s.get("status", {}).get("code") == 2 else colour(s["service"])
        ms = (s["end"] - s["start"]) / 1e6
        out.append(f'<g><title>{html.escape(label)}: {ms:.2f} ms</title>'
                   f'<text x="{10 + 12 * depth}" y="{y + 14}">{html.escape(label[:48])}</text>'
                   f'<rect x="{x:.1f}" y="{y + 2}" width="{w:.1f}" height="{row - 6}" fill="{fill}"/>'
                   f'<text x="{x + w + 4:.1f}" y="{y + 14}" fill="#555">{ms:.2f} ms</text></g>')
    total = (t1 - t0) / 1e6
    out.append(f'<text x="{left}" y="{height - 10}" fill="#555">0 ms</text>'
               f'<text x="{width - 80}" y="{height - 10}" text-anchor="end" fill="#555">{total:.2f} ms</text>')
    out.append("</svg>")
    return "\n".join(out)


def kmond_cost(records):
    """kmond's CPU (mean % of one core over its stats records) and peak
    RSS, from its own stats records."""
    stats = [json.loads(line) for line in open(records) if '"kind":"stats"' in line]
    cpu = [s["cpu"] for s in stats]
    return {"cpu_percent_mean": round(sum(cpu) / max(1, len(cpu)), 2),
            "rss_peak_mib": round(max((s["rss_peak"] for s in stats), default=0) / 2**20, 1),
            "records": stats[-1]["records"] if stats else 0,
            "lost": stats[-1]["lost"] if stats else {}}


def fault_share(folded, frame="hrtimer_nanosleep"):
    """The share of off-CPU time in stacks through FRAME (the fault's
    sleep) in a folded file, and the seconds in all."""
    total = fault = 0
    for line in open(folded):
        stack, _, ns = line.rpartition(" ")
        total += int(ns)
        if frame in stack.split(";"):
            fault += int(ns)
    return round(fault / max(1, total), 4), round(total / 1e9, 2)


def table(rows):
    return "<table>" + "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows) + "</table>"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--fault-tier", required=True)
    ap.add_argument("--fault-ms", required=True)
    ap.add_argument("--seconds", type=int, default=0)
    a = ap.parse_args()
    d = a.dir
    line, spans = checkout_trace(os.path.join(d, "traces.otlp"))
    services = sorted({s["service"] for s in spans})
    with open(os.path.join(d, "checkout-trace.json"), "w") as f:
        f.write(line)
    with open(os.path.join(d, "checkout-trace.svg"), "w") as f:
        f.write(waterfall(spans, f"A checkout, as kmon-trace assembled it: {len(spans)} spans, "
                                 f"{len(services)} services"))
    load = json.load(open(os.path.join(d, "loadgen.json")))
    cost = kmond_cost(os.path.join(d, "records.json"))
    prom = json.load(open(os.path.join(d, "prometheus.json")))["data"]["result"]
    shown = fault_share(os.path.join(d, f"offcpu-{a.fault_tier}.folded"))
    whole = fault_share(os.path.join(d, f"offcpu-{a.fault_tier}-all.folded"))
    summary = {"load": load, "kmond": cost, "checkout_trace_services": services,
               "wall_seconds": a.seconds,
               "offcpu_fault": {"share_shown": shown[0], "seconds_shown": shown[1],
                                "share_all": whole[0], "seconds_all": whole[1]}}
    json.dump(summary, open(os.path.join(d, "summary.json"), "w"), indent=1)
    flame = f"offcpu-{a.fault_tier}.svg"
    pictures = [
        ("topology.svg", "The service graph (kmon-topo from Kafka, drawn by Graphviz): "
         "every edge with its protocol, requests, p95 latency and error rate; red edges failed."),
        ("checkout-trace.svg", "One checkout through the shop (kmon-trace from Kafka): "
         "kmond's ids and parent links, joined across tiers by TCP sequence numbers."),
        (flame, f"Where {a.fault_tier} (slowed {a.fault_ms} ms a request by its fault switch) "
         "waits: its off-CPU time by stack (kmon-view flame), without its threads' waits for "
         f"their next request: the fault's sleep is {shown[0]:.0%} of the {shown[1]} s shown "
         f"({whole[0]:.0%} of all {whole[1]} s off-CPU)."),
        ("load.svg", "The tiers' occupancy: busy time, requests in progress and the estimated "
         "utilization of the tiers behind frontend and checkout (kmon-view load)."),
    ]
    rows = [("requests (load generator)", load["requests"]),
            ("response time mean / p95 / p99 (ms)", f"{load['mean_ms']} / {load['p95_ms']} / {load['p99_ms']}"),
            ("kmond CPU, mean (% of one core)", cost["cpu_percent_mean"]),
            ("kmond peak RSS (MiB)", cost["rss_peak_mib"]),
            ("kmond records / lost", f"{cost['records']} / {cost['lost']}"),
            ("demo wall time (s)", a.seconds)]
    status_rows = [(k, v) for k, v in load["by_status"].items()]
    prom_rows = [(r["metric"].get("service"), round(float(r["value"][1]))) for r in prom]
    body = ["<h1>kmond on the demo shop</h1>",
            "<p>What kmond saw, without a change to the application. "
            "The pictures are files of this folder.</p>",
            "<h2>Summary</h2>", table(rows),
            "<h2>Requests by action and status (the load generator's ground truth)</h2>",
            table(status_rows),
            "<h2>Requests served by each tier (Prometheus, scraping kmond)</h2>", table(prom_rows)]
    for src, caption in pictures:
        body.append(f'<figure><img src="{src}" alt="{html.escape(src)}">'
                    f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    page = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>kmond demo</title>
<style>body {{ font-family: sans-serif; margin: 2em; }} img {{ max-width: 100%; border: 1px solid #ccc; }}
td {{ padding: 2px 12px; border-bottom: 1px solid #eee; }} figure {{ margin: 2em 0; }}</style>
<script>
// for the test (headless Chromium): how many pictures loaded
window.addEventListener("load", () => {{
  const imgs = [...document.images];
  document.body.dataset.pictures = imgs.length;
  document.body.dataset.loaded = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
}});
</script></head>
<body>
{chr(10).join(body)}
</body></html>
"""
    with open(os.path.join(d, "index.html"), "w") as f:
        f.write(page)


if __name__ == "__main__":
    main()
