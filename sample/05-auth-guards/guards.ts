import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { McpExecutionContext } from 'nestjs-model-context';

/**
 * The app's JWT guard, registered globally. It authenticates HTTP requests (the MCP endpoint
 * included); inside MCP calls the request is already authenticated, so it lets them through.
 * The protected-resource metadata needs no exception here: McpModule serves it beside the
 * router, where no guard runs.
 */
@Injectable()
export class JwtAuthGuard extends AuthGuard('jwt') {
  override canActivate(context: ExecutionContext) {
    if (context.getType<string>() === 'mcp') return true;
    return super.canActivate(context);
  }
}

export const Roles = (...roles: string[]) => SetMetadata('roles', roles);

/** Hides and refuses tools marked with @Roles for principals without the role. */
@Injectable()
export class RolesGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const roles = this.reflector.get<string[] | undefined>('roles', context.getHandler());
    if (!roles) return true;
    const principal = McpExecutionContext.create(context).getPrincipal();
    const granted = (principal?.claims?.roles as string[] | undefined) ?? [];
    return roles.some((role) => granted.includes(role));
  }
}
