/**
 * The module inside an existing app's own pipeline: a global HTTP-only catch-all filter, a global
 * bearer guard with a `@Public()` convention, a global prefix with URI versioning, and a reverse
 * proxy on the same host.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { VersioningType, type INestApplication, type LoggerService } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { HostAppModule, Public, handlersSeen } from '../fixtures/host-app.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient, modernRpc } from '../utils/clients.js';

type Json = Record<string, any>;

/** Keeps what the app logs, so tests can read the module's warnings and startup line. */
class CapturingLogger implements LoggerService {
  readonly lines: { level: string; message: string }[] = [];
  log(message: unknown): void {
    this.lines.push({ level: 'log', message: String(message) });
  }
  warn(message: unknown): void {
    this.lines.push({ level: 'warn', message: String(message) });
  }
  error(message: unknown): void {
    this.lines.push({ level: 'error', message: String(message) });
  }
  debug(): void {}
  verbose(): void {}
}

function enterprise(app: INestApplication): void {
  app.setGlobalPrefix('api');
  app.enableVersioning({ type: VersioningType.URI, defaultVersion: '1' });
}

/** A raw HTTP request with a chosen Host header (fetch does not let a caller set Host). */
function post(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; json: Json }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'tools/list',
          'Content-Length': Buffer.byteLength(payload),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Json }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const LIST = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/list',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
};

describe('inside an enterprise app: prefix + versioning, global guard and HTTP-only filter', () => {
  const logger = new CapturingLogger();
  let server: RunningApp;
  before(async () => {
    server = await startApp(HostAppModule.register({ controllerDecorators: [Public()] }), {
      path: 'api/mcp',
      configure: enterprise,
      logger,
    });
  });
  after(() => server.close());

  it('serves the endpoint version-neutral under the global prefix and logs its full URL', async () => {
    const res = (await modernRpc(server.url, 'tools/list')).json as Json;
    assert.deepEqual(
      res.result.tools.map((t: Json) => t.name),
      ['get_order'],
    );
    assert.equal((await modernRpc(`${server.base}/api/v1/mcp`, 'tools/list')).status, 404);
    assert.ok(
      logger.lines.some((l) => l.message === `MCP endpoint at ${server.base}/api/mcp`),
      `no startup line with the URL in ${JSON.stringify(logger.lines.map((l) => l.message))}`,
    );
  });

  it('keeps the REST routes on the app versioning, shaped by the app filter', async () => {
    assert.deepEqual(await (await fetch(`${server.base}/api/v1/orders/A1`)).json(), { id: 'A1' });
    const missing = await fetch(`${server.base}/api/v1/orders/B2`);
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), {
      statusCode: 404,
      message: 'Order B2 not found',
      filteredBy: 'AllExceptionsFilter',
    });
  });

  it("gives the model a tool's HttpException message although the app's catch-all filter is HTTP-only, and warns once naming it", async () => {
    for (const era of ['modern', 'legacy'] as const) {
      const connection = era === 'modern' ? await connectModernClient(server.url) : await connectSdkClient(server.url);
      const result = await connection.client.callTool({ name: 'get_order', arguments: { id: 'B2' } });
      await connection.close();
      assert.equal(result.isError, true, era);
      assert.deepEqual(result.content, [{ type: 'text', text: 'Order B2 not found' }], era);
    }
    const warnings = logger.lines.filter((l) => l.level === 'warn' && l.message.includes('AllExceptionsFilter'));
    assert.equal(warnings.length, 1, JSON.stringify(logger.lines));
    assert.match(
      warnings[0].message,
      /Exception filter AllExceptionsFilter failed while handling a NotFoundException from MCP tools\/call "get_order"/,
    );
    assert.match(warnings[0].message, /host\.getType<string>\(\) === 'mcp'/);
    assert.equal(logger.lines.filter((l) => l.level === 'error').length, 0, JSON.stringify(logger.lines));
    const ok = (await modernRpc(server.url, 'tools/call', { name: 'get_order', arguments: { id: 'A1' } })).json as Json;
    assert.deepEqual(ok.result.structuredContent, { id: 'A1', total: 42 });
  });

  it("hands guards the tool's own method, when calling and when listing", async () => {
    handlersSeen.length = 0;
    await modernRpc(server.url, 'tools/list');
    await modernRpc(server.url, 'tools/call', { name: 'get_order', arguments: { id: 'A1' } });
    assert.deepEqual(handlersSeen, [
      { handler: 'getOrder', audit: 'orders.read', listing: true, className: 'OrdersTools' },
      { handler: 'getOrder', audit: 'orders.read', listing: false, className: 'OrdersTools' },
    ]);
  });
});

describe('the endpoint under the app guard without @Public(), and with a version', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(HostAppModule.register({ endpointVersion: '2' }), {
      path: 'api/v2/mcp',
      configure: enterprise,
    });
  });
  after(() => server.close());

  it('is guarded by the app guard (401 as a JSON-RPC error) and lands at /api/v2/mcp', async () => {
    const denied = await modernRpc(server.url, 'tools/list');
    assert.equal(denied.status, 401);
    assert.match((denied.json as Json).error.message, /A bearer token is required/);
    const allowed = await modernRpc(server.url, 'tools/list', {}, { headers: { Authorization: 'Bearer secret' } });
    assert.equal(allowed.status, 200);
    assert.equal(
      (await modernRpc(`${server.base}/api/mcp`, 'tools/list', {}, { headers: { Authorization: 'Bearer secret' } }))
        .status,
      404,
    );
  });
});

describe('behind a reverse proxy on the same host', () => {
  const proxied = {
    Host: 'api.example.com',
    'X-Forwarded-Host': 'api.example.com',
    'X-Forwarded-Proto': 'https',
    Origin: 'https://api.example.com',
  };

  it('refuses a public Host on a loopback listener while the app does not trust its proxy', async () => {
    const server = await startApp(HostAppModule.register({ controllerDecorators: [Public()] }));
    try {
      const res = await post(server.url, proxied, LIST);
      assert.equal(res.status, 403);
      assert.match(
        res.json.error.message,
        /Host "api\.example\.com" is not a loopback name.*allowedHosts.*trust proxy/,
      );
    } finally {
      await server.close();
    }
  });

  it("trusts X-Forwarded-Host once the app trusts the proxy ('trust proxy'), and still checks the Origin against it", async () => {
    const server = await startApp(HostAppModule.register({ controllerDecorators: [Public()] }), {
      configure: (app) => void (app as NestExpressApplication).set('trust proxy', 'loopback'),
    });
    try {
      const ok = await post(server.url, proxied, LIST);
      assert.equal(ok.status, 200, JSON.stringify(ok.json));
      assert.deepEqual(
        ok.json.result.tools.map((t: Json) => t.name),
        ['get_order'],
      );
      const rebound = await post(server.url, { ...proxied, Origin: 'http://evil.example' }, LIST);
      assert.equal(rebound.status, 403);
      assert.match(rebound.json.error.message, /Origin "http:\/\/evil\.example" is not allowed/);
      const unforwarded = await post(server.url, { Host: 'api.example.com' }, LIST);
      assert.equal(unforwarded.status, 403);
    } finally {
      await server.close();
    }
  });
});
