import { ForbiddenException, HttpException, type INestApplicationContext } from '@nestjs/common';
import { ExternalContextCreator, type NestContainer } from '@nestjs/core';
import { GuardsConsumer, GuardsContextCreator } from '@nestjs/core/guards/index.js';
import { guardRefusalMessage, type McpAuthenticator } from '../auth/mcp-authenticator.js';
import type { McpPrincipal } from '../auth/mcp-auth.interface.js';
import { MCP_AUTHENTICATOR, MCP_DISPATCHER } from '../common/mcp.constants.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import { httpExceptionMessage } from '../protocol/errors.js';
import { McpController } from './mcp.controller.js';

/** A request refused by the endpoint's authentication: the status and the message HTTP would answer. */
export class McpEndpointRefusal extends Error {
  readonly code = ErrorCode.InvalidRequest;

  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'McpEndpointRefusal';
  }
}

/** What passport and guards may call on the response of an in-process request; it goes nowhere. */
function inertResponse(): object {
  const headers: Record<string, unknown> = {};
  const response = {
    statusCode: 200,
    headersSent: false,
    setHeader: (name: string, value: unknown) => void (headers[name.toLowerCase()] = value),
    getHeader: (name: string) => headers[name.toLowerCase()],
    header: (name: string, value: unknown) => (response.setHeader(name, value), response),
    status: (code: number) => ((response.statusCode = code), response),
    end: () => undefined,
    send: () => undefined,
    json: () => undefined,
  };
  return response;
}

/**
 * The MCP endpoint's authentication for a request made in process (the testing kit, the catalog
 * command): the guards of its HTTP route run first (global `APP_GUARD`s and `useGlobalGuards`,
 * then `controllerDecorators` guards), with the request's headers, as for a POST to the endpoint,
 * so the app's passport or custom guard sets `request.user` as it does over HTTP; then the
 * principal is taken as the endpoint takes it (`auth.verifyToken`, else `auth.principalFrom` /
 * `request.user`).
 */
export class McpEndpointAuth {
  private constructor(
    private readonly run: (request: object) => Promise<boolean>,
    private readonly auth: McpAuthenticator | null,
  ) {}

  static forApp(app: INestApplicationContext): McpEndpointAuth {
    const server = app.get(MCP_DISPATCHER, { strict: false }) as object;
    const auth = app.get<symbol, McpAuthenticator | null>(MCP_AUTHENTICATOR, { strict: false });
    const container = (app.get(ExternalContextCreator, { strict: false }) as unknown as { container: NestContainer })
      .container;
    for (const [moduleKey, module] of container.getModules()) {
      if (module.providers.get(MCP_DISPATCHER)?.instance !== server) continue;
      for (const wrapper of module.controllers.values()) {
        const controller = wrapper.instance;
        if (!(controller instanceof McpController)) continue;
        const handler = McpController.prototype.post as (...args: unknown[]) => unknown;
        const guards = new GuardsContextCreator(container, container.applicationConfig).create(
          controller,
          handler,
          moduleKey,
        );
        const consumer = new GuardsConsumer();
        return new McpEndpointAuth(
          (request) => consumer.tryActivate(guards, [request, inertResponse()], controller, handler, 'http'),
          auth,
        );
      }
    }
    throw new Error(
      'McpModule has no HTTP endpoint in this application to authenticate against: import McpModule.forRoot({ name, version }) in the module under test.',
    );
  }

  /**
   * Authenticates `request` (its `headers`; the guards may set `user` on it). Resolves to the
   * principal (undefined without McpModule's `auth`), or rejects with an {@link McpEndpointRefusal}
   * carrying the 401/403 message the endpoint answers over HTTP.
   */
  async authenticate(request: { headers: Record<string, string> }): Promise<McpPrincipal | undefined> {
    const bearer = /^Bearer(\s|$)/i.test(request.headers.authorization ?? '');
    try {
      if (!(await this.run(request))) throw new ForbiddenException('Forbidden resource');
    } catch (error) {
      if (!(error instanceof HttpException)) throw error;
      const status = error.getStatus();
      const message =
        status === 401 || status === 403
          ? guardRefusalMessage(status, httpExceptionMessage(error), bearer, this.auth?.resource)
          : (httpExceptionMessage(error) ?? error.message);
      throw new McpEndpointRefusal(status, message);
    }
    if (!this.auth) return undefined;
    const decision = await this.auth.decide(request.headers, request);
    if (!decision.ok) throw new McpEndpointRefusal(decision.status, decision.message);
    return decision.principal;
  }
}
