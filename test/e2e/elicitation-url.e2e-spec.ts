/**
 * URL-mode elicitation (`mode: 'url'`, for secrets, payments and OAuth flows that must not go
 * through a form) on both eras, answered by the official clients' own elicitation handlers:
 * the 2025-11-25 era sends `elicitation/create` on the call's stream, the 2026-07-28 era ends the
 * call with `input_required` and the client's retry carries the answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module } from '@nestjs/common';
import { Ctx, McpModule, Tool, type McpContext } from '../../lib/index.js';
import { startApp, type RunningApp } from '../utils/app.js';
import {
  META_KEYS,
  connectModernClient,
  connectSdkClient,
  modernRpc,
  type ElicitationParams,
  type InputHandlers,
} from '../utils/clients.js';

type Json = Record<string, any>;

const LINK_URL = 'https://auth.example.com/link?state=e2e';

@Injectable()
class AccountTools {
  @Tool('link_account', { description: 'Sends the user to the provider to link their account.' })
  async link(@Ctx() ctx: McpContext): Promise<string> {
    const outcome = await ctx.elicitUrl('Sign in at the provider to link your account.', LINK_URL, {
      elicitationId: 'link-e2e',
    });
    return `link: ${outcome.action}`;
  }
}

@Module({ imports: [McpModule.forRoot({ name: 'elicitation-url-e2e', version: '1.0.0' })], providers: [AccountTools] })
class UrlElicitationModule {}

interface AnyClient {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<Json>;
}

type Connect = (
  url: string,
  options: InputHandlers & { capabilities?: Record<string, Record<string, unknown>> },
) => Promise<{ client: AnyClient; close(): Promise<void> }>;

const eras: Array<{ era: string; connect: Connect }> = [
  {
    era: '2025-11-25 (@modelcontextprotocol/sdk 1.32)',
    connect: (url, options) => connectSdkClient(url, options) as never,
  },
  {
    era: '2026-07-28 (@modelcontextprotocol/client 2.4)',
    connect: (url, options) => connectModernClient(url, options) as never,
  },
];

const URL_CAPABLE = { elicitation: { form: {}, url: {} } };

describe('URL-mode elicitation', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(UrlElicitationModule);
  });
  after(() => server.close());

  for (const { era, connect } of eras) {
    describe(era, () => {
      for (const action of ['accept', 'decline', 'cancel'] as const) {
        it(`sends the URL request to the client's handler and returns its ${action}`, async () => {
          const asked: ElicitationParams[] = [];
          const connection = await connect(server.url, {
            capabilities: URL_CAPABLE,
            onElicit: (params) => {
              asked.push(params);
              return { action };
            },
          });
          try {
            const result = await connection.client.callTool({ name: 'link_account', arguments: {} });
            assert.notEqual(result.isError, true, JSON.stringify(result));
            assert.equal(result.content[0].text, `link: ${action}`);
            assert.equal(asked.length, 1);
            const params = asked[0]! as Json;
            assert.equal(params.mode, 'url');
            assert.equal(params.url, LINK_URL);
            assert.equal(params.message, 'Sign in at the provider to link your account.');
            // 2025-11-25 keys the out-of-band flow by elicitationId; 2026-07-28 dropped the field.
            assert.equal(params.elicitationId, era.startsWith('2025') ? 'link-e2e' : undefined);
            assert.equal(params.requestedSchema, undefined, 'a URL elicitation carries no form schema');
          } finally {
            await connection.close();
          }
        });
      }

      it('refuses, naming the capability, when the client declared form elicitation only', async () => {
        let asked = 0;
        const connection = await connect(server.url, {
          capabilities: { elicitation: { form: {} } },
          onElicit: () => {
            asked++;
            return { action: 'accept' };
          },
        });
        try {
          const outcome = await connection.client.callTool({ name: 'link_account', arguments: {} }).then(
            (result) => {
              assert.equal(result.isError, true);
              return String(result.content[0].text);
            },
            (error: Error) => error.message,
          );
          assert.match(outcome, /elicitation\.url/);
          assert.equal(asked, 0, 'the client is never sent a mode it did not declare');
        } finally {
          await connection.close();
        }
      });
    });
  }

  it('puts the 2026-07-28 URL request on the wire without the elicitationId that revision dropped', async () => {
    const caps = { [META_KEYS.clientCapabilities]: URL_CAPABLE };
    const first = (await modernRpc(server.url, 'tools/call', { name: 'link_account', arguments: {}, _meta: caps }))
      .json as Json;
    assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
    const requests = Object.values(first.result.inputRequests) as Json[];
    assert.equal(requests.length, 1);
    assert.deepEqual(requests[0], {
      method: 'elicitation/create',
      params: { mode: 'url', message: 'Sign in at the provider to link your account.', url: LINK_URL },
    });
  });
});
