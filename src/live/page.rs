//! The live page itself: a static shell (the report's styles, uPlot and chart code, inline,
//! so it works offline) that `assets/live.js` fills with each frame. It holds nothing of
//! the run; the stop button is in it only when the page was opened with the run's token.

use crate::report::write::html;

/// headroom's glue from the figures' data to uPlot charts, shared with the HTML report.
const FIGURES_JS: &str = include_str!("../../assets/figures.js");
/// The page's script: follows the frames and swaps them in.
const LIVE_JS: &str = include_str!("../../assets/live.js");
/// What the live page adds to the report's styles.
const STYLE: &str = "
.where{position:sticky;top:0;background:#fff;border-bottom:1px solid #ddd;padding:.4em 0;margin:0;z-index:2;font-variant-numeric:tabular-nums}
.controls{margin:.4em 0;min-height:1.6em}.controls button{font-size:1em;padding:.2em .8em;color:#fff;background:#cf222e;border:0;border-radius:4px;cursor:pointer}
.controls button:disabled{background:#999}#status{color:#9a6700;margin-left:.8em}
";

/// The page; with the stop button when `control` (the request carried the token).
pub(super) fn html(control: bool) -> String {
    let button = if control {
        "<button id=\"stop\" type=\"button\">Stop the run</button>"
    } else {
        ""
    };
    let body = format!(
        "<style>{STYLE}</style>\n<header>\n<h1 id=\"title\">headroom: live</h1>\n<p class=\"sub\" id=\"what\"></p>\n</header>\n<div id=\"position\"><p class=\"where\" id=\"where\">Waiting for the run's first second…</p></div>\n<div class=\"controls\">{button}<span id=\"status\" role=\"status\"></span></div>\n<div id=\"warnings\"></div>\n<div id=\"shards\"></div>\n<div id=\"answer-slot\"></div>\n<section id=\"now\"></section>\n<section id=\"figures\"><h2>Figures</h2>\n<p class=\"hint\">Drag across a chart to zoom in, double-click to zoom out, click a legend entry to hide or show its line. The charts follow the run each second.</p>\n<div id=\"left-out\"></div><div id=\"charts\"></div></section>\n<div id=\"sections\"></div>\n<script type=\"application/json\" id=\"headroom-figures\">[]</script>\n<script>{FIGURES_JS}</script>\n<script>{LIVE_JS}</script>\n"
    );
    html::page("headroom: live", &body)
}
