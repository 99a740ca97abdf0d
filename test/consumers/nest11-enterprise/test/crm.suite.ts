import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import request from 'supertest';
import { connectSdk, login, Platform, RunningApp, startApp } from './helpers';

type Json = Record<string, any>;

const CUSTOMER_FIELDS = ['id', 'name', 'email', 'status', 'note', 'createdAt'];
const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * The CRM app with MCP added, run as its main.ts runs it, on one HTTP platform: its REST API as
 * before, and MCP through the app's passport guard, roles guard, throttler, ValidationPipe and
 * catch-all filter, with Swagger-only response DTOs as output schemas.
 */
export function describeCrmApp(platform: Platform): void {
  describe(`the CRM app on ${platform}`, () => {
    let running: RunningApp;
    /** An admin with every scope. */
    let alice: string;
    /** Sales, read-only scopes. */
    let bob: string;
    /** Sales, may write customers but is no admin. */
    let carol: string;

    beforeAll(async () => {
      running = await startApp(platform);
      alice = await login(running.app, 'alice');
      bob = await login(running.app, 'bob');
      carol = await login(running.app, 'carol');
    });

    afterAll(async () => {
      await running.app.close();
    });

    const http = () => request(running.app.getHttpServer());

    async function withClient<T>(token: string, run: (client: Client) => Promise<T>, query = ''): Promise<T> {
      const connection = await connectSdk(running.base, token, query);
      try {
        return await run(connection.client);
      } finally {
        await connection.close();
      }
    }

    describe('its REST API, unchanged', () => {
      it('logs in on a @Public() route and refuses a wrong password', async () => {
        const res = await http().post('/api/v1/auth/login').send({ username: 'alice', password: 'nope' }).expect(401);
        expect(res.body).toMatchObject({ statusCode: 401, message: 'Wrong username or password' });
      });

      it('guards the versioned routes with the JWT and the roles', async () => {
        await http().get('/api/v1/customers').expect(401);
        const page = await http().get('/api/v1/customers?limit=1').set('Authorization', `Bearer ${bob}`).expect(200);
        expect(page.body.total).toBeGreaterThanOrEqual(2);
        expect(page.body.items).toHaveLength(1);
        await http().delete('/api/v1/customers/2').set('Authorization', `Bearer ${bob}`).expect(403);
        await http().get('/api/v1/customers/999').set('Authorization', `Bearer ${bob}`).expect(404);
        const bad = await http().post('/api/v1/customers').set('Authorization', `Bearer ${alice}`).send({ name: 'X', email: 'not-an-email' }).expect(400);
        expect(bad.body.message).toEqual(['email must be an email']);
      });

      it('documents the REST API with Swagger, not the MCP endpoint', async () => {
        const doc = await http().get('/api/docs-json').expect(200);
        expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/api/v1/customers', '/api/v1/orders/{id}']));
        expect(Object.keys(doc.body.paths).filter((path) => path.includes('mcp'))).toEqual([]);
      });
    });

    describe('the MCP endpoint behind the app guard', () => {
      it('answers a request without a token with a bearer challenge pointing at the metadata', async () => {
        const res = await http()
          .post('/api/mcp')
          .set('Accept', 'application/json, text/event-stream')
          .send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } })
          .expect(401);
        expect(res.headers['www-authenticate']).toMatch(/^Bearer .*resource_metadata="http:\/\/localhost:3000\/\.well-known\/oauth-protected-resource\/api\/mcp"/);
      });

      it('serves the protected-resource metadata where the challenge points, without a token', async () => {
        const res = await http().get('/.well-known/oauth-protected-resource/api/mcp').expect(200);
        expect(res.body).toMatchObject({
          resource: 'http://localhost:3000/api/mcp',
          authorization_servers: ['http://localhost:3000/api/v1/auth'],
        });
      });

      it('lists the tools the caller may use, with Swagger response DTOs as output schemas', async () => {
        const tools = await withClient(alice, async (client) => (await client.listTools()).tools);
        expect(tools.map((t) => t.name).sort()).toEqual(
          ['create_customer', 'delete_customer', 'get_customer', 'get_order', 'list_orders', 'place_order', 'search_customers'],
        );
        const getCustomer = tools.find((t) => t.name === 'get_customer')!;
        expect(Object.keys(getCustomer.outputSchema!.properties!)).toEqual(CUSTOMER_FIELDS);
        expect((getCustomer.inputSchema.properties as Json).id).toMatchObject({ type: 'integer', minimum: 1, description: 'The customer id' });
        const getOrder = tools.find((t) => t.name === 'get_order')!;
        expect((getOrder.outputSchema!.properties as Json).customer.properties).toEqual({ id: { type: 'integer' }, name: { type: 'string' } });

        // bob's token lacks the write scopes; carol has them, but the RolesGuard keeps delete_customer from her.
        const bobTools = await withClient(bob, async (client) => (await client.listTools()).tools);
        expect(bobTools.map((t) => t.name).sort()).toEqual(['get_customer', 'get_order', 'list_orders', 'search_customers']);
        const carolTools = await withClient(carol, async (client) => (await client.listTools()).tools);
        expect(carolTools.map((t) => t.name).sort()).toEqual(['create_customer', 'get_customer', 'get_order', 'list_orders', 'search_customers']);
      });

      it('calls a DTO tool whose output is a Swagger-only DTO', async () => {
        await withClient(bob, async (client) => {
          const result = (await client.callTool({ name: 'get_customer', arguments: { id: 1 } })) as Json;
          expect(result.isError).toBeUndefined();
          expect(Object.keys(result.structuredContent)).toEqual(CUSTOMER_FIELDS);
          expect(result.structuredContent).toMatchObject({ id: 1, name: 'Ada Lovelace', email: 'ada@example.com', status: 'active', note: 'Prefers e-mail to calls.' });
          expect(result.structuredContent.createdAt).toMatch(ISO_DATE);
          const page = (await client.callTool({ name: 'search_customers', arguments: { query: 'Babbage' } })) as Json;
          expect(page.structuredContent).toMatchObject({ total: 1, items: [{ name: 'Charles Babbage', status: 'suspended', note: null }] });
        });
      });

      it('returns bad arguments and the app\'s exceptions to the model as isError results', async () => {
        await withClient(bob, async (client) => {
          const bad = (await client.callTool({ name: 'get_customer', arguments: { id: 'one' } })) as Json;
          expect(bad.isError).toBe(true);
          expect(bad.content[0].text).toMatch(/id/);
          const missing = (await client.callTool({ name: 'get_customer', arguments: { id: 999 } })) as Json;
          expect(missing.isError).toBe(true);
          expect(missing.content[0].text).toBe('Customer 999 not found');
        });
      });

      it('runs exposed routes through the app pipeline: the Swagger response as output, the ValidationPipe on input', async () => {
        await withClient(alice, async (client) => {
          const order = (await client.callTool({ name: 'get_order', arguments: { id: 1 } })) as Json;
          expect(order.isError).toBeUndefined();
          expect(order.structuredContent).toMatchObject({ id: 1, customer: { id: 1, name: 'Ada Lovelace' }, product: 'Analytical engine manual', quantity: 2, total: 25, status: 'shipped' });
          const list = (await client.callTool({ name: 'list_orders', arguments: { customerId: 1 } })) as Json;
          // An array: text only on every era (no output schema describes it).
          expect(list.structuredContent).toBeUndefined();
          expect(JSON.parse(list.content[0].text).map((o: Json) => o.product)).toEqual(['Analytical engine manual', 'Punched cards']);
          const refused = (await client.callTool({ name: 'place_order', arguments: { customerId: 1, product: 'Ink', quantity: 0, unitPrice: 3 } })) as Json;
          expect(refused.isError).toBe(true);
          expect(refused.content[0].text).toMatch(/quantity must not be less than 1/);
          const placed = (await client.callTool({ name: 'place_order', arguments: { customerId: 1, product: 'Ink', quantity: 3, unitPrice: 4 } })) as Json;
          expect(placed.isError).toBeUndefined();
          expect(placed.structuredContent).toMatchObject({ customer: { id: 1 }, product: 'Ink', quantity: 3, total: 12, status: 'open' });
        });
      });

      it('reads the resource template and gets the prompt', async () => {
        await withClient(bob, async (client) => {
          const read = await client.readResource({ uri: 'crm://customers/1' });
          const contents = read.contents[0] as { mimeType?: string; text: string };
          expect(contents.mimeType).toBe('application/json');
          expect(JSON.parse(contents.text)).toMatchObject({ id: 1, name: 'Ada Lovelace' });
          const prompt = await client.getPrompt({ name: 'follow_up_email', arguments: { customerId: '1', topic: 'the renewal' } });
          expect(JSON.stringify(prompt.messages)).toMatch(/Ada Lovelace <ada@example\.com> about: the renewal/);
        });
      });

      it('narrows the catalog to a tool set with ?toolsets=, and serves discovery tools with ?mode=progressive', async () => {
        const orders = await withClient(bob, async (client) => (await client.listTools()).tools, '?toolsets=orders');
        expect(orders.map((t) => t.name).sort()).toEqual(['get_order', 'list_orders']);
        await withClient(
          bob,
          async (client) => {
            expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['list_tool_sets', 'search_tools', 'call_tool_read', 'call_tool_write', 'call_tool_destructive']);
            const found = (await client.callTool({ name: 'search_tools', arguments: { query: 'customer by id' } })) as Json;
            const hit = found.structuredContent.tools[0];
            expect(hit).toMatchObject({ name: 'get_customer', callWith: 'call_tool_read' });
            const result = (await client.callTool({ name: hit.callWith, arguments: { name: hit.name, arguments: { id: 1 } } })) as Json;
            expect(result.structuredContent).toMatchObject({ id: 1 });
            // bob lacks customers:write: through a call tool as directly, the scope refuses it.
            await expect(client.callTool({ name: 'call_tool_write', arguments: { name: 'create_customer', arguments: { name: 'Eve', email: 'eve@example.com' } } })).rejects.toThrow(
              /needs the scope\(s\) customers:write/,
            );
          },
          '?mode=progressive',
        );
      });

      it('keeps the roles guard and the scopes on tool calls', async () => {
        await expect(withClient(bob, (client) => client.callTool({ name: 'create_customer', arguments: { name: 'Eve', email: 'eve@example.com' } }))).rejects.toThrow(
          /needs the scope\(s\) customers:write/,
        );
        const created = await withClient(carol, async (client) => {
          const result = (await client.callTool({ name: 'create_customer', arguments: { name: 'Grace Hopper', email: 'grace@example.com' } })) as Json;
          expect(result.structuredContent).toMatchObject({ name: 'Grace Hopper', note: null, status: 'active' });
          const denied = (await client.callTool({ name: 'delete_customer', arguments: { id: result.structuredContent.id } })) as Json;
          expect(denied).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Forbidden resource' }] });
          return result.structuredContent as Json;
        });
        await withClient(alice, async (client) => {
          const deleted = (await client.callTool({ name: 'delete_customer', arguments: { id: created.id } })) as Json;
          expect(deleted.content).toEqual([{ type: 'text', text: `Customer ${created.id} deleted.` }]);
        });
      });
    });
  });
}
