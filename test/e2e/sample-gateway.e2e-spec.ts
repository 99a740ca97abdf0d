import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppModule as ReportsApp } from '../../sample/02-streaming/app.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient, modernRpc } from '../utils/clients.js';
import { freePort } from '../utils/redis-server.js';

const textOf = (result: unknown) =>
  ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? '').join('');

describe('sample 11-gateway: server-everything (stdio) and sample 02 (HTTP) behind bearer auth', () => {
  let reports: RunningApp;
  let gateway: RunningApp;
  let mintToken: (sub: string, roles: string[], scopes: string[]) => string;

  before(async () => {
    reports = await startApp(ReportsApp);
    const port = await freePort();
    // The sample's audience is its own URL, and its reports upstream comes from the environment.
    process.env.MCP_RESOURCE = `http://127.0.0.1:${port}/mcp`;
    process.env.REPORTS_URL = reports.url;
    ({ mintToken } = await import('../../sample/05-auth-guards/mint-token.js'));
    const { AppModule } = await import('../../sample/11-gateway/app.module.js');
    gateway = await startApp(AppModule, { port });
  });
  after(async () => {
    await gateway.close();
    await reports.close();
    delete process.env.MCP_RESOURCE;
    delete process.env.REPORTS_URL;
  });

  it('refuses a caller without a token', async () => {
    assert.equal((await modernRpc(gateway.url, 'tools/list')).status, 401);
  });

  it('an analyst sees and calls both upstreams on both eras; get-env is nowhere', async () => {
    const headers = { Authorization: `Bearer ${mintToken('alice', ['analyst'], [])}` };
    for (const connection of [
      await connectSdkClient(gateway.url, { headers }),
      await connectModernClient(gateway.url, { headers }),
    ]) {
      try {
        const names = (await connection.client.listTools()).tools.map((tool) => tool.name);
        assert.ok(names.includes('everything_echo') && names.includes('reports_build_report'), names.join());
        assert.ok(!names.some((name) => name.includes('get-env')));
        assert.match(
          textOf(
            await connection.client.callTool({
              name: 'everything_echo',
              arguments: { message: 'through the gateway' },
            }),
          ),
          /through the gateway/,
        );
        const report = await connection.client.callTool({
          name: 'reports_build_report',
          arguments: { title: 'Q4', sections: 1 },
        });
        assert.equal(report.isError, undefined, textOf(report));
        assert.match(textOf(report), /Q4/);
      } finally {
        await connection.close();
      }
    }
  });

  it('a caller without the analyst role neither sees nor calls the reports upstream', async () => {
    const connection = await connectSdkClient(gateway.url, {
      headers: { Authorization: `Bearer ${mintToken('bob', ['user'], [])}` },
    });
    try {
      const names = (await connection.client.listTools()).tools.map((tool) => tool.name);
      assert.ok(names.includes('everything_echo'));
      assert.ok(!names.some((name) => name.startsWith('reports_')), names.join());
      const refused = await connection.client
        .callTool({ name: 'reports_build_report', arguments: { title: 'x', sections: 1 } })
        .then(
          (result) => result.isError === true,
          () => true,
        );
      assert.equal(refused, true);
    } finally {
      await connection.close();
    }
  });
});
