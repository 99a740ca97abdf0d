/**
 * An app whose global guard authenticates the endpoint but gives McpModule no `auth`: the guard
 * still refuses token-less requests, so everything looks fine, while the module sees every caller
 * as anonymous (sessions, tasks and request states bound to nobody). A new user trying the docs
 * alone hit exactly this; the module now says so in the log, once, naming the option to set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, type CanActivate, type ExecutionContext, type LoggerService } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { McpModule, Tool } from 'nestjs-model-context';
import { startApp, type RunningApp } from '../utils/app.js';
import { modernRpc } from '../utils/clients.js';

/** The app's own guard: a bearer token names the user, as a passport strategy would. */
@Injectable()
class BearerUserGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context
      .switchToHttp()
      .getRequest<{ headers: Record<string, string | undefined>; user?: unknown }>();
    const token = request.headers.authorization?.replace(/^Bearer /, '');
    if (!token) return false;
    request.user = { sub: token };
    return true;
  }
}

@Injectable()
class EchoTools {
  @Tool({ description: 'Says hello.' })
  hello(): string {
    return 'hello';
  }
}

@Module({
  imports: [McpModule.forRoot({ name: 'guarded', version: '1.0.0' })],
  providers: [EchoTools, { provide: APP_GUARD, useClass: BearerUserGuard }],
})
class GuardWithoutAuthModule {}

class WarnTap implements LoggerService {
  readonly warnings: string[] = [];
  log(): void {}
  error(): void {}
  debug(): void {}
  verbose(): void {}
  warn(message: unknown): void {
    this.warnings.push(String(message));
  }
}

describe("security: the app's guard authenticates, but McpModule has no auth", () => {
  const logs = new WarnTap();
  let app: RunningApp;

  before(async () => {
    app = await startApp(GuardWithoutAuthModule, { logger: logs });
  });
  after(() => app?.close());

  it('says once, in the log, that every caller is anonymous to the module and which option to set', async () => {
    for (const user of ['alice', 'bob', 'alice']) {
      const answer = await modernRpc(app.url, 'tools/list', {}, { headers: { authorization: `Bearer ${user}` } });
      assert.equal(answer.status, 200);
    }
    const told = logs.warnings.filter((line) => line.includes('request.user is set'));
    assert.equal(told.length, 1, JSON.stringify(logs.warnings));
    assert.match(told[0], /no `auth` option/);
    assert.match(told[0], /auth: \{ resource, authorizationServers \}/);
  });
});
