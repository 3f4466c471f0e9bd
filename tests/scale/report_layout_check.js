// The report's layout, measured by the browser itself (report_browser_test.sh injects this into a
// copy of report.html and loads it in headless Chromium at a 1280 px window). It opens every
// <details> (so that what a reader expands is measured too), then checks:
//  - the page is no wider than the viewport (documentElement.scrollWidth <= innerWidth), and no
//    element's box extends past the viewport's right edge (or its left edge) unless it lies in a
//    container of its own that scrolls (overflow-x auto or scroll) and that container fits;
//  - every chart's legends (g.legend) and every text of a chart lie inside the chart's SVG box;
//  - every JSON blob (text with an object key or an array of strings/objects) is inside <details>.
// It writes "layout-ok ..." or "layout-bad ..." and one line per problem into a pre#layout that it
// appends to the body.
(function () {
  var W = window.innerWidth, bad = [], legends = 0, texts = 0, json = 0;
  var ds = document.querySelectorAll('details');
  for (var i = 0; i < ds.length; i++) ds[i].open = true;
  function name(el) {
    var t = (el.textContent || '').replace(/\s+/g, ' ').trim();
    var cls = el.getAttribute('class');
    return '<' + el.tagName.toLowerCase() + (cls ? '.' + cls : '') + '> "' + t.slice(0, 60) + '"';
  }
  var root = document.documentElement;
  if (root.scrollWidth > W)
    bad.push('page: scrollWidth ' + root.scrollWidth + ' > innerWidth ' + W);
  function scrollsInside(el) {
    for (var a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (a instanceof SVGElement) continue;
      var ox = getComputedStyle(a).overflowX;
      if (ox === 'auto' || ox === 'scroll') {
        var r = a.getBoundingClientRect();
        return r.left >= -0.5 && r.right <= W + 0.5;
      }
    }
    return false;
  }
  var all = document.body.querySelectorAll('*');
  for (var i = 0; i < all.length && bad.length < 40; i++) {
    var el = all[i], tag = el.tagName.toLowerCase();
    if (tag === 'script' || tag === 'style' || tag === 'title') continue;
    var r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if ((r.right > W + 0.5 || r.left < -0.5) && !scrollsInside(el))
      bad.push('wider than the viewport: ' + name(el) + ' spans ' + Math.round(r.left) + '..' +
               Math.round(r.right) + ' px of ' + W);
  }
  var charts = document.querySelectorAll('svg.chart');
  for (var c = 0; c < charts.length; c++) {
    var s = charts[c].getBoundingClientRect();
    var title = (charts[c].querySelector('text') || charts[c]).textContent.slice(0, 50);
    var parts = charts[c].querySelectorAll('g.legend, text');
    for (var j = 0; j < parts.length && bad.length < 60; j++) {
      var p = parts[j], r = p.getBoundingClientRect();
      if (p.tagName.toLowerCase() === 'g') legends++; else texts++;
      if (r.width === 0 && r.height === 0) continue;
      var out = Math.max(s.left - r.left, r.right - s.right, s.top - r.top, r.bottom - s.bottom);
      if (out > 0.5)
        bad.push('outside its chart ("' + title + '") by ' + Math.round(out) + ' px: ' +
                 (p.tagName.toLowerCase() === 'g' ? 'legend ' : 'text ') + name(p));
    }
  }
  var looks = /\{\s*"[^"]*"\s*:|\[\s*["{]/;
  var walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (var n = walk.nextNode(); n && bad.length < 80; n = walk.nextNode()) {
    var host = n.parentElement, tag = host.tagName.toLowerCase();
    if (tag === 'script' || tag === 'style' || !looks.test(n.data)) continue;
    if (host.closest('details')) { json++; continue; }
    bad.push('JSON outside <details>: ' + name(host));
  }
  var res = document.createElement('pre');
  res.id = 'layout';
  res.textContent = (bad.length ? 'layout-bad' : 'layout-ok') + ' width=' + W + ' charts=' +
                    charts.length + ' legends=' + legends + ' texts=' + texts + ' json=' + json +
                    '\n' + bad.join('\n');
  document.body.appendChild(res);
})();
