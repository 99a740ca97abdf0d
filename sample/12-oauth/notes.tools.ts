import { Injectable } from '@nestjs/common';
import { Ctx, McpContext, RequireScopes, Tool } from 'nestjs-model-context';

/** Tools an agent calls with a token from the authorization server: no verification code here. */
@Injectable()
export class NotesTools {
  private readonly notes: Array<{ author: string; text: string }> = [];

  @Tool({ name: 'whoami', description: 'The agent the access token names, and its scopes.' })
  whoami(@Ctx() ctx: McpContext): { principal: string | null; scopes: string[] } {
    return { principal: ctx.principal ?? null, scopes: ctx.auth?.scopes ?? [] };
  }

  @Tool({ name: 'write_note', description: 'Adds a note; needs the notes:write scope.' })
  @RequireScopes('notes:write')
  writeNote(@Ctx() ctx: McpContext): string {
    this.notes.push({ author: ctx.principal ?? 'anonymous', text: `note ${this.notes.length + 1}` });
    return `note written by ${ctx.principal}`;
  }
}
