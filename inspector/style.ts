/** The viewer's style sheet, inlined into each page's shell (shell.ts). Status colours are by class. */
export const STYLE = `
:root { --fg:#1d2330; --muted:#667085; --line:#e4e7ec; --bg:#f7f8fa; --card:#fff; --accent:#3056d3;
  --ok:#067647; --ok-bg:#dcfae6; --bad:#b42318; --bad-bg:#fee4e2; --wait:#b54708; --wait-bg:#fef0c7;
  --run:#175cd3; --run-bg:#d1e9ff; --idle:#475467; --idle-bg:#eaecf0; }
* { box-sizing: border-box; }
body { margin:0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color:var(--fg); background:var(--bg); }
.mono, pre, code { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
header.top { display:flex; align-items:center; gap:16px; padding:10px 24px; background:#111827; color:#fff; }
header.top .brand { color:#fff; font-weight:600; letter-spacing:.02em; }
header.top .where { color:#9ca3af; font-size:12px; }
header.top .live-state { margin-left:auto; font-size:12px; color:#9ca3af; } header.top .live-state.live { color:#4ade80; }
main { max-width: 1280px; margin: 0 auto; padding: 20px 24px 60px; }
h1 { font-size: 18px; margin: 8px 0 16px; word-break: break-all; }
h2 { font-size: 15px; margin: 0 0 8px; } h3 { font-size: 14px; margin: 0 0 8px; display:flex; gap:12px; align-items:baseline; flex-wrap:wrap; }
.toolbar { display:flex; gap:8px; align-items:center; margin-bottom:12px; }
.toolbar input { flex: 1; max-width: 420px; padding:7px 10px; border:1px solid var(--line); border-radius:6px; font: inherit; }
.toolbar select { padding:6px 8px; border:1px solid var(--line); border-radius:6px; background:#fff; font: inherit; }
.toolbar .count { color: var(--muted); margin-left:auto; }
table { width:100%; border-collapse: collapse; background: var(--card); border:1px solid var(--line); border-radius:8px; overflow:hidden; }
th { text-align:left; font-weight:600; font-size:12px; color:var(--muted); text-transform:uppercase; letter-spacing:.04em; background:#fafbfc; }
th, td { padding:8px 10px; border-bottom:1px solid var(--line); vertical-align: top; }
tbody tr:last-child td { border-bottom: 0; } tbody tr:hover { background: #f9fafb; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.id { white-space: nowrap; }
td.why { color: var(--muted); max-width: 360px; } .more-row { text-align: center; margin: 10px 0; } .more-row button[hidden] { display: none; } td.last .age { color: var(--muted); font-size: 12px; } .fix { margin-top: 2px; color: #344054; }
td.empty, p.empty { color: var(--muted); text-align:center; padding: 24px; }
.status, .outcome { display:inline-block; padding:1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600; white-space: nowrap; background:var(--idle-bg); color:var(--idle); }
.status-completed, .outcome-ok, .outcome-completed { background:var(--ok-bg); color:var(--ok); }
.status-failed, .status-damaged, .outcome-failed, .outcome-denied { background:var(--bad-bg); color:var(--bad); }
.status-awaiting_approval, .status-suspended, .status-interrupted, .status-pending, .outcome-compensated { background:var(--wait-bg); color:var(--wait); }
.status-running, .status-waiting_timer, .outcome-dispatched, .outcome-open, .outcome-sleeping { background:var(--run-bg); color:var(--run); }
.reason { margin-left: 8px; color: var(--muted); }
td.status-cell .lineage { margin-top: 4px; font-size: 12px; color: var(--muted); white-space: nowrap; } .lineage .lineage-id { font-size: 12px; }
section { background: var(--card); border:1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin-bottom: 14px; }
section.epoch { border-left: 4px solid var(--line); margin: 10px 0; }
section.epoch.epoch-completed { border-left-color: var(--ok); } section.epoch.epoch-failed, section.epoch.epoch-denied { border-left-color: var(--bad); }
section.epoch.epoch-compensated { border-left-color: var(--wait); } section.epoch.epoch-open { border-left-color: var(--run); }
.epoch-no { font-weight: 700; } .goal { color: #344054; } .plan { color: var(--muted); font-weight: 400; }
.note { margin: 4px 0 8px; color: #344054; }
.note.warning { color: #93370d; background: #fffaeb; border-left: 3px solid #f79009; padding: 2px 8px; }
table.steps td.args, table.steps td.detail { max-width: 380px; word-break: break-all; }
dl { display:grid; grid-template-columns: 130px 1fr; gap: 4px 12px; margin: 0; }
dt { color: var(--muted); } dd { margin: 0; word-break: break-all; }
.verdict h2 { font-size: 16px; }
.verdict.ok { border-color: #75e0a7; background: #f6fef9; } .verdict.ok h2 { color: var(--ok); }
.verdict.bad { border-color: #fda29b; background: #fffbfa; } .verdict.bad h2 { color: var(--bad); }
.verdict.partial { border-color: #fedf89; background: #fffcf5; } .verdict.partial h2 { color: var(--wait); }
.journal ol { list-style: none; padding: 0; margin: 0; }
.journal li { border-bottom: 1px solid var(--line); } .journal li:last-child { border-bottom: 0; }
details.record summary { cursor: pointer; display:flex; gap:14px; padding: 5px 4px; align-items: baseline; }
details.record summary::-webkit-details-marker { display: none; }
details.record .seq { width: 36px; color: var(--muted); } details.record .kind { width: 210px; font-weight: 600; }
details.record .epoch-tag { width: 70px; color: var(--muted); } details.record .at { color: var(--muted); font-size: 12px; }
details.record .kind.sad { color: var(--bad); }
details.record[open] { background: #fafbfc; } details.record dl { padding: 6px 8px 12px 54px; }
details.record.bad summary { background: var(--bad-bg); }
.flag { font-size: 12px; font-weight: 600; border-radius: 4px; padding: 0 6px; } .flag.bad { color: var(--bad); } .flag.after { color: var(--muted); }
pre { margin: 0; white-space: pre-wrap; word-break: break-all; background: #f2f4f7; padding: 8px; border-radius: 6px; }
.next p { margin: 0 0 8px; } dl.commands { grid-template-columns: 260px 1fr; margin-top: 8px; }
section.drop { margin-top: 18px; border-style: dashed; } section.drop.over { border-color: var(--accent); background: #f5f8ff; }
section.drop input[type=file] { display: none; } .button { color: var(--accent); cursor: pointer; text-decoration: underline; }
#drop-result .verdict { margin: 8px 0 0; } .dropped { margin: 8px 0 0; color: var(--muted); }
.crumbs { margin: 0; color: var(--muted); }
.error { color: var(--bad); } .loading { color: var(--muted); }
.approve-form { margin-top: 12px; } .approve-fields { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; }
.approve-fields input { font: inherit; padding: 4px 8px; border: 1px solid #c9ced6; border-radius: 6px; } #approve-note { flex: 1; min-width: 200px; }
button.decide { font: inherit; font-weight: 600; padding: 5px 14px; border-radius: 6px; border: 1px solid transparent; cursor: pointer; color: #fff; }
button.decide.approve { background: var(--ok); } button.decide.reject { background: var(--bad); } button.decide:disabled { opacity: .45; cursor: not-allowed; }
section.statechart { padding-bottom: 10px; }
.chart-caption { margin: 0 0 8px; color: #344054; } .chart-caption.bad { color: var(--bad); } .chart-caption.partial { color: var(--wait); }
.chart-frame { overflow-x: auto; text-align: center; background: #fcfcfd; border: 1px solid var(--line); border-radius: 6px; padding: 6px 0; }
svg.statechart-svg { max-width: 100%; height: auto; font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; }
.sc-edge path { fill: none; stroke: #b4bcc8; stroke-width: 1.3; marker-end: url(#sc-arrow); }
#sc-arrow path { fill: #b4bcc8; } #sc-arrow-taken path { fill: var(--accent); } #sc-arrow-last path { fill: #f79009; }
.sc-edge.taken path { stroke: var(--accent); stroke-width: 2.4; marker-end: url(#sc-arrow-taken); }
.sc-edge.last path { stroke: #f79009; stroke-width: 2.8; marker-end: url(#sc-arrow-last); }
.sc-edge.fan:not(.taken) { display: none; }
.sc-label rect { fill: #fcfcfd; fill-opacity: .92; } .sc-label text { font-size: 10.5px; fill: #667085; }
.sc-label.guarded text { fill: #6941c6; font-weight: 600; }
.sc-label.taken text { fill: var(--accent); } .sc-label.taken rect { fill: #eef4ff; fill-opacity: 1; stroke: #b2ccff; }
.sc-label.last text { fill: #b54708; } .sc-label.last rect { fill: #fffaeb; stroke: #fec84b; }
.sc-node rect.box { fill: #fff; stroke: #98a2b3; stroke-width: 1.3; } .sc-node rect.inner { fill: none; stroke: #98a2b3; stroke-width: 1; }
.sc-node.resting rect.box { stroke-dasharray: 5 3; }
.sc-node .name { font-size: 12.5px; font-weight: 700; fill: var(--fg); } .sc-node .invokes { font-size: 10px; fill: var(--muted); }
.sc-node .start { fill: var(--fg); } .sc-node .start-line { stroke: var(--fg); stroke-width: 1.5; }
.sc-node.visited rect.box { fill: #eef4ff; stroke: #84adff; } .sc-node.visited rect.inner { stroke: #84adff; }
.sc-node.current rect.box { stroke-width: 3; filter: drop-shadow(0 0 5px rgba(48,86,211,.55)); }
.sc-node.current.tone-run rect.box { fill: var(--accent); stroke: #1d3fa8; }
.sc-node.current.tone-ok rect.box { fill: var(--ok); stroke: #054f31; filter: drop-shadow(0 0 5px rgba(6,118,71,.55)); }
.sc-node.current.tone-bad rect.box { fill: var(--bad); stroke: #7a1a10; filter: drop-shadow(0 0 5px rgba(180,35,24,.5)); }
.sc-node.current.tone-wait rect.box { fill: #f79009; stroke: #93370d; filter: drop-shadow(0 0 5px rgba(247,144,9,.55)); }
.sc-node.current .name, .sc-node.current .invokes { fill: #fff; } .sc-node.current rect.inner { stroke: #fff; }
.travel { display: flex; align-items: center; gap: 8px; margin: 0 0 10px; padding: 8px 10px; background: #f5f8ff; border: 1px solid #d1e0ff; border-radius: 6px; flex-wrap: wrap; }
.travel.past { background: #fffaeb; border-color: #fedf89; }
.travel-title { font-weight: 600; color: #344054; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.travel input[type=range] { flex: 1; min-width: 220px; accent-color: var(--accent); }
.travel button { font: inherit; padding: 2px 10px; border: 1px solid #c9ced6; border-radius: 6px; background: #fff; cursor: pointer; } .travel button:disabled { opacity: .4; cursor: default; }
.travel-readout { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; font-size: 12.5px; min-width: 330px; color: #344054; }
.journal li.later { opacity: .32; } .journal li.at { background: #fffaeb; box-shadow: inset 3px 0 0 #f79009; }
.chart-legend { display: flex; gap: 6px 16px; flex-wrap: wrap; align-items: center; margin: 8px 0 0; color: var(--muted); font-size: 12px; }
.chart-legend .key::before { content: ""; display: inline-block; width: 18px; height: 0; margin-right: 6px; vertical-align: middle; border-top: 2px solid; }
.key.k-path::before { border-color: var(--accent); } .key.k-last::before { border-color: #f79009; }
.key.k-guard { color: #6941c6; font-weight: 600; } .key.k-guard::before { display: none; }
.key.k-rest::before, .key.k-final::before { width: 14px; height: 9px; border: 1.5px dashed #98a2b3; border-radius: 3px; }
.key.k-final::before { border: 3px double #98a2b3; border-radius: 6px; }
.muted { color: var(--muted); }
.pt-lib { margin: 0 0 10px; color: var(--muted); font-size: 12.5px; }
.pt-epoch { border-top: 1px solid var(--line); padding: 12px 0 6px; } .pt-epoch:first-of-type { border-top: 0; }
.pt-verdict { margin: 2px 0 10px; font-weight: 600; display: flex; gap: 10px; align-items: baseline; }
.pt-verdict.ok { color: var(--ok); } .pt-verdict.ok::before { content: "✓"; }
.pt-verdict.bad { color: var(--bad); display: block; background: var(--bad-bg); padding: 8px 10px; border-radius: 6px; } .pt-verdict.bad p { margin: 0 0 6px; }
.pt-verdict.muted { color: var(--muted); font-weight: 500; }
.pt-digest { color: var(--muted); font-weight: 400; }
.pt-badge { display: inline-block; font-size: 11.5px; font-weight: 600; padding: 0 7px; border-radius: 999px; background: var(--idle-bg); color: var(--idle); }
.pt-badge.htn { background: var(--run-bg); color: var(--run); } .pt-badge.authored { background: #f4ebff; color: #6941c6; } .pt-badge.ro { background: #f2f4f7; color: var(--muted); font-weight: 500; }
ul.pt-tree, ul.pt-tree ul { list-style: none; margin: 0; padding: 0; }
ul.pt-tree ul { margin-left: 12px; padding-left: 18px; border-left: 2px solid #d0d5dd; }
ul.pt-tree li { position: relative; padding: 3px 0; }
ul.pt-tree ul > li::before { content: ""; position: absolute; left: -18px; top: 15px; width: 14px; border-top: 2px solid #d0d5dd; }
.pt-node { display: inline-flex; gap: 8px; align-items: baseline; flex-wrap: wrap; padding: 4px 10px; border-radius: 6px; border: 1px solid var(--line); background: #fff; }
.pt-node.pt-task { background: #f5f8ff; border-color: #c7d7fe; } .pt-node.pt-task .pt-call { font-weight: 600; }
.pt-node.pt-authored { background: #faf5ff; border-color: #d9d6fe; }
.pt-node.pt-step { background: #fcfcfd; }
.pt-method { font-size: 12px; color: #3538cd; } .pt-via { color: var(--muted); font-size: 12px; }
.pt-state { font-size: 11.5px; font-weight: 600; padding: 0 7px; border-radius: 999px; } .pt-state.pt-done { background: var(--ok-bg); color: var(--ok); }
.pt-state.pt-failed { background: var(--bad-bg); color: var(--bad); } .pt-state.pt-undone { background: var(--wait-bg); color: var(--wait); } .pt-state.pt-running { background: var(--run-bg); color: var(--run); } .pt-state.pt-refused { background: var(--wait-bg); color: var(--wait); }
.pt-index { color: var(--muted); font-size: 12px; } .pt-actuator { color: var(--ok); }
.pt-nomethod { background: var(--wait-bg); border: 1px solid #fedf89; border-radius: 6px; padding: 8px 10px; margin: 6px 0 10px; }
.pt-nomethod p { margin: 0 0 6px; } table.pt-methods { margin-top: 4px; }
dl.pt-checks { margin: 6px 0 10px; grid-template-columns: 110px 1fr; } dl.pt-checks dd.ok { color: var(--ok); } dl.pt-checks dd.bad { color: var(--bad); font-weight: 600; }
.pt-rejected, .mr-reason { margin: 6px 0; padding: 6px 10px; border-left: 4px solid var(--bad); background: var(--bad-bg); color: #7a271a; border-radius: 0 6px 6px 0; }
.tl-epoch { border-top: 1px solid var(--line); padding: 10px 0 4px; } .tl-epoch:first-of-type { border-top: 0; }
.tl-row { display: grid; grid-template-columns: 240px 1fr 470px; gap: 4px 14px; align-items: center; padding: 5px 0; border-bottom: 1px dashed #eef0f3; }
.tl-row:last-child { border-bottom: 0; }
.tl-label { display: flex; flex-direction: column; min-width: 0; } .tl-name { font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.tl-detail { color: var(--muted); font-size: 12px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.tl-track { position: relative; height: 18px; background: repeating-linear-gradient(90deg, #f2f4f7 0, #f2f4f7 1px, transparent 1px, transparent 10%); border-radius: 4px; background-color: #fafbfc; }
.tl-seg { position: absolute; top: 2px; height: 14px; min-width: 3px; border-radius: 3px; background: #32d583; }
.tl-seg.tl-failed { background: #f97066; } .tl-seg.tl-rejected { background: repeating-linear-gradient(45deg, #f97066 0, #f97066 4px, #fda29b 4px, #fda29b 8px); }
.tl-seg.tl-running { background: #53b1fd; }
.tl-kind-model .tl-seg.tl-ok { background: #9e77ed; } .tl-kind-observe .tl-seg.tl-ok { background: #98a2b3; } .tl-kind-compensation .tl-seg.tl-ok { background: #fdb022; }
.tl-backoff { position: absolute; top: 8px; height: 2px; border-top: 2px dotted #f79009; }
.tl-facts { display: flex; gap: 10px; align-items: baseline; font-size: 12.5px; white-space: nowrap; }
.tl-took { width: 60px; text-align: right; } .tl-attempts { color: #344054; width: 72px; } .tl-wait { color: var(--wait); width: 96px; } .tl-worker { color: var(--muted); overflow: hidden; text-overflow: ellipsis; }
.tl-facts .outcome { width: 64px; text-align: center; }
.tl-reason { grid-column: 2 / 4; font-size: 12.5px; color: var(--bad); margin: -2px 0 2px; } .tl-reason.rejected { font-weight: 600; } .tl-reason.past { color: #b54708; }
.mr-epoch h3 { margin-top: 8px; } ol.mr-list { list-style: none; margin: 0; padding: 0; }
.mr-item { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; margin: 6px 0; } .mr-item.mr-rejected, .mr-item.mr-failed { border-color: #fda29b; }
.mr-head { display: flex; gap: 10px; align-items: baseline; } .mr-purpose { font-weight: 600; } .mr-attempt, .mr-seq { color: var(--muted); font-size: 12px; }
.mr-reply { margin-top: 6px; } .mr-label { color: var(--muted); font-size: 12px; } .mr-request summary { cursor: pointer; color: var(--muted); font-size: 12px; margin-top: 4px; }
.mr-count.bad { color: var(--bad); }
.gist { color: #475467; font-size: 12px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 520px; } .gist.rejected { color: var(--bad); font-weight: 600; }
/* statechart */
.sc-tools { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 8px; padding: 0 10px 6px; font-size: 12.5px; color: var(--muted); text-align: left; }
.sc-button { font: inherit; min-width: 30px; padding: 2px 10px; border: 1px solid #c9ced6; border-radius: 6px; background: #fff; color: var(--fg); cursor: pointer; }
.sc-button:hover { border-color: var(--accent); } .sc-button[aria-pressed="true"] { background: #eef4ff; border-color: #84adff; } .sc-button[hidden] { display: none; }
.sc-zoom { min-width: 42px; text-align: center; font-variant-numeric: tabular-nums; } .sc-scope { color: #344054; margin-left: 6px; } .sc-hint { margin-left: auto; font-size: 12px; }
.sc-viewport svg.statechart-svg { display: block; width: 100%; max-width: none; height: 480px; cursor: grab; touch-action: none; user-select: none; border-top: 1px solid var(--line); }
.sc-viewport svg.statechart-svg.dragging { cursor: grabbing; } .sc-viewport svg.statechart-svg:focus-visible { outline: 2px solid var(--accent); outline-offset: -2px; }
svg.statechart-svg.lit .sc-node:not(.visited):not(.current) { opacity: .32; }
svg.statechart-svg.lit .sc-edge:not(.taken):not(.sc-label) { opacity: .45; } svg.statechart-svg.lit .sc-label:not(.taken) { opacity: .7; }
/* list */
.table-frame { max-width: 100%; overflow-x: auto; }
table.invocations { table-layout: fixed; width: 100%; }
table.invocations td { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; vertical-align: middle; padding: 6px 8px; }
table.invocations th { padding: 6px 8px; vertical-align: bottom; text-transform: none; letter-spacing: 0; font-size: 12.5px; overflow: hidden; text-overflow: ellipsis; }
table.invocations th.id { width: 150px; } table.invocations th.tenant { width: 76px; } table.invocations th.status-cell { width: 170px; }
table.invocations th.started { width: 100px; } table.invocations th.activity { width: 160px; } table.invocations th.duration { width: 86px; }
table.invocations th.epoch { width: 62px; } table.invocations th.records { width: 76px; }
table.invocations td.why { max-width: none; } table.invocations td.started, table.invocations td.activity { color: #344054; font-size: 12.5px; font-variant-numeric: tabular-nums; }
table.invocations td.status-cell .lineage { display: inline; margin: 0 0 0 6px; }
table.invocations th button.sort { all: unset; cursor: pointer; } table.invocations th button.sort:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
table.invocations th[aria-sort] { color: var(--fg); }
table.invocations td.loading { font-style: italic; }
.verdict-mark { margin-left: 6px; font-size: 12px; } .verdict-ok { color: var(--ok); } .verdict-chain { color: var(--wait); } .verdict-failed { color: var(--bad); font-weight: 600; }
tr[data-verdict="failed"], tr[data-verdict="server-failed"] { background: var(--bad-bg); }
@media (max-width: 1200px) {
  table.invocations th.id { width: 120px; } table.invocations th.tenant { width: 60px; } table.invocations th.status-cell { width: 140px; }
  table.invocations th.started { width: 88px; } table.invocations th.activity { width: 116px; } table.invocations th.duration { width: 76px; }
  table.invocations th.epoch { width: 56px; } table.invocations th.records { width: 70px; }
}
/* readability */
main section, main section p, main section li, main section dd, main section td, main section th, main section h3 > *, .note, .reason, .gist, .chart-caption, .tl-reason, .crumbs { overflow-wrap: anywhere; }
main section h3 > *, main section dd, main section td, details.record summary > * { min-width: 0; }
details.record summary { flex-wrap: wrap; } details.record .record-summary { flex: 1 1 240px; max-width: none; white-space: normal; color: #344054; }
details.record .record-summary.rejected { color: var(--bad); }
details.record pre { max-height: 420px; overflow: auto; }
.status-journal-bad { background: var(--bad-bg); color: var(--bad); box-shadow: inset 0 0 0 1.5px var(--bad); white-space: normal; }
.verdict.trust-store h2, .verdict.trust-bundle h2 { color: var(--wait); }
.verdict.trust-bundle { border-color: #f79009; }
.tl-axis { display: grid; grid-template-columns: 240px 1fr 470px; gap: 4px 14px; align-items: center; padding: 4px 0 10px; border-bottom: 1px solid var(--line); margin-bottom: 4px; }
.tl-axis-track { position: relative; height: 36px; border-bottom: 1px solid #98a2b3; }
.tl-tick { position: absolute; bottom: -16px; transform: translateX(-50%); font-size: 11px; color: var(--muted); white-space: nowrap; } .tl-tick:first-child { transform: none; } .tl-tick-end { transform: translateX(-100%); }
.tl-axis-epoch { position: absolute; top: 2px; height: 22px; min-width: 14px; padding: 0 2px; border: 1px solid #84adff; border-radius: 4px; background: #eef4ff; color: var(--accent); font: 600 11px/20px system-ui, sans-serif; cursor: pointer; overflow: hidden; }
.tl-axis-epoch:hover, .tl-axis-epoch:focus-visible { background: #d1e0ff; } .tl-axis-epoch.zoomed { background: var(--accent); color: #fff; }
.tl-axis + .tl-epoch { border-top: 0; } .tl-epoch.zoomed .tl-track { background-color: #f5f8ff; }
.tl-zoom { font: inherit; font-size: 12px; font-weight: 400; padding: 1px 8px; border: 1px solid #c9ced6; border-radius: 6px; background: #fff; color: var(--accent); cursor: pointer; } .tl-epoch.zoomed .tl-zoom { background: #eef4ff; border-color: #84adff; }
@media (max-width: 1180px) { .tl-row, .tl-axis { grid-template-columns: 180px 1fr; } .tl-facts { grid-column: 2; flex-wrap: wrap; white-space: normal; } .tl-reason { grid-column: 1 / 3; } }
.actions { margin: 16px 0; padding: 12px 16px; background: var(--card); border:1px solid var(--line); border-radius:8px; }
.actions [hidden], .lineage-tree-section[hidden] { display:none !important; }
.actions button.action { padding:6px 12px; border:1px solid var(--line); border-radius:6px; background:#fff; font: inherit; cursor:pointer; }
.actions button.cancel, .actions button.confirm { border-color: var(--bad); color: var(--bad); }
.action-confirm { margin-top:10px; padding:10px; border:1px dashed var(--wait); border-radius:6px; background: var(--wait-bg); }
header.top .inbox-count { color:#9ca3af; font-size:12px; } header.top .inbox-count.some { color:#fbbf24; font-weight:600; }
.lineage-tree-section { margin: 16px 0; }
ul.lineage-tree, ul.lineage-tree ul { list-style:none; margin:0; padding-left:18px; }
ul.lineage-tree { padding-left:0; }
ul.lineage-tree li { position:relative; padding:3px 0 3px 14px; border-left:1px solid var(--line); }
ul.lineage-tree li::before { content:""; position:absolute; left:0; top:13px; width:10px; border-top:1px solid var(--line); }
ul.lineage-tree li.here > .node { font-weight:600; }
ul.lineage-tree .at { color: var(--muted); font-size:12px; }
/* offline audit: a dropped file drawn as a run (page/offline-run.ts) */
.offline-run { margin: 14px 0 0; padding: 12px 14px; border: 1px solid var(--line); border-radius: 8px; background: #fff; }
.offline-run > h2 { font-size: 15px; margin: 0 0 10px; }
.offline-run.untrusted { border: 2px solid var(--bad); background: repeating-linear-gradient(135deg, #fff, #fff 14px, #fff6f5 14px, #fff6f5 28px); }
.untrusted-banner { margin: 10px 0; padding: 10px 12px; border-radius: 6px; background: var(--bad-bg); color: var(--bad); font-weight: 600; }
.trust-badge { display: inline-block; margin-left: 6px; padding: 1px 8px; border-radius: 10px; font-size: 12.5px; font-weight: 600; }
.trust-badge.ok { background: var(--ok-bg); color: var(--ok); } .trust-badge.partial { background: var(--wait-bg); color: var(--wait); } .trust-badge.bad { background: var(--bad-bg); color: var(--bad); }
.trust-badge.trust-bundle { box-shadow: inset 0 0 0 1.5px #f79009; }
.lineage-carried.bad { color: var(--bad); }
`;
