import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppModule as StreamingApp } from '../../sample/02-streaming/app.module.js';
import { AppModule as InteractiveApp } from '../../sample/03-interactive/app.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient } from '../utils/clients.js';

type Json = Record<string, any>;

describe('sample 02-streaming', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(StreamingApp);
  });
  after(() => server.close());

  it('streams progress and returns the report (both eras)', async () => {
    const legacy = await connectSdkClient(server.url);
    const modern = await connectModernClient(server.url);
    try {
      for (const client of [legacy.client, modern.client] as Json[]) {
        const seen: number[] = [];
        const result = await client.callTool(
          { name: 'build_report', arguments: { title: 'Q3', sections: 3 } },
          ...(client === legacy.client ? [undefined] : []),
          {
            onprogress: (p: { progress: number }) => seen.push(p.progress),
          },
        );
        assert.deepEqual(seen, [1, 2, 3]);
        assert.equal(result.structuredContent.summary, '"Q3" has 3 sections.');
      }
    } finally {
      await legacy.close();
      await modern.close();
    }
  });
});

describe('sample 03-interactive', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(InteractiveApp);
  });
  after(() => server.close());

  it('confirms a deletion through elicitation on the legacy era', async () => {
    const conn = await connectSdkClient(server.url, {
      onElicit: async (params) => {
        const schema = (params as Json).requestedSchema;
        assert.equal(schema.properties.confirm.type, 'boolean');
        assert.equal(schema.properties.confirm.title, 'Delete it');
        return { action: 'accept', content: { confirm: true, reason: 'obsolete' } };
      },
    });
    try {
      const result = await conn.client.callTool({ name: 'delete_project', arguments: { name: 'apollo' } });
      assert.equal((result.content as Json[])[0].text, 'Deleted project "apollo" (obsolete).');
    } finally {
      await conn.close();
    }
  });

  it('keeps the project when the user declines, and summarizes through sampling, on the modern era', async () => {
    const conn = await connectModernClient(server.url, {
      onElicit: async () => ({ action: 'decline' }),
      onSample: async () => ({ role: 'assistant', content: { type: 'text', text: 'Short.' }, model: 'test' }),
    });
    try {
      const kept = await conn.client.callTool({ name: 'delete_project', arguments: { name: 'gemini' } });
      assert.equal((kept.content as Json[])[0].text, 'Kept project "gemini".');
      const summary = await conn.client.callTool({ name: 'summarize', arguments: { text: 'A long text.' } });
      assert.equal((summary.content as Json[])[0].text, 'Short.');
    } finally {
      await conn.close();
    }
  });
});
