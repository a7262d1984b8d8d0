import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

// Readable from 320 px up: one column, border-box sizing so padded inputs never overflow, large
// touch targets, visible focus, and contrast above WCAG AA in light and dark schemes.
const STYLE = `
*,*::before,*::after{box-sizing:border-box}
:root{color-scheme:light dark;--fg:#1d2430;--muted:#4a5565;--bg:#f5f6f8;--card:#fff;--line:#cfd5de;--accent:#1f5fbf;--accent-fg:#fff;--err:#a4161a;--err-bg:#fdecec}
@media (prefers-color-scheme:dark){:root{--fg:#e8ebf0;--muted:#aab3c0;--bg:#14171c;--card:#1d2128;--line:#3a414d;--accent:#6ea0ff;--accent-fg:#0b1320;--err:#ffb3b3;--err-bg:#3a1618}}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:30rem;margin:0 auto;padding:1.5rem 1rem 3rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:1.25rem}
h1{font-size:1.35rem;line-height:1.3;margin:0 0 .75rem}
.app{display:flex;gap:.9rem;align-items:center;margin-bottom:1rem}
.app img{width:56px;height:56px;border-radius:12px;border:1px solid var(--line);flex:none;object-fit:cover}
.app a{color:var(--accent);overflow-wrap:anywhere}
.muted{color:var(--muted);font-size:.92rem}
ul.scopes{margin:.25rem 0 1rem;padding-left:1.2rem}ul.scopes li{margin:.3rem 0}
label{display:block;font-weight:600;margin:.9rem 0 .3rem}
input[type=text],input[type=password]{display:block;width:100%;padding:.65rem .75rem;font:inherit;color:inherit;background:var(--card);border:1px solid var(--line);border-radius:8px}
.buttons{display:flex;gap:.75rem;margin-top:1.25rem;flex-wrap:wrap}
button{flex:1 1 8rem;min-height:2.9rem;padding:.6rem 1rem;font:inherit;font-weight:600;border-radius:8px;border:1px solid var(--accent);cursor:pointer}
button.primary{background:var(--accent);color:var(--accent-fg)}
button.secondary{background:transparent;color:var(--accent)}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.error{background:var(--err-bg);color:var(--err);border-radius:8px;padding:.7rem .9rem;margin:0 0 1rem}
code{overflow-wrap:anywhere}
`;

/** Security headers of every HTML page: no framing by other sites, nothing loaded but images. */
export const HTML_PAGE_HEADERS: Record<string, string> = {
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' https: data:; frame-ancestors 'none'; base-uri 'none'",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
};

/** A complete HTML document around `body`, with the shared style. */
export const page = (title: string, body: Html) => html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style>${raw(STYLE)}</style>
</head>
<body><main>${body}</main></body>
</html>`;
