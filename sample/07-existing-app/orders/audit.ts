import {
  type ArgumentMetadata,
  type CallHandler,
  type CanActivate,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
  type PipeTransform,
  UnauthorizedException,
} from '@nestjs/common';
import { tap, type Observable } from 'rxjs';

/** What the app's own guard, interceptor and pipe saw: the sample's audit trail. */
@Injectable()
export class AuditLog {
  readonly entries: string[] = [];
  record(entry: string): void {
    this.entries.push(entry);
  }
}

/** The app's auth: `Authorization: Bearer dev-token` (a real app would verify a JWT here). */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(private readonly audit: AuditLog) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context
      .switchToHttp()
      .getRequest<{ headers: Record<string, string | undefined>; method: string; url: string; user?: unknown }>();
    this.audit.record(`guard ${context.getType()} ${request.method} ${request.url}`);
    if (request.headers.authorization !== 'Bearer dev-token') {
      throw new UnauthorizedException('A valid bearer token is required (Authorization: Bearer dev-token).');
    }
    request.user = { id: 'dev', name: 'Dev User' };
    return true;
  }
}

/** Times and logs each handled request. */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  constructor(private readonly audit: AuditLog) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const handler = `${context.getClass().name}.${context.getHandler().name}`;
    this.audit.record(`interceptor before ${handler}`);
    return next.handle().pipe(tap(() => this.audit.record(`interceptor after ${handler}`)));
  }
}

/** Normalises an order id (trims, upper-cases), as a legacy client once sent lower-case ids. */
@Injectable()
export class OrderIdPipe implements PipeTransform<string, string> {
  constructor(private readonly audit: AuditLog) {}

  transform(value: string, metadata: ArgumentMetadata): string {
    this.audit.record(`pipe ${metadata.type} ${metadata.data} ${value}`);
    return String(value).trim().toUpperCase();
  }
}
