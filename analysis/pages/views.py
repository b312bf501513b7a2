"""A page as a few linked views in one self-contained file: each view is a `<div class="view">` of
`<main>`, one shown at a time, chosen by the address's fragment (`page.html#cards`). A fragment that
names anything inside a view (a table row, a card page, a section) shows that view and scrolls to
it, so every in-page link is a link between views and each view loads on its own from file://."""

from __future__ import annotations

import html
from collections.abc import Sequence

View = tuple[str, str, str]  # (id, tab label, HTML)


def views_html(views: Sequence[View]) -> str:
    """The views as <div class="view" id=ID> blocks, in order; the first is shown by default."""
    return "".join(
        f'<div class="view" id="{html.escape(vid)}" data-label="{html.escape(label)}">{body}</div>'
        for vid, label, body in views
    )


def tabs(views: Sequence[View]) -> list[tuple[str, str]]:
    """(anchor, label) of each view, for the page's bar (shell.filter_bar's links)."""
    return [(vid, label) for vid, label, _ in views]


CSS = """
#filters .toc a.on{color:#fff;font-weight:600;border-bottom:2px solid #ffd479}
tr:target{background:#fff3c4}tr:target td{border-bottom-color:#e0c060}
"""

JS = """
(function () {
  var views = Array.prototype.slice.call(document.querySelectorAll('main > .view'));
  if (!views.length) return;
  var current = null;
  function target() {
    var id = decodeURIComponent(location.hash.slice(1));
    return id ? document.getElementById(id) : null;
  }
  function show() {
    var el = target(), v = (el && el.closest('main > .view')) || current || views[0];
    if (v !== current) {
      views.forEach(function (x) { x.hidden = x !== v; });
      current = v;
      document.querySelectorAll('#filters .toc a').forEach(function (a) {
        a.classList.toggle('on', a.getAttribute('href') === '#' + v.id);
      });
      document.title = document.title.replace(/ \\u00b7 .*$/, '') + ' \\u00b7 ' + v.dataset.label;
      if (window.Plotly) v.querySelectorAll('.js-plotly-plot').forEach(function (p) { Plotly.Plots.resize(p); });
    }
    if (el === v) window.scrollTo(0, 0);
    else if (el && getComputedStyle(el).position !== 'fixed') el.scrollIntoView();
  }
  window.addEventListener('hashchange', show);
  show();
})();
"""
