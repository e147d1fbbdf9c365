"""The inline stylesheet and script of report.html (kept apart so html.py stays about structure).

Both are constants: nothing from a report ever enters them, so the script needs no escaping
and the page's Content-Security-Policy can forbid every network request.
"""

CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
       "connect-src 'none'; form-action 'none'; base-uri 'none'")

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1f2328;background:#f6f8fa}
header,main{max-width:1200px;margin:0 auto;padding:12px 20px}
h1{font-size:20px;margin:8px 0}h2{font-size:16px;margin:20px 0 8px}
.badge{display:inline-block;padding:2px 10px;border-radius:12px;color:#fff;font-weight:600}
.pass{background:#1a7f37}.fail{background:#cf222e}.error{background:#9a6700}
.facts span{margin-right:16px;color:#57606a}.reasons li{color:#cf222e}.warnings li{color:#9a6700}
.filters{position:sticky;top:0;background:#f6f8fa;padding:8px 0;border-bottom:1px solid #d0d7de;z-index:2}
.filters label{margin-right:14px}select{font:inherit}
table.heat{border-collapse:collapse;background:#fff}
.heat th,.heat td{border:1px solid #d0d7de;padding:4px 8px;text-align:center;white-space:nowrap}
.heat th.row{text-align:left}.heat td.none{color:#8c959f}.heat td.breach{font-weight:700;color:#fff}
.legend{color:#57606a;font-size:12px}
article.cell{background:#fff;border:1px solid #d0d7de;border-left:4px solid #cf222e;border-radius:6px;
  margin:10px 0;padding:8px 12px}
article.cell.status-error{border-left-color:#9a6700}
article.cell>summary,article.cell h3{font-size:15px;margin:4px 0}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:4px;padding:6px 8px;white-space:pre-wrap;
  word-break:break-word;max-height:320px;overflow:auto;margin:4px 0}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
.wf{margin:6px 0;border:1px solid #d0d7de;border-radius:4px}
.wf-row{display:grid;grid-template-columns:minmax(220px,34%) 52px 1fr 70px;gap:8px;align-items:center;
  padding:3px 6px;border-top:1px solid #eaeef2;font-size:12px}
.wf-row:first-child{border-top:none}.wf-row.fault{background:#fff1f0}
.track{position:relative;height:14px;background:#f6f8fa;border-radius:3px}
.bar{position:absolute;top:2px;height:10px;border-radius:2px;background:#0969da;min-width:2px}
.bar.llm{background:#8250df}.wf-row.fault .bar{background:#cf222e}
.wait{position:absolute;top:5px;height:4px;background:repeating-linear-gradient(90deg,#9a6700 0 4px,transparent 4px 7px)}
.tag{display:inline-block;border-radius:8px;padding:0 6px;margin-left:4px;font-size:11px;background:#eaeef2}
.tag.f{background:#cf222e;color:#fff}.tag.r{background:#9a6700;color:#fff}.tag.retry{background:#0969da;color:#fff}
.wf-body{grid-column:1/-1}.wf-body summary{cursor:pointer;color:#57606a}
.muted{color:#57606a}.hidden{display:none}
table.transcript{border-collapse:collapse;width:100%;margin:6px 0;font-size:12px}
.transcript th,.transcript td{border:1px solid #d0d7de;padding:3px 6px;text-align:left;vertical-align:top}
.transcript td pre{max-height:160px;margin:0}.transcript tr.fault{background:#fff1f0}
.transcript tr.wrong td{border-left:3px solid #cf222e}.transcript .wrong{color:#cf222e;font-weight:600}
.transcript tr.gap td{color:#57606a;font-style:italic}
"""

JS = """
(function () {
  var selects = Array.prototype.slice.call(document.querySelectorAll('select[data-filter]'));
  function wanted() {
    var w = {};
    selects.forEach(function (s) { w[s.getAttribute('data-filter')] = s.value; });
    return w;
  }
  function has(el, key, value) {
    if (!value) { return true; }
    var list = (el.getAttribute('data-' + key) || '').split(' ');
    return list.indexOf(value) !== -1;
  }
  function apply() {
    var w = wanted(), shown = 0;
    document.querySelectorAll('article.cell').forEach(function (el) {
      var ok = has(el, 'stage', w.stage) && has(el, 'scenario', w.scenario) && has(el, 'invariant', w.invariant);
      el.classList.toggle('hidden', !ok);
      if (ok) { shown += 1; }
    });
    document.querySelectorAll('.heat tr[data-stage]').forEach(function (el) {
      el.classList.toggle('hidden', !(has(el, 'stage', w.stage) && has(el, 'scenario', w.scenario)));
    });
    document.querySelectorAll('.heat [data-invariant]').forEach(function (el) {
      el.classList.toggle('hidden', !has(el, 'invariant', w.invariant));
    });
    var count = document.getElementById('shown');
    if (count) { count.textContent = String(shown); }
  }
  selects.forEach(function (s) { s.addEventListener('change', apply); });
  apply();
})();
"""
