import { Test, TestingModule } from '@nestjs/testing';
import { McpTestClient, McpTestError } from 'nestjs-model-context/testing';
import { AppModule } from '../src/app.module';
import { AuthService } from '../src/auth/auth.service';
import { USERS } from './helpers';

type Json = Record<string, any>;

/** The tools tested in process with the testing kit, through the app's real JWT authentication. */
describe.each(['2025-11-25', '2026-07-28'] as const)('the CRM tools with the testing kit on %s', (era) => {
  let moduleRef: TestingModule;

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await moduleRef.init();
  });

  afterAll(async () => {
    await moduleRef.close();
  });

  async function clientFor(who: keyof typeof USERS): Promise<McpTestClient> {
    const { access_token } = await moduleRef.get(AuthService).login(USERS[who].username, USERS[who].password);
    return McpTestClient.create(moduleRef, { era, authenticate: true, headers: { authorization: `Bearer ${access_token}` } });
  }

  it('runs a tool with a Swagger-only output DTO', async () => {
    const mcp = await clientFor('bob');
    try {
      const result = await mcp.callTool('get_customer', { id: 1 });
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent).toMatchObject({ id: 1, name: 'Ada Lovelace', note: 'Prefers e-mail to calls.' });
    } finally {
      await mcp.close();
    }
  });

  it('applies the roles guard to the user the JWT strategy made', async () => {
    const carol = await clientFor('carol');
    const alice = await clientFor('alice');
    try {
      expect((await carol.listTools()).map((t) => t.name)).not.toContain('delete_customer');
      expect((await alice.listTools()).map((t) => t.name)).toContain('delete_customer');
      const created = (await carol.callTool('create_customer', { name: 'Kit User', email: `kit-${era}@example.com` })).structuredContent as Json;
      expect(await carol.callTool('delete_customer', { id: created.id })).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Forbidden resource' }] });
      expect((await alice.callTool('delete_customer', { id: created.id })).content).toEqual([{ type: 'text', text: `Customer ${created.id} deleted.` }]);
    } finally {
      await carol.close();
      await alice.close();
    }
  });

  it('refuses a caller without a token as the endpoint does', async () => {
    let refusal: unknown;
    try {
      const anonymous = await McpTestClient.create(moduleRef, { era, authenticate: true });
      try {
        await anonymous.listTools();
      } finally {
        await anonymous.close();
      }
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(McpTestError);
    expect((refusal as McpTestError).data).toMatchObject({ status: 401 });
  });
});
