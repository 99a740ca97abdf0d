import {
  Catch,
  Inject,
  Injectable,
  Logger,
  Scope,
  type ArgumentsHost,
  type CallHandler,
  type ExceptionFilter,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { Observable, tap } from 'rxjs';
import { McpExecutionContext } from 'nestjs-model-context';
import type { JwtUser } from './jwt.strategy.js';

/** A request-scoped service: one instance per MCP call, seeing the authenticated user. */
@Injectable({ scope: Scope.REQUEST })
export class AuditService {
  private static readonly log: string[] = [];

  constructor(@Inject(REQUEST) private readonly request: { user?: JwtUser }) {}

  record(action: string): string {
    const entry = `${this.request.user?.sub ?? 'anonymous'}: ${action}`;
    AuditService.log.push(entry);
    return entry;
  }

  static entries(): readonly string[] {
    return AuditService.log;
  }
}

/** Logs every tool call with its duration. */
@Injectable()
export class CallLoggingInterceptor implements NestInterceptor {
  private readonly logger = new Logger('ToolCalls');

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const mcp = McpExecutionContext.create(context);
    if (!mcp.isMcp()) return next.handle();
    const started = Date.now();
    const call = mcp.getCall();
    return next
      .handle()
      .pipe(
        tap(() =>
          this.logger.log(`${mcp.getPrincipal()?.id ?? '?'} called ${call.name} in ${Date.now() - started} ms`),
        ),
      );
  }
}

export class QuotaExceededError extends Error {}

/** Turns a domain error into a friendly tool result the model can act on. */
@Catch(QuotaExceededError)
export class QuotaFilter implements ExceptionFilter {
  catch(error: QuotaExceededError, _host: ArgumentsHost) {
    return {
      content: [{ type: 'text', text: `Quota exceeded: ${error.message}. Ask an admin to raise it.` }],
      isError: true,
    };
  }
}
