import { Injectable, SetMetadata, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Reflector } from '@nestjs/core';

export const IS_PUBLIC = 'isPublic';
/** The app's convention: public routes skip the bearer guard. */
export const Public = (): ClassDecorator & MethodDecorator => SetMetadata(IS_PUBLIC, true);

/** A global bearer guard, written for HTTP routes and aware of MCP calls. */
@Injectable()
export class BearerGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly config: ConfigService,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    // Inside tool calls the endpoint's own HTTP guard pass has already run.
    if (context.getType<string>() === 'mcp') return true;
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    if (request.headers.authorization === `Bearer ${this.config.getOrThrow<string>('auth.token')}`) return true;
    throw new UnauthorizedException('Missing or wrong bearer token');
  }
}
