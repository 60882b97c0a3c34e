// Draws the panels of ../grafana/localmessage-dashboard.json with the same PromQL, from a real
// Prometheus server, into one page, and takes a screenshot of it with headless Chromium. This is
// not Grafana: the layout, titles, units and queries are the dashboard's; the drawing is Chart.js.
//
// node render.mjs --prometheus http://127.0.0.1:9090 --minutes 10 [--end <unix seconds>]
//                 [--note "what ran"] [--out out/dashboard.png]
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => {
    if (a.startsWith("--")) pairs.push([a.slice(2), all[i + 1]]);
    return pairs;
  }, []),
);
const prometheus = args.prometheus ?? "http://127.0.0.1:9090";
const end = Number(args.end ?? Math.floor(Date.now() / 1000));
const start = end - 60 * Number(args.minutes ?? 10);
const step = Math.max(5, Math.round((end - start) / 240));
const out = resolve(here, args.out ?? "out/dashboard.png");
const dashboard = JSON.parse(
  readFileSync(resolve(here, "../grafana/localmessage-dashboard.json"), "utf8"),
);

function promql(expr) {
  return expr
    .replaceAll("$__rate_interval", "1m")
    .replaceAll("$job", ".*")
    .replaceAll("$biz_type", ".*");
}

function legend(format, metric) {
  return format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name) => metric[name] ?? "");
}

async function range(expr) {
  const url = new URL("/api/v1/query_range", prometheus);
  url.search = new URLSearchParams({ query: promql(expr), start, end, step }).toString();
  const response = await fetch(url);
  const body = await response.json();
  if (body.status !== "success") {
    throw new Error(`${expr}: ${body.error ?? response.status}`);
  }
  return body.data.result;
}

const panels = [];
for (const panel of dashboard.panels) {
  const drawn = { title: panel.title, type: panel.type, gridPos: panel.gridPos, datasets: [] };
  drawn.unit = panel.fieldConfig?.defaults?.unit ?? "short";
  drawn.stacked = panel.fieldConfig?.defaults?.custom?.stacking?.mode === "normal";
  for (const target of panel.targets ?? []) {
    for (const series of await range(target.expr)) {
      drawn.datasets.push({
        label: legend(target.legendFormat ?? "", series.metric),
        data: series.values.map(([t, v]) => ({ x: (Number(t) - start) / 60, y: Number(v) })),
      });
    }
  }
  panels.push(drawn);
}

const rows = Math.max(...panels.map((p) => p.gridPos.y + p.gridPos.h));
const page = `<!doctype html><html><head><meta charset="utf-8">
<style>
 body { margin: 0; background: #111217; color: #ccccdc; font: 13px sans-serif; }
 header { padding: 8px 12px; font-size: 15px; } header small { color: #8e8e9e; font-size: 12px; }
 main { display: grid; grid-template-columns: repeat(24, 1fr); grid-auto-rows: 30px;
        gap: 6px; padding: 0 8px 8px; }
 section { background: #181b1f; border: 1px solid #2c3235; border-radius: 3px;
           display: flex; flex-direction: column; padding: 4px 8px; min-width: 0; }
 section.row { background: none; border: none; font-size: 14px; font-weight: bold;
               justify-content: flex-end; }
 h2 { font-size: 13px; margin: 2px 0 4px; font-weight: 600; }
 .plot { position: relative; flex: 1; min-height: 0; }
</style>
<script src="${resolve(here, "node_modules/chart.js/dist/chart.umd.min.js")}"></script></head>
<body><header>${dashboard.title} — the dashboard's panels drawn from Prometheus with its own
queries (Chart.js, not Grafana)<br><small>${args.note ?? ""} · last ${(end - start) / 60}
minutes, step ${step} s, x axis in minutes</small></header><main id="grid"></main>
<script>
const panels = ${JSON.stringify(panels)};
const colors = ["#73bf69","#f2cc0c","#5794f2","#ff9830","#f2495c","#b877d9","#8ab8ff","#fade2a"];
const units = { s: v => v < 1 ? (v * 1000).toFixed(0) + " ms" : v.toFixed(1) + " s",
                ops: v => v.toFixed(1) + "/s", short: v => +v.toFixed(2) };
for (const p of panels) {
  const el = document.createElement("section");
  el.style.gridColumn = (p.gridPos.x + 1) + " / span " + p.gridPos.w;
  el.style.gridRow = (p.gridPos.y + 1) + " / span " + p.gridPos.h;
  document.getElementById("grid").appendChild(el);
  if (p.type === "row") { el.className = "row"; el.textContent = p.title; continue; }
  el.innerHTML = "<h2></h2><div class=plot><canvas></canvas></div>";
  el.querySelector("h2").textContent = p.title;
  if (p.datasets.length === 0) {
    el.querySelector(".plot").textContent = "no series in this window: nothing of this kind happened";
    el.querySelector(".plot").style.color = "#8e8e9e";
    continue;
  }
  const fmt = units[p.unit] ?? units.short;
  new Chart(el.querySelector("canvas"), {
    type: "line",
    data: { datasets: p.datasets.map((d, i) => ({ ...d, borderColor: colors[i % colors.length],
      backgroundColor: colors[i % colors.length] + "55", fill: p.stacked, pointRadius: 0,
      borderWidth: 1.5 })) },
    options: { animation: false, maintainAspectRatio: false, parsing: true,
      scales: { x: { type: "linear", ticks: { color: "#8e8e9e" }, grid: { color: "#2c3235" } },
                y: { stacked: p.stacked, beginAtZero: true, ticks: { color: "#8e8e9e", callback: fmt },
                     grid: { color: "#2c3235" } } },
      plugins: { legend: { position: "right", labels: { color: "#ccccdc", boxWidth: 10,
                 font: { size: 11 } } } } } });
}
</script></body></html>`;
mkdirSync(dirname(out), { recursive: true });
const html = resolve(here, "out/dashboard.html");
mkdirSync(dirname(html), { recursive: true });
writeFileSync(html, page);
const height = 60 + rows * 36;
execFileSync("/usr/bin/chromium", [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
  "--hide-scrollbars", "--allow-file-access-from-files", `--window-size=1600,${height}`,
  `--screenshot=${out}`, "file://" + html,
], { stdio: "inherit", timeout: 120000 });
console.log(`wrote ${out} (${panels.length} panels, ${start}..${end})`);
