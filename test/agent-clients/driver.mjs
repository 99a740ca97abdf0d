// The scenarios every client driver runs, through the client's own MCP API, against the three
// servers the spec started. A driver supplies `connect(url, variant)` returning the client's
// calls in one shape (getPrompt gives the prompt's messages); the calls it has no API for are
// left out and reported as missing. The
// driver prints one line `AGENT-CLIENT-REPORT {json}` on stdout; the spec asserts on it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const REPORT_PREFIX = 'AGENT-CLIENT-REPORT ';

/** The installed version of a package, read from its package.json (exports may hide it). */
export function installedVersion(name) {
  const require = createRequire(import.meta.url);
  let dir;
  try {
    dir = require.resolve(`${name}/package.json`);
  } catch {
    // Packages whose `exports` leave out package.json: walk up from the entry point.
    const entry = require.resolve(name);
    dir = entry.slice(0, entry.lastIndexOf(`/node_modules/${name}/`) + `/node_modules/${name}/`.length) + 'package.json';
  }
  return JSON.parse(readFileSync(dir, 'utf8')).version;
}

/** What a tool call came back with, whichever way the client reports a tool error. */
export async function outcome(call) {
  try {
    const result = await call();
    return { isError: result.isError === true, text: result.text ?? '', structured: result.structured };
  } catch (error) {
    return { thrown: `${error?.name ?? 'Error'}: ${error?.message ?? String(error)}`, code: error?.code };
  }
}

/** Text of MCP content blocks (a CallToolResult's or a prompt message's), or a plain string. */
export function textOf(content) {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks
    .map((block) => (typeof block === 'string' ? block : typeof block?.text === 'string' ? block.text : undefined))
    .filter((text) => text !== undefined)
    .join('\n');
}

/** The parts of an MCP CallToolResult the scenarios check. */
export function fromCallToolResult(result) {
  return { isError: result.isError, text: textOf(result.content), structured: result.structuredContent };
}

async function optional(fn, ...args) {
  if (typeof fn !== 'function') return { missing: true };
  try {
    return { value: await fn(...args) };
  } catch (error) {
    return { thrown: `${error?.name ?? 'Error'}: ${error?.message ?? String(error)}` };
  }
}

const SCENARIOS = {
  async basic(conn) {
    const tools = await conn.listTools();
    const created = await outcome(() => conn.callTool('create_task', { title: 'from an agent client' }));
    const listed = await outcome(() => conn.callTool('list_tasks', {}));
    return { tools: tools.map((t) => t.name), created, listed };
  },
  async conformance(conn) {
    const tools = await conn.listTools();
    const promptText = conn.getPrompt && (async (name, args) => (await conn.getPrompt(name, args)).map((m) => textOf(m.content)).join('\n'));
    return {
      tools: tools.map((t) => t.name),
      simple: await outcome(() => conn.callTool('test_simple_text', {})),
      failing: await outcome(() => conn.callTool('test_error_handling', {})),
      // On 2026-07-28 a client mirrors `region` into an Mcp-Param-Region header, which the fixture checks.
      header: await outcome(() => conn.callTool('test_x_mcp_header', { region: 'eu-west', level: 2 })),
      resources: await optional(conn.listResources),
      staticText: await optional(conn.readResource, 'test://static-text'),
      templated: await optional(conn.readResource, 'test://template/4711/data'),
      prompts: await optional(conn.listPrompts),
      prompt: await optional(promptText, 'test_prompt_with_arguments', { arg1: 'alpha', arg2: 'beta' }),
    };
  },
  async apps(conn) {
    const tools = await conn.listTools();
    return {
      tools: tools.map((t) => ({ name: t.name, visibility: t._meta?.ui?.visibility })),
      dashboard: await outcome(() => conn.callTool('order_dashboard', {})),
      // Only clients that call a tool by name can try one they were not shown.
      appOnlyCall: conn.callUnlisted ? await outcome(() => conn.callUnlisted('ship_order', { id: 'A-1002' })) : { missing: true },
    };
  },
};

/**
 * Runs every scenario with a fresh connection and prints the report. `config` is the JSON the
 * spec passes as the first argument: `{ urls: { basic, conformance, apps }, variant }`.
 */
export async function drive({ client, packageName, connect }) {
  const config = JSON.parse(process.argv[2] ?? '{}');
  const report = { client, package: packageName, version: installedVersion(packageName), node: process.version, variant: config.variant, scenarios: {} };
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    const url = config.urls?.[name];
    if (!url) continue;
    let conn;
    try {
      conn = await connect(url, config.variant);
      report.scenarios[name] = { negotiated: conn.negotiated?.(), ...(await scenario(conn)) };
    } catch (error) {
      report.scenarios[name] = { failed: `${error?.name ?? 'Error'}: ${error?.message ?? String(error)}`, stack: error?.stack };
    } finally {
      await conn?.close().catch((error) => {
        report.scenarios[name].closeFailed = String(error?.message ?? error);
      });
    }
  }
  // Some clients keep timers or sockets (reconnect loops, exit hooks) after close: once the
  // report is written, the driver ends.
  process.stdout.write(`\n${REPORT_PREFIX}${JSON.stringify(report)}\n`, () => process.exit(0));
}
