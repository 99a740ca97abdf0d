import { Test, type TestingModule } from '@nestjs/testing';
import { McpTestClient } from 'nestjs-model-context/testing';
import { AppModule } from './app.module';

describe('nestjs-model-context/testing required from a Nest 11 CommonJS app under Jest', () => {
  let moduleRef: TestingModule;
  let mcp: McpTestClient;

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    mcp = await McpTestClient.create(moduleRef, { era: '2025-11-25' });
  });

  afterAll(async () => {
    await mcp.close();
    await moduleRef.close();
  });

  it('loads the CommonJS build of the kit', () => {
    expect(require.resolve('nestjs-model-context/testing')).toMatch(/dist[\\/]cjs[\\/]testing[\\/]index\.js$/);
  });

  it('calls the tool in process (the TestingModule is never made an HTTP app)', async () => {
    expect((await mcp.listTools()).map((t) => t.name)).toEqual(['greet']);
    expect((await mcp.callTool('greet', { name: 'Ada' })).content).toEqual([{ type: 'text', text: 'Hello, Ada!' }]);
    const missing = await mcp.callTool('greet', { name: 'nobody' });
    expect(missing.isError).toBe(true);
    expect(missing.content).toEqual([{ type: 'text', text: 'Nobody to greet' }]);
  });
});
