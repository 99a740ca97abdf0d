import { createHash } from 'node:crypto';
import { EXPLORER_SCRIPT } from './explorer-script.js';

const STYLE = `
:root { color-scheme: light dark; --line: #8884; --accent: #3a6ff7; --bad: #c0392b; font: 14px/1.45 system-ui, sans-serif; }
body { margin: 0; }
header { display: flex; gap: 1rem; align-items: center; padding: .6rem 1rem; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header h1 { font-size: 1.1rem; margin: 0; }
header form { display: flex; gap: .4rem; flex: 1; }
header input { flex: 1; max-width: 28rem; }
main { display: grid; grid-template-columns: minmax(14rem, 22rem) 1fr; min-height: calc(100vh - 3rem); }
nav { border-right: 1px solid var(--line); padding: .5rem 1rem; overflow: auto; }
nav h2 { font-size: .85rem; text-transform: uppercase; letter-spacing: .05em; margin: 1rem 0 .3rem; }
nav ul { list-style: none; padding: 0; margin: 0; }
.entry { width: 100%; text-align: left; background: none; border: 0; padding: .25rem .4rem; border-radius: 4px; cursor: pointer; color: inherit; font: inherit; }
.entry:hover, .entry:focus { background: #8882; }
#detail { padding: 1rem 1.5rem; overflow: auto; }
#detail h2 { margin-top: 0; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: .4rem 0; padding: .4rem .8rem; }
.field { display: grid; grid-template-columns: 10rem 1fr; gap: .2rem .8rem; align-items: center; margin: .35rem 0; }
.field .hint, fieldset > .hint { grid-column: 2; color: #888; }
.field input[type=checkbox] { justify-self: start; }
input, select, textarea, button { font: inherit; padding: .25rem .4rem; }
button { cursor: pointer; }
.small { font-size: .85em; }
.item { display: flex; gap: .5rem; align-items: start; }
.meta { color: #888; font-size: .9em; margin: .2rem 0; }
.ok { color: #2e8b57; }
.error { color: var(--bad); white-space: pre-wrap; border-left: 3px solid var(--bad); padding: .3rem .6rem; margin: .5rem 0; }
pre { background: #8881; padding: .5rem; border-radius: 4px; overflow: auto; white-space: pre-wrap; }
.events { list-style: none; padding: 0; font-family: ui-monospace, monospace; font-size: .85em; }
.events .log { color: #888; }
progress { width: 100%; }
.elicitation { border: 2px solid var(--accent); border-radius: 6px; padding: .5rem 1rem; margin: .5rem 0; }
.buttons { display: flex; gap: .5rem; margin-top: .5rem; }
.image { max-width: 100%; }
`;

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** Hashes of the one inline script and style, computed once: the CSP allows exactly them. */
export const EXPLORER_CSP = [
  "default-src 'none'",
  `script-src ${sha256(EXPLORER_SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const HEAD = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>MCP Explorer</title>
<style>${STYLE}</style>
</head>
`;

const BODY = `<header>
<h1>MCP Explorer</h1>
<form id="connect" autocomplete="off">
<input id="token" type="password" autocomplete="off" placeholder="Bearer token (optional)" aria-label="Bearer token">
<button type="submit">Connect</button>
</form>
<div id="status" role="status"></div>
</header>
<main>
<nav id="catalog" aria-label="Catalog"></nav>
<section id="detail"><p class="meta">Pick a tool, resource, template or prompt.</p></section>
</main>
<script>${EXPLORER_SCRIPT}</script>
</body>
</html>
`;

/** The page, for the endpoint at `endpointUrl` (a path on the page's own origin). */
export function explorerPage(endpointUrl: string): string {
  return `${HEAD}<body data-endpoint="${escapeAttribute(endpointUrl)}">\n${BODY}`;
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
