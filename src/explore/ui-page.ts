/**
 * The web explorer's page and style sheet, fixed text served from memory (the script, compiled from
 * web/ by tsconfig.web.json, is read once at start by the command). No data is ever spliced into
 * them: the script fetches JSON from /api/ and writes it as text.
 */

export const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcptap ui</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/app.css">
<script type="module" src="/app.js"></script>
</head>
<body>
<header><h1>mcptap ui</h1><span id="status"></span></header>
<main>
<section id="recordings"><h2>Recordings</h2><table id="recording-list"></table></section>
<section id="findings" hidden></section>
<section id="explorer" hidden>
<form id="filters"></form>
<div id="table-head" class="row head"></div>
<div id="table" tabindex="0"><div id="table-space"></div></div>
<div id="table-foot"></div>
</section>
<section id="detail" hidden></section>
<section id="waterfall-box" hidden><h2>Waterfall</h2><div id="waterfall-caption"></div><canvas id="waterfall" data-chart="waterfall"></canvas><ul id="waterfall-streams"></ul></section>
</main>
</body>
</html>
`;

export const APP_CSS = `
:root { font: 13px/1.4 system-ui, sans-serif; color: #1b1f24; background: #fafbfc; }
header { display: flex; gap: 1em; align-items: baseline; padding: 0 1em; border-bottom: 1px solid #d0d7de; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin: .6em 0 .3em; } h3 { font-size: 1em; margin: .8em 0 .2em; }
main { padding: 0 1em 2em; }
table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: left; border-bottom: 1px solid #eaeef2; }
#recording-list tr.pick { cursor: pointer; } #recording-list tr.pick:hover, #recording-list tr.chosen { background: #ddf4ff; }
.incomplete { color: #9a6700; font-weight: 600; } .bad { color: #cf222e; }
#filters { display: flex; flex-wrap: wrap; gap: .4em 1em; margin: .6em 0; } #filters label { display: flex; gap: .3em; align-items: center; }
#filters input { width: 9em; } #filters input.short { width: 5em; }
#table { height: 420px; overflow-y: auto; position: relative; border: 1px solid #d0d7de; background: #fff; }
#table-space { position: relative; }
.row { display: grid; grid-template-columns: 6em 8em 10em 14em 9em 7em 6em 1fr; height: 22px; line-height: 22px; white-space: nowrap; }
.row > span { overflow: hidden; text-overflow: ellipsis; padding: 0 4px; }
.row.head { font-weight: 600; border: 1px solid #d0d7de; border-bottom: 0; background: #f6f8fa; }
#table .row { position: absolute; left: 0; right: 0; cursor: pointer; } #table .row:hover { background: #f3f4f6; } #table .row.chosen { background: #ddf4ff; }
.o-ok { color: #1a7f37; } .o-tool_error, .o-jsonrpc_error, .o-transport_error, .o-unanswered, .o-orphan_response { color: #cf222e; } .o-cancelled, .o-pending { color: #9a6700; }
.r-different { color: #cf222e; font-weight: 600; }
#detail { border-top: 2px solid #d0d7de; margin-top: 1em; }
.json { font: 12px/1.4 ui-monospace, monospace; background: #fff; border: 1px solid #eaeef2; padding: 4px 8px; overflow-x: auto; }
.json details { margin-left: 1.2em; } .json summary { cursor: pointer; margin-left: -1.2em; } .json .leaf { margin-left: 0; }
.json .k { color: #0550ae; } .json .s { color: #0a3069; } .json .n { color: #953800; } .json .l { color: #8250df; }
.json .diff { background: #ffebe9; outline: 1px solid #ff8182; }
.json .finding { background: #fff8c5; outline: 1px solid #d4a72c; }
#findings ul { margin: .2em 0; } li.finding .sev { font-weight: 600; } li.finding .where { color: #57606a; }
li.finding.link { cursor: pointer; } li.finding.link:hover { background: #ddf4ff; }
.sev-error .sev { color: #cf222e; } .sev-warning .sev { color: #9a6700; } .sev-note .sev { color: #57606a; }
.side { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
button.copy { font-size: 11px; margin-left: .5em; }
.timeline { width: 100%; height: 60px; display: block; }
#waterfall { width: 100%; display: block; background: #fff; border: 1px solid #d0d7de; }
`;
